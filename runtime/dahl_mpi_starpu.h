/* The StarPU side of the gradient allreduce (dahl_mpi.h), for the network's training step only. */
#ifndef DAHL_MPI_STARPU_H
#define DAHL_MPI_STARPU_H

#include "dahl_mpi.h"

#include <stdint.h>
#include "dahl_starpu.h"

/* Starts a new training step's allreduce timing. No-op with one rank or ar NULL. Returns 0 or -ENOMEM. */
int dahl_allreduce_step_begin(struct dahl_allreduce *ar);

/* Submits the sum over every rank of grad (a vector of floats, the same size on every rank), in place, as
 * gradient number index (0 <= index < 256, the same on every rank) of the current step. Every rank submits
 * the same gradients in the same order. Once submitted, later tasks reading grad see the global sum (StarPU's
 * data dependencies order them). No-op with one rank or ar NULL. Returns 0 or a negative error. */
int dahl_allreduce_submit(struct dahl_allreduce *ar, int index, starpu_data_handle_t grad);

/* One detached point-to-point message of a whole handle to / from rank peer, tagged tag (below 2^60: the
 * caller's own numbering; these messages live apart from the allreduce's). StarPU's data dependencies order
 * them with the tasks. Returns 0, or a negative error (-ENOSYS without StarPU-MPI). */
int dahl_mpi_isend(starpu_data_handle_t h, int peer, int64_t tag);
int dahl_mpi_irecv(starpu_data_handle_t h, int peer, int64_t tag);

#endif /* DAHL_MPI_STARPU_H */

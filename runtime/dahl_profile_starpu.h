/* The StarPU side of dahl_profile.h, for runtime/ only: which network layer a data handle belongs to, so that
 * task records can say which layer a task worked for (the layer that writes the task's output). */
#ifndef DAHL_PROFILE_STARPU_H
#define DAHL_PROFILE_STARPU_H

#include "dahl_profile.h"

#include <starpu.h>

/* Records that tasks writing h work for layer `layer` (the network's own index; nlayers for the loss).
 * Returns 0 or -ENOMEM. Labels live until dahl_profile_fini. */
int dahl_profile_label(starpu_data_handle_t h, int layer);

/* Installs StarPU's data hooks (transfers and evictions per job, see dahl_profile_jobs); right after
 * starpu_init. */
void dahl_profile_hooks_install(void);

#endif /* DAHL_PROFILE_STARPU_H */

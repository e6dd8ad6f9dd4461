/* Representative ranks (multi-node simulation, the sim-mpi flavour): in a data-parallel cluster whose node
 * groups are homogeneous, StarPU runs on one rank per group, its representative; every other rank is a light
 * SMPI process that runs no StarPU and no task. It takes part in every message of the gradient allreduce
 * (the same binomial tree, the same StarPU-MPI envelopes and data messages, so SMPI times them as in the
 * full simulation) at the simulated times its representative's tasks make its gradients ready, shifted by
 * how much later than the representative it started the step (its own previous allreduce ended later or
 * earlier); its progression thread takes the turns StarPU-MPI's would (dahl_progress.h). The representative
 * publishes what it submits and when each gradient is ready on a board in the simulator's shared memory;
 * the light ranks of its group follow that board, and SimGrid's mutexes and condition variables carry the
 * waits at no simulated cost. Rank 0 is always a representative: its gathers take a light rank's figures
 * from its representative, its step times shifted by the light rank's own (dahl_light_shift_us).
 *
 * Enabled by $DAHLSIM_REPRESENTATIVES (dahlsim run sets it from the scenario's "representative_ranks"): the
 * node groups, "FIRST-LAST,...". In each group one representative per role in the allreduce's binomial tree
 * (the root; ranks receiving k partial sums), the one the broadcast reaches first: ranks of one role do the
 * same accumulates on their workers and the same messages. StarPU-free header. */
#ifndef DAHL_LIGHT_H
#define DAHL_LIGHT_H

#include <stdbool.h>
#include <stddef.h>

/* True in the sim-mpi flavour with $DAHLSIM_REPRESENTATIVES set (and well formed). */
bool dahl_light_mode(void);

/* The representative of rank r (r itself for a representative, and without the mode). */
int dahl_light_rep_of(int r);
/* The number of ranks that are light (0 without the mode). */
int dahl_light_count(void);

/* The representative's side (dahl_mpi.c), no-ops elsewhere: a new step; gradient index of n floats
 * submitted, its accumulate taking accumulate_s on a worker; ready (its sum may start) now, made so by the
 * CPU worker of that core (-1: no CPU worker); it holds the sum of every rank's now;
 * a barrier about to be entered, and left now; the end of training. "Now": SimGrid's clock. */
void dahl_light_post_step(size_t step);
void dahl_light_post_grad(size_t step, int index, size_t n, double accumulate_s);
void dahl_light_post_ready(size_t step, int index, int core);
void dahl_light_post_done(size_t step, int index);
/* Also the representative's, from its tasks' timing (dahl_profile.c): a task, not an accumulate, pushed
 * (ready) at push_s, ran from start_s to end_s on the CPU worker of core `core` (-1: no CPU worker), for
 * layer `layer` (-1 for an update or a zeroing); gradient index's partial sum from tree level `level` comes
 * into buffer tmp (a StarPU handle, compared only); an accumulate from src started at start_s on core's
 * worker, having waited wait_s for one since it was ready. */
void dahl_light_post_task(int layer, int core, double push_s, double start_s, double end_s);
void dahl_light_post_tmp(int index, int level, const void *tmp);
void dahl_light_post_accumulate(const void *src, int core, double start_s, double wait_s);
void dahl_light_post_barrier(void);
void dahl_light_post_barrier_left(void);
void dahl_light_post_end(void);

/* Rank 0: how much later (microseconds) light rank r ended step `step` (counted over the whole run) than
 * its representative, both from where they left the epoch's barrier: 0 for a representative. */
double dahl_light_shift_us(int r, size_t step);

/* Rank 0, after training: what the light ranks add up to, for results.json. */
struct dahl_light_stats {
    int light;        /* light ranks */
    int representatives;
    double late_s;    /* summed over light ranks' gradients: how much later than their shifted ready time they
                         could start (their representative had not got there yet); 0 when the symmetry holds */
    long late_grads;  /* gradients started late */
};
void dahl_light_stats(struct dahl_light_stats *out);

#endif /* DAHL_LIGHT_H */

/* Multi-node training as `train` and `sim-train` see it: the MPI flavours (build/dahlsim-mpi natively,
 * build/dahlsim-sim-mpi under starpu_smpirun) run one copy of the training program per node; each trains
 * batch / nodes samples of every step and the gradients are all-reduced (runtime/dahl_mpi.h). These helpers
 * keep the hooks in sim/program/ small: the per-node state, merging the nodes' figures on rank 0, and the
 * nodes block of results.json. With one process and no MPI they are no-ops. */
#ifndef DAHLSIM_NODES_H
#define DAHLSIM_NODES_H

#include "dahl_engine.h"
#include "dahl_mpi.h"
#include "dahl_network.h"
#include "dahlsim_results.h"

#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_NODES_MAX 1024 /* a scenario's "nodes" at most */

struct dahlsim_nodes {
    int rank, size;          /* MPI rank and node count (0 and 1 without MPI) */
    bool mpi;                /* a StarPU-MPI build: results.json gets the nodes block, even for one node */
    int local_batch;         /* this node's samples of every step: batch / size, or its share (a pipeline: all) */
    bool pipeline;           /* the nodes are a pipeline's stages (dahlsim_nodes_init_pipeline) */
    int replicas;            /* a pipeline: nodes per stage (1: a pure pipeline) */
    struct dahl_pipe_stats pipe; /* a pipeline: this stage's messages, set before dahlsim_nodes_finish */
    long first;              /* where they start among the step's samples (the shares of the ranks before) */
    struct dahl_allreduce *allreduce; /* NULL with one node */
    struct dahlsim_results_node *detail; /* rank 0: size entries after dahlsim_nodes_finish */
    struct dahl_worker_stats *workers;   /* rank 0: every node's workers, node by node (detail points in) */
    double *allreduce_s;     /* rank 0: per iteration, the slowest node's allreduce time */
    size_t nallreduce;
    const char *network;     /* $DAHLSIM_NETWORK (set by dahlsim run): the scenario's network, or NULL */
};

/* After the engine started: rank and size, and the allreduce when there are several nodes. batch is the
 * global batch; shares (nshares > 0) each node's samples of a step, rank by rank, in place of batch / size.
 * Returns 0, or -EINVAL (err says why) when batch is not a multiple of the node count, or the shares are
 * not one per node summing to batch. */
int dahlsim_nodes_init(struct dahlsim_nodes *n, long batch, const long *shares, long nshares, char *err,
                       size_t err_size);
/* A pipeline partition instead: nstages stages of `replicas` nodes each, ranks stage by stage (rank r is
 * replica r % replicas of stage r / replicas); a stage's replicas split each step's samples evenly and sum
 * their gradients among themselves (an allreduce over their ranks when replicas > 1: a hybrid partition).
 * Returns 0, or -EINVAL when the ranks are not nstages x replicas or the batch does not split (err says so). */
int dahlsim_nodes_init_pipeline(struct dahlsim_nodes *n, long batch, long nstages, long replicas, char *err,
                                size_t err_size);
/* Waits for the allreduce's transfers and destroys it: before the network whose gradients it reduces, while
 * StarPU runs. */
void dahlsim_nodes_stop(struct dahlsim_nodes *n);
/* Frees the gathered figures (no StarPU call; an allreduce not stopped, after an error, is left to exit). */
void dahlsim_nodes_fini(struct dahlsim_nodes *n);

/* Every node's step end times, relative to its epoch start (seconds), made the slowest node's on rank 0:
 * rel_s[i] = max over nodes. Returns 0 or a negative error. */
int dahlsim_nodes_merge_max(const struct dahlsim_nodes *n, double *rel_s, size_t count);
/* values[i] summed over the nodes, on rank 0. Returns 0 or a negative error. */
int dahlsim_nodes_merge_sum(const struct dahlsim_nodes *n, double *values, size_t count);

/* Step i's duration iteration_s[i] (from the previous step's end; the first from start_us) and the epoch's
 * train_s, from this node's step end times end_us[first .. first + count) (StarPU clock; first: the steps
 * the network ran before): on rank 0 those of the slowest node at every step, a light rank's counted
 * (dahl_light.h). Returns 0 or a negative error. */
int dahlsim_nodes_step_times(const struct dahlsim_nodes *n, const double *end_us, size_t first, double start_us,
                             size_t count, double *iteration_s, double *train_s);
/* The training metrics summed over the nodes, on rank 0. */
int dahlsim_nodes_sum_metrics(const struct dahlsim_nodes *n, double *loss_sum, long *correct, long *samples);
/* For results.json: per_codelet and the per-arch task counts summed over the nodes on rank 0, then
 * dahlsim_nodes_finish with this node's workers. Every rank calls it. */
int dahlsim_nodes_merge_results(struct dahlsim_nodes *n, struct dahlsim_results_count *per_codelet, size_t ncodelets,
                                long *tasks_cpu, long *tasks_cuda, const struct dahl_worker_stats *workers,
                                size_t nworkers);

/* Gathers every node's figures to rank 0 (n->detail, n->workers, n->allreduce_s); workers are this node's
 * (over the training phases), from which its tasks and busy_s are summed. Nodes may have different worker
 * counts. Every rank calls it. Returns 0 or a negative error. */
int dahlsim_nodes_finish(struct dahlsim_nodes *n, const struct dahl_worker_stats *workers, size_t nworkers);

#endif /* DAHLSIM_NODES_H */

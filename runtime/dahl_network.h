/* A CNN as a StarPU task graph: the network itself with its weights, per-sample activations and gradients
 * as dahl tensors, built from a description (layers and shapes: dahl_netdesc.h, StarPU-free). One training
 * step submits, for every sample of the batch and every layer, a forward task, then the fused softmax +
 * cross-entropy, then the backward tasks, the reduction of weight gradients over the batch (StarPU's REDUX,
 * or a manual tree of additions) and the SGD updates. Submission is asynchronous: nothing waits for the
 * graph unless metrics are read. This header is StarPU-free. Ownership: the network owns every tensor it
 * creates. */
#ifndef DAHL_NETWORK_H
#define DAHL_NETWORK_H

#include "dahl_netdesc.h" /* the description, shapes and update chunks */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dahl_allreduce; /* dahl_mpi.h */

#define DAHL_PIPELINE_MAX_DEPTH 64

/* The order of a pipeline's tasks (depth > 1): fill submits and runs them in step order, with no priority;
 * 1f1b gives each step's backward passes and updates priority over the next steps' forward passes
 * (PipeDream's one-forward-one-backward: older mini-batches finish first), where the scheduler honours
 * StarPU priorities. */
enum dahl_pipeline_schedule { DAHL_PIPELINE_FILL, DAHL_PIPELINE_1F1B };

struct dahl_train_conf {
    int batch;       /* samples per step (>= 1) on this node */
    float lr;        /* learning rate; the gradient is the batch mean */
    float momentum;  /* 0 for plain SGD */
    enum dahl_reduction reduction;
    uint64_t seed;   /* weight initialisation */
    /* Data-parallel training over several nodes (dahl_mpi.h): every weight gradient is summed over the
     * nodes by allreduce (borrowed; NULL on one node) before the update, which then divides by
     * global_batch, the samples of one step on all nodes together (0: batch). */
    struct dahl_allreduce *allreduce;
    int global_batch;
    /* Most elements per chunk of a split parameter update (dahl_update_chunks); 0: the default,
     * SIZE_MAX: never split. */
    size_t update_chunk;
    /* Pipelining across steps (issue 21; PipeDream, Narayanan et al., SOSP 2019): up to pipeline_depth
     * steps in flight. Step t's forward and backward passes read the weights as they were after step
     * t - depth's update (weight stashing: one stashed copy per slot, StarPU data), so step t + 1's passes
     * need not wait for step t's update; each update applies its step's gradient to the latest weights.
     * 0 or 1: synchronous SGD (no stash). At most DAHL_PIPELINE_MAX_DEPTH; one node only. */
    int pipeline_depth;
    enum dahl_pipeline_schedule pipeline_schedule;
    /* Samples per layer task (issue 21): the per-sample layers run one task over each group of `grain`
     * consecutive samples of the batch (the last group smaller when grain does not divide the batch); 0 or
     * 1: one task per sample. At most batch. */
    int grain;
    /* A pipeline partition over nodes (issue 22): this node runs layers [stage_first, stage_end) of every
     * sample (0 and 0: all of them). A stage after the first receives each group's activations from rank
     * stage_prev and sends it back their gradient; a stage before the last sends its activations to rank
     * stage_next and receives theirs, as StarPU-MPI messages (dahl_mpi_isend/irecv). Only the last stage
     * computes the loss and metrics; each updates its own layers. With an allreduce too (a hybrid partition),
     * its gradients are summed over the stage's replicas first. */
    int stage_first, stage_end, stage_prev, stage_next;
};

struct dahl_network;

/* The pipeline messages a stage posted (dahl_train_conf.stage_*), training and evaluation together. */
struct dahl_pipe_stats {
    double bytes_sent, bytes_received;
    long messages_sent, messages_received;
};
void dahl_network_pipe_stats(const struct dahl_network *net, struct dahl_pipe_stats *out);

/* Creates the network's tensors and initialises the weights (He-normal from seed; in the SimGrid build
 * there are no values). StarPU must be running. Returns NULL on a bad description or configuration
 * (err says why) or when memory runs out. */
struct dahl_network *dahl_network_create(const struct dahl_network_desc *d, const struct dahl_train_conf *conf,
                                         char *err, size_t err_size);
/* Waits for the network's tasks and frees everything. NULL is a no-op. */
void dahl_network_destroy(struct dahl_network *net);

/* Submits one training step on `batch` samples: images [batch][C][H][W] (may be NULL in the SimGrid build,
 * where there is nothing to copy) and labels [batch]. With track_metrics, the loss and correctness of each
 * sample are added to the running totals (read with dahl_network_metrics) as the tasks finish, without
 * blocking submission. Returns 0 or a negative error. */
int dahl_network_train_step(struct dahl_network *net, const float *images, const uint8_t *labels, bool track_metrics);

/* Submits forward passes only (evaluation) on n <= batch samples, with metrics tracked. */
int dahl_network_eval_step(struct dahl_network *net, const float *images, const uint8_t *labels, int n);

/* Waits for every submitted task, then reports the metrics accumulated since the last reset: the summed
 * loss, the number of correct predictions, and the number of samples counted. */
void dahl_network_metrics(struct dahl_network *net, double *loss_sum, long *correct, long *samples);
void dahl_network_metrics_reset(struct dahl_network *net);

/* When each training step submitted so far finished: times_us[i] (StarPU clock, dahl_engine_now_us()) is
 * when step i's last SGD update completed, recorded from a StarPU callback without serialising the graph.
 * Waits for every submitted task and pending callback first; returns the number of steps. The array stays
 * owned by the network and valid until the next train step or destroy. */
size_t dahl_network_step_end_times(struct dahl_network *net, const double **times_us);
/* Training steps completed so far (non-blocking, for progress reports). */
size_t dahl_network_steps_done(struct dahl_network *net);
/* The end times (StarPU clock, us) of the steps done from step first on, copied into ends when they are all
 * done (steps end in order) and at most max: returns how many, or 0 (none done, one still running, or more
 * than max). */
size_t dahl_network_step_ends_since(struct dahl_network *net, size_t first, double *ends, size_t max);

/* Tasks the network submitted so far, per perf-model symbol (e.g. "dahl_conv2d_forward"), counted at
 * submission. StarPU's own REDUX init/reduction tasks are not submitted by dahl and are not counted. */
long dahl_network_task_count(const struct dahl_network *net, const char *symbol);
/* Input images copied into the network so far (native runs): bytes, and the CPU time the submitting thread
 * spent copying them. */
void dahl_network_input_copies(const struct dahl_network *net, size_t *bytes, double *cpu_s);

/* Several networks in one run (jobs sharing a machine). */

/* Waits until every training step submitted so far on this network has updated every parameter; tasks of
 * other networks are not waited for. */
void dahl_network_wait(struct dahl_network *net);

/* Starts copying the network's parameters and velocities (the tensors a step reads first) to the GPU,
 * after the tasks submitted so far, asynchronously: StarPU 1.3.10's prefetch uses free memory only and
 * never evicts. A no-op without a GPU. Returns 0 or a negative error. (starpu_data_wont_use, which would
 * make the previous job's tensors the first victims, is not used: its write-back is an idle request that
 * StarPU-SimGrid's sleeping workers never run, and any later write acquire waits for it forever.) */
int dahl_network_prefetch(struct dahl_network *net);

/* Copies the parameters of layer `layer` (weights then bias) into dst (count values). Native build only:
 * returns -ENODATA in the SimGrid build, -EINVAL for a layer without parameters or a wrong count. */
int dahl_network_read_params(struct dahl_network *net, int layer, float *dst, size_t count);

/* Sets the parameters of layer `layer` (weights then bias, count values; the weights stashed for pipelined
 * steps too) and, for batch normalisation, its running statistics (running: mean then variance of each
 * channel, or NULL to keep them), before the network's first step: imported weights. Native build only, as
 * dahl_network_read_params; same errors, -EINVAL also for running statistics given to another kind. */
int dahl_network_write_params(struct dahl_network *net, int layer, const float *src, size_t count,
                              const float *running);

#endif /* DAHL_NETWORK_H */

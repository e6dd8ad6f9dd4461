/* dahl_network.c's and dahl_network_marks.c's shared view of a network (runtime/ only): its layers, tensors,
 * totals and step marks. dahl_network.c builds the network and submits its steps; dahl_network_marks.c
 * follows what StarPU tells back without blocking the submitting thread (metrics, the end of each step's
 * updates), and prefetches and reads parameters. */
#ifndef DAHL_NETWORK_INTERNAL_H
#define DAHL_NETWORK_INTERNAL_H

#include "dahl_network.h"

#include "dahl_starpu.h"
#include "dahl_tensor_starpu.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct layer {
    struct dahl_layer_shape s;     /* the description and shapes (dahl_network_desc_shapes) */
    struct dahl_tensor *w, *b;     /* parameters: the latest weights, which every update changes */
    /* Per pipeline slot (a step's slot: its index modulo the pipeline depth): its gradients, REDUX (whole)
     * or per group (split, manual), and with a depth above 1 the weights it stashes for its forward and
     * backward passes (PipeDream's weight stashing), NULL at depth 1 (the passes read w and b). */
    struct dahl_tensor *dw[DAHL_PIPELINE_MAX_DEPTH], *db[DAHL_PIPELINE_MAX_DEPTH];
    struct dahl_tensor *sw[DAHL_PIPELINE_MAX_DEPTH], *sb[DAHL_PIPELINE_MAX_DEPTH];
    struct dahl_tensor *vw, *vb;   /* momentum velocities, NULL without momentum */
    /* The gradient of input k where another layer reads its source too and runs its backward pass first
     * (dahl_network_desc_input_direct is false): written here, then added to the source's; else NULL. */
    struct dahl_tensor *edx[DAHL_LAYER_MAX_INPUTS];
    /* A step's sums over its samples (DAHL_T_STATS: REDUX, or per group under the manual reduction) and the
     * state kept across steps (DAHL_T_RUNNING), where the kind uses them (batch norm); else NULL. */
    struct dahl_tensor *stats, *running;
    starpu_data_handle_t workspace; /* conv2d's, and dense's gradient tree over a group (manual, grain > 1) */
    struct update_chunks {         /* chunk plans of the parameter, its summed gradient (per slot) and */
        struct dahl_chunks p, v;   /* velocity; p.n == 0 when the update is one task */
        struct dahl_chunks g[DAHL_PIPELINE_MAX_DEPTH];
    } wu, bu;
};

struct metric_slot {
    struct dahl_network *net;
    starpu_data_handle_t handle;
};

struct dahl_network {
    struct dahl_network_desc desc;
    struct dahl_train_conf conf;
    struct layer layers[DAHL_NETWORK_MAX_LAYERS];
    struct dahl_tensor *act[DAHL_NETWORK_MAX_LAYERS + 1];
    struct dahl_tensor *grad[DAHL_NETWORK_MAX_LAYERS + 1];
    struct dahl_tensor *metrics; /* [batch][2]: loss, correct */
    struct metric_slot *slots;   /* one per group */
    int grain, groups;           /* samples per layer task, and tasks per layer and step */
    int depth;                   /* pipeline depth: steps whose passes may run at once (1: none) */
    int first, end;              /* the layers this node runs: [first, end) (a pipeline stage; all: 0, L) */
    bool layer_major;            /* a step goes layer by layer (a layer of two phases, dahl_layer_phases) */
    int64_t passes;              /* forward passes submitted (training and evaluation): the messages' tags */
    long step;                   /* the training step being submitted (its tasks' context) */
    struct dahl_pipe_stats pipe; /* the pipeline's messages this node posted */
    pthread_mutex_t lock;        /* guards the totals below, updated from StarPU callbacks */
    int64_t loss_fixed;          /* summed loss in units of 2^-32: integer sums do not depend on the order
                                    in which the callbacks run, so the totals are reproducible */
    long correct, samples;
    const char *const *symbols;
    size_t nsymbols;
    long *task_counts;
    size_t copy_bytes; /* input images copied in (native), and the submitting thread's CPU time doing it */
    double copy_cpu_s;
    /* Step completion times (guarded by lock): end_us[i] is when step i's updates had all completed. */
    double *end_us;
    size_t steps_submitted, steps_capacity, steps_done;
    size_t refs_pending; /* step references whose callback has not released its acquire yet */
};

/* One training step's countdown: one reference per parameter tensor, whose read acquire is granted once the
 * step's SGD update of that tensor has run. Heap-allocated per step, freed by the last callback. */
struct step_mark;
struct step_ref {
    struct step_mark *mark;
    starpu_data_handle_t handle;
};
struct step_mark {
    struct dahl_network *net;
    size_t index;
    int remaining;  /* updates not run yet; guarded by net->lock */
    int unreleased; /* references not released yet (the mark lives until then); guarded by net->lock */
    int n;
    struct step_ref refs[];
};

/* The summed gradient the update reads: the REDUX tensor, or group 0's buffer after the manual tree
 * (dahl_network_build.c). */
starpu_data_handle_t dahl_network_summed_grad(const struct dahl_network *net, const struct dahl_tensor *g);

/* Counts the first n samples of group g's metrics once its softmax has run (dahl_network_marks.c). */
int dahl_network_track(struct dahl_network *net, int g, int n);
/* Asks to be told, without blocking, when the step just submitted has updated every parameter. */
int dahl_network_mark_step_end(struct dahl_network *net);
/* Waits for the tasks, then for the step callbacks still pending. */
void dahl_network_wait_marks(struct dahl_network *net);

#endif /* DAHL_NETWORK_INTERNAL_H */

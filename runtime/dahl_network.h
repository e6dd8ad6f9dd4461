/* A CNN as a StarPU task graph: the network description (layers and shapes), and the network itself with
 * its weights, per-sample activations and gradients as dahl tensors. One training step submits, for every
 * sample of the batch and every layer, a forward task, then the fused softmax + cross-entropy, then the
 * backward tasks, the reduction of weight gradients over the batch (StarPU's REDUX, or a manual tree of
 * additions) and the SGD updates. Submission is asynchronous: nothing waits for the graph unless metrics
 * are read. This header is StarPU-free. Ownership: the network owns every tensor it creates. */
#ifndef DAHL_NETWORK_H
#define DAHL_NETWORK_H

#include "dahl_kernels.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DAHL_NETWORK_MAX_LAYERS 32

enum dahl_layer_kind {
    DAHL_LAYER_CONV,    /* conv2d + bias: filters, kernel, stride, pad */
    DAHL_LAYER_RELU,
    DAHL_LAYER_MAXPOOL, /* kernel (window), stride */
    DAHL_LAYER_DENSE,   /* units (outputs) */
};

struct dahl_layer_desc {
    enum dahl_layer_kind kind;
    int filters, kernel, stride, pad; /* conv: all; maxpool: kernel and stride */
    int units;                        /* dense */
};

/* Layers from an input of c x h x w to nclasses logits (the softmax + cross-entropy is implied). */
struct dahl_network_desc {
    int c, h, w;
    int nclasses;
    int nlayers;
    struct dahl_layer_desc layers[DAHL_NETWORK_MAX_LAYERS];
};

/* LeNet-5-like: conv 5x5 (6, pad 2) - relu - pool 2 - conv 5x5 (16) - relu - pool 2 - dense 120 - relu -
 * dense nclasses. Pools are skipped where the image has become too small. Returns 0 or -EINVAL. */
int dahl_network_desc_lenet(int c, int h, int w, int nclasses, struct dahl_network_desc *out);

/* A deeper variant: `blocks` times (conv 3x3 pad 1 with `width` filters, doubling each block - relu -
 * pool 2 while the image is >= 4 pixels), then dense 128 - relu - dense nclasses. Returns 0 or -EINVAL. */
int dahl_network_desc_deep(int c, int h, int w, int nclasses, int blocks, int width, struct dahl_network_desc *out);

/* Checks every layer's shape against its input; on failure returns -EINVAL and writes the reason, naming
 * the layer, into err. */
int dahl_network_desc_check(const struct dahl_network_desc *d, char *err, size_t err_size);

/* One layer as the network builds it: its description, input and output shapes, kernel shape and
 * parameter counts. The network's tensors and tasks are built from these, and so is the task catalogue
 * (dahl_catalogue.h) that perf models for unmeasured machines are written from. */
struct dahl_layer_shape {
    struct dahl_layer_desc desc;
    int in_c, in_h, in_w, out_c, out_h, out_w;
    struct dahl_conv2d_shape conv;  /* DAHL_LAYER_CONV */
    struct dahl_maxpool_shape pool; /* DAHL_LAYER_MAXPOOL */
    size_t nw, nb;                  /* weights and bias counts, 0 for layers without parameters */
};

/* Plans every layer's shapes into layers[0 .. d->nlayers - 1] (DAHL_NETWORK_MAX_LAYERS entries suffice).
 * Returns 0, or -EINVAL with the reason, naming the layer, in err (what dahl_network_desc_check says). */
int dahl_network_desc_shapes(const struct dahl_network_desc *d, struct dahl_layer_shape *layers, char *err,
                             size_t err_size);

/* Number of trainable parameters. */
size_t dahl_network_desc_params(const struct dahl_network_desc *d);

enum dahl_reduction {
    DAHL_REDUCTION_REDUX,  /* gradients accumulated through StarPU's STARPU_REDUX */
    DAHL_REDUCTION_MANUAL, /* per-sample gradients, summed by a tree of accumulate tasks at batch end */
};

struct dahl_allreduce; /* dahl_mpi.h */

/* The SGD update of a large parameter tensor is split into chunks of at most this many elements, one task
 * each, and so is the zeroing of its summed gradient: the tensor, its gradient and its velocity are cut
 * into the same contiguous ranges (StarPU's asynchronous partitioning, see dahl_network.c), so the update
 * of LeNet's dense1 at 512x512x3 (30 M weights) runs on every worker instead of keeping one worker busy
 * while the others wait for the new weights. With 2^18 floats (1 MiB) per chunk, an SGD chunk still moves 3 to
 * 5 MiB (hundreds of microseconds on one core), far above StarPU's few microseconds per task, and that
 * update becomes 117 tasks; every tensor of a 28x28 LeNet (the largest has 48 000 weights) and every bias
 * stays one task, so their task graphs do not change. */
#define DAHL_UPDATE_CHUNK_DEFAULT ((size_t)1 << 18)

/* How many chunks the update of an n-element tensor is split into, with at most max_elems elements per
 * chunk (0: DAHL_UPDATE_CHUNK_DEFAULT): 1 when n <= max_elems, else ceil(n / max_elems). */
int dahl_update_chunks(size_t n, size_t max_elems);
/* Elements of chunk i (0 <= i < k) of an n-element tensor cut into k chunks, as StarPU's
 * starpu_vector_filter_block cuts it: n / k each, the first n % k chunks one more. */
size_t dahl_update_chunk_elems(size_t n, int k, int i);

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
};

struct dahl_network;

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

/* Tasks the network submitted so far, per perf-model symbol (e.g. "dahl_conv2d_forward"), counted at
 * submission. StarPU's own REDUX init/reduction tasks are not submitted by dahl and are not counted. */
long dahl_network_task_count(const struct dahl_network *net, const char *symbol);
/* Input images copied into the network so far (native runs): bytes, and the CPU time the submitting thread
 * spent copying them. */
void dahl_network_input_copies(const struct dahl_network *net, size_t *bytes, double *cpu_s);

/* Copies the parameters of layer `layer` (weights then bias) into dst (count values). Native build only:
 * returns -ENODATA in the SimGrid build, -EINVAL for a layer without parameters or a wrong count. */
int dahl_network_read_params(struct dahl_network *net, int layer, float *dst, size_t count);

#endif /* DAHL_NETWORK_H */

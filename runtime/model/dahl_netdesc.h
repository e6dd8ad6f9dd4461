/* What a dahl network is made of, without StarPU: its description (layers), the shapes every layer gets
 * from its input, and how large parameter updates are cut into chunks. The network (dahl_network.h) is
 * built from these, and so are the task catalogue and the task graph of training steps, which no StarPU
 * run needs. */
#ifndef DAHL_NETDESC_H
#define DAHL_NETDESC_H

#include "dahl_kernels.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DAHL_NETWORK_MAX_LAYERS 256 /* ResNet-32 has 114 layers, torchvision's ResNet-50 175 */
#define DAHL_LAYER_MAX_INPUTS 2

/* Every kind of layer, one line each, in the order of the layer table (dahl_layer.c) and of the perf-model
 * symbols: X(ENUM, name) makes DAHL_LAYER_ENUM and declares the kind's entry dahl_layer_name, defined by
 * runtime/model/layers/name.c. Registering a kind is its line here. */
#define DAHL_LAYER_KINDS(X)                                                                                      \
    X(CONV, conv)                   /* conv2d + bias: filters, kernel, stride, pad */                            \
    X(MAXPOOL, maxpool)             /* kernel (window), stride */                                                \
    X(RELU, relu)                                                                                                \
    X(DENSE, dense)                 /* units (outputs) */                                                        \
    X(AVGPOOL, avgpool)             /* kernel (window), stride */                                                \
    X(GLOBALAVGPOOL, globalavgpool)                                                                              \
    X(ADD, add)                     /* element-wise sum of two inputs (a skip connection) */                     \
    X(BATCHNORM, batchnorm)                                                                                      \
    X(DROPOUT, dropout)             /* percent */

#define DAHL_LAYER_KIND_ENUM(e, name) DAHL_LAYER_##e,
enum dahl_layer_kind { DAHL_LAYER_KINDS(DAHL_LAYER_KIND_ENUM) };
#undef DAHL_LAYER_KIND_ENUM

struct dahl_layer_desc {
    enum dahl_layer_kind kind;
    int filters, kernel, stride, pad; /* conv: all; maxpool: kernel, stride and pad; avgpool: kernel and stride */
    int units;                        /* dense */
    int percent;                      /* dropout: the share of elements dropped in training */
    int no_bias;                      /* conv: 1 for a convolution without bias (PyTorch's bias=False) */
    /* Where its inputs come from, counted back: input k of layer i is the output of layer i - 1 - back[k] (-1:
     * the network's input). All 0 (the default) makes a chain; add reads two inputs. */
    int back[DAHL_LAYER_MAX_INPUTS];
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

/* A small VGG: three blocks of two 3x3 convolutions (pad 1) with ReLU, of 32, 64 and 128 filters, each block
 * ending in a 2x2 max-pool while the image is at least 2x2, then dense 128 - relu - dense nclasses (18 layers).
 * Returns 0 or -EINVAL. */
int dahl_network_desc_vgg_small(int c, int h, int w, int nclasses, struct dahl_network_desc *out);

/* A CIFAR-style residual network of `depth` layers with weights (He et al. 2016, section 4.2): depth = 6n + 2,
 * 1 <= n <= DAHL_RESNET_MAX_BLOCKS. conv 3x3 (16) - bn - relu, then three stages of n basic blocks of 16, 32 and
 * 64 filters (the first block of the second and third halving the image by stride 2, its shortcut a conv 1x1 -
 * bn projection), global average pooling and dense nclasses. ResNet-8 has 30 layers, ResNet-32 114. The image
 * must be square. Returns 0 or -EINVAL. */
#define DAHL_RESNET_MAX_BLOCKS 5
int dahl_network_desc_resnet(int c, int h, int w, int nclasses, int depth, struct dahl_network_desc *out);

/* The built-in models by name: "lenet", "vgg-small", "resnet:DEPTH" (8, 14, 20, 26, 32), "deep"
 * (DAHL_DEEP_BLOCKS blocks) and "deep:BLOCKS" (1 to 9), the deep variant starting at DAHL_DEEP_WIDTH filters,
 * for a c x h x w input and nclasses classes. Returns 0;
 * -ENOENT when model names none of them (a model file, for the caller to read); or -EINVAL with the reason in
 * err, starting with the model's name ("lenet: a 2x2x1 image is too small ..."). */
#define DAHL_DEEP_BLOCKS 3
#define DAHL_DEEP_WIDTH 8
int dahl_network_desc_named(const char *model, int c, int h, int w, int nclasses, struct dahl_network_desc *out,
                            char *err, size_t err_size);
/* Whether model names a built-in model (lenet, vgg-small, deep, deep:..., resnet:...; a malformed N included), not a
 * file: scenarios resolve every other name as a path relative to themselves. */
bool dahl_network_desc_is_named(const char *model);

/* How many inputs layer i reads (add two, every other kind one). */
int dahl_network_desc_ninputs(const struct dahl_network_desc *d, int i);
/* The layer whose output is input k of layer i (-1: the network's input). */
int dahl_network_desc_input(const struct dahl_network_desc *d, int i, int k);
/* Whether layer i writes the gradient of its input k straight into its source's gradient: it is the last layer
 * reading that source, so the first of the backward pass. Otherwise it writes a buffer of its own, added to the
 * source's gradient right after (fan-out: a skip connection's source). */
bool dahl_network_desc_input_direct(const struct dahl_network_desc *d, int i, int k);
/* Whether the layers form a chain: every layer reads the one before it. */
bool dahl_network_desc_is_chain(const struct dahl_network_desc *d);
/* Whether a pipeline stage may begin at layer k (0 < k < nlayers): the output of layer k - 1 is the only tensor
 * that layers from k on read from layers before k. */
bool dahl_network_desc_cut_ok(const struct dahl_network_desc *d, int k);

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
    struct dahl_maxpool_shape pool; /* DAHL_LAYER_MAXPOOL, DAHL_LAYER_AVGPOOL, DAHL_LAYER_GLOBALAVGPOOL */
    size_t nw, nb;                  /* weights and bias counts, 0 for layers without parameters */
};

/* Plans every layer's shapes into layers[0 .. d->nlayers - 1] (DAHL_NETWORK_MAX_LAYERS entries suffice).
 * Returns 0, or -EINVAL with the reason, naming the layer, in err (what dahl_network_desc_check says). */
int dahl_network_desc_shapes(const struct dahl_network_desc *d, struct dahl_layer_shape *layers, char *err,
                             size_t err_size);

/* The layers' shapes alone, as dahl_network_desc_shapes plans them, without the whole network's checks (every
 * output but the last read, the classes): for the first layers of a network being read. */
int dahl_network_desc_plan(const struct dahl_network_desc *d, struct dahl_layer_shape *layers, char *err,
                           size_t err_size);

/* Number of trainable parameters. */
size_t dahl_network_desc_params(const struct dahl_network_desc *d);

enum dahl_reduction {
    DAHL_REDUCTION_REDUX,  /* gradients accumulated through StarPU's STARPU_REDUX */
    DAHL_REDUCTION_MANUAL, /* per-sample gradients, summed by a tree of accumulate tasks at batch end */
};

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

#endif /* DAHL_NETDESC_H */

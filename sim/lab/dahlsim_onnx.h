/* ONNX model files (`--model net.onnx`): a CNN exported from PyTorch (torch.onnx.export) read into the layer
 * table's network description. The graph is read with the C code protoc-c generates from Debian's onnx.proto,
 * its nodes in the file's (topological) order. Supported operators: Conv (one group, dilation 1, square kernel,
 * the same stride and padding on every side), BatchNormalization (epsilon 1e-5, momentum 0.9: PyTorch's
 * defaults), Relu, MaxPool and AveragePool (square, floor; max-pool may pad), GlobalAveragePool (what PyTorch exports
 * AdaptiveAvgPool2d((1, 1)) as), Add of two branches, Flatten and the Reshape that flattens, Gemm (a Linear
 * layer), MatMul followed by the Add of a bias, Dropout, Identity and Constant. Anything else is refused with
 * the node, its operator and the file named. The graph must have one input of the dataset's c x h x w images
 * (any batch dimension) and one output, its last layer's. StarPU-free. */
#ifndef DAHLSIM_ONNX_H
#define DAHLSIM_ONNX_H

#include "dahl_netdesc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether a model name is an ONNX file (ends in ".onnx"). */
bool dahlsim_onnx_is_path(const char *model);

/* Reads the ONNX file at path into *d for c x h x w inputs and nclasses classes (d's shape fields set, its
 * layers filled; checked with dahl_network_desc_check). Returns 0, or -EINVAL with one line in err naming the
 * file and the node or field ("net.onnx: node '/act/Sigmoid' (Sigmoid): operator not supported; ..."), a
 * second line "hint: ..." where one helps; -ENOENT when the file cannot be opened ("PATH: REASON"). */
int dahlsim_onnx_desc(const char *path, int c, int h, int w, int nclasses, struct dahl_network_desc *d, char *err,
                      size_t err_size);

/* An ONNX file's weights in the layer table's layout, per layer of its description. */
struct dahlsim_onnx_weights {
    int nlayers;
    /* layer i's weights then bias (as dahl_network_write_params takes them: a MatMul's matrix transposed, zeros
     * for a Gemm's missing bias), count[i] values; NULL and 0 for a layer without parameters */
    float *params[DAHL_NETWORK_MAX_LAYERS];
    size_t count[DAHL_NETWORK_MAX_LAYERS];
    float *running[DAHL_NETWORK_MAX_LAYERS]; /* batch norm's running mean then variance per channel, else NULL */
};

/* dahlsim_onnx_desc, and the file's weights into *weights (released with dahlsim_onnx_weights_fini, also after
 * an error). A tensor that is not float, holds too few values or lies outside the file is an error naming it. */
int dahlsim_onnx_weights(const char *path, int c, int h, int w, int nclasses, struct dahl_network_desc *d,
                         struct dahlsim_onnx_weights *weights, char *err, size_t err_size);
void dahlsim_onnx_weights_fini(struct dahlsim_onnx_weights *weights);

/* The same from the file's bytes (data, len), path only naming it in messages (the fuzz target's entry). */
int dahlsim_onnx_desc_from_bytes(const char *path, const uint8_t *data, size_t len, int c, int h, int w,
                                 int nclasses, struct dahl_network_desc *d, char *err, size_t err_size);

#endif /* DAHLSIM_ONNX_H */

/* ONNX model files (`--model net.onnx`): a CNN exported from PyTorch (torch.onnx.export) read into the layer
 * table's network description. The graph is read with the C code protoc-c generates from Debian's onnx.proto,
 * its nodes in the file's (topological) order. Supported operators: Conv (one group, dilation 1, square kernel,
 * the same stride and padding on every side), BatchNormalization (epsilon 1e-5, momentum 0.9: PyTorch's
 * defaults), Relu, MaxPool and AveragePool (square, no padding, floor), GlobalAveragePool (what PyTorch exports
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

/* The same from the file's bytes (data, len), path only naming it in messages (the fuzz target's entry). */
int dahlsim_onnx_desc_from_bytes(const char *path, const uint8_t *data, size_t len, int c, int h, int w,
                                 int nclasses, struct dahl_network_desc *d, char *err, size_t err_size);

#endif /* DAHLSIM_ONNX_H */

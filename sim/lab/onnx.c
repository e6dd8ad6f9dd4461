/* ONNX model files into the layer table's network description (see dahlsim_onnx.h). Each node either makes a
 * layer (Conv, BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool, Add of two branches, Gemm,
 * MatMul, Dropout), gives a layer's output another name (Flatten, Reshape, Identity, Dropout of ratio 0, the
 * Add of a MatMul's bias) or holds a tensor (Constant). Values are looked up by name in a table of what the
 * file has defined so far: initialisers, constants, the graph's input and the outputs of earlier nodes. */
#include "dahlsim_onnx.h"

#include "dahl_layer.h"
#include "dahlsim_fs.h"

#include <onnx/onnx.pb-c.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ONNX_BYTES ((size_t)2 << 30) /* ResNet-152's weights are 240 MB */
#define MAX_NODES 4096
#define MAX_VALUES 16384

#define SUPPORTED                                                                                                \
    "Conv, BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool, Add, Gemm, MatMul + Add, Flatten, " \
    "Reshape, Dropout, Identity (docs/onnx.md)"

/* a value's layer, else the index of the layer that makes it */
enum { VALUE_SHAPE = -3, VALUE_TENSOR = -2, VALUE_INPUT = -1 };

#define MAX_SHAPE 8
#define DIM_BATCH INT64_MIN /* a shape's entry that is the batch size, unknown until run */

struct value {
    const char *name;
    int layer;                       /* VALUE_SHAPE, VALUE_TENSOR, VALUE_INPUT or a layer index */
    bool flat;                       /* a layer's output read flat, [batch, values] (after Flatten) */
    const Onnx__TensorProto *tensor; /* VALUE_TENSOR: an initialiser or a Constant's */
    int nshape;                      /* VALUE_SHAPE: a shape computed in the graph (x.size(0) and the like) */
    int64_t shape[MAX_SHAPE];
};

/* A Reshape to a given width, checked against the output it flattens once the layers' shapes are known. */
struct reshape {
    int layer; /* the layer whose output it reads (VALUE_INPUT: the network's input) */
    size_t width;
};

struct reader {
    const char *path;
    struct dahl_network_desc *d;
    struct value *values;
    size_t nvalues;
    struct reshape reshapes[MAX_NODES];
    size_t nreshapes;
    int pending_matmul; /* the layer a MatMul made, waiting for its bias (-1: none) */
    /* each layer's tensors in the file: weights (transposed: a MatMul's [in][out]), bias, running statistics */
    const Onnx__TensorProto *tw[DAHL_NETWORK_MAX_LAYERS], *tb[DAHL_NETWORK_MAX_LAYERS];
    const Onnx__TensorProto *tmean[DAHL_NETWORK_MAX_LAYERS], *tvar[DAHL_NETWORK_MAX_LAYERS];
    bool transposed[DAHL_NETWORK_MAX_LAYERS];
    struct dahl_layer_shape shapes[DAHL_NETWORK_MAX_LAYERS]; /* Shape's scratch, then the whole network's */
    char *err;
    size_t err_size;
};

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

/* An error about node n: "FILE: node 'NAME' (OP): WHAT". */
__attribute__((format(printf, 3, 4))) static int node_error(struct reader *r, const Onnx__NodeProto *n,
                                                            const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(r->err, r->err_size, "%s: node '%s' (%s): %s", r->path, str(n->name), str(n->op_type), what);
    return -EINVAL;
}

static struct value *find(struct reader *r, const char *name)
{
    for (size_t i = r->nvalues; i-- > 0;)
        if (strcmp(r->values[i].name, name) == 0)
            return &r->values[i];
    return NULL;
}

static int define(struct reader *r, const char *name, int layer, const Onnx__TensorProto *tensor)
{
    if (name == NULL || name[0] == '\0')
        return 0; /* an optional output left out */
    if (find(r, name) != NULL) {
        snprintf(r->err, r->err_size, "%s: value '%s' is made twice (an ONNX graph names each value once)", r->path,
                 name);
        return -EINVAL;
    }
    if (r->nvalues == MAX_VALUES) {
        snprintf(r->err, r->err_size, "%s: more than %d values", r->path, MAX_VALUES);
        return -EINVAL;
    }
    r->values[r->nvalues++] = (struct value){.name = name, .layer = layer, .tensor = tensor};
    return 0;
}

/* The layer (or VALUE_INPUT) node input k comes from: a tensor made by the network, not a weight. */
static int input_layer(struct reader *r, const Onnx__NodeProto *n, size_t k, int *layer)
{
    if (k >= n->n_input || str(n->input[k])[0] == '\0')
        return node_error(r, n, "expected at least %zu inputs", k + 1);
    const struct value *v = find(r, n->input[k]);
    if (v == NULL)
        return node_error(r, n, "input '%s' is read before any node makes it (nodes must come in topological order)",
                          n->input[k]);
    if (v->layer < VALUE_INPUT)
        return node_error(r, n, "input %zu, '%s', is a constant where the network's data was expected", k,
                          n->input[k]);
    *layer = v->layer;
    return 0;
}

/* The constant tensor of node input k (an initialiser or a Constant's value), or NULL when absent or when
 * optional and left out; an error when it is the network's data. */
static int input_tensor(struct reader *r, const Onnx__NodeProto *n, size_t k, bool optional,
                        const Onnx__TensorProto **t)
{
    *t = NULL;
    if (k >= n->n_input || str(n->input[k])[0] == '\0')
        return optional ? 0 : node_error(r, n, "input %zu (a weight tensor) is missing", k);
    const struct value *v = find(r, n->input[k]);
    if (v == NULL || v->layer != VALUE_TENSOR)
        return node_error(r, n, "input %zu, '%s', must be an initialiser or a Constant (weights are not computed)",
                          k, n->input[k]);
    *t = v->tensor;
    return 0;
}

static size_t tensor_count(const Onnx__TensorProto *t)
{
    size_t count = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        count = t->dims[i] > 0 && count <= SIZE_MAX / (size_t)t->dims[i] ? count * (size_t)t->dims[i] : 0;
    return count;
}

/* Element i of a float, double or int64 tensor as a double; false when it has no such element. */
static bool tensor_at(const Onnx__TensorProto *t, size_t i, double *out)
{
    switch (t->data_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        if (i < t->n_float_data)
            return *out = t->float_data[i], true;
        if (t->has_raw_data && (i + 1) * 4 <= t->raw_data.len) {
            float f;
            memcpy(&f, t->raw_data.data + i * 4, 4);
            return *out = f, true;
        }
        return false;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        if (i < t->n_double_data)
            return *out = t->double_data[i], true;
        if (t->has_raw_data && (i + 1) * 8 <= t->raw_data.len) {
            double f;
            memcpy(&f, t->raw_data.data + i * 8, 8);
            return *out = f, true;
        }
        return false;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        if (i < t->n_int64_data)
            return *out = (double)t->int64_data[i], true;
        if (t->has_raw_data && (i + 1) * 8 <= t->raw_data.len) {
            int64_t v;
            memcpy(&v, t->raw_data.data + i * 8, 8);
            return *out = (double)v, true;
        }
        return false;
    default:
        return false;
    }
}

static const Onnx__AttributeProto *attribute(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (strcmp(str(n->attribute[i]->name), name) == 0)
            return n->attribute[i];
    return NULL;
}

static int64_t attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = attribute(n, name);
    return a != NULL && a->has_i ? a->i : dflt;
}

static double attr_float(const Onnx__NodeProto *n, const char *name, double dflt)
{
    const Onnx__AttributeProto *a = attribute(n, name);
    return a != NULL && a->has_f ? a->f : dflt;
}

/* An ints attribute whose values are all one v in [min, 65536], for two spatial dimensions (count 2, or 4
 * for pads); absent: dflt. */
static int attr_same(struct reader *r, const Onnx__NodeProto *n, const char *name, size_t count, int min,
                     int dflt, int *v)
{
    const Onnx__AttributeProto *a = attribute(n, name);
    if (a == NULL) {
        *v = dflt;
        return 0;
    }
    bool ok = a->n_ints == count;
    for (size_t i = 0; ok && i < a->n_ints; i++)
        ok = a->ints[i] == a->ints[0] && a->ints[i] >= min && a->ints[i] <= 65536;
    if (!ok)
        return node_error(r, n, "%s: expected %zu equal values in [%d, 65536] (square kernels, the same on every "
                          "side)", name, count, min);
    *v = (int)a->ints[0];
    return 0;
}

/* A string attribute equal to want (or absent). */
static int attr_string_is(struct reader *r, const Onnx__NodeProto *n, const char *name, const char *want)
{
    const Onnx__AttributeProto *a = attribute(n, name);
    if (a == NULL || !a->has_s || (a->s.len == strlen(want) && memcmp(a->s.data, want, a->s.len) == 0))
        return 0;
    return node_error(r, n, "%s: only %s is supported (give explicit pads)", name, want);
}

/* Appends a layer reading the layers in from (VALUE_INPUT: the network's input) and names node output 0 it. */
static int push(struct reader *r, const Onnx__NodeProto *n, struct dahl_layer_desc l, const int *from, int nfrom)
{
    struct dahl_network_desc *d = r->d;
    if (d->nlayers == DAHL_NETWORK_MAX_LAYERS)
        return node_error(r, n, "more than %d layers", DAHL_NETWORK_MAX_LAYERS);
    int i = d->nlayers;
    for (int k = 0; k < nfrom; k++)
        l.back[k] = i - 1 - from[k];
    d->layers[d->nlayers++] = l;
    if (n->n_output < 1)
        return node_error(r, n, "no output");
    return define(r, n->output[0], i, NULL);
}

/* Names node output 0 as the layer its input 0 comes from (a node that does not change the data), read flat
 * from then on when flat. */
static int alias(struct reader *r, const Onnx__NodeProto *n, bool flat)
{
    int from;
    if (input_layer(r, n, 0, &from) != 0)
        return -EINVAL;
    if (n->n_output < 1)
        return node_error(r, n, "no output");
    flat = flat || find(r, n->input[0])->flat;
    if (define(r, n->output[0], from, NULL) != 0)
        return -EINVAL;
    r->values[r->nvalues - 1].flat = flat;
    return 0;
}

/* Node input k as a shape: a shape computed in the graph or an integer constant of at most MAX_SHAPE values. */
static int input_shape(struct reader *r, const Onnx__NodeProto *n, size_t k, int64_t *out, int *count)
{
    const struct value *v = k < n->n_input ? find(r, str(n->input[k])) : NULL;
    if (v != NULL && v->layer == VALUE_SHAPE) {
        memcpy(out, v->shape, sizeof(v->shape));
        *count = v->nshape;
        return 0;
    }
    size_t m = v != NULL && v->layer == VALUE_TENSOR ? tensor_count(v->tensor) : 0;
    bool ok = v != NULL && v->layer == VALUE_TENSOR && m <= MAX_SHAPE &&
              (v->tensor->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || m == 0);
    for (size_t i = 0; ok && i < m; i++) {
        double x;
        ok = tensor_at(v->tensor, i, &x) && fabs(x) < 1e15;
        out[i] = ok ? (int64_t)x : 0;
    }
    if (!ok)
        return node_error(r, n, "input %zu: expected a shape (integers computed from shapes and constants)", k);
    *count = (int)m;
    return 0;
}

static int define_shape(struct reader *r, const Onnx__NodeProto *n, const int64_t *shape, int count)
{
    if (count > MAX_SHAPE)
        return node_error(r, n, "a shape of more than %d values", MAX_SHAPE);
    if (n->n_output < 1 || define(r, n->output[0], VALUE_SHAPE, NULL) != 0)
        return n->n_output < 1 ? node_error(r, n, "no output") : -EINVAL;
    struct value *v = &r->values[r->nvalues - 1];
    v->nshape = count;
    memcpy(v->shape, shape, (size_t)count * sizeof(*shape));
    return 0;
}

/* Shape: [batch, channels, height, width] of a layer's output ([batch, values] read flat). */
static int shape_of(struct reader *r, const Onnx__NodeProto *n)
{
    int from;
    if (input_layer(r, n, 0, &from) != 0)
        return -EINVAL;
    if (attribute(n, "start") != NULL || attribute(n, "end") != NULL)
        return node_error(r, n, "start and end are not supported");
    int64_t dims[4] = {DIM_BATCH, r->d->c, r->d->h, r->d->w};
    if (from >= 0) {
        struct dahl_network_desc part = *r->d;
        part.nlayers = from + 1;
        char why[256];
        if (dahl_network_desc_plan(&part, r->shapes, why, sizeof(why)) != 0)
            return node_error(r, n, "%s", why);
        dims[1] = r->shapes[from].out_c, dims[2] = r->shapes[from].out_h, dims[3] = r->shapes[from].out_w;
    }
    if (!find(r, n->input[0])->flat)
        return define_shape(r, n, dims, 4);
    dims[1] *= dims[2] * dims[3];
    return define_shape(r, n, dims, 2);
}

/* Gather (axis 0), Unsqueeze and Concat (axis 0) of shapes: what x.size(0) and view(n, -1) export as. */
static int shape_op(struct reader *r, const Onnx__NodeProto *n, const char *op)
{
    int64_t a[MAX_SHAPE], b[MAX_SHAPE], out[2 * MAX_SHAPE];
    int na, nb, count = 0;
    if (attr_int(n, "axis", 0) != 0)
        return node_error(r, n, "axis %lld: only axis 0 of a shape is supported", (long long)attr_int(n, "axis", 0));
    if (op[0] == 'G') {
        if (input_shape(r, n, 0, a, &na) != 0 || input_shape(r, n, 1, b, &nb) != 0)
            return -EINVAL;
        for (int i = 0; i < nb; i++) {
            int64_t k = b[i] < 0 ? b[i] + na : b[i];
            if (k < 0 || k >= na)
                return node_error(r, n, "index %lld of a shape of %d values", (long long)b[i], na);
            out[count++] = a[k];
        }
        return define_shape(r, n, out, count);
    }
    if (op[0] == 'U')
        return input_shape(r, n, 0, a, &na) != 0 ? -EINVAL : define_shape(r, n, a, na);
    for (size_t k = 0; k < n->n_input; k++) {
        if (input_shape(r, n, k, a, &na) != 0)
            return -EINVAL;
        if (count + na > MAX_SHAPE)
            return node_error(r, n, "a shape of more than %d values", MAX_SHAPE);
        memcpy(out + count, a, (size_t)na * sizeof(*a));
        count += na;
    }
    return define_shape(r, n, out, count);
}

/* Pad by zeros on no side: what AvgPool2d exports before its AveragePool. */
static int pad(struct reader *r, const Onnx__NodeProto *n)
{
    int64_t pads[MAX_SHAPE];
    int count;
    if (attr_string_is(r, n, "mode", "constant") != 0 || input_shape(r, n, 1, pads, &count) != 0)
        return -EINVAL;
    for (int i = 0; i < count; i++)
        if (pads[i] != 0)
            return node_error(r, n, "pads of %lld: only a Pad of zeros (what AvgPool2d exports) is supported; pad "
                              "in the Conv or pool instead", (long long)pads[i]);
    return alias(r, n, false);
}

/* The tensors of the layer about to be pushed (when it can be: push checks the count). */
static void tensors(struct reader *r, const Onnx__TensorProto *w, const Onnx__TensorProto *b,
                    const Onnx__TensorProto *mean, const Onnx__TensorProto *var, bool transposed)
{
    int i = r->d->nlayers;
    if (i >= DAHL_NETWORK_MAX_LAYERS)
        return;
    r->tw[i] = w, r->tb[i] = b, r->tmean[i] = mean, r->tvar[i] = var, r->transposed[i] = transposed;
}

static int conv(struct reader *r, const Onnx__NodeProto *n)
{
    int from, kernel, stride, pad, dilation;
    const Onnx__TensorProto *w, *b;
    if (input_layer(r, n, 0, &from) != 0 || input_tensor(r, n, 1, false, &w) != 0 ||
        input_tensor(r, n, 2, true, &b) != 0)
        return -EINVAL;
    if (w->n_dims != 4 || w->dims[0] < 1 || w->dims[0] > 65536 || w->dims[2] != w->dims[3] || w->dims[2] < 1 ||
        w->dims[2] > 65536)
        return node_error(r, n, "weights '%s': expected 4 dimensions [filters, channels, k, k]", str(w->name));
    if (attr_int(n, "group", 1) != 1)
        return node_error(r, n, "group %lld: only group 1 is supported (no grouped or depthwise convolutions)",
                          (long long)attr_int(n, "group", 1));
    if (attr_same(r, n, "kernel_shape", 2, 1, (int)w->dims[2], &kernel) != 0 ||
        attr_same(r, n, "strides", 2, 1, 1, &stride) != 0 || attr_same(r, n, "pads", 4, 0, 0, &pad) != 0 ||
        attr_same(r, n, "dilations", 2, 1, 1, &dilation) != 0 || attr_string_is(r, n, "auto_pad", "NOTSET") != 0)
        return -EINVAL;
    if (kernel != w->dims[2] || dilation != 1)
        return node_error(r, n, "kernel_shape %d and dilation %d: expected the weights' %lld and 1", kernel,
                          dilation, (long long)w->dims[2]);
    size_t f = (size_t)w->dims[0];
    if (b != NULL && tensor_count(b) != f)
        return node_error(r, n, "bias '%s': expected %zu values", str(b->name), f);
    tensors(r, w, b, NULL, NULL, false);
    return push(r, n,
                (struct dahl_layer_desc){.kind = DAHL_LAYER_CONV, .filters = (int)f, .kernel = kernel,
                                         .stride = stride, .pad = pad, .no_bias = b == NULL},
                &from, 1);
}

static int batchnorm(struct reader *r, const Onnx__NodeProto *n)
{
    int from;
    const Onnx__TensorProto *t[4];
    if (input_layer(r, n, 0, &from) != 0)
        return -EINVAL;
    for (int k = 0; k < 4; k++)
        if (input_tensor(r, n, 1 + (size_t)k, false, &t[k]) != 0)
            return -EINVAL;
    size_t ch = tensor_count(t[0]);
    for (int k = 1; k < 4; k++)
        if (tensor_count(t[k]) != ch)
            return node_error(r, n, "'%s' has %zu values, scale '%s' %zu", str(t[k]->name), tensor_count(t[k]),
                              str(t[0]->name), ch);
    double eps = attr_float(n, "epsilon", 1e-5), momentum = attr_float(n, "momentum", 0.9);
    if (fabs(eps - 1e-5) > 1e-9)
        return node_error(r, n, "epsilon %g: dahlsim's batch norm uses 1e-5 (PyTorch's default)", eps);
    if (fabs(momentum - 0.9) > 1e-6)
        return node_error(r, n, "momentum %g: dahlsim's batch norm uses 0.9 (PyTorch's momentum=0.1)", momentum);
    tensors(r, t[0], t[1], t[2], t[3], false);
    return push(r, n, (struct dahl_layer_desc){.kind = DAHL_LAYER_BATCHNORM}, &from, 1);
}

static int pool(struct reader *r, const Onnx__NodeProto *n, enum dahl_layer_kind kind)
{
    int from, kernel, stride, pad, dilation;
    if (input_layer(r, n, 0, &from) != 0 || attr_same(r, n, "kernel_shape", 2, 1, -1, &kernel) != 0 ||
        attr_same(r, n, "strides", 2, 1, 1, &stride) != 0 || attr_same(r, n, "pads", 4, 0, 0, &pad) != 0 ||
        attr_same(r, n, "dilations", 2, 1, 1, &dilation) != 0 || attr_string_is(r, n, "auto_pad", "NOTSET") != 0)
        return -EINVAL;
    if (kernel < 0)
        return node_error(r, n, "kernel_shape is missing");
    if ((pad != 0 && kind != DAHL_LAYER_MAXPOOL) || dilation != 1 || attr_int(n, "ceil_mode", 0) != 0)
        return node_error(r, n, "pads %d, dilation %d, ceil_mode %lld: dahlsim's pooling has dilation 1, rounds down "
                          "and pads max-pool only", pad, dilation, (long long)attr_int(n, "ceil_mode", 0));
    if (n->n_output > 1 && str(n->output[1])[0] != '\0')
        return node_error(r, n, "its indices output is not supported");
    return push(r, n, (struct dahl_layer_desc){.kind = kind, .kernel = kernel, .stride = stride, .pad = pad}, &from,
                1);
}

/* A dense layer from a weight matrix of units x in (transposed: in x units); the bias comes with it (Gemm's C)
 * or from the Add after it (MatMul). */
static int dense(struct reader *r, const Onnx__NodeProto *n, bool gemm)
{
    int from;
    const Onnx__TensorProto *w, *b = NULL;
    if (input_layer(r, n, 0, &from) != 0 || input_tensor(r, n, 1, false, &w) != 0 ||
        (gemm && input_tensor(r, n, 2, true, &b) != 0))
        return -EINVAL;
    bool trans = gemm && attr_int(n, "transB", 0) != 0;
    if (w->n_dims != 2 || w->dims[0] < 1 || w->dims[1] < 1 || w->dims[trans ? 0 : 1] > 65536)
        return node_error(r, n, "weights '%s': expected 2 dimensions of at most 65536 units", str(w->name));
    if (gemm && (attr_int(n, "transA", 0) != 0 || attr_float(n, "alpha", 1) != 1 || attr_float(n, "beta", 1) != 1))
        return node_error(r, n, "only transA 0, alpha 1 and beta 1 are supported (what a Linear layer exports)");
    size_t units = (size_t)w->dims[trans ? 0 : 1];
    if (b != NULL && tensor_count(b) != units)
        return node_error(r, n, "bias '%s': expected %zu values", str(b->name), units);
    if (!gemm)
        r->pending_matmul = r->d->nlayers;
    tensors(r, w, b, NULL, NULL, !gemm || !trans);
    return push(r, n, (struct dahl_layer_desc){.kind = DAHL_LAYER_DENSE, .units = (int)units}, &from, 1);
}

/* Add: two branches (a skip connection), or a MatMul's output plus its bias. */
static int add(struct reader *r, const Onnx__NodeProto *n)
{
    if (n->n_input != 2)
        return node_error(r, n, "expected 2 inputs");
    const struct value *a = find(r, n->input[0]), *b = find(r, n->input[1]);
    if (a != NULL && b != NULL && (a->layer == VALUE_TENSOR) != (b->layer == VALUE_TENSOR)) {
        const struct value *data = a->layer == VALUE_TENSOR ? b : a, *bias = a->layer == VALUE_TENSOR ? a : b;
        if (data->layer != r->pending_matmul || data->layer < 0)
            return node_error(r, n, "adds the constant '%s': only a MatMul's bias may be added", bias->name);
        if (tensor_count(bias->tensor) != (size_t)r->d->layers[data->layer].units)
            return node_error(r, n, "bias '%s': expected %d values", bias->name, r->d->layers[data->layer].units);
        r->pending_matmul = -1;
        r->tb[data->layer] = bias->tensor;
        return n->n_output < 1 ? node_error(r, n, "no output") : define(r, n->output[0], data->layer, NULL);
    }
    int from[2];
    if (input_layer(r, n, 0, &from[0]) != 0 || input_layer(r, n, 1, &from[1]) != 0)
        return -EINVAL;
    if (from[0] < 0 || from[1] < 0 || from[0] == from[1])
        return node_error(r, n, "expected the outputs of two different layers");
    return push(r, n, (struct dahl_layer_desc){.kind = DAHL_LAYER_ADD}, from, 2);
}

static int dropout(struct reader *r, const Onnx__NodeProto *n)
{
    int from;
    const Onnx__TensorProto *t = NULL;
    if (input_layer(r, n, 0, &from) != 0 || input_tensor(r, n, 1, true, &t) != 0)
        return -EINVAL;
    double ratio = attr_float(n, "ratio", 0.5);
    if (t != NULL && (tensor_count(t) != 1 || !tensor_at(t, 0, &ratio)))
        return node_error(r, n, "ratio '%s': expected one float", str(t->name));
    double percent = ratio * 100;
    if (!(percent >= 0 && percent <= 95) || fabs(percent - round(percent)) > 1e-4)
        return node_error(r, n, "ratio %g: expected a whole percentage from 0 to 95 %%", ratio);
    if ((int)round(percent) == 0)
        return alias(r, n, false);
    return push(r, n, (struct dahl_layer_desc){.kind = DAHL_LAYER_DROPOUT, .percent = (int)round(percent)}, &from,
                1);
}

/* Flatten (axis 1) and the Reshape to [batch, -1] or [batch, width]: dense layers read their input flat. */
static int flatten(struct reader *r, const Onnx__NodeProto *n, bool reshape)
{
    if (!reshape) {
        if (attr_int(n, "axis", 1) != 1)
            return node_error(r, n, "axis %lld: only axis 1 (keeping the batch dimension) is supported",
                              (long long)attr_int(n, "axis", 1));
        return alias(r, n, true);
    }
    int64_t shape[MAX_SHAPE];
    int count, from;
    if (input_layer(r, n, 0, &from) != 0 || input_shape(r, n, 1, shape, &count) != 0)
        return -EINVAL;
    if (count != 2 || !(shape[0] == DIM_BATCH || shape[0] >= -1) || !(shape[1] == -1 || shape[1] >= 1))
        return node_error(r, n, "only the reshape to [batch, -1] or [batch, width] is supported");
    if (shape[1] > 0)
        r->reshapes[r->nreshapes++] = (struct reshape){.layer = from, .width = (size_t)shape[1]};
    return alias(r, n, true);
}

static int constant(struct reader *r, const Onnx__NodeProto *n)
{
    const Onnx__AttributeProto *a = attribute(n, "value");
    if (a == NULL || a->t == NULL || n->n_output < 1)
        return node_error(r, n, "only a tensor \"value\" is supported");
    return define(r, n->output[0], VALUE_TENSOR, a->t);
}

static int node(struct reader *r, const Onnx__NodeProto *n)
{
    const char *op = str(n->op_type);
    if (str(n->domain)[0] != '\0' && strcmp(n->domain, "ai.onnx") != 0)
        return node_error(r, n, "operator of domain '%s' not supported (only the default ONNX domain)", n->domain);
    if (r->pending_matmul >= 0 && strcmp(op, "Add") != 0)
        return node_error(r, n, "expected the Add of the bias of the MatMul before it (a MatMul without a bias is "
                          "not supported)");
    if (strcmp(op, "Conv") == 0)
        return conv(r, n);
    if (strcmp(op, "BatchNormalization") == 0)
        return batchnorm(r, n);
    if (strcmp(op, "Relu") == 0) {
        int from;
        return input_layer(r, n, 0, &from) != 0 ? -EINVAL
                                                : push(r, n, (struct dahl_layer_desc){.kind = DAHL_LAYER_RELU}, &from, 1);
    }
    if (strcmp(op, "MaxPool") == 0)
        return pool(r, n, DAHL_LAYER_MAXPOOL);
    if (strcmp(op, "AveragePool") == 0)
        return pool(r, n, DAHL_LAYER_AVGPOOL);
    if (strcmp(op, "GlobalAveragePool") == 0) {
        int from;
        return input_layer(r, n, 0, &from) != 0
                   ? -EINVAL
                   : push(r, n, (struct dahl_layer_desc){.kind = DAHL_LAYER_GLOBALAVGPOOL}, &from, 1);
    }
    if (strcmp(op, "Add") == 0)
        return add(r, n);
    if (strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0)
        return dense(r, n, op[0] == 'G');
    if (strcmp(op, "Dropout") == 0)
        return dropout(r, n);
    if (strcmp(op, "Flatten") == 0 || strcmp(op, "Reshape") == 0)
        return flatten(r, n, op[0] == 'R');
    if (strcmp(op, "Identity") == 0)
        return alias(r, n, false);
    if (strcmp(op, "Pad") == 0)
        return pad(r, n);
    if (strcmp(op, "Shape") == 0)
        return shape_of(r, n);
    if (strcmp(op, "Gather") == 0 || strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Concat") == 0)
        return shape_op(r, n, op);
    if (strcmp(op, "Constant") == 0)
        return constant(r, n);
    node_error(r, n, "operator not supported\nhint: dahlsim reads %s", SUPPORTED);
    return -EINVAL;
}

/* The graph's one data input (an input that is no initialiser) must be float [batch, c, h, w]. */
static int graph_input(struct reader *r, const Onnx__GraphProto *g, int c, int h, int w)
{
    const Onnx__ValueInfoProto *in = NULL;
    for (size_t i = 0; i < g->n_input; i++) {
        const struct value *v = find(r, str(g->input[i]->name));
        if (v != NULL && v->layer == VALUE_TENSOR)
            continue; /* an initialiser listed as an input too (older exports) */
        if (in != NULL) {
            snprintf(r->err, r->err_size, "%s: inputs '%s' and '%s': expected one input (a single-input CNN)",
                     r->path, str(in->name), str(g->input[i]->name));
            return -EINVAL;
        }
        in = g->input[i];
    }
    if (in == NULL) {
        snprintf(r->err, r->err_size, "%s: the graph has no input", r->path);
        return -EINVAL;
    }
    const Onnx__TypeProto *t = in->type;
    const Onnx__TensorShapeProto *s =
        t != NULL && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type != NULL ? t->tensor_type->shape
                                                                                                  : NULL;
    if (s == NULL || s->n_dim != 4 || t->tensor_type->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
        snprintf(r->err, r->err_size, "%s: input '%s': expected a float tensor [batch, channels, height, width]",
                 r->path, str(in->name));
        return -EINVAL;
    }
    const int want[3] = {c, h, w};
    for (int k = 0; k < 3; k++) {
        const Onnx__TensorShapeProto__Dimension *dim = s->dim[k + 1];
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value != want[k]) {
            long long got[3];
            for (int j = 0; j < 3; j++)
                got[j] = s->dim[j + 1]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                             ? (long long)s->dim[j + 1]->dim_value
                             : -1;
            snprintf(r->err, r->err_size,
                     "%s: input '%s' is %lldx%lldx%lld (channels x height x width), the dataset's images are "
                     "%dx%dx%d\nhint: export the model for the dataset's image size, or pick a dataset of its "
                     "size (synthetic:%lldx%lldx%lld)",
                     r->path, str(in->name), got[0], got[1], got[2], c, h, w, got[1], got[2], got[0]);
            return -EINVAL;
        }
    }
    return define(r, str(in->name), VALUE_INPUT, NULL);
}

/* What only the layers' shapes tell (planned into r->shapes): every weight tensor's size (biases and batch
 * norm's other tensors were checked against theirs), every Reshape's width. */
static int check_shapes(struct reader *r)
{
    char why[256];
    if (dahl_network_desc_shapes(r->d, r->shapes, why, sizeof(why)) != 0) {
        snprintf(r->err, r->err_size, "%s: %s", r->path, why);
        return -EINVAL;
    }
    for (int i = 0; i < r->d->nlayers; i++) {
        const struct dahl_layer_shape *l = &r->shapes[i];
        if (r->tw[i] != NULL && tensor_count(r->tw[i]) != l->nw) {
            snprintf(r->err, r->err_size, "%s: layer %d (%s): its weights have %zu values, its input (%dx%dx%d) "
                     "implies %zu", r->path, i, dahl_layer_type_get(l->desc.kind)->name, tensor_count(r->tw[i]),
                     l->in_c, l->in_h, l->in_w, l->nw);
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < r->nreshapes; i++) {
        const struct reshape *e = &r->reshapes[i];
        const struct dahl_layer_shape *l = e->layer >= 0 ? &r->shapes[e->layer] : NULL;
        size_t out = l != NULL ? (size_t)l->out_c * l->out_h * l->out_w : (size_t)r->d->c * r->d->h * r->d->w;
        if (e->width != out) {
            snprintf(r->err, r->err_size, "%s: a Reshape to width %zu after layer %d, whose output has %zu values",
                     r->path, e->width, e->layer, out);
            return -EINVAL;
        }
    }
    return 0;
}

static int read_graph(struct reader *r, const Onnx__GraphProto *g, int c, int h, int w)
{
    if (g == NULL) {
        snprintf(r->err, r->err_size, "%s: no graph in the model", r->path);
        return -EINVAL;
    }
    if (g->n_node > MAX_NODES) {
        snprintf(r->err, r->err_size, "%s: %zu nodes, at most %d are read", r->path, g->n_node, MAX_NODES);
        return -EINVAL;
    }
    for (size_t i = 0; i < g->n_initializer; i++)
        if (define(r, str(g->initializer[i]->name), VALUE_TENSOR, g->initializer[i]) != 0)
            return -EINVAL;
    if (graph_input(r, g, c, h, w) != 0)
        return -EINVAL;
    for (size_t i = 0; i < g->n_node; i++)
        if (node(r, g->node[i]) != 0)
            return -EINVAL;
    if (r->pending_matmul >= 0) {
        snprintf(r->err, r->err_size, "%s: the last MatMul has no Add of its bias", r->path);
        return -EINVAL;
    }
    if (g->n_output != 1) {
        snprintf(r->err, r->err_size, "%s: %zu outputs: expected one (a single-output CNN)", r->path, g->n_output);
        return -EINVAL;
    }
    const struct value *out = find(r, str(g->output[0]->name));
    if (r->d->nlayers == 0 || out == NULL || out->layer != r->d->nlayers - 1) {
        snprintf(r->err, r->err_size, "%s: output '%s' is not the last layer's output", r->path,
                 str(g->output[0]->name));
        return -EINVAL;
    }
    return check_shapes(r);
}

bool dahlsim_onnx_is_path(const char *model)
{
    size_t n = strlen(model);
    return n > 5 && strcmp(model + n - 5, ".onnx") == 0;
}

/* count values of tensor t as floats into dst; transposed: t holds the [cols][rows] transpose of dst's [rows]
 * [cols] matrix. */
static int tensor_floats(struct reader *r, int layer, const Onnx__TensorProto *t, size_t count, bool transposed,
                         size_t rows, float *dst)
{
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        snprintf(r->err, r->err_size, "%s: tensor '%s' is stored outside the file (external data is not read)",
                 r->path, str(t->name));
        return -EINVAL;
    }
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || tensor_count(t) != count) {
        snprintf(r->err, r->err_size, "%s: tensor '%s' of layer %d: expected %zu float values", r->path,
                 str(t->name), layer, count);
        return -EINVAL;
    }
    size_t cols = transposed ? count / rows : 0;
    for (size_t i = 0; i < count; i++) {
        double v;
        if (!tensor_at(t, i, &v)) {
            snprintf(r->err, r->err_size, "%s: tensor '%s' holds fewer than its %zu values", r->path, str(t->name),
                     count);
            return -EINVAL;
        }
        dst[transposed ? (i % rows) * cols + i / rows : i] = (float)v;
    }
    return 0;
}

/* The layers' parameters from their tensors, into the shapes check_shapes planned (a Gemm without bias gets
 * zeros). */
static int read_weights(struct reader *r, struct dahlsim_onnx_weights *out)
{
    out->nlayers = r->d->nlayers;
    for (int i = 0; i < r->d->nlayers; i++) {
        const struct dahl_layer_shape *l = &r->shapes[i];
        if (l->nw == 0)
            continue;
        out->count[i] = l->nw + l->nb;
        out->params[i] = calloc(l->nw + l->nb, sizeof(float));
        out->running[i] = r->tmean[i] != NULL ? calloc(2 * (size_t)l->in_c, sizeof(float)) : NULL;
        if (out->params[i] == NULL || (r->tmean[i] != NULL && out->running[i] == NULL)) {
            snprintf(r->err, r->err_size, "%s: out of memory", r->path);
            return -ENOMEM;
        }
        if (tensor_floats(r, i, r->tw[i], l->nw, r->transposed[i], l->nb, out->params[i]) != 0 ||
            (r->tb[i] != NULL && tensor_floats(r, i, r->tb[i], l->nb, false, 0, out->params[i] + l->nw) != 0))
            return -EINVAL;
        size_t c = (size_t)l->in_c;
        if (r->tmean[i] != NULL && (tensor_floats(r, i, r->tmean[i], c, false, 0, out->running[i]) != 0 ||
                                    tensor_floats(r, i, r->tvar[i], c, false, 0, out->running[i] + c) != 0))
            return -EINVAL;
    }
    return 0;
}

void dahlsim_onnx_weights_fini(struct dahlsim_onnx_weights *w)
{
    for (int i = 0; i < DAHL_NETWORK_MAX_LAYERS; i++) {
        free(w->params[i]);
        free(w->running[i]);
    }
    memset(w, 0, sizeof(*w));
}

/* The description of the model in data (and its weights when weights is not NULL). */
static int read_model(const char *path, const uint8_t *data, size_t len, int c, int h, int w, int nclasses,
                      struct dahl_network_desc *d, struct dahlsim_onnx_weights *weights, char *err, size_t err_size)
{
    *d = (struct dahl_network_desc){.c = c, .h = h, .w = w, .nclasses = nclasses};
    if (weights != NULL)
        memset(weights, 0, sizeof(*weights));
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, data);
    if (m == NULL) {
        snprintf(err, err_size, "%s: not an ONNX model (a protobuf ModelProto): malformed or truncated", path);
        return -EINVAL;
    }
    struct reader *r = calloc(1, sizeof(*r));
    struct value *values = calloc(MAX_VALUES, sizeof(*values));
    int ret = -ENOMEM;
    if (r == NULL || values == NULL) {
        snprintf(err, err_size, "%s: out of memory", path);
        goto out;
    }
    r->path = path, r->d = d, r->values = values, r->pending_matmul = -1, r->err = err, r->err_size = err_size;
    ret = read_graph(r, m->graph, c, h, w); /* checked: check_shapes planned the whole network */
    if (ret == 0 && weights != NULL)
        ret = read_weights(r, weights);
    if (ret != 0 && weights != NULL)
        dahlsim_onnx_weights_fini(weights);
out:
    free(values);
    free(r);
    onnx__model_proto__free_unpacked(m, NULL);
    return ret;
}

int dahlsim_onnx_desc_from_bytes(const char *path, const uint8_t *data, size_t len, int c, int h, int w,
                                 int nclasses, struct dahl_network_desc *d, char *err, size_t err_size)
{
    return read_model(path, data, len, c, h, w, nclasses, d, NULL, err, err_size);
}

static int read_path(const char *path, int c, int h, int w, int nclasses, struct dahl_network_desc *d,
                     struct dahlsim_onnx_weights *weights, char *err, size_t err_size)
{
    size_t len;
    char *data = dahlsim_read_file(path, MAX_ONNX_BYTES, &len);
    if (data == NULL) {
        bool opened = errno == EFBIG || errno == EIO || errno == ENOMEM;
        snprintf(err, err_size, "%s: %s", path, errno == EFBIG ? "larger than 2 GiB (not read)" : strerror(errno));
        return opened ? -EINVAL : -ENOENT;
    }
    int ret = read_model(path, (const uint8_t *)data, len, c, h, w, nclasses, d, weights, err, err_size);
    free(data);
    return ret;
}

int dahlsim_onnx_desc(const char *path, int c, int h, int w, int nclasses, struct dahl_network_desc *d, char *err,
                      size_t err_size)
{
    return read_path(path, c, h, w, nclasses, d, NULL, err, err_size);
}

int dahlsim_onnx_weights(const char *path, int c, int h, int w, int nclasses, struct dahl_network_desc *d,
                         struct dahlsim_onnx_weights *weights, char *err, size_t err_size)
{
    return read_path(path, c, h, w, nclasses, d, weights, err, err_size);
}

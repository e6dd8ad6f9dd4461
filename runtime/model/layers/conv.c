/* conv: a 2-D convolution with bias, or without (no_bias) (filters, square kernel, stride, zero padding), per
 * sample. Forward: dahl_conv2d_forward; backward: dahl_conv2d_backward_weights (the weight and bias gradients,
 * accumulated) and, but for the first layer, dahl_conv2d_backward_input. All three use the layer's im2col
 * workspace. Without bias, the tasks neither read a bias nor write its gradient, and the layer has none. */
#include "dahl_layer.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

#include <stdio.h>

static int plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    const struct dahl_layer_desc *d = &l->desc;
    l->conv = (struct dahl_conv2d_shape){.c = l->in_c, .h = l->in_h, .w = l->in_w, .f = d->filters,
                                         .kh = d->kernel, .kw = d->kernel, .stride = d->stride, .pad = d->pad};
    if (d->no_bias > 1) {
        snprintf(err, err_size, "layer %d (conv): no_bias: expected 0 or 1, got %d", index, d->no_bias);
        return -1;
    }
    if (!dahl_conv2d_shape_valid(&l->conv)) {
        snprintf(err, err_size, "layer %d (conv %d filters %dx%d stride %d pad %d) does not fit its %dx%dx%d input",
                 index, d->filters, d->kernel, d->kernel, d->stride, d->pad, l->in_c, l->in_h, l->in_w);
        return -1;
    }
    l->out_c = d->filters;
    l->out_h = dahl_conv2d_out_h(&l->conv);
    l->out_w = dahl_conv2d_out_w(&l->conv);
    l->nw = (size_t)l->conv.f * l->conv.c * l->conv.kh * l->conv.kw;
    l->nb = d->no_bias ? 0 : (size_t)l->conv.f;
    return 0;
}

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    const struct dahl_conv2d_shape *s = &l->conv;
    uint32_t fp = dahl_conv2d_footprint_of(s);
    const size_t fl = sizeof(float);
    if (pass == DAHL_PASS_FORWARD) {
        struct dahl_layer_task t = dahl_layer_task_grouped("dahl_conv2d_forward", fp, n, dahl_conv2d_forward_flops(s),
                                                           dahl_conv2d_forward_bytes(s), fl * (l->nw + l->nb));
        out[0] = l->nb == 0 ? DAHL_LAYER_USES(t, {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_W, DAHL_ACCESS_R},
                                              {DAHL_T_Y, DAHL_ACCESS_W}, {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH})
                            : DAHL_LAYER_USES(t, {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_W, DAHL_ACCESS_R},
                                              {DAHL_T_B, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W},
                                              {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH});
        return 1;
    }
    struct dahl_layer_task t = dahl_layer_task_grouped("dahl_conv2d_backward_weights", fp, n,
                                                       dahl_conv2d_backward_weights_flops(s),
                                                       dahl_conv2d_backward_weights_bytes(s), 2 * fl * (l->nw + l->nb));
    out[0] = l->nb == 0 ? DAHL_LAYER_USES(t, {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_DY, DAHL_ACCESS_R},
                                          {DAHL_T_DW, DAHL_ACCESS_GRAD}, {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH})
                        : DAHL_LAYER_USES(t, {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_DY, DAHL_ACCESS_R},
                                          {DAHL_T_DW, DAHL_ACCESS_GRAD}, {DAHL_T_DB, DAHL_ACCESS_GRAD},
                                          {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH});
    if (!has_dx)
        return 1;
    out[1] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_conv2d_backward_input", fp, n,
                                                     dahl_conv2d_backward_input_flops(s),
                                                     dahl_conv2d_backward_input_bytes(s), fl * l->nw),
                             {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_W, DAHL_ACCESS_R}, {DAHL_T_DX, DAHL_ACCESS_W},
                             {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH});
    return 2;
}

static const struct dahl_layer_key keys[] = {
    {"filters", offsetof(struct dahl_layer_desc, filters), 1, DAHL_KEY_REQUIRED},
    {"kernel", offsetof(struct dahl_layer_desc, kernel), 1, DAHL_KEY_REQUIRED},
    {"stride", offsetof(struct dahl_layer_desc, stride), 1, 1},
    {"pad", offsetof(struct dahl_layer_desc, pad), 0, 0},
    {"no_bias", offsetof(struct dahl_layer_desc, no_bias), 0, 0},
    {NULL, 0, 0, 0},
};

/* direct AVX2 convolution forward; im2col/col2im + SGEMM backward, whose copies weigh at these sizes */
static const struct dahl_codelet_defaults codelets[] = {
    {"dahl_conv2d_forward", 0.53, 0.53, 0.5, 0.7},
    {"dahl_conv2d_backward_input", 0.18, 0.18, 0.35, 0.7},
    {"dahl_conv2d_backward_weights", 0.23, 0.23, 0.35, 0.7},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_conv = {
    .kind = DAHL_LAYER_CONV,
    .name = "conv",
    .trace_name = "conv",
    .has_params = true,
    .keys = keys,
    .codelets = codelets,
    .plan = plan,
    .tasks = tasks,
};

/* dense: a fully connected layer with bias (units outputs) over the flattened input, per sample. Forward:
 * dahl_dense_forward; backward: dahl_dense_backward_weights (the gradients, accumulated) and, but for the
 * first layer, dahl_dense_backward_input. The weight gradients of a group summed by the manual reduction's
 * tree use the layer's workspace. */
#include "dahl_layer.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

#include <stdio.h>

static int plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    if (l->desc.units < 1) {
        snprintf(err, err_size, "layer %d (dense): units must be positive, got %d", index, l->desc.units);
        return -1;
    }
    l->nw = (size_t)l->desc.units * l->in_c * l->in_h * l->in_w;
    l->nb = (size_t)l->desc.units;
    l->out_c = l->desc.units;
    l->out_h = 1;
    l->out_w = 1;
    return 0;
}

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    int n_in = l->in_c * l->in_h * l->in_w, units = l->desc.units;
    uint32_t fp = dahl_dense_footprint_of(n_in, units);
    const size_t fl = sizeof(float);
    if (pass == DAHL_PASS_FORWARD) {
        out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_dense_forward", fp, n, dahl_dense_forward_flops(n_in, units),
                                                         dahl_dense_forward_bytes(n_in, units), fl * (l->nw + l->nb)),
                                 {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_W, DAHL_ACCESS_R}, {DAHL_T_B, DAHL_ACCESS_R},
                                 {DAHL_T_Y, DAHL_ACCESS_W});
        return 1;
    }
    out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_dense_backward_weights", fp, n,
                                                     dahl_dense_backward_weights_flops(n_in, units),
                                                     dahl_dense_backward_weights_bytes(n_in, units),
                                                     2 * fl * (l->nw + l->nb)),
                             {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_DW, DAHL_ACCESS_GRAD},
                             {DAHL_T_DB, DAHL_ACCESS_GRAD}, {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH});
    if (!has_dx)
        return 1;
    out[1] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_dense_backward_input", fp, n,
                                                     dahl_dense_backward_input_flops(n_in, units),
                                                     dahl_dense_backward_input_bytes(n_in, units), fl * l->nw),
                             {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_W, DAHL_ACCESS_R}, {DAHL_T_DX, DAHL_ACCESS_W});
    return 2;
}

static const struct dahl_layer_key keys[] = {
    {"units", offsetof(struct dahl_layer_desc, units), 1, DAHL_KEY_REQUIRED},
    {NULL, 0, 0, 0},
};

/* one sample: SGEMV / SGER, bound by reading the weights, which stay in cache at LeNet's sizes (> 1) */
static const struct dahl_codelet_defaults codelets[] = {
    {"dahl_dense_forward", 1.0, 1.1, 0.3, 0.6},
    {"dahl_dense_backward_input", 1.0, 1.1, 0.3, 0.6},
    {"dahl_dense_backward_weights", 1.0, 1.5, 0.3, 0.6},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_dense = {
    .kind = DAHL_LAYER_DENSE,
    .name = "dense",
    .trace_name = "dense",
    .has_params = true,
    .keys = keys,
    .codelets = codelets,
    .plan = plan,
    .tasks = tasks,
};

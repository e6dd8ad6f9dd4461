/* relu: max(x, 0) element-wise. Forward: dahl_relu_forward; backward (but for the first layer):
 * dahl_relu_backward, from the output and its gradient. Its tasks are keyed by their element count, the
 * group's whole. */
#include "dahl_layer.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

static int plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    (void)index;
    (void)err;
    (void)err_size;
    l->out_c = l->in_c;
    l->out_h = l->in_h;
    l->out_w = l->in_w;
    return 0;
}

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    size_t all = (size_t)n * (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
    bool fwd = pass == DAHL_PASS_FORWARD;
    if (!fwd && !has_dx)
        return 0;
    double flops = fwd ? dahl_relu_forward_flops(all) : dahl_relu_backward_flops(all);
    struct dahl_layer_task t = {.symbol = fwd ? "dahl_relu_forward" : "dahl_relu_backward",
                                .footprint = dahl_relu_footprint_of(all),
                                .size = dahl_size_of_flops(flops),
                                .flops = flops,
                                .bytes = (double)(fwd ? dahl_relu_forward_bytes(all) : dahl_relu_backward_bytes(all))};
    out[0] = fwd ? DAHL_LAYER_USES(t, {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W})
                 : DAHL_LAYER_USES(t, {DAHL_T_Y, DAHL_ACCESS_R}, {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_DX, DAHL_ACCESS_W});
    return 1;
}

static const struct dahl_layer_key keys[] = {{NULL, 0, 0, 0}};

/* elementwise on freshly written activations */
static const struct dahl_codelet_defaults codelets[] = {
    {"dahl_relu_forward", 0.13, 0.13, 0.5, 0.7},
    {"dahl_relu_backward", 0.15, 0.15, 0.5, 0.7},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_relu = {
    .kind = DAHL_LAYER_RELU,
    .name = "relu",
    .trace_name = "relu",
    .keys = keys,
    .codelets = codelets,
    .plan = plan,
    .tasks = tasks,
};

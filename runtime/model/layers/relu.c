/* relu: max(x, 0) element-wise. Forward: dahl_relu_forward; backward (but for the first layer):
 * dahl_relu_backward, from the output and its gradient. Its tasks are keyed by their element count, the
 * group's whole. */
#include "dahl_layer.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    size_t all = dahl_layer_input_values(l, n);
    bool fwd = pass == DAHL_PASS_FORWARD;
    if (!fwd && !has_dx)
        return 0;
    struct dahl_layer_task t =
        fwd ? dahl_layer_task_elementwise("dahl_relu_forward", all, dahl_relu_forward_flops(all),
                                          dahl_relu_forward_bytes(all))
            : dahl_layer_task_elementwise("dahl_relu_backward", all, dahl_relu_backward_flops(all),
                                          dahl_relu_backward_bytes(all));
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
    .plan = dahl_layer_plan_same,
    .tasks = tasks,
};

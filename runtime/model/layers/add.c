/* add: the element-wise sum of two inputs of one shape (a residual network's skip connection). Forward:
 * dahl_add_forward; backward: dahl_add_backward, which gives the output's gradient to both inputs. Its tasks
 * are keyed by their element count, the group's whole. Its inputs come from the model ("inputs": [j, k]). */
#include "dahl_layer.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    size_t all = dahl_layer_input_values(l, n);
    (void)has_dx; /* both inputs are layers (dahl_network_desc_shapes checks it) */
    if (pass != DAHL_PASS_BACKWARD) {
        out[0] = DAHL_LAYER_USES(dahl_layer_task_elementwise("dahl_add_forward", all, dahl_add_forward_flops(all),
                                                             dahl_add_forward_bytes(all)),
                                 {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_X2, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W});
        return 1;
    }
    out[0] = DAHL_LAYER_USES(dahl_layer_task_elementwise("dahl_add_backward", all, 0, dahl_add_backward_bytes(all)),
                             {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_DX, DAHL_ACCESS_W}, {DAHL_T_DX2, DAHL_ACCESS_W});
    return 1;
}

static const struct dahl_layer_key keys[] = {{NULL, 0, 0, 0}};

/* elementwise, like relu's; the backward pass is two copies */
static const struct dahl_codelet_defaults codelets[] = {
    {"dahl_add_forward", 0.13, 0.13, 0.5, 0.7},
    {"dahl_add_backward", 0.15, 0.15, 0.5, 0.7},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_add = {
    .kind = DAHL_LAYER_ADD,
    .name = "add",
    .trace_name = "add",
    .ninputs = 2,
    .keys = keys,
    .codelets = codelets,
    .plan = dahl_layer_plan_same,
    .tasks = tasks,
};

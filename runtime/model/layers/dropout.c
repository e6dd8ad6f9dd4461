/* dropout: inverted dropout of `percent` % of the elements in training (the mask a hash of seed, layer, step
 * and element: kernels/cpu/dropout.c), the identity in evaluations. Forward dahl_dropout_forward, backward
 * (but for the first layer) dahl_dropout_backward with the same mask; an evaluation copies (dahl_dropout_eval).
 * Its tasks are keyed by their element count, the group's whole. */
#include "dahl_layer.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

#include <stdio.h>

static int plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    if (l->desc.percent > 95) {
        snprintf(err, err_size, "layer %d (dropout %d %%): expected a percent from 0 to 95", index, l->desc.percent);
        return -1;
    }
    return dahl_layer_plan_same(l, index, err, err_size);
}

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    size_t all = dahl_layer_input_values(l, n);
    struct dahl_layer_task t = dahl_layer_task_elementwise(NULL, all, dahl_dropout_flops(all), dahl_dropout_bytes(all));
    switch (pass) {
    case DAHL_PASS_FORWARD:
    case DAHL_PASS_EVAL:
        t.symbol = pass == DAHL_PASS_FORWARD ? "dahl_dropout_forward" : "dahl_dropout_eval";
        out[0] = DAHL_LAYER_USES(t, {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W});
        return 1;
    case DAHL_PASS_BACKWARD:
        if (!has_dx)
            return 0;
        t.symbol = "dahl_dropout_backward";
        out[0] = DAHL_LAYER_USES(t, {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_DX, DAHL_ACCESS_W});
        return 1;
    case DAHL_PASS_STEP:
        break;
    }
    return 0;
}

static const struct dahl_layer_key keys[] = {
    {"percent", offsetof(struct dahl_layer_desc, percent), 0, 50},
    {NULL, 0, 0, 0},
};

/* elementwise, a hash per element */
static const struct dahl_codelet_defaults codelets[] = {
    {"dahl_dropout_forward", 0.1, 0.1, 0.5, 0.7},
    {"dahl_dropout_backward", 0.1, 0.1, 0.5, 0.7},
    {"dahl_dropout_eval", 0.13, 0.13, 0.5, 0.7},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_dropout = {
    .kind = DAHL_LAYER_DROPOUT,
    .name = "dropout",
    .trace_name = "drop",
    .stateful = true,
    .keys = keys,
    .codelets = codelets,
    .plan = plan,
    .tasks = tasks,
};

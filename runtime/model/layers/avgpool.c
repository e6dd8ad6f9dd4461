/* avgpool: the mean over square windows (kernel, stride), per channel and sample. Forward:
 * dahl_avgpool_forward; backward (but for the first layer): dahl_avgpool_backward, from the output's gradient
 * alone. */
#include "dahl_layer_pool.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

/* The tasks of an average pool of geometry l->pool (avgpool and globalavgpool share them). */
int dahl_layer_avgpool_tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                             struct dahl_layer_task *out)
{
    const struct dahl_maxpool_shape *s = &l->pool;
    uint32_t fp = dahl_maxpool_footprint_of(s);
    if (pass == DAHL_PASS_FORWARD) {
        out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_avgpool_forward", fp, n, dahl_avgpool_forward_flops(s),
                                                         dahl_avgpool_forward_bytes(s), 0),
                                 {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W});
        return 1;
    }
    if (!has_dx)
        return 0;
    out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_avgpool_backward", fp, n, dahl_avgpool_backward_flops(s),
                                                     dahl_avgpool_backward_bytes(s), 0),
                             {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_DX, DAHL_ACCESS_W});
    return 1;
}

/* additions over each window, like max-pool's compares: far below streaming bandwidth at these sizes */
const struct dahl_codelet_defaults dahl_avgpool_codelet_defaults[] = {
    {"dahl_avgpool_forward", 0.1, 0.1, 0.3, 0.6},
    {"dahl_avgpool_backward", 0.15, 0.15, 0.3, 0.6},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_avgpool = {
    .kind = DAHL_LAYER_AVGPOOL,
    .name = "avgpool",
    .trace_name = "avgpool",
    .keys = dahl_layer_window_keys,
    .codelets = dahl_avgpool_codelet_defaults,
    .plan = dahl_layer_window_plan,
    .tasks = dahl_layer_avgpool_tasks,
};

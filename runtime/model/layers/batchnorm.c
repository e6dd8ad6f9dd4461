/* batchnorm: batch normalisation in training mode, per channel (Ioffe and Szegedy, 2015), with a scale gamma
 * (its weights, starting at 1) and a shift beta (its bias). A training step's statistics are the sums of all
 * its samples, reduced like weight gradients (REDUX or the manual tree), so its passes run in two phases:
 * forward, dahl_bn_stats over every group then dahl_bn_forward; backward, dahl_bn_backward_params (the
 * gradients of gamma and beta, summed over the step) then, but where its input is the network's,
 * dahl_bn_backward_input, which reads those sums. Once per step dahl_bn_running folds the statistics into
 * running ones, which an evaluation normalises with (dahl_bn_forward_eval). */
#include "dahl_layer.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

static int plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    l->nw = (size_t)l->in_c;
    l->nb = (size_t)l->in_c;
    return dahl_layer_plan_same(l, index, err, err_size);
}

static struct dahl_layer_task phase(struct dahl_layer_task t, int p)
{
    t.phase = p;
    return t;
}

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    int c = l->in_c, hw = l->in_h * l->in_w;
    uint32_t fp = dahl_bn_footprint_of(c, hw);
    const size_t params = sizeof(float) * (2 * (size_t)c + 1); /* counted once per task: stats, or gamma + beta */
    switch (pass) {
    case DAHL_PASS_FORWARD:
        out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_bn_stats", fp, n, dahl_bn_stats_flops(c, hw),
                                                         dahl_bn_stats_bytes(c, hw), params),
                                 {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_STATS, DAHL_ACCESS_GRAD},
                                 {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH});
        out[1] = phase(DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_bn_forward", fp, n, dahl_bn_forward_flops(c, hw),
                                                               dahl_bn_forward_bytes(c, hw), 2 * params),
                                       {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_STATS, DAHL_ACCESS_R},
                                       {DAHL_T_W, DAHL_ACCESS_R}, {DAHL_T_B, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W},
                                       {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH}),
                       1);
        return 2;
    case DAHL_PASS_EVAL:
        out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_bn_forward_eval", fp, n, dahl_bn_forward_flops(c, hw),
                                                         dahl_bn_forward_bytes(c, hw), 2 * params),
                                 {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_RUNNING, DAHL_ACCESS_R}, {DAHL_T_W, DAHL_ACCESS_R},
                                 {DAHL_T_B, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W},
                                 {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH});
        return 1;
    case DAHL_PASS_BACKWARD:
        out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_bn_backward_params", fp, n,
                                                         dahl_bn_backward_params_flops(c, hw),
                                                         dahl_bn_backward_params_bytes(c, hw), 2 * params),
                                 {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_STATS, DAHL_ACCESS_R},
                                 {DAHL_T_DW, DAHL_ACCESS_GRAD}, {DAHL_T_DB, DAHL_ACCESS_GRAD},
                                 {DAHL_T_WORKSPACE, DAHL_ACCESS_SCRATCH});
        if (!has_dx)
            return 1;
        out[1] = phase(DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_bn_backward_input", fp, n,
                                                               dahl_bn_backward_input_flops(c, hw),
                                                               dahl_bn_backward_input_bytes(c, hw), 3 * params),
                                       {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_DY, DAHL_ACCESS_R},
                                       {DAHL_T_STATS, DAHL_ACCESS_R}, {DAHL_T_W, DAHL_ACCESS_R},
                                       {DAHL_T_DW, DAHL_ACCESS_R}, {DAHL_T_DB, DAHL_ACCESS_R},
                                       {DAHL_T_DX, DAHL_ACCESS_W}),
                       1);
        return 2;
    case DAHL_PASS_STEP: {
        double flops = dahl_bn_running_flops(c);
        struct dahl_layer_task t = {.symbol = "dahl_bn_running", .footprint = fp, .size = dahl_size_of_flops(flops),
                                    .flops = flops, .bytes = (double)dahl_bn_running_bytes(c)};
        out[0] = DAHL_LAYER_USES(t, {DAHL_T_STATS, DAHL_ACCESS_R}, {DAHL_T_RUNNING, DAHL_ACCESS_RW});
        return 1;
    }
    }
    return 0;
}

static const struct dahl_layer_key keys[] = {{NULL, 0, 0, 0}};

/* streaming per channel, like relu's; the sums read their input once */
static const struct dahl_codelet_defaults codelets[] = {
    {"dahl_bn_stats", 0.13, 0.13, 0.4, 0.6},
    {"dahl_bn_forward", 0.13, 0.13, 0.5, 0.7},
    {"dahl_bn_forward_eval", 0.13, 0.13, 0.5, 0.7},
    {"dahl_bn_backward_params", 0.13, 0.13, 0.4, 0.6},
    {"dahl_bn_backward_input", 0.13, 0.13, 0.5, 0.7},
    {"dahl_bn_running", 0.005, 0.005, 0.01, 0.01},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_batchnorm = {
    .kind = DAHL_LAYER_BATCHNORM,
    .name = "batchnorm",
    .trace_name = "bn",
    .has_params = true,
    .weights_one = true,
    .stateful = true,
    .keys = keys,
    .codelets = codelets,
    .plan = plan,
    .tasks = tasks,
};

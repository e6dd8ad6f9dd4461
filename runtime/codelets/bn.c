/* Batch-normalisation codelets (kernels/cpu/bn.c; runtime/model/layers/batchnorm.c says what runs when): the
 * statistics and the parameter gradients of a task's n samples are accumulated into the step's sums (REDUX,
 * or RW with the manual reduction, whose tasks over several samples sum them by the gradient tree,
 * dahl_group_grads, in the layer's workspace); the other codelets read those sums. Perf models keyed by
 * (C, HW) and n. Every task but dahl_bn_running takes the layer's workspace as SCRATCH. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct bn_args {
    int c, hw, n;
    int tree; /* sum the samples' terms by the gradient tree (manual reduction, n > 1) */
};

static struct bn_args bn_task_args(struct starpu_task *task)
{
    struct bn_args a;
    starpu_codelet_unpack_args(task->cl_arg, &a);
    return a;
}

static uint32_t bn_footprint(struct starpu_task *task)
{
    struct bn_args a = bn_task_args(task);
    return dahl_grouped_footprint_of(dahl_bn_footprint_of(a.c, a.hw), a.n);
}

#define BN_SIZE(name, flops)                                                                                     \
    static size_t name(struct starpu_task *task, unsigned nimpl)                                                 \
    {                                                                                                            \
        (void)nimpl;                                                                                             \
        struct bn_args a = bn_task_args(task);                                                                   \
        return dahl_size_of_flops(a.n * flops(a.c, a.hw));                                                       \
    }
BN_SIZE(bn_stats_size, dahl_bn_stats_flops)
BN_SIZE(bn_forward_size, dahl_bn_forward_flops)
BN_SIZE(bn_backward_params_size, dahl_bn_backward_params_flops)
BN_SIZE(bn_backward_input_size, dahl_bn_backward_input_flops)

static size_t bn_running_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops(dahl_bn_running_flops(bn_task_args(task).c));
}

#define PTR(i) ((float *)STARPU_VECTOR_GET_PTR(buffers[i]))

/* One task's per-sample sums: stats (dw: 2C + 1 values, db: none) or the parameter gradients (dw: dgamma, db:
 * dbeta), by the gradient tree over its samples when a.tree. */
struct bn_sums_ctx {
    const struct bn_args *a;
    const float *x, *dy, *stats;
};

static struct dahl_group_grads bn_sums(const struct bn_args *a, bool params, float *dw, float *db, float *scratch,
                                       const struct dahl_group_ops *ops, struct bn_sums_ctx *c,
                                       void (*one)(int, float *, float *, void *))
{
    size_t ch = (size_t)a->c;
    return (struct dahl_group_grads){.n = a->n, .tree = a->tree != 0, .nw = params ? ch : 2 * ch + 1,
                                     .nb = params ? ch : 0, .dw = dw, .db = params ? db : dw + 2 * ch + 1,
                                     .scratch = scratch, .ops = ops, .one = one, .ctx = c};
}

static size_t bn_per(const struct bn_args *a)
{
    return (size_t)a->c * (size_t)a->hw;
}

static void stats_one_cpu(int i, float *dw, float *db, void *arg)
{
    (void)db;
    const struct bn_sums_ctx *c = arg;
    dahl_bn_stats(c->a->c, c->a->hw, c->x + (size_t)i * bn_per(c->a), dw);
}

static void params_one_cpu(int i, float *dw, float *db, void *arg)
{
    const struct bn_sums_ctx *c = arg;
    size_t at = (size_t)i * bn_per(c->a);
    dahl_bn_backward_params(c->a->c, c->a->hw, c->x + at, c->dy + at, c->stats, dw, db);
}

/* buffers: x (R), stats (REDUX or RW), workspace (SCRATCH) */
static void bn_stats_cpu(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct bn_sums_ctx c = {.a = &a, .x = PTR(0)};
    struct dahl_group_grads g = bn_sums(&a, false, PTR(1), NULL, PTR(2), &dahl_group_cpu_ops, &c, stats_one_cpu);
    dahl_group_grads_run(&g);
}

/* buffers: x (R), stats (R), gamma (R), beta (R), y (W), workspace (SCRATCH) */
static void bn_forward_cpu(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_bn_forward(a.c, a.hw, a.n, PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), PTR(5));
}

/* buffers: x (R), running (R), gamma (R), beta (R), y (W), workspace (SCRATCH) */
static void bn_forward_eval_cpu(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_bn_forward_eval(a.c, a.hw, a.n, PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), PTR(5));
}

/* buffers: x (R), dy (R), stats (R), dgamma (REDUX or RW), dbeta (REDUX or RW), workspace (SCRATCH) */
static void bn_backward_params_cpu(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct bn_sums_ctx c = {.a = &a, .x = PTR(0), .dy = PTR(1), .stats = PTR(2)};
    struct dahl_group_grads g = bn_sums(&a, true, PTR(3), PTR(4), PTR(5), &dahl_group_cpu_ops, &c, params_one_cpu);
    dahl_group_grads_run(&g);
}

/* buffers: x (R), dy (R), stats (R), gamma (R), dgamma (R), dbeta (R), dx (W) */
static void bn_backward_input_cpu(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_bn_backward_input(a.c, a.hw, a.n, PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), PTR(5), PTR(6));
}

/* buffers: stats (R), running (RW) */
static void bn_running_cpu(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_bn_running(a.c, PTR(0), PTR(1));
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers, kernels/cuda/bn.cu on the worker's stream. */
DAHL_CUDA_WRAPPER stats_one_cuda(int i, float *dw, float *db, void *arg)
{
    (void)db;
    const struct bn_sums_ctx *c = arg;
    dahl_cuda_must(dahl_cuda_bn_stats(c->a->c, c->a->hw, c->x + (size_t)i * bn_per(c->a), dw, dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER params_one_cuda(int i, float *dw, float *db, void *arg)
{
    const struct bn_sums_ctx *c = arg;
    size_t at = (size_t)i * bn_per(c->a);
    dahl_cuda_must(dahl_cuda_bn_backward_params(c->a->c, c->a->hw, c->x + at, c->dy + at, c->stats, dw, db,
                                                dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER bn_stats_cuda(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct bn_sums_ctx c = {.a = &a, .x = PTR(0)};
    struct dahl_group_grads g = bn_sums(&a, false, PTR(1), NULL, PTR(2), &dahl_group_cuda_ops, &c, stats_one_cuda);
    dahl_group_grads_run(&g);
}

DAHL_CUDA_WRAPPER bn_forward_cuda(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_bn_forward(a.c, a.hw, a.n, PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), 0,
                                        dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER bn_forward_eval_cuda(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_bn_forward(a.c, a.hw, a.n, PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), 1,
                                        dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER bn_backward_params_cuda(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct bn_sums_ctx c = {.a = &a, .x = PTR(0), .dy = PTR(1), .stats = PTR(2)};
    struct dahl_group_grads g = bn_sums(&a, true, PTR(3), PTR(4), PTR(5), &dahl_group_cuda_ops, &c, params_one_cuda);
    dahl_group_grads_run(&g);
}

DAHL_CUDA_WRAPPER bn_backward_input_cuda(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_bn_backward_input(a.c, a.hw, a.n, PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), PTR(5), PTR(6),
                                               dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER bn_running_cuda(void *buffers[], void *cl_arg)
{
    struct bn_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_bn_running(a.c, PTR(0), PTR(1), dahl_cuda_local_stream()));
}

#define BN_MODEL(var, sym, size)                                                                                 \
    static struct starpu_perfmodel var = {                                                                       \
        .type = STARPU_HISTORY_BASED, .symbol = sym, .footprint = bn_footprint, .size_base = size}
BN_MODEL(dahl_bn_stats_model, "dahl_bn_stats", bn_stats_size);
BN_MODEL(dahl_bn_forward_model, "dahl_bn_forward", bn_forward_size);
BN_MODEL(dahl_bn_forward_eval_model, "dahl_bn_forward_eval", bn_forward_size);
BN_MODEL(dahl_bn_backward_params_model, "dahl_bn_backward_params", bn_backward_params_size);
BN_MODEL(dahl_bn_backward_input_model, "dahl_bn_backward_input", bn_backward_input_size);
BN_MODEL(dahl_bn_running_model, "dahl_bn_running", bn_running_size);

#define BN_CODELET(var, cpu, cuda, pm, nb, ...)                                                                  \
    static struct starpu_codelet var = {.cpu_funcs = {cpu},                                                      \
                                        .cpu_funcs_name = {#cpu},                                                \
                                        DAHL_CUDA_FUNCS(cuda),                                                   \
                                        .nbuffers = nb,                                                          \
                                        .modes = {__VA_ARGS__},                                                  \
                                        .model = &pm##_model,                                                    \
                                        .energy_model = &dahl_energy_model,                                      \
                                        .callback_func = dahl_profile_task_done,                                 \
                                        .name = #pm}
BN_CODELET(bn_stats_redux_cl, bn_stats_cpu, bn_stats_cuda, dahl_bn_stats, 3, STARPU_R, STARPU_REDUX,
           STARPU_SCRATCH);
BN_CODELET(bn_stats_rw_cl, bn_stats_cpu, bn_stats_cuda, dahl_bn_stats, 3, STARPU_R, STARPU_RW, STARPU_SCRATCH);
BN_CODELET(bn_forward_cl, bn_forward_cpu, bn_forward_cuda, dahl_bn_forward, 6, STARPU_R, STARPU_R, STARPU_R,
           STARPU_R, STARPU_W, STARPU_SCRATCH);
BN_CODELET(bn_forward_eval_cl, bn_forward_eval_cpu, bn_forward_eval_cuda, dahl_bn_forward_eval, 6, STARPU_R,
           STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH);
BN_CODELET(bn_backward_params_redux_cl, bn_backward_params_cpu, bn_backward_params_cuda,
           dahl_bn_backward_params, 6, STARPU_R, STARPU_R, STARPU_R, STARPU_REDUX, STARPU_REDUX, STARPU_SCRATCH);
BN_CODELET(bn_backward_params_rw_cl, bn_backward_params_cpu, bn_backward_params_cuda, dahl_bn_backward_params,
           6, STARPU_R, STARPU_R, STARPU_R, STARPU_RW, STARPU_RW, STARPU_SCRATCH);
BN_CODELET(bn_backward_input_cl, bn_backward_input_cpu, bn_backward_input_cuda, dahl_bn_backward_input, 7,
           STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W);
BN_CODELET(bn_running_cl, bn_running_cpu, bn_running_cuda, dahl_bn_running, 2, STARPU_R, STARPU_RW);

/* ---- the layer table's view (dahl_layer.h): batch norm's tasks from its tensors ---------------------------- */

static struct bn_args bn_layer_args(const struct dahl_layer_shape *l, int n, enum starpu_data_access_mode gm)
{
    return (struct bn_args){.c = l->in_c, .hw = l->in_h * l->in_w, .n = n, .tree = gm == STARPU_RW && n > 1};
}

/* The workspace a task over n samples takes: the gradient tree's scratch for the larger of the two sums, and
 * the forward pass's 2C moments. */
static size_t bn_layer_workspace(const struct dahl_layer_shape *l, int n, bool tree)
{
    size_t c = (size_t)l->in_c;
    size_t stats = dahl_group_scratch_bytes(n, tree && n > 1, 2 * c + 1, 0);
    size_t params = dahl_group_scratch_bytes(n, tree && n > 1, c, c);
    size_t moments = 2 * c * sizeof(float);
    size_t most = stats > params ? stats : params;
    return most > moments ? most : moments;
}

/* Checks the handles a task uses (sample tensors: n C HW floats; per channel: C; stats: 2C + 1). */
static bool bn_handles_ok(const struct dahl_layer_shape *l, int n, dahl_layer_handles h, const int *tensors, int k)
{
    size_t c = (size_t)l->in_c, all = (size_t)n * c * (size_t)l->in_h * (size_t)l->in_w;
    for (int i = 0; i < k; i++) {
        int t = tensors[i];
        size_t want = t == DAHL_T_STATS     ? 2 * c + 1
                      : t == DAHL_T_RUNNING ? 2 * c
                      : t == DAHL_T_W || t == DAHL_T_B || t == DAHL_T_DW || t == DAHL_T_DB ? c
                                                                                            : all;
        /* the workspace: at least the moments (the network sizes it for the gradient tree too) */
        if (t == DAHL_T_WORKSPACE ? !dahl_vector_holds(h[t], 2 * c * sizeof(float)) : !dahl_vector_is(h[t], want))
            return false;
    }
    return true;
}

#define BN_CHECK(...)                                                                                            \
    do {                                                                                                         \
        const int tensors_[] = {__VA_ARGS__};                                                                    \
        if (!bn_handles_ok(l, n, h, tensors_, (int)(sizeof(tensors_) / sizeof(tensors_[0]))))                     \
            return -EINVAL;                                                                                      \
        dahl_codelets_note_submit();                                                                             \
    } while (0)

static int bn_stats_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                          enum starpu_data_access_mode gm)
{
    struct bn_args a = bn_layer_args(l, n, gm);
    if (!dahl_grad_mode_valid(gm))
        return -EINVAL;
    BN_CHECK(DAHL_T_X, DAHL_T_STATS, DAHL_T_WORKSPACE);
    return starpu_task_insert(gm == STARPU_REDUX ? &bn_stats_redux_cl : &bn_stats_rw_cl, STARPU_VALUE, &a, sizeof(a),
                              STARPU_R, h[DAHL_T_X], gm, h[DAHL_T_STATS], STARPU_SCRATCH, h[DAHL_T_WORKSPACE],
                              STARPU_FLOPS, n * dahl_bn_stats_flops(a.c, a.hw), DAHL_TASK_NAME, "dahl_bn_stats", 0);
}

static int bn_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                            enum starpu_data_access_mode gm)
{
    struct bn_args a = bn_layer_args(l, n, gm);
    BN_CHECK(DAHL_T_X, DAHL_T_STATS, DAHL_T_W, DAHL_T_B, DAHL_T_Y, DAHL_T_WORKSPACE);
    return starpu_task_insert(&bn_forward_cl, STARPU_VALUE, &a, sizeof(a), STARPU_R, h[DAHL_T_X], STARPU_R,
                              h[DAHL_T_STATS], STARPU_R, h[DAHL_T_W], STARPU_R, h[DAHL_T_B], STARPU_W, h[DAHL_T_Y],
                              STARPU_SCRATCH, h[DAHL_T_WORKSPACE], STARPU_FLOPS, n * dahl_bn_forward_flops(a.c, a.hw),
                              DAHL_TASK_NAME, "dahl_bn_forward", 0);
}

static int bn_forward_eval_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                 enum starpu_data_access_mode gm)
{
    struct bn_args a = bn_layer_args(l, n, gm);
    BN_CHECK(DAHL_T_X, DAHL_T_RUNNING, DAHL_T_W, DAHL_T_B, DAHL_T_Y, DAHL_T_WORKSPACE);
    return starpu_task_insert(&bn_forward_eval_cl, STARPU_VALUE, &a, sizeof(a), STARPU_R, h[DAHL_T_X], STARPU_R,
                              h[DAHL_T_RUNNING], STARPU_R, h[DAHL_T_W], STARPU_R, h[DAHL_T_B], STARPU_W, h[DAHL_T_Y],
                              STARPU_SCRATCH, h[DAHL_T_WORKSPACE], STARPU_FLOPS, n * dahl_bn_forward_flops(a.c, a.hw),
                              DAHL_TASK_NAME, "dahl_bn_forward_eval", 0);
}

static int bn_backward_params_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                    enum starpu_data_access_mode gm)
{
    struct bn_args a = bn_layer_args(l, n, gm);
    if (!dahl_grad_mode_valid(gm))
        return -EINVAL;
    BN_CHECK(DAHL_T_X, DAHL_T_DY, DAHL_T_STATS, DAHL_T_DW, DAHL_T_DB, DAHL_T_WORKSPACE);
    return starpu_task_insert(gm == STARPU_REDUX ? &bn_backward_params_redux_cl : &bn_backward_params_rw_cl,
                              STARPU_VALUE, &a, sizeof(a), STARPU_R, h[DAHL_T_X], STARPU_R, h[DAHL_T_DY], STARPU_R,
                              h[DAHL_T_STATS], gm, h[DAHL_T_DW], gm, h[DAHL_T_DB], STARPU_SCRATCH,
                              h[DAHL_T_WORKSPACE], STARPU_FLOPS, n * dahl_bn_backward_params_flops(a.c, a.hw),
                              DAHL_TASK_NAME, "dahl_bn_backward_params", 0);
}

static int bn_backward_input_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                   enum starpu_data_access_mode gm)
{
    struct bn_args a = bn_layer_args(l, n, gm);
    BN_CHECK(DAHL_T_X, DAHL_T_DY, DAHL_T_STATS, DAHL_T_W, DAHL_T_DW, DAHL_T_DB, DAHL_T_DX);
    return starpu_task_insert(&bn_backward_input_cl, STARPU_VALUE, &a, sizeof(a), STARPU_R, h[DAHL_T_X], STARPU_R,
                              h[DAHL_T_DY], STARPU_R, h[DAHL_T_STATS], STARPU_R, h[DAHL_T_W], STARPU_R, h[DAHL_T_DW],
                              STARPU_R, h[DAHL_T_DB], STARPU_W, h[DAHL_T_DX], STARPU_FLOPS,
                              n * dahl_bn_backward_input_flops(a.c, a.hw), DAHL_TASK_NAME, "dahl_bn_backward_input",
                              0);
}

static int bn_running_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                            enum starpu_data_access_mode gm)
{
    struct bn_args a = bn_layer_args(l, 1, gm);
    n = 1; /* per step: keyed by the layer's shape alone */
    BN_CHECK(DAHL_T_STATS, DAHL_T_RUNNING);
    return starpu_task_insert(&bn_running_cl, STARPU_VALUE, &a, sizeof(a), STARPU_R, h[DAHL_T_STATS], STARPU_RW,
                              h[DAHL_T_RUNNING], STARPU_FLOPS, dahl_bn_running_flops(a.c), DAHL_TASK_NAME,
                              "dahl_bn_running", 0);
}

const struct dahl_codelet_set dahl_bn_codelets = {
    .n = 6,
    .entries = {{&dahl_bn_stats_model, bn_stats_layer, bn_layer_workspace},
                {&dahl_bn_forward_model, bn_forward_layer, bn_layer_workspace},
                {&dahl_bn_forward_eval_model, bn_forward_eval_layer, bn_layer_workspace},
                {&dahl_bn_backward_params_model, bn_backward_params_layer, bn_layer_workspace},
                {&dahl_bn_backward_input_model, bn_backward_input_layer, NULL},
                {&dahl_bn_running_model, bn_running_layer, NULL}},
};

/* Dropout codelets (kernels/cpu/dropout.c): training forward and backward over one handle's n floats, the
 * mask keyed by the task context (dahl_codelets_set_context: seed, step, layer, first sample), and an
 * evaluation's identity copy. Perf models keyed by n. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct dropout_args {
    size_t n;
    uint64_t key, first; /* the layer's key at this step, the group's first element in the step's batch */
    int percent;         /* 0: the evaluation's copy */
};

static size_t dropout_task_n(struct starpu_task *task)
{
    struct dropout_args a;
    starpu_codelet_unpack_args(task->cl_arg, &a);
    return a.n;
}

static uint32_t dropout_footprint(struct starpu_task *task)
{
    return dahl_relu_footprint_of(dropout_task_n(task));
}

static size_t dropout_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops(dahl_dropout_flops(dropout_task_n(task)));
}

/* buffers: in (R), out (W): x to y forward (and in evaluations), dy to dx backward */
static void dropout_cpu(void *buffers[], void *cl_arg)
{
    struct dropout_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_dropout_forward(a.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                         (float *)STARPU_VECTOR_GET_PTR(buffers[1]), a.key, a.first, a.percent);
}

DAHL_CUDA_WRAPPER dropout_cuda(void *buffers[], void *cl_arg)
{
    struct dropout_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_dropout(a.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                     (float *)STARPU_VECTOR_GET_PTR(buffers[1]), a.key, a.first, a.percent,
                                     dahl_cuda_local_stream()));
}

#define DROPOUT_MODEL(var, sym)                                                                                  \
    static struct starpu_perfmodel var = {                                                                       \
        .type = STARPU_HISTORY_BASED, .symbol = sym, .footprint = dropout_footprint, .size_base = dropout_size}
DROPOUT_MODEL(dahl_dropout_forward_model, "dahl_dropout_forward");
DROPOUT_MODEL(dahl_dropout_backward_model, "dahl_dropout_backward");
DROPOUT_MODEL(dahl_dropout_eval_model, "dahl_dropout_eval");

#define DROPOUT_CODELET(var, pm)                                                                                 \
    static struct starpu_codelet var = {.cpu_funcs = {dropout_cpu},                                              \
                                        .cpu_funcs_name = {"dropout_cpu"},                                       \
                                        DAHL_CUDA_FUNCS(dropout_cuda),                                           \
                                        .nbuffers = 2,                                                           \
                                        .modes = {STARPU_R, STARPU_W},                                           \
                                        .model = &pm##_model,                                                    \
                                        .energy_model = &dahl_energy_model,                                      \
                                        .callback_func = dahl_profile_task_done,                                 \
                                        .name = #pm}
DROPOUT_CODELET(dropout_forward_cl, dahl_dropout_forward);
DROPOUT_CODELET(dropout_backward_cl, dahl_dropout_backward);
DROPOUT_CODELET(dropout_eval_cl, dahl_dropout_eval);

/* in to out over the group: the mask of the context's layer and step, from the group's first element */
static int insert(struct starpu_codelet *cl, const char *name, const struct dahl_layer_shape *l,
                  starpu_data_handle_t in, starpu_data_handle_t out, bool eval)
{
    if (in == NULL)
        return -EINVAL;
    const struct dahl_task_context *c = dahl_codelets_context();
    size_t per = (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
    struct dropout_args a = {.n = starpu_vector_get_nx(in),
                             .key = dahl_dropout_key(c->seed, c->layer, c->step),
                             .first = (uint64_t)c->first_sample * per,
                             .percent = eval ? 0 : l->desc.percent};
    if (!dahl_vector_is(out, a.n) || in == out)
        return -EINVAL;
    dahl_codelets_note_submit();
    return starpu_task_insert(cl, STARPU_VALUE, &a, sizeof(a), STARPU_R, in, STARPU_W, out, STARPU_FLOPS,
                              dahl_dropout_flops(a.n), DAHL_TASK_NAME, name, 0);
}

/* ---- the layer table's view (dahl_layer.h): dropout's tasks from its tensors ------------------------------- */

static int dropout_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                 enum starpu_data_access_mode gm)
{
    (void)n, (void)gm;
    return insert(&dropout_forward_cl, "dahl_dropout_forward", l, h[DAHL_T_X], h[DAHL_T_Y], false);
}

static int dropout_backward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                  enum starpu_data_access_mode gm)
{
    (void)n, (void)gm;
    return insert(&dropout_backward_cl, "dahl_dropout_backward", l, h[DAHL_T_DY], h[DAHL_T_DX], false);
}

static int dropout_eval_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                              enum starpu_data_access_mode gm)
{
    (void)n, (void)gm;
    return insert(&dropout_eval_cl, "dahl_dropout_eval", l, h[DAHL_T_X], h[DAHL_T_Y], true);
}

const struct dahl_codelet_set dahl_dropout_codelets = {
    .n = 3,
    .entries = {{&dahl_dropout_forward_model, dropout_forward_layer, NULL},
                {&dahl_dropout_backward_model, dropout_backward_layer, NULL},
                {&dahl_dropout_eval_model, dropout_eval_layer, NULL}},
};

/* Pooling codelets, max and average: forward and backward of n samples (kernels/cpu/pool.c: n samples of C
 * channels are one call over n * C channels), perf models keyed by the window geometry and n. The max-pool
 * backward pass reads the forward input x again (it recomputes each window's argmax), so no index buffer
 * travels between the two tasks; the average-pool one needs the output's gradient alone. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct pool_args {
    struct dahl_maxpool_shape shape; /* one sample's */
    int n;                           /* samples */
};

static struct pool_args pool_task_args(struct starpu_task *task)
{
    struct pool_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args;
}

static uint32_t pool_footprint(struct starpu_task *task)
{
    struct pool_args a = pool_task_args(task);
    return dahl_grouped_footprint_of(dahl_maxpool_footprint_of(&a.shape), a.n);
}

static size_t maxpool_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct pool_args a = pool_task_args(task);
    return dahl_size_of_flops(a.n * dahl_maxpool_forward_flops(&a.shape));
}

static size_t maxpool_backward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct pool_args a = pool_task_args(task);
    return dahl_size_of_flops(a.n * dahl_maxpool_backward_flops(&a.shape));
}

/* The kernels' shape for the task's n samples: n * C channels. */
static struct dahl_maxpool_shape all_samples(const struct pool_args *a)
{
    struct dahl_maxpool_shape s = a->shape;
    s.c *= a->n;
    return s;
}

/* buffers: x (R), y (W) */
static void maxpool_forward_cpu(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_maxpool_forward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                         (float *)STARPU_VECTOR_GET_PTR(buffers[1]));
}

/* buffers: x (R), dy (R), dx (W) */
static void maxpool_backward_cpu(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_maxpool_backward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                          (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                          (float *)STARPU_VECTOR_GET_PTR(buffers[2]));
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones, on the worker's stream. */
DAHL_CUDA_WRAPPER maxpool_forward_cuda(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_cuda_must(dahl_cuda_maxpool_forward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                             (float *)STARPU_VECTOR_GET_PTR(buffers[1]), dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER maxpool_backward_cuda(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_cuda_must(dahl_cuda_maxpool_backward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                              (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                              (float *)STARPU_VECTOR_GET_PTR(buffers[2]), dahl_cuda_local_stream()));
}

static struct starpu_perfmodel dahl_maxpool_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_maxpool_forward",
    .footprint = pool_footprint,
    .size_base = maxpool_forward_size,
};

static struct starpu_perfmodel dahl_maxpool_backward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_maxpool_backward",
    .footprint = pool_footprint,
    .size_base = maxpool_backward_size,
};

static struct starpu_codelet maxpool_forward_cl = {
    .cpu_funcs = {maxpool_forward_cpu},
    .cpu_funcs_name = {"maxpool_forward_cpu"},
    DAHL_CUDA_FUNCS(maxpool_forward_cuda),
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &dahl_maxpool_forward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_maxpool_forward",
};

static struct starpu_codelet maxpool_backward_cl = {
    .cpu_funcs = {maxpool_backward_cpu},
    .cpu_funcs_name = {"maxpool_backward_cpu"},
    DAHL_CUDA_FUNCS(maxpool_backward_cuda),
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &dahl_maxpool_backward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_maxpool_backward",
};

static size_t pool_x_count(const struct dahl_maxpool_shape *s)
{
    return (size_t)s->c * (size_t)s->h * (size_t)s->w;
}

static size_t pool_y_count(const struct dahl_maxpool_shape *s)
{
    return (size_t)s->c * (size_t)dahl_maxpool_out_h(s) * (size_t)dahl_maxpool_out_w(s);
}

int dahl_insert_maxpool_forward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                  starpu_data_handle_t y)
{
    if (s == NULL || !dahl_maxpool_shape_valid(s) || n < 1 || !dahl_vector_is(x, (size_t)n * pool_x_count(s)) ||
        !dahl_vector_is(y, (size_t)n * pool_y_count(s)))
        return -EINVAL;
    struct pool_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&maxpool_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_W, y,
                              STARPU_FLOPS, n * dahl_maxpool_forward_flops(s), DAHL_TASK_NAME, "dahl_maxpool_forward",
                              0);
}

int dahl_insert_maxpool_backward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                   starpu_data_handle_t dy, starpu_data_handle_t dx)
{
    if (s == NULL || !dahl_maxpool_shape_valid(s) || n < 1 || !dahl_vector_is(x, (size_t)n * pool_x_count(s)) ||
        !dahl_vector_is(dy, (size_t)n * pool_y_count(s)) || !dahl_vector_is(dx, (size_t)n * pool_x_count(s)))
        return -EINVAL;
    struct pool_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&maxpool_backward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, dy,
                              STARPU_W, dx, STARPU_FLOPS, n * dahl_maxpool_backward_flops(s), DAHL_TASK_NAME,
                              "dahl_maxpool_backward", 0);
}

/* ---- the layer table's view (dahl_layer.h): maxpool's tasks from its tensors ------------------------------- */

static int maxpool_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                 enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_maxpool_forward_n(&l->pool, n, h[DAHL_T_X], h[DAHL_T_Y]);
}

static int maxpool_backward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                  enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_maxpool_backward_n(&l->pool, n, h[DAHL_T_X], h[DAHL_T_DY], h[DAHL_T_DX]);
}

const struct dahl_codelet_set dahl_maxpool_codelets = {
    .n = 2,
    .entries = {{&dahl_maxpool_forward_model, maxpool_forward_layer, NULL},
                {&dahl_maxpool_backward_model, maxpool_backward_layer, NULL}},
};

/* ---- average pool ---------------------------------------------------------------------------------------- */

static size_t avgpool_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct pool_args a = pool_task_args(task);
    return dahl_size_of_flops(a.n * dahl_avgpool_forward_flops(&a.shape));
}

static size_t avgpool_backward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct pool_args a = pool_task_args(task);
    return dahl_size_of_flops(a.n * dahl_avgpool_backward_flops(&a.shape));
}

/* buffers: x (R), y (W) */
static void avgpool_forward_cpu(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_avgpool_forward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                         (float *)STARPU_VECTOR_GET_PTR(buffers[1]));
}

/* buffers: dy (R), dx (W) */
static void avgpool_backward_cpu(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_avgpool_backward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                          (float *)STARPU_VECTOR_GET_PTR(buffers[1]));
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones, on the worker's stream. */
DAHL_CUDA_WRAPPER avgpool_forward_cuda(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_cuda_must(dahl_cuda_avgpool_forward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                             (float *)STARPU_VECTOR_GET_PTR(buffers[1]), dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER avgpool_backward_cuda(void *buffers[], void *cl_arg)
{
    struct pool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_cuda_must(dahl_cuda_avgpool_backward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                              (float *)STARPU_VECTOR_GET_PTR(buffers[1]), dahl_cuda_local_stream()));
}

static struct starpu_perfmodel dahl_avgpool_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_avgpool_forward",
    .footprint = pool_footprint,
    .size_base = avgpool_forward_size,
};

static struct starpu_perfmodel dahl_avgpool_backward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_avgpool_backward",
    .footprint = pool_footprint,
    .size_base = avgpool_backward_size,
};

static struct starpu_codelet avgpool_forward_cl = {
    .cpu_funcs = {avgpool_forward_cpu},
    .cpu_funcs_name = {"avgpool_forward_cpu"},
    DAHL_CUDA_FUNCS(avgpool_forward_cuda),
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &dahl_avgpool_forward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_avgpool_forward",
};

static struct starpu_codelet avgpool_backward_cl = {
    .cpu_funcs = {avgpool_backward_cpu},
    .cpu_funcs_name = {"avgpool_backward_cpu"},
    DAHL_CUDA_FUNCS(avgpool_backward_cuda),
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &dahl_avgpool_backward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_avgpool_backward",
};

int dahl_insert_avgpool_forward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                  starpu_data_handle_t y)
{
    if (s == NULL || !dahl_maxpool_shape_valid(s) || n < 1 || !dahl_vector_is(x, (size_t)n * pool_x_count(s)) ||
        !dahl_vector_is(y, (size_t)n * pool_y_count(s)))
        return -EINVAL;
    struct pool_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&avgpool_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_W, y,
                              STARPU_FLOPS, n * dahl_avgpool_forward_flops(s), DAHL_TASK_NAME, "dahl_avgpool_forward",
                              0);
}

int dahl_insert_avgpool_backward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t dy,
                                   starpu_data_handle_t dx)
{
    if (s == NULL || !dahl_maxpool_shape_valid(s) || n < 1 || !dahl_vector_is(dy, (size_t)n * pool_y_count(s)) ||
        !dahl_vector_is(dx, (size_t)n * pool_x_count(s)))
        return -EINVAL;
    struct pool_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&avgpool_backward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, dy, STARPU_W, dx,
                              STARPU_FLOPS, n * dahl_avgpool_backward_flops(s), DAHL_TASK_NAME,
                              "dahl_avgpool_backward", 0);
}

/* ---- the layer table's view (dahl_layer.h): avgpool's tasks from its tensors ------------------------------- */

static int avgpool_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                 enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_avgpool_forward_n(&l->pool, n, h[DAHL_T_X], h[DAHL_T_Y]);
}

static int avgpool_backward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                  enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_avgpool_backward_n(&l->pool, n, h[DAHL_T_DY], h[DAHL_T_DX]);
}

const struct dahl_codelet_set dahl_avgpool_codelets = {
    .n = 2,
    .entries = {{&dahl_avgpool_forward_model, avgpool_forward_layer, NULL},
                {&dahl_avgpool_backward_model, avgpool_backward_layer, NULL}},
};

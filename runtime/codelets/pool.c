/* Max-pool codelets: forward and backward of n samples (kernels/cpu/pool.c: n samples of C channels are one
 * call over n * C channels), perf models keyed by the shape and n. The backward pass reads the forward input x again (it recomputes each window's argmax), so no
 * index buffer travels between the two tasks. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct maxpool_args {
    struct dahl_maxpool_shape shape; /* one sample's */
    int n;                           /* samples */
};

static struct maxpool_args maxpool_task_args(struct starpu_task *task)
{
    struct maxpool_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args;
}

static uint32_t maxpool_footprint(struct starpu_task *task)
{
    struct maxpool_args a = maxpool_task_args(task);
    return dahl_grouped_footprint_of(dahl_maxpool_footprint_of(&a.shape), a.n);
}

static size_t maxpool_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct maxpool_args a = maxpool_task_args(task);
    return dahl_size_of_flops(a.n * dahl_maxpool_forward_flops(&a.shape));
}

static size_t maxpool_backward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct maxpool_args a = maxpool_task_args(task);
    return dahl_size_of_flops(a.n * dahl_maxpool_backward_flops(&a.shape));
}

/* The kernels' shape for the task's n samples: n * C channels. */
static struct dahl_maxpool_shape all_samples(const struct maxpool_args *a)
{
    struct dahl_maxpool_shape s = a->shape;
    s.c *= a->n;
    return s;
}

/* buffers: x (R), y (W) */
static void maxpool_forward_cpu(void *buffers[], void *cl_arg)
{
    struct maxpool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_maxpool_forward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                         (float *)STARPU_VECTOR_GET_PTR(buffers[1]));
}

/* buffers: x (R), dy (R), dx (W) */
static void maxpool_backward_cpu(void *buffers[], void *cl_arg)
{
    struct maxpool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_maxpool_backward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                          (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                          (float *)STARPU_VECTOR_GET_PTR(buffers[2]));
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones, on the worker's stream. */
DAHL_CUDA_WRAPPER maxpool_forward_cuda(void *buffers[], void *cl_arg)
{
    struct maxpool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_cuda_must(dahl_cuda_maxpool_forward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                             (float *)STARPU_VECTOR_GET_PTR(buffers[1]), dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER maxpool_backward_cuda(void *buffers[], void *cl_arg)
{
    struct maxpool_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    struct dahl_maxpool_shape s = all_samples(&args);
    dahl_cuda_must(dahl_cuda_maxpool_backward(&s, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                              (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                              (float *)STARPU_VECTOR_GET_PTR(buffers[2]), dahl_cuda_local_stream()));
}

struct starpu_perfmodel dahl_maxpool_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_maxpool_forward",
    .footprint = maxpool_footprint,
    .size_base = maxpool_forward_size,
};

struct starpu_perfmodel dahl_maxpool_backward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_maxpool_backward",
    .footprint = maxpool_footprint,
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

static size_t maxpool_x_count(const struct dahl_maxpool_shape *s)
{
    return (size_t)s->c * (size_t)s->h * (size_t)s->w;
}

static size_t maxpool_y_count(const struct dahl_maxpool_shape *s)
{
    return (size_t)s->c * (size_t)dahl_maxpool_out_h(s) * (size_t)dahl_maxpool_out_w(s);
}

int dahl_insert_maxpool_forward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                  starpu_data_handle_t y)
{
    if (s == NULL || !dahl_maxpool_shape_valid(s) || n < 1 || !dahl_vector_is(x, (size_t)n * maxpool_x_count(s)) ||
        !dahl_vector_is(y, (size_t)n * maxpool_y_count(s)))
        return -EINVAL;
    struct maxpool_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&maxpool_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_W, y,
                              STARPU_FLOPS, n * dahl_maxpool_forward_flops(s), DAHL_TASK_NAME, "dahl_maxpool_forward",
                              0);
}

int dahl_insert_maxpool_backward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                   starpu_data_handle_t dy, starpu_data_handle_t dx)
{
    if (s == NULL || !dahl_maxpool_shape_valid(s) || n < 1 || !dahl_vector_is(x, (size_t)n * maxpool_x_count(s)) ||
        !dahl_vector_is(dy, (size_t)n * maxpool_y_count(s)) || !dahl_vector_is(dx, (size_t)n * maxpool_x_count(s)))
        return -EINVAL;
    struct maxpool_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&maxpool_backward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, dy,
                              STARPU_W, dx, STARPU_FLOPS, n * dahl_maxpool_backward_flops(s), DAHL_TASK_NAME,
                              "dahl_maxpool_backward", 0);
}

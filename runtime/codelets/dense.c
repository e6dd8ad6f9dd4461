/* Dense (fully connected) codelets: forward, backward_input and backward_weights of one sample
 * (kernels/cpu/dense.c), perf models keyed by (n_in, n_out). As for conv2d, backward_weights is two
 * codelets sharing one model: gradients in STARPU_REDUX or in STARPU_RW. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct dense_args {
    int n_in, n_out;
};

static struct dense_args dense_task_args(struct starpu_task *task)
{
    struct dense_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args;
}

static uint32_t dense_footprint(struct starpu_task *task)
{
    struct dense_args a = dense_task_args(task);
    return dahl_dense_footprint_of(a.n_in, a.n_out);
}

static size_t dense_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dense_args a = dense_task_args(task);
    return dahl_size_of_flops(dahl_dense_forward_flops(a.n_in, a.n_out));
}

static size_t dense_backward_input_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dense_args a = dense_task_args(task);
    return dahl_size_of_flops(dahl_dense_backward_input_flops(a.n_in, a.n_out));
}

static size_t dense_backward_weights_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dense_args a = dense_task_args(task);
    return dahl_size_of_flops(dahl_dense_backward_weights_flops(a.n_in, a.n_out));
}

/* buffers: x (R), w (R), b (R), y (W) */
static void dense_forward_cpu(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_dense_forward(a.n_in, a.n_out, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                       (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                       (const float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]));
}

/* buffers: dy (R), w (R), dx (W) */
static void dense_backward_input_cpu(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_dense_backward_input(a.n_in, a.n_out, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                              (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                              (float *)STARPU_VECTOR_GET_PTR(buffers[2]));
}

/* buffers: x (R), dy (R), dw (REDUX or RW), db (REDUX or RW) */
static void dense_backward_weights_cpu(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_dense_backward_weights(a.n_in, a.n_out, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                (float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]));
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones, cuBLAS on the worker's stream. */
DAHL_CUDA_WRAPPER dense_forward_cuda(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_dense_forward(a.n_in, a.n_out, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                           (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                           (const float *)STARPU_VECTOR_GET_PTR(buffers[2]),
                                           (float *)STARPU_VECTOR_GET_PTR(buffers[3]), dahl_cuda_local_stream(),
                                           dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER dense_backward_input_cuda(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_dense_backward_input(a.n_in, a.n_out, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                                  (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                                  (float *)STARPU_VECTOR_GET_PTR(buffers[2]), dahl_cuda_local_stream(),
                                                  dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER dense_backward_weights_cuda(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_dense_backward_weights(
        a.n_in, a.n_out, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
        (float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]), dahl_cuda_local_stream(),
        dahl_cuda_local_blas()));
}

struct starpu_perfmodel dahl_dense_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_dense_forward",
    .footprint = dense_footprint,
    .size_base = dense_forward_size,
};

struct starpu_perfmodel dahl_dense_backward_input_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_dense_backward_input",
    .footprint = dense_footprint,
    .size_base = dense_backward_input_size,
};

struct starpu_perfmodel dahl_dense_backward_weights_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_dense_backward_weights",
    .footprint = dense_footprint,
    .size_base = dense_backward_weights_size,
};

static struct starpu_codelet dense_forward_cl = {
    .cpu_funcs = {dense_forward_cpu},
    .cpu_funcs_name = {"dense_forward_cpu"},
    DAHL_CUDA_FUNCS(dense_forward_cuda),
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W},
    .model = &dahl_dense_forward_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_dense_forward",
};

static struct starpu_codelet dense_backward_input_cl = {
    .cpu_funcs = {dense_backward_input_cpu},
    .cpu_funcs_name = {"dense_backward_input_cpu"},
    DAHL_CUDA_FUNCS(dense_backward_input_cuda),
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &dahl_dense_backward_input_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_dense_backward_input",
};

static struct starpu_codelet dense_backward_weights_redux_cl = {
    .cpu_funcs = {dense_backward_weights_cpu},
    .cpu_funcs_name = {"dense_backward_weights_cpu"},
    DAHL_CUDA_FUNCS(dense_backward_weights_cuda),
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_REDUX, STARPU_REDUX},
    .model = &dahl_dense_backward_weights_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_dense_backward_weights",
};

static struct starpu_codelet dense_backward_weights_rw_cl = {
    .cpu_funcs = {dense_backward_weights_cpu},
    .cpu_funcs_name = {"dense_backward_weights_cpu"},
    DAHL_CUDA_FUNCS(dense_backward_weights_cuda),
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW},
    .model = &dahl_dense_backward_weights_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_dense_backward_weights",
};

static bool dense_shape_valid(int n_in, int n_out)
{
    return n_in > 0 && n_out > 0;
}

int dahl_insert_dense_forward(int n_in, int n_out, starpu_data_handle_t x, starpu_data_handle_t w,
                              starpu_data_handle_t b, starpu_data_handle_t y)
{
    if (!dense_shape_valid(n_in, n_out) || !dahl_vector_is(x, (size_t)n_in) ||
        !dahl_vector_is(w, (size_t)n_in * (size_t)n_out) || !dahl_vector_is(b, (size_t)n_out) ||
        !dahl_vector_is(y, (size_t)n_out))
        return -EINVAL;
    struct dense_args args = {.n_in = n_in, .n_out = n_out};
    dahl_codelets_note_submit();
    return starpu_task_insert(&dense_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, w,
                              STARPU_R, b, STARPU_W, y, STARPU_FLOPS, dahl_dense_forward_flops(n_in, n_out),
                              STARPU_NAME, "dahl_dense_forward", 0);
}

int dahl_insert_dense_backward_input(int n_in, int n_out, starpu_data_handle_t dy, starpu_data_handle_t w,
                                     starpu_data_handle_t dx)
{
    if (!dense_shape_valid(n_in, n_out) || !dahl_vector_is(dy, (size_t)n_out) ||
        !dahl_vector_is(w, (size_t)n_in * (size_t)n_out) || !dahl_vector_is(dx, (size_t)n_in))
        return -EINVAL;
    struct dense_args args = {.n_in = n_in, .n_out = n_out};
    dahl_codelets_note_submit();
    return starpu_task_insert(&dense_backward_input_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, dy, STARPU_R,
                              w, STARPU_W, dx, STARPU_FLOPS, dahl_dense_backward_input_flops(n_in, n_out),
                              STARPU_NAME, "dahl_dense_backward_input", 0);
}

int dahl_insert_dense_backward_weights(int n_in, int n_out, starpu_data_handle_t x, starpu_data_handle_t dy,
                                       starpu_data_handle_t dw, starpu_data_handle_t db,
                                       enum starpu_data_access_mode grad_mode)
{
    if (!dense_shape_valid(n_in, n_out) || !dahl_grad_mode_valid(grad_mode) || !dahl_vector_is(x, (size_t)n_in) ||
        !dahl_vector_is(dy, (size_t)n_out) || !dahl_vector_is(dw, (size_t)n_in * (size_t)n_out) ||
        !dahl_vector_is(db, (size_t)n_out))
        return -EINVAL;
    struct dense_args args = {.n_in = n_in, .n_out = n_out};
    struct starpu_codelet *cl =
        grad_mode == STARPU_REDUX ? &dense_backward_weights_redux_cl : &dense_backward_weights_rw_cl;
    dahl_codelets_note_submit();
    return starpu_task_insert(cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, dy, grad_mode, dw,
                              grad_mode, db, STARPU_FLOPS, dahl_dense_backward_weights_flops(n_in, n_out),
                              STARPU_NAME, "dahl_dense_backward_weights", 0);
}

/* conv2d codelets: forward, backward_input and backward_weights of one sample (kernels/cpu/conv2d.c), each
 * with its own perf model keyed by the shape. The im2col workspace is a STARPU_SCRATCH handle, allocated by
 * StarPU once per worker. backward_weights exists as two codelets sharing one model, because StarPU fixes a
 * codelet's access modes: one with the gradients in STARPU_REDUX, one with them in STARPU_RW. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct conv2d_args {
    struct dahl_conv2d_shape shape;
};

static struct dahl_conv2d_shape conv2d_task_shape(struct starpu_task *task)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args.shape;
}

static uint32_t conv2d_footprint(struct starpu_task *task)
{
    struct dahl_conv2d_shape s = conv2d_task_shape(task);
    return dahl_conv2d_footprint_of(&s);
}

static size_t conv2d_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dahl_conv2d_shape s = conv2d_task_shape(task);
    return dahl_size_of_flops(dahl_conv2d_forward_flops(&s));
}

static size_t conv2d_backward_input_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dahl_conv2d_shape s = conv2d_task_shape(task);
    return dahl_size_of_flops(dahl_conv2d_backward_input_flops(&s));
}

static size_t conv2d_backward_weights_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dahl_conv2d_shape s = conv2d_task_shape(task);
    return dahl_size_of_flops(dahl_conv2d_backward_weights_flops(&s));
}

/* buffers: x (R), w (R), b (R), y (W), workspace (SCRATCH) */
static void conv2d_forward_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_conv2d_forward(&args.shape, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                        (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                        (const float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]),
                        (float *)STARPU_VECTOR_GET_PTR(buffers[4]));
}

/* buffers: dy (R), w (R), dx (W), workspace (SCRATCH) */
static void conv2d_backward_input_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_conv2d_backward_input(&args.shape, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                               (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                               (float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]));
}

/* buffers: x (R), dy (R), dw (REDUX or RW), db (REDUX or RW), workspace (SCRATCH) */
static void conv2d_backward_weights_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_conv2d_backward_weights(&args.shape, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                 (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                 (float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]),
                                 (float *)STARPU_VECTOR_GET_PTR(buffers[4]));
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones; the kernels run on the worker's
 * stream with StarPU's cuBLAS handle, the workspace is the worker's SCRATCH copy in GPU memory. */
DAHL_CUDA_WRAPPER conv2d_forward_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_cuda_must(dahl_cuda_conv2d_forward(
        &args.shape, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
        (const float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]),
        (float *)STARPU_VECTOR_GET_PTR(buffers[4]), dahl_cuda_local_stream(), dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER conv2d_backward_input_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_cuda_must(dahl_cuda_conv2d_backward_input(
        &args.shape, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
        (float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]), dahl_cuda_local_stream(),
        dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER conv2d_backward_weights_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_cuda_must(dahl_cuda_conv2d_backward_weights(
        &args.shape, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
        (float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]),
        (float *)STARPU_VECTOR_GET_PTR(buffers[4]), dahl_cuda_local_stream(), dahl_cuda_local_blas()));
}

struct starpu_perfmodel dahl_conv2d_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_conv2d_forward",
    .footprint = conv2d_footprint,
    .size_base = conv2d_forward_size,
};

struct starpu_perfmodel dahl_conv2d_backward_input_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_conv2d_backward_input",
    .footprint = conv2d_footprint,
    .size_base = conv2d_backward_input_size,
};

struct starpu_perfmodel dahl_conv2d_backward_weights_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_conv2d_backward_weights",
    .footprint = conv2d_footprint,
    .size_base = conv2d_backward_weights_size,
};

static struct starpu_codelet conv2d_forward_cl = {
    .cpu_funcs = {conv2d_forward_cpu},
    .cpu_funcs_name = {"conv2d_forward_cpu"},
    DAHL_CUDA_FUNCS(conv2d_forward_cuda),
    .nbuffers = 5,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH},
    .model = &dahl_conv2d_forward_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_forward",
};

static struct starpu_codelet conv2d_backward_input_cl = {
    .cpu_funcs = {conv2d_backward_input_cpu},
    .cpu_funcs_name = {"conv2d_backward_input_cpu"},
    DAHL_CUDA_FUNCS(conv2d_backward_input_cuda),
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH},
    .model = &dahl_conv2d_backward_input_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_backward_input",
};

static struct starpu_codelet conv2d_backward_weights_redux_cl = {
    .cpu_funcs = {conv2d_backward_weights_cpu},
    .cpu_funcs_name = {"conv2d_backward_weights_cpu"},
    DAHL_CUDA_FUNCS(conv2d_backward_weights_cuda),
    .nbuffers = 5,
    .modes = {STARPU_R, STARPU_R, STARPU_REDUX, STARPU_REDUX, STARPU_SCRATCH},
    .model = &dahl_conv2d_backward_weights_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_backward_weights",
};

static struct starpu_codelet conv2d_backward_weights_rw_cl = {
    .cpu_funcs = {conv2d_backward_weights_cpu},
    .cpu_funcs_name = {"conv2d_backward_weights_cpu"},
    DAHL_CUDA_FUNCS(conv2d_backward_weights_cuda),
    .nbuffers = 5,
    .modes = {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW, STARPU_SCRATCH},
    .model = &dahl_conv2d_backward_weights_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_backward_weights",
};

/* Element counts of a valid shape's tensors. */
static size_t conv2d_x_count(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->c * (size_t)s->h * (size_t)s->w;
}

static size_t conv2d_w_count(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->f * (size_t)s->c * (size_t)s->kh * (size_t)s->kw;
}

static size_t conv2d_y_count(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->f * (size_t)dahl_conv2d_out_h(s) * (size_t)dahl_conv2d_out_w(s);
}

int dahl_insert_conv2d_forward(const struct dahl_conv2d_shape *s, starpu_data_handle_t x, starpu_data_handle_t w,
                               starpu_data_handle_t b, starpu_data_handle_t y, starpu_data_handle_t workspace)
{
    if (s == NULL || !dahl_conv2d_shape_valid(s) || !dahl_vector_is(x, conv2d_x_count(s)) ||
        !dahl_vector_is(w, conv2d_w_count(s)) || !dahl_vector_is(b, (size_t)s->f) ||
        !dahl_vector_is(y, conv2d_y_count(s)) || !dahl_vector_holds(workspace, dahl_conv2d_workspace_bytes(s)))
        return -EINVAL;
    struct conv2d_args args = {.shape = *s};
    dahl_codelets_note_submit();
    return starpu_task_insert(&conv2d_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, w,
                              STARPU_R, b, STARPU_W, y, STARPU_SCRATCH, workspace, STARPU_FLOPS,
                              dahl_conv2d_forward_flops(s), STARPU_NAME, "dahl_conv2d_forward", 0);
}

int dahl_insert_conv2d_backward_input(const struct dahl_conv2d_shape *s, starpu_data_handle_t dy,
                                      starpu_data_handle_t w, starpu_data_handle_t dx,
                                      starpu_data_handle_t workspace)
{
    if (s == NULL || !dahl_conv2d_shape_valid(s) || !dahl_vector_is(dy, conv2d_y_count(s)) ||
        !dahl_vector_is(w, conv2d_w_count(s)) || !dahl_vector_is(dx, conv2d_x_count(s)) ||
        !dahl_vector_holds(workspace, dahl_conv2d_workspace_bytes(s)))
        return -EINVAL;
    struct conv2d_args args = {.shape = *s};
    dahl_codelets_note_submit();
    return starpu_task_insert(&conv2d_backward_input_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, dy, STARPU_R,
                              w, STARPU_W, dx, STARPU_SCRATCH, workspace, STARPU_FLOPS,
                              dahl_conv2d_backward_input_flops(s), STARPU_NAME, "dahl_conv2d_backward_input", 0);
}

int dahl_insert_conv2d_backward_weights(const struct dahl_conv2d_shape *s, starpu_data_handle_t x,
                                        starpu_data_handle_t dy, starpu_data_handle_t dw,
                                        starpu_data_handle_t db, enum starpu_data_access_mode grad_mode,
                                        starpu_data_handle_t workspace)
{
    if (s == NULL || !dahl_conv2d_shape_valid(s) || !dahl_grad_mode_valid(grad_mode) ||
        !dahl_vector_is(x, conv2d_x_count(s)) || !dahl_vector_is(dy, conv2d_y_count(s)) ||
        !dahl_vector_is(dw, conv2d_w_count(s)) || !dahl_vector_is(db, (size_t)s->f) ||
        !dahl_vector_holds(workspace, dahl_conv2d_workspace_bytes(s)))
        return -EINVAL;
    struct conv2d_args args = {.shape = *s};
    struct starpu_codelet *cl =
        grad_mode == STARPU_REDUX ? &conv2d_backward_weights_redux_cl : &conv2d_backward_weights_rw_cl;
    dahl_codelets_note_submit();
    return starpu_task_insert(cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, dy, grad_mode, dw,
                              grad_mode, db, STARPU_SCRATCH, workspace, STARPU_FLOPS,
                              dahl_conv2d_backward_weights_flops(s), STARPU_NAME, "dahl_conv2d_backward_weights",
                              0);
}

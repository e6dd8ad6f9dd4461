/* ReLU codelets: elementwise forward and backward (kernels/cpu/relu.c) over one handle's n floats, perf
 * models keyed by n. The backward pass reads the forward OUTPUT y (y > 0 exactly where x > 0). */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct relu_args {
    size_t n;
};

static size_t relu_task_n(struct starpu_task *task)
{
    struct relu_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args.n;
}

static uint32_t relu_footprint(struct starpu_task *task)
{
    return dahl_relu_footprint_of(relu_task_n(task));
}

static size_t relu_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops(dahl_relu_forward_flops(relu_task_n(task)));
}

static size_t relu_backward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops(dahl_relu_backward_flops(relu_task_n(task)));
}

/* buffers: x (R), y (W) */
static void relu_forward_cpu(void *buffers[], void *cl_arg)
{
    struct relu_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_relu_forward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                      (float *)STARPU_VECTOR_GET_PTR(buffers[1]));
}

/* buffers: y (R), dy (R), dx (W) */
static void relu_backward_cpu(void *buffers[], void *cl_arg)
{
    struct relu_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_relu_backward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                       (const float *)STARPU_VECTOR_GET_PTR(buffers[1]), (float *)STARPU_VECTOR_GET_PTR(buffers[2]));
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones, on the worker's stream. */
DAHL_CUDA_WRAPPER relu_forward_cuda(void *buffers[], void *cl_arg)
{
    struct relu_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_cuda_must(dahl_cuda_relu_forward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                          (float *)STARPU_VECTOR_GET_PTR(buffers[1]), dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER relu_backward_cuda(void *buffers[], void *cl_arg)
{
    struct relu_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_cuda_must(dahl_cuda_relu_backward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                           (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                           (float *)STARPU_VECTOR_GET_PTR(buffers[2]), dahl_cuda_local_stream()));
}

static struct starpu_perfmodel dahl_relu_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_relu_forward",
    .footprint = relu_footprint,
    .size_base = relu_forward_size,
};

static struct starpu_perfmodel dahl_relu_backward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_relu_backward",
    .footprint = relu_footprint,
    .size_base = relu_backward_size,
};

static struct starpu_codelet relu_forward_cl = {
    .cpu_funcs = {relu_forward_cpu},
    .cpu_funcs_name = {"relu_forward_cpu"},
    DAHL_CUDA_FUNCS(relu_forward_cuda),
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &dahl_relu_forward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_relu_forward",
};

static struct starpu_codelet relu_backward_cl = {
    .cpu_funcs = {relu_backward_cpu},
    .cpu_funcs_name = {"relu_backward_cpu"},
    DAHL_CUDA_FUNCS(relu_backward_cuda),
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &dahl_relu_backward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_relu_backward",
};

int dahl_insert_relu_forward(starpu_data_handle_t x, starpu_data_handle_t y)
{
    if (x == NULL)
        return -EINVAL;
    struct relu_args args = {.n = starpu_vector_get_nx(x)};
    if (!dahl_vector_is(x, args.n) || !dahl_vector_is(y, args.n) || x == y)
        return -EINVAL;
    dahl_codelets_note_submit();
    return starpu_task_insert(&relu_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_W, y,
                              STARPU_FLOPS, dahl_relu_forward_flops(args.n), DAHL_TASK_NAME, "dahl_relu_forward", 0);
}

int dahl_insert_relu_backward(starpu_data_handle_t y, starpu_data_handle_t dy, starpu_data_handle_t dx)
{
    if (y == NULL)
        return -EINVAL;
    struct relu_args args = {.n = starpu_vector_get_nx(y)};
    if (!dahl_vector_is(y, args.n) || !dahl_vector_is(dy, args.n) || !dahl_vector_is(dx, args.n) || dx == y ||
        dx == dy)
        return -EINVAL;
    dahl_codelets_note_submit();
    return starpu_task_insert(&relu_backward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, y, STARPU_R, dy,
                              STARPU_W, dx, STARPU_FLOPS, dahl_relu_backward_flops(args.n), DAHL_TASK_NAME,
                              "dahl_relu_backward", 0);
}

/* ---- the layer table's view (dahl_layer.h): relu's tasks from its tensors ---------------------------------- */

static int relu_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                              enum starpu_data_access_mode gm)
{
    (void)l, (void)n, (void)gm;
    return dahl_insert_relu_forward(h[DAHL_T_X], h[DAHL_T_Y]);
}

static int relu_backward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                               enum starpu_data_access_mode gm)
{
    (void)l, (void)n, (void)gm;
    return dahl_insert_relu_backward(h[DAHL_T_Y], h[DAHL_T_DY], h[DAHL_T_DX]);
}

const struct dahl_codelet_set dahl_relu_codelets = {
    .n = 2,
    .entries = {{&dahl_relu_forward_model, relu_forward_layer, NULL},
                {&dahl_relu_backward_model, relu_backward_layer, NULL}},
};

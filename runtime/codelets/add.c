/* Element-wise add codelets (kernels/cpu/add.c): forward y = a + b and backward da = db = dy over one handle's
 * n floats, perf models keyed by n. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct add_args {
    size_t n;
};

static size_t add_task_n(struct starpu_task *task)
{
    struct add_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args.n;
}

static uint32_t add_footprint(struct starpu_task *task)
{
    return dahl_relu_footprint_of(add_task_n(task));
}

static size_t add_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops(dahl_add_forward_flops(add_task_n(task)));
}

/* copies: the element count, as dahl_zero's */
static size_t add_backward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops((double)add_task_n(task));
}

/* buffers: a (R), b (R), y (W) */
static void add_forward_cpu(void *buffers[], void *cl_arg)
{
    struct add_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_add_forward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                     (const float *)STARPU_VECTOR_GET_PTR(buffers[1]), (float *)STARPU_VECTOR_GET_PTR(buffers[2]));
}

/* buffers: dy (R), da (W), db (W) */
static void add_backward_cpu(void *buffers[], void *cl_arg)
{
    struct add_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_add_backward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                      (float *)STARPU_VECTOR_GET_PTR(buffers[1]), (float *)STARPU_VECTOR_GET_PTR(buffers[2]));
}

DAHL_CUDA_WRAPPER add_forward_cuda(void *buffers[], void *cl_arg)
{
    struct add_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_cuda_must(dahl_cuda_add_forward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                         (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                         (float *)STARPU_VECTOR_GET_PTR(buffers[2]), dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER add_backward_cuda(void *buffers[], void *cl_arg)
{
    struct add_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_cuda_must(dahl_cuda_add_backward(args.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                          (float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                          (float *)STARPU_VECTOR_GET_PTR(buffers[2]), dahl_cuda_local_stream()));
}

static struct starpu_perfmodel dahl_add_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_add_forward",
    .footprint = add_footprint,
    .size_base = add_forward_size,
};

static struct starpu_perfmodel dahl_add_backward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_add_backward",
    .footprint = add_footprint,
    .size_base = add_backward_size,
};

static struct starpu_codelet add_forward_cl = {
    .cpu_funcs = {add_forward_cpu},
    .cpu_funcs_name = {"add_forward_cpu"},
    DAHL_CUDA_FUNCS(add_forward_cuda),
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &dahl_add_forward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_add_forward",
};

static struct starpu_codelet add_backward_cl = {
    .cpu_funcs = {add_backward_cpu},
    .cpu_funcs_name = {"add_backward_cpu"},
    DAHL_CUDA_FUNCS(add_backward_cuda),
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_W, STARPU_W},
    .model = &dahl_add_backward_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_add_backward",
};

/* ---- the layer table's view (dahl_layer.h): add's tasks from its tensors ------------------------------------ */

static int add_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                             enum starpu_data_access_mode gm)
{
    (void)l, (void)n, (void)gm;
    if (h[DAHL_T_X] == NULL)
        return -EINVAL;
    struct add_args args = {.n = starpu_vector_get_nx(h[DAHL_T_X])};
    if (!dahl_vector_is(h[DAHL_T_X2], args.n) || !dahl_vector_is(h[DAHL_T_Y], args.n))
        return -EINVAL;
    dahl_codelets_note_submit();
    return starpu_task_insert(&add_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, h[DAHL_T_X], STARPU_R,
                              h[DAHL_T_X2], STARPU_W, h[DAHL_T_Y], STARPU_FLOPS, dahl_add_forward_flops(args.n),
                              DAHL_TASK_NAME, "dahl_add_forward", 0);
}

static int add_backward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                              enum starpu_data_access_mode gm)
{
    (void)l, (void)n, (void)gm;
    if (h[DAHL_T_DY] == NULL)
        return -EINVAL;
    struct add_args args = {.n = starpu_vector_get_nx(h[DAHL_T_DY])};
    if (!dahl_vector_is(h[DAHL_T_DX], args.n) || !dahl_vector_is(h[DAHL_T_DX2], args.n) ||
        h[DAHL_T_DX] == h[DAHL_T_DX2])
        return -EINVAL;
    dahl_codelets_note_submit();
    return starpu_task_insert(&add_backward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, h[DAHL_T_DY], STARPU_W,
                              h[DAHL_T_DX], STARPU_W, h[DAHL_T_DX2], STARPU_FLOPS, 0.0, DAHL_TASK_NAME,
                              "dahl_add_backward", 0);
}

const struct dahl_codelet_set dahl_add_codelets = {
    .n = 2,
    .entries = {{&dahl_add_forward_model, add_forward_layer, NULL},
                {&dahl_add_backward_model, add_backward_layer, NULL}},
};

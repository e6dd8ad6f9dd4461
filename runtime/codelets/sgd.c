/* SGD codelets (kernels/cpu/sgd.c): one parameter tensor updated from its gradient, with or without a
 * momentum buffer. Two codelets (2 or 3 buffers) share the "dahl_sgd_update" model; the footprint tells them
 * apart (n and whether momentum is on). */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct sgd_args {
    size_t n;
    float lr, momentum;
    bool with_momentum;
};

static struct sgd_args sgd_task_args(struct starpu_task *task)
{
    struct sgd_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args;
}

static uint32_t sgd_footprint(struct starpu_task *task)
{
    struct sgd_args a = sgd_task_args(task);
    return dahl_sgd_update_footprint_of(a.n, a.with_momentum);
}

static size_t sgd_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct sgd_args a = sgd_task_args(task);
    return dahl_size_of_flops(dahl_sgd_update_flops(a.n, a.with_momentum));
}

/* buffers: param (RW), grad (R) */
static void sgd_cpu(void *buffers[], void *cl_arg)
{
    struct sgd_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_sgd_update(a.n, (float *)STARPU_VECTOR_GET_PTR(buffers[0]), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                    NULL, a.lr, 0.0f);
}

/* buffers: param (RW), grad (R), velocity (RW) */
static void sgd_momentum_cpu(void *buffers[], void *cl_arg)
{
    struct sgd_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_sgd_update(a.n, (float *)STARPU_VECTOR_GET_PTR(buffers[0]), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                    (float *)STARPU_VECTOR_GET_PTR(buffers[2]), a.lr, a.momentum);
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones, on the worker's stream. */
DAHL_CUDA_WRAPPER sgd_cuda(void *buffers[], void *cl_arg)
{
    struct sgd_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_sgd_update(a.n, (float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                        (const float *)STARPU_VECTOR_GET_PTR(buffers[1]), NULL, a.lr, 0.0f,
                                        dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER sgd_momentum_cuda(void *buffers[], void *cl_arg)
{
    struct sgd_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_cuda_must(dahl_cuda_sgd_update(a.n, (float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                        (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                        (float *)STARPU_VECTOR_GET_PTR(buffers[2]), a.lr, a.momentum,
                                        dahl_cuda_local_stream()));
}

static struct starpu_perfmodel dahl_sgd_update_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_sgd_update",
    .footprint = sgd_footprint,
    .size_base = sgd_size,
};

static struct starpu_codelet sgd_cl = {
    .cpu_funcs = {sgd_cpu},
    .cpu_funcs_name = {"sgd_cpu"},
    DAHL_CUDA_FUNCS(sgd_cuda),
    .nbuffers = 2,
    .modes = {STARPU_RW, STARPU_R},
    .model = &dahl_sgd_update_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_sgd_update",
};

static struct starpu_codelet sgd_momentum_cl = {
    .cpu_funcs = {sgd_momentum_cpu},
    .cpu_funcs_name = {"sgd_momentum_cpu"},
    DAHL_CUDA_FUNCS(sgd_momentum_cuda),
    .nbuffers = 3,
    .modes = {STARPU_RW, STARPU_R, STARPU_RW},
    .model = &dahl_sgd_update_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_sgd_update",
};

int dahl_insert_sgd_update(starpu_data_handle_t param, starpu_data_handle_t grad, starpu_data_handle_t velocity,
                           float lr, float momentum)
{
    if (param == NULL)
        return -EINVAL;
    struct sgd_args args = {
        .n = starpu_vector_get_nx(param),
        .lr = lr,
        .momentum = momentum,
        .with_momentum = velocity != NULL && momentum != 0.0f,
    };
    if (!dahl_vector_is(param, args.n) || !dahl_vector_is(grad, args.n) || param == grad ||
        (args.with_momentum && (!dahl_vector_is(velocity, args.n) || velocity == param || velocity == grad)))
        return -EINVAL;
    const double flops = dahl_sgd_update_flops(args.n, args.with_momentum);
    dahl_codelets_note_submit();
    if (args.with_momentum)
        return starpu_task_insert(&sgd_momentum_cl, STARPU_VALUE, &args, sizeof(args), STARPU_RW, param, STARPU_R,
                                  grad, STARPU_RW, velocity, STARPU_FLOPS, flops, DAHL_TASK_NAME, "dahl_sgd_update", 0);
    return starpu_task_insert(&sgd_cl, STARPU_VALUE, &args, sizeof(args), STARPU_RW, param, STARPU_R, grad,
                              STARPU_FLOPS, flops, DAHL_TASK_NAME, "dahl_sgd_update", 0);
}

const struct dahl_codelet_set dahl_sgd_codelets = {.n = 1, .entries = {{&dahl_sgd_update_model, NULL, NULL}}};

/* Dense (fully connected) codelets: forward, backward_input and backward_weights of n samples (one task per
 * sample at grain 1; on CPUs one call of kernels/cpu/dense.c's n-sample kernels, on GPUs cuBLAS once per
 * sample), perf models keyed by (n_in, n_out) and n. As
 * for conv2d, backward_weights is several codelets sharing one model: gradients in STARPU_REDUX, in
 * STARPU_RW, and in STARPU_RW with a scratch workspace for the gradient tree of a task over several samples. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct dense_args {
    int n_in, n_out;
    int n; /* samples */
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
    return dahl_grouped_footprint_of(dahl_dense_footprint_of(a.n_in, a.n_out), a.n);
}

static size_t dense_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dense_args a = dense_task_args(task);
    return dahl_size_of_flops(a.n * dahl_dense_forward_flops(a.n_in, a.n_out));
}

static size_t dense_backward_input_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dense_args a = dense_task_args(task);
    return dahl_size_of_flops(a.n * dahl_dense_backward_input_flops(a.n_in, a.n_out));
}

static size_t dense_backward_weights_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct dense_args a = dense_task_args(task);
    return dahl_size_of_flops(a.n * dahl_dense_backward_weights_flops(a.n_in, a.n_out));
}

size_t dahl_dense_task_workspace_bytes(int n_in, int n_out, int n, bool tree)
{
    return dahl_group_scratch_bytes(n, tree && n > 1, (size_t)n_in * (size_t)n_out, (size_t)n_out);
}

/* buffers: x (R), w (R), b (R), y (W) */
static void dense_forward_cpu(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_dense_forward_n(a.n_in, a.n_out, a.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                         (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                         (const float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]));
}

/* buffers: dy (R), w (R), dx (W) */
static void dense_backward_input_cpu(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    dahl_dense_backward_input_n(a.n_in, a.n_out, a.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                (float *)STARPU_VECTOR_GET_PTR(buffers[2]));
}

/* One backward_weights task's inputs, for the gradient tree's per-sample calls. */
struct dense_grads_ctx {
    const struct dense_args *a;
    const float *x, *dy;
};

/* The gradient tree over a task's samples (dahl_group_grads); the scratch is buffer 4 when there is one. */
static struct dahl_group_grads dense_group(const struct dense_args *a, void *buffers[], unsigned nbuffers,
                                           const struct dahl_group_ops *ops, struct dense_grads_ctx *c,
                                           void (*one)(int, float *, float *, void *))
{
    c->a = a;
    c->x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    c->dy = (const float *)STARPU_VECTOR_GET_PTR(buffers[1]);
    return (struct dahl_group_grads){.n = a->n,
                                     .tree = nbuffers > 4,
                                     .nw = (size_t)a->n_in * (size_t)a->n_out,
                                     .nb = (size_t)a->n_out,
                                     .dw = (float *)STARPU_VECTOR_GET_PTR(buffers[2]),
                                     .db = (float *)STARPU_VECTOR_GET_PTR(buffers[3]),
                                     .scratch = nbuffers > 4 ? (float *)STARPU_VECTOR_GET_PTR(buffers[4]) : NULL,
                                     .ops = ops,
                                     .one = one,
                                     .ctx = c};
}

/* buffers: x (R), dy (R), dw (REDUX or RW), db (REDUX or RW) [, scratch (SCRATCH)]. The CPU kernel sums a
 * task's samples by the gradient tree itself, element by element, and leaves the scratch (the CUDA
 * implementation's, dahl_group_grads) unused. */
static void dense_backward_weights_cpu(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const bool tree = starpu_task_get_current()->cl->nbuffers > 4;
    dahl_dense_backward_weights_n(a.n_in, a.n_out, a.n, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                  (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                  (float *)STARPU_VECTOR_GET_PTR(buffers[2]), (float *)STARPU_VECTOR_GET_PTR(buffers[3]),
                                  tree);
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones, cuBLAS on the worker's stream. */
DAHL_CUDA_WRAPPER dense_forward_cuda(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *y = (float *)STARPU_VECTOR_GET_PTR(buffers[3]);
    for (int i = 0; i < a.n; i++)
        dahl_cuda_must(dahl_cuda_dense_forward(a.n_in, a.n_out, x + (size_t)i * (size_t)a.n_in,
                                               (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                               (const float *)STARPU_VECTOR_GET_PTR(buffers[2]),
                                               y + (size_t)i * (size_t)a.n_out, dahl_cuda_local_stream(),
                                               dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER dense_backward_input_cuda(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *dy = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *dx = (float *)STARPU_VECTOR_GET_PTR(buffers[2]);
    for (int i = 0; i < a.n; i++)
        dahl_cuda_must(dahl_cuda_dense_backward_input(a.n_in, a.n_out, dy + (size_t)i * (size_t)a.n_out,
                                                      (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                                      dx + (size_t)i * (size_t)a.n_in, dahl_cuda_local_stream(),
                                                      dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER dense_sample_grads_cuda(int i, float *dw, float *db, void *arg)
{
    const struct dense_grads_ctx *c = arg;
    dahl_cuda_must(dahl_cuda_dense_backward_weights(c->a->n_in, c->a->n_out, c->x + (size_t)i * (size_t)c->a->n_in,
                                                    c->dy + (size_t)i * (size_t)c->a->n_out, dw, db,
                                                    dahl_cuda_local_stream(), dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER dense_backward_weights_cuda(void *buffers[], void *cl_arg)
{
    struct dense_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct dense_grads_ctx c;
    struct dahl_group_grads g = dense_group(&a, buffers, (unsigned)starpu_task_get_current()->cl->nbuffers,
                                            &dahl_group_cuda_ops, &c, dense_sample_grads_cuda);
    dahl_group_grads_run(&g);
}

static struct starpu_perfmodel dahl_dense_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_dense_forward",
    .footprint = dense_footprint,
    .size_base = dense_forward_size,
};

static struct starpu_perfmodel dahl_dense_backward_input_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_dense_backward_input",
    .footprint = dense_footprint,
    .size_base = dense_backward_input_size,
};

static struct starpu_perfmodel dahl_dense_backward_weights_model = {
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
    .energy_model = &dahl_energy_model,
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
    .energy_model = &dahl_energy_model,
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
    .energy_model = &dahl_energy_model,
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
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_dense_backward_weights",
};

static struct starpu_codelet dense_backward_weights_tree_cl = {
    .cpu_funcs = {dense_backward_weights_cpu},
    .cpu_funcs_name = {"dense_backward_weights_cpu"},
    DAHL_CUDA_FUNCS(dense_backward_weights_cuda),
    .nbuffers = 5,
    .modes = {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW, STARPU_SCRATCH},
    .model = &dahl_dense_backward_weights_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_dense_backward_weights",
};

static bool dense_shape_valid(int n_in, int n_out, int n)
{
    return n_in > 0 && n_out > 0 && n > 0;
}

int dahl_insert_dense_forward_n(int n_in, int n_out, int n, starpu_data_handle_t x, starpu_data_handle_t w,
                                starpu_data_handle_t b, starpu_data_handle_t y)
{
    if (!dense_shape_valid(n_in, n_out, n) || !dahl_vector_is(x, (size_t)n * (size_t)n_in) ||
        !dahl_vector_is(w, (size_t)n_in * (size_t)n_out) || !dahl_vector_is(b, (size_t)n_out) ||
        !dahl_vector_is(y, (size_t)n * (size_t)n_out))
        return -EINVAL;
    struct dense_args args = {.n_in = n_in, .n_out = n_out, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&dense_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, w,
                              STARPU_R, b, STARPU_W, y, STARPU_FLOPS, n * dahl_dense_forward_flops(n_in, n_out),
                              DAHL_TASK_NAME, "dahl_dense_forward", 0);
}

int dahl_insert_dense_backward_input_n(int n_in, int n_out, int n, starpu_data_handle_t dy, starpu_data_handle_t w,
                                       starpu_data_handle_t dx)
{
    if (!dense_shape_valid(n_in, n_out, n) || !dahl_vector_is(dy, (size_t)n * (size_t)n_out) ||
        !dahl_vector_is(w, (size_t)n_in * (size_t)n_out) || !dahl_vector_is(dx, (size_t)n * (size_t)n_in))
        return -EINVAL;
    struct dense_args args = {.n_in = n_in, .n_out = n_out, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&dense_backward_input_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, dy, STARPU_R,
                              w, STARPU_W, dx, STARPU_FLOPS, n * dahl_dense_backward_input_flops(n_in, n_out),
                              DAHL_TASK_NAME, "dahl_dense_backward_input", 0);
}

int dahl_insert_dense_backward_weights_n(int n_in, int n_out, int n, starpu_data_handle_t x, starpu_data_handle_t dy,
                                         starpu_data_handle_t dw, starpu_data_handle_t db,
                                         enum starpu_data_access_mode grad_mode, starpu_data_handle_t workspace)
{
    bool tree = grad_mode == STARPU_RW && n > 1;
    if (!dense_shape_valid(n_in, n_out, n) || !dahl_grad_mode_valid(grad_mode) ||
        !dahl_vector_is(x, (size_t)n * (size_t)n_in) || !dahl_vector_is(dy, (size_t)n * (size_t)n_out) ||
        !dahl_vector_is(dw, (size_t)n_in * (size_t)n_out) || !dahl_vector_is(db, (size_t)n_out) ||
        (tree && !dahl_vector_holds(workspace, dahl_dense_task_workspace_bytes(n_in, n_out, n, tree))))
        return -EINVAL;
    struct dense_args args = {.n_in = n_in, .n_out = n_out, .n = n};
    double flops = n * dahl_dense_backward_weights_flops(n_in, n_out);
    dahl_codelets_note_submit();
    if (tree)
        return starpu_task_insert(&dense_backward_weights_tree_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x,
                                  STARPU_R, dy, STARPU_RW, dw, STARPU_RW, db, STARPU_SCRATCH, workspace,
                                  STARPU_FLOPS, flops, DAHL_TASK_NAME, "dahl_dense_backward_weights", 0);
    struct starpu_codelet *cl =
        grad_mode == STARPU_REDUX ? &dense_backward_weights_redux_cl : &dense_backward_weights_rw_cl;
    return starpu_task_insert(cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, dy, grad_mode, dw,
                              grad_mode, db, STARPU_FLOPS, flops, DAHL_TASK_NAME, "dahl_dense_backward_weights", 0);
}

/* ---- the layer table's view (dahl_layer.h): dense's tasks from its tensors --------------------------------- */

static int dense_in(const struct dahl_layer_shape *l)
{
    return l->in_c * l->in_h * l->in_w;
}

static int dense_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                               enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_dense_forward_n(dense_in(l), l->desc.units, n, h[DAHL_T_X], h[DAHL_T_W], h[DAHL_T_B],
                                       h[DAHL_T_Y]);
}

static int dense_backward_input_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                      enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_dense_backward_input_n(dense_in(l), l->desc.units, n, h[DAHL_T_DY], h[DAHL_T_W],
                                              h[DAHL_T_DX]);
}

static int dense_backward_weights_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                        enum starpu_data_access_mode gm)
{
    return dahl_insert_dense_backward_weights_n(dense_in(l), l->desc.units, n, h[DAHL_T_X], h[DAHL_T_DY],
                                                h[DAHL_T_DW], h[DAHL_T_DB], gm, h[DAHL_T_WORKSPACE]);
}

static size_t dense_layer_workspace(const struct dahl_layer_shape *l, int n, bool tree)
{
    return dahl_dense_task_workspace_bytes(dense_in(l), l->desc.units, n, tree);
}

const struct dahl_codelet_set dahl_dense_codelets = {
    .n = 3,
    .entries = {{&dahl_dense_forward_model, dense_forward_layer, NULL},
                {&dahl_dense_backward_input_model, dense_backward_input_layer, NULL},
                {&dahl_dense_backward_weights_model, dense_backward_weights_layer, dense_layer_workspace}},
};

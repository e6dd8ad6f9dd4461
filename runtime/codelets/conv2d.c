/* conv2d codelets: forward, backward_input and backward_weights of n samples (one task per sample at grain 1;
 * kernels/cpu/conv2d.c run once per sample), each with its own perf model keyed by the shape and n. The
 * im2col workspace is a STARPU_SCRATCH handle, allocated by StarPU once per worker; a manual-reduction task
 * over several samples also keeps its gradient tree's levels there (dahl_group_grads). backward_weights
 * exists as two codelets sharing one model, because StarPU fixes a codelet's access modes: one with the
 * gradients in STARPU_REDUX, one with them in STARPU_RW. A convolution without bias runs codelets of one buffer
 * fewer (no b, no db) under the same perf models: its kernels get a zero bias and drop a bias gradient, f floats
 * each in the workspace after the kernels' own (before the tree's levels). */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct conv2d_args {
    struct dahl_conv2d_shape shape;
    int n;    /* samples */
    int tree; /* backward_weights: sum the samples' gradients by the manual reduction's tree */
};

static struct conv2d_args conv2d_task_args(struct starpu_task *task)
{
    struct conv2d_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args;
}

static uint32_t conv2d_footprint(struct starpu_task *task)
{
    struct conv2d_args a = conv2d_task_args(task);
    return dahl_grouped_footprint_of(dahl_conv2d_footprint_of(&a.shape), a.n);
}

static size_t conv2d_forward_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct conv2d_args a = conv2d_task_args(task);
    return dahl_size_of_flops(a.n * dahl_conv2d_forward_flops(&a.shape));
}

static size_t conv2d_backward_input_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct conv2d_args a = conv2d_task_args(task);
    return dahl_size_of_flops(a.n * dahl_conv2d_backward_input_flops(&a.shape));
}

static size_t conv2d_backward_weights_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    struct conv2d_args a = conv2d_task_args(task);
    return dahl_size_of_flops(a.n * dahl_conv2d_backward_weights_flops(&a.shape));
}

/* Element counts of a valid shape's tensors (one sample). */
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

/* The kernels' workspace first, then the gradient tree's levels, 64-byte aligned. */
static size_t kernel_workspace_floats(const struct dahl_conv2d_shape *s)
{
    return (dahl_conv2d_workspace_bytes(s) + 63) / 64 * 16;
}

size_t dahl_conv2d_task_workspace_bytes(const struct dahl_conv2d_shape *s, int n, bool tree)
{
    if (!tree || n < 2)
        return dahl_conv2d_workspace_bytes(s);
    return kernel_workspace_floats(s) * sizeof(float) + dahl_group_scratch_bytes(n, tree, conv2d_w_count(s), (size_t)s->f);
}

/* Without bias: the zero bias (forward) or the dropped bias gradient (backward_weights), 64-byte aligned. */
static size_t nobias_floats(const struct dahl_conv2d_shape *s)
{
    return ((size_t)s->f + 15) / 16 * 16;
}

static size_t nobias_workspace_bytes(const struct dahl_conv2d_shape *s, int n, bool tree)
{
    return (kernel_workspace_floats(s) + nobias_floats(s)) * sizeof(float) +
           dahl_group_scratch_bytes(n, tree && n > 1, conv2d_w_count(s), 0);
}

/* buffers: x (R), w (R), b (R), y (W), workspace (SCRATCH) */
static void conv2d_forward_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *y = (float *)STARPU_VECTOR_GET_PTR(buffers[3]);
    for (int i = 0; i < a.n; i++)
        dahl_conv2d_forward(&a.shape, x + (size_t)i * conv2d_x_count(&a.shape),
                            (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                            (const float *)STARPU_VECTOR_GET_PTR(buffers[2]), y + (size_t)i * conv2d_y_count(&a.shape),
                            (float *)STARPU_VECTOR_GET_PTR(buffers[4]));
}

/* Without bias, buffers: x (R), w (R), y (W), workspace (SCRATCH). */
static void conv2d_forward_nobias_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *y = (float *)STARPU_VECTOR_GET_PTR(buffers[2]), *workspace = (float *)STARPU_VECTOR_GET_PTR(buffers[3]);
    float *zeros = workspace + kernel_workspace_floats(&a.shape);
    dahl_zero((size_t)a.shape.f, zeros);
    for (int i = 0; i < a.n; i++)
        dahl_conv2d_forward(&a.shape, x + (size_t)i * conv2d_x_count(&a.shape),
                            (const float *)STARPU_VECTOR_GET_PTR(buffers[1]), zeros,
                            y + (size_t)i * conv2d_y_count(&a.shape), workspace);
}

/* buffers: dy (R), w (R), dx (W), workspace (SCRATCH) */
static void conv2d_backward_input_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *dy = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *dx = (float *)STARPU_VECTOR_GET_PTR(buffers[2]);
    for (int i = 0; i < a.n; i++)
        dahl_conv2d_backward_input(&a.shape, dy + (size_t)i * conv2d_y_count(&a.shape),
                                   (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
                                   dx + (size_t)i * conv2d_x_count(&a.shape), (float *)STARPU_VECTOR_GET_PTR(buffers[3]));
}

/* One backward_weights task's buffers, for the gradient tree's per-sample calls. */
struct conv2d_grads_ctx {
    const struct conv2d_args *a;
    const float *x, *dy;
    float *workspace;
    float *dropped_db; /* without bias: where the kernels' bias gradient goes, unread */
    void *stream, *blas; /* CUDA only */
};

static void conv2d_sample_grads_cpu(int i, float *dw, float *db, void *arg)
{
    const struct conv2d_grads_ctx *c = arg;
    const struct dahl_conv2d_shape *s = &c->a->shape;
    dahl_conv2d_backward_weights(s, c->x + (size_t)i * conv2d_x_count(s), c->dy + (size_t)i * conv2d_y_count(s), dw,
                                 c->dropped_db != NULL ? c->dropped_db : db, c->workspace);
}

/* The gradient tree over a task's samples (dahl_group_grads), the tree's levels after the kernels'
 * workspace (and, without bias, after the dropped bias gradient, zeroed here). */
static struct dahl_group_grads conv2d_group(const struct conv2d_args *a, void *buffers[], bool bias,
                                            const struct dahl_group_ops *ops, struct conv2d_grads_ctx *c,
                                            void (*one)(int, float *, float *, void *))
{
    c->a = a;
    c->x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    c->dy = (const float *)STARPU_VECTOR_GET_PTR(buffers[1]);
    c->workspace = (float *)STARPU_VECTOR_GET_PTR(buffers[bias ? 4 : 3]);
    float *after = c->workspace + kernel_workspace_floats(&a->shape);
    if (!bias) {
        c->dropped_db = after;
        ops->zero((size_t)a->shape.f, c->dropped_db, c);
        after += nobias_floats(&a->shape);
    }
    return (struct dahl_group_grads){.n = a->n,
                                     .tree = a->tree != 0,
                                     .nw = conv2d_w_count(&a->shape),
                                     .nb = bias ? (size_t)a->shape.f : 0,
                                     .dw = (float *)STARPU_VECTOR_GET_PTR(buffers[2]),
                                     .db = bias ? (float *)STARPU_VECTOR_GET_PTR(buffers[3]) : NULL,
                                     .scratch = after,
                                     .ops = ops,
                                     .one = one,
                                     .ctx = c};
}

/* buffers: x (R), dy (R), dw (REDUX or RW), db (REDUX or RW), workspace (SCRATCH) */
static void conv2d_backward_weights_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct conv2d_grads_ctx c = {0};
    struct dahl_group_grads g = conv2d_group(&a, buffers, true, &dahl_group_cpu_ops, &c, conv2d_sample_grads_cpu);
    dahl_group_grads_run(&g);
}

/* Without bias, buffers: x (R), dy (R), dw (REDUX or RW), workspace (SCRATCH). */
static void conv2d_backward_weights_nobias_cpu(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct conv2d_grads_ctx c = {0};
    struct dahl_group_grads g = conv2d_group(&a, buffers, false, &dahl_group_cpu_ops, &c, conv2d_sample_grads_cpu);
    dahl_group_grads_run(&g);
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER): the same buffers as the CPU ones; the kernels run on the worker's
 * stream with StarPU's cuBLAS handle, the workspace is the worker's SCRATCH copy in GPU memory. */
DAHL_CUDA_WRAPPER conv2d_forward_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *y = (float *)STARPU_VECTOR_GET_PTR(buffers[3]);
    for (int i = 0; i < a.n; i++)
        dahl_cuda_must(dahl_cuda_conv2d_forward(
            &a.shape, x + (size_t)i * conv2d_x_count(&a.shape), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
            (const float *)STARPU_VECTOR_GET_PTR(buffers[2]), y + (size_t)i * conv2d_y_count(&a.shape),
            (float *)STARPU_VECTOR_GET_PTR(buffers[4]), dahl_cuda_local_stream(), dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER conv2d_forward_nobias_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *y = (float *)STARPU_VECTOR_GET_PTR(buffers[2]), *workspace = (float *)STARPU_VECTOR_GET_PTR(buffers[3]);
    float *zeros = workspace + kernel_workspace_floats(&a.shape);
    dahl_cuda_must(dahl_cuda_zero((size_t)a.shape.f, zeros, dahl_cuda_local_stream()));
    for (int i = 0; i < a.n; i++)
        dahl_cuda_must(dahl_cuda_conv2d_forward(
            &a.shape, x + (size_t)i * conv2d_x_count(&a.shape), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
            zeros, y + (size_t)i * conv2d_y_count(&a.shape), workspace, dahl_cuda_local_stream(),
            dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER conv2d_backward_input_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const float *dy = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *dx = (float *)STARPU_VECTOR_GET_PTR(buffers[2]);
    for (int i = 0; i < a.n; i++)
        dahl_cuda_must(dahl_cuda_conv2d_backward_input(
            &a.shape, dy + (size_t)i * conv2d_y_count(&a.shape), (const float *)STARPU_VECTOR_GET_PTR(buffers[1]),
            dx + (size_t)i * conv2d_x_count(&a.shape), (float *)STARPU_VECTOR_GET_PTR(buffers[3]),
            dahl_cuda_local_stream(), dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER conv2d_sample_grads_cuda(int i, float *dw, float *db, void *arg)
{
    const struct conv2d_grads_ctx *c = arg;
    const struct dahl_conv2d_shape *s = &c->a->shape;
    dahl_cuda_must(dahl_cuda_conv2d_backward_weights(s, c->x + (size_t)i * conv2d_x_count(s),
                                                     c->dy + (size_t)i * conv2d_y_count(s), dw,
                                                     c->dropped_db != NULL ? c->dropped_db : db, c->workspace,
                                                     dahl_cuda_local_stream(), dahl_cuda_local_blas()));
}

DAHL_CUDA_WRAPPER conv2d_backward_weights_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct conv2d_grads_ctx c = {0};
    struct dahl_group_grads g = conv2d_group(&a, buffers, true, &dahl_group_cuda_ops, &c, conv2d_sample_grads_cuda);
    dahl_group_grads_run(&g);
}

DAHL_CUDA_WRAPPER conv2d_backward_weights_nobias_cuda(void *buffers[], void *cl_arg)
{
    struct conv2d_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    struct conv2d_grads_ctx c = {0};
    struct dahl_group_grads g = conv2d_group(&a, buffers, false, &dahl_group_cuda_ops, &c, conv2d_sample_grads_cuda);
    dahl_group_grads_run(&g);
}

static struct starpu_perfmodel dahl_conv2d_forward_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_conv2d_forward",
    .footprint = conv2d_footprint,
    .size_base = conv2d_forward_size,
};

static struct starpu_perfmodel dahl_conv2d_backward_input_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_conv2d_backward_input",
    .footprint = conv2d_footprint,
    .size_base = conv2d_backward_input_size,
};

static struct starpu_perfmodel dahl_conv2d_backward_weights_model = {
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
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_forward",
};

static struct starpu_codelet conv2d_forward_nobias_cl = {
    .cpu_funcs = {conv2d_forward_nobias_cpu},
    .cpu_funcs_name = {"conv2d_forward_nobias_cpu"},
    DAHL_CUDA_FUNCS(conv2d_forward_nobias_cuda),
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH},
    .model = &dahl_conv2d_forward_model,
    .energy_model = &dahl_energy_model,
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
    .energy_model = &dahl_energy_model,
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
    .energy_model = &dahl_energy_model,
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
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_backward_weights",
};

static struct starpu_codelet conv2d_backward_weights_nobias_redux_cl = {
    .cpu_funcs = {conv2d_backward_weights_nobias_cpu},
    .cpu_funcs_name = {"conv2d_backward_weights_nobias_cpu"},
    DAHL_CUDA_FUNCS(conv2d_backward_weights_nobias_cuda),
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_REDUX, STARPU_SCRATCH},
    .model = &dahl_conv2d_backward_weights_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_backward_weights",
};

static struct starpu_codelet conv2d_backward_weights_nobias_rw_cl = {
    .cpu_funcs = {conv2d_backward_weights_nobias_cpu},
    .cpu_funcs_name = {"conv2d_backward_weights_nobias_cpu"},
    DAHL_CUDA_FUNCS(conv2d_backward_weights_nobias_cuda),
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_RW, STARPU_SCRATCH},
    .model = &dahl_conv2d_backward_weights_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_conv2d_backward_weights",
};

int dahl_insert_conv2d_forward_n(const struct dahl_conv2d_shape *s, int n, starpu_data_handle_t x,
                                 starpu_data_handle_t w, starpu_data_handle_t b, starpu_data_handle_t y,
                                 starpu_data_handle_t workspace)
{
    if (s == NULL || !dahl_conv2d_shape_valid(s) || n < 1 || !dahl_vector_is(x, (size_t)n * conv2d_x_count(s)) ||
        !dahl_vector_is(w, conv2d_w_count(s)) || (b != NULL && !dahl_vector_is(b, (size_t)s->f)) ||
        !dahl_vector_is(y, (size_t)n * conv2d_y_count(s)) ||
        !dahl_vector_holds(workspace, b != NULL ? dahl_conv2d_workspace_bytes(s) : nobias_workspace_bytes(s, n, false)))
        return -EINVAL;
    struct conv2d_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    if (b == NULL)
        return starpu_task_insert(&conv2d_forward_nobias_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R,
                                  w, STARPU_W, y, STARPU_SCRATCH, workspace, STARPU_FLOPS,
                                  n * dahl_conv2d_forward_flops(s), DAHL_TASK_NAME, "dahl_conv2d_forward", 0);
    return starpu_task_insert(&conv2d_forward_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, w,
                              STARPU_R, b, STARPU_W, y, STARPU_SCRATCH, workspace, STARPU_FLOPS,
                              n * dahl_conv2d_forward_flops(s), DAHL_TASK_NAME, "dahl_conv2d_forward", 0);
}

int dahl_insert_conv2d_backward_input_n(const struct dahl_conv2d_shape *s, int n, starpu_data_handle_t dy,
                                        starpu_data_handle_t w, starpu_data_handle_t dx,
                                        starpu_data_handle_t workspace)
{
    if (s == NULL || !dahl_conv2d_shape_valid(s) || n < 1 || !dahl_vector_is(dy, (size_t)n * conv2d_y_count(s)) ||
        !dahl_vector_is(w, conv2d_w_count(s)) || !dahl_vector_is(dx, (size_t)n * conv2d_x_count(s)) ||
        !dahl_vector_holds(workspace, dahl_conv2d_workspace_bytes(s)))
        return -EINVAL;
    struct conv2d_args args = {.shape = *s, .n = n};
    dahl_codelets_note_submit();
    return starpu_task_insert(&conv2d_backward_input_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, dy, STARPU_R,
                              w, STARPU_W, dx, STARPU_SCRATCH, workspace, STARPU_FLOPS,
                              n * dahl_conv2d_backward_input_flops(s), DAHL_TASK_NAME, "dahl_conv2d_backward_input", 0);
}

int dahl_insert_conv2d_backward_weights_n(const struct dahl_conv2d_shape *s, int n, starpu_data_handle_t x,
                                          starpu_data_handle_t dy, starpu_data_handle_t dw,
                                          starpu_data_handle_t db, enum starpu_data_access_mode grad_mode,
                                          starpu_data_handle_t workspace)
{
    bool tree = grad_mode == STARPU_RW && n > 1;
    if (s == NULL || !dahl_conv2d_shape_valid(s) || n < 1 || !dahl_grad_mode_valid(grad_mode) ||
        !dahl_vector_is(x, (size_t)n * conv2d_x_count(s)) || !dahl_vector_is(dy, (size_t)n * conv2d_y_count(s)) ||
        !dahl_vector_is(dw, conv2d_w_count(s)) || (db != NULL && !dahl_vector_is(db, (size_t)s->f)) ||
        !dahl_vector_holds(workspace, db != NULL ? dahl_conv2d_task_workspace_bytes(s, n, tree)
                                                 : nobias_workspace_bytes(s, n, tree)))
        return -EINVAL;
    struct conv2d_args args = {.shape = *s, .n = n, .tree = tree};
    dahl_codelets_note_submit();
    if (db == NULL)
        return starpu_task_insert(grad_mode == STARPU_REDUX ? &conv2d_backward_weights_nobias_redux_cl
                                                            : &conv2d_backward_weights_nobias_rw_cl,
                                  STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, dy, grad_mode, dw,
                                  STARPU_SCRATCH, workspace, STARPU_FLOPS, n * dahl_conv2d_backward_weights_flops(s),
                                  DAHL_TASK_NAME, "dahl_conv2d_backward_weights", 0);
    struct starpu_codelet *cl =
        grad_mode == STARPU_REDUX ? &conv2d_backward_weights_redux_cl : &conv2d_backward_weights_rw_cl;
    return starpu_task_insert(cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, x, STARPU_R, dy, grad_mode, dw,
                              grad_mode, db, STARPU_SCRATCH, workspace, STARPU_FLOPS,
                              n * dahl_conv2d_backward_weights_flops(s), DAHL_TASK_NAME, "dahl_conv2d_backward_weights",
                              0);
}

/* ---- the layer table's view (dahl_layer.h): conv's tasks from its tensors ---------------------------------- */

static int conv2d_forward_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_conv2d_forward_n(&l->conv, n, h[DAHL_T_X], h[DAHL_T_W], l->nb > 0 ? h[DAHL_T_B] : NULL,
                                        h[DAHL_T_Y], h[DAHL_T_WORKSPACE]);
}

static int conv2d_backward_input_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                       enum starpu_data_access_mode gm)
{
    (void)gm;
    return dahl_insert_conv2d_backward_input_n(&l->conv, n, h[DAHL_T_DY], h[DAHL_T_W], h[DAHL_T_DX],
                                               h[DAHL_T_WORKSPACE]);
}

static int conv2d_backward_weights_layer(const struct dahl_layer_shape *l, int n, dahl_layer_handles h,
                                         enum starpu_data_access_mode gm)
{
    return dahl_insert_conv2d_backward_weights_n(&l->conv, n, h[DAHL_T_X], h[DAHL_T_DY], h[DAHL_T_DW],
                                                 l->nb > 0 ? h[DAHL_T_DB] : NULL, gm, h[DAHL_T_WORKSPACE]);
}

static size_t conv2d_layer_workspace(const struct dahl_layer_shape *l, int n, bool tree)
{
    return l->nb > 0 ? dahl_conv2d_task_workspace_bytes(&l->conv, n, tree) : nobias_workspace_bytes(&l->conv, n, tree);
}

const struct dahl_codelet_set dahl_conv2d_codelets = {
    .n = 3,
    .entries = {{&dahl_conv2d_forward_model, conv2d_forward_layer, conv2d_layer_workspace},
                {&dahl_conv2d_backward_input_model, conv2d_backward_input_layer, conv2d_layer_workspace},
                {&dahl_conv2d_backward_weights_model, conv2d_backward_weights_layer, conv2d_layer_workspace}},
};

/* Task insertion helpers, one per operation and direction, for runtime code only (they take StarPU handles;
 * sim/ uses the StarPU-free dahl_codelets.h). Each dahl_insert_*() submits one task asynchronously, with
 * STARPU_NAME set to its perf-model symbol and STARPU_FLOPS to the kernel's flop count, and returns 0,
 * -EINVAL when a shape is invalid or a handle is not a float vector of the size the shape implies, or a
 * negative StarPU error. Every handle is a StarPU vector of floats (dahl_tensor_handle/_sample) holding ONE
 * sample laid out as dahl_kernels.h says; the caller keeps owning every handle. */
#ifndef DAHL_CODELETS_STARPU_H
#define DAHL_CODELETS_STARPU_H

#include "dahl_codelets.h"
#include "dahl_kernels.h"
#include "dahl_layer.h"
#include "dahl_starpu.h"

/* ---- workspaces: scratch memory for kernels that need it (conv2d) --------------------------------------
 * A vector handle with no home (StarPU allocates it per worker on first use), to pass to the insert helpers
 * that take a `workspace`; StarPU accesses it as STARPU_SCRATCH, so one handle serves concurrent tasks.
 * Returns NULL when bytes == 0 or is too large for a StarPU vector. The caller destroys it (after or even
 * before its tasks complete: the unregistration is submitted); destroy(NULL) is a no-op. */
starpu_data_handle_t dahl_workspace_create(size_t bytes);
void dahl_workspace_destroy(starpu_data_handle_t workspace);

/* The StarPU priority of every task the calling thread inserts from now on (0 until set; higher first,
 * where the scheduler honours priorities: prio, dmdas, heteroprio, ...). */
void dahl_codelets_set_priority(int prio);

/* Where the layer tasks the calling thread inserts from now on sit in training: the run's seed, the step
 * (-1: an evaluation), the layer's index and the first sample of their group in the step's batch. Kernels
 * that draw per-element random numbers (dropout) key them by it, so a draw does not depend on the grain. */
struct dahl_task_context {
    uint64_t seed;
    long step;
    int layer;
    long first_sample;
};
void dahl_codelets_set_context(const struct dahl_task_context *c);
const struct dahl_task_context *dahl_codelets_context(void);

/* ---- tasks over n samples (the training's grain, issue 21) -------------------------------------------------
 * Every per-sample layer helper has an _n form for a task over n >= 1 consecutive samples: its per-sample
 * handles (x, y, dx, dy, logits, ...) hold the n samples back to back, its parameters and gradients are the
 * same as for one sample, and its footprint is dahl_grouped_footprint_of(the one-sample footprint, n) (the
 * one-sample footprint itself at n == 1, so the plain forms below are the _n forms at n == 1). The weight
 * gradients of n samples in STARPU_RW (manual reduction) are summed by the network's manual tree within the
 * task; that needs dw and db zero before the task and a workspace of dahl_conv2d_task_workspace_bytes (dense:
 * dahl_dense_task_workspace_bytes). ReLU needs no _n form: its handles are already any number of floats. */

/* ---- a layer's task (dahl_layer.h) over n samples of layer l: h holds the handles of the tensors it accesses
 * (NULL for the others), grad_mode is STARPU_REDUX or STARPU_RW for its gradients. Returns what the codelet's
 * insert helper below returns, or -EINVAL for a symbol no layer codelet has. */
int dahl_insert_layer_task(const struct dahl_layer_task *t, const struct dahl_layer_shape *l, int n,
                           starpu_data_handle_t const h[DAHL_T_COUNT], enum starpu_data_access_mode grad_mode);
/* The workspace layer l's tasks need over n samples (tree: summing a group's gradients by the manual
 * reduction's tree within the task), the largest of its tasks'; 0 when none takes one. */
size_t dahl_layer_workspace_bytes(const struct dahl_layer_shape *l, int n, bool tree);

/* ---- conv2d: perf models "dahl_conv2d_forward", "dahl_conv2d_backward_input",
 * "dahl_conv2d_backward_weights"; footprint: the shape. workspace: at least dahl_conv2d_workspace_bytes(s).
 * x [C*H*W], w [F*C*KH*KW], b [F], y/dy [F*OH*OW], dx [C*H*W], dw [F*C*KH*KW], db [F]. A convolution without bias
 * passes b and db NULL: its tasks (same perf models) need F more floats of workspace, and with the tree's levels
 * of dw only (what its layer's workspace callback says). */
int dahl_insert_conv2d_forward_n(const struct dahl_conv2d_shape *s, int n, starpu_data_handle_t x,
                                 starpu_data_handle_t w, starpu_data_handle_t b, starpu_data_handle_t y,
                                 starpu_data_handle_t workspace);
int dahl_insert_conv2d_backward_input_n(const struct dahl_conv2d_shape *s, int n, starpu_data_handle_t dy,
                                        starpu_data_handle_t w, starpu_data_handle_t dx,
                                        starpu_data_handle_t workspace);
/* ACCUMULATES into dw and db, accessed with grad_mode: STARPU_REDUX (dw and db must have had
 * dahl_gradient_enable_redux()) or STARPU_RW (a private buffer, e.g. per sample, summed later with
 * dahl_insert_accumulate()). Any other mode: -EINVAL. */
int dahl_insert_conv2d_backward_weights_n(const struct dahl_conv2d_shape *s, int n, starpu_data_handle_t x,
                                          starpu_data_handle_t dy, starpu_data_handle_t dw,
                                          starpu_data_handle_t db, enum starpu_data_access_mode grad_mode,
                                          starpu_data_handle_t workspace);
/* The workspace a task over n samples needs: dahl_conv2d_workspace_bytes(s), and with tree (manual
 * reduction, n > 1) the gradient tree's levels after it. */
size_t dahl_conv2d_task_workspace_bytes(const struct dahl_conv2d_shape *s, int n, bool tree);

static inline int dahl_insert_conv2d_forward(const struct dahl_conv2d_shape *s, starpu_data_handle_t x,
                                             starpu_data_handle_t w, starpu_data_handle_t b, starpu_data_handle_t y,
                                             starpu_data_handle_t workspace)
{
    return dahl_insert_conv2d_forward_n(s, 1, x, w, b, y, workspace);
}
static inline int dahl_insert_conv2d_backward_input(const struct dahl_conv2d_shape *s, starpu_data_handle_t dy,
                                                    starpu_data_handle_t w, starpu_data_handle_t dx,
                                                    starpu_data_handle_t workspace)
{
    return dahl_insert_conv2d_backward_input_n(s, 1, dy, w, dx, workspace);
}
static inline int dahl_insert_conv2d_backward_weights(const struct dahl_conv2d_shape *s, starpu_data_handle_t x,
                                                      starpu_data_handle_t dy, starpu_data_handle_t dw,
                                                      starpu_data_handle_t db, enum starpu_data_access_mode grad_mode,
                                                      starpu_data_handle_t workspace)
{
    return dahl_insert_conv2d_backward_weights_n(s, 1, x, dy, dw, db, grad_mode, workspace);
}

/* ---- max-pool: "dahl_maxpool_forward", "dahl_maxpool_backward"; footprint: the shape.
 * x/dx [C*H*W], y/dy [C*OH*OW]. */
int dahl_insert_maxpool_forward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                  starpu_data_handle_t y);
int dahl_insert_maxpool_backward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                   starpu_data_handle_t dy, starpu_data_handle_t dx);
static inline int dahl_insert_maxpool_forward(const struct dahl_maxpool_shape *s, starpu_data_handle_t x,
                                              starpu_data_handle_t y)
{
    return dahl_insert_maxpool_forward_n(s, 1, x, y);
}
static inline int dahl_insert_maxpool_backward(const struct dahl_maxpool_shape *s, starpu_data_handle_t x,
                                               starpu_data_handle_t dy, starpu_data_handle_t dx)
{
    return dahl_insert_maxpool_backward_n(s, 1, x, dy, dx);
}

/* ---- average pool: "dahl_avgpool_forward", "dahl_avgpool_backward"; footprint: the shape (as max-pool's).
 * x/dx [C*H*W], y/dy [C*OH*OW]; the backward pass reads dy alone. */
int dahl_insert_avgpool_forward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t x,
                                  starpu_data_handle_t y);
int dahl_insert_avgpool_backward_n(const struct dahl_maxpool_shape *s, int n, starpu_data_handle_t dy,
                                   starpu_data_handle_t dx);

/* ---- ReLU: "dahl_relu_forward", "dahl_relu_backward"; footprint: n, the elements of x (all handles the
 * same size; y is the forward OUTPUT). Distinct handles (no in-place task). */
int dahl_insert_relu_forward(starpu_data_handle_t x, starpu_data_handle_t y);
int dahl_insert_relu_backward(starpu_data_handle_t y, starpu_data_handle_t dy, starpu_data_handle_t dx);

/* ---- dense: "dahl_dense_forward", "dahl_dense_backward_input", "dahl_dense_backward_weights"; footprint:
 * (n_in, n_out). x/dx [N_in], w/dw [N_out*N_in], b/db [N_out], y/dy [N_out]. grad_mode as for conv2d; the
 * workspace is only read with STARPU_RW and n > 1 (NULL otherwise). */
int dahl_insert_dense_forward_n(int n_in, int n_out, int n, starpu_data_handle_t x, starpu_data_handle_t w,
                                starpu_data_handle_t b, starpu_data_handle_t y);
int dahl_insert_dense_backward_input_n(int n_in, int n_out, int n, starpu_data_handle_t dy, starpu_data_handle_t w,
                                       starpu_data_handle_t dx);
int dahl_insert_dense_backward_weights_n(int n_in, int n_out, int n, starpu_data_handle_t x, starpu_data_handle_t dy,
                                         starpu_data_handle_t dw, starpu_data_handle_t db,
                                         enum starpu_data_access_mode grad_mode, starpu_data_handle_t workspace);
/* The workspace a backward_weights task over n samples needs: 0 but with tree (manual reduction, n > 1). */
size_t dahl_dense_task_workspace_bytes(int n_in, int n_out, int n, bool tree);
static inline int dahl_insert_dense_forward(int n_in, int n_out, starpu_data_handle_t x, starpu_data_handle_t w,
                                            starpu_data_handle_t b, starpu_data_handle_t y)
{
    return dahl_insert_dense_forward_n(n_in, n_out, 1, x, w, b, y);
}
static inline int dahl_insert_dense_backward_input(int n_in, int n_out, starpu_data_handle_t dy,
                                                   starpu_data_handle_t w, starpu_data_handle_t dx)
{
    return dahl_insert_dense_backward_input_n(n_in, n_out, 1, dy, w, dx);
}
static inline int dahl_insert_dense_backward_weights(int n_in, int n_out, starpu_data_handle_t x,
                                                     starpu_data_handle_t dy, starpu_data_handle_t dw,
                                                     starpu_data_handle_t db, enum starpu_data_access_mode grad_mode)
{
    return dahl_insert_dense_backward_weights_n(n_in, n_out, 1, x, dy, dw, db, grad_mode, NULL);
}

/* ---- fused softmax + cross-entropy: "dahl_softmax_xent"; footprint: k (not the labels).
 * logits [K] (R), label in [0, K), dlogits [K] (W), metrics [2] (W): metrics[0] = the loss,
 * metrics[1] = 1 when the first argmax is the label, else 0. Over n samples: labels[n], metrics [n][2]. */
int dahl_insert_softmax_xent_n(int k, int n, const uint8_t *labels, starpu_data_handle_t logits,
                               starpu_data_handle_t dlogits, starpu_data_handle_t metrics);
int dahl_insert_softmax_xent(int k, int label, starpu_data_handle_t logits, starpu_data_handle_t dlogits,
                             starpu_data_handle_t metrics);

/* ---- SGD: "dahl_sgd_update"; footprint: (n, with momentum). param (RW) -= lr * grad (R); with velocity
 * non-NULL (RW, same size) and momentum != 0, PyTorch's momentum (see dahl_sgd_update). */
int dahl_insert_sgd_update(starpu_data_handle_t param, starpu_data_handle_t grad, starpu_data_handle_t velocity,
                           float lr, float momentum);

/* ---- reductions: "dahl_accumulate" (dst += src) and "dahl_zero" (dst = 0); footprint: n. */
int dahl_insert_accumulate(starpu_data_handle_t dst, starpu_data_handle_t src);
/* The perf model's time (seconds) of dahl_insert_accumulate(dst, src) on worker 0, not submitted; 0 when the
 * model has none. (Representative ranks: a light rank spends it after each gradient it receives.) */
double dahl_accumulate_expected_s(starpu_data_handle_t dst, starpu_data_handle_t src);
int dahl_insert_zero(starpu_data_handle_t dst);
/* Makes h reducible with STARPU_REDUX: per-worker copies start at zero (dahl_zero) and are summed into h
 * (dahl_accumulate), h's own value included. Call once per gradient handle, before the first REDUX task. */
void dahl_gradient_enable_redux(starpu_data_handle_t h);

#endif /* DAHL_CODELETS_STARPU_H */

/* Pure CPU kernels of the dahl runtime: plain C over raw pointers and dimensions, no StarPU.
 * Every kernel states its tensor shapes and layout; the caller owns every buffer passed in.
 * Kernels work on ONE sample (the runtime submits one task per sample and layer); all tensors are float32,
 * row-major, densely packed. Scratch memory comes from the caller (a `workspace` of `_workspace_bytes()`):
 * no kernel allocates. Each kernel says whether it OVERWRITES or ACCUMULATES (+=) into its outputs. */
#ifndef DAHL_KERNELS_H
#define DAHL_KERNELS_H

#include "dahl_random.h"

#include <stdbool.h>
#include <stddef.h>

/* Cost helpers, next to every kernel, for perf models and rooflines:
 * - `_flops()` counts floating-point operations (a multiply-add is 2; max, compare and exp are 1 each),
 *   returned as double because StarPU's STARPU_FLOPS takes a double (exact up to 2^53).
 * - `_bytes()` is the compulsory memory traffic: each tensor argument read once and/or written once (an
 *   accumulated output counts twice: read + write), workspace traffic not counted. */

/* Busy-waits on the calling thread for duration_us microseconds of wall time (not a sleep: the core stays
 * busy, as a compute kernel would keep it). Used by the probe codelet that checks both StarPU flavours. */
void dahl_spin_us(double duration_us);

/* Makes OpenBLAS single-threaded. Call once, before any kernel runs: each StarPU worker owns one core, and a
 * multi-threaded BLAS inside a task would fight the other workers for theirs. */
void dahl_kernels_init(void);

/* The BLAS the kernels run on, for result files: e.g. "OpenBLAS Zen, 1 thread" (static buffer, overwritten
 * by the next call). */
const char *dahl_kernels_blas_info(void);

/* ---- conv2d (kernels/cpu/conv2d.c, conv2d_direct.c) ----------------------------------------------------
 * x  [C][H][W]      input            w  [F][C][KH][KW]  weights     b [F] bias
 * y  [F][OH][OW]    output, OH = (H + 2*pad - KH) / stride + 1, OW = (W + 2*pad - KW) / stride + 1
 * Zero padding of `pad` pixels on every side. Forward runs a direct AVX-512 or AVX2/FMA convolution where
 * dahl_conv2d_direct_available() says so (stride 1, CPU with AVX-512F, or AVX2 and FMA; the widest is used and
 * both give the same bits), im2col + single-threaded SGEMM
 * otherwise; the backward passes are always im2col (col2im) + SGEMM. The workspace
 * (dahl_conv2d_workspace_bytes, the same for the three functions, at most about 256 KiB unless one output row
 * needs more) holds the im2col matrix of a band of output rows or the padded input rows of one output row;
 * its content is scratch, undefined before and after a call. */
struct dahl_conv2d_shape {
    int c, h, w;      /* input channels, height, width */
    int f, kh, kw;    /* filters (output channels), kernel height, kernel width */
    int stride, pad;  /* same in both directions */
};
/* True when every field is positive (pad >= 0) and the kernel fits in the padded input. */
bool dahl_conv2d_shape_valid(const struct dahl_conv2d_shape *s);
int dahl_conv2d_out_h(const struct dahl_conv2d_shape *s);
int dahl_conv2d_out_w(const struct dahl_conv2d_shape *s);
size_t dahl_conv2d_workspace_bytes(const struct dahl_conv2d_shape *s);

/* y = conv(x, w) + b. OVERWRITES y. */
void dahl_conv2d_forward(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                         float *y, float *workspace);
/* The two forward implementations behind dahl_conv2d_forward, for tests and benchmarks: the direct one
 * returns false, touching nothing, where it is not available. Both OVERWRITE y; same workspace. */
bool dahl_conv2d_direct_available(const struct dahl_conv2d_shape *s);
bool dahl_conv2d_forward_direct(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                                float *y, float *workspace);
/* The widest vector the direct kernel can use on this CPU: 512 (AVX-512F), 256 (AVX2 and FMA) or 0. */
int dahl_conv2d_direct_vector_bits(void);
/* The direct kernel with `bits`-wide vectors (256 or 512), for tests and benchmarks: false, touching nothing,
 * where this CPU cannot run it or the stride is not 1. */
bool dahl_conv2d_forward_direct_bits(const struct dahl_conv2d_shape *s, int bits, const float *x, const float *w,
                                     const float *b, float *y, float *workspace);
void dahl_conv2d_forward_im2col(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                                float *y, float *workspace);
/* Workspace bytes of the direct forward alone (dahl_conv2d_workspace_bytes covers it). */
size_t dahl_conv2d_direct_workspace_bytes(const struct dahl_conv2d_shape *s);
/* dx = dLoss/dx from dy [F][OH][OW]. OVERWRITES dx [C][H][W]. */
void dahl_conv2d_backward_input(const struct dahl_conv2d_shape *s, const float *dy, const float *w, float *dx,
                                float *workspace);
/* dw += dLoss/dw, db += dLoss/db for this sample (x: the forward input). ACCUMULATES into dw [F][C][KH][KW]
 * and db [F], so per-sample contributions sum up; zero them (dahl_zero) before the first sample. */
void dahl_conv2d_backward_weights(const struct dahl_conv2d_shape *s, const float *x, const float *dy, float *dw,
                                  float *db, float *workspace);
/* forward: 2*C*KH*KW*OH*OW*F (GEMM) + F*OH*OW (bias). */
double dahl_conv2d_forward_flops(const struct dahl_conv2d_shape *s);
/* backward_input: 2*C*KH*KW*OH*OW*F (GEMM) + C*KH*KW*OH*OW (col2im additions). */
double dahl_conv2d_backward_input_flops(const struct dahl_conv2d_shape *s);
/* backward_weights: 2*C*KH*KW*OH*OW*F (GEMM, += included) + F*OH*OW (bias sums). */
double dahl_conv2d_backward_weights_flops(const struct dahl_conv2d_shape *s);
/* forward: 4*(C*H*W + F*C*KH*KW + F + F*OH*OW). */
size_t dahl_conv2d_forward_bytes(const struct dahl_conv2d_shape *s);
/* backward_input: 4*(F*OH*OW + F*C*KH*KW + C*H*W). */
size_t dahl_conv2d_backward_input_bytes(const struct dahl_conv2d_shape *s);
/* backward_weights: 4*(C*H*W + F*OH*OW + 2*F*C*KH*KW + 2*F). */
size_t dahl_conv2d_backward_weights_bytes(const struct dahl_conv2d_shape *s);

/* ---- max-pool (kernels/cpu/pool.c) ---------------------------------------------------------------------
 * x [C][H][W] -> y [C][OH][OW], window K x K, no padding, OH = (H - K) / stride + 1 (same for OW); a
 * trailing row/column that no window covers is ignored. The backward pass RECOMPUTES each window's argmax
 * from the forward input x (no index buffer to keep between tasks); ties go to the first maximum in
 * row-major window order, in both passes. No workspace. */
struct dahl_maxpool_shape {
    int c, h, w;  /* channels, input height, input width */
    int k;        /* window size (K x K) */
    int stride;
    int pad;      /* max-pool only: rows and columns of -infinity around the image, at most k / 2 */
};
bool dahl_maxpool_shape_valid(const struct dahl_maxpool_shape *s);
int dahl_maxpool_out_h(const struct dahl_maxpool_shape *s);
int dahl_maxpool_out_w(const struct dahl_maxpool_shape *s);

/* y = max over each window of x. OVERWRITES y. */
void dahl_maxpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y);
/* Routes dy [C][OH][OW] to the argmax of each window of x. OVERWRITES dx [C][H][W] (zeros where no window's
 * max lies; overlapping windows, stride < K, add up). */
void dahl_maxpool_backward(const struct dahl_maxpool_shape *s, const float *x, const float *dy, float *dx);
/* forward: C*OH*OW*(K*K - 1) comparisons.  backward: C*OH*OW*(K*K - 1) comparisons + C*OH*OW additions. */
double dahl_maxpool_forward_flops(const struct dahl_maxpool_shape *s);
double dahl_maxpool_backward_flops(const struct dahl_maxpool_shape *s);
/* forward: 4*(C*H*W + C*OH*OW).  backward: 4*(C*H*W + C*OH*OW + C*H*W). */
size_t dahl_maxpool_forward_bytes(const struct dahl_maxpool_shape *s);
size_t dahl_maxpool_backward_bytes(const struct dahl_maxpool_shape *s);

/* ---- average pool (kernels/cpu/pool.c) -----------------------------------------------------------------
 * The window geometry of max-pool (struct dahl_maxpool_shape: K x K windows, stride, no padding); each output
 * is its window's mean. A window covering the whole input (K = H = W) is global average pooling. Sums run in
 * row-major window order and the backward pass gathers each input's windows in row-major order too, so the
 * CUDA kernels give the same floats. No workspace. */
/* y = the mean of each window of x. OVERWRITES y. */
void dahl_avgpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y);
/* dx = the sum, over the windows covering each input, of their dy / (K*K). OVERWRITES dx [C][H][W]. */
void dahl_avgpool_backward(const struct dahl_maxpool_shape *s, const float *dy, float *dx);
/* forward: C*OH*OW*K*K (K*K - 1 additions and a division per window).  backward: C*OH*OW*(K*K + 1). */
double dahl_avgpool_forward_flops(const struct dahl_maxpool_shape *s);
double dahl_avgpool_backward_flops(const struct dahl_maxpool_shape *s);
/* forward: 4*(C*H*W + C*OH*OW).  backward: 4*(C*OH*OW + C*H*W). */
size_t dahl_avgpool_forward_bytes(const struct dahl_maxpool_shape *s);
size_t dahl_avgpool_backward_bytes(const struct dahl_maxpool_shape *s);

/* ---- ReLU (kernels/cpu/relu.c), elementwise over n floats, any layout --------------------------------- */
/* y = max(x, 0). OVERWRITES y; y == x (in place) is allowed. */
void dahl_relu_forward(size_t n, const float *x, float *y);
/* dx = dy where the forward OUTPUT y > 0, else 0 (y > 0 exactly where x > 0, and y survives an in-place
 * forward). OVERWRITES dx; dx == dy is allowed. */
void dahl_relu_backward(size_t n, const float *y, const float *dy, float *dx);
/* forward: n (max).  backward: n (compare). */
double dahl_relu_forward_flops(size_t n);
double dahl_relu_backward_flops(size_t n);
/* forward: 4*2n.  backward: 4*3n. */
size_t dahl_relu_forward_bytes(size_t n);
size_t dahl_relu_backward_bytes(size_t n);

/* ---- element-wise add (kernels/cpu/add.c), over n floats, any layout -------------------------------------- */
/* y = a + b. OVERWRITES y. */
void dahl_add_forward(size_t n, const float *a, const float *b, float *y);
/* da = db = dy (the gradient of a sum reaches both terms). OVERWRITES da and db. */
void dahl_add_backward(size_t n, const float *dy, float *da, float *db);
/* forward: n. The backward pass copies (no arithmetic): its perf-model size is n, as dahl_zero's. */
double dahl_add_forward_flops(size_t n);
/* forward: 4*3n.  backward: 4*3n. */
size_t dahl_add_forward_bytes(size_t n);
size_t dahl_add_backward_bytes(size_t n);

/* ---- batch normalisation (kernels/cpu/bn.c), training mode, per channel ----------------------------------
 * Samples are [C][HW]; gamma, beta [C]. The step's statistics are sums, stats [2C + 1] = sum x per channel,
 * sum x^2 per channel, and the count of values each channel's sums cover; mean = sum / count, var = sum x^2 /
 * count - mean^2 (biased), eps 1e-5. dgamma = sum dy xhat and dbeta = sum dy over the step's samples. */
/* ACCUMULATES one sample's sums into stats. */
void dahl_bn_stats(int c, int hw, const float *x, float *stats);
/* Channel ch's mean and 1 / sqrt(var + eps) from stats. */
void dahl_bn_moments(int c, const float *stats, int ch, float *mean, float *inv_std);
/* y = gamma (x - mean) / sqrt(var + eps) + beta over n samples. OVERWRITES y; scratch: 2C floats. */
void dahl_bn_forward(int c, int hw, int n, const float *x, const float *stats, const float *gamma, const float *beta,
                     float *y, float *scratch);
/* The same with the running statistics, running [2C] = mean, variance (evaluation). scratch: C floats. */
void dahl_bn_forward_eval(int c, int hw, int n, const float *x, const float *running, const float *gamma,
                          const float *beta, float *y, float *scratch);
/* ACCUMULATES one sample's dgamma += sum dy xhat and dbeta += sum dy. */
void dahl_bn_backward_params(int c, int hw, const float *x, const float *dy, const float *stats, float *dgamma,
                             float *dbeta);
/* dx = gamma / sqrt(var + eps) / count (count dy - dbeta - xhat dgamma), with the step's sums dgamma and dbeta,
 * over n samples. OVERWRITES dx. */
void dahl_bn_backward_input(int c, int hw, int n, const float *x, const float *dy, const float *stats,
                            const float *gamma, const float *dgamma, const float *dbeta, float *dx);
/* running = 0.9 running + 0.1 (batch mean, unbiased batch variance). UPDATES running [2C]. */
void dahl_bn_running(int c, const float *stats, float *running);
/* per sample: stats 4 C HW, forward 2 C HW, backward_params 5 C HW, backward_input 6 C HW; running 12 C */
double dahl_bn_stats_flops(int c, int hw);
double dahl_bn_forward_flops(int c, int hw);
double dahl_bn_backward_params_flops(int c, int hw);
double dahl_bn_backward_input_flops(int c, int hw);
double dahl_bn_running_flops(int c);
/* per sample, the statistics and parameters counted once: 4 x (stats: C HW + 2C + 1; forward: 2 C HW + 4C + 1;
 * backward_params: 2 C HW + 6C + 1; backward_input: 3 C HW + 5C + 1); running: 4 x (6C + 1) */
size_t dahl_bn_stats_bytes(int c, int hw);
size_t dahl_bn_forward_bytes(int c, int hw);
size_t dahl_bn_backward_params_bytes(int c, int hw);
size_t dahl_bn_backward_input_bytes(int c, int hw);
size_t dahl_bn_running_bytes(int c);

/* ---- inverted dropout (kernels/cpu/dropout.c), over n floats of a step's batch --------------------------------
 * Element `index` (its place in the step's [batch][values] tensor) is dropped with probability percent / 100
 * and kept scaled by 100 / (100 - percent), by a hash of (key, index): no mask is stored, the backward pass
 * recomputes it, and the CUDA kernels drop the same elements. Evaluation is the identity. */
/* The key of a layer's masks at a training step. */
uint64_t dahl_dropout_key(uint64_t seed, int layer, long step);
/* Whether element index is kept (splitmix64's finaliser of key + index; 24 bits against the rate). */
static inline bool dahl_dropout_keep(uint64_t key, uint64_t index, int percent)
{
    uint64_t z = key + (index + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (z >> 40) >= ((uint64_t)percent << 24) / 100;
}
/* y = x kept and scaled, 0 dropped, for elements first .. first + n - 1. OVERWRITES y. */
void dahl_dropout_forward(size_t n, const float *x, float *y, uint64_t key, uint64_t first, int percent);
/* dx = dy kept and scaled, 0 dropped: the forward pass's mask. OVERWRITES dx. */
void dahl_dropout_backward(size_t n, const float *dy, float *dx, uint64_t key, uint64_t first, int percent);
/* n (one multiplication per element) each way; 4*2n bytes. */
double dahl_dropout_flops(size_t n);
size_t dahl_dropout_bytes(size_t n);

/* ---- dense (kernels/cpu/dense.c): fully connected, over n samples at once ---------------------------------
 * x [n][N_in]   w [N_out][N_in]   b [N_out]   y [n][N_out];  y = w x + b. No workspace. Each output element
 * gets the same operations in the same order whatever n is (and whatever the instruction set), so one call
 * over n samples gives the bits of n one-sample calls; w is read once per 4 samples (see dense.c). */
/* OVERWRITES y [n][N_out]. */
void dahl_dense_forward_n(int n_in, int n_out, int n, const float *x, const float *w, const float *b, float *y);
/* dx = w^T dy per sample. OVERWRITES dx [n][N_in]. */
void dahl_dense_backward_input_n(int n_in, int n_out, int n, const float *dy, const float *w, float *dx);
/* dw += sum over samples of dy x^T, db += sum of dy. ACCUMULATES into dw [N_out][N_in] and db [N_out]: sample
 * by sample in order, or (tree) the samples' terms first summed by dahl_group_grads_run's binary tree (the
 * gradients of reduction "manual"), then added. */
void dahl_dense_backward_weights_n(int n_in, int n_out, int n, const float *x, const float *dy, float *dw, float *db,
                                   bool tree);
/* For tests and benchmarks: run the dense kernels' variant `variant` (0 baseline, 1 AVX2, 2 AVX-512; -1: the
 * widest this CPU has, the default). Returns 0, or -1 (nothing changed) for one this CPU cannot run. Not
 * thread-safe: call it before the kernels run. */
int dahl_dense_force_variant(int variant);
/* The same for one sample. */
void dahl_dense_forward(int n_in, int n_out, const float *x, const float *w, const float *b, float *y);
void dahl_dense_backward_input(int n_in, int n_out, const float *dy, const float *w, float *dx);
void dahl_dense_backward_weights(int n_in, int n_out, const float *x, const float *dy, float *dw, float *db);
/* forward: 2*N_in*N_out + N_out.  backward_input: 2*N_in*N_out.  backward_weights: 2*N_in*N_out + N_out. */
double dahl_dense_forward_flops(int n_in, int n_out);
double dahl_dense_backward_input_flops(int n_in, int n_out);
double dahl_dense_backward_weights_flops(int n_in, int n_out);
/* forward: 4*(N_in + N_in*N_out + 2*N_out).  backward_input: 4*(N_out + N_in*N_out + N_in).
 * backward_weights: 4*(N_in + N_out + 2*N_in*N_out + 2*N_out). */
size_t dahl_dense_forward_bytes(int n_in, int n_out);
size_t dahl_dense_backward_input_bytes(int n_in, int n_out);
size_t dahl_dense_backward_weights_bytes(int n_in, int n_out);

/* ---- softmax + cross-entropy, fused (kernels/cpu/softmax_xent.c) --------------------------------------
 * logits [K], label in [0, K). Writes *loss = -log(softmax(logits)[label]), computed as
 * log(sum(exp(l - max))) - (l[label] - max) so large logits (1000 and more) neither overflow nor lose the
 * loss, and dlogits [K] = softmax(logits) - onehot(label): the gradient of THIS sample's loss (averaging over
 * the batch is the caller's, e.g. lr / batch). *correct = 1 when the first argmax of logits is label, else 0.
 * OVERWRITES loss, dlogits and correct; dlogits == logits (in place) is allowed. */
void dahl_softmax_xent(int k, const float *logits, int label, float *loss, float *dlogits, int *correct);
/* K (max and argmax) + 3K (subtract, exp, sum) + K (normalise) + 2 (log, minus onehot) = 5*K + 2. */
double dahl_softmax_xent_flops(int k);
/* 4*(2*K + 3): logits in, dlogits out, label in, loss and correct out. */
size_t dahl_softmax_xent_bytes(int k);

/* ---- SGD (kernels/cpu/sgd.c), elementwise over n parameters -------------------------------------------
 * Without momentum (velocity == NULL or momentum == 0): param -= lr * grad.
 * With momentum (PyTorch's convention): velocity = momentum * velocity + grad; param -= lr * velocity.
 * UPDATES param (and velocity) in place; velocity starts zeroed (dahl_zero) and is owned by the caller. */
void dahl_sgd_update(size_t n, float *param, const float *grad, float *velocity, float lr, float momentum);
/* without momentum: 2n.  with: 4n. */
double dahl_sgd_update_flops(size_t n, bool with_momentum);
/* without momentum: 4*3n (param read+write, grad read).  with: 4*5n (+ velocity read+write). */
size_t dahl_sgd_update_bytes(size_t n, bool with_momentum);

/* ---- reductions for gradients (kernels/cpu/reduce.c), elementwise over n floats ----------------------- */
/* dst += src. ACCUMULATES (the reduction of per-sample gradients). */
void dahl_accumulate(size_t n, float *dst, const float *src);
/* dst = 0. OVERWRITES (the neutral element of dahl_accumulate). */
void dahl_zero(size_t n, float *dst);
/* dst *= alpha. UPDATES in place (e.g. a gradient sum into a mean). */
void dahl_scale(size_t n, float *dst, float alpha);
/* accumulate: n flops, 4*3n bytes.  zero: 0 flops, 4*n bytes.  scale: n flops, 4*2n bytes. */
double dahl_accumulate_flops(size_t n);
size_t dahl_accumulate_bytes(size_t n);
double dahl_zero_flops(size_t n);
size_t dahl_zero_bytes(size_t n);
double dahl_scale_flops(size_t n);
size_t dahl_scale_bytes(size_t n);

#endif /* DAHL_KERNELS_H */

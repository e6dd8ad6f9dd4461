/* Batch normalisation on the GPU (see dahl_bn_* in dahl_kernels.h): the per-sample sums reduce each channel in
 * one block (double partial sums in shared memory, then one addition into the float sums, as the CPU adds its
 * double sum once); the element-wise passes compute their channel's moments from the sums as the CPU does.
 * The sums' order differs from the CPU's, so results match it to rounding, not bit for bit. */
#include "dahl_cuda_common.cuh"

#define BN_THREADS 256
#define BN_EPS 1e-5
#define BN_MOMENTUM 0.1

__device__ static void moments(int c, const float *stats, int ch, float *mean, float *inv_std)
{
    double m = stats[2 * c] > 0 ? (double)stats[2 * c] : 1.0;
    double mu = stats[ch] / m, var = stats[c + ch] / m - mu * mu;
    *mean = (float)mu;
    *inv_std = (float)(1.0 / sqrt((var > 0 ? var : 0) + BN_EPS));
}

/* Block ch sums a and (with b) a * b, or a^2 when b is NULL, over channel ch's hw values. */
__device__ static void block_sums(int hw, const float *a, const float *b, float mean, float inv_std, double *s1,
                                  double *s2)
{
    __shared__ double p1[BN_THREADS], p2[BN_THREADS];
    double x1 = 0.0, x2 = 0.0;
    for (int i = threadIdx.x; i < hw; i += blockDim.x) {
        x1 += a[i];
        x2 += b == NULL ? (double)a[i] * a[i] : (double)a[i] * (double)((b[i] - mean) * inv_std);
    }
    p1[threadIdx.x] = x1;
    p2[threadIdx.x] = x2;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            p1[threadIdx.x] += p1[threadIdx.x + half];
            p2[threadIdx.x] += p2[threadIdx.x + half];
        }
        __syncthreads();
    }
    *s1 = p1[0];
    *s2 = p2[0];
}

__global__ static void stats_kernel(int c, int hw, const float *x, float *stats)
{
    int ch = blockIdx.x;
    double s1, s2;
    block_sums(hw, x + (size_t)ch * hw, NULL, 0, 0, &s1, &s2);
    if (threadIdx.x == 0) {
        stats[ch] += (float)s1;
        stats[c + ch] += (float)s2;
        if (ch == 0)
            stats[2 * c] += (float)hw;
    }
}

__global__ static void params_kernel(int c, int hw, const float *x, const float *dy, const float *stats,
                                     float *dgamma, float *dbeta)
{
    int ch = blockIdx.x;
    float mean, inv_std;
    moments(c, stats, ch, &mean, &inv_std);
    double sg, sgx;
    block_sums(hw, dy + (size_t)ch * hw, x + (size_t)ch * hw, mean, inv_std, &sg, &sgx);
    if (threadIdx.x == 0) {
        dgamma[ch] += (float)sgx;
        dbeta[ch] += (float)sg;
    }
}

__global__ static void forward_kernel(int c, int hw, size_t total, const float *x, const float *stats,
                                      const float *gamma, const float *beta, float *y, int eval)
{
    DAHL_CUDA_FOR(i, total)
    {
        int ch = (int)((i / (size_t)hw) % (size_t)c);
        float mean, inv_std;
        if (eval) {
            mean = stats[ch];
            inv_std = (float)(1.0 / sqrt((double)stats[c + ch] + BN_EPS));
        } else {
            moments(c, stats, ch, &mean, &inv_std);
        }
        float a = gamma[ch] * inv_std, b = beta[ch] - a * mean;
        y[i] = a * x[i] + b;
    }
}

__global__ static void backward_input_kernel(int c, int hw, size_t total, const float *x, const float *dy,
                                             const float *stats, const float *gamma, const float *dgamma,
                                             const float *dbeta, float *dx)
{
    DAHL_CUDA_FOR(i, total)
    {
        int ch = (int)((i / (size_t)hw) % (size_t)c);
        float mean, inv_std, count = stats[2 * c] > 0 ? stats[2 * c] : 1.0f;
        moments(c, stats, ch, &mean, &inv_std);
        float k = gamma[ch] * inv_std / count, xhat = (x[i] - mean) * inv_std;
        dx[i] = k * (count * dy[i] - dbeta[ch] - xhat * dgamma[ch]);
    }
}

__global__ static void running_kernel(int c, const float *stats, float *running)
{
    DAHL_CUDA_FOR(ch, (size_t)c)
    {
        double m = stats[2 * c] > 0 ? (double)stats[2 * c] : 1.0;
        double mu = stats[ch] / m, var = stats[c + ch] / m - mu * mu;
        var = var > 0 ? var : 0;
        double unbiased = m > 1 ? var * m / (m - 1) : var;
        running[ch] = (float)((1 - BN_MOMENTUM) * running[ch] + BN_MOMENTUM * mu);
        running[c + ch] = (float)((1 - BN_MOMENTUM) * running[c + ch] + BN_MOMENTUM * unbiased);
    }
}

int dahl_cuda_bn_stats(int c, int hw, const float *x, float *stats, dahl_cuda_stream stream)
{
    stats_kernel<<<c, BN_THREADS, 0, stream>>>(c, hw, x, stats);
    return dahl_cuda_check_launch("bn stats");
}

int dahl_cuda_bn_forward(int c, int hw, int n, const float *x, const float *stats, const float *gamma,
                         const float *beta, float *y, int eval, dahl_cuda_stream stream)
{
    size_t total = (size_t)n * (size_t)c * (size_t)hw;
    if (total == 0)
        return 0;
    forward_kernel<<<dahl_cuda_blocks(total), DAHL_CUDA_THREADS, 0, stream>>>(c, hw, total, x, stats, gamma, beta,
                                                                               y, eval);
    return dahl_cuda_check_launch("bn forward");
}

int dahl_cuda_bn_backward_params(int c, int hw, const float *x, const float *dy, const float *stats, float *dgamma,
                                 float *dbeta, dahl_cuda_stream stream)
{
    params_kernel<<<c, BN_THREADS, 0, stream>>>(c, hw, x, dy, stats, dgamma, dbeta);
    return dahl_cuda_check_launch("bn backward params");
}

int dahl_cuda_bn_backward_input(int c, int hw, int n, const float *x, const float *dy, const float *stats,
                                const float *gamma, const float *dgamma, const float *dbeta, float *dx,
                                dahl_cuda_stream stream)
{
    size_t total = (size_t)n * (size_t)c * (size_t)hw;
    if (total == 0)
        return 0;
    backward_input_kernel<<<dahl_cuda_blocks(total), DAHL_CUDA_THREADS, 0, stream>>>(c, hw, total, x, dy, stats,
                                                                                      gamma, dgamma, dbeta, dx);
    return dahl_cuda_check_launch("bn backward input");
}

int dahl_cuda_bn_running(int c, const float *stats, float *running, dahl_cuda_stream stream)
{
    running_kernel<<<dahl_cuda_blocks((size_t)c), DAHL_CUDA_THREADS, 0, stream>>>(c, stats, running);
    return dahl_cuda_check_launch("bn running");
}

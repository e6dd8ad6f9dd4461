/* Batch normalisation in training mode (Ioffe and Szegedy, 2015, "Batch Normalization: Accelerating Deep
 * Network Training by Reducing Internal Covariate Shift", algorithms 1 and 2), per channel of samples laid out
 * [C][HW], with the batch statistics held as sums: stats = [sum x (C)][sum x^2 (C)][count], count the values
 * each channel's sums cover (samples x HW). The per-sample functions ACCUMULATE into their sums, so the
 * statistics and the parameter gradients of a step are reduced over its samples exactly as weight gradients
 * are (StarPU's REDUX, or the manual reduction's tree over samples and groups); each sample's term is its own
 * double-precision sum rounded once, the same whatever the grain. */
#include "dahl_kernels.h"

#include <math.h>

#define BN_EPS 1e-5
#define BN_MOMENTUM 0.1 /* running = (1 - m) running + m batch (PyTorch's default) */

void dahl_bn_stats(int c, int hw, const float *x, float *stats)
{
    for (int ch = 0; ch < c; ch++) {
        const float *v = x + (size_t)ch * (size_t)hw;
        double s = 0.0, s2 = 0.0;
        for (int i = 0; i < hw; i++) {
            s += v[i];
            s2 += (double)v[i] * v[i];
        }
        stats[ch] += (float)s;
        stats[c + ch] += (float)s2;
    }
    stats[2 * c] += (float)hw;
}

/* Channel ch's batch mean and (biased) variance from the sums. */
static void moments(int c, const float *stats, int ch, double *mean, double *var)
{
    double m = stats[2 * c] > 0 ? (double)stats[2 * c] : 1.0;
    *mean = stats[ch] / m;
    double v = stats[c + ch] / m - *mean * *mean;
    *var = v > 0 ? v : 0;
}

void dahl_bn_moments(int c, const float *stats, int ch, float *mean, float *inv_std)
{
    double mu, var;
    moments(c, stats, ch, &mu, &var);
    *mean = (float)mu;
    *inv_std = (float)(1.0 / sqrt(var + BN_EPS));
}

/* y = gamma (x - mean) inv_std + beta over n samples, with the moments of each channel given. */
static void normalise(int c, int hw, int n, const float *x, const float *mean, const float *inv_std,
                      const float *gamma, const float *beta, float *y)
{
    for (int s = 0; s < n; s++)
        for (int ch = 0; ch < c; ch++) {
            size_t at = ((size_t)s * (size_t)c + (size_t)ch) * (size_t)hw;
            float a = gamma[ch] * inv_std[ch], b = beta[ch] - a * mean[ch];
            for (int i = 0; i < hw; i++)
                y[at + i] = a * x[at + i] + b;
        }
}

void dahl_bn_forward(int c, int hw, int n, const float *x, const float *stats, const float *gamma, const float *beta,
                     float *y, float *scratch)
{
    float *mean = scratch, *inv_std = scratch + c;
    for (int ch = 0; ch < c; ch++)
        dahl_bn_moments(c, stats, ch, &mean[ch], &inv_std[ch]);
    normalise(c, hw, n, x, mean, inv_std, gamma, beta, y);
}

void dahl_bn_forward_eval(int c, int hw, int n, const float *x, const float *running, const float *gamma,
                          const float *beta, float *y, float *scratch)
{
    float *inv_std = scratch;
    for (int ch = 0; ch < c; ch++)
        inv_std[ch] = (float)(1.0 / sqrt((double)running[c + ch] + BN_EPS));
    normalise(c, hw, n, x, running, inv_std, gamma, beta, y);
}

void dahl_bn_backward_params(int c, int hw, const float *x, const float *dy, const float *stats, float *dgamma,
                             float *dbeta)
{
    for (int ch = 0; ch < c; ch++) {
        float mean, inv_std;
        dahl_bn_moments(c, stats, ch, &mean, &inv_std);
        const float *v = x + (size_t)ch * (size_t)hw, *g = dy + (size_t)ch * (size_t)hw;
        double sg = 0.0, sgx = 0.0;
        for (int i = 0; i < hw; i++) {
            sg += g[i];
            sgx += (double)g[i] * (double)((v[i] - mean) * inv_std);
        }
        dgamma[ch] += (float)sgx;
        dbeta[ch] += (float)sg;
    }
}

void dahl_bn_backward_input(int c, int hw, int n, const float *x, const float *dy, const float *stats,
                            const float *gamma, const float *dgamma, const float *dbeta, float *dx)
{
    float count = stats[2 * c] > 0 ? stats[2 * c] : 1.0f;
    for (int ch = 0; ch < c; ch++) {
        float mean, inv_std;
        dahl_bn_moments(c, stats, ch, &mean, &inv_std);
        float k = gamma[ch] * inv_std / count, mg = dbeta[ch], mgx = dgamma[ch];
        for (int s = 0; s < n; s++) {
            size_t at = ((size_t)s * (size_t)c + (size_t)ch) * (size_t)hw;
            for (int i = 0; i < hw; i++) {
                float xhat = (x[at + i] - mean) * inv_std;
                dx[at + i] = k * (count * dy[at + i] - mg - xhat * mgx);
            }
        }
    }
}

void dahl_bn_running(int c, const float *stats, float *running)
{
    double m = stats[2 * c];
    for (int ch = 0; ch < c; ch++) {
        double mean, var;
        moments(c, stats, ch, &mean, &var);
        double unbiased = m > 1 ? var * m / (m - 1) : var;
        running[ch] = (float)((1 - BN_MOMENTUM) * running[ch] + BN_MOMENTUM * mean);
        running[c + ch] = (float)((1 - BN_MOMENTUM) * running[c + ch] + BN_MOMENTUM * unbiased);
    }
}

double dahl_bn_stats_flops(int c, int hw)
{
    return 4.0 * c * hw;
}

double dahl_bn_forward_flops(int c, int hw)
{
    return 2.0 * c * hw;
}

double dahl_bn_backward_params_flops(int c, int hw)
{
    return 5.0 * c * hw;
}

double dahl_bn_backward_input_flops(int c, int hw)
{
    return 6.0 * c * hw;
}

double dahl_bn_running_flops(int c)
{
    return 12.0 * c;
}

size_t dahl_bn_stats_bytes(int c, int hw)
{
    return sizeof(float) * ((size_t)c * hw + 2 * (size_t)c + 1);
}

size_t dahl_bn_forward_bytes(int c, int hw)
{
    return sizeof(float) * (2 * (size_t)c * hw + 4 * (size_t)c + 1);
}

size_t dahl_bn_backward_params_bytes(int c, int hw)
{
    return sizeof(float) * (2 * (size_t)c * hw + 6 * (size_t)c + 1);
}

size_t dahl_bn_backward_input_bytes(int c, int hw)
{
    return sizeof(float) * (3 * (size_t)c * hw + 5 * (size_t)c + 1);
}

size_t dahl_bn_running_bytes(int c)
{
    return sizeof(float) * (6 * (size_t)c + 1);
}

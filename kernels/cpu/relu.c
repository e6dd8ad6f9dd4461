/* ReLU forward and backward, elementwise over n floats (any tensor, any layout). The backward pass reads the
 * forward OUTPUT, so the forward may run in place on its input.
 *
 * Branch-free on purpose: written as `x > 0 ? x : 0`, GCC -O2 compiles a compare and a jump per element, and
 * on activations whose signs look random half of those jumps are mispredicted. A ReLU of 4704 floats then
 * took 12-20 us on this project's machine depending on the data and on the run, so its perf-model entry
 * held for one setup and not the next. The SSE form below gives the same floats (MAXPS returns its second
 * operand, 0, for NaN and for -0 against 0, as the ternary does) in a time that depends on n only. */
#include "dahl_kernels.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void dahl_relu_forward(size_t n, const float *x, float *y)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128 zero = _mm_setzero_ps();
    for (; i + 4 <= n; i += 4)
        _mm_storeu_ps(y + i, _mm_max_ps(_mm_loadu_ps(x + i), zero));
#endif
    for (; i < n; i++) {
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}

void dahl_relu_backward(size_t n, const float *y, const float *dy, float *dx)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128 zero = _mm_setzero_ps();
    for (; i + 4 <= n; i += 4) {
        const __m128 on = _mm_cmpgt_ps(_mm_loadu_ps(y + i), zero);
        _mm_storeu_ps(dx + i, _mm_and_ps(on, _mm_loadu_ps(dy + i)));
    }
#endif
    for (; i < n; i++) {
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    }
}

double dahl_relu_forward_flops(size_t n)
{
    return (double)n;
}

double dahl_relu_backward_flops(size_t n)
{
    return (double)n;
}

size_t dahl_relu_forward_bytes(size_t n)
{
    return sizeof(float) * 2 * n;
}

size_t dahl_relu_backward_bytes(size_t n)
{
    return sizeof(float) * 3 * n;
}

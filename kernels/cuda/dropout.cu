/* Inverted dropout on the GPU (see dahl_dropout_* in dahl_kernels.h): the same hash of (key, index) as the
 * CPU, so the same elements are kept and the results are identical bit for bit. Forward and backward are the
 * same operation: out = in kept and scaled, 0 dropped. */
#include "dahl_cuda_common.cuh"

__global__ static void dropout_kernel(size_t n, const float *in, float *out, uint64_t key, uint64_t first,
                                      int percent, float scale)
{
    DAHL_CUDA_FOR(i, n)
    {
        uint64_t z = key + (first + i + 1) * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        out[i] = (z >> 40) >= ((uint64_t)percent << 24) / 100 ? in[i] * scale : 0.0f;
    }
}

int dahl_cuda_dropout(size_t n, const float *in, float *out, uint64_t key, uint64_t first, int percent,
                      dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    dropout_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, in, out, key, first, percent,
                                                                           100.0f / (float)(100 - percent));
    return dahl_cuda_check_launch("dropout");
}

/* Shared by the .cu files of kernels/cuda/ only: launch geometry for grid-stride loops, and recording a
 * failed launch or cuBLAS call as the text dahl_cuda_error() returns. */
#ifndef DAHL_CUDA_COMMON_CUH
#define DAHL_CUDA_COMMON_CUH

#include "dahl_kernels_cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stddef.h>

/* 256 threads a block; at most 4096 blocks, the grid-stride loops cover the rest (enough to fill an H100's
 * 132 SMs many times over, few enough that small tensors do not pay for empty blocks). */
#define DAHL_CUDA_THREADS 256

static inline unsigned dahl_cuda_blocks(size_t n)
{
    const size_t blocks = (n + DAHL_CUDA_THREADS - 1) / DAHL_CUDA_THREADS;
    return blocks > 4096 ? 4096u : (unsigned)blocks;
}

/* Records "<what>: <detail>" as this thread's last error; returns -1 for the caller to return. */
int dahl_cuda_fail(const char *what, const char *detail);

/* After a kernel launch: -1 (recorded) when the launch was refused. */
static inline int dahl_cuda_check_launch(const char *what)
{
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? 0 : dahl_cuda_fail(what, cudaGetErrorString(err));
}

static inline int dahl_cuda_check(const char *what, cudaError_t err)
{
    return err == cudaSuccess ? 0 : dahl_cuda_fail(what, cudaGetErrorString(err));
}

static inline int dahl_cuda_check_blas(const char *what, cublasStatus_t status)
{
    return status == CUBLAS_STATUS_SUCCESS ? 0 : dahl_cuda_fail(what, cublasGetStatusString(status));
}

/* Grid-stride loop over [0, n). */
#define DAHL_CUDA_FOR(i, n)                                                                                   \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

#endif /* DAHL_CUDA_COMMON_CUH */

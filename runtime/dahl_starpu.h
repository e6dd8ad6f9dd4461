/* The one place where the StarPU flavour shows: native (kernels really run) or SimGrid (StarPU replays
 * perf models on a simulated platform). Runtime sources include this instead of testing STARPU_SIMGRID. */
#ifndef DAHL_STARPU_H
#define DAHL_STARPU_H

#include <starpu.h>

#include "cuda/dahl_kernels_cuda.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef STARPU_SIMGRID
/* Simulated: kernels never run, data is never really allocated (folded pages: shapes without memory). */
#define DAHL_SIMULATED 1
#define DAHL_MALLOC_FLAGS STARPU_MALLOC_SIMULATION_FOLDED
#else
#define DAHL_SIMULATED 0
/* Pinned host memory where GPUs may copy from it: CUDA copies it asynchronously (DAHL_CUDA is defined
 * below; macros expand where they are used). */
#define DAHL_MALLOC_FLAGS (DAHL_CUDA ? STARPU_MALLOC_PINNED : 0)
#endif

/* StarPU-MPI builds (the sim-mpi and native-mpi flavours): several nodes, one MPI rank each. */
#ifdef STARPU_USE_MPI
#define DAHL_MPI 1
#else
#define DAHL_MPI 0
#endif

/* ---- CUDA ----------------------------------------------------------------------------------------------
 * DAHL_CUDA: a native build whose StarPU has CUDA workers and which has dahl's CUDA kernels (kernels/cuda/,
 * built where CMake found nvcc and such a StarPU: DAHL_HAVE_CUDA_KERNELS). */
#if !DAHL_SIMULATED && defined(STARPU_USE_CUDA) && defined(DAHL_HAVE_CUDA_KERNELS)
#define DAHL_CUDA 1
#include <starpu_cublas_v2.h>
#else
#define DAHL_CUDA 0
#endif

/* The CUDA implementation of a dahl codelet. Each codelet file defines its wrappers as
 *     DAHL_CUDA_WRAPPER relu_forward_cuda(void *buffers[], void *cl_arg) { ... }
 * and names them in its designated initializer as `DAHL_CUDA_FUNCS(relu_forward_cuda),`, which gives:
 * - native with CUDA: the wrapper, flagged STARPU_CUDA_ASYNC (it only enqueues on the worker's stream, and
 *   StarPU waits for the stream, so transfers and the next task's launch overlap the kernels);
 * - SimGrid: StarPU-SimGrid simulates CUDA workers only for codelets that declare a CUDA function, and never
 *   runs a task's kernel (the perf model gives its duration), so each codelet declares
 *   dahl_simulated_cuda_func, which does nothing. StarPU does call one directly: the init (dahl_zero) of a
 *   REDUX gradient's per-GPU copy, where there is no data to touch under SimGrid, so doing nothing is right;
 * - native without CUDA: none.
 * Wrappers are `static inline`: compilers emit no code for an unreferenced static inline function, so where
 * DAHL_CUDA_FUNCS drops the name the kernels it calls need no definition at link time; yet the wrapper is
 * still compiled, so every build (CI's CPU-only ones too) type-checks the CUDA wrappers. */
#define DAHL_CUDA_WRAPPER static inline __attribute__((unused)) void
#if DAHL_SIMULATED
void dahl_simulated_cuda_func(void *buffers[], void *cl_arg);
#define DAHL_CUDA_FUNCS(wrapper) .cuda_funcs = {dahl_simulated_cuda_func}
#elif DAHL_CUDA
#define DAHL_CUDA_FUNCS(wrapper) .cuda_funcs = {wrapper}, .cuda_flags = {STARPU_CUDA_ASYNC}
#else
#define DAHL_CUDA_FUNCS(wrapper) .cuda_funcs = {NULL}
#endif

/* Inside a CUDA wrapper: the worker's stream and StarPU's cuBLAS handle for it (dahl_cuda_start). Builds
 * without CUDA only declare them, for the wrappers they never emit (see DAHL_CUDA_WRAPPER). */
#if DAHL_CUDA
static inline dahl_cuda_stream dahl_cuda_local_stream(void)
{
    return starpu_cuda_get_local_stream();
}
static inline dahl_cublas dahl_cuda_local_blas(void)
{
    return starpu_cublas_get_local_handle();
}
#else
dahl_cuda_stream dahl_cuda_local_stream(void);
dahl_cublas dahl_cuda_local_blas(void);
#endif

/* A refused kernel launch means a broken device or a dahl bug, and a codelet cannot return an error: stop
 * with the kernel's message, as StarPU's own STARPU_CUDA_REPORT_ERROR does. */
static inline void dahl_cuda_must(int ret)
{
    if (ret != 0) {
        fprintf(stderr, "dahl: error: CUDA kernel failed: %s\n", dahl_cuda_error());
        abort();
    }
}

/* After starpu_init / before starpu_shutdown: StarPU's cuBLAS handles, one per CUDA worker, bound to the
 * worker's stream (nothing to do without CUDA). */
static inline void dahl_cuda_start(void)
{
#if DAHL_CUDA
    starpu_cublas_init();
#endif
}
static inline void dahl_cuda_stop(void)
{
#if DAHL_CUDA
    starpu_cublas_shutdown();
#endif
}

/* Checks a StarPU return code inside the runtime: returns it (negative) from the calling function. */
#define DAHL_CHECK_STARPU(call)                                                                            \
    do {                                                                                                   \
        int dahl_ret_ = (call);                                                                            \
        if (dahl_ret_ < 0)                                                                                 \
            return dahl_ret_;                                                                              \
    } while (0)

/* starpu_task_wait_for_all() where the caller cannot return an error (teardown, accessors): it only fails,
 * with -EDEADLK, when called from a task or a callback, which is a bug in dahl; say where and abort. */
static inline void dahl_wait_for_all(const char *who)
{
    int ret = starpu_task_wait_for_all();
    if (ret != 0) {
        fprintf(stderr, "dahl: %s: starpu_task_wait_for_all: error %d (called from a task or a callback?)\n", who,
                ret);
        abort();
    }
}

#endif /* DAHL_STARPU_H */

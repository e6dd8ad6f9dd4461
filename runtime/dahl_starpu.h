/* The one place where the StarPU flavour shows: native (kernels really run) or SimGrid (StarPU replays
 * perf models on a simulated platform). Runtime sources include this instead of testing STARPU_SIMGRID. */
#ifndef DAHL_STARPU_H
#define DAHL_STARPU_H

#include <starpu.h>

#ifdef STARPU_SIMGRID
/* Simulated: kernels never run, data is never really allocated (folded pages: shapes without memory). */
#define DAHL_SIMULATED 1
#define DAHL_MALLOC_FLAGS STARPU_MALLOC_SIMULATION_FOLDED
#else
#define DAHL_SIMULATED 0
#define DAHL_MALLOC_FLAGS 0
#endif

/* The CUDA implementation every dahl codelet declares, as `DAHL_CUDA_FUNCS,` in its designated initializer.
 * SimGrid build: StarPU-SimGrid simulates CUDA workers only for codelets that declare a CUDA function, and
 * never runs a task's kernel (the perf model gives its duration), so each codelet declares
 * dahl_simulated_cuda_func, which does nothing. StarPU does call one directly: the init (dahl_zero) of a
 * REDUX gradient's per-GPU copy, where there is no data to touch under SimGrid, so doing nothing is right.
 * Native build: CPU only until the CUDA kernels exist. */
#if DAHL_SIMULATED
void dahl_simulated_cuda_func(void *buffers[], void *cl_arg);
#define DAHL_CUDA_FUNCS .cuda_funcs = {dahl_simulated_cuda_func}
#else
#define DAHL_CUDA_FUNCS .cuda_funcs = {NULL}
#endif

/* Checks a StarPU return code inside the runtime: returns it (negative) from the calling function. */
#define DAHL_CHECK_STARPU(call)                                                                            \
    do {                                                                                                   \
        int dahl_ret_ = (call);                                                                            \
        if (dahl_ret_ < 0)                                                                                 \
            return dahl_ret_;                                                                              \
    } while (0)

#endif /* DAHL_STARPU_H */

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

/* Checks a StarPU return code inside the runtime: returns it (negative) from the calling function. */
#define DAHL_CHECK_STARPU(call)                                                                            \
    do {                                                                                                   \
        int dahl_ret_ = (call);                                                                            \
        if (dahl_ret_ < 0)                                                                                 \
            return dahl_ret_;                                                                              \
    } while (0)

#endif /* DAHL_STARPU_H */

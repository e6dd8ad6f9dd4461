/* The per-thread error text of the dahl CUDA kernels: StarPU runs each CUDA worker on its own thread, so one
 * worker's failure never overwrites another's message before it is printed. */
#include "dahl_cuda_common.cuh"

#include <stdio.h>

static thread_local char last_error[256];

int dahl_cuda_fail(const char *what, const char *detail)
{
    snprintf(last_error, sizeof(last_error), "%s: %s", what, detail);
    return -1;
}

const char *dahl_cuda_error(void)
{
    return last_error;
}

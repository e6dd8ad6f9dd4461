/* Process-wide BLAS setup for the kernels: OpenBLAS runs single-threaded, because the runtime already puts
 * one StarPU worker on each core and calls a kernel per task. */
#include "dahl_kernels.h"

#include <cblas.h>

void dahl_kernels_init(void)
{
    openblas_set_num_threads(1);
}

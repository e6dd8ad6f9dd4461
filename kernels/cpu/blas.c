/* Process-wide BLAS setup for the kernels: OpenBLAS runs single-threaded, because the runtime already puts
 * one StarPU worker on each core and calls a kernel per task. */
#include "dahl_kernels.h"

#include <cblas.h>
#include <stdio.h>

void dahl_kernels_init(void)
{
    openblas_set_num_threads(1);
}

const char *dahl_kernels_blas_info(void)
{
    static char info[128];
    int threads = openblas_get_num_threads();
    snprintf(info, sizeof(info), "OpenBLAS %s, %d thread%s", openblas_get_corename(), threads, threads == 1 ? "" : "s");
    return info;
}

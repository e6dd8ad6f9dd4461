/* The probe task graph: see dahl_probe.h. */
#include "dahl_probe.h"

#include "dahl_codelets.h"
#include "dahl_engine.h"
#include "dahl_starpu.h"
#include "dahl_tensor.h"

#include <errno.h>
#include <stdlib.h>

int dahl_probe_run(int ntasks, double duration_us, double *makespan_us)
{
    if (ntasks < 1 || duration_us < 0)
        return -EINVAL;
    DAHL_CHECK_STARPU(starpu_task_wait_for_all());
    const double start = dahl_engine_now_us();
    for (int i = 0; i < ntasks; i++)
        DAHL_CHECK_STARPU(dahl_insert_probe(duration_us));
    DAHL_CHECK_STARPU(starpu_task_wait_for_all());
    *makespan_us = dahl_engine_now_us() - start;
    return 0;
}

int dahl_probe_empty_run(int ntasks, int nhandles, double *makespan_us)
{
    if (ntasks < 1 || nhandles < 1)
        return -EINVAL;
    struct dahl_tensor **t = calloc((size_t)nhandles + 1, sizeof(*t));
    if (t == NULL)
        return -ENOMEM;
    int ret = 0;
    for (int i = 0; i <= nhandles && ret == 0; i++)
        if ((t[i] = dahl_tensor_create(1, (const int[]){1})) == NULL)
            ret = -ENOMEM;
    if (ret == 0)
        ret = starpu_task_wait_for_all();
    if (ret == 0) {
        const double start = dahl_engine_now_us();
        for (int i = 0; i < ntasks && ret == 0; i++)
            ret = dahl_insert_empty(t[nhandles], t[i % nhandles]);
        int wret = starpu_task_wait_for_all();
        *makespan_us = dahl_engine_now_us() - start;
        ret = ret != 0 ? ret : wret;
    }
    for (int i = 0; i <= nhandles; i++)
        if (t[i] != NULL)
            dahl_tensor_destroy(t[i]);
    free(t);
    return ret;
}

double dahl_probe_ideal_us(int ntasks, double duration_us, int nworkers)
{
    if (nworkers < 1)
        return 0;
    return (double)((ntasks + nworkers - 1) / nworkers) * duration_us;
}

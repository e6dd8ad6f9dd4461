/* The probe task graph: see dahl_probe.h. */
#include "dahl_probe.h"

#include "dahl_codelets.h"
#include "dahl_engine.h"
#include "dahl_starpu.h"

#include <errno.h>

int dahl_probe_run(int ntasks, double duration_us, double *makespan_us)
{
    if (ntasks < 1 || duration_us < 0)
        return -EINVAL;
    starpu_task_wait_for_all();
    const double start = dahl_engine_now_us();
    for (int i = 0; i < ntasks; i++)
        DAHL_CHECK_STARPU(dahl_insert_probe(duration_us));
    DAHL_CHECK_STARPU(starpu_task_wait_for_all());
    *makespan_us = dahl_engine_now_us() - start;
    return 0;
}

double dahl_probe_ideal_us(int ntasks, double duration_us, int nworkers)
{
    if (nworkers < 1)
        return 0;
    return (double)((ntasks + nworkers - 1) / nworkers) * duration_us;
}

/* StarPU start/stop for dahl, identical in both flavours: the configuration a run asks for (worker counts,
 * policy) is applied through struct starpu_conf, so the environment cannot silently override it. */
#include "dahl_engine.h"

#include "dahl_starpu.h"

#include <errno.h>
#include <stdlib.h>

static bool engine_started;

struct dahl_engine_conf dahl_engine_conf_default(void)
{
    return (struct dahl_engine_conf){.ncpu = -1, .ngpu = -1, .sched = NULL};
}

int dahl_engine_start(const struct dahl_engine_conf *conf)
{
    struct starpu_conf sconf;
    DAHL_CHECK_STARPU(starpu_conf_init(&sconf));
    if (conf->ncpu >= 0) {
        sconf.ncpus = conf->ncpu;
        unsetenv("STARPU_NCPU");
        unsetenv("STARPU_NCPUS");
    }
    if (conf->ngpu >= 0) {
        sconf.ncuda = conf->ngpu;
        unsetenv("STARPU_NCUDA");
    }
    if (conf->sched != NULL) {
        /* STARPU_SCHED would override the policy the run asked for. */
        unsetenv("STARPU_SCHED");
        sconf.sched_policy_name = conf->sched;
    }
    sconf.nopencl = 0;
    int ret = starpu_init(&sconf);
    if (ret != 0)
        return ret < 0 ? ret : -ENODEV;
    engine_started = true;
    return 0;
}

void dahl_engine_stop(void)
{
    if (!engine_started)
        return;
    starpu_task_wait_for_all();
    starpu_shutdown();
    engine_started = false;
}

double dahl_engine_now_us(void)
{
    return starpu_timing_now();
}

int dahl_engine_ncpu(void)
{
    return (int)starpu_cpu_worker_get_count();
}

int dahl_engine_ngpu(void)
{
    return (int)starpu_cuda_worker_get_count();
}

bool dahl_engine_is_simulated(void)
{
    return DAHL_SIMULATED;
}

#define DAHL_STR_(x) #x
#define DAHL_STR(x) DAHL_STR_(x)

const char *dahl_engine_starpu_version(void)
{
    return DAHL_STR(STARPU_MAJOR_VERSION) "." DAHL_STR(STARPU_MINOR_VERSION) "." DAHL_STR(STARPU_RELEASE_VERSION);
}

const char *dahl_engine_flavour(void)
{
    return DAHL_FLAVOUR_NAME;
}

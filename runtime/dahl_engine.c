/* StarPU start/stop for dahl, identical in both flavours: the configuration a run asks for (worker counts,
 * policy) is applied through struct starpu_conf, so the environment cannot silently override it. */
#include "dahl_engine.h"
#include "dahl_codelets.h"
#include "dahl_light.h"
#include "dahl_profile_starpu.h"
#include "dahl_progress.h"

#include "dahl_sched_starpu.h"
#include "dahl_schedcost_starpu.h"
#include "dahl_starpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef STARPU_SIMGRID
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/plugins/energy.h>
#include <simgrid/version.h>
#endif
#if DAHL_MPI
#include <starpu_mpi.h>
#endif

#define DAHL_STR_(x) #x
#define DAHL_STR(x) DAHL_STR_(x)

static bool engine_started;
static bool engine_profiling;

/* The submitting thread's cost (dahl_engine_charge_submission). */
static struct {
    enum dahl_submit_charge where;
    double task_s;            /* per submitted task */
    double copy_bytes_per_s;  /* input copies */
    unsigned next;            /* DAHL_SUBMIT_WORKER_CORES: the worker core charged next */
    int ncores;               /* ... among CPU0 .. CPU<ncores-1> */
#if DAHL_SIMULATED
    sg_host_t cores[STARPU_MAXCPUS]; /* ... their hosts, looked up once */
#endif
    char host_prefix[32];     /* "" or, multi-node, StarPU's prefix of this rank's hosts ("StarPU-MPI3-") */
} submit;

/* The SimGrid host StarPU names `name` ("CPU0", ...) in this process: under StarPU-MPI each rank's machine
 * is a copy whose host names carry the rank (StarPU's _starpu_simgrid_get_host_by_name). */
#if DAHL_SIMULATED
static sg_host_t submit_host(const char *name)
{
    char full[64];
    snprintf(full, sizeof(full), "%s%s", submit.host_prefix, name);
    return sg_host_by_name(full);
}
#endif

struct dahl_engine_conf dahl_engine_conf_default(void)
{
    return (struct dahl_engine_conf){
        .ncpu = -1, .ngpu = -1, .sched = NULL, .profiling = false, .worker_us_per_task = -1};
}

int dahl_engine_rank_before_start(void)
{
#if DAHL_SIMULATED && DAHL_MPI
    /* SMPI gives each rank's actor a "rank" property; StarPU-SimGrid runs main in an actor of its own, whose
     * parent that is. */
    const char *rank = sg_actor_get_property_value(sg_actor_self(), "rank");
    sg_actor_t parent = rank == NULL ? sg_actor_by_pid(sg_actor_self_get_ppid()) : NULL;
    if (parent != NULL)
        rank = sg_actor_get_property_value(parent, "rank");
    return rank != NULL ? atoi(rank) : -1;
#else
    return -1;
#endif
}

int dahl_engine_start(const struct dahl_engine_conf *base)
{
    /* Several nodes of different machines: this rank's own workers and costs. */
    struct dahl_engine_conf own = *base;
    const struct dahl_engine_conf *conf = &own;
    int rank = base->ranks != NULL ? dahl_engine_rank_before_start() : -1;
    if (base->ranks != NULL && (rank < 0 || rank >= base->nranks))
        return -EINVAL;
    if (rank >= 0) {
        const struct dahl_engine_rank_conf *r = &base->ranks[rank];
        own.ncpu = r->ncpu;
        own.ngpu = r->ngpu;
        own.submit_us_per_task = r->submit_us_per_task;
        own.input_copy_bytes_per_s = r->input_copy_bytes_per_s;
        own.sched_push_us = r->sched_push_us;
        own.worker_us_per_task = r->worker_us_per_task;
    }
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
        /* StarPU 1.3.10's heteroprio aborts unless the program maps its buckets: dahl does (dahl_sched.c). */
        if (strcmp(conf->sched, "heteroprio") == 0) {
            int ret = conf->heteroprio != NULL ? dahl_sched_configure(&sconf, conf->heteroprio) : -EINVAL;
            if (ret != 0)
                return ret;
        }
    }
    sconf.nopencl = 0;
#if DAHL_SIMULATED
    if (conf->sched_gamma > 0) {
        char gamma[64];
        snprintf(gamma, sizeof(gamma), "%.17g", conf->sched_gamma);
        setenv("STARPU_SCHED_GAMMA", gamma, 1);
    }
#endif
    dahl_schedcost_wrap(&sconf, DAHL_SIMULATED ? conf->sched_push_us : 0,
                        DAHL_SIMULATED ? conf->worker_us_per_task : 0);
#if DAHL_SIMULATED
    /* The measured per-task cost replaces StarPU-SimGrid's 1 us sleep per input fetched. */
    if (conf->worker_us_per_task >= 0)
        setenv("STARPU_SIMGRID_FETCHING_INPUT_COST", "0", 1);
#endif
    /* StarPU is built with FxT, which traces every task by default (STARPU_FXT_TRACE=1): gigabytes of
     * /tmp/prof_file_* per training epoch, and slower runs. Off unless the environment asks for it. */
    setenv("STARPU_FXT_TRACE", "0", 0);
    /* A submission window. dahl submits a whole epoch without waiting; StarPU keeps about 1 KB per
     * submitted task until it runs, so memory grew with the run's length (measured: 400 000 empty tasks,
     * 356 MiB natively; a simulated 512x512x3 LeNet run of 315 000 tasks, 1.4 GB), since under SimGrid
     * submission takes no time and every task is pending at once. 65 536 tasks is many training steps
     * ahead (a LeNet step is 12 tasks per sample), so the schedulers see the same ready tasks: simulated
     * makespans came out identical to the last bit with and without it. The environment can override. */
    setenv("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "65536", 0);
    setenv("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "57344", 0);
    submit.where = DAHL_SUBMIT_NOT_CHARGED;
#if DAHL_SIMULATED
    /* The measured cost replaces StarPU-SimGrid's fixed 1 us per submitted task, which it sleeps (takes no
     * CPU). */
    if (conf->submit_us_per_task > 0) {
        setenv("STARPU_SIMGRID_TASK_SUBMIT_COST", "0", 1);
        submit.task_s = conf->submit_us_per_task * 1e-6;
        submit.copy_bytes_per_s = conf->input_copy_bytes_per_s;
        submit.where = DAHL_SUBMIT_OWN_CORE; /* until the workers are known, below */
    }
#endif
#if DAHL_MPI
    /* StarPU-MPI builds: StarPU first, then MPI (initialised by StarPU-MPI, whose progression thread makes
     * every MPI call), one rank per node. */
    int ret = starpu_mpi_init_conf(NULL, NULL, 1, MPI_COMM_WORLD, &sconf);
#else
    int ret = starpu_init(&sconf);
#endif
    if (ret != 0)
        return ret < 0 ? ret : -ENODEV;
    dahl_profile_hooks_install();
    dahl_cuda_start();
#if DAHL_SIMULATED
    /* StarPU's own buffers in main memory (REDUX per-worker copies, a partitioned tensor gathered back) are
     * never read in simulation: fold them like dahl's tensors, or a 512x512 LeNet's 120 MB gradient costs
     * real memory at each of them. */
    for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++)
        if (starpu_node_get_kind(node) == STARPU_CPU_RAM)
            starpu_malloc_on_node_set_default_flags(node, STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT |
                                                              STARPU_MALLOC_SIMULATION_FOLDED);
#endif
#if DAHL_SIMULATED
    submit.host_prefix[0] = '\0'; /* for submit_host: the submission charge and the energy models */
#if DAHL_MPI
    int world_rank = 0;
    starpu_mpi_comm_rank(MPI_COMM_WORLD, &world_rank);
    snprintf(submit.host_prefix, sizeof(submit.host_prefix), "StarPU-MPI%d-", world_rank);
#endif
    /* The platform has one CPU host per core. Natively every worker thread, CUDA ones included, holds a core;
     * when none is left (or the rank shares its machine: mpi_progress "shared"), the submitting thread and
     * StarPU-MPI's progression thread share theirs (the kernel's scheduler gives each a turn), which made
     * 28x28 runs on 2 cores 10-15 % slower than simulated without the submission's share. */
    int cores = 0;
    char name[32];
    while (snprintf(name, sizeof(name), "CPU%d", cores), submit_host(name) != NULL)
        cores++;
    int ncpu = (int)starpu_cpu_worker_get_count();
    bool cores_full = ncpu > 0 && ncpu + (int)starpu_cuda_worker_get_count() >= cores;
#if DAHL_MPI
    dahl_progress_start(conf->mpi_progress, cores_full, submit.host_prefix, ncpu);
#endif
    if (submit.where != DAHL_SUBMIT_NOT_CHARGED) {
        bool shared = ncpu > 0 && (cores_full || (DAHL_MPI && conf->mpi_progress == DAHL_PROGRESS_SHARED));
        submit.where = shared ? DAHL_SUBMIT_WORKER_CORES : DAHL_SUBMIT_OWN_CORE;
        submit.ncores = ncpu;
        submit.next = 0;
        for (int i = 0; i < ncpu; i++) { /* StarPU has at most STARPU_MAXCPUS CPU workers */
            snprintf(name, sizeof(name), "CPU%d", i);
            submit.cores[i] = submit_host(name);
        }
    }
#elif DAHL_MPI
    dahl_progress_start(conf->mpi_progress, false, "", 0); /* natively: counts only */
#endif
#if DAHL_SIMULATED
    if (conf->sched_gamma > 0) {
        /* the extra watts of a loaded CPU core and GPU over idle ones: what one more task costs */
        double w[2] = {0, 0};
        const char *names[2] = {"CPU0", "CUDA0"};
        for (int i = 0; i < 2; i++) {
            sg_host_t h = submit_host(names[i]);
            const char *watts = h != NULL ? sg_host_get_property_value(h, "wattage_per_state") : NULL;
            double idle, full;
            if (watts != NULL && sscanf(watts, "%lf:%lf", &idle, &full) == 2)
                w[i] = full - idle;
        }
        dahl_codelets_set_energy_watts(w[0], w[1]);
    }
#endif
    engine_started = true;
    engine_profiling = conf->profiling;
    if (conf->profiling)
        starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    return 0;
}

void dahl_engine_stop(void)
{
    if (!engine_started)
        return;
    dahl_wait_for_all("dahl_engine_stop");
    dahl_cuda_stop();
#if DAHL_MPI
    dahl_progress_stop();
    /* Representative ranks: the light ranks go through the barrier StarPU-MPI's shutdown makes, then end. */
    if (starpu_mpi_world_size() > 1)
        dahl_light_post_barrier();
    dahl_light_post_end();
    starpu_mpi_shutdown(); /* finalises MPI, then shuts StarPU down */
#else
    starpu_shutdown();
#endif
    engine_started = false;
    engine_profiling = false;
}

int dahl_engine_context_create(const char *name)
{
    if (!engine_started)
        return -EPERM;
    int n = (int)starpu_worker_get_count();
    int ids[STARPU_NMAXWORKERS];
    for (int i = 0; i < n; i++)
        ids[i] = i;
    /* The global context's policy struct (dahl_schedcost's wrapper) and its init hook (heteroprio's
     * buckets, dahl_sched.c), so that the new context's scheduling costs are the same. */
    const unsigned global = 0; /* the context starpu_init makes */
    struct starpu_sched_policy *policy = starpu_sched_ctx_get_sched_policy(global);
    void (*init)(unsigned) = starpu_sched_ctx_get_sched_policy_init(global);
    unsigned id = init != NULL ? starpu_sched_ctx_create(ids, n, name, STARPU_SCHED_CTX_POLICY_STRUCT, policy,
                                                         STARPU_SCHED_CTX_POLICY_INIT, init, 0)
                               : starpu_sched_ctx_create(ids, n, name, STARPU_SCHED_CTX_POLICY_STRUCT, policy, 0);
    return (int)id;
}

void dahl_engine_context_use(int id)
{
    unsigned ctx = (unsigned)id;
    starpu_sched_ctx_set_context(id < 0 ? NULL : &ctx);
}

void dahl_engine_sched_cost(struct dahl_sched_cost *out)
{
    dahl_schedcost_get(out);
}

void dahl_engine_sleep_us(double us)
{
    starpu_usleep((float)us);
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

bool dahl_engine_has_cuda(void)
{
    /* StarPU-SimGrid simulates the CUDA workers its platform describes even when built without CUDA. */
#if defined(STARPU_USE_CUDA) || defined(STARPU_SIMGRID)
    return true;
#else
    return false;
#endif
}

int dahl_engine_worker_count(void)
{
    return engine_started ? (int)starpu_worker_get_count() : 0;
}

void dahl_engine_worker_stats_reset(void)
{
    if (!engine_profiling)
        return;
    for (int id = 0; id < dahl_engine_worker_count(); id++)
        starpu_profiling_worker_get_info(id, NULL);
}

static double timespec_s(const struct timespec *t)
{
    return (double)t->tv_sec + 1e-9 * (double)t->tv_nsec;
}

int dahl_engine_worker_stats(struct dahl_worker_stats *out, int n)
{
    if (!engine_profiling)
        return -EPERM;
    int count = dahl_engine_worker_count();
    if (n > count)
        n = count;
    for (int id = 0; id < n; id++) {
        struct starpu_profiling_worker_info info;
        DAHL_CHECK_STARPU(starpu_profiling_worker_get_info(id, &info));
        struct dahl_worker_stats *w = &out[id];
        memset(w, 0, sizeof(*w));
        w->id = id;
        starpu_worker_get_name(id, w->name, sizeof(w->name));
        switch (starpu_worker_get_type(id)) {
        case STARPU_CPU_WORKER:
            w->arch = "cpu";
            break;
        case STARPU_CUDA_WORKER:
            w->arch = "cuda";
            break;
        default:
            w->arch = "other";
            break;
        }
        w->tasks = info.executed_tasks;
        w->busy_s = timespec_s(&info.executing_time);
        w->sleeping_s = timespec_s(&info.sleeping_time);
        w->total_s = timespec_s(&info.total_time);
    }
    return n;
}

const char *dahl_engine_simgrid_version(void)
{
#ifdef STARPU_SIMGRID
    return DAHL_STR(SIMGRID_VERSION_MAJOR) "." DAHL_STR(SIMGRID_VERSION_MINOR);
#else
    return NULL;
#endif
}

int dahl_engine_energy(struct dahl_host_energy *out, int max, const char **source)
{
    *source = NULL;
#if DAHL_SIMULATED
    /* Only hosts dahl gave power figures to: their platform also turns the plugin on, without which asking
     * a host's energy aborts (several nodes: dahlsim run turns it on). A worker host without figures (a node
     * of a machine that has none, next to one that has) makes any total partial: then none. */
    size_t n = sg_host_count();
    sg_host_t *hosts = sg_host_list();
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = sg_host_get_name(hosts[i]);
        if ((strstr(name, "CPU") != NULL || strstr(name, "CUDA") != NULL) &&
            sg_host_get_property_value(hosts[i], "dahl_power") == NULL) {
            xbt_free(hosts);
            return 0;
        }
    }
    for (size_t i = 0; i < n && k < max; i++) {
        const char *from = sg_host_get_property_value(hosts[i], "dahl_power");
        if (from == NULL)
            continue;
        static char kept[64];
        snprintf(kept, sizeof(kept), "%s", from);
        *source = kept;
        snprintf(out[k].host, sizeof(out[k].host), "%s", sg_host_get_name(hosts[i]));
        out[k++].joules = sg_host_get_consumed_energy(hosts[i]);
    }
    xbt_free(hosts);
    return k;
#else
    (void)out, (void)max;
    return 0;
#endif
}

bool dahl_engine_is_simulated(void)
{
    return DAHL_SIMULATED;
}

const char *dahl_engine_starpu_version(void)
{
    return DAHL_STR(STARPU_MAJOR_VERSION) "." DAHL_STR(STARPU_MINOR_VERSION) "." DAHL_STR(STARPU_RELEASE_VERSION);
}

const char *dahl_engine_flavour(void)
{
    return DAHL_FLAVOUR_NAME;
}

enum dahl_submit_charge dahl_engine_submit_charge(void)
{
    return submit.where;
}

const char *dahl_engine_submit_charge_name(enum dahl_submit_charge c)
{
    switch (c) {
    case DAHL_SUBMIT_OWN_CORE:
        return "own core";
    case DAHL_SUBMIT_WORKER_CORES:
        return "worker cores";
    case DAHL_SUBMIT_NOT_CHARGED:
        break;
    }
    return "not charged";
}

void dahl_engine_charge_submission(size_t tasks, size_t copy_bytes)
{
#if DAHL_SIMULATED
    if (submit.where == DAHL_SUBMIT_NOT_CHARGED)
        return;
    double s = (double)tasks * submit.task_s;
    if (copy_bytes > 0 && submit.copy_bytes_per_s > 0)
        s += (double)copy_bytes / submit.copy_bytes_per_s;
    if (s <= 0)
        return;
    if (submit.where == DAHL_SUBMIT_WORKER_CORES) {
        /* Executed, not slept: on a worker's host the two share the core's speed, as the threads do. The
         * execution is placed on that host while the thread stays on its own (no migration: a multi-node
         * rank's thread is an SMPI process, and two migrations per task cost the simulator more than the
         * execution). It gets half the core even while that worker is idle: natively an idle worker spins
         * (StarPU's non-blocking drivers, the default outside SimGrid), and the kernel gives two runnable
         * threads on a core a half each. A simulated worker waits without taking the host's speed. */
        sg_host_t host = submit.cores[submit.next++ % (unsigned)submit.ncores];
        double speed = sg_host_get_speed(host);
        sg_exec_t exec = sg_actor_exec_init(s * speed);
        sg_exec_set_host(exec, host);
        sg_exec_set_bound(exec, DAHL_SUBMIT_SHARED_SHARE * speed);
        sg_exec_start(exec);
        sg_exec_wait(exec);
    } else {
        sg_actor_execute(s * sg_host_get_speed(sg_host_self()));
    }
#else
    (void)tasks;
    (void)copy_bytes;
#endif
}

/* The StarPU-MPI progression thread: dahl's requests counted, their pending time, natively the thread's CPU
 * time, and in simulation its turns on the workers' cores. See dahl_progress.h. */
#include "dahl_progress.h"

#include "dahl_starpu.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if DAHL_MPI
#include <starpu_mpi.h>
#endif
#if DAHL_SIMULATED
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#endif

/* The kernel's time slice between threads that never sleep, in seconds: Linux preempts them at its
 * scheduler tick (CONFIG_HZ 250, Debian's). Measured on this project's 2-vCPU VM (Linux 6.18): two threads
 * spinning on one core each ran about 4 ms at a time and waited 4.04 ms (90th percentile of the waits);
 * three waited 8.04 ms (docs/multinode.md, "The progression thread"). */
#define SLICE_S 0.004
/* The progression thread's sharing weight against a task on its core while it holds the core: the task
 * all but stops. */
#define TURN_PRIORITY 1e6

static struct {
    bool charged;
    bool alone;             /* the only rank: no request, so no turn ever */
    double share;
    long requests, pending; /* submitted so far; not yet completed */
    double since_us;        /* when pending last rose from 0 */
    double pending_us;      /* summed over the spans that ended */
    double cpu_s;           /* simulation: the thread's turns on the workers' cores */
    double wait_us;         /* simulation: its waits for a turn before handling requests */
    long waits;
    int ncores;
    bool busy;              /* DAHL_PROGRESS_BUSY: turns whether or not a request is pending */
    bool stopped;
#if DAHL_SIMULATED
    double phase_s;         /* this rank's offset of the turns */
    sg_host_t hosts[STARPU_MAXCPUS];
#endif
} progress;
/* Natively the completion callbacks run in StarPU-MPI's thread while the submitting thread counts: the lock
 * guards the counts. In simulation every actor runs in turn, and the lock is never held across a simcall. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

#if DAHL_SIMULATED && DAHL_MPI
/* scripts/patches/starpu-simgrid-progress-gate.patch (the sim-mpi flavour) */
extern void (*starpu_mpi_simgrid_progress_gate)(void);

/* The time-sliced cores. The rank's ncores workers never sleep (StarPU 1.3's last awake worker of a context
 * polls for tasks instead of blocking: src/drivers/driver_common/driver_common.c), nor does the progression
 * thread while a request is pending: ncores + 1 threads on ncores cores, which the kernel runs by turns of
 * a slice. In slice w (counted from the rank's phase), with k = w mod (ncores + 1): for k < ncores the thread
 * holds core k and worker k waits; for k = ncores the thread waits. Slice w's end, and k, at time t: */
static double turn_at_phase(double t, double phase_s, int ncores, long *k)
{
    double w = floor((t + phase_s) / SLICE_S + 1e-9);
    *k = (long)fmod(w, (double)(ncores + 1));
    return (w + 1) * SLICE_S - phase_s;
}

static double turn_at(double t, long *k)
{
    return turn_at_phase(t, progress.phase_s, progress.ncores, k);
}

/* The ranks' turns out of step, by offsets spread by the golden ratio (the same every run). Measured with
 * validate --nodes 2: offsets of 0, 1/4 and 3/4 of the turns' period gave the same makespans within 0.4 %;
 * exactly 1/2 made every message wait a whole slice at each end (+22 to +65 %), a resonance that drifting
 * native threads do not keep. */
static double phase_of(int rank, int ncores)
{
    /* $DAHLSIM_PROGRESS_PHASE (dahlsim run sets it from "mpi_progress_phase"): every rank's turns shifted by
     * that share of the period. */
    static double shift = -1;
    if (shift < 0) {
        const char *v = getenv("DAHLSIM_PROGRESS_PHASE");
        shift = v != NULL ? strtod(v, NULL) : 0.0;
        if (!(shift >= 0 && shift < 1))
            shift = 0.0;
    }
    double golden = 0.6180339887498949 * rank + shift;
    return (golden - floor(golden)) * SLICE_S * (ncores + 1);
}
#endif

#if DAHL_SIMULATED && DAHL_MPI
/* The workers' progress under the turns: in a slice where the thread holds a core, one of the ncores workers
 * waits (rate (ncores - 1) / ncores); in its own waiting slice they all run (rate 1). */
static double slice_rate(long k, int ncores, int core)
{
    if (core >= 0)
        return k == core ? 0.0 : 1.0;
    return k < ncores ? (double)(ncores - 1) / ncores : 1.0;
}

/* The work done by time t (seconds of all workers busy) since a fixed origin, for phase phase_s. */
static double work_at(double t, double phase_s, int ncores, int core)
{
    double period = SLICE_S * (ncores + 1), u = t + phase_s;
    double periods = floor(u / period), in = u - periods * period, w = periods * SLICE_S * ncores;
    for (long k = 0; k <= ncores && in > 0; k++) {
        double d = in < SLICE_S ? in : SLICE_S;
        w += d * slice_rate(k, ncores, core);
        in -= d;
    }
    return w;
}

/* The time at which work_at reaches w (the first such time). */
static double time_of_work(double w, double phase_s, int ncores, int core)
{
    double per = SLICE_S * ncores, period = SLICE_S * (ncores + 1);
    double periods = floor(w / per), left = w - periods * per, t = periods * period;
    for (long k = 0; k <= ncores && left > 1e-15; k++) {
        double r = slice_rate(k, ncores, core), full = SLICE_S * r;
        if (left <= full && r > 0)
            return t + left / r - phase_s;
        left -= full;
        t += SLICE_S;
    }
    return t - phase_s;
}
#endif

double dahl_progress_turned_s(double from_s, double work_s, int rank, int ncores, int core)
{
#if DAHL_SIMULATED && DAHL_MPI
    double phase = phase_of(rank, ncores);
    return time_of_work(work_at(from_s, phase, ncores, core) + work_s, phase, ncores, core);
#else
    (void)rank, (void)ncores, (void)core;
    return from_s + work_s;
#endif
}

double dahl_progress_work_s(double from_s, double to_s, int rank, int ncores, int core)
{
#if DAHL_SIMULATED && DAHL_MPI
    double phase = phase_of(rank, ncores);
    return work_at(to_s, phase, ncores, core) - work_at(from_s, phase, ncores, core);
#else
    (void)rank, (void)ncores, (void)core;
    return to_s - from_s;
#endif
}

double dahl_progress_turn_wait_s(double t, int rank, int ncores)
{
#if DAHL_SIMULATED && DAHL_MPI
    long k;
    double end = turn_at_phase(t, phase_of(rank, ncores), ncores, &k);
    return k < ncores ? 0.0 : end - t;
#else
    (void)t, (void)rank, (void)ncores;
    return 0.0;
#endif
}

int dahl_progress_turn_core(double t, int rank, int ncores, double *since_s)
{
#if DAHL_SIMULATED && DAHL_MPI
    long k;
    double end = turn_at_phase(t, phase_of(rank, ncores), ncores, &k);
    if (since_s != NULL)
        *since_s = t - (end - SLICE_S);
    return k < ncores ? (int)k : -1;
#else
    (void)t, (void)rank, (void)ncores;
    if (since_s != NULL)
        *since_s = 0.0;
    return -1;
#endif
}

#if DAHL_SIMULATED && DAHL_MPI

/* StarPU-MPI's thread wakes up to handle its requests (the patch's hook): out of its turn, it first waits
 * for it. Woken from sleep (nothing was pending) it runs at once, as the kernel runs a thread it wakes. */
static void gate(void)
{
    if (progress.pending == 0)
        return;
    double t = simgrid_get_clock();
    long k;
    double end = turn_at(t, &k);
    if (k < progress.ncores)
        return;
    progress.wait_us += (end - t) * 1e6;
    progress.waits++;
    sg_actor_sleep_until(end);
}

/* The thread's turns on the worker cores, while a request is pending: an actor of its own (a daemon: it
 * ends with the simulation) executes on core k through the slice, with a weight that all but stops the
 * task there. */
static void turns(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    while (!progress.stopped) {
        double t = simgrid_get_clock();
        long k;
        double end = turn_at(t, &k);
        if (k == progress.ncores || (progress.pending == 0 && !progress.busy)) {
            sg_actor_sleep_until(end);
            continue;
        }
        sg_actor_set_host(sg_actor_self(), progress.hosts[k]);
        sg_actor_execute_with_priority((end - t) * sg_host_get_speed(progress.hosts[k]), TURN_PRIORITY);
        progress.cpu_s += end - t;
    }
}
#endif

void dahl_progress_start(enum dahl_progress_core mode, bool cores_full, const char *host_prefix, int ncores)
{
    pthread_mutex_lock(&progress_lock);
    memset(&progress, 0, sizeof(progress));
    bool shared = mode == DAHL_PROGRESS_SHARED || ((mode == DAHL_PROGRESS_AUTO || mode == DAHL_PROGRESS_BUSY) && cores_full);
#if DAHL_SIMULATED && DAHL_MPI
    if (ncores > STARPU_MAXCPUS)
        ncores = STARPU_MAXCPUS;
    for (int i = 0; i < ncores; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%sCPU%d", host_prefix, i);
        progress.hosts[i] = sg_host_by_name(name);
        if (progress.hosts[i] == NULL)
            ncores = i;
    }
    progress.ncores = ncores;
    progress.charged = shared && ncores > 0;
    progress.alone = starpu_mpi_world_size() < 2;
    progress.busy = mode == DAHL_PROGRESS_BUSY;
    progress.share = progress.charged ? 1.0 / (ncores + 1) : 0.0;
    int rank = 0;
    sscanf(host_prefix, "StarPU-MPI%d-", &rank);
    progress.phase_s = phase_of(rank, ncores);
    pthread_mutex_unlock(&progress_lock);
    starpu_mpi_simgrid_progress_gate = progress.charged ? gate : NULL;
    if (progress.charged) {
        sg_actor_t a = sg_actor_create("mpi-progress-turns", progress.hosts[0], turns, 0, NULL);
        sg_actor_daemonize(a);
    }
    return;
#else
    (void)shared;
    (void)host_prefix;
    progress.ncores = ncores;
    pthread_mutex_unlock(&progress_lock);
#endif
}

bool dahl_progress_request_begin(void)
{
    pthread_mutex_lock(&progress_lock);
    progress.requests++;
    bool timed = !DAHL_SIMULATED || progress.charged;
    if (timed && progress.pending++ == 0)
        progress.since_us = starpu_timing_now();
    pthread_mutex_unlock(&progress_lock);
    return timed;
}

void dahl_progress_request_done(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&progress_lock);
    if (--progress.pending == 0)
        progress.pending_us += starpu_timing_now() - progress.since_us;
    pthread_mutex_unlock(&progress_lock);
}

void dahl_progress_stop(void)
{
    progress.stopped = true;
}

#if !DAHL_SIMULATED
/* The CPU time (s) of this process's thread named `name` (/proc/self/task/TID/comm, stat's utime and stime);
 * -1 when there is none. */
static double thread_cpu_s(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    double total = -1;
    long tick = sysconf(_SC_CLK_TCK);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "", stat[1024];
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        bool named = fgets(comm, sizeof(comm), f) != NULL && strcspn(comm, "\n") == strlen(name) &&
                     strncmp(comm, name, strlen(name)) == 0;
        fclose(f);
        snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
        if (!named || (f = fopen(path, "r")) == NULL)
            continue;
        size_t n = fread(stat, 1, sizeof(stat) - 1, f);
        fclose(f);
        stat[n] = '\0';
        /* fields after the command's closing parenthesis: state is field 3, utime 14, stime 15 */
        const char *p = strrchr(stat, ')');
        unsigned long utime, stime;
        if (p != NULL && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) == 2)
            total = (total < 0 ? 0 : total) + (double)(utime + stime) / (double)tick;
    }
    closedir(d);
    return total;
}
#endif

bool dahl_progress_charged(int *ncores)
{
    *ncores = progress.ncores;
    return DAHL_SIMULATED && progress.charged;
}

bool dahl_progress_takes_turns(void)
{
    return DAHL_SIMULATED && progress.charged && !progress.alone;
}

void dahl_progress_stats(struct dahl_progress_stats *out)
{
    pthread_mutex_lock(&progress_lock);
    double now = starpu_is_initialized() ? starpu_timing_now() : progress.since_us;
    *out = (struct dahl_progress_stats){
        .charged = progress.charged,
        .share = progress.share,
        .requests = progress.requests,
        .pending_s = DAHL_SIMULATED && !progress.charged
                         ? -1
                         : (progress.pending_us + (progress.pending > 0 ? now - progress.since_us : 0)) / 1e6,
        .cpu_s = progress.cpu_s,
        .turn_wait_s = progress.wait_us / 1e6,
        .turn_waits = progress.waits,
    };
    pthread_mutex_unlock(&progress_lock);
#if !DAHL_SIMULATED
    out->cpu_s = thread_cpu_s("MPI");
#endif
}

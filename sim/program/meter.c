/* The training's bookkeeping, kept out of the algorithm: what an epoch costs and counts (tasks per codelet,
 * workers' times, the scheduler's and the submitting thread's costs, bus transfers, memory), the progress
 * line and the memory mappings. See train.h. */
#include "train.h"
#include "dahlsim_fs.h"

#include "dahl_mpi.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void progress_show(struct progress *p, int epoch, int epochs, long done, long total, double elapsed_s)
{
    if (!p->enabled)
        return;
    double now = dahlsim_mono_s();
    if (now - p->last_s < (p->tty ? 0.25 : 2.0))
        return;
    p->last_s = now;
    fprintf(stderr, "%sepoch %d/%d  %ld/%ld samples  %.0f samples/s%s", p->tty ? "\r" : "", epoch, epochs, done,
            total, elapsed_s > 0 ? (double)done / elapsed_s : 0.0, p->tty ? "\033[K" : "\n");
}

void progress_clear(struct progress *p)
{
    if (p->enabled && p->tty)
        fputs("\r\033[K", stderr);
}

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The calling thread's time runnable but waiting for a core (the kernel's run_delay, in
 * /proc/thread-self/schedstat); -1 where the kernel does not keep it. */
static double thread_wait_s(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f == NULL)
        return -1;
    unsigned long long run_ns, wait_ns;
    int n = fscanf(f, "%llu %llu", &run_ns, &wait_ns);
    fclose(f);
    return n == 2 ? 1e-9 * (double)wait_ns : -1;
}

static long tasks_submitted(const struct run_state *st)
{
    long n = 0;
    for (size_t k = 0; k < st->nsymbols; k++)
        n += dahl_network_task_count(st->net, st->symbols[k]);
    return n;
}

void energy_mark(struct run_state *st)
{
    st->nenergy = dahl_engine_energy(st->energy_at, DAHL_ENGINE_MAX_ENERGY_HOSTS, &st->energy_source);
}

void energy_add(struct run_state *st, double times)
{
    static struct dahl_host_energy now[DAHL_ENGINE_MAX_ENERGY_HOSTS];
    int n = dahl_engine_energy(now, DAHL_ENGINE_MAX_ENERGY_HOSTS, &st->energy_source);
    for (int i = 0; i < n && i < st->nenergy; i++) {
        memcpy(st->energy[i].host, now[i].host, sizeof(now[i].host));
        st->energy[i].joules += times * (now[i].joules - st->energy_at[i].joules);
    }
}

int meter_epoch_start(struct run_state *st, int e, struct epoch_meter *m)
{
    struct dahl_network *net = st->net;
    dahl_network_metrics_reset(net);
    for (size_t k = 0; k < st->nsymbols; k++)
        st->per_codelet[k].tasks -= dahl_network_task_count(net, st->symbols[k]);
    *m = (struct epoch_meter){.steps_before = dahl_network_steps_done(net)};
    dahl_engine_worker_stats_reset();
    dahl_profile_counters_reset();
    dahl_engine_sched_cost(&m->sched);
    st->link_windows_us[2 * e] = dahl_engine_now_us();
    int barrier = dahl_mpi_barrier(); /* the nodes start each epoch together */
    if (barrier != 0)
        return barrier;
    m->start_us = dahl_engine_now_us();
    energy_mark(st);
    /* The submitting thread's cost, natively: its CPU time while it submits the epoch and waits for it. */
    m->cpu_s = thread_cpu_s();
    m->wait_s = thread_wait_s();
    m->tasks = tasks_submitted(st);
    dahl_network_input_copies(net, &m->copied, &m->copy_s);
    return 0;
}

void meter_step(struct run_state *st, const struct epoch_meter *m, struct progress *p, int e, long steps)
{
    long batch = st->o->batch;
    long done = (long)(dahl_network_steps_done(st->net) - m->steps_before) * batch;
    if (st->nodes.rank == 0)
        dahlsim_proc_meter_tick(&st->maps, false);
    progress_show(p, e + 1, (int)st->o->epochs, done, steps * batch, (dahl_engine_now_us() - m->start_us) / 1e6);
}

/* The submitting thread's CPU time, tasks and input copies of the epoch, natively. */
static void submission_add(struct run_state *st, const struct epoch_meter *m)
{
    size_t copied;
    double copy_s;
    dahl_network_input_copies(st->net, &copied, &copy_s);
    st->submission.thread_cpu_s += thread_cpu_s() - m->cpu_s;
    double wait_s = thread_wait_s();
    if (m->wait_s < 0 || wait_s < 0)
        st->submission.thread_wait_s = -1; /* unknown in one epoch: unknown */
    else if (st->submission.thread_wait_s >= 0)
        st->submission.thread_wait_s += wait_s - m->wait_s;
    st->submission.tasks += tasks_submitted(st) - m->tasks;
    st->submission.copy_bytes += (double)(copied - m->copied);
    st->submission.copy_cpu_s += copy_s - m->copy_s;
}

/* The workers' figures of the epoch, and the scheduler's costs over it, added to the run's. */
static void workers_add(struct run_state *st, const struct epoch_meter *m)
{
    int n = dahl_engine_worker_stats(st->epoch_workers, st->nworkers);
    struct dahl_sched_cost sched;
    dahl_engine_sched_cost(&sched);
    st->handling_us += sched.handling_us - m->sched.handling_us;
    st->worker_push_us += sched.worker_push_total_us - m->sched.worker_push_total_us;
    for (int w = 0; w < n; w++) {
        st->handled_tasks += st->epoch_workers[w].tasks;
        st->busy_us += 1e6 * st->epoch_workers[w].busy_s;
        st->workers[w].tasks += st->epoch_workers[w].tasks;
        st->workers[w].busy_s += st->epoch_workers[w].busy_s;
        st->workers[w].sleeping_s += st->epoch_workers[w].sleeping_s;
        st->workers[w].total_s += st->epoch_workers[w].total_s;
    }
}

int meter_epoch_end(struct run_state *st, int e, long steps, struct epoch_meter *m)
{
    struct dahl_network *net = st->net;
    dahl_network_metrics(net, &m->loss_sum, &m->correct, &m->samples);
    const double *end_us;
    size_t nsteps = dahl_network_step_end_times(net, &end_us);
    size_t ran = (size_t)(st->iterations - st->extrapolated); /* steps the network ran before the epoch */
    if (nsteps != ran + (size_t)steps)
        return -EPROTO;
    if (!st->simulated)
        submission_add(st, m);
    /* Step durations and the epoch's time; with several nodes, the slowest node's (on rank 0). */
    int merged = dahlsim_nodes_step_times(&st->nodes, end_us, ran, m->start_us, (size_t)steps,
                                          st->iteration_s + st->iterations, &m->train_s);
    if (merged == 0)
        merged = dahlsim_nodes_sum_metrics(&st->nodes, &m->loss_sum, &m->correct, &m->samples);
    if (merged != 0)
        return merged;
    st->iterations += steps;
    st->makespan_s += m->train_s;
    energy_add(st, 1.0);
    workers_add(st, m);
    for (size_t k = 0; k < st->nsymbols; k++)
        st->per_codelet[k].tasks += dahl_network_task_count(net, st->symbols[k]);
    st->link_windows_us[2 * e + 1] = dahl_engine_now_us();
    st->nlinks = dahl_profile_links_add(st->links, st->nlinks, RESULTS_MAX_LINKS);
    st->nmemory = dahl_profile_memory_merge(st->memory, st->nmemory, RESULTS_MAX_NODES);
    return 0;
}

/* ---- "steady_state" ------------------------------------------------------------------------------------ */

int steady_start(struct steady_watch *w, const struct train_opts *o, long steps, size_t first)
{
    *w = (struct steady_watch){.warmup = o->steady_warmup, .steps = steps, .tolerance = o->steady_tolerance,
                               .first = first};
    w->ends = malloc((size_t)steps * sizeof(*w->ends));
    w->peaks = malloc((size_t)(steps + 1) * sizeof(*w->peaks));
    if (w->ends == NULL || w->peaks == NULL) {
        steady_stop(w);
        return -ENOMEM;
    }
    for (long i = 0; i <= steps; i++)
        w->peaks[i] = -1;
    return 0;
}

void steady_stop(struct steady_watch *w)
{
    free(w->ends);
    free(w->peaks);
    w->ends = NULL;
    w->peaks = NULL;
}

/* The latest memory peak seen when at most n steps of the epoch were done; -1: none seen. */
static int64_t peak_at(const struct steady_watch *w, long n)
{
    for (; n >= 0; n--)
        if (w->peaks[n] >= 0)
            return w->peaks[n];
    return -1;
}

/* The criterion (batch means): the epoch's steps after its first `warmup` are cut into 8 equal blocks of at
 * least 4 steps (their size grows with the steps done, so steps that alternate, stall periodically or drift
 * slowly within a block count as one pattern). The mean step is the mean of the block means, its standard
 * error their standard deviation over the root of 8. The steps not submitted yet, counted at that mean,
 * could err on the epoch's time by (steps left) x t x (standard error), t = 2.365 (Student's, 7 degrees of
 * freedom, 95 % two-sided): once that is within the tolerance of the predicted epoch time, and the memory peak
 * did not grow over the last block, the epoch is steady. */
#define STEADY_BLOCKS 8
#define STEADY_BLOCK_MIN 4
#define STEADY_T95 2.365
bool steady_reached(struct steady_watch *w, struct run_state *st, long submitted, double *step_s)
{
    long K = w->warmup;
    /* steps of the epoch done: ends[0..n-1] */
    long n = (long)dahl_network_step_ends_since(st->net, w->first, w->ends, (size_t)w->steps);
    if (n < K + 1 + STEADY_BLOCKS * STEADY_BLOCK_MIN)
        return false; /* not enough steps done for the warm-up and the blocks, or one still running */
    w->peaks[n] = dahl_profile_memory_peak_total();
    long m = (n - 1 - K) / STEADY_BLOCKS; /* steps per block, the latest ones kept */
    double sum = 0, sum2 = 0;
    for (long b = 0; b < STEADY_BLOCKS; b++) {
        long from = n - 1 - (STEADY_BLOCKS - b) * m; /* the block's steps end at ends[from + 1 .. from + m] */
        double mean = (w->ends[from + m] - w->ends[from]) / (double)m;
        sum += mean;
        sum2 += mean * mean;
    }
    double mean = sum / STEADY_BLOCKS;
    double var = (sum2 - sum * mean) / (STEADY_BLOCKS - 1);
    double se = var > 0 ? sqrt(var / STEADY_BLOCKS) : 0;
    long left = w->steps - submitted;
    double predicted = (w->ends[n - 1] - w->ends[0]) + (double)(w->steps - n) * mean;
    int64_t peak_then = peak_at(w, n - m);
    if (!(mean > 0) || (double)left * STEADY_T95 * se > w->tolerance * predicted || peak_then < 0 ||
        peak_then != w->peaks[n])
        return false;
    *step_s = mean / 1e6;
    return true;
}

void steady_extrapolate(struct run_state *st, struct epoch_meter *m, long more, double step_s)
{
    double simulated_s = m->train_s;
    for (long i = 0; i < more; i++)
        st->iteration_s[st->iterations + i] = step_s;
    st->iterations += more;
    st->extrapolated += more;
    m->train_s += (double)more * step_s;
    st->makespan_s += (double)more * step_s;
    /* The hosts ran at the same pace through the extrapolated steps: the epoch's joules scale with its time
     * (the simulated clock has not moved since meter_epoch_end's energy_add). */
    if (simulated_s > 0)
        energy_add(st, m->train_s / simulated_s - 1.0);
}

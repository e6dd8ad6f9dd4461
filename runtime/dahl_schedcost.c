/* The scheduling policy's own cost per push, and the workers' runtime cost per task (see
 * dahl_schedcost_starpu.h): every run goes through a copy of its policy whose push_task and pop_task wrap
 * the original. Natively push is timed (wall clock: a push that waits for a worker's queue lock waits in real
 * life too); in simulation it charges the calibrated figure. A worker's time from popping a task to asking
 * for the next (the task's input fetch, execution, termination and the pushes it triggers) is summed in
 * both flavours, on StarPU's clock; in simulation the calibrated per-task cost is charged after each pop (see
 * pop).
 * Worker threads count on their own padded slot, without atomics; other threads (the one submitting
 * tasks) share one atomic slot. */
#include "dahl_schedcost_starpu.h"

#include "dahl_progress.h"
#include "dahl_sched_starpu.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#if DAHL_SIMULATED
#include <simgrid/actor.h>
#include <simgrid/host.h>
#endif

/* Calls longer than this are left out of the mean (a thread preempted in the middle of a push: the
 * machine's noise, not the policy's cost) and counted apart. */
#define SLOW_NS 100000L

struct slot {
    long calls, ns, slow;
    double push_us;   /* every push's time, slow ones included (simulated: the charge) */
    double popped_us; /* StarPU's clock when the last task was popped; < 0: none pending */
    double handling_us;
    char pad[128 - 3 * sizeof(long) - 3 * sizeof(double)];
};

static struct {
    struct starpu_sched_policy policy;
    int (*base_push)(struct starpu_task *);
    struct starpu_task *(*base_pop)(unsigned);
    double charge_s;
    double worker_charge_s; /* simulation: charged after each pop that returns a task; 0: none */
    struct slot workers[STARPU_NMAXWORKERS];
    _Atomic long other_calls, other_ns, other_slow;
} sc;

#if !DAHL_SIMULATED
static long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}
#endif

static int push(struct starpu_task *task)
{
    int worker = starpu_worker_get_id();
#if DAHL_SIMULATED
    int ret = sc.base_push(task);
    long ns = 0;
    /* Only the workers' pushes: the submitting thread's CPU time, pushes included, is charged per task
     * submitted (dahl_engine_charge_submission). */
    if (worker >= 0 && sc.charge_s > 0)
        starpu_sleep((float)sc.charge_s);
#else
    long t0 = now_ns();
    int ret = sc.base_push(task);
    long ns = now_ns() - t0;
#endif
    bool slow = ns > SLOW_NS;
    if (worker >= 0) {
        struct slot *s = &sc.workers[worker];
        s->calls++;
        s->push_us += DAHL_SIMULATED ? sc.charge_s * 1e6 : 1e-3 * (double)ns;
        if (slow)
            s->slow++;
        else
            s->ns += ns;
    } else {
        atomic_fetch_add_explicit(&sc.other_calls, 1, memory_order_relaxed);
        if (slow)
            atomic_fetch_add_explicit(&sc.other_slow, 1, memory_order_relaxed);
        else
            atomic_fetch_add_explicit(&sc.other_ns, ns, memory_order_relaxed);
    }
    return ret;
}

static struct starpu_task *pop(unsigned ctx)
{
    int worker = starpu_worker_get_id();
    struct slot *s = worker >= 0 ? &sc.workers[worker] : NULL;
    if (s != NULL && s->popped_us >= 0) {
        s->handling_us += starpu_timing_now() - s->popped_us;
        s->popped_us = -1;
    }
    struct starpu_task *task = sc.base_pop(ctx);
    if (task != NULL && s != NULL) {
        s->popped_us = starpu_timing_now();
#if DAHL_SIMULATED
        /* That time is the worker thread's own CPU work (the input's fetch, the job's start and end, the
         * release of its dependencies): a CPU worker executes it on its core, which it shares with the
         * submitting thread's turns where no core is left for that thread (dahl_engine_charge_submission),
         * as natively. On the 2-vCPU EPYC VM, 28x28x3 lws with both cores running workers: batch 4 1.05 ->
         * 1.15 s simulated, batch 32 0.81 -> 0.89 s, natively 1.55-1.73 and 1.01-1.08 s (with one worker
         * unchanged). Slept where the worker's host is a device (CUDA), and where StarPU-MPI's progression
         * thread takes turns on the cores (dahl_progress.c): that model holds a core for whole turns and was
         * validated against mpirun with the sleep; executed there, the 4-node default took twice as long. */
        if (sc.worker_charge_s > 0 && starpu_worker_get_type(worker) == STARPU_CPU_WORKER &&
            !dahl_progress_takes_turns())
            sg_actor_execute(sc.worker_charge_s * sg_host_get_speed(sg_host_self()));
        else if (sc.worker_charge_s > 0)
            starpu_sleep((float)sc.worker_charge_s);
#endif
    }
    return task;
}

void dahl_schedcost_wrap(struct starpu_conf *sconf, double charge_us, double worker_us)
{
    const struct starpu_sched_policy *base =
        sconf->sched_policy != NULL ? sconf->sched_policy : dahl_sched_predefined(sconf->sched_policy_name);
    memset(sc.workers, 0, sizeof(sc.workers));
    for (int w = 0; w < STARPU_NMAXWORKERS; w++)
        sc.workers[w].popped_us = -1;
    atomic_store(&sc.other_calls, 0);
    atomic_store(&sc.other_ns, 0);
    atomic_store(&sc.other_slow, 0);
    sc.charge_s = charge_us > 0 ? charge_us * 1e-6 : 0;
    sc.worker_charge_s = worker_us > 0 ? worker_us * 1e-6 : 0;
    /* No policy named (StarPU picks its default, or STARPU_SCHED): nothing to wrap. */
    if (base == NULL || base->push_task == NULL) {
        sc.base_push = NULL;
        return;
    }
    sc.policy = *base;
    sc.base_push = base->push_task;
    sc.policy.push_task = push;
    /* random and pheft push to the workers' own lists and have no pop_task: no handling figures, no charge */
    sc.base_pop = base->pop_task;
    if (base->pop_task != NULL)
        sc.policy.pop_task = pop;
    sconf->sched_policy = &sc.policy;
    sconf->sched_policy_name = NULL;
}

void dahl_schedcost_get(struct dahl_sched_cost *out)
{
    memset(out, 0, sizeof(*out));
    out->wrapped = sc.base_push != NULL;
    out->pops_wrapped = out->wrapped && sc.base_pop != NULL;
    long ns = 0;
    for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
        out->worker_pushes += sc.workers[w].calls;
        out->worker_slow += sc.workers[w].slow;
        ns += sc.workers[w].ns;
        out->worker_push_total_us += sc.workers[w].push_us;
        out->handling_us += sc.workers[w].handling_us;
    }
    long timed = out->worker_pushes - out->worker_slow;
    out->worker_push_us = timed > 0 ? 1e-3 * (double)ns / (double)timed : 0;
    out->other_pushes = atomic_load(&sc.other_calls);
    out->other_slow = atomic_load(&sc.other_slow);
    timed = out->other_pushes - out->other_slow;
    out->other_push_us = timed > 0 ? 1e-3 * (double)atomic_load(&sc.other_ns) / (double)timed : 0;
    out->charged_us = sc.charge_s * 1e6;
}

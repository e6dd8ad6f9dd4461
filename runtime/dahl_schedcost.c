/* The scheduling policy's own cost per push (see dahl_schedcost_starpu.h): every run goes through a copy of
 * its policy whose push_task wraps the original. Natively it times each call (wall clock: a push that waits
 * for a worker's queue lock waits in real life too); in simulation it charges the calibrated figure.
 * Worker threads count on their own padded slot, without atomics; other threads (the one submitting
 * tasks) share one atomic slot. */
#include "dahl_schedcost_starpu.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* Calls longer than this are left out of the mean (a thread preempted in the middle of a push: the
 * machine's noise, not the policy's cost) and counted apart. */
#define SLOW_NS 100000L

struct slot {
    long calls, ns, slow;
    char pad[64 - 3 * sizeof(long)];
};

static struct {
    struct starpu_sched_policy policy;
    int (*base_push)(struct starpu_task *);
    double charge_s;
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

void dahl_schedcost_wrap(struct starpu_conf *sconf, double charge_us)
{
    const struct starpu_sched_policy *base = sconf->sched_policy;
    if (base == NULL) {
        const char *name = sconf->sched_policy_name;
        struct starpu_sched_policy **policies = starpu_sched_get_predefined_policies();
        for (size_t i = 0; name != NULL && policies[i] != NULL; i++)
            if (strcmp(policies[i]->policy_name, name) == 0)
                base = policies[i];
    }
    memset(sc.workers, 0, sizeof(sc.workers));
    atomic_store(&sc.other_calls, 0);
    atomic_store(&sc.other_ns, 0);
    atomic_store(&sc.other_slow, 0);
    sc.charge_s = charge_us > 0 ? charge_us * 1e-6 : 0;
    /* No policy named (StarPU picks its default, or STARPU_SCHED): nothing to wrap. */
    if (base == NULL || base->push_task == NULL) {
        sc.base_push = NULL;
        return;
    }
    sc.policy = *base;
    sc.base_push = base->push_task;
    sc.policy.push_task = push;
    sconf->sched_policy = &sc.policy;
    sconf->sched_policy_name = NULL;
}

void dahl_schedcost_get(struct dahl_sched_cost *out)
{
    memset(out, 0, sizeof(*out));
    out->wrapped = sc.base_push != NULL;
    long ns = 0;
    for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
        out->worker_pushes += sc.workers[w].calls;
        out->worker_slow += sc.workers[w].slow;
        ns += sc.workers[w].ns;
    }
    long timed = out->worker_pushes - out->worker_slow;
    out->worker_push_us = timed > 0 ? 1e-3 * (double)ns / (double)timed : 0;
    out->other_pushes = atomic_load(&sc.other_calls);
    out->other_slow = atomic_load(&sc.other_slow);
    timed = out->other_pushes - out->other_slow;
    out->other_push_us = timed > 0 ? 1e-3 * (double)atomic_load(&sc.other_ns) / (double)timed : 0;
    out->charged_us = sc.charge_s * 1e6;
}

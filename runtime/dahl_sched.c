/* heteroprio configured by dahl (see dahl_sched.h): a copy of StarPU's heteroprio policy whose push maps
 * tasks to per-type buckets and keeps the priority lists up to date, and whose pre/post-execution hooks
 * measure task times and worker busy time. One engine per process, so the state is static. */
#include "dahl_sched.h"

#include "dahl_sched_starpu.h"
#include "dahl_starpu.h"

#include <errno.h>
#include <math.h>
#include <starpu_heteroprio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES DAHL_HETEROPRIO_MAX_TYPES

struct type_entry {
    const struct starpu_codelet *cl; /* the first codelet seen with this name (a cache for the lookup) */
    char name[64];                  /* the bucket's name: symbol, or "symbol:footprint" (by_footprint) */
    char symbol[64];                /* the perf-model symbol (what manual lists name) */
    bool runs_on[DAHL_NARCH];
    double estimate_us[DAHL_NARCH]; /* perf-model estimate of the type's first task; <= 0 unknown */
    double indeg_sum;               /* in-degrees observed at push, for the type's mean ID */
    long indeg_n;
};

/* Successors seen so far per not-yet-pushed task: when a task is pushed all its predecessors have been
 * pushed (they finished), so its count is its in-degree, as far as StarPU's successor lists showed it. */
struct seen_slot {
    unsigned long key; /* the task's job id + 1 (0: empty): unlike its address, never reused by a later task */
    int count;
};

static struct {
    bool active;
    struct dahl_heteroprio_conf conf;
    struct starpu_sched_policy policy;
    int (*heteroprio_push)(struct starpu_task *);
    void (*heteroprio_deinit)(unsigned);
    unsigned ctx;
    starpu_pthread_mutex_t mutex;
    struct type_entry types[MAX_TYPES];
    int ntypes;
    struct dahl_autoprio *ap;
    int nworkers[DAHL_NARCH], first_worker[DAHL_NARCH];
    double t0_us, busy_us[DAHL_NARCH], start_us[STARPU_NMAXWORKERS];
    struct seen_slot *seen;
    size_t seen_cap, seen_used;
    long recomputes;
    /* kept after shutdown for dahl_heteroprio_summary */
    int final_n[DAHL_NARCH];
    int final_order[DAHL_NARCH][MAX_TYPES];
} hp;

static int arch_of_worker(int workerid)
{
    return starpu_worker_get_type(workerid) == STARPU_CUDA_WORKER ? DAHL_ARCH_GPU : DAHL_ARCH_CPU;
}

/* ---- in-degree tracking (open addressing on the job id: keyed by address, a task never pushed here left
 * its count to the next task allocated at its address, and the simulation depended on ASLR) ---- */

static size_t seen_hash(unsigned long key, size_t cap)
{
    uint64_t x = key;
    x ^= x >> 17;
    x *= 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 7) & (cap - 1);
}

static struct seen_slot *seen_find(struct starpu_task *task, bool insert)
{
    unsigned long t = starpu_task_get_job_id(task) + 1;
    if (insert && 2 * (hp.seen_used + 1) > hp.seen_cap) {
        size_t cap = hp.seen_cap > 0 ? 2 * hp.seen_cap : 1024;
        struct seen_slot *grown = calloc(cap, sizeof(*grown));
        if (grown == NULL)
            return NULL;
        for (size_t i = 0; i < hp.seen_cap; i++) {
            if (hp.seen[i].key == 0 || hp.seen[i].count < 0)
                continue;
            size_t j = seen_hash(hp.seen[i].key, cap);
            while (grown[j].key != 0)
                j = (j + 1) & (cap - 1);
            grown[j] = hp.seen[i];
        }
        free(hp.seen);
        hp.seen = grown;
        hp.seen_cap = cap;
        size_t used = 0;
        for (size_t i = 0; i < cap; i++)
            used += grown[i].key != 0;
        hp.seen_used = used;
    }
    if (hp.seen_cap == 0)
        return NULL;
    size_t j = seen_hash(t, hp.seen_cap);
    struct seen_slot *tomb = NULL;
    while (hp.seen[j].key != 0) {
        if (hp.seen[j].key == t && hp.seen[j].count >= 0)
            return &hp.seen[j];
        if (hp.seen[j].count < 0 && tomb == NULL)
            tomb = &hp.seen[j];
        j = (j + 1) & (hp.seen_cap - 1);
    }
    if (!insert)
        return NULL;
    struct seen_slot *s = tomb != NULL ? tomb : &hp.seen[j];
    if (s->key == 0)
        hp.seen_used++;
    s->key = t;
    s->count = 0;
    return s;
}

/* ---- types and lists ---- */

static int type_lookup(const struct starpu_codelet *cl, const char *name)
{
    for (int i = 0; i < hp.ntypes; i++)
        if (hp.types[i].cl == cl)
            return i;
    for (int i = 0; i < hp.ntypes; i++)
        if (strcmp(hp.types[i].name, name) == 0)
            return i;
    return -1;
}

static const char *type_name(const struct starpu_codelet *cl)
{
    if (cl->model != NULL && cl->model->symbol != NULL)
        return cl->model->symbol;
    return cl->name != NULL ? cl->name : "unnamed";
}

/* The lists in force: manual ones from the configuration (types not listed at all go last where they can
 * run), or AutoHeteroprio's. */
static void compute_lists(int order[DAHL_NARCH][MAX_TYPES], int n[DAHL_NARCH])
{
    if (hp.conf.autoprio) {
        int *rows[DAHL_NARCH] = {order[0], order[1]};
        dahl_autoprio_lists(hp.ap, rows, n);
        return;
    }
    bool listed[MAX_TYPES] = {false};
    for (int a = 0; a < DAHL_NARCH; a++) {
        n[a] = 0;
        for (int k = 0; k < hp.conf.n[a]; k++) {
            for (int i = 0; i < hp.ntypes; i++) {
                if (strcmp(hp.types[i].symbol, hp.conf.names[a][k]) == 0) {
                    listed[i] = true;
                    if (hp.types[i].runs_on[a])
                        order[a][n[a]++] = i;
                }
            }
        }
    }
    for (int a = 0; a < DAHL_NARCH; a++)
        for (int i = 0; i < hp.ntypes; i++)
            if (!listed[i] && hp.types[i].runs_on[a])
                order[a][n[a]++] = i;
}

static double type_cost_us(int t, int a)
{
    if (hp.conf.autoprio) {
        struct dahl_autoprio_type x;
        dahl_autoprio_type_get(hp.ap, t, &x);
        return x.cost[a];
    }
    return hp.types[t].estimate_us[a];
}

/* Writes the lists and slow factors into heteroprio. Entries are written before the counts grow, so a
 * concurrent pop (it reads the mapping under heteroprio's own lock, which this cannot take) never reads an
 * unset entry; at worst it sees a list mid-update, where every entry is still a bucket its architecture can
 * run. Under SimGrid no other worker runs in between. */
static void apply_lists(void)
{
    int order[DAHL_NARCH][MAX_TYPES], n[DAHL_NARCH];
    compute_lists(order, n);
    static const enum starpu_heteroprio_types idx[DAHL_NARCH] = {STARPU_CPU_IDX, STARPU_CUDA_IDX};
    for (int a = 0; a < DAHL_NARCH; a++) {
        if (hp.nworkers[a] == 0)
            continue;
        for (int k = 0; k < n[a]; k++)
            starpu_heteroprio_set_mapping(hp.ctx, idx[a], (unsigned)k, (unsigned)order[a][k]);
        starpu_heteroprio_set_nb_prios(hp.ctx, idx[a], (unsigned)n[a]);
        hp.final_n[a] = n[a];
        memcpy(hp.final_order[a], order[a], sizeof(int) * (size_t)n[a]);
    }
    /* Slow factors, as AutoHeteroprio sets them: the faster architecture of each bucket, and how much slower
     * the other is. (StarPU 1.3.10 applies a factor only when the GPU is the faster one.) */
    for (int t = 0; t < hp.ntypes; t++) {
        double c = hp.types[t].runs_on[0] ? type_cost_us(t, 0) : -1.0;
        double g = hp.types[t].runs_on[1] && hp.nworkers[1] > 0 ? type_cost_us(t, 1) : -1.0;
        if (!(c > 0.0) || !(g > 0.0))
            continue;
        if (g < c) {
            starpu_heteroprio_set_faster_arch(hp.ctx, STARPU_CUDA_IDX, (unsigned)t);
            starpu_heteroprio_set_arch_slow_factor(hp.ctx, STARPU_CPU_IDX, (unsigned)t, (float)(c / g));
        } else {
            starpu_heteroprio_set_faster_arch(hp.ctx, STARPU_CPU_IDX, (unsigned)t);
            starpu_heteroprio_set_arch_slow_factor(hp.ctx, STARPU_CUDA_IDX, (unsigned)t, (float)(g / c));
        }
    }
    hp.recomputes++;
}

static void set_idle(void)
{
    double now = starpu_timing_now(), elapsed = now - hp.t0_us, idle[DAHL_NARCH];
    for (int a = 0; a < DAHL_NARCH; a++)
        idle[a] = elapsed > 0.0 && hp.nworkers[a] > 0 ? 1.0 - hp.busy_us[a] / (elapsed * hp.nworkers[a]) : 1.0;
    dahl_autoprio_set_idle(hp.ap, idle);
}

/* The bucket name of task with footprint buckets: "symbol:footprint", the footprint as StarPU's perf models
 * key the task (dahl's footprints do not depend on the architecture). */
static void footprint_name(struct starpu_task *task, const char *symbol, char *buf, size_t size)
{
    int w = hp.first_worker[DAHL_ARCH_CPU] >= 0 ? hp.first_worker[DAHL_ARCH_CPU] : hp.first_worker[DAHL_ARCH_GPU];
    uint32_t fp = starpu_task_footprint(task->cl->model, task, starpu_worker_get_perf_archtype(w, hp.ctx), 0);
    snprintf(buf, size, "%s:%08x", symbol, (unsigned)fp);
}

/* The type of task, declaring it (and giving it a bucket) the first time. -1 when out of types. */
static int type_of(struct starpu_task *task, bool *added)
{
    const char *symbol = type_name(task->cl);
    char fpname[64];
    const char *name = symbol;
    int t;
    if (hp.conf.by_footprint && task->cl->model != NULL) {
        /* One codelet runs tasks of several footprints: the codelet cache cannot tell them apart. */
        footprint_name(task, symbol, fpname, sizeof(fpname));
        name = fpname;
        for (t = 0; t < hp.ntypes && strcmp(hp.types[t].name, name) != 0; t++)
            ;
        if (t == hp.ntypes)
            t = -1;
    } else {
        t = type_lookup(task->cl, name);
    }
    *added = false;
    if (t >= 0)
        return t;
    if (hp.ntypes == MAX_TYPES)
        return -1;
    t = hp.ntypes++;
    struct type_entry *e = &hp.types[t];
    memset(e, 0, sizeof(*e));
    e->cl = hp.conf.by_footprint ? NULL : task->cl;
    snprintf(e->name, sizeof(e->name), "%s", name);
    snprintf(e->symbol, sizeof(e->symbol), "%s", symbol);
    for (int a = 0; a < DAHL_NARCH; a++) {
        e->estimate_us[a] = -1.0;
        if (hp.nworkers[a] == 0)
            continue;
        e->runs_on[a] = starpu_worker_can_execute_task_first_impl((unsigned)hp.first_worker[a], task, NULL) != 0;
        if (e->runs_on[a]) {
            struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(hp.first_worker[a], hp.ctx);
            double us = starpu_task_expected_length(task, arch, 0);
            e->estimate_us[a] = isfinite(us) && us > 0.0 ? us : -1.0;
        }
    }
    if (hp.ap != NULL)
        dahl_autoprio_declare(hp.ap, t, e->runs_on, e->estimate_us);
    *added = true;
    return t;
}

static int push_task(struct starpu_task *task)
{
    starpu_worker_relax_on();
    STARPU_PTHREAD_MUTEX_LOCK(&hp.mutex);
    starpu_worker_relax_off();
    bool added;
    int t = type_of(task, &added);
    STARPU_ASSERT_MSG(t >= 0, "dahl heteroprio: more than %d task types", MAX_TYPES);
    task->priority = t;
    bool due = added;
    if (hp.conf.autoprio) {
        struct seen_slot *me = seen_find(task, false);
        if (me != NULL) {
            hp.types[t].indeg_sum += me->count;
            hp.types[t].indeg_n++;
            me->count = -1; /* tombstone */
        }
        struct starpu_task *stack[64], **succ = stack;
        int n = starpu_task_get_task_succs(task, 64, stack);
        if (n > 64 && (succ = malloc((size_t)n * sizeof(*succ))) != NULL)
            n = starpu_task_get_task_succs(task, (unsigned)n, succ);
        else if (n > 64)
            n = 64, succ = stack;
        int types[64], k = 0, *stypes = n <= 64 ? types : malloc((size_t)n * sizeof(int));
        double ids[64], *sids = n <= 64 ? ids : malloc((size_t)n * sizeof(double));
        for (int i = 0; stypes != NULL && sids != NULL && i < n; i++) {
            if (succ[i]->cl == NULL)
                continue;
            bool succ_added;
            int st = type_of(succ[i], &succ_added);
            if (st < 0)
                continue;
            due |= succ_added;
            struct seen_slot *s = seen_find(succ[i], true);
            int seen = s != NULL ? ++s->count : 1;
            /* ID of the successor: its type's mean observed in-degree, else what was seen of it so far. */
            const struct type_entry *e = &hp.types[st];
            stypes[k] = st;
            sids[k++] = e->indeg_n > 0 ? e->indeg_sum / (double)e->indeg_n : (double)seen;
        }
        due |= dahl_autoprio_push(hp.ap, t, k, stypes, sids);
        if (due)
            set_idle();
        if (stypes != types)
            free(stypes);
        if (sids != ids)
            free(sids);
        if (succ != stack)
            free(succ);
    }
    if (due)
        apply_lists();
    STARPU_PTHREAD_MUTEX_UNLOCK(&hp.mutex);
    return hp.heteroprio_push(task);
}

static void pre_exec(struct starpu_task *task, unsigned ctx)
{
    (void)task;
    (void)ctx;
    int w = starpu_worker_get_id();
    if (w >= 0 && w < STARPU_NMAXWORKERS)
        hp.start_us[w] = starpu_timing_now();
}

static void post_exec(struct starpu_task *task, unsigned ctx)
{
    (void)ctx;
    int w = starpu_worker_get_id();
    if (w < 0 || w >= STARPU_NMAXWORKERS)
        return;
    double us = starpu_timing_now() - hp.start_us[w];
    int a = arch_of_worker(w);
    starpu_worker_relax_on();
    STARPU_PTHREAD_MUTEX_LOCK(&hp.mutex);
    starpu_worker_relax_off();
    hp.busy_us[a] += us;
    if (hp.ap != NULL && task->cl != NULL && task->priority >= 0 && task->priority < hp.ntypes)
        dahl_autoprio_executed(hp.ap, task->priority, a, us);
    STARPU_PTHREAD_MUTEX_UNLOCK(&hp.mutex);
}

/* heteroprio's init callback: nothing is mapped yet (buckets come with the types), only the workers are
 * counted. */
static void init_callback(unsigned ctx)
{
    hp.ctx = ctx;
    for (int a = 0; a < DAHL_NARCH; a++) {
        hp.nworkers[a] = 0;
        hp.first_worker[a] = -1;
    }
    int n = (int)starpu_worker_get_count();
    for (int w = 0; w < n; w++) {
        int a = arch_of_worker(w);
        if (hp.nworkers[a]++ == 0)
            hp.first_worker[a] = w;
    }
    hp.t0_us = starpu_timing_now();
}

static void deinit(unsigned ctx)
{
    hp.heteroprio_deinit(ctx);
    STARPU_PTHREAD_MUTEX_DESTROY(&hp.mutex);
    dahl_autoprio_destroy(hp.ap);
    hp.ap = NULL;
    free(hp.seen);
    hp.seen = NULL;
    hp.seen_cap = hp.seen_used = 0;
    hp.active = false;
}

const struct starpu_sched_policy *dahl_sched_predefined(const char *name)
{
    struct starpu_sched_policy **policies = starpu_sched_get_predefined_policies();
    for (size_t i = 0; name != NULL && policies[i] != NULL; i++)
        if (strcmp(policies[i]->policy_name, name) == 0)
            return policies[i];
    return NULL;
}

int dahl_sched_configure(struct starpu_conf *sconf, const struct dahl_heteroprio_conf *conf)
{
    const struct starpu_sched_policy *heteroprio = dahl_sched_predefined("heteroprio");
    if (heteroprio == NULL || conf == NULL)
        return -EINVAL;
    memset(&hp, 0, sizeof(hp));
    hp.conf = *conf;
    if (hp.conf.interval < 1)
        hp.conf.interval = 32;
    if (conf->autoprio) {
        hp.ap = dahl_autoprio_create(conf->heuristic, NULL, hp.conf.interval);
        if (hp.ap == NULL)
            return -ENOMEM;
    }
    STARPU_PTHREAD_MUTEX_INIT(&hp.mutex, NULL);
    hp.policy = *heteroprio;
    hp.heteroprio_push = heteroprio->push_task;
    hp.heteroprio_deinit = heteroprio->deinit_sched;
    hp.policy.push_task = push_task;
    hp.policy.pre_exec_hook = pre_exec;
    hp.policy.post_exec_hook = post_exec;
    hp.policy.deinit_sched = deinit;
    sconf->sched_policy = &hp.policy;
    sconf->sched_policy_name = NULL;
    sconf->sched_policy_init = init_callback;
    hp.active = true;
    return 0;
}

int dahl_heteroprio_summary(long *recomputes, char lists[DAHL_NARCH][DAHL_HETEROPRIO_LIST_BYTES])
{
    *recomputes = hp.recomputes;
    for (int a = 0; a < DAHL_NARCH; a++) {
        size_t used = 0, size = DAHL_HETEROPRIO_LIST_BYTES;
        lists[a][0] = '\0';
        for (int k = 0; k < hp.final_n[a] && used < size; k++) {
            int n = snprintf(lists[a] + used, size - used, "%s%s", k > 0 ? "," : "", hp.types[hp.final_order[a][k]].name);
            if (n < 0)
                break;
            used += (size_t)n;
        }
    }
    return hp.ntypes;
}

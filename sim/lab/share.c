/* The GPU-sharing emulator's core (see dahlsim_share.h): one pass over the job-steps in the order they run,
 * the two link channels and the write-backs as FIFO times, the eviction policies (LRU, StarPU 1.3.10's
 * mc_list, Belady's MIN). Every time is computed when its step is processed, in order, so a run costs
 * O(steps x tensors) and the genetic search can afford thousands of them per second. */
#include "share_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t dahlsim_share_job_bytes(const struct dahlsim_share_job *j)
{
    uint64_t sum = 0;
    for (int i = 0; i < j->ntensors; i++)
        sum += j->tensors[i].bytes;
    return sum;
}

void dahlsim_share_fini(struct dahlsim_share *s)
{
    for (int j = 0; j < s->njobs; j++)
        free(s->jobs[j].tensors);
    memset(s, 0, sizeof(*s));
}

void dahlsim_share_result_fini(struct dahlsim_share_result *r)
{
    free(r->order);
    memset(r, 0, sizeof(*r));
}

int dahlsim_share_check(const struct dahlsim_share *s, const char *memory_field, char *err, size_t err_size)
{
    if (s->njobs < 1 || s->njobs > DAHLSIM_SHARE_MAX_JOBS) {
        snprintf(err, err_size, "\"jobs\": expected 1 to %d jobs, got %d", DAHLSIM_SHARE_MAX_JOBS, s->njobs);
        return -EINVAL;
    }
    if (!(s->bandwidth_bytes_per_s > 0.0) || !isfinite(s->bandwidth_bytes_per_s) || !(s->latency_s >= 0.0) ||
        !isfinite(s->latency_s)) {
        snprintf(err, err_size, "\"link\": expected a positive bandwidth and a latency >= 0, got %g B/s and %g s",
                 s->bandwidth_bytes_per_s, s->latency_s);
        return -EINVAL;
    }
    long steps = 0;
    for (int j = 0; j < s->njobs; j++) {
        const struct dahlsim_share_job *job = &s->jobs[j];
        steps += job->steps;
        if (job->steps < 1 || steps > 10000000 || !(job->compute_s >= 0.0) || !isfinite(job->compute_s) ||
            !(job->host_s >= 0.0) || !isfinite(job->host_s) || !(job->start_s >= 0.0) || !isfinite(job->start_s)) {
            snprintf(err, err_size,
                     "\"jobs\"[%d] (\"%s\"): expected steps >= 1 (10 million in all) and finite compute_s, host_s, "
                     "start_s >= 0",
                     j, job->name);
            return -EINVAL;
        }
        uint64_t need = dahlsim_share_job_bytes(job);
        if (need > s->memory_bytes) {
            snprintf(err, err_size,
                     "%s: %llu bytes is less than job \"%s\"'s data (%llu bytes): each of its steps needs all its "
                     "tensors on the GPU",
                     memory_field, (unsigned long long)s->memory_bytes, job->name, (unsigned long long)need);
            return -EINVAL;
        }
    }
    return 0;
}

int share_emu_init(struct share_emu *e, const struct dahlsim_share *s, char *err, size_t err_size)
{
    memset(e, 0, sizeof(*e));
    e->s = s;
    for (int j = 0; j < s->njobs; j++) {
        e->tbase[j] = e->ntensors;
        e->posbase[j] = e->nsteps;
        e->ntensors += s->jobs[j].ntensors;
        e->nsteps += s->jobs[j].steps;
        e->footprint[j] = dahlsim_share_job_bytes(&s->jobs[j]);
    }
    e->tbase[s->njobs] = e->ntensors;
    e->posbase[s->njobs] = e->nsteps;
    size_t nt = (size_t)e->ntensors + 1, ns = (size_t)e->nsteps + 1, nw = (size_t)s->njobs * SHARE_WINDOW_MAX;
    e->t = calloc(nt, sizeof(*e->t));
    e->pend_done = calloc(nt, sizeof(double));
    e->pend_bytes = calloc(nt, sizeof(uint64_t));
    e->win_compute = calloc(nw, sizeof(double));
    e->win_idle = calloc(nw, sizeof(double));
    e->pos = calloc(ns, sizeof(int));
    e->seq = calloc(ns, sizeof(int));
    if (!e->t || !e->pend_done || !e->pend_bytes || !e->win_compute || !e->win_idle || !e->pos || !e->seq) {
        share_emu_fini(e);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    for (int j = 0; j < s->njobs; j++)
        for (int i = 0; i < s->jobs[j].ntensors; i++) {
            struct share_tensor *t = &e->t[e->tbase[j] + i];
            t->job = j;
            t->bytes = s->jobs[j].tensors[i].bytes;
            t->written = s->jobs[j].tensors[i].written;
        }
    return 0;
}

void share_emu_fini(struct share_emu *e)
{
    free(e->t);
    free(e->pend_done);
    free(e->pend_bytes);
    free(e->win_compute);
    free(e->win_idle);
    free(e->pos);
    free(e->seq);
    memset(e, 0, sizeof(*e));
}

static double transfer_s(const struct share_emu *e, uint64_t bytes)
{
    return e->s->latency_s + (double)bytes / e->s->bandwidth_bytes_per_s;
}

/* Forgets the write-backs ended by t: their space is free. */
static void purge(struct share_emu *e, double t)
{
    int cap = e->ntensors + 1;
    while (e->pend_len > 0 && e->pend_done[e->pend_head] <= t) {
        e->pend_sum -= e->pend_bytes[e->pend_head];
        e->pend_head = (e->pend_head + 1) % cap;
        e->pend_len--;
    }
}

static void evict(struct share_emu *e, int v, double t)
{
    struct share_tensor *x = &e->t[v];
    struct dahlsim_share_job_result *jr = &e->res->jobs[x->job];
    x->present = false;
    e->alloc_bytes -= x->bytes;
    jr->evictions++;
    if (!x->dirty)
        return;
    double start = t > e->d2h_free ? t : e->d2h_free;
    double end = start + transfer_s(e, x->bytes);
    e->d2h_free = end;
    int cap = e->ntensors + 1, slot = (e->pend_head + e->pend_len) % cap;
    e->pend_done[slot] = end;
    e->pend_bytes[slot] = x->bytes;
    e->pend_len++;
    e->pend_sum += x->bytes;
    x->wb_done_s = end;
    x->dirty = false;
    jr->d2h_bytes += x->bytes;
    jr->d2h_count++;
}

static bool evictable(const struct share_emu *e, int v, int running, int loading)
{
    const struct share_tensor *x = &e->t[v];
    return x->present && x->job != running && x->job != loading;
}

/* The position of job j's next step in the given order (INT_MAX when it has none left). */
static int next_use(const struct share_emu *e, int j)
{
    int k = e->next_step[j];
    return k < e->s->jobs[j].steps ? e->pos[e->posbase[j] + k] : INT_MAX;
}

/* LRU and STARPU: the evictable tensor with the smallest stamp (of `bytes` bytes unless 0); BELADY: the one
 * used furthest ahead, clean first, then lower index. -1 when none. */
static int victim(const struct share_emu *e, int running, int loading, uint64_t bytes)
{
    int best = -1, best_use = -1;
    for (int v = 0; v < e->ntensors; v++) {
        if (!evictable(e, v, running, loading) || (bytes != 0 && e->t[v].bytes != bytes))
            continue;
        if (e->conf.policy != DAHLSIM_SHARE_BELADY) {
            if (best < 0 || e->t[v].stamp < e->t[best].stamp)
                best = v;
            continue;
        }
        int use = next_use(e, e->t[v].job);
        if (best < 0 || use > best_use || (use == best_use && e->t[best].dirty && !e->t[v].dirty)) {
            best = v;
            best_use = use;
        }
    }
    return best;
}

/* StarPU 1.3.10's reclaim for a b-byte allocation: reuse a same-size chunk, else free twice b from the head
 * of the mc_list; again while b does not fit. False when nothing is left to evict. */
static bool starpu_reclaim(struct share_emu *e, uint64_t b, double t, int running, int loading)
{
    uint64_t cap = e->s->memory_bytes;
    while (e->alloc_bytes + b > cap) {
        int v = victim(e, running, loading, b);
        if (v >= 0) {
            evict(e, v, t);
            continue;
        }
        uint64_t freed = 0;
        while (freed < 2 * b && (v = victim(e, running, loading, 0)) >= 0) {
            freed += e->t[v].bytes;
            evict(e, v, t);
        }
        if (freed == 0)
            return false;
    }
    return true;
}

/* Makes room at time t for b bytes: evictions (space being written back counts as free: the load waits for
 * it), or, when !may_evict, only memory free at t. False when it cannot. */
static bool make_room(struct share_emu *e, uint64_t b, double t, int running, int loading, bool may_evict)
{
    uint64_t cap = e->s->memory_bytes;
    purge(e, t);
    if (!may_evict)
        return e->alloc_bytes + e->pend_sum + b <= cap;
    if (e->alloc_bytes + b <= cap)
        return true;
    if (e->conf.policy == DAHLSIM_SHARE_STARPU)
        return starpu_reclaim(e, b, t, running, loading);
    while (e->alloc_bytes + b > cap) {
        int v = victim(e, running, loading, 0);
        if (v < 0)
            return false;
        evict(e, v, t);
    }
    return true;
}

/* Issues the load of tensor i at t (room made): it starts when the host->GPU channel is free, its space no
 * longer being written back, and its own write-back (if any) ended. */
static void load(struct share_emu *e, int i, double t)
{
    struct share_tensor *x = &e->t[i];
    struct dahlsim_share_job_result *jr = &e->res->jobs[x->job];
    uint64_t cap = e->s->memory_bytes;
    e->alloc_bytes += x->bytes;
    double start = t > e->h2d_free ? t : e->h2d_free;
    uint64_t over = e->alloc_bytes + e->pend_sum > cap ? e->alloc_bytes + e->pend_sum - cap : 0;
    for (int k = 0, ring = e->ntensors + 1; over > 0 && k < e->pend_len; k++) {
        int slot = (e->pend_head + k) % ring;
        over -= over < e->pend_bytes[slot] ? over : e->pend_bytes[slot];
        if (e->pend_done[slot] > start)
            start = e->pend_done[slot];
    }
    if (x->wb_done_s > start)
        start = x->wb_done_s;
    x->avail_s = start + transfer_s(e, x->bytes);
    e->h2d_free = x->avail_s;
    x->present = true;
    x->stamp = ++e->clock;
    jr->h2d_bytes += x->bytes;
    jr->h2d_count++;
}

struct share_prev {
    int job;              /* -1 before the first step */
    double start_s, end_s;
};

/* Position p of the order runs a step of job j: its prefetch, its fetch, its compute. */
static void share_step(struct share_emu *e, int p, int j, struct share_prev *prev)
{
    const struct dahlsim_share_job *job = &e->s->jobs[j];
    struct dahlsim_share_job_result *jr = &e->res->jobs[j];
    bool starpu = e->conf.policy == DAHLSIM_SHARE_STARPU;
    int k = e->next_step[j], lo = e->tbase[j], hi = e->tbase[j + 1];
    double since = k == 0 ? job->start_s : e->last_end[j];
    double ready = k == 0 ? job->start_s : e->last_end[j] + job->host_s;
    double tf = prev->end_s > ready ? prev->end_s : ready; /* the GPU reaches the step */
    if (e->conf.prefetch && prev->job >= 0) {
        double t1 = prev->start_s > job->start_s ? prev->start_s : job->start_s;
        int running = t1 < prev->end_s ? prev->job : -1;
        for (int i = lo; i < hi && t1 < tf; i++) {
            if (e->t[i].present)
                continue;
            if (!make_room(e, e->t[i].bytes, t1, running, j, !starpu))
                break;
            load(e, i, t1);
        }
    }
    uint64_t use = ++e->clock;
    for (int i = lo; i < hi; i++) {
        struct share_tensor *x = &e->t[i];
        if (x->present) {
            if (starpu && x->avail_s <= tf) /* a cache hit moves the chunk to the back of the mc_list */
                x->stamp = ++e->clock;
            continue;
        }
        make_room(e, x->bytes, tf, -1, j, true); /* cannot fail: the memory holds every job's data */
        load(e, i, tf);
    }
    double start = tf;
    for (int i = lo; i < hi; i++) {
        if (e->t[i].avail_s > start)
            start = e->t[i].avail_s;
        if (!starpu)
            e->t[i].stamp = use;
        e->t[i].dirty |= e->t[i].written;
    }
    double end = start + job->compute_s;
    share_window_add(e, j, job->compute_s, start - since);
    jr->compute_s += job->compute_s;
    jr->wait_for_data_s += start - tf;
    jr->end_s = end;
    jr->steps++;
    jr->samples += job->batch;
    e->next_step[j]++;
    e->last_end[j] = end;
    e->seq[p] = j;
    *prev = (struct share_prev){.job = j, .start_s = start, .end_s = end};
}

static void share_reset(struct share_emu *e, const struct dahlsim_share_conf *conf, const int *given)
{
    e->conf = *conf;
    for (int v = 0; v < e->ntensors; v++) {
        struct share_tensor *x = &e->t[v];
        x->present = x->dirty = false;
        x->avail_s = x->wb_done_s = 0.0;
        x->stamp = 0;
    }
    e->pend_head = e->pend_len = 0;
    e->alloc_bytes = e->pend_sum = e->clock = 0;
    e->h2d_free = e->d2h_free = 0.0;
    memset(e->next_step, 0, sizeof(e->next_step));
    memset(e->last_end, 0, sizeof(e->last_end));
    memset(e->win_len, 0, sizeof(e->win_len));
    e->round_len = e->round_pos = 0;
    e->rr_last = -1;
    e->given = given;
    if (given != NULL) {
        int count[DAHLSIM_SHARE_MAX_JOBS] = {0};
        for (int p = 0; p < e->nsteps; p++) {
            int j = given[p];
            e->pos[e->posbase[j] + count[j]++] = p;
        }
    }
}

void share_emu_run(struct share_emu *e, const struct dahlsim_share_conf *conf, enum dahlsim_share_order order,
                   const int *given, struct dahlsim_share_result *r)
{
    int *keep = r->order;
    memset(r, 0, sizeof(*r));
    r->order = keep;
    r->njobs = e->s->njobs;
    e->res = r;
    share_reset(e, conf, given);
    struct share_prev prev = {.job = -1};
    for (int p = 0; p < e->nsteps; p++) {
        int j;
        switch (order) {
        case DAHLSIM_SHARE_FIFO: j = share_pick_fifo(e); break;
        case DAHLSIM_SHARE_ROUND_ROBIN: j = share_pick_round_robin(e); break;
        case DAHLSIM_SHARE_WEIGHT: j = share_pick_weight(e, prev.start_s); break;
        default: j = given[p]; break;
        }
        share_step(e, p, j, &prev);
    }
    struct dahlsim_share_job_result *t = &r->total;
    for (int j = 0; j < r->njobs; j++) {
        const struct dahlsim_share_job_result *x = &r->jobs[j];
        t->end_s = x->end_s > t->end_s ? x->end_s : t->end_s;
        t->compute_s += x->compute_s;
        t->wait_for_data_s += x->wait_for_data_s;
        t->steps += x->steps;
        t->samples += x->samples;
        t->h2d_bytes += x->h2d_bytes;
        t->d2h_bytes += x->d2h_bytes;
        t->h2d_count += x->h2d_count;
        t->d2h_count += x->d2h_count;
        t->evictions += x->evictions;
    }
    r->makespan_s = t->end_s;
    r->busy_fraction = r->makespan_s > 0.0 ? t->compute_s / r->makespan_s : 0.0;
    r->wait_for_data_s = t->wait_for_data_s;
    r->norder = e->nsteps;
    if (r->order != NULL)
        memcpy(r->order, e->seq, (size_t)e->nsteps * sizeof(int));
    e->res = NULL;
}

int dahlsim_share_run(const struct dahlsim_share *s, const struct dahlsim_share_conf *conf,
                      enum dahlsim_share_order order, const int *given, int ngiven, struct dahlsim_share_result *r,
                      char *err, size_t err_size)
{
    memset(r, 0, sizeof(*r));
    if (order == DAHLSIM_SHARE_GA || order >= DAHLSIM_SHARE_NORDERS || conf->policy >= DAHLSIM_SHARE_NPOLICIES ||
        conf->window < 1 || conf->window > SHARE_WINDOW_MAX) {
        snprintf(err, err_size, "expected a fifo, round-robin, weight or given order, a policy and a window in "
                                "[1, %d]", SHARE_WINDOW_MAX);
        return -EINVAL;
    }
    int ret = order == DAHLSIM_SHARE_GIVEN ? dahlsim_share_order_check(s, given, ngiven, err, err_size) : 0;
    if (ret != 0)
        return ret;
    struct share_emu e;
    ret = share_emu_init(&e, s, err, err_size);
    if (ret != 0)
        return ret;
    r->order = malloc(((size_t)e.nsteps + 1) * sizeof(int));
    if (r->order == NULL) {
        share_emu_fini(&e);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    if (conf->policy == DAHLSIM_SHARE_BELADY && order != DAHLSIM_SHARE_GIVEN) {
        /* MIN needs the future: realise the order under LRU, then replay it. */
        struct dahlsim_share_conf lru = *conf;
        lru.policy = DAHLSIM_SHARE_LRU;
        share_emu_run(&e, &lru, order, NULL, r);
        share_emu_run(&e, conf, DAHLSIM_SHARE_GIVEN, r->order, r);
    } else {
        share_emu_run(&e, conf, order, order == DAHLSIM_SHARE_GIVEN ? given : NULL, r);
    }
    share_emu_fini(&e);
    return 0;
}

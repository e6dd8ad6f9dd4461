/* Representative ranks: see dahl_light.h. Everything here but the variable's parsing is the sim-mpi
 * flavour's; elsewhere the mode is off and every function is a no-op.
 *
 * SMPI runs every rank as actors of one process: the heap is shared, each rank's globals are its own. A
 * representative's board (below) lives on the heap, its address published as a property of SimGrid's root
 * zone; the light ranks of its group wait for it there at no simulated time. Only a rank's own SMPI actor may
 * post its MPI requests (any actor may wait for one): StarPU-SimGrid hands a light rank's SMPI actor to
 * starpu_mpi_simgrid_rank_hook (scripts/patches/starpu-simgrid-rank-hook.patch) before StarPU starts there,
 * and it becomes the rank's proxy, as StarPU-MPI's progression thread is, posting what its helper actors
 * ask for (one follows the board, one per gradient exchange, one waits for each envelope). One SimGrid
 * mutex and condition per board guard and signal everything its group shares. */
#include "dahl_light.h"

#include "dahl_array.h"
#include "dahl_mpi.h"
#include "dahl_progress.h"
#include "dahl_starpu.h" /* DAHL_MPI, DAHL_SIMULATED */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS 1024

/* The process's view of the mode (each rank parses the variable itself). */
static struct {
    bool parsed, mode;
    int size;               /* ranks the variable covers */
    int rep_of[MAX_RANKS];
    int reps, light;
} plan;

/* A rank's role in the binomial tree of size ranks (dahl_allreduce_submit): how many partial sums it receives
 * (its children), and whether it is the root. Ranks of one role do the same accumulates and messages. */
static int role_of(int r, int size)
{
    int children = 0;
    for (int s = 1; s < size && !(r & s); s <<= 1)
        if (r + s < size)
            children++;
    return r == 0 ? -1 : children;
}

/* "FIRST-LAST,...": the node groups, ranges in rank order from 0. In each, one representative per role: the
 * rank of that role with the fewest set bits (the broadcast reaches it first), the lowest of those. */
static bool parse_plan(const char *text)
{
    int next = 0, first[MAX_RANKS], last[MAX_RANKS], ngroups = 0;
    const char *p = text;
    while (*p != '\0') {
        int used = 0;
        if (ngroups == MAX_RANKS || sscanf(p, "%d-%d%n", &first[ngroups], &last[ngroups], &used) != 2 ||
            first[ngroups] != next || last[ngroups] < first[ngroups] || last[ngroups] >= MAX_RANKS)
            return false;
        next = last[ngroups++] + 1;
        p += used;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return false;
    }
    plan.size = next;
    for (int g = 0; g < ngroups; g++) {
        for (int r = first[g]; r <= last[g]; r++) {
            int rep = r, role = role_of(r, next);
            for (int q = first[g]; q <= last[g]; q++) {
                int bq = __builtin_popcount((unsigned)q), brep = __builtin_popcount((unsigned)rep);
                if (role_of(q, next) == role && (bq < brep || (bq == brep && q < rep)))
                    rep = q;
            }
            plan.rep_of[r] = rep;
            if (rep == r)
                plan.reps++;
            else
                plan.light++;
        }
    }
    return next > 0;
}

bool dahl_light_mode(void)
{
    if (!plan.parsed) {
        plan.parsed = true;
        const char *text = getenv("DAHLSIM_REPRESENTATIVES");
        plan.mode = DAHL_MPI && DAHL_SIMULATED && text != NULL && text[0] != '\0' && parse_plan(text);
        if (!plan.mode) {
            plan.reps = 0;
            plan.light = 0;
        }
    }
    return plan.mode;
}

int dahl_light_rep_of(int r)
{
    return dahl_light_mode() && r >= 0 && r < plan.size ? plan.rep_of[r] : r;
}

int dahl_light_count(void)
{
    return dahl_light_mode() ? plan.light : 0;
}

#if DAHL_MPI && DAHL_SIMULATED
#include <starpu_mpi.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>
#include <simgrid/zone.h>
#include <smpi/smpi.h>

/* StarPU-MPI 1.3.10's envelope (mpi/src/mpi/starpu_mpi_mpi_backend.h: mode, size, data_tag, sync), sent on
 * tag _starpu_mpi_tag (42 unless changed) before every data message, which goes on the next tag. */
struct envelope {
    int mode; /* 0: data; STOP: this rank's own signal to its dispatcher */
    int64_t size;
    int64_t data_tag;
    unsigned sync;
};
_Static_assert(sizeof(struct envelope) == 32, "StarPU-MPI's envelope is 32 bytes on LP64");
#define TAG_ENVELOPE 42
#define TAG_DATA 43
#define STOP 77
#define GRADS 256
#define LEVELS 16
#define HISTORY 4096 /* the representative's last tasks kept (a step of the default network has ~740) */
#define CHAIN 4      /* the tasks before a gradient's ready a light rank replays on their own cores */
#define SINCE_BINS 6 /* how long a turn had run when a task started: under 30, 60, 100, 200, 1000 us, more */

enum event_kind { EV_STEP, EV_GRAD, EV_READY, EV_BARRIER, EV_END };
struct event {
    enum event_kind kind;
    size_t step;
    int index;
    size_t n;
    double accumulate_s;
};

/* What one rank knows of each step (the representative's on the board, each light rank's own): where it
 * could start at the earliest (the barrier it last left), when its last gradient held the sum of every
 * rank's (done), gradients submitted and summed. */
struct steps {
    size_t cap;
    double *floor_s, *done_s;
    int *ngrads, *ndone;
    double *sum_s; /* [step * GRADS + index]: when that gradient held the sum of every rank's, NAN before */
};

/* A data message whose receive the proxy posted; an actor of its own waits for it. */
struct arrival {
    struct light *L;
    int source;
    int64_t tag;
    MPI_Request req;
    void *buf;
    double seen_s; /* when the progression thread saw it come (in its turn), NAN before */
};

enum op_kind { OP_SEND, OP_ENVELOPE, OP_BARRIER, OP_STOP };
/* A send the proxy posts for a gradient's actor, which then waits for it. */
struct pending {
    MPI_Request req[2];
    struct envelope env;
    void *buf;
    bool posted;
};
struct op {
    enum op_kind kind;
    int peer; /* OP_SEND: the destination; OP_ENVELOPE: the source */
    int64_t tag;
    size_t bytes;
    struct pending *p;
    struct envelope env;
};

/* A task the representative ran on a CPU worker: its core; when it was pushed (ready), started and ended. */
struct ran {
    int core;
    double push_s, start_s, end_s;
};

/* The tasks whose chain made a gradient ready on the representative, oldest first: the task that ended at
 * the ready time, the one whose end released it (pushed it), and so on, each started in the step. */
struct chain {
    int n;
    struct ran t[CHAIN];
};

struct board;
/* A light rank: its proxy's queue, what came, what it knows of each step. Guarded by its board's lock. */
struct light {
    struct board *b;
    sg_cond_t cond; /* what concerns this rank only (the board's lock) */
    int rank, size;
    size_t n[256];        /* per gradient index: floats */
    double accumulate_s[256]; /* per gradient index: its accumulate's time */
    size_t lag_step;              /* start_lag's last answer, for that step (lag_set) */
    double lag_s;
    bool lag_set;
    double barrier_left_s;
    long barriers; /* barriers the proxy went through */
    struct steps st;
    int running; /* gradient exchanges alive */
    struct op *ops;
    size_t ophead, nops, opcap;
    struct arrival **arr;
    size_t narr, arrcap;
    MPI_Request env_req; /* the envelope receive posted */
    struct envelope env_in;
};

struct board {
    sg_mutex_t lock;
    sg_cond_t cond;
    int rep;
    bool charged;
    int ncores;
    struct event *ev;
    size_t nev, evcap;
    struct steps st;
    double *ready_s; /* [step * GRADS + index]: NAN until ready */
    double *starts[GRADS / 2]; /* per layer: when each of its tasks started (not its updates) */
    size_t nstarts[GRADS / 2], startcap[GRADS / 2];
    const void *acc_tmp[GRADS][LEVELS]; /* the buffer gradient index's partial sum of level comes into */
    double acc_wait_s[GRADS][LEVELS];   /* its last accumulate's wait for a worker, from ready to start */
    int *ready_core;  /* [step * GRADS + index]: the worker's core that made it ready, -1 if none */
    struct chain *chains; /* [step * GRADS + index]: n -1 until a light rank asks for it */
    struct ran history[HISTORY]; /* the last tasks that ran on its CPU workers (a ring), accumulates apart */
    size_t nhistory;             /* tasks posted so far */
    long acc_turned[SINCE_BINS], acc_same[SINCE_BINS]; /* accumulates started while a turn held a core, by
                                                          how long it had, and of those on that core */
    bool ended; /* training ended: no task will be posted */
    double barrier_left_s;
    struct light *lights[MAX_RANKS];
    double late_s;
    long late_grads;
};

static struct board *my_board; /* a representative's */

/* dahl_array_grow, where running out of memory ends the simulation (an actor has no caller to tell). */
static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    void *q = dahl_array_grow(p, cap, need, elem);
    if (q == NULL) {
        fprintf(stderr, "dahl: out of memory (representative ranks)\n");
        abort();
    }
    return q;
}

/* Makes room for step s in st (new entries: no floor, nothing done). */
static void steps_reserve(struct steps *st, size_t s)
{
    size_t old = st->cap, cap = old;
    st->floor_s = grow(st->floor_s, &cap, s + 1, sizeof(double));
    cap = old;
    st->done_s = grow(st->done_s, &cap, s + 1, sizeof(double));
    cap = old;
    st->ngrads = grow(st->ngrads, &cap, s + 1, sizeof(int));
    cap = old;
    st->ndone = grow(st->ndone, &cap, s + 1, sizeof(int));
    size_t scap = old * GRADS;
    st->sum_s = grow(st->sum_s, &scap, cap * GRADS, sizeof(double));
    for (size_t i = old * GRADS; i < cap * GRADS; i++)
        st->sum_s[i] = NAN;
    for (size_t i = old; i < cap; i++) {
        st->floor_s[i] = -INFINITY;
        st->done_s[i] = -INFINITY;
        st->ngrads[i] = 0;
        st->ndone[i] = 0;
    }
    st->cap = cap;
}

static void board_key(int rep, char *key, size_t size)
{
    snprintf(key, size, "dahl-light-board-%d", rep);
}

static struct board *board_of(int rep)
{
    char key[64];
    board_key(rep, key, sizeof(key));
    const char *v = sg_zone_get_property_value(sg_zone_get_root(), key);
    void *p = NULL;
    return v != NULL && sscanf(v, "%p", &p) == 1 ? p : NULL;
}

static struct board *board_open(int rep)
{
    struct board *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    b->lock = sg_mutex_init();
    b->cond = sg_cond_init();
    b->rep = rep;
    b->barrier_left_s = 0.0;
    char key[64], value[32];
    board_key(rep, key, sizeof(key));
    snprintf(value, sizeof(value), "%p", (void *)b);
    sg_zone_set_property_value(sg_zone_get_root(), key, value);
    return b;
}

/* ---- the representative's side ------------------------------------------------------------------------ */

/* The bin of how long a turn had run when a task started (SINCE_BINS). */
static int since_bin(double since_s)
{
    static const double edges[SINCE_BINS - 1] = {30e-6, 60e-6, 100e-6, 200e-6, 1e-3};
    int k = 0;
    while (k < SINCE_BINS - 1 && since_s >= edges[k])
        k++;
    return k;
}

static void post(struct event e)
{
    struct board *b = my_board;
    if (b == NULL)
        return;
    sg_mutex_lock(b->lock);
    if (e.kind == EV_STEP) {
        b->charged = dahl_progress_charged(&b->ncores);
        size_t old = b->st.cap;
        steps_reserve(&b->st, e.step);
        size_t cap = old * GRADS;
        b->ready_s = grow(b->ready_s, &cap, b->st.cap * GRADS, sizeof(double));
        cap = old * GRADS;
        b->ready_core = grow(b->ready_core, &cap, b->st.cap * GRADS, sizeof(int));
        cap = old * GRADS;
        b->chains = grow(b->chains, &cap, b->st.cap * GRADS, sizeof(struct chain));
        for (size_t i = old * GRADS; i < b->st.cap * GRADS; i++) {
            b->ready_s[i] = NAN;
            b->ready_core[i] = -1;
            b->chains[i].n = -1;
        }
        b->st.floor_s[e.step] = b->barrier_left_s;
    } else if (e.kind == EV_GRAD) {
        b->st.ngrads[e.step]++;
    } else if (e.kind == EV_END) {
        b->ended = true;
    }
    b->ev = grow(b->ev, &b->evcap, b->nev + 1, sizeof(*b->ev));
    b->ev[b->nev++] = e;
    sg_cond_notify_all(b->cond);
    sg_mutex_unlock(b->lock);
}

void dahl_light_post_step(size_t step)
{
    post((struct event){.kind = EV_STEP, .step = step});
}

void dahl_light_post_grad(size_t step, int index, size_t n, double accumulate_s)
{
    post((struct event){.kind = EV_GRAD, .step = step, .index = index, .n = n, .accumulate_s = accumulate_s});
}

void dahl_light_post_barrier(void)
{
    post((struct event){.kind = EV_BARRIER});
}

void dahl_light_post_end(void)
{
    post((struct event){.kind = EV_END});
}

void dahl_light_post_ready(size_t step, int index, int core)
{
    double t_s = simgrid_get_clock();
    struct board *b = my_board;
    if (b == NULL || index < 0 || index >= GRADS)
        return;
    sg_mutex_lock(b->lock);
    if (step < b->st.cap) {
        b->ready_s[step * GRADS + (size_t)index] = t_s;
        b->ready_core[step * GRADS + (size_t)index] = core < b->ncores ? core : -1;
    }
    sg_mutex_unlock(b->lock);
    post((struct event){.kind = EV_READY, .step = step, .index = index});
}

void dahl_light_post_tmp(int index, int level, const void *tmp)
{
    struct board *b = my_board;
    if (b == NULL || index < 0 || index >= GRADS || level < 0 || level >= LEVELS)
        return;
    sg_mutex_lock(b->lock);
    b->acc_tmp[index][level] = tmp;
    sg_mutex_unlock(b->lock);
}

void dahl_light_post_accumulate(const void *src, int core, double start_s, double wait_s)
{
    struct board *b = my_board;
    if (b == NULL || src == NULL)
        return;
    sg_mutex_lock(b->lock);
    double since;
    int turned = b->charged ? dahl_progress_turn_core(start_s, b->rep, b->ncores, &since) : -1;
    if (turned >= 0 && core >= 0) {
        int k = since_bin(since);
        b->acc_turned[k]++;
        b->acc_same[k] += core == turned;
    }
    for (int i = 0; i < GRADS; i++)
        for (int l = 0; l < LEVELS; l++)
            if (b->acc_tmp[i][l] == src)
                b->acc_wait_s[i][l] = wait_s;
    sg_mutex_unlock(b->lock);
}

void dahl_light_post_task(int layer, int core, double push_s, double start_s, double end_s)
{
    struct board *b = my_board;
    if (b == NULL || (core < 0 && (layer < 0 || layer >= GRADS / 2)))
        return;
    sg_mutex_lock(b->lock);
    if (layer >= 0 && layer < GRADS / 2) {
        b->starts[layer] = grow(b->starts[layer], &b->startcap[layer], b->nstarts[layer] + 1, sizeof(double));
        b->starts[layer][b->nstarts[layer]++] = start_s;
    }
    if (core >= 0 && b->charged) { /* a light rank replays a chain of them under its turns */
        b->history[b->nhistory++ % HISTORY] = (struct ran){.core = core, .push_s = push_s, .start_s = start_s,
                                                           .end_s = end_s};
        sg_cond_notify_all(b->cond);
    }
    sg_mutex_unlock(b->lock);
}

void dahl_light_post_done(size_t step, int index)
{
    double t_s = simgrid_get_clock();
    struct board *b = my_board;
    if (b == NULL)
        return;
    sg_mutex_lock(b->lock);
    if (step < b->st.cap) {
        if (t_s > b->st.done_s[step])
            b->st.done_s[step] = t_s;
        b->st.ndone[step]++;
        if (index >= 0 && index < GRADS)
            b->st.sum_s[step * GRADS + (size_t)index] = t_s;
    }
    sg_cond_notify_all(b->cond);
    sg_mutex_unlock(b->lock);
}

void dahl_light_post_barrier_left(void)
{
    struct board *b = my_board;
    if (b == NULL)
        return;
    sg_mutex_lock(b->lock);
    b->barrier_left_s = simgrid_get_clock();
    sg_mutex_unlock(b->lock);
}

/* ---- a light rank ---------------------------------------------------------------------------------------- */

/* Its progression thread's turn, where its representative's is charged. */
/* How long the rank's progression thread, woken at t, waits for its turn (0 where it is not charged). */
static double turn_wait(const struct light *L, double t)
{
    return L->b->charged ? dahl_progress_turn_wait_s(t, L->rank, L->b->ncores) : 0.0;
}

static void gate(struct light *L)
{
    double w = turn_wait(L, simgrid_get_clock());
    if (w > 0)
        sg_actor_sleep_for(w);
}

static void start_actor(const char *name, xbt_main_func_t code, void *data)
{
    sg_actor_t a = sg_actor_init(name, sg_host_self());
    sg_actor_set_data(a, data);
    sg_actor_start(a, code, 0, NULL);
}

/* Hands op to the proxy (board locked). */
static void enqueue(struct light *L, struct op op)
{
    if (L->ophead == L->nops)
        L->ophead = L->nops = 0;
    L->ops = grow(L->ops, &L->opcap, L->nops + 1, sizeof(*L->ops));
    L->ops[L->nops++] = op;
    sg_cond_notify_all(L->cond);
}

/* A send (envelope, then data) for the proxy to post: waits until it has, then for both to complete. */
static void send_to(struct light *L, int peer, int64_t tag, size_t bytes)
{
    struct pending p = {.posted = false};
    sg_mutex_lock(L->b->lock);
    enqueue(L, (struct op){.kind = OP_SEND, .peer = peer, .tag = tag, .bytes = bytes, .p = &p});
    while (!p.posted)
        sg_cond_wait(L->cond, L->b->lock);
    sg_mutex_unlock(L->b->lock);
    MPI_Wait(&p.req[0], MPI_STATUS_IGNORE);
    MPI_Wait(&p.req[1], MPI_STATUS_IGNORE);
    SMPI_SHARED_FREE(p.buf);
    gate(L); /* the thread sees the completion in its turn */
}

/* Waits for the message tagged tag from peer, whose receive the proxy posted when its envelope came, until
 * the progression thread has seen it come. A message that came before this rank's own gradient was ready
 * was seen then, in the thread's turn: what waits for both (an accumulate) starts when the gradient is. */
static void recv_from(struct light *L, int peer, int64_t tag)
{
    struct board *b = L->b;
    sg_mutex_lock(b->lock);
    struct arrival *a = NULL;
    while (a == NULL) {
        for (size_t i = 0; i < L->narr && a == NULL; i++)
            if (L->arr[i]->source == peer && L->arr[i]->tag == tag) {
                a = L->arr[i];
                L->arr[i] = L->arr[--L->narr];
            }
        if (a == NULL)
            sg_cond_wait(L->cond, b->lock);
    }
    while (isnan(a->seen_s))
        sg_cond_wait(L->cond, b->lock);
    double seen = a->seen_s;
    sg_mutex_unlock(b->lock);
    free(a);
    if (seen > simgrid_get_clock())
        sg_actor_sleep_until(seen);
}

/* An actor per data message: waits for it to come; the thread sees it in its turn. */
static void arrival_wait(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct arrival *a = sg_actor_self_get_data();
    struct light *L = a->L;
    MPI_Wait(&a->req, MPI_STATUS_IGNORE);
    SMPI_SHARED_FREE(a->buf);
    double t = simgrid_get_clock();
    double seen = t + turn_wait(L, t);
    sg_mutex_lock(L->b->lock);
    a->seen_s = seen;
    sg_cond_notify_all(L->cond);
    sg_mutex_unlock(L->b->lock);
}

/* The gradient holds the sum of every rank's (board locked): what the rank's update waits for. */
static void final_here(struct light *L, size_t step, int index)
{
    double t = simgrid_get_clock();
    if (t > L->st.done_s[step])
        L->st.done_s[step] = t;
    L->st.ndone[step]++;
    L->st.sum_s[step * GRADS + (size_t)index] = t;
    sg_cond_notify_all(L->cond);
}

/* The representative's work between two of its times: under its turns where they are charged, those of one
 * core (a turn stops that core's task for the whole slice) or, with core -1, a share of all of them. */
static double rep_work(const struct board *b, double from_s, double to_s, int core)
{
    return b->charged ? dahl_progress_work_s(from_s, to_s, b->rep, b->ncores, core) : to_s - from_s;
}

/* When a light rank starting at from_s has done that work, under its own turns (of core, as rep_work). */
static double advance(const struct light *L, double from_s, double work_s, int core)
{
    const struct board *b = L->b;
    return b->charged ? dahl_progress_turned_s(from_s, work_s, L->rank, b->ncores, core) : from_s + work_s;
}

/* The core a light rank's accumulate starting at t runs on (board locked). StarPU-MPI's thread releases it
 * when the child's partial sum has come, and which worker takes it depends on every other push (the
 * submitting thread's too): in the full simulation each rank's accumulates land on cores no rank shares,
 * and where the thread takes turns one stopped for a slice holds up the tree above it. Whether a task
 * started in a turn runs on the core the turn holds depends on how long the turn has run: in a 64-node
 * Fashion-MNIST full simulation, 91 % of the accumulates started in its first 10 us (most of them released
 * by a task the turn before had stopped, and stopped in turn; none started between 10 and 40 us), 12 % of
 * those started later. The
 * representative counts how often by that time, and a light rank draws from (rank, step, gradient, level),
 * the same every run, whether it is that core and, if not, which. */
static int draw_core(const struct light *L, uint64_t key, double t, const long *turned_n, const long *same_n)
{
    const struct board *b = L->b;
    uint64_t h = ((uint64_t)L->rank * 1000003u + key) * 0x9E3779B97F4A7C15u;
    double since;
    int turned = dahl_progress_turn_core(t, L->rank, b->ncores, &since);
    if (turned < 0 || b->ncores < 2)
        return (int)((h >> 33) % (uint64_t)b->ncores);
    int k = since_bin(since);
    double same = turned_n[k] > 0 ? (double)same_n[k] / (double)turned_n[k] : 1.0 / b->ncores;
    if ((double)(h >> 11) * 0x1p-53 < same)
        return turned;
    int other = (int)(((h * 0x9E3779B97F4A7C15u) >> 33) % (uint64_t)(b->ncores - 1));
    return other < turned ? other : other + 1;
}

static int accumulate_core(const struct light *L, size_t step, int index, int level, double t)
{
    const struct board *b = L->b;
    if (!b->charged || b->ncores <= 0)
        return -1;
    return draw_core(L, (uint64_t)step * 7919u + (uint64_t)index * 131u + (uint64_t)level, t, b->acc_turned,
                     b->acc_same);
}

/* The binomial tree of dahl_allreduce_submit, seen from rank r of size: reduce to rank 0, then broadcast. */
static void exchange(struct light *L, size_t step, int index, size_t bytes, double accumulate_s)
{
    int r = L->rank, size = L->size, level = 0;
    for (int s = 1; s < size; s <<= 1, level++) {
        if (r & s) {
            send_to(L, r - s, dahl_allreduce_tag(step, index, 0, level), bytes);
            break;
        }
        if (r + s < size) {
            recv_from(L, r + s, dahl_allreduce_tag(step, index, 0, level));
            if (accumulate_s > 0) { /* the child's partial sum added in: a wait for a worker, then its time */
                const struct board *b = L->b;
                sg_mutex_lock(b->lock);
                double wait = level < LEVELS ? b->acc_wait_s[index][level] : 0.0;
                sg_mutex_unlock(b->lock);
                if (wait > 0)
                    sg_actor_sleep_for(wait);
                sg_mutex_lock(b->lock);
                int core = accumulate_core(L, step, index, level, simgrid_get_clock());
                sg_mutex_unlock(b->lock);
                sg_actor_sleep_until(advance(L, simgrid_get_clock(), accumulate_s, core)); /* under its turns */
            }
        }
    }
    int top = 1;
    while (top < size)
        top <<= 1;
    bool final = false;
    struct pending p[16];
    int nsend = 0;
    sg_mutex_lock(L->b->lock);
    for (int t = top >> 1; t >= 1; t >>= 1) {
        level = __builtin_ctz((unsigned)t);
        if ((r & (2 * t - 1)) == t) {
            sg_mutex_unlock(L->b->lock);
            recv_from(L, r - t, dahl_allreduce_tag(step, index, 1, level));
            sg_mutex_lock(L->b->lock);
            final_here(L, step, index);
            final = true;
        } else if ((r & (2 * t - 1)) == 0 && r + t < size && nsend < 16) {
            p[nsend] = (struct pending){.posted = false};
            enqueue(L, (struct op){.kind = OP_SEND, .peer = r + t, .tag = dahl_allreduce_tag(step, index, 1, level),
                                   .bytes = bytes, .p = &p[nsend]});
            nsend++;
        }
    }
    if (!final) /* rank 0 only, never light */
        final_here(L, step, index);
    for (int i = 0; i < nsend; i++)
        while (!p[i].posted)
            sg_cond_wait(L->cond, L->b->lock);
    sg_mutex_unlock(L->b->lock);
    for (int i = 0; i < nsend; i++) {
        MPI_Wait(&p[i].req[0], MPI_STATUS_IGNORE);
        MPI_Wait(&p[i].req[1], MPI_STATUS_IGNORE);
        SMPI_SHARED_FREE(p[i].buf);
    }
    if (nsend > 0)
        gate(L);
}

struct job {
    struct light *L;
    size_t step;
    int index;
    double theirs_s, mine_s; /* where the representative and this rank started the step's work */
};

/* The representative's latest task that ended at t_s (within 2 ns) on core (any with -1), NULL if none is
 * in its history. Board locked. */
static const struct ran *ran_ending(const struct board *b, int core, double t_s)
{
    size_t n = b->nhistory < HISTORY ? b->nhistory : HISTORY;
    for (size_t k = 1; k <= n; k++) {
        const struct ran *r = &b->history[(b->nhistory - k) % HISTORY];
        if ((core < 0 || r->core == core) && fabs(r->end_s - t_s) < 2e-9)
            return r;
    }
    return NULL;
}

/* Whether the representative's worker of core has posted a task that ended after t_s. Board locked. */
static bool moved_on(const struct board *b, int core, double t_s)
{
    size_t n = b->nhistory < HISTORY ? b->nhistory : HISTORY;
    for (size_t k = 1; k <= n; k++) {
        const struct ran *r = &b->history[(b->nhistory - k) % HISTORY];
        if (r->core == core)
            return r->end_s > t_s + 2e-9;
    }
    return false;
}

/* The chain of tasks that made gradient index of step ready on the representative, started at or after
 * from_s (its step's start), computed once for its light ranks. The worker's mark callback runs before the
 * task's own, so the last task's times may not be posted yet: waits (on the board's cond, locked) until they
 * are, its worker has moved on, or training ended. */
static const struct chain *chain_of(struct board *b, size_t step, int index, double from_s)
{
    struct chain *c = &b->chains[step * GRADS + (size_t)index];
    int core = b->ready_core[step * GRADS + (size_t)index];
    double ready = b->ready_s[step * GRADS + (size_t)index];
    if (c->n < 0 && (!b->charged || core < 0))
        c->n = 0;
    const struct ran *x = NULL;
    while (c->n < 0 && (x = ran_ending(b, core, ready)) == NULL && !b->ended && !moved_on(b, core, ready))
        sg_cond_wait(b->cond, b->lock);
    if (c->n >= 0)
        return c;
    struct ran back[CHAIN];
    int n = 0;
    for (; x != NULL && n < CHAIN && x->start_s >= from_s - 1e-12; x = ran_ending(b, -1, x->push_s))
        back[n++] = *x;
    for (int i = 0; i < n; i++)
        c->t[i] = back[n - 1 - i];
    c->n = n;
    return c;
}

/* When a light rank that started the step's work at mine_s has done what its representative, starting at
 * theirs_s, had done at ready_s, under its own turns. The work before the chain is all cores' (a turn takes
 * a share of them: the others' workers go on with other tasks); each task of the chain is its core's, which
 * a turn stops for the whole slice: the last tasks before a gradient is ready are a chain, and in the full
 * simulation a turn that catches one holds the gradient up by the slice. A chain of 4 tasks, replayed on
 * full-simulation data of 64 nodes, gave the last leaf's ready time within 0.4 ms on the mean (-1.2 ms with
 * the last task's core alone for all the work, -1.3 ms with all cores). */
static double replay(const struct light *L, const struct chain *c, double theirs_s, double mine_s, double ready_s)
{
    const struct board *b = L->b;
    double t = mine_s, prev = theirs_s;
    for (int i = 0; i < c->n; i++) {
        const struct ran *x = &c->t[i];
        if (x->start_s > prev)
            t = advance(L, t, rep_work(b, prev, x->start_s, -1), -1);
        t = advance(L, t, rep_work(b, x->start_s, x->end_s, x->core), x->core);
        prev = x->end_s;
    }
    return advance(L, t, rep_work(b, prev, ready_s, -1), -1);
}

/* Where a step could start: after the barrier last left and the previous step's last gradient summed. Waits
 * (on cond) until that gradient is known to be the last, every one of the step summed: a representative's
 * callbacks may say so after its next step's first gradient is ready. */
static double step_start(struct board *b, sg_cond_t cond, struct steps *st, size_t step)
{
    while (step > 0 && st->ndone[step - 1] < st->ngrads[step - 1])
        sg_cond_wait(cond, b->lock);
    double s = st->floor_s[step];
    if (step > 0 && st->done_s[step - 1] > s)
        s = st->done_s[step - 1];
    return s;
}

/* One gradient's exchange on a light rank, from its time on. */
static void gradient(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct job *j = sg_actor_self_get_data();
    struct light *L = j->L;
    struct board *b = L->b;
    sg_mutex_lock(b->lock);
    const struct chain *c = chain_of(b, j->step, j->index, j->theirs_s);
    double when = replay(L, c, j->theirs_s, j->mine_s, b->ready_s[j->step * GRADS + (size_t)j->index]);
    double now = simgrid_get_clock();
    if (now - when > 1e-9) {
        b->late_s += now - when;
        b->late_grads++;
    }
    sg_mutex_unlock(b->lock);
    if (when > now)
        sg_actor_sleep_until(when);
    exchange(L, j->step, j->index, L->n[j->index] * sizeof(float), L->accumulate_s[j->index]);
    sg_mutex_lock(b->lock);
    L->running--;
    sg_cond_notify_all(L->cond);
    sg_mutex_unlock(b->lock);
    free(j);
}

/* The first start of a task of layer i at or after t_s on the representative (its updates left out),
 * INFINITY if none yet. */
static double first_start(const struct board *b, int i, double t_s)
{
    double first = INFINITY;
    for (size_t k = 0; k < b->nstarts[i]; k++)
        if (b->starts[i][k] >= t_s - 1e-12 && b->starts[i][k] < first)
            first = b->starts[i][k];
    return first;
}

/* How much later than its representative a light rank does step `step`'s work, both having every sum of the
 * step before (upper: how much later its last sum came, the lag when a barrier starts the step). A layer's
 * forward waits for its parameters' sums and for the layer before, so a light rank's last sum does not hold
 * up its whole step: with d_i how much later layer i's parameters were summed here and s_i how long after
 * its own sum the representative started layer i's first task (its slack), the lag is the largest d_i - s_i
 * (max-plus: the representative's path from a sum to the layer's start is at most s_i). Its layers with no
 * parameters follow. */
static double start_lag(struct light *L, size_t step, double upper)
{
    const struct board *b = L->b;
    if (step == 0 || L->st.floor_s[step] >= L->st.done_s[step - 1] || b->st.floor_s[step] >= b->st.done_s[step - 1])
        return upper;
    if (L->lag_set && L->lag_step == step)
        return L->lag_s;
    double lag = -INFINITY;
    for (int i = 0; i < GRADS / 2; i++) {
        double mine = -INFINITY, theirs = -INFINITY;
        for (int h = 2 * i; h <= 2 * i + 1; h++) {
            double m = L->st.sum_s[(step - 1) * GRADS + (size_t)h], t = b->st.sum_s[(step - 1) * GRADS + (size_t)h];
            if (isnan(m) || isnan(t))
                continue;
            mine = m > mine ? m : mine;
            theirs = t > theirs ? t : theirs;
        }
        if (!isfinite(theirs))
            continue;
        double f = first_start(b, i, theirs);
        if (!isfinite(f))
            return upper;
        double l = (mine - theirs) - (f - theirs);
        lag = l > lag ? l : lag;
    }
    L->lag_step = step;
    L->lag_s = isfinite(lag) && lag < upper ? lag : upper;
    L->lag_set = true;
    return L->lag_s;
}

/* The representative's events in order (an actor of the light rank; the proxy posts its requests). */
static void follow(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct light *L = sg_actor_self_get_data();
    struct board *b = L->b;
    sg_mutex_lock(b->lock);
    for (size_t k = 0;; k++) {
        while (b->nev <= k)
            sg_cond_wait(b->cond, b->lock);
        struct event e = b->ev[k];
        if (e.kind == EV_STEP) {
            steps_reserve(&L->st, e.step);
            L->st.floor_s[e.step] = L->barrier_left_s;
        } else if (e.kind == EV_GRAD) {
            L->st.ngrads[e.step]++;
            L->n[e.index] = e.n;
            L->accumulate_s[e.index] = e.accumulate_s;
        } else if (e.kind == EV_READY) {
            /* The representative's gradient is ready: this rank's is after the same work, started start_lag later. */
            double mine = step_start(b, L->cond, &L->st, e.step);
            double theirs = step_start(b, b->cond, &b->st, e.step);
            mine = theirs + start_lag(L, e.step, mine - theirs);
            struct job *j = malloc(sizeof(*j));
            if (j == NULL)
                abort();
            *j = (struct job){.L = L, .step = e.step, .index = e.index, .theirs_s = theirs, .mine_s = mine};
            L->running++;
            start_actor("light-gradient", gradient, j);
        } else {
            while (L->running > 0)
                sg_cond_wait(L->cond, b->lock);
            long barriers = L->barriers;
            enqueue(L, (struct op){.kind = e.kind == EV_END ? OP_STOP : OP_BARRIER});
            if (e.kind == EV_END)
                break;
            while (L->barriers == barriers)
                sg_cond_wait(L->cond, b->lock);
            L->barrier_left_s = simgrid_get_clock();
        }
    }
    sg_mutex_unlock(b->lock);
}

/* Waits for the envelope receive the proxy posted, and hands what came back to it. */
static void envelope_wait(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct light *L = sg_actor_self_get_data();
    MPI_Status status;
    MPI_Wait(&L->env_req, &status);
    sg_mutex_lock(L->b->lock);
    enqueue(L, (struct op){.kind = OP_ENVELOPE, .env = L->env_in, .peer = status.MPI_SOURCE});
    sg_mutex_unlock(L->b->lock);
}

static void post_envelope_recv(struct light *L)
{
    MPI_Irecv(&L->env_in, (int)sizeof(L->env_in), MPI_BYTE, MPI_ANY_SOURCE, TAG_ENVELOPE, MPI_COMM_WORLD, &L->env_req);
    start_actor("light-envelope", envelope_wait, L);
}

/* The light rank's SMPI actor, the only one that may post its MPI requests (as StarPU-MPI's progression
 * thread does): sends as envelope + data back to back, a data receive as soon as its envelope came (both after
 * the thread's turn), barriers; helper actors wait for everything else. */
static void proxy(struct light *L)
{
    struct board *b = L->b;
    post_envelope_recv(L);
    start_actor("light-follow", follow, L);
    MPI_Request stop_req = MPI_REQUEST_NULL;
    struct envelope stop = {.mode = STOP};
    sg_mutex_lock(b->lock);
    for (;;) {
        while (L->ophead == L->nops)
            sg_cond_wait(L->cond, b->lock);
        struct op op = L->ops[L->ophead++];
        sg_mutex_unlock(b->lock);
        if (op.kind == OP_SEND) {
            struct pending *p = op.p;
            gate(L);
            p->env = (struct envelope){.mode = 0, .size = (int64_t)op.bytes, .data_tag = op.tag, .sync = 0};
            p->buf = SMPI_SHARED_MALLOC(op.bytes > 0 ? op.bytes : 1);
            MPI_Isend(&p->env, (int)sizeof(p->env), MPI_BYTE, op.peer, TAG_ENVELOPE, MPI_COMM_WORLD, &p->req[0]);
            MPI_Isend(p->buf, (int)op.bytes, MPI_BYTE, op.peer, TAG_DATA, MPI_COMM_WORLD, &p->req[1]);
            sg_mutex_lock(b->lock);
            p->posted = true;
            sg_cond_notify_all(L->cond);
        } else if (op.kind == OP_ENVELOPE) {
            if (op.env.mode == STOP) {
                sg_mutex_lock(b->lock);
                break;
            }
            gate(L);
            struct arrival *a = malloc(sizeof(*a));
            if (a == NULL)
                abort();
            *a = (struct arrival){.L = L, .source = op.peer, .tag = op.env.data_tag, .seen_s = NAN};
            a->buf = SMPI_SHARED_MALLOC(op.env.size > 0 ? (size_t)op.env.size : 1);
            MPI_Irecv(a->buf, (int)op.env.size, MPI_BYTE, a->source, TAG_DATA, MPI_COMM_WORLD, &a->req);
            post_envelope_recv(L);
            start_actor("light-arrival", arrival_wait, a);
            sg_mutex_lock(b->lock);
            L->arr = grow(L->arr, &L->arrcap, L->narr + 1, sizeof(*L->arr));
            L->arr[L->narr++] = a;
            sg_cond_notify_all(L->cond);
        } else if (op.kind == OP_BARRIER) {
            MPI_Barrier(MPI_COMM_WORLD);
            sg_mutex_lock(b->lock);
            L->barriers++;
            sg_cond_notify_all(L->cond);
        } else { /* OP_STOP: the pending envelope receive takes this rank's own last envelope */
            MPI_Isend(&stop, (int)sizeof(stop), MPI_BYTE, L->rank, TAG_ENVELOPE, MPI_COMM_WORLD, &stop_req);
            sg_mutex_lock(b->lock);
        }
    }
    sg_mutex_unlock(b->lock);
    MPI_Wait(&stop_req, MPI_STATUS_IGNORE);
}

int starpu_mpi_simgrid_rank_hook(int argc, char **argv);

/* scripts/patches/starpu-simgrid-rank-hook.patch: StarPU-SimGrid calls this in every rank's SMPI actor once
 * MPI is initialised, before it starts the program's main actor. */
int starpu_mpi_simgrid_rank_hook(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (!dahl_light_mode())
        return 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != plan.size) {
        fprintf(stderr, "dahl: error: $DAHLSIM_REPRESENTATIVES covers %d ranks, the run has %d\n", plan.size, size);
        abort();
    }
    int rep = plan.rep_of[rank];
    if (rep == rank) {
        if ((my_board = board_open(rank)) == NULL)
            abort();
        return 0;
    }
    struct light *L = calloc(1, sizeof(*L));
    if (L == NULL)
        abort();
    /* The representative publishes its board at its own start: wait for it at no simulated time. A barrier
     * would start every rank a barrier later than in the full simulation, and where the progression thread
     * takes turns, a shift of 0.1 ms already moves a makespan by up to 12 % (docs/multinode.md). */
    for (long tries = 0; (L->b = board_of(rep)) == NULL; tries++) {
        if (tries == 1000000) {
            fprintf(stderr, "dahl: error: rank %d: no board from its representative %d\n", rank, rep);
            abort();
        }
        sg_actor_yield();
    }
    L->cond = sg_cond_init();
    L->rank = rank;
    L->size = size;
    sg_mutex_lock(L->b->lock);
    L->b->lights[rank] = L;
    sg_mutex_unlock(L->b->lock);
    proxy(L);
    MPI_Finalize();
    return 1; /* L stays: rank 0 reads its step times at the end */
}

double dahl_light_shift_us(int r, size_t step)
{
    int rep = dahl_light_rep_of(r);
    if (rep == r)
        return 0.0;
    struct board *b = board_of(rep);
    struct light *L = b != NULL ? b->lights[r] : NULL;
    if (L == NULL || step >= L->st.cap || step >= b->st.cap)
        return 0.0;
    /* Rank 0 asks as soon as its own steps are done: the light rank, reached later by the broadcast, may
     * still be receiving its last sums, and its done time is the last one's. */
    sg_mutex_lock(b->lock);
    while (b->st.ndone[step] < b->st.ngrads[step])
        sg_cond_wait(b->cond, b->lock);
    while (L->st.ndone[step] < b->st.ngrads[step])
        sg_cond_wait(L->cond, b->lock);
    /* From where each left the epoch's barrier: the floor of the step, set by that barrier. */
    double mine = L->st.done_s[step] - L->st.floor_s[step];
    double theirs = b->st.done_s[step] - b->st.floor_s[step];
    sg_mutex_unlock(b->lock);
    return (mine - theirs) * 1e6;
}

void dahl_light_stats(struct dahl_light_stats *out)
{
    *out = (struct dahl_light_stats){.light = dahl_light_count(), .representatives = plan.reps};
    if (!dahl_light_mode())
        return;
    for (int r = 0; r < plan.size; r++) {
        if (plan.rep_of[r] != r)
            continue;
        struct board *b = board_of(r);
        if (b != NULL) {
            out->late_s += b->late_s;
            out->late_grads += b->late_grads;
        }
    }
}

#else /* not the sim-mpi flavour */

void dahl_light_post_step(size_t step)
{
    (void)step;
}

void dahl_light_post_grad(size_t step, int index, size_t n, double accumulate_s)
{
    (void)step, (void)index, (void)n, (void)accumulate_s;
}

void dahl_light_post_ready(size_t step, int index, int core)
{
    (void)step, (void)index, (void)core;
}

void dahl_light_post_done(size_t step, int index)
{
    (void)step, (void)index;
}

void dahl_light_post_task(int layer, int core, double push_s, double start_s, double end_s)
{
    (void)layer, (void)core, (void)push_s, (void)start_s, (void)end_s;
}

void dahl_light_post_tmp(int index, int level, const void *tmp)
{
    (void)index, (void)level, (void)tmp;
}

void dahl_light_post_accumulate(const void *src, int core, double start_s, double wait_s)
{
    (void)src, (void)core, (void)start_s, (void)wait_s;
}

void dahl_light_post_barrier(void)
{
}

void dahl_light_post_barrier_left(void)
{
}

void dahl_light_post_end(void)
{
}

double dahl_light_shift_us(int r, size_t step)
{
    (void)r, (void)step;
    return 0.0;
}

void dahl_light_stats(struct dahl_light_stats *out)
{
    *out = (struct dahl_light_stats){0};
}
#endif

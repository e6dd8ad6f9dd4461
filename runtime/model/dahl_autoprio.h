/* Automatic Heteroprio priorities: the per-task-type metrics and the six heuristics of AutoHeteroprio
 * (Flint, Paillat & Bramas, "Automated prioritizing heuristics for parallel task graph scheduling in
 * heterogeneous computing", PeerJ Computer Science 8:e969, 2022), for two architectures (CPU, GPU).
 * Pure C, no StarPU: the live scheduler (dahl_sched.c) and the scheduler lab (sim/lab/emulate.c) feed the
 * same tracker with what they observe, and read priority lists back.
 * Ownership: a tracker owns its type table; callers own the arrays they pass. */
#ifndef DAHL_AUTOPRIO_H
#define DAHL_AUTOPRIO_H

#include <stdbool.h>
#include <stddef.h>

enum { DAHL_ARCH_CPU = 0, DAHL_ARCH_GPU = 1, DAHL_NARCH = 2 };

enum dahl_autoprio_heuristic {
    DAHL_AUTOPRIO_PRWS,     /* parallel released work per second (the paper's Eq. (9)) */
    DAHL_AUTOPRIO_PURWS,    /* PRWS with URT in place of NOD ("the Eq. (9) becomes") */
    DAHL_AUTOPRIO_OFFSET,   /* offset model */
    DAHL_AUTOPRIO_SOFTPLUS, /* softplus model */
    DAHL_AUTOPRIO_INTERP,   /* interpolation model (with its rpg function) */
    DAHL_AUTOPRIO_NTC,      /* NOD-time combination */
    DAHL_AUTOPRIO_NHEURISTICS
};

/* "prws", "purws", "offset", "softplus", "interpolation", "ntc" (static strings). */
const char *dahl_autoprio_heuristic_name(enum dahl_autoprio_heuristic h);
/* Parses one of the names above; false when name is none of them. */
bool dahl_autoprio_heuristic_parse(const char *name, enum dahl_autoprio_heuristic *out);
/* The names, comma-separated, into buf (for error messages). */
void dahl_autoprio_heuristic_list(char *buf, size_t size);

/* The hyperparameters; the defaults (dahl_autoprio_params_default) are the paper's. */
struct dahl_autoprio_params {
    double offset_alpha, offset_beta; /* offset model: 1.3 and 1 */
    double ntc_alpha, ntc_beta;       /* NTC: 0.3 and 0.5 */
};
struct dahl_autoprio_params dahl_autoprio_params_default(void);

/* What the heuristics need about one task type, averaged over its tasks. Times in any one unit (seconds,
 * microseconds): they are normalised here, so scaling every time by a factor gives the same priorities. */
struct dahl_autoprio_type {
    bool runs_on[DAHL_NARCH];  /* the type has an implementation for that architecture */
    double cost[DAHL_NARCH];   /* estimated execution time w_i^arch */
    double proportion;         /* share of the type among tasks (any positive scale; only ratios matter) */
    double nod;                /* NOD: sum over successors of 1 / ID(successor) (Lin et al.) */
    double succ_best;          /* sum over successors of their cost on their best architecture */
    double nrt[DAHL_NARCH];    /* NRT_arch: sum over successors of Pexec(s, arch) w_s^arch / ID(s) */
};

/* The normalised metrics of one type (what the heuristics read), for inspection and tests. */
struct dahl_autoprio_metrics {
    double z[DAHL_NARCH];        /* normalised cost ("Cost normalization") */
    double diff[DAHL_NARCH];     /* diff_arch = z^other - z^arch (absolute CPU-GPU difference) */
    double rel_diff[DAHL_NARCH]; /* rel_diff_arch = z^other / z^arch (relative CPU-GPU difference) */
    double nod;
    double nrt[DAHL_NARCH];      /* normalised NRT */
    double urt;                  /* URT = NRT_cpu IDLE(cpu) + NRT_gpu IDLE(gpu) */
    double succ_best;            /* normalised successors' best-time sum */
};

/* The normalised cost of an architecture that cannot run a type: the paper's "100,000 s" default estimate,
 * taken here as 100,000 average tasks so that it does not depend on the time unit. */
#define DAHL_AUTOPRIO_NO_COST 100000.0

/* Normalisation scale ("Cost normalization"): the proportion-weighted mean of every type's best cost
 * (1 when no type has a cost). */
double dahl_autoprio_scale(const struct dahl_autoprio_type *types, int n);

/* The metrics of type i among types[0..n-1], with idle[a] the idle proportion of architecture a in [0, 1]. */
void dahl_autoprio_metrics(const struct dahl_autoprio_type *types, int n, int i, const double idle[DAHL_NARCH],
                           struct dahl_autoprio_metrics *out);

/* The score of heuristic h for a type on arch (higher runs first). */
double dahl_autoprio_score(enum dahl_autoprio_heuristic h, const struct dahl_autoprio_params *p,
                           const struct dahl_autoprio_metrics *m, int arch);

/* The priority list of arch: the indices of the types that run on arch, by descending score (ties: lower
 * index first), into order (n entries). Returns how many were written. */
int dahl_autoprio_order(enum dahl_autoprio_heuristic h, const struct dahl_autoprio_params *p,
                        const struct dahl_autoprio_type *types, int n, const double idle[DAHL_NARCH], int arch,
                        int *order);

/* ---- The online tracker: what AutoHeteroprio gathers while tasks run ----
 * Types are numbered by the caller (0, 1, ... in order of appearance). On every pushed task the caller
 * reports its type and its successors (type and in-degree each); on every executed task its type, its
 * architecture and its duration; from time to time the idle proportion of each architecture. The tracker
 * keeps per-type running means and says when priorities are due: when a new type appears, and every
 * `interval`-th pushed task. */
struct dahl_autoprio;

struct dahl_autoprio *dahl_autoprio_create(enum dahl_autoprio_heuristic h, const struct dahl_autoprio_params *p,
                                           int interval);
void dahl_autoprio_destroy(struct dahl_autoprio *ap);

/* Declares type t (t = number of types declared so far, or an existing one) with its implementations and
 * estimated costs (perf models; <= 0 for "no estimate"). Returns t, or -1 when out of memory. */
int dahl_autoprio_declare(struct dahl_autoprio *ap, int t, const bool runs_on[DAHL_NARCH],
                          const double cost[DAHL_NARCH]);
int dahl_autoprio_ntypes(const struct dahl_autoprio *ap);

/* A task of type t was pushed (became ready) with nsucc successors of types succ_type[] and in-degrees
 * succ_indeg[] (>= 1). Returns true when the priority lists should be recomputed now. */
bool dahl_autoprio_push(struct dahl_autoprio *ap, int t, int nsucc, const int *succ_type, const double *succ_indeg);
/* A task of type t ran on arch for duration (same unit as the costs). */
void dahl_autoprio_executed(struct dahl_autoprio *ap, int t, int arch, double duration);
/* The idle proportions of the architectures so far (in [0, 1]). */
void dahl_autoprio_set_idle(struct dahl_autoprio *ap, const double idle[DAHL_NARCH]);

/* Computes the priority lists of both architectures from what was gathered: order[a] gets nprio[a] type
 * indices (caller-owned, ntypes entries each). */
void dahl_autoprio_lists(const struct dahl_autoprio *ap, int *order[DAHL_NARCH], int nprio[DAHL_NARCH]);
/* The gathered description of type t (for reports and tests). */
void dahl_autoprio_type_get(const struct dahl_autoprio *ap, int t, struct dahl_autoprio_type *out);

#endif /* DAHL_AUTOPRIO_H */

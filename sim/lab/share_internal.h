/* Shared by the GPU-sharing emulator's files of sim/lab/ only (share*.c): the emulation state, allocated
 * once and reused across the many runs of the genetic search, the order choosers the step loop calls, and
 * the JSON reader of its files. */
#ifndef DAHLSIM_SHARE_INTERNAL_H
#define DAHLSIM_SHARE_INTERNAL_H

#include "dahlsim_share.h"

#include <stdbool.h>
#include <stdint.h>

/* The largest WEIGHT window (steps). */
#define SHARE_WINDOW_MAX 256

struct share_tensor {
    int job;
    uint64_t bytes;
    bool written;
    bool present;      /* allocated on the GPU (loading or loaded) */
    bool dirty;
    double avail_s;    /* when its load ends (present) */
    double wb_done_s;  /* when its last write-back ends */
    uint64_t stamp;    /* LRU: last use; STARPU: place in the mc_list (smaller: nearer the head) */
};

struct share_emu {
    const struct dahlsim_share *s;
    struct dahlsim_share_conf conf;
    int ntensors, nsteps;
    int tbase[DAHLSIM_SHARE_MAX_JOBS + 1];     /* job j's tensors: t[tbase[j] .. tbase[j + 1]) */
    uint64_t footprint[DAHLSIM_SHARE_MAX_JOBS];
    struct share_tensor *t;
    /* write-backs not yet ended: a FIFO ring (the GPU->host channel ends them in order) */
    double *pend_done;
    uint64_t *pend_bytes;
    int pend_head, pend_len;
    uint64_t alloc_bytes, pend_sum, clock;
    double h2d_free, d2h_free;
    /* per job */
    int next_step[DAHLSIM_SHARE_MAX_JOBS];
    double last_end[DAHLSIM_SHARE_MAX_JOBS];
    /* WEIGHT: the last `window` steps' compute and idle seconds per job (ring of window entries) */
    double *win_compute, *win_idle;
    int win_len[DAHLSIM_SHARE_MAX_JOBS];
    int round[DAHLSIM_SHARE_MAX_JOBS], round_len, round_pos;
    int rr_last;
    /* the order being run: the given one (BELADY, GIVEN) and where each job's steps are in it */
    const int *given;
    int *pos;          /* pos[tbase-like: posbase[j] + k] = position of step k of job j in given */
    int posbase[DAHLSIM_SHARE_MAX_JOBS + 1];
    int *seq;          /* the realised order */
    struct dahlsim_share_result *res;
};

int share_emu_init(struct share_emu *e, const struct dahlsim_share *s, char *err, size_t err_size);
/* The jobs by decreasing priority, ties by index: round-robin's cycle (s->njobs entries into cycle). */
void share_priority_cycle(const struct dahlsim_share *s, int *cycle);
void share_emu_fini(struct share_emu *e);
/* One emulation of e->s under conf and order (FIFO, ROUND_ROBIN, WEIGHT or GIVEN with given, checked by the
 * caller); r gets the figures and, when r->order is not NULL, the realised order (e->nsteps entries). */
void share_emu_run(struct share_emu *e, const struct dahlsim_share_conf *conf, enum dahlsim_share_order order,
                   const int *given, struct dahlsim_share_result *r);

/* The order choosers: the job of the next step at decision time now (share_order.c). */
int share_pick_fifo(struct share_emu *e);
int share_pick_round_robin(struct share_emu *e);
int share_pick_weight(struct share_emu *e, double now);
/* WEIGHT's window: records a step of job j. */
void share_window_add(struct share_emu *e, int j, double compute_s, double idle_s);

struct cJSON;
/* The JSON document in path (share_io.c); 0, or a negative errno with "PATH: why" in err. */
int share_json_read(const char *path, struct cJSON **doc, char *err, size_t err_size);

#endif /* DAHLSIM_SHARE_INTERNAL_H */

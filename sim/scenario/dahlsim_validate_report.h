/* What the two files of `dahlsim validate` share (dahlsim_validate.c: the setups, the native and simulated
 * runs; dahlsim_validate_report.c: the comparison and the report, fidelity.json and fidelity.md): the setups in
 * use, every run's figures and the report being built. Internal to validate. */
#ifndef DAHLSIM_VALIDATE_REPORT_H
#define DAHLSIM_VALIDATE_REPORT_H

#include "dahlsim_probe.h"
#include "dahlsim_validate_opts.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* One validation setup: what it varies is in its name. */
struct setup {
    char name[96];
    char dataset[64];
    long samples, batch, ncpu;
    long ngpu;      /* CUDA workers (0: CPUs only; a machine calibrated with --ngpu) */
    char sched[64]; /* a scenario's "scheduler" value (heteroprio:auto-HEURISTIC included) */
    long depth;     /* pipeline depth (0 or 1: synchronous) */
    long grain;     /* samples per layer task (0 or 1: one); needs a calibration covering it; GRAIN_AUTO:
                     * "auto", resolved by load_experiments to the grain a scenario's auto picks */
};
#define GRAIN_AUTO (-2L)

/* What a run's results.json says: the makespan, and the busy time and task count summed over its workers
 * (busy = time StarPU saw tasks execute; the rest of a worker's time is scheduling, data management and
 * waiting). makespan is NAN when the file is unreadable. */
struct figures {
    double makespan_s, busy_s;
    long tasks;
    double stall_s; /* over the steps longer than twice the run's median step, their time beyond the median */
    double lo_s, hi_s; /* a simulation's prediction interval (dahlsim_interval.h); NAN where unknown */
};

/* The native figures of every setup, [setup][repeat], with the probes around each run: per core it used,
 * the slower of the probes before and after it (GFLOP/s). */
struct native_figures {
    double times[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];
    double busies[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];
    double stalls[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];
    struct dahlsim_probe probe[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];
    struct dahlsim_probe best; /* the session's fastest kernel probe per core, and shortest round trip */
    double calibrated_latency_ns; /* the calibration's round trip between the cores (0: not recorded) */
    int cores;                            /* the most cores a setup probed */
    double slow[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS]; /* below the fastest (0: as fast) */
    double far[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];  /* round trip over the shortest */
    bool noisy[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];
    int reruns[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS]; /* times the run was made again */
    /* the run's kernel probe, median over its cores (the worse of before and after), and the share of the
     * cores' time other work took during it (dahlsim_proc.h); NAN where an earlier report lacks them */
    double gflops[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];
    double share[DAHLSIM_VALIDATE_MAX_SETUPS][DAHLSIM_VALIDATE_MAX_REPEATS];
    double calibrated_gflops; /* the spell the calibration's perf models were measured in (0: not recorded) */
    int calibrated_apart;     /* and whether its cores were apart then (1), close (0), or unknown (-1) */
    double calibrated_shortest_ns; /* the calibration's shortest round trip between the cores (0: unknown) */
};

/* One setup's native repeats against its simulation. */
struct comparison {
    long quiet;             /* the repeats the figures below come from: the quiet ones (all when none is) */
    double med, lo, hi;     /* native makespan: median and range */
    double sim, err;        /* simulated makespan, relative error */
    double busy_med, busy_ratio, unmodelled_us, stall_med;
    struct figures simf;
};

/* The report as it is built: the JSON document and its rows, the Markdown text, the absolute errors. */
struct fidelity {
    struct cJSON *root, *rows;
    char md[1 << 20]; /* room for the pairs of DAHLSIM_VALIDATE_MAX_SETUPS setups */
    size_t used;
    double errs[DAHLSIM_VALIDATE_MAX_SETUPS];
    double med[DAHLSIM_VALIDATE_MAX_SETUPS], sim[DAHLSIM_VALIDATE_MAX_SETUPS]; /* per setup, for the pairs */
    size_t nerr;
    long dropped, all_noisy; /* noisy runs left out; setups with no quiet run (all of their runs used) */
    long repeats;               /* native runs per setup */
    long inside, with_interval; /* native runs inside their simulation's interval, and runs that had one */
    double spell_errs[DAHLSIM_VALIDATE_MAX_SETUPS]; /* |error| of the median over the runs in the spell */
    size_t nspell;
    long spell_runs;
};

/* The setups this validation runs: the defaults, or --setups FILE's, or --natives DIR's. */
extern struct setup validate_setups[DAHLSIM_VALIDATE_MAX_SETUPS];
extern size_t validate_nsetups;

/* Compares setup i's native figures (t, busy and stalls of its quiet repeats, or of all when none was quiet)
 * with its simulation's simf. */
struct comparison dahlsim_validate_compare(size_t i, long all, const double *t_all, const double *busy_all,
                                           const double *stalls_all, const bool *noisy, struct figures simf);

/* Starts the report: the JSON document, the Markdown table's head, the table's head on stdout. */
void dahlsim_fidelity_start(struct fidelity *fy, const struct dahlsim_validate_opts *o, const char *natives_commit);
/* Setup s's line of the table (stdout and Markdown) and its row of the JSON document; t: its native
 * makespans, n and i: the probes and verdicts of its runs. */
void dahlsim_fidelity_add(struct fidelity *fy, const struct dahlsim_validate_opts *o, const struct setup *s,
                          const double *t, const struct comparison *c, const struct native_figures *n, size_t i);
/* Ends the report: the errors, the quiet runs, the probe, the intervals and the spell. */
void dahlsim_fidelity_end(struct fidelity *fy, const struct dahlsim_validate_opts *o, const struct native_figures *n);
/* Fidelity as decisions: the comparable pairs of setups, on stdout and in both documents. */
void dahlsim_fidelity_pairs(struct fidelity *fy, const struct dahlsim_validate_opts *o,
                            const struct native_figures *n);
/* Writes out/fidelity.json and out/fidelity.md; deletes the JSON document. 0, or -EIO after the error. */
int dahlsim_fidelity_write(struct fidelity *fy, const char *out);

/* One-line error about a setups or natives file's field (dahlsim_validate.c). */
void dahlsim_validate_setups_error(const char *path, const char *field, const cJSON *got, const char *expected);
/* A run's figures from dir/results.json (dahlsim_validate_natives.c). */
struct figures dahlsim_validate_read_figures(const char *dir);
/* --natives DIR: validate_setups[], the repeats and ranks (into *repeats, *nodes), the native figures and the
 * session's probes (into n) from DIR's report; *threshold: the threshold it judged at. Returns 0, or -EINVAL
 * after the error line (dahlsim_validate_natives.c). */
int dahlsim_validate_load_natives(const char *dir, long *repeats, long *nodes, long *reruns, double *threshold,
                                  char *commit, size_t commit_size, struct native_figures *n);

#endif /* DAHLSIM_VALIDATE_REPORT_H */

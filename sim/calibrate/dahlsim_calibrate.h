/* Calibrating the machine dahlsim runs on (`dahlsim calibrate`, sim/cmd/calibrate.c): the StarPU perf models
 * of every dahl codelet at every shape a set of training setups ("covers") needs, the runtime's own costs
 * (the submitting thread's, the scheduling policies'), StarPU's bus measurements and platform, stored as
 * calibration/NAME/ (sampling/ for STARPU_PERF_MODEL_DIR, STARPU_HOSTNAME=NAME) with a manifest.json. One
 * header for the files of the calibration: dahlsim_calibrate.c (the steps), dahlsim_calibrate_covers.c
 * (the setups), dahlsim_calibrate_runs.c (the native and simulated runs it makes),
 * dahlsim_calibrate_costs.c (the runtime's costs) and dahlsim_calibrate_manifest.c; the perf-model files
 * are read by sim/core/dahlsim_modeltable.h. */
#ifndef DAHLSIM_CALIBRATE_H
#define DAHLSIM_CALIBRATE_H

#include "dahlsim_modeltable.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct cJSON;

#define DAHLSIM_CALIBRATE_MAX_COVERS 64
#define DAHLSIM_CALIBRATE_MINIMUM "10"     /* STARPU_CALIBRATE_MINIMUM: StarPU's default, made explicit */
#define DAHLSIM_CALIBRATE_SCHED_BATCH 32   /* samples per step of the runs timing a scheduling policy */

/* One training setup to calibrate for: its tasks' shapes depend on the dataset's image shape and the model
 * (not on the batch size: every task is one sample or one layer), and the perf-model kind. */
struct dahlsim_calibrate_cover {
    char dataset[256];
    char model[PATH_MAX];
    char perfmodel[16];
    long grain; /* samples per layer task in the measured runs (at most --batch; 1: one per sample) */
};


/* What the command line asks; the strings are argv's. */
struct dahlsim_calibrate_opts {
    char command[4096]; /* the command line as typed, for the manifest */
    const char *machine;
    const char *dir; /* the calibration root, holding NAME/ */
    struct dahlsim_calibrate_cover covers[DAHLSIM_CALIBRATE_MAX_COVERS];
    int ncovers;
    long batch, steps, rounds;
    long sched_steps;     /* steps of DAHLSIM_CALIBRATE_SCHED_BATCH samples per scheduling run */
    int ngpu;             /* CUDA workers in every run (0: CPU only) */
    char schedulers[512]; /* comma-separated scenario scheduler values whose push cost is measured; "" none */
    double max_rsd;
    double noisy;         /* a run is disturbed when other work took over this share of the cores' time */
    long reruns;          /* a disturbed run is measured again up to this many times, then calibrate stops */
    long history_max_error; /* STARPU_HISTORY_MAX_ERROR of the measuring runs, percent (StarPU's 50) */
    bool one_worker;      /* the kernels measured again with one CPU worker (DAHLSIM_ONE_WORKER_SAMPLING) */
    int measure_ncpu;     /* CPU workers of the measuring runs (0: StarPU's default, every core) */
    bool force, recalibrate_flagged, report_only, quiet;
};

/* Where a calibration is made: DIR/NAME (final), the temporary DIR/.NAME.tmp-PID it is made in (its sampling/,
 * the stderr.log of the last run, run/ for the runs' results) and DIR/.NAME.old-PID for the swap. */
struct dahlsim_calibrate_paths {
    char final[PATH_MAX], tmp[PATH_MAX], old[PATH_MAX], sampling[PATH_MAX], errlog[PATH_MAX], run[PATH_MAX];
};

/* Per-setup outcome, for the manifest. */
struct dahlsim_calibrate_status {
    const char *status; /* "calibrated", "already calibrated"; NULL while pending */
    int rounds;
    double seconds;
};

/* ---- the steps (dahlsim_calibrate.c) ---------------------------------------------------------------------- */

/* The paths of calibration o->machine under o->dir; false when one is too long. */
bool dahlsim_calibrate_paths_init(struct dahlsim_calibrate_paths *p, const struct dahlsim_calibrate_opts *o);

/* Measures until every setup of o (plus those the previous calibration covered, merged into o) is
 * calibrated, then swaps the new calibration in; the previous one stays intact on failure. Returns 0, or a
 * negative errno after the error lines (-EINVAL: bad input; -EIO: a run or a write failed). */
int dahlsim_calibrate(struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p);

/* `--report`: the per-model report of the existing calibration on stdout. Returns 0, or -EINVAL after the
 * error line. */
int dahlsim_calibrate_report(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p);

/* ---- the setups (dahlsim_calibrate_covers.c) -------------------------------------------------------------- */

/* Parses "DATASET[,model=M][,perfmodel=K]"; false after an error line naming --cover. */
bool dahlsim_calibrate_cover_parse(const char *text, struct dahlsim_calibrate_cover *c);

/* --cover: adds the setup text names to o; false after an error line. */
bool dahlsim_calibrate_covers_add(struct dahlsim_calibrate_opts *o, const char *text);

/* The default setups (fashion-mnist, synthetic:28x28x3, 128x128x3 and 512x512x3; LeNet, history) when o
 * has none. */
void dahlsim_calibrate_covers_default(struct dahlsim_calibrate_opts *o);

/* --scenario: adds the setups (dataset x model x perf-model kind) that every point of the scenario file
 * needs, without validating the rest of it against a calibration (the one being made may not exist yet).
 * Model files are relative to the scenario, as `dahlsim run` reads them. False after an error naming the
 * file. */
bool dahlsim_calibrate_covers_from_scenario(const char *path, struct dahlsim_calibrate_opts *o);

/* Adds the setups an earlier calibration covered (its manifest's "covered", may be NULL) and o does not
 * name, so they are checked again and stay covered, then orders all of them in the measuring order. */
void dahlsim_calibrate_covers_merge(struct dahlsim_calibrate_opts *o, const struct cJSON *prev_covered);

/* "DATASET model=M perfmodel=K", for progress and error lines. */
void dahlsim_calibrate_cover_name(const struct dahlsim_calibrate_cover *c, char *buf, size_t size);

/* ---- the runs (dahlsim_calibrate_runs.c) ------------------------------------------------------------------ */

/* What the simulated check found missing. */
struct dahlsim_calibrate_check {
    int status;       /* the simulation's exit status */
    int uncalibrated; /* "not calibrated" warnings */
    char first[512];  /* the first such warning (or the last stderr line on failure) */
};

/* Runs a few simulated steps of setup c on the calibration in p->sampling and counts StarPU's "not
 * calibrated" warnings in its stderr. 0, or -1 when the simulation could not start. */
int dahlsim_calibrate_sim_check(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                                const struct dahlsim_calibrate_paths *p, struct dahlsim_calibrate_check *r);

/* The machine around every native run: the probe (dahlsim_probe.h) on every online core before and after it,
 * and what else ran meanwhile (dahlsim_proc.h's load). A run is disturbed when other processes and the
 * hypervisor took more than o->noisy of the cores' time: its figures are dropped. A probe slower than the
 * session's fastest, or cores further apart, is the machine's own speed spell: kept, and recorded. */
struct dahlsim_calibrate_spell {
    bool measuring;     /* a perf-model measuring run (else a plain one, timing the runtime's costs) */
    double gflops;      /* the run's kernel probe (the worse of before and after), median over the cores */
    double latency_ns;  /* its cores' round trip (0: one core) */
    double share;       /* the cores' time other work took during it */
    double ivcsw_per_s; /* its threads' involuntary context switches per second */
};

/* Probes every core (fresh: before a run, which also marks the load; else after it, which reads the run's
 * load first) and raises the session's best. 0 or a negative errno. */
int dahlsim_calibrate_probe(bool fresh);
/* Whether the run just probed was disturbed at o->noisy, and what took the cores (why). */
bool dahlsim_calibrate_disturbed(const struct dahlsim_calibrate_opts *o, char *why, size_t why_size);
/* Keeps the run just probed in the session's record of spells. */
void dahlsim_calibrate_spell_keep(bool measuring);
/* Whether a run whose cores' round trip was latency_ns had them apart: over DAHLSIM_PROBE_LATENCY_SLACK times
 * the session's shortest. */
bool dahlsim_calibrate_cores_apart(double latency_ns);
/* The round trip of the run just probed, and the session's shortest (0: none probed, or one core). */
double dahlsim_calibrate_run_latency(void);
double dahlsim_calibrate_probe_latency(void);
/* The error line, and its hint, when runs stayed disturbed: what (a setup, a figure) measured runs times in a
 * row, the last one's why. */
void dahlsim_calibrate_noisy_error(const struct dahlsim_calibrate_opts *o, const char *what, long runs,
                                   const char *why);
/* The manifest's "machine_spread": the probe and round trip over every kept run (their range, quartiles and
 * the share of runs with the cores apart), the spell the perf models were measured in, and the interference
 * seen. JSON null when no run was kept. */
struct cJSON *dahlsim_calibrate_spread(void);

/* Returned by a plain run (below) that stayed noisy, after its error line. */
#define DAHLSIM_CALIBRATE_NOISY (-3)
/* Whether a plain run of this calibration stayed noisy. */
bool dahlsim_calibrate_plain_runs_noisy(void);

/* What a run of a setup sets beyond the setup itself: its scheduler (a scenario "scheduler" value; NULL: lws,
 * dmda with GPUs), its CPU workers (0: all cores) and its samples per task (0: 1). */
struct dahlsim_calibrate_run {
    const char *scheduler;
    int ncpu;
    long grain;
};

/* One native training run of setup c into p->run (its point.json, then results.json): samples of batch, seed,
 * with STARPU_CALIBRATE=1 when calibrating; run: NULL or what it sets beyond the setup. A plain
 * run (not calibrating: the runs timing the submitting thread and the policies, which measure the runtime's
 * own costs) runs between two probes of the machine, and again while noisy, up to o->reruns times; then
 * DAHLSIM_CALIBRATE_NOISY. (Calibrating runs are probed by their caller, which puts the perf models back.)
 * Returns its exit status (-1: not started); its stderr is in p->errlog. */
int dahlsim_calibrate_native_train(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                                   const struct dahlsim_calibrate_paths *p, int seed, bool calibrating,
                                   long samples, long batch, const struct dahlsim_calibrate_run *run);

/* One run of setup c with the calibration's batch and steps (round: the seed) and o->measure_ncpu CPU workers
 * (when > 0): with STARPU_CALIBRATE=1 when calibrating, else a plain run. */
int dahlsim_calibrate_native_round(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                                   const struct dahlsim_calibrate_paths *p, int round, bool calibrating);

/* A simulated run of setup c with a policy (a scenario "scheduler" value), ncpu CPU workers, the policy's
 * push cost charged and StarPU-SimGrid's per-input cost off (the point's worker_us 0), into p->run (its
 * point.json, then results.json): what the simulation still charges per task on its own (its driver loop's
 * sleeps). Returns its exit status, -1 when it could not start. */
int dahlsim_calibrate_sim_rest(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                               const struct dahlsim_calibrate_paths *p, const char *scheduler, int ncpu,
                               double push_us);

/* The last non-empty line of a file ("" when there is none), for error messages. */
void dahlsim_calibrate_last_line(const char *path, char *buf, size_t size);

/* ---- the runtime's costs (dahlsim_calibrate_costs.c) ------------------------------------------------------ */

/* The manifest's "submission": the submitting thread's cost per task and image copy rate per image shape,
 * measured in plain native runs of the setups cs says were measured (a shape measured before keeps
 * prev_submission's entry). JSON null when there is no shape; NULL after an error line. */
struct cJSON *dahlsim_calibrate_submission(const struct dahlsim_calibrate_opts *o,
                                           const struct dahlsim_calibrate_paths *p,
                                           const struct dahlsim_calibrate_status *cs,
                                           const struct cJSON *prev_submission);

/* The manifest's "scheduling": each policy of o->schedulers' cost per push and the workers' cost per task,
 * per worker configuration (prev's figures kept unless --force). NULL after an error line. */
struct cJSON *dahlsim_calibrate_scheduling(const struct dahlsim_calibrate_opts *o,
                                           const struct dahlsim_calibrate_paths *p, const struct cJSON *prev);

/* ---- robust perf-model means (dahlsim_calibrate_robust.c) ----------------------------------------------- */

/* An entry measured in at least this many kept runs takes the median of its runs' means. */
#define DAHLSIM_CALIBRATE_ROBUST_RUNS 3

/* After a kept measuring run into sampling (before: the models as they were before it, which may not exist):
 * records each entry's mean over that run's own samples. 0 or a negative errno. */
int dahlsim_calibrate_robust_record(const char *before, const char *sampling, const char *machine);

/* Rewrites sampling's entries recorded in DAHLSIM_CALIBRATE_ROBUST_RUNS runs or more with the median of their
 * runs' means (sample counts and deviations kept); *changed: how many. 0 or a negative errno. */
int dahlsim_calibrate_robust_apply(const char *sampling, const char *machine, int *changed);

/* ---- manifest.json (dahlsim_calibrate_manifest.c) --------------------------------------------------------- */

/* Writes path: the machine, versions, method, covered setups (with cs), submission, scheduling, one_worker and
 * machine_spread (taken over; JSON null or NULL leaves them out) and every perf-model entry of t. Returns 0 or
 * -errno. */
int dahlsim_calibrate_manifest_write(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_status *cs,
                                     const struct dahlsim_model_table *t, struct cJSON *submission,
                                     struct cJSON *scheduling, struct cJSON *one_worker, struct cJSON *spread,
                                     const char *path);

#endif /* DAHLSIM_CALIBRATE_H */

/* The runs a calibration makes (dahlsim_calibrate.h): native training runs of a setup (this binary's
 * `train`, measuring with STARPU_CALIBRATE=1 or plain), and short simulated runs of it (build/dahlsim-sim
 * sim-train) against the calibration being made, each with its stderr in the calibration's stderr.log. */
#include "dahlsim_calibrate.h"

#include "dahlsim_experiment.h"
#include "dahlsim_fs.h"
#include "dahlsim_probe.h"
#include "dahlsim_proc.h"
#include "dahlsim_spawn.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_STEPS 2 /* steps of the simulated check run */

/* The experiment of a run of setup c (samples of batch, seed, run: NULL or what it sets beyond the setup),
 * saved as p->run/point.json, whose path goes into point: what `train --point` and `sim-train --point` read.
 * Returns 0, or -1 after an error line. */
static int cover_point(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                       const struct dahlsim_calibrate_paths *p, long samples, long batch, int seed,
                       const struct dahlsim_calibrate_run *run, struct dahlsim_experiment *x, char *point, size_t size)
{
    long grain = run != NULL && run->grain > 0 ? run->grain : 1;
    *x = (struct dahlsim_experiment){.samples = samples, .batch = batch, .epochs = 1,
                                     .grain = grain < batch ? grain : batch,
                                     .cpus = run != NULL && run->ncpu > 0 ? run->ncpu : -1, .gpus = o->ngpu,
                                     .trace_first = -1, .trace_last = -1, .seed = seed, .lr = 0.01, .momentum = 0.9,
                                     .pipeline_depth = 1, .worker_us = -1};
    snprintf(x->machine, sizeof(x->machine), "%s", o->machine);
    snprintf(x->machine_dir, sizeof(x->machine_dir), "%s", p->tmp);
    snprintf(x->model, sizeof(x->model), "%s", c->model);
    snprintf(x->dataset, sizeof(x->dataset), "%s", c->dataset);
    snprintf(x->scheduler, sizeof(x->scheduler), "%s",
             run != NULL && run->scheduler != NULL ? run->scheduler : o->ngpu > 0 ? "dmda" : "lws");
    snprintf(x->perfmodel, sizeof(x->perfmodel), "%s", c->perfmodel);
    snprintf(x->reduction, sizeof(x->reduction), "redux");
    char err[PATH_MAX + 256];
    snprintf(point, size, "%s/point.json", p->run);
    int ret = dahlsim_make_dirs(p->run);
    if (ret != 0)
        snprintf(err, sizeof(err), "cannot create %s: %s", p->run, strerror(-ret));
    else
        ret = dahlsim_experiment_save(x, point, err, sizeof(err));
    if (ret != 0) {
        dahlsim_error("calibrate: %s", err);
        return -1;
    }
    return 0;
}

int dahlsim_calibrate_sim_check(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                                const struct dahlsim_calibrate_paths *p, struct dahlsim_calibrate_check *r)
{
    /* with GPUs, dmda: a run sends tasks to both worker kinds, so both need models */
    struct dahlsim_experiment x;
    char point[PATH_MAX + 16];
    if (cover_point(o, c, p, CHECK_STEPS * o->batch, o->batch, 1, &(struct dahlsim_calibrate_run){.grain = c->grain},
                    &x, point, sizeof(point)) != 0)
        return -1;
    char *args[] = {"sim-train", "--point", point, "--quiet", NULL};
    const struct dahlsim_env_var env[] = {
        {"STARPU_PERF_MODEL_DIR", p->sampling}, {"STARPU_HOSTNAME", o->machine}, {"STARPU_CALIBRATE", "0"},
        {"STARPU_SILENT", "0"},
    };
    char out[4096];
    r->status = dahlsim_spawn_sim_err(args, env, sizeof(env) / sizeof(env[0]), out, sizeof(out), p->errlog);
    r->uncalibrated = 0;
    r->first[0] = '\0';
    if (r->status < 0)
        return -1;
    char *text = dahlsim_read_text(p->errlog, SIZE_MAX);
    if (text == NULL)
        return 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        bool warn = strstr(line, "not calibrated") != NULL || strstr(line, "does not have a perfmodel") != NULL;
        if (warn && r->uncalibrated++ == 0)
            snprintf(r->first, sizeof(r->first), "%s", line);
        if (!warn && r->status != 0 && r->uncalibrated == 0)
            snprintf(r->first, sizeof(r->first), "%s", line);
    }
    free(text);
    return 0;
}

/* ---- the machine around the runs: interference, and the speed spells ------------------------------------ */

#define MAX_SPELL_RUNS 4096 /* runs recorded for the manifest's spread; later ones are not */

/* The session's best kernel probe per core and shortest round trip, the current run's worst probe, what else
 * ran since it started, and every kept run's probe and load. */
static struct {
    int cores;
    struct dahlsim_probe best, run;
    struct dahlsim_load_mark mark;
    struct dahlsim_load load;
    struct dahlsim_calibrate_spell runs[MAX_SPELL_RUNS];
    int nruns;
} quiet;

int dahlsim_calibrate_probe(bool fresh)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    quiet.cores = online > 0 && online <= DAHLSIM_PROBE_MAX_CORES ? (int)online : 1;
    if (fresh)
        memset(&quiet.run, 0, sizeof(quiet.run));
    else
        dahlsim_load_since(&quiet.mark, &quiet.load); /* the run's load, before the probe's own */
    int ret = dahlsim_probe_around(quiet.cores, &quiet.run, &quiet.best);
    if (fresh)
        dahlsim_load_mark(&quiet.mark);
    return ret;
}

bool dahlsim_calibrate_disturbed(const struct dahlsim_calibrate_opts *o, char *why, size_t why_size)
{
    const struct dahlsim_load *l = &quiet.load;
    snprintf(why, why_size,
             "other processes took %.0f %% and the hypervisor %.0f %% of the cores' time over the run's %.1f s",
             100 * l->others_s / (l->wall_s * quiet.cores), 100 * l->steal_s / (l->wall_s * quiet.cores), l->wall_s);
    return l->known && l->share > o->noisy;
}

void dahlsim_calibrate_spell_keep(bool measuring)
{
    if (quiet.nruns == MAX_SPELL_RUNS)
        return;
    double g[DAHLSIM_PROBE_MAX_CORES];
    memcpy(g, quiet.run.gflops, sizeof(double) * (size_t)quiet.cores);
    quiet.runs[quiet.nruns++] = (struct dahlsim_calibrate_spell){
        .measuring = measuring, .gflops = dahlsim_median(g, (size_t)quiet.cores),
        .latency_ns = quiet.run.latency_ns, .share = quiet.load.share, .ivcsw_per_s = quiet.load.ivcsw_per_s};
}

bool dahlsim_calibrate_cores_apart(double latency_ns)
{
    return quiet.best.latency_ns > 0 && latency_ns > DAHLSIM_PROBE_LATENCY_SLACK * quiet.best.latency_ns;
}

double dahlsim_calibrate_run_latency(void)
{
    return quiet.run.latency_ns;
}

double dahlsim_calibrate_probe_latency(void)
{
    return quiet.best.latency_ns;
}

/* The q-quantile (0..1) of v[n], sorted (linear between ranks). */
static double quantile(const double *v, int n, double q)
{
    double at = q * (n - 1);
    int lo = (int)at;
    return lo + 1 < n ? v[lo] + (at - lo) * (v[lo + 1] - v[lo]) : v[lo];
}

/* {"min", "p10", "median", "p90", "max"} of v[n] (sorted in place). */
static cJSON *spread_of(double *v, int n)
{
    dahlsim_median(v, (size_t)n); /* sorts */
    cJSON *o = cJSON_CreateObject();
    const char *names[] = {"min", "p10", "median", "p90", "max"};
    const double qs[] = {0, 0.1, 0.5, 0.9, 1};
    for (int k = 0; k < 5; k++)
        cJSON_AddNumberToObject(o, names[k], quantile(v, n, qs[k]));
    return o;
}

cJSON *dahlsim_calibrate_spread(void)
{
    int n = quiet.nruns, nm = 0, apart = 0, apart_m = 0;
    if (n == 0)
        return cJSON_CreateNull();
    double *v = calloc((size_t)n, sizeof(*v));
    if (v == NULL)
        return cJSON_CreateNull();
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "runs", n);
    for (int r = 0; r < n; r++)
        v[r] = quiet.runs[r].gflops;
    cJSON_AddItemToObject(s, "probe_gflops", spread_of(v, n));
    for (int r = 0; r < n; r++) /* the spell the perf models were measured in */
        if (quiet.runs[r].measuring)
            v[nm++] = quiet.runs[r].gflops;
    cJSON *in = cJSON_AddObjectToObject(s, "calibrated_in");
    cJSON_AddNumberToObject(in, "runs", nm);
    cJSON_AddNumberToObject(in, "probe_gflops", nm > 0 ? dahlsim_median(v, (size_t)nm) : 0);
    for (int r = 0; r < n; r++) {
        bool far = dahlsim_calibrate_cores_apart(quiet.runs[r].latency_ns);
        apart += far;
        apart_m += far && quiet.runs[r].measuring;
    }
    cJSON_AddNumberToObject(in, "cores_apart_share", nm > 0 ? (double)apart_m / nm : 0);
    if (quiet.best.latency_ns > 0) {
        for (int r = 0; r < n; r++)
            v[r] = quiet.runs[r].latency_ns;
        cJSON_AddItemToObject(s, "core_latency_ns", spread_of(v, n));
        cJSON_AddNumberToObject(s, "core_latency_shortest_ns", quiet.best.latency_ns);
        cJSON_AddNumberToObject(s, "cores_apart_share", (double)apart / n);
    }
    for (int r = 0; r < n; r++)
        v[r] = quiet.runs[r].share;
    cJSON_AddItemToObject(s, "interference_share", spread_of(v, n));
    for (int r = 0; r < n; r++)
        v[r] = quiet.runs[r].ivcsw_per_s;
    cJSON_AddItemToObject(s, "involuntary_switches_per_s", spread_of(v, n));
    free(v);
    cJSON_AddStringToObject(
        s, "what",
        "every native run the calibration kept: its kernel probe (dahl's conv2d on every core, the worse of before "
        "and after the run, median over the cores), its cores' round trip (apart: over 2 times the shortest), the "
        "share of the cores' time other processes and the hypervisor took (/proc/stat against the run's own CPU "
        "time) and its involuntary context switches; calibrated_in: the perf-model runs' median probe");
    return s;
}

/* A plain run stayed noisy (dahlsim_calibrate_native_train), so the runtime's costs were not measured. */
static bool plain_noisy;

bool dahlsim_calibrate_plain_runs_noisy(void)
{
    return plain_noisy;
}

void dahlsim_calibrate_noisy_error(const struct dahlsim_calibrate_opts *o, const char *what, long runs,
                                   const char *why)
{
    dahlsim_error("calibrate: %s: the machine was disturbed: %ld run(s) in a row shared over %.0f %% of the cores' "
                  "time with other work (last: %s); nothing of them is stored",
                  what, runs, 100 * o->noisy, why);
    fprintf(stderr, "hint: stop the other work (top shows it), or raise --noisy to keep its load in the figures\n");
}

/* One native run, without probes. */
static int native_train_once(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                             const struct dahlsim_calibrate_paths *p, int seed, bool calibrating, long samples,
                             long batch, const struct dahlsim_calibrate_run *run)
{
    char self[PATH_MAX];
    if (dahlsim_sibling_path("dahlsim", self, sizeof(self)) != 0)
        return -1;
    /* regression is measured as nl-regression: see kind_rank in dahlsim_calibrate_covers.c */
    struct dahlsim_calibrate_cover measured = *c;
    if (strcmp(c->perfmodel, "regression") == 0)
        snprintf(measured.perfmodel, sizeof(measured.perfmodel), "nl-regression");
    struct dahlsim_experiment x;
    char point[PATH_MAX + 16];
    if (cover_point(o, &measured, p, samples, batch, seed, run, &x, point, sizeof(point)) != 0)
        return -1;
    char *argv[] = {self, "train", "--point", point, "--quiet", "--out", (char *)p->run, NULL};
    char max_error[32];
    snprintf(max_error, sizeof(max_error), "%ld", o->history_max_error);
    const struct dahlsim_env_var env[] = {
        {"STARPU_PERF_MODEL_DIR", p->sampling},
        {"STARPU_HOSTNAME", o->machine},
        {"STARPU_CALIBRATE", calibrating ? "1" : "0"},
        {"STARPU_CALIBRATE_MINIMUM", DAHLSIM_CALIBRATE_MINIMUM},
        {"STARPU_HISTORY_MAX_ERROR", max_error},
        {"STARPU_SILENT", "1"},
    };
    char out[4096]; /* the per-epoch lines: not shown */
    return dahlsim_spawn_err(argv, env, sizeof(env) / sizeof(env[0]), out, sizeof(out), p->errlog);
}

int dahlsim_calibrate_native_train(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                                   const struct dahlsim_calibrate_paths *p, int seed, bool calibrating, long samples,
                                   long batch, const struct dahlsim_calibrate_run *run)
{
    if (calibrating)
        return native_train_once(o, c, p, seed, calibrating, samples, batch, run);
    char why[256] = "";
    for (long attempt = 0;; attempt++) {
        int ret = dahlsim_calibrate_probe(true);
        int status = ret == 0 ? native_train_once(o, c, p, seed, false, samples, batch, run) : -1;
        if (ret == 0 && status == 0)
            ret = dahlsim_calibrate_probe(false);
        if (ret != 0) {
            dahlsim_error("calibrate: %s: cannot probe the machine: %s", c->dataset, strerror(-ret));
            return DAHLSIM_CALIBRATE_NOISY;
        }
        /* Fault injection for the tests: DAHLSIM_FAULT=noisy-plain-runs makes every plain run noisy (a machine
         * that got loaded after the perf models were measured). */
        const char *fault = getenv("DAHLSIM_FAULT");
        bool faulty = fault != NULL && strcmp(fault, "noisy-plain-runs") == 0;
        if (faulty)
            snprintf(why, sizeof(why), "DAHLSIM_FAULT=noisy-plain-runs");
        if (status != 0 || !(faulty || dahlsim_calibrate_disturbed(o, why, sizeof(why)))) {
            if (status == 0)
                dahlsim_calibrate_spell_keep(false);
            return status;
        }
        if (attempt == o->reruns) {
            char what[PATH_MAX + 64];
            snprintf(what, sizeof(what), "%s, plain run %d", c->dataset, seed);
            dahlsim_calibrate_noisy_error(o, what, attempt + 1, why);
            plain_noisy = true;
            return DAHLSIM_CALIBRATE_NOISY;
        }
        if (!o->quiet)
            fprintf(stderr, "dahlsim calibrate: %s: plain run %d was disturbed (%s): running it again\n", c->dataset,
                    seed, why);
    }
}

int dahlsim_calibrate_native_round(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                                   const struct dahlsim_calibrate_paths *p, int round, bool calibrating)
{
    /* With GPUs, dmda (cover_point's default): under STARPU_CALIBRATE=1 it sends each task to a worker kind
     * whose model still lacks measurements, where lws would leave the GPU's models of rarely stolen tasks
     * empty. */
    const struct dahlsim_calibrate_run run = {.ncpu = o->measure_ncpu, .grain = c->grain};
    return dahlsim_calibrate_native_train(o, c, p, round, calibrating, o->steps * o->batch, o->batch, &run);
}

int dahlsim_calibrate_sim_rest(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_cover *c,
                               const struct dahlsim_calibrate_paths *p, const char *scheduler, int ncpu,
                               double push_us)
{
    struct dahlsim_experiment x;
    char point[PATH_MAX + 16];
    const struct dahlsim_calibrate_run run = {.scheduler = scheduler, .ncpu = ncpu};
    if (cover_point(o, c, p, o->sched_steps * DAHLSIM_CALIBRATE_SCHED_BATCH, DAHLSIM_CALIBRATE_SCHED_BATCH, 1, &run,
                    &x, point, sizeof(point)) != 0)
        return -1;
    /* the policy's push cost charged, StarPU-SimGrid's per-input cost off */
    x.cpus = ncpu;
    x.sched_push_us = push_us;
    x.worker_us = 0;
    snprintf(x.runtime_costs, sizeof(x.runtime_costs), "measured");
    char err[PATH_MAX + 256];
    if (dahlsim_experiment_save(&x, point, err, sizeof(err)) != 0) {
        dahlsim_error("calibrate: %s", err);
        return -1;
    }
    char *args[] = {"sim-train", "--point", point, "--quiet", "--out", (char *)p->run, NULL};
    const struct dahlsim_env_var env[] = {
        {"STARPU_PERF_MODEL_DIR", p->sampling}, {"STARPU_HOSTNAME", o->machine}, {"STARPU_CALIBRATE", "0"},
        {"STARPU_SILENT", "1"},
    };
    char out[4096];
    return dahlsim_spawn_sim_err(args, env, sizeof(env) / sizeof(env[0]), out, sizeof(out), p->errlog);
}

void dahlsim_calibrate_last_line(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    char *text = dahlsim_read_text(path, SIZE_MAX);
    if (text == NULL)
        return;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
        snprintf(buf, size, "%s", line);
    free(text);
}

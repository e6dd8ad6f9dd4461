/* The comparison of `dahlsim validate`'s native runs with their simulations, and its report: the table on
 * stdout, fidelity.json and fidelity.md, with the runs' spell and interval and the pairs of setups
 * (dahlsim_validate_report.h). */
#include "dahlsim_validate_report.h"

#include "dahlsim_fs.h"
#include "dahlsim_pairs.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run is in the calibration's spell when its probe is within this of the calibration's. */
#define SPELL_SLACK 0.05

/* Whether run r of setup i was in the calibration's spell: its probe within SPELL_SLACK of the calibration's
 * and its cores placed as most of the perf-model runs had them (apart: a round trip over
 * DAHLSIM_PROBE_LATENCY_SLACK times the shorter of the calibration's and this session's shortest). 1, 0, or
 * -1 where either is unknown. */
static int in_spell(const struct native_figures *n, size_t i, long r)
{
    if (!(n->calibrated_gflops > 0) || !isfinite(n->gflops[i][r]))
        return -1;
    if (fabs(n->gflops[i][r] / n->calibrated_gflops - 1) > SPELL_SLACK)
        return 0;
    double shortest = n->best.latency_ns, trip = n->probe[i][r].latency_ns;
    if (n->calibrated_shortest_ns > 0 && (shortest <= 0 || n->calibrated_shortest_ns < shortest))
        shortest = n->calibrated_shortest_ns;
    if (n->calibrated_apart < 0 || !(shortest > 0) || !(trip > 0))
        return 1; /* one core, or placements not recorded: the probe alone */
    return (trip > DAHLSIM_PROBE_LATENCY_SLACK * shortest) == (n->calibrated_apart == 1);
}


/* Compares setup i's native figures (t, busy and stalls of its quiet repeats, or of all when none was quiet)
 * with its simulation's simf. */
struct comparison dahlsim_validate_compare(size_t i, long all, const double *t_all, const double *busy_all,
                                 const double *stalls_all, const bool *noisy, struct figures simf)
{
    double t[DAHLSIM_VALIDATE_MAX_REPEATS], busy[DAHLSIM_VALIDATE_MAX_REPEATS], stalls[DAHLSIM_VALIDATE_MAX_REPEATS];
    long quiet = 0, repeats = 0;
    for (long r = 0; r < all; r++)
        quiet += !noisy[r];
    for (long r = 0; r < all; r++)
        if (quiet == 0 || !noisy[r]) {
            t[repeats] = t_all[r];
            busy[repeats] = busy_all[r];
            stalls[repeats++] = stalls_all[r];
        }
    struct comparison c = {.quiet = quiet, .sim = simf.makespan_s, .simf = simf};
    c.stall_med = dahlsim_median(stalls, (size_t)repeats);
    c.lo = c.hi = t[0];
    for (long r = 1; r < repeats; r++) {
        c.lo = t[r] < c.lo ? t[r] : c.lo;
        c.hi = t[r] > c.hi ? t[r] : c.hi;
    }
    c.med = dahlsim_median(t, (size_t)repeats);
    c.err = (c.sim - c.med) / c.med;
    /* Where the error comes from: busy_ratio > 1 when tasks ran longer natively than their perf models say
     * (cores shared with the submitting thread, cache and memory contention between workers); the
     * unmodelled time is the native worker time outside tasks beyond the simulated one (runtime overhead and
     * waiting the simulation leaves out), per task. */
    c.busy_med = dahlsim_median(busy, (size_t)repeats);
    c.busy_ratio = simf.busy_s > 0 ? c.busy_med / simf.busy_s : NAN;
    double ncpu = (double)validate_setups[i].ncpu;
    c.unmodelled_us = simf.tasks > 0
                          ? 1e6 * ((ncpu * c.med - c.busy_med) - (ncpu * c.sim - simf.busy_s)) / (double)simf.tasks
                          : NAN;
    return c;
}


/* Starts the report: the JSON document, the Markdown table's head, the table's head on stdout. */
void dahlsim_fidelity_start(struct fidelity *fy, const struct dahlsim_validate_opts *o, const char *natives_commit)
{
    fy->root = cJSON_CreateObject();
    cJSON_AddStringToObject(fy->root, "machine", o->machine);
    cJSON_AddNumberToObject(fy->root, "repeats", (double)o->repeats);
    cJSON_AddNumberToObject(fy->root, "nodes", (double)o->nodes);
    cJSON_AddStringToObject(fy->root, "commit", o->commit != NULL ? o->commit : "unknown");
    fy->used = (size_t)snprintf(fy->md, sizeof(fy->md), "# Fidelity of calibration %s\n\n", o->machine);
    if (o->natives != NULL) {
        /* the native runs of an earlier report: where they are, and the commit that made them */
        cJSON_AddStringToObject(fy->root, "natives_from", o->natives);
        cJSON_AddStringToObject(fy->root, "natives_commit", natives_commit);
        fy->used += (size_t)snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used,
                                     "Native runs: those of %s (made at commit %s), judged again at --noisy %g;\n"
                                     "simulated at commit %s.\n\n",
                                     o->natives, natives_commit, o->noisy, o->commit != NULL ? o->commit : "unknown");
    }
    fy->rows = cJSON_AddArrayToObject(fy->root, "setups");
    fy->nerr = 0;
    fy->used += (size_t)snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used,
                                 "| setup | quiet runs | native makespan, median (min–max) | simulated | error | "
                                 "busy native/sim | unmodelled µs/task | step stalls native/sim (s) |\n"
                                 "|---|---|---|---|---|---|---|---|\n");
    fy->dropped = fy->all_noisy = 0;
    fy->repeats = o->repeats;
    fy->inside = fy->with_interval = fy->spell_runs = 0;
    fy->nspell = 0;
    printf("%-28s %5s %12s %22s %12s %8s %8s %11s %15s\n", "setup", "quiet", "native (s)", "native min-max (s)",
           "simulated (s)", "error", "busy n/s", "unmod us/t", "stalls n/s (s)");
}

/* v at key of obj, or null where it is not a number (no pair; tau-b undefined; not recorded). */
static void add_number_or_null(cJSON *obj, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

/* A verdict (1, 0) at key of obj, null where it cannot be told (-1). */
static void add_verdict(cJSON *obj, const char *key, int verdict)
{
    if (verdict < 0)
        cJSON_AddNullToObject(obj, key);
    else
        cJSON_AddBoolToObject(obj, key, verdict == 1);
}

/* Setup i's error over its runs in the calibration's spell (the median of their makespans t against the
 * simulated sim), into row ("spell_runs", "spell_error": null without such a run) and fy. */
static void spell_error(struct fidelity *fy, const struct native_figures *n, size_t i, const double *t, double sim,
                        cJSON *row)
{
    double in[DAHLSIM_VALIDATE_MAX_REPEATS];
    size_t k = 0;
    for (long r = 0; r < DAHLSIM_VALIDATE_MAX_REPEATS && r < (long)fy->repeats; r++)
        if (in_spell(n, i, r) == 1)
            in[k++] = t[r];
    cJSON_AddNumberToObject(row, "spell_runs", (double)k);
    double err = k > 0 ? (sim - dahlsim_median(in, k)) / dahlsim_median(in, k) : NAN;
    add_number_or_null(row, "spell_error", err);
    fy->spell_runs += (long)k;
    if (k > 0)
        fy->spell_errs[fy->nspell++] = fabs(err);
}

/* Setup s's line of the table (stdout and Markdown) and its row of the JSON document; t: its native
 * makespans, n and i: the probes and verdicts of its runs. */
void dahlsim_fidelity_add(struct fidelity *fy, const struct dahlsim_validate_opts *o, const struct setup *s,
                         const double *t, const struct comparison *c, const struct native_figures *n, size_t i)
{
    long repeats = o->repeats;
    fy->med[i] = c->med / (double)s->samples; /* per sample: pairs of different lengths compare as choices */
    fy->sim[i] = c->sim / (double)s->samples;
    fy->errs[fy->nerr++] = fabs(c->err);
    fy->dropped += c->quiet > 0 ? repeats - c->quiet : 0;
    fy->all_noisy += c->quiet == 0;
    char range[64], quiet[64];
    snprintf(range, sizeof(range), "%.4f-%.4f", c->lo, c->hi);
    snprintf(quiet, sizeof(quiet), "%ld/%ld%s", c->quiet, repeats, c->quiet == 0 ? " (none: all used)" : "");
    printf("%-28s %5s %12.4f %22s %12.4f %+7.1f%% %8.2f %11.1f %7.3f/%-7.3f\n", s->name, quiet, c->med, range,
           c->sim, 100 * c->err, c->busy_ratio, c->unmodelled_us, c->stall_med, c->simf.stall_s);
    fflush(stdout);
    if (fy->used < sizeof(fy->md))
        fy->used += (size_t)snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used,
                                     "| %s | %s | %.4f s (%.4f–%.4f) | %.4f s | %+.1f %% | %.2f | %.1f | %.3f / %.3f |\n",
                                     s->name, quiet, c->med, c->lo, c->hi, c->sim, 100 * c->err, c->busy_ratio,
                                     c->unmodelled_us, c->stall_med, c->simf.stall_s);
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "setup", s->name);
    cJSON_AddStringToObject(row, "dataset", s->dataset);
    cJSON_AddNumberToObject(row, "samples", (double)s->samples);
    cJSON_AddNumberToObject(row, "batch", (double)s->batch);
    cJSON_AddNumberToObject(row, "cpus", (double)s->ncpu);
    cJSON_AddNumberToObject(row, "gpus", (double)s->ngpu);
    cJSON_AddStringToObject(row, "scheduler", s->sched);
    cJSON_AddNumberToObject(row, "pipeline_depth", (double)(s->depth > 1 ? s->depth : 1));
    cJSON_AddNumberToObject(row, "grain", (double)(s->grain > 1 ? s->grain : 1));
    cJSON_AddNumberToObject(row, "nodes", (double)o->nodes);
    cJSON_AddItemToObject(row, "native_makespans_s", cJSON_CreateDoubleArray(t, (int)repeats));
    cJSON_AddNumberToObject(row, "native_median_s", c->med);
    cJSON_AddNumberToObject(row, "simulated_s", c->sim);
    cJSON_AddNumberToObject(row, "relative_error", c->err);
    cJSON_AddNumberToObject(row, "native_busy_median_s", c->busy_med);
    cJSON_AddNumberToObject(row, "simulated_busy_s", c->simf.busy_s);
    cJSON_AddNumberToObject(row, "busy_ratio", c->busy_ratio);
    cJSON_AddNumberToObject(row, "tasks", (double)c->simf.tasks);
    cJSON_AddNumberToObject(row, "unmodelled_us_per_task", c->unmodelled_us);
    cJSON_AddNumberToObject(row, "native_step_stalls_median_s", c->stall_med);
    cJSON_AddNumberToObject(row, "simulated_step_stalls_s", c->simf.stall_s);
    cJSON_AddNumberToObject(row, "quiet_runs", (double)c->quiet);
    cJSON *runs = cJSON_AddArrayToObject(row, "runs");
    for (long r = 0; r < repeats; r++) {
        cJSON *run = cJSON_CreateObject();
        cJSON_AddNumberToObject(run, "makespan_s", t[r]);
        cJSON_AddBoolToObject(run, "noisy", n->noisy[i][r]);
        cJSON_AddNumberToObject(run, "probe_slower", n->slow[i][r]); /* than the session's fastest */
        cJSON_AddNumberToObject(run, "core_latency_ns", n->probe[i][r].latency_ns); /* 0: one core */
        cJSON_AddNumberToObject(run, "latency_ratio", n->far[i][r]);              /* over the shortest */
        cJSON_AddNumberToObject(run, "reruns", n->reruns[i][r]);
        add_number_or_null(run, "probe_gflops", n->gflops[i][r]);
        add_number_or_null(run, "interference_share", n->share[i][r]);
        int spell = in_spell(n, i, r), inside = -1;
        if (isfinite(c->simf.lo_s))
            inside = t[r] >= c->simf.lo_s && t[r] <= c->simf.hi_s;
        fy->inside += inside == 1;
        fy->with_interval += inside >= 0;
        add_verdict(run, "in_calibrated_spell", spell);
        add_verdict(run, "inside_interval", inside);
        cJSON_AddItemToArray(runs, run);
    }
    if (isfinite(c->simf.lo_s)) {
        const double iv[2] = {c->simf.lo_s, c->simf.hi_s};
        cJSON_AddItemToObject(row, "simulated_interval_s", cJSON_CreateDoubleArray(iv, 2));
    }
    spell_error(fy, n, i, t, c->sim, row);
    cJSON_AddItemToArray(fy->rows, row);
}

/* The report's figures on the machine's spread: how many native runs fell inside their simulation's
 * interval, and the errors over the runs in the calibration's spell; on stdout and in both documents. */
static void fidelity_spread(struct fidelity *fy, const struct native_figures *n)
{
    char inside[160] = "no interval: the calibration has no measured spread of its machine";
    if (fy->with_interval > 0)
        snprintf(inside, sizeof(inside), "%ld of %ld native runs (%.0f %%) inside their predicted interval",
                 fy->inside, fy->with_interval, 100.0 * (double)fy->inside / (double)fy->with_interval);
    char spell[256] = "in the calibration's spell: no run (the calibration recorded no spell, or no run probed "
                      "within 5 % of it)";
    double med = NAN, max = NAN;
    if (fy->nspell > 0) {
        med = dahlsim_median(fy->spell_errs, fy->nspell); /* sorts */
        max = fy->spell_errs[fy->nspell - 1];
        snprintf(spell, sizeof(spell), "in the calibration's spell (probe within %.0f %% of its %.1f GFLOP/s, cores "
                 "%s): median |error| %.1f %%, max %.1f %% over %zu setups, %ld runs", 100 * SPELL_SLACK,
                 n->calibrated_gflops,
                 n->calibrated_apart < 0 ? "not recorded" : n->calibrated_apart ? "apart" : "close",
                 100 * med, 100 * max, fy->nspell, fy->spell_runs);
    }
    printf("%s\n%s\n", inside, spell);
    if (fy->used < sizeof(fy->md))
        fy->used += (size_t)snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used, "\n%c%s; %s.\n",
                                     inside[0] - ('a' - 'A') * (inside[0] >= 'a'), inside + 1, spell);
    cJSON_AddNumberToObject(fy->root, "runs_inside_interval", (double)fy->inside);
    cJSON_AddNumberToObject(fy->root, "runs_with_interval", (double)fy->with_interval);
    add_number_or_null(fy->root, "calibrated_probe_gflops", n->calibrated_gflops > 0 ? n->calibrated_gflops : NAN);
    add_number_or_null(fy->root, "spell_median_abs_error", med);
    add_number_or_null(fy->root, "spell_max_abs_error", max);
    cJSON_AddNumberToObject(fy->root, "spell_setups", (double)fy->nspell);
}

/* Ends the report: the median and maximum absolute error, the quiet runs and the probe, on stdout and in
 * both documents. */
void dahlsim_fidelity_end(struct fidelity *fy, const struct dahlsim_validate_opts *o, const struct native_figures *n)
{
    long repeats = o->repeats;
    double med_err = dahlsim_median(fy->errs, fy->nerr), max_err = fy->errs[fy->nerr - 1];
    double spread = 0, far = 1; /* the slowest probe of the session against the fastest; the longest round trip */
    for (size_t i = 0; i < validate_nsetups; i++)
        for (long r = 0; r < repeats; r++) {
            spread = n->slow[i][r] > spread ? n->slow[i][r] : spread;
            far = n->far[i][r] > far ? n->far[i][r] : far;
        }
    double lo = n->best.gflops[0], hi = n->best.gflops[0]; /* the fastest probe's range over the cores */
    for (int c = 1; c < n->cores; c++) {
        lo = n->best.gflops[c] < lo ? n->best.gflops[c] : lo;
        hi = n->best.gflops[c] > hi ? n->best.gflops[c] : hi;
    }
    char trip[160] = ""; /* the round trip's line: none with one core */
    double limit = dahlsim_probe_latency_limit(o->noisy);
    char calibrated_at[48] = "";
    if (n->calibrated_latency_ns > 0)
        snprintf(calibrated_at, sizeof(calibrated_at), "; calibrated at %.0f ns", n->calibrated_latency_ns);
    if (n->best.latency_ns > 0)
        snprintf(trip, sizeof(trip), "round trip between the cores: shortest %.0f ns, longest run %.1f times that "
                 "(noisy above %.2f)%s\n", n->best.latency_ns, far, limit, calibrated_at);
    printf("median |error| %.1f %%, max |error| %.1f %% over %zu setups (quiet runs only: %ld noisy run(s) left "
           "out, %ld setup(s) without a quiet run)\n"
           "probe: fastest %.2f to %.2f GFLOP/s over the %d core(s) used, slowest run %.1f %% below (noisy above "
           "%.1f %%)\n%s",
           100 * med_err, 100 * max_err, fy->nerr, fy->dropped, fy->all_noisy, lo, hi, n->cores, 100 * spread,
           100 * o->noisy, trip);
    cJSON_AddNumberToObject(fy->root, "noisy_threshold", o->noisy);
    cJSON_AddNumberToObject(fy->root, "reruns", (double)o->reruns);
    cJSON_AddNumberToObject(fy->root, "noisy_runs_dropped", (double)fy->dropped);
    cJSON_AddNumberToObject(fy->root, "setups_without_quiet_run", (double)fy->all_noisy);
    cJSON_AddItemToObject(fy->root, "probe_fastest_gflops", cJSON_CreateDoubleArray(n->best.gflops, n->cores));
    cJSON_AddNumberToObject(fy->root, "probe_spread", spread);
    cJSON_AddNumberToObject(fy->root, "core_latency_shortest_ns", n->best.latency_ns); /* 0: one core */
    cJSON_AddNumberToObject(fy->root, "core_latency_spread", far);
    cJSON_AddNumberToObject(fy->root, "core_latency_limit", isfinite(limit) ? limit : 0); /* 0: none */
    cJSON_AddNumberToObject(fy->root, "core_latency_calibrated_ns", n->calibrated_latency_ns); /* 0: not recorded */
    /* the session's cores against the calibration's (validate warned at the start if they differed then) */
    struct dahlsim_node calibrated = {.core_latency_ns = n->calibrated_latency_ns},
                        here = {.core_latency_ns = n->best.latency_ns};
    char why[512];
    if (dahlsim_node_latency_differs(&calibrated, &here, why, sizeof(why)))
        fprintf(stderr, "dahlsim validate: warning: with the quietest runs of this session, %s\n", why);
    if (fy->used < sizeof(fy->md))
        fy->used += (size_t)snprintf(
            fy->md + fy->used, sizeof(fy->md) - fy->used,
            "\nQuiet runs: before and after every native run a fixed compute probe (dahl's conv2d kernel) ran on\n"
            "each core the run used, and a cache line went from the first of them to each other and back; a run\n"
            "whose probe was more than %.1f %% slower than the session's fastest on a core, or whose round trip\n"
            "was more than %.2f times the session's shortest, is noisy: run again up to %ld times, and left out\n"
            "of the medians (%ld left out; %ld setup(s) had no quiet run and use all of theirs). Probe: fastest\n"
            "%.2f to %.2f GFLOP/s over the %d core(s) used, the slowest run's %.1f %% below; round trip: shortest\n"
            "%.0f ns (0: one core), the longest run's %.1f times that.\n",
            100 * o->noisy, limit, o->reruns, fy->dropped, fy->all_noisy, lo, hi, n->cores, 100 * spread,
            n->best.latency_ns, far);
    if (fy->used < sizeof(fy->md))
        snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used,
                 "\nMedian |error| %.1f %%, max |error| %.1f %% over %zu setups, %ld native repeats each.\n\n"
                 "busy native/sim: time the workers spent executing tasks (summed over workers; native median over\n"
                 "the repeats) over the simulated one. Above 1, tasks ran longer natively than their perf models\n"
                 "say: cores shared with the thread submitting tasks, cache and memory contention between workers.\n"
                 "Where every core runs a worker the simulation executes the submitting thread's cost on the\n"
                 "workers' cores, and the tasks it overlaps share their core's speed with it: their simulated busy\n"
                 "time includes that share, and the ratio reads below 1 (0.84 at 28x28x3 b32 lws, where the tasks\n"
                 "alone are within 3 %% of their perf models).\n"
                 "unmodelled µs/task: native worker time outside tasks (scheduling, data management, waiting) minus\n"
                 "the simulated one, per task: what the simulation leaves out (where the calibration measured them,\n"
                 "it charges the policy's cost per push and the workers' cost per task; StarPU-SimGrid alone, 1 µs\n"
                 "per input and per driver loop turn). step stalls: what the steps longer than twice the run's\n"
                 "median step took beyond the median, summed (native: median over the repeats): whole steps held up, as\n"
                 "when the operating system deschedules a thread for a timeslice, which the simulation does not\n"
                 "model. These say where an error comes from; none corrects it.\n",
                 100 * med_err, 100 * max_err, fy->nerr, repeats);
    cJSON_AddNumberToObject(fy->root, "median_abs_error", med_err);
    cJSON_AddNumberToObject(fy->root, "max_abs_error", max_err);
    fidelity_spread(fy, n);
}

/* Setup s as the comparability rule reads it (dahlsim_pairs.h). */
static struct dahlsim_pair_setup pair_setup(const struct dahlsim_validate_opts *o, const struct setup *s)
{
    return (struct dahlsim_pair_setup){.dataset = s->dataset, .sched = s->sched, .samples = s->samples,
                                       .batch = s->batch, .ncpu = s->ncpu, .ngpu = s->ngpu, .nodes = o->nodes,
                                       .depth = s->depth > 1 ? s->depth : 1, .grain = s->grain > 1 ? s->grain : 1};
}

/* The comparable pairs of setups into p, judged: native ratios over the rounds of n (quiet rounds first),
 * against the medians and simulations of fy, all per sample (a choice is about throughput: the default set
 * compares setups of 4096 and 8192 samples). Returns how many. */
static size_t find_pairs(const struct dahlsim_validate_opts *o, const struct native_figures *n,
                         const struct fidelity *fy, struct dahlsim_pair *p)
{
    size_t np = 0;
    for (size_t i = 0; i < validate_nsetups; i++)
        for (size_t j = i + 1; j < validate_nsetups; j++) {
            struct dahlsim_pair_setup a = pair_setup(o, &validate_setups[i]), b = pair_setup(o, &validate_setups[j]);
            enum dahlsim_pair_kind kind = dahlsim_pair_kind(&a, &b);
            if (kind == DAHLSIM_PAIR_NONE)
                continue;
            double ratio = dahlsim_pair_native_ratio(n->times[i], n->noisy[i], n->times[j], n->noisy[j],
                                                     (size_t)o->repeats) *
                           (double)validate_setups[j].samples / (double)validate_setups[i].samples; /* per sample */
            p[np++] = dahlsim_pair_judge(i, j, kind, ratio, fy->med, fy->sim);
        }
    return np;
}

/* The pairs and their summary into the JSON document. */
static void pairs_json(struct fidelity *fy, const struct dahlsim_pair *p, size_t np,
                       const struct dahlsim_pairs_summary *sum)
{
    cJSON *list = cJSON_AddArrayToObject(fy->root, "pairs");
    for (size_t k = 0; k < np; k++) {
        cJSON *pair = cJSON_CreateObject();
        cJSON_AddStringToObject(pair, "a", validate_setups[p[k].a].name);
        cJSON_AddStringToObject(pair, "b", validate_setups[p[k].b].name);
        cJSON_AddStringToObject(pair, "kind", dahlsim_pair_kind_name(p[k].kind));
        add_number_or_null(pair, "native_ratio", p[k].native_ratio);
        add_number_or_null(pair, "simulated_ratio", p[k].simulated_ratio);
        add_number_or_null(pair, "paired_error", p[k].error);
        cJSON_AddBoolToObject(pair, "distinct", p[k].distinct);
        cJSON_AddBoolToObject(pair, "ordered", p[k].ordered);
        cJSON_AddItemToArray(list, pair);
    }
    add_number_or_null(fy->root, "paired_median_abs_error", sum->median_abs_error);
    add_number_or_null(fy->root, "paired_max_abs_error", sum->max_abs_error);
    cJSON_AddNumberToObject(fy->root, "distinct_pairs", (double)sum->distinct);
    cJSON_AddNumberToObject(fy->root, "distinct_pairs_ordered", (double)sum->ordered);
    add_number_or_null(fy->root, "kendall_tau", sum->tau_b);
}

/* The summary in one sentence (stdout's line and the Markdown's), into line. */
static void pairs_sentence(const struct dahlsim_pairs_summary *sum, char *line, size_t size)
{
    if (sum->pairs == 0) {
        snprintf(line, size, "paired errors: no comparable pair");
        return;
    }
    char tau[48] = "undefined (every pair tied)";
    if (isfinite(sum->tau_b))
        snprintf(tau, sizeof(tau), "%.2f", sum->tau_b);
    snprintf(line, size, "paired errors: median |error| %.1f %%, max %.1f %% over %zu pairs; distinct pairs (native "
             "> %.0f %% apart) ordered as natively: %zu of %zu; Kendall's tau %s", 100 * sum->median_abs_error,
             100 * sum->max_abs_error, sum->pairs, 100 * DAHLSIM_PAIR_DISTINCT, sum->ordered, sum->distinct, tau);
}

/* The pairs' section of the Markdown: what they are, their table, the summary sentence. */
static void pairs_md(struct fidelity *fy, const struct dahlsim_pair *p, size_t np, const char *sentence)
{
    fy->used += (size_t)snprintf(
        fy->md + fy->used, sizeof(fy->md) - fy->used,
        "\n## Decisions: pairs of setups\n\n"
        "What a user acts on is a choice between setups: which policy, which batch or worker count. A pair is\n"
        "two setups on the same dataset, nodes and GPUs that differ by such a choice: the same batch (a policy\n"
        "choice: scheduler, workers, pipeline depth, grain or samples differ) or the same scheduler (a batch or\n"
        "worker choice). Native ratio: the median, over the rounds where neither run was noisy (all rounds\n"
        "where there is none), of A's time per sample over B's in the same round; the two runs of a round are made\n"
        "back to back, so a slow or fast spell of the machine lands on both and cancels in the ratio.\n"
        "Simulated ratio: A's simulated time per sample over B's; paired error: simulated ratio / native ratio - 1.\n"
        "Distinct: the native medians more than %.0f %% apart; ordered: the simulation puts A and B in the\n"
        "order of their native medians (the count is over the distinct pairs). Kendall's tau-b of the native\n"
        "medians against the simulated times (per sample), over these pairs only: (concordant - discordant) /\n"
        "sqrt((P - pairs tied natively) (P - pairs tied simulated)), P the number of pairs; 1 when the\n"
        "simulation orders every pair as natively.\n\n",
        100 * DAHLSIM_PAIR_DISTINCT);
    if (np > 0 && fy->used < sizeof(fy->md))
        fy->used += (size_t)snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used,
                                     "| setup A | setup B | kind | native ratio A/B | simulated ratio | paired error "
                                     "| distinct | ordered |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < np && fy->used < sizeof(fy->md); k++)
        fy->used += (size_t)snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used,
                                     "| %s | %s | %s | %.4f | %.4f | %+.1f %% | %s | %s |\n", validate_setups[p[k].a].name,
                                     validate_setups[p[k].b].name, dahlsim_pair_kind_name(p[k].kind), p[k].native_ratio,
                                     p[k].simulated_ratio, 100 * p[k].error, p[k].distinct ? "yes" : "no",
                                     p[k].ordered ? "yes" : "no");
    if (fy->used < sizeof(fy->md))
        fy->used += (size_t)snprintf(fy->md + fy->used, sizeof(fy->md) - fy->used, "\n%c%s.\n",
                                     sentence[0] == 'p' ? 'P' : sentence[0], sentence + 1);
}

/* Fidelity as decisions: the comparable pairs of setups, on stdout (one line after the summary) and in both
 * documents. */
void dahlsim_fidelity_pairs(struct fidelity *fy, const struct dahlsim_validate_opts *o, const struct native_figures *n)
{
    static struct dahlsim_pair p[DAHLSIM_VALIDATE_MAX_SETUPS * (DAHLSIM_VALIDATE_MAX_SETUPS - 1) / 2];
    size_t np = find_pairs(o, n, fy, p);
    struct dahlsim_pairs_summary sum = dahlsim_pairs_summarize(p, np, fy->med, fy->sim);
    char sentence[320];
    pairs_sentence(&sum, sentence, sizeof(sentence));
    printf("%s\n", sentence);
    pairs_json(fy, p, np, &sum);
    if (fy->used < sizeof(fy->md))
        pairs_md(fy, p, np, sentence);
}

/* Writes out/fidelity.json and out/fidelity.md; deletes the JSON document. Returns 0, or -EIO after printing
 * the error. */
int dahlsim_fidelity_write(struct fidelity *fy, const char *out)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/fidelity.json", out);
    char err[PATH_MAX + 128];
    int ret = dahlsim_json_save(fy->root, path, err, sizeof(err));
    cJSON_Delete(fy->root);
    fy->root = NULL;
    if (ret != 0) {
        dahlsim_error("validate: %s", err);
        return -EIO;
    }
    snprintf(path, sizeof(path), "%s/fidelity.md", out);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        dahlsim_error("validate: %s: %s", path, strerror(errno));
        return -EIO;
    }
    fputs(fy->md, f);
    fclose(f);
    return 0;
}

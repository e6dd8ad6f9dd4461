/* Scenario files: strict parsing of one experiment and its sweep grid.
 *
 *   key             type                 default                  meaning
 *   comment         string               ""                       the question the scenario answers
 *   machine         string               (required)               calibration/NAME: perf models + platform
 *   model           string               "lenet"                  lenet, deep, deep:N, or a model file
 *                                                                 (relative to the scenario's directory)
 *   dataset         string               "fashion-mnist"          "cifar10:DIR" or "synthetic:HxWxC" (shapes only in simulation)
 *   samples         integer >= 1         60000 / 1024 synthetic   training samples per epoch
 *   iterations      integer >= 1         -                        instead of samples: iterations x batch
 *   batch           integer >= 1         32                       samples per step (<= samples)
 *   grain           integer >= 1|"batch"|"auto"  1                samples per layer task (<= batch; with
 *                                                                 workloads, <= every job's batch)
 *   pipeline_depth  integer in [1, 64]   1                        training steps in flight, PipeDream-like
 *   pipeline_schedule "fill"|"1f1b"      "fill"                   the order of a pipeline's tasks
 *   epochs          integer >= 1         1
 *   scheduler       string               "lws"                    any StarPU 1.3.10 policy name, or
 *                                                                 heteroprio:auto-HEURISTIC (dahlsim_schedconf.h)
 *   sched_gamma     number >= 0          0 (off)                  dm* policies: the codelets' energy models on,
 *                                                                 STARPU_SCHED_GAMMA (us a joule is worth);
 *                                                                 every machine needs power figures
 *   cpus            integer >= 0         all CPUs of the platform
 *   steady_state    false|true|{"warmup": K, "tolerance": X}  false   simulate each epoch's steps until the
 *                                                                 rest, counted at the mean step after the
 *                                                                 first K (default 16), would err on its time
 *                                                                 by at most X (default 0.001) at 95 %
 *                                                                 (batch means, sim/program/meter.c), then
 *                                                                 extrapolate (single-node, one job;
 *                                                                 results.json "steady_state" says so)
 *   gpus            integer >= 0         all GPUs of the platform
 *   gpu_memory_mib  integer >= 1 | null  null (no limit)          STARPU_LIMIT_CUDA_MEM
 *   prefetch        boolean              true                     STARPU_PREFETCH
 *   perfmodel       string               "history"                regression, nl-regression
 *   reduction       string               "redux"                  or "manual"
 *   runtime_costs   string               "measured"               the runtime's own costs in simulation:
 *                                                                 "measured" (the calibration's submission
 *                                                                 and scheduling figures where it has them) or
 *                                                                 "starpu" (StarPU-SimGrid's fixed 1 us per
 *                                                                 submitted task, per input, per driver loop)
 *   seed            integer >= 0         1
 *   lr, momentum    number               0.01, 0.9
 *   trace           boolean              false                    Paje, Chrome JSON, Gantt, summary in <out>/trace
 *   trace_window    "START:END" | null   null (every step)        traced training steps (from 1); implies trace
 *   nodes           integer in [1, 1024] -                        multi-node: StarPU-MPI ranks over SMPI, batch
 *                                                                 split evenly (absent: single-node simulator)
 *   batch_per_node  integer >= 1         -                        with nodes, instead of batch: batch =
 *                                                                 batch_per_node x nodes (weak scaling)
 *   node_groups     [{"machine", "count", "share"}]  -          instead of machine, nodes, batch_per_node, cpus,
 *                                                                 gpus: nodes of several machines, each group's
 *                                                                 nodes training share samples of a step
 *                                                                 (dahlsim_scenario_nodes.c)
 *   mpi_progress_core "auto"|"shared"|"dedicated"|"busy"  "auto"       with nodes: where each rank's StarPU-MPI progression
 *                                                                 thread runs; "shared" (or "auto" when the
 *                                                                 workers hold every core) has it take turns
 *                                                                 with the workers on their cores while a
 *                                                                 request is pending (runtime/dahl_progress.h)
 *   mpi_progress_phase number in [0, 1)  0                      with nodes: every rank's turns shifted by this
 *                                                                 share of their period (a sweep over it shows
 *                                                                 what where they fall does to a run)
 *   representative_ranks  true|false    false                   with nodes (a data partition): StarPU runs on
 *                                                                 one rank per node group, the others only
 *                                                                 exchange gradients (runtime/dahl_light.h)
 *   network         "10gbe"|"ib-100g"|{...}  "10gbe" (with nodes)     the network between nodes: a preset or
 *                                                                 {"bandwidth": "25Gbps", "latency": "2us",
 *                                                                 "topology": "flat|fat-tree|torus"}
 *   workloads, job_count, job_order, job_contexts, job_window, job_sequence, ga: several jobs sharing the
 *                   machine (dahlsim_workloads.h)
 *   sweep           {key: [values...]}   -                        a grid over any keys above but comment/sweep
 */
#include "dahlsim_scenario.h"
#include "dahlsim_scenario_fields.h"
#include "dahlsim_scenario_nodes.h"
#include "dahlsim_workloads.h"
#include "dahlsim_grain.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_manifest.h"
#include "dahlsim_util.h"
#include "dahlsim_fs.h"
#include "dahlsim_platform.h"

#include "dahl_dataset_name.h"
#include "dahl_netdesc.h"
#include "dahl_perfnames.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A sweep's points at most. The fuzz build (libFuzzer's FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION,
 * docs/reliability.md) takes fewer: every point is a full parse, and a mutated sweep of 432 eight-job points
 * took 11 s under the sanitizers. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MAX_POINTS 96
#else
#define MAX_POINTS 10000
#endif

struct dahlsim_scenario {
    char path[PATH_MAX];
    char dir[PATH_MAX]; /* the scenario's directory, for relative model files */
    char comment[512];
    cJSON *base;        /* the scenario object without "comment" and "sweep", overrides applied */
    const char *sweep_keys[DAHLSIM_SCENARIO_MAX_SWEEP];
    const cJSON *sweep_values[DAHLSIM_SCENARIO_MAX_SWEEP];
    size_t nsweep;
    cJSON *sweep;       /* owned copy of the sweep block */
    struct dahlsim_experiment *points;
    size_t npoints;
};

static const char *const keys[] = {"comment", "machine",   "model",     "dataset",        "samples", "iterations",
                                   "batch",   "grain",   "epochs",    "scheduler", "cpus",           "gpus",    "gpu_memory_mib",
                                   "prefetch", "perfmodel", "reduction", "runtime_costs", "seed", "lr", "momentum",
                                   "trace",   "trace_window", "nodes", "batch_per_node", "node_groups", "partition", "network", "workloads",
                                   "job_count", "job_order", "job_contexts", "job_window", "job_sequence", "ga",
                                   "pipeline_depth", "pipeline_schedule", "sched_gamma", "steady_state", "mpi_progress_core",
                                   "representative_ranks", "mpi_progress_phase", "sweep"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static bool key_known(const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i], key) == 0)
            return true;
    return false;
}

static void expected_keys(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NKEYS && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", keys[i]);
}

/* ---- one experiment from a JSON object ----------------------------------------------------------------- */

/* "START:END", 1-based steps with 1 <= START <= END, into 0-based first and last. */
static bool parse_window(const char *text, long *first, long *last)
{
    char *end;
    errno = 0;
    long a = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != ':' || a < 1)
        return false;
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (errno != 0 || end == p || *end != '\0' || b < a)
        return false;
    *first = a - 1;
    *last = b - 1;
    return true;
}

/* A string key whose value is one of choices (NULL-terminated; the first is the default) into buf. */
static bool get_choice(const struct dahlsim_where *w, const cJSON *o, const char *key, char *buf, size_t size,
                       const char *const *choices, const char *expected)
{
    if (!dahlsim_field_string(w, o, key, choices[0], buf, size, expected))
        return false;
    for (size_t i = 0; choices[i] != NULL; i++)
        if (strcmp(buf, choices[i]) == 0)
            return true;
    dahlsim_field_error(w, key, cJSON_GetObjectItemCaseSensitive(o, key), expected);
    return false;
}

/* The machine's name, the model, the dataset and the sizes. */
static bool what_from(const struct dahlsim_where *w, const char *scenario_dir, const cJSON *o, struct dahlsim_experiment *x)
{
    /* With node groups, the experiment's machine is the first group's (the others: dahlsim_scenario_nodes.c). */
    const cJSON *group0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "node_groups"), 0);
    const cJSON *machine0 = cJSON_GetObjectItemCaseSensitive(group0, "machine");
    const char *dflt = cJSON_IsString(machine0) && cJSON_GetObjectItemCaseSensitive(o, "machine") == NULL
                           ? machine0->valuestring
                           : NULL;
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(o, "node_groups");
    if (groups != NULL && dflt == NULL && cJSON_GetObjectItemCaseSensitive(o, "machine") == NULL) {
        dahlsim_field_error(w, "node_groups", groups, "an array of 1 to 8 node groups {\"machine\": NAME, \"count\": N, "
                                                      "\"share\": SAMPLES} (the first one's machine a name)");
        return false;
    }
    if (!dahlsim_field_string(w, o, "machine", dflt, x->machine, sizeof(x->machine), "a calibrated machine's name"))
        return false;
    if (!dahlsim_machine_name_valid(x->machine)) {
        dahlsim_field_error(w, "machine", cJSON_GetObjectItemCaseSensitive(o, "machine"),
                    "a machine name (letters, digits, '.', '_', '-')");
        return false;
    }
    if (snprintf(x->machine_dir, sizeof(x->machine_dir), "%s/%s", dahlsim_calibration_root(), x->machine) >=
        (int)sizeof(x->machine_dir)) {
        dahlsim_error("%s: DAHLSIM_HOME is too long", w->path);
        return false;
    }
    char model[PATH_MAX];
    if (!dahlsim_field_string(w, o, "model", "lenet", model, sizeof(model),
                              "lenet, vgg-small, resnet:DEPTH, deep, deep:N or a model file"))
        return false;
    if (dahl_network_desc_is_named(model) || model[0] == '/')
        snprintf(x->model, sizeof(x->model), "%s", model);
    else if (snprintf(x->model, sizeof(x->model), "%s/%s", scenario_dir, model) >= (int)sizeof(x->model)) {
        dahlsim_field_error(w, "model", cJSON_GetObjectItemCaseSensitive(o, "model"), "a shorter path");
        return false;
    }
    if (!dahlsim_field_string(w, o, "dataset", "fashion-mnist", x->dataset, sizeof(x->dataset), DAHL_DATASET_NAMES))
        return false;
    struct dahl_dataset_name data;
    if (!dahl_dataset_name_parse(x->dataset, &data)) {
        dahlsim_field_error(w, "dataset", cJSON_GetObjectItemCaseSensitive(o, "dataset"), DAHL_DATASET_NAMES);
        return false;
    }
    bool synthetic = data.source == DAHL_DATASET_SYNTHETIC;
    long train_max = data.source == DAHL_DATASET_CIFAR10 ? 50000 : 60000;
    long iterations;
    if (!dahlsim_field_int(w, o, "batch", 1, 65536, 32, &x->batch) ||
        !dahlsim_field_int(w, o, "samples", 1, 100000000, synthetic ? 1024 : train_max, &x->samples) ||
        !dahlsim_field_int(w, o, "iterations", 1, 100000000, 0, &iterations) ||
        !dahlsim_field_int(w, o, "epochs", 1, 100000, 1, &x->epochs))
        return false;
    if (iterations > 0) {
        if (cJSON_GetObjectItemCaseSensitive(o, "samples") != NULL) {
            dahlsim_field_error(w, "iterations", cJSON_GetObjectItemCaseSensitive(o, "iterations"),
                        "either \"samples\" or \"iterations\", not both");
            return false;
        }
        x->samples = iterations * x->batch;
    }
    if (!synthetic && x->samples > train_max) {
        char expected[96];
        snprintf(expected, sizeof(expected), "at most the %ld training samples of %s", train_max,
                 data.source == DAHL_DATASET_CIFAR10 ? "cifar10" : "fashion-mnist");
        dahlsim_field_error(w, "samples", cJSON_GetObjectItemCaseSensitive(o, "samples"), expected);
        return false;
    }
    if (x->batch > x->samples) {
        char expected[96];
        snprintf(expected, sizeof(expected), "at most the %ld training samples", x->samples);
        dahlsim_field_error(w, "batch", cJSON_GetObjectItemCaseSensitive(o, "batch"), expected);
        return false;
    }
    return true;
}

/* "grain": samples per layer task, an integer in [1, limit], "batch" (-1) or "auto" (0). */
static bool grain_value(const struct dahlsim_where *w, const cJSON *o, long limit, long *out)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "grain");
    *out = 1;
    if (g == NULL)
        return true;
    if (cJSON_IsString(g) && (strcmp(g->valuestring, "batch") == 0 || strcmp(g->valuestring, "auto") == 0)) {
        *out = strcmp(g->valuestring, "batch") == 0 ? -1 : 0;
        return true;
    }
    if (cJSON_IsNumber(g) && g->valuedouble >= 1 && g->valuedouble <= (double)limit && g->valuedouble == floor(g->valuedouble)) {
        *out = (long)g->valuedouble;
        return true;
    }
    char expected[128];
    snprintf(expected, sizeof(expected), "a number of samples per layer task in [1, %ld] (the batch), \"batch\" or \"auto\"",
             limit);
    dahlsim_field_error(w, "grain", g, expected);
    return false;
}

/* "grain": "auto" for x, whose batch per node is limit: the candidates its calibration covers, the one
 * dahlsim_grain_auto predicts fastest into x->grain, and its account into x->grain_choice. */
static bool grain_auto(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x, const cJSON *manifest,
                       long limit)
{
    long candidates[DAHLSIM_GRAIN_MAX_CANDIDATES];
    int n = 0;
    for (long g = 1; n < DAHLSIM_GRAIN_MAX_CANDIDATES - 1; g = g < limit && 2 * g > limit ? limit : 2 * g) {
        if (dahlsim_grain_uncovered(manifest, x, g, limit) == 0)
            candidates[n++] = g;
        if (g == limit)
            break;
    }
    char err[PATH_MAX + 256];
    if (dahlsim_grain_auto(x, limit, candidates, n, &x->grain, x->grain_choice, sizeof(x->grain_choice), err,
                           sizeof(err)) != 0) {
        char expected[PATH_MAX + 320];
        snprintf(expected, sizeof(expected), "a grain the machine's perf models can predict (%s)", err);
        dahlsim_field_error(w, "grain", cJSON_GetObjectItemCaseSensitive(o, "grain"), expected);
        return false;
    }
    return true;
}

/* Whether the machine covers the task sizes grain x->grain gives a network of x's dataset and model trained
 * on `batch` samples per step: the grain and the last group's rest. False after the error line and the hint
 * (machine synth for a roofline machine, calibrate for a measured one). */
static bool grain_sizes_covered(const struct dahlsim_where *w, const cJSON *o, const struct dahlsim_experiment *x,
                                const cJSON *manifest, long batch)
{
    long sizes[2];
    dahlsim_grain_task_sizes(x->grain, batch, sizes);
    const long g = sizes[0];
    long missing = dahlsim_grain_uncovered(manifest, x, x->grain, batch);
    if (missing > 0) {
        char expected[512];
        snprintf(expected, sizeof(expected),
                 "grains calibration %s covers: it has no tasks over %ld samples for %s/%.64s/%s", x->machine,
                 missing, x->dataset, x->model, x->perfmodel);
        dahlsim_field_error(w, "grain", cJSON_GetObjectItemCaseSensitive(o, "grain"), expected);
        const cJSON *source = cJSON_GetObjectItemCaseSensitive(manifest, "source");
        if (cJSON_IsString(source) && strcmp(source->valuestring, "roofline") == 0)
            fprintf(stderr, "hint: a synthesized machine: dahlsim machine synth SPEC --machine %s --cover %s,grains=%ld\n",
                    x->machine, x->dataset, g);
        else
            fprintf(stderr, "hint: dahlsim calibrate --machine %s --cover %s,grain=%ld --batch %ld\n", x->machine,
                    x->dataset, g, batch);
        return false;
    }
    return true;
}

/* "grain", once the batch per node and the jobs are known: at most the batch each network trains on, and
 * (one job) tasks of the sizes it gives covered by the machine's calibration. */
static bool grain_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x, const cJSON *manifest)
{
    long limit = dahlsim_scenario_min_share(x);
    for (long j = 0; j < x->njobs; j++)
        if (x->jobs[j].batch < limit || j == 0)
            limit = x->jobs[j].batch;
    if (!grain_value(w, o, limit, &x->grain))
        return false;
    if (x->grain == 0 && x->njobs > 0) {
        dahlsim_field_error(w, "grain", cJSON_GetObjectItemCaseSensitive(o, "grain"),
                    "a number of samples or \"batch\" with workloads (\"auto\" chooses for one job)");
        return false;
    }
    if (x->grain == 0 && !grain_auto(w, o, x, manifest, limit))
        return false;
    if (manifest == NULL)
        return true;
    /* one network, or one per job (each its own dataset, model and batch) */
    static struct dahlsim_experiment net;
    for (long j = 0; j < (x->njobs > 0 ? x->njobs : 1); j++) {
        net = *x;
        long batch = limit;
        if (x->njobs > 0) {
            snprintf(net.dataset, sizeof(net.dataset), "%s", x->jobs[j].dataset);
            snprintf(net.model, sizeof(net.model), "%s", x->jobs[j].model);
            batch = x->jobs[j].batch;
        }
        if (!grain_sizes_covered(w, o, &net, manifest, batch))
            return false;
    }
    return true;
}

/* "pipeline_depth" and "pipeline_schedule" (issue 21), once nodes and jobs are known: one node, one job. */
static bool pipeline_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    static const char *const schedules[] = {"fill", "1f1b", NULL};
    if (!dahlsim_field_int(w, o, "pipeline_depth", 1, 64, 1, &x->pipeline_depth) ||
        !get_choice(w, o, "pipeline_schedule", x->pipeline_schedule, sizeof(x->pipeline_schedule), schedules,
                    "fill or 1f1b"))
        return false;
    if (x->pipeline_depth > 1 && (x->nodes > 0 || x->njobs > 0)) {
        dahlsim_field_error(w, "pipeline_depth", cJSON_GetObjectItemCaseSensitive(o, "pipeline_depth"),
                    "1 with \"nodes\" or \"workloads\" (a pipeline runs on one node, for one job)");
        return false;
    }
    return true;
}

/* Whether calibration/NAME's platform gives its hosts power figures (SimGrid's wattage_per_state). */
static bool platform_has_watts(const char *machine_dir, const char *machine)
{
    char path[PATH_MAX + 192];
    snprintf(path, sizeof(path), "%s/sampling/bus/%s.platform.v4.xml", machine_dir, machine);
    char *xml = dahlsim_read_text(path, SIZE_MAX);
    bool has = xml != NULL && strstr(xml, "wattage_per_state") != NULL;
    free(xml);
    return has;
}

/* "sched_gamma": the energy-aware placement of StarPU's dm* policies, on every node's machine's watts. */
static bool gamma_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    if (!dahlsim_field_number(w, o, "sched_gamma", 0, 1e12, 0, &x->sched_gamma))
        return false;
    if (x->sched_gamma == 0)
        return true;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "sched_gamma");
    if (strncmp(x->scheduler, "dm", 2) != 0) {
        char expected[160];
        snprintf(expected, sizeof(expected), "0 with scheduler %s (only the dm* policies weigh energy)", x->scheduler);
        dahlsim_field_error(w, "sched_gamma", item, expected);
        return false;
    }
    for (long g = 0; g < (x->ngroups > 0 ? x->ngroups : 1); g++) {
        char dir[PATH_MAX];
        if (x->ngroups == 0 || dahlsim_node_group_dir(x, &x->groups[g], dir, sizeof(dir)) != 0)
            snprintf(dir, sizeof(dir), "%s", x->machine_dir);
        const char *name = x->ngroups > 0 ? x->groups[g].machine : x->machine;
        if (!platform_has_watts(dir, name)) {
            char expected[200];
            snprintf(expected, sizeof(expected), "0 on machine %s, whose platform has no power figures", name);
            dahlsim_field_error(w, "sched_gamma", item, expected);
            fprintf(stderr, "hint: give its spec cpu.idle_w/full_w (and gpu's) and synthesize it again\n");
            return false;
        }
    }
    return true;
}

/* "steady_state": false, true, or {"warmup": K, "tolerance": X}; single-node runs of one job only (the other
 * runs' ranks or jobs would have to agree on when to stop). */
#define STEADY_WARMUP 16
#define STEADY_TOLERANCE 0.001
static bool steady_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "steady_state");
    x->steady_warmup = 0;
    x->steady_tolerance = 0;
    if (item == NULL || cJSON_IsFalse(item))
        return true;
    const char *expected = "false, true, or {\"warmup\": integer in [0, 10000], \"tolerance\": number in (0, 0.1]}";
    long warmup = STEADY_WARMUP;
    double tolerance = STEADY_TOLERANCE;
    if (cJSON_IsObject(item)) {
        const cJSON *k;
        cJSON_ArrayForEach(k, item)
        {
            bool ok = strcmp(k->string, "warmup") == 0
                          ? cJSON_IsNumber(k) && k->valuedouble == floor(k->valuedouble) && k->valuedouble >= 0 &&
                                k->valuedouble <= 10000
                      : strcmp(k->string, "tolerance") == 0
                          ? cJSON_IsNumber(k) && k->valuedouble > 0 && k->valuedouble <= 0.1
                          : false;
            if (!ok) {
                char field[64];
                snprintf(field, sizeof(field), "steady_state.%.40s", k->string);
                dahlsim_field_error(w, field, k,
                                    strcmp(k->string, "warmup") == 0      ? "an integer in [0, 10000]"
                                    : strcmp(k->string, "tolerance") == 0 ? "a number in (0, 0.1]"
                                                                          : "no key of that name (only warmup and tolerance)");
                return false;
            }
            if (strcmp(k->string, "warmup") == 0)
                warmup = (long)k->valuedouble;
            else
                tolerance = k->valuedouble;
        }
    } else if (!cJSON_IsTrue(item)) {
        dahlsim_field_error(w, "steady_state", item, expected);
        return false;
    }
    if (x->nodes > 0 || x->njobs > 0) {
        dahlsim_field_error(w, "steady_state", item,
                            x->nodes > 0 ? "false with nodes (only single-node runs extrapolate their steps)"
                                         : "false with workloads (only one job extrapolates its steps)");
        return false;
    }
    x->steady_warmup = warmup;
    x->steady_tolerance = tolerance;
    return true;
}

/* How it trains: the scheduler, perf models, reduction, costs, prefetch, memory and the learning. */
static bool how_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    if (!dahlsim_field_string(w, o, "scheduler", "lws", x->scheduler, sizeof(x->scheduler), "a StarPU scheduling policy"))
        return false;
    char expected_sched[1400];
    if (!dahlsim_scheduler_value(x->scheduler, NULL, 0, NULL, 0, expected_sched, sizeof(expected_sched))) {
        dahlsim_field_error(w, "scheduler", cJSON_GetObjectItemCaseSensitive(o, "scheduler"), expected_sched);
        dahlsim_scheduler_hint(x->scheduler);
        return false;
    }
    static const char *const perfmodels[] = {"history", "regression", "nl-regression", NULL};
    static const char *const reductions[] = {"redux", "manual", NULL};
    static const char *const costs[] = {"measured", "starpu", NULL};
    if (!get_choice(w, o, "perfmodel", x->perfmodel, sizeof(x->perfmodel), perfmodels,
                    "history, regression or nl-regression") ||
        !get_choice(w, o, "reduction", x->reduction, sizeof(x->reduction), reductions, "redux or manual") ||
        !get_choice(w, o, "runtime_costs", x->runtime_costs, sizeof(x->runtime_costs), costs, "measured or starpu"))
        return false;
    const cJSON *prefetch = cJSON_GetObjectItemCaseSensitive(o, "prefetch");
    if (prefetch != NULL && !cJSON_IsBool(prefetch)) {
        dahlsim_field_error(w, "prefetch", prefetch, "true or false");
        return false;
    }
    x->prefetch = prefetch == NULL || cJSON_IsTrue(prefetch);
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(o, "gpu_memory_mib");
    if (mem != NULL && !cJSON_IsNull(mem) && !dahlsim_field_int(w, o, "gpu_memory_mib", 1, 10000000, 0, &x->gpu_memory_mib))
        return false;
    if (!dahlsim_field_int(w, o, "seed", 0, 9007199254740992L, 1, &x->seed) ||
        !dahlsim_field_number(w, o, "lr", 1e-12, 100, 0.01, &x->lr) || !dahlsim_field_number(w, o, "momentum", 0, 0.999999, 0.9, &x->momentum))
        return false;
    return true;
}

/* "trace" and "trace_window". */
static bool trace_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    const cJSON *trace = cJSON_GetObjectItemCaseSensitive(o, "trace");
    if (trace != NULL && !cJSON_IsBool(trace)) {
        dahlsim_field_error(w, "trace", trace, "true or false");
        return false;
    }
    x->trace = cJSON_IsTrue(trace);
    x->trace_first = x->trace_last = -1;
    const cJSON *window = cJSON_GetObjectItemCaseSensitive(o, "trace_window");
    if (window != NULL && !cJSON_IsNull(window)) {
        long first, last;
        if (!cJSON_IsString(window) || !parse_window(window->valuestring, &first, &last)) {
            dahlsim_field_error(w, "trace_window", window, "\"START:END\", training steps from 1 with START <= END");
            return false;
        }
        long steps = x->samples / x->batch * x->epochs;
        if (last >= steps) {
            char expected[128];
            snprintf(expected, sizeof(expected), "a window within the run's %ld training steps", steps);
            dahlsim_field_error(w, "trace_window", window, expected);
            return false;
        }
        x->trace = true;
        x->trace_first = first;
        x->trace_last = last;
    }
    return true;
}

/* Point o into x, which comes zeroed (calloc'd with the scenario's points: no memset, which would touch every
 * page of its 33 KB where most points need a few). */
static bool experiment_from(const struct dahlsim_where *w, const char *scenario_dir, const cJSON *o,
                            struct dahlsim_experiment *x)
{
    snprintf(x->point, sizeof(x->point), "%s", w->point);
    if (!what_from(w, scenario_dir, o, x) || !how_from(w, o, x) || !trace_from(w, o, x) ||
        !dahlsim_scenario_machine_checks(w, o, x) || !dahlsim_scenario_nodes_from(w, o, x) ||
        !dahlsim_workloads_from(w->path, w->point, scenario_dir, o, x))
        return false;
    /* Read again: node groups read their own machines' manifests since (the cache keeps the last one). */
    char manifest_path[PATH_MAX + 32];
    snprintf(manifest_path, sizeof(manifest_path), "%s/manifest.json", x->machine_dir);
    return grain_from(w, o, x, dahlsim_scenario_manifest(manifest_path)) && pipeline_from(w, o, x) && gamma_from(w, o, x) &&
           steady_from(w, o, x);
}

/* ---- the file ------------------------------------------------------------------------------------------ */

/* Applies "key=value" to o: value as JSON when it parses, else as a string. */
static bool apply_set(const char *path, cJSON *o, const char *set)
{
    const char *eq = strchr(set, '=');
    if (eq == NULL || eq == set) {
        dahlsim_error("%s: --set %s: expected key=value", path, set);
        return false;
    }
    char key[64];
    snprintf(key, sizeof(key), "%.*s", (int)(eq - set), set);
    if (!key_known(key) || strcmp(key, "sweep") == 0 || strcmp(key, "comment") == 0) {
        char list[512];
        expected_keys(list, sizeof(list));
        dahlsim_error("%s: --set %s: unknown key \"%s\" (expected one of %s; not sweep or comment)", path, set, key,
                      list);
        return false;
    }
    /* The whole value must be JSON: cJSON_Parse alone reads "2:40" as 2 and ignores the rest. */
    cJSON *value = cJSON_ParseWithOpts(eq + 1, NULL, 1);
    if (value == NULL)
        value = cJSON_CreateString(eq + 1);
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    cJSON_AddItemToObject(o, key, value);
    return true;
}

static void point_label(const struct dahlsim_scenario *s, const size_t *idx, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < s->nsweep && used < size; k++) {
        char *v = cJSON_PrintUnformatted(cJSON_GetArrayItem(s->sweep_values[k], (int)idx[k]));
        const char *text = v != NULL ? v : "?";
        size_t len = strlen(text);
        bool quoted = len >= 2 && text[0] == '"';
        used += (size_t)snprintf(buf + used, size - used, "%s%s=%.*s", k ? " " : "", s->sweep_keys[k],
                                 (int)(quoted ? len - 2 : len), quoted ? text + 1 : text);
        free(v);
    }
}

struct dahlsim_scenario *dahlsim_scenario_load(const char *path, const char *const *sets, size_t nsets)
{
    cJSON *root;
    char why[160];
    int ret = dahlsim_json_load(path, SIZE_MAX, &root, why, sizeof(why));
    if (ret != 0) {
        dahlsim_error("%s: %s", path, why);
        if (ret != -EINVAL)
            fprintf(stderr, "hint: scenario files are in scenarios/ (see scenarios/README.md)\n");
        return NULL;
    }
    return dahlsim_scenario_from_json(path, root, sets, nsets);
}

struct dahlsim_scenario *dahlsim_scenario_from_json(const char *path, cJSON *root, const char *const *sets,
                                                    size_t nsets)
{
    struct dahlsim_scenario *s = calloc(1, sizeof(*s));
    if (s == NULL || !cJSON_IsObject(root)) {
        if (s != NULL)
            dahlsim_error("%s: expected a JSON object of scenario keys", path);
        cJSON_Delete(root);
        free(s);
        return NULL;
    }
    snprintf(s->path, sizeof(s->path), "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(s->dir, sizeof(s->dir), ".");
    else
        snprintf(s->dir, sizeof(s->dir), "%.*s", (int)(slash - path), path);
    s->base = root;
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (!key_known(item->string)) {
            char list[512];
            expected_keys(list, sizeof(list));
            dahlsim_error("%s: unknown key \"%s\" (expected one of %s)", path, item->string, list);
            goto fail;
        }
    }
    const cJSON *comment = cJSON_GetObjectItemCaseSensitive(root, "comment");
    if (comment != NULL) {
        if (!cJSON_IsString(comment)) {
            struct dahlsim_where w = {path, ""};
            dahlsim_field_error(&w, "comment", comment, "a string");
            goto fail;
        }
        snprintf(s->comment, sizeof(s->comment), "%s", comment->valuestring);
    }
    s->sweep = cJSON_DetachItemFromObjectCaseSensitive(root, "sweep");
    cJSON_DeleteItemFromObjectCaseSensitive(root, "comment");
    for (size_t i = 0; i < nsets; i++) {
        if (!apply_set(path, root, sets[i]))
            goto fail;
        /* A key fixed on the command line is no longer swept (so `run --set` picks one point of a sweep). */
        if (cJSON_IsObject(s->sweep)) {
            char key[64];
            snprintf(key, sizeof(key), "%.*s", (int)(strchr(sets[i], '=') - sets[i]), sets[i]);
            cJSON_DeleteItemFromObjectCaseSensitive(s->sweep, key);
            if (s->sweep->child == NULL) {
                cJSON_Delete(s->sweep);
                s->sweep = NULL;
            }
        }
    }
    if (s->sweep != NULL) {
        if (!cJSON_IsObject(s->sweep) || cJSON_GetArraySize(s->sweep) == 0) {
            struct dahlsim_where w = {path, ""};
            dahlsim_field_error(&w, "sweep", s->sweep, "an object of key: [values...]");
            goto fail;
        }
        cJSON_ArrayForEach(item, s->sweep)
        {
            if (!key_known(item->string) || strcmp(item->string, "sweep") == 0 || strcmp(item->string, "comment") == 0) {
                dahlsim_error("%s: \"sweep\": unknown key \"%s\" (a sweep varies scenario keys)", path, item->string);
                goto fail;
            }
            if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) == 0) {
                char where_key[80];
                snprintf(where_key, sizeof(where_key), "sweep.%s", item->string);
                struct dahlsim_where w = {path, ""};
                dahlsim_field_error(&w, where_key, item, "a non-empty array of values");
                goto fail;
            }
            if (s->nsweep == DAHLSIM_SCENARIO_MAX_SWEEP) {
                dahlsim_error("%s: \"sweep\": at most %d keys", path, DAHLSIM_SCENARIO_MAX_SWEEP);
                goto fail;
            }
            s->sweep_keys[s->nsweep] = item->string;
            s->sweep_values[s->nsweep++] = item;
        }
    }
    s->npoints = 1;
    for (size_t k = 0; k < s->nsweep; k++) {
        s->npoints *= (size_t)cJSON_GetArraySize(s->sweep_values[k]);
        if (s->npoints > MAX_POINTS) {
            dahlsim_error("%s: \"sweep\": more than %d points", path, MAX_POINTS);
            goto fail;
        }
    }
    s->points = calloc(s->npoints, sizeof(*s->points));
    if (s->points == NULL) {
        dahlsim_error("out of memory");
        goto fail;
    }
    size_t idx[DAHLSIM_SCENARIO_MAX_SWEEP] = {0};
    for (size_t p = 0; p < s->npoints; p++) {
        /* idx: point p in mixed radix, the last key fastest */
        size_t rest = p;
        for (size_t k = s->nsweep; k-- > 0;) {
            size_t n = (size_t)cJSON_GetArraySize(s->sweep_values[k]);
            idx[k] = rest % n;
            rest /= n;
        }
        cJSON *o = cJSON_Duplicate(root, true);
        for (size_t k = 0; k < s->nsweep; k++) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, s->sweep_keys[k]);
            cJSON_AddItemToObject(o, s->sweep_keys[k],
                                  cJSON_Duplicate(cJSON_GetArrayItem(s->sweep_values[k], (int)idx[k]), true));
        }
        char label[512];
        point_label(s, idx, label, sizeof(label));
        struct dahlsim_where w = {path, label};
        bool ok = o != NULL && experiment_from(&w, s->dir, o, &s->points[p]);
        cJSON_Delete(o);
        if (!ok)
            goto fail;
    }
    return s;
fail:
    dahlsim_scenario_destroy(s);
    return NULL;
}

void dahlsim_scenario_destroy(struct dahlsim_scenario *s)
{
    if (s == NULL)
        return;
    cJSON_Delete(s->base);
    cJSON_Delete(s->sweep);
    free(s->points);
    free(s);
}

const char *dahlsim_scenario_comment(const struct dahlsim_scenario *s)
{
    return s->comment;
}

const char *dahlsim_scenario_path(const struct dahlsim_scenario *s)
{
    return s->path;
}

size_t dahlsim_scenario_points(const struct dahlsim_scenario *s)
{
    return s->npoints;
}

const struct dahlsim_experiment *dahlsim_scenario_point(const struct dahlsim_scenario *s, size_t i)
{
    return i < s->npoints ? &s->points[i] : NULL;
}

const char *const *dahlsim_scenario_sweep_keys(const struct dahlsim_scenario *s, size_t *n)
{
    *n = s->nsweep;
    return s->sweep_keys;
}

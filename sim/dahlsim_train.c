/* `dahlsim train`: trains a CNN natively, every layer of every sample a StarPU task, and reports per-epoch
 * loss and accuracy on stdout and, with --out DIR, DIR/results.json (the schema simulated runs share, see
 * dahlsim_results.c). Models: LeNet-5-like, a deeper variant, or layers described in a JSON file.
 * Native only: the SimGrid binary refuses it.
 *
 * `dahlsim-sim sim-train` (hidden; started by the native front end with STARPU_HOSTNAME and
 * STARPU_PERF_MODEL_DIR set): the same program, the same options and the same task graph, replayed by
 * StarPU-SimGrid. No kernel runs and no pixel exists (shape-only data, folded tensors), so there is no
 * loss, accuracy or evaluation: epochs report only their simulated time, and results.json says "simulated". */
#include "dahlsim_cli.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_fs.h"
#include "dahlsim_nodes.h"
#include "dahlsim_proc.h"
#include "dahlsim_results.h"
#include "dahlsim_trace.h"

#include "dahl_codelets.h"
#include "dahl_dataset.h"
#include "dahl_engine.h"
#include "dahl_kernels.h"
#include "dahl_network.h"
#include "dahl_profile.h"
#include "dahl_sched.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NCLASSES 10
#define DEEP_BLOCKS 3 /* --model deep */
#define DEEP_WIDTH 8  /* filters of the first deep block, doubled at each block */
#define SEED_MAX 9007199254740992L /* 2^53: results.json stores the seed as a JSON number */

struct train_opts {
    const char *dataset;
    int syn_h, syn_w, syn_c; /* synthetic:HxWxC; 0 for fashion-mnist */
    long epochs, samples, test_samples, batch, ncpu, ngpu, seed;
    double lr, momentum;
    const char *sched;
    const char *priorities;  /* --sched heteroprio: FILE or auto:HEURISTIC (dahlsim_dag.h) */
    long priority_interval;
    const char *model;
    enum dahl_reduction reduction;
    enum dahl_perfmodel_kind perfmodel;
    const char *out;
    const char *scenario; /* sim-train --scenario: recorded in results.json */
    bool quiet;
    bool trace;                   /* --trace: OUT/trace (dahlsim_trace.h) */
    long trace_first, trace_last; /* --trace-window, 0-based steps; -1: all */
    bool trace_per_node;          /* hidden --trace-per-node (dahlsim run, multi-node): OUT/trace/node-RANK */
    double submit_us_per_task, input_copy_bytes_per_s; /* hidden --submit-cost (dahlsim run): see
                                                          dahl_engine_conf; 0: StarPU-SimGrid's own */
    double sched_push_us; /* hidden --sched-cost (dahlsim run): see dahl_engine_conf; 0: none */
    double worker_us;     /* hidden --worker-cost (dahlsim run, calibrate): see dahl_engine_conf; < 0: none */
};

static const char usage_line[] =
    "usage: dahlsim train [--dataset fashion-mnist|synthetic:HxWxC] [--epochs N] [--samples N] [--test-samples N]\n"
    "                     [--batch N] [--lr X] [--momentum X] [--sched POLICY] [--ncpu N] [--ngpu N] [--seed N]\n"
    "                     [--model lenet|deep|deep:BLOCKS|FILE.json] [--reduction redux|manual]\n"
    "                     [--perfmodel history|regression|nl-regression] [--out DIR] [--quiet]\n"
    "                     [--trace] [--trace-window START:END]\n";

static void help(void)
{
    fputs(usage_line, stdout);
    printf("\nTrains a CNN natively: every layer of every sample is a StarPU task, gradients are reduced through\n"
           "StarPU. Prints one line per epoch (mean loss, train and test accuracy, training time); with --out DIR,\n"
           "writes DIR/results.json in the schema simulated runs use.\n\n"
           "options:\n"
           "  --dataset D        fashion-mnist (Debian's dataset-fashion-mnist package, in %s)\n"
           "                     or synthetic:HxWxC, e.g. synthetic:28x28x3 (10 learnable classes); default\n"
           "                     fashion-mnist\n"
           "  --epochs N         passes over the training samples (default 1)\n"
           "  --samples N        training samples (default: all 60000 of fashion-mnist; 1024 synthetic)\n"
           "  --test-samples N   test samples (default 10000; 256 synthetic, held out from the same classes)\n"
           "  --batch N          samples per SGD step (default 32); a last partial batch is not trained on\n"
           "  --lr X             learning rate (default 0.01); the gradient is the batch mean\n"
           "  --momentum X       SGD momentum in [0, 1) (default 0.9)\n"
           "  --sched POLICY     StarPU scheduling policy (default lws)\n"
           "  --priorities P     with --sched heteroprio: FILE ({\"cpu\": [...], \"gpu\": [...]} of perf-model\n"
           "                     symbols) or auto:HEURISTIC (AutoHeteroprio: prws, purws, offset, softplus,\n"
           "                     interpolation, ntc); auto:HEURISTIC/footprint: one bucket per perf-model\n"
           "                     symbol and footprint (layer shape) instead of one per symbol\n"
           "  --priority-interval N  auto: recompute the priorities every N pushed tasks (default 32)\n"
           "  --ncpu N           CPU workers (default: all cores)\n"
           "  --ngpu N           CUDA workers (default 0; needs a StarPU built with CUDA)\n"
           "  --seed N           weight initialisation and synthetic data (default 1)\n"
           "  --model M          lenet (default), deep (%d conv blocks), deep:BLOCKS, or a JSON file:\n"
           "                     {\"layers\": [{\"type\": \"conv\", \"filters\": 6, \"kernel\": 5, \"stride\": 1, \"pad\": 2},\n"
           "                      {\"type\": \"relu\"}, {\"type\": \"maxpool\", \"kernel\": 2, \"stride\": 2},\n"
           "                      {\"type\": \"dense\", \"units\": 10}]}  (the last layer gives the 10 classes)\n"
           "  --reduction R      redux (StarPU's REDUX, default) or manual (a tree of additions, reproducible)\n"
           "  --perfmodel K      history (default), regression or nl-regression: how StarPU models task times\n"
           "  --out DIR          create DIR and write DIR/results.json\n"
           "  --quiet            no progress line\n"
           "  --trace            with --out DIR: write DIR/trace/ (Paje traces: dahl.paje and StarPU's FxT trace\n"
           "                     in starpu/, Chrome trace.json, gantt.png and gantt.svg, summary.json and .txt)\n"
           "  --trace-window S:E trace training steps S to E only (counted from 1, over all epochs)\n"
           "\nStarPU's own environment (STARPU_HOME, STARPU_SILENT, ...) is respected.\n",
           DAHL_FASHION_MNIST_DIR, DEEP_BLOCKS);
    char list[1024];
    dahl_sched_policy_list(list, sizeof(list));
    printf("\nscheduling policies (--sched, and a scenario's \"scheduler\"): %s\n", list);
}

/* ---- option values ----------------------------------------------------------------------------------- */

/* Parses "HxWxC" strictly into positive sizes. */
static bool parse_shape(const char *text, int *h, int *w, int *c)
{
    long v[3];
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (*p < '0' || *p > '9')
            return false;
        errno = 0;
        v[i] = strtol(p, &end, 10);
        if (errno != 0 || v[i] < 1 || v[i] > 4096 || (i < 2 ? *end != 'x' : *end != '\0'))
            return false;
        p = end + (i < 2);
    }
    *h = (int)v[0];
    *w = (int)v[1];
    *c = (int)v[2];
    return true;
}

static bool parse_dataset(const char *text, struct train_opts *o)
{
    o->dataset = text;
    o->syn_h = o->syn_w = o->syn_c = 0;
    if (strcmp(text, "fashion-mnist") == 0)
        return true;
    if (strncmp(text, "synthetic:", 10) == 0 && parse_shape(text + 10, &o->syn_h, &o->syn_w, &o->syn_c) &&
        o->syn_c <= 64)
        return true;
    dahlsim_error("--dataset: expected fashion-mnist or synthetic:HxWxC with sizes in [1, 4096] (C <= 64), "
                  "e.g. synthetic:28x28x3, got \"%s\"",
                  text);
    return false;
}

static bool parse_positive_double(const char *option, const char *text, double max, double *out)
{
    if (!dahlsim_parse_double(option, text, 0, max, out))
        return false;
    if (*out <= 0) {
        dahlsim_error("%s: expected a positive number, got \"%s\"", option, text);
        return false;
    }
    return true;
}

/* --submit-cost US_PER_TASK,BYTES_PER_S: the submitting thread's measured cost (dahlsim_calibrate.h), which
 * only a simulation charges. */
static bool parse_submit_cost(const char *text, struct train_opts *o)
{
    char *end;
    errno = 0;
    o->submit_us_per_task = strtod(text, &end);
    bool ok = errno == 0 && end != text && *end == ',' && o->submit_us_per_task > 0 && o->submit_us_per_task < 1e6;
    if (ok) {
        const char *rate = end + 1;
        o->input_copy_bytes_per_s = strtod(rate, &end);
        ok = errno == 0 && end != rate && *end == '\0' && o->input_copy_bytes_per_s > 0 && isfinite(o->input_copy_bytes_per_s);
    }
    if (!ok) {
        dahlsim_error("--submit-cost: expected US_PER_TASK,BYTES_PER_S (two positive numbers), got \"%s\"", text);
        return false;
    }
    if (!dahl_engine_is_simulated()) {
        dahlsim_error("--submit-cost: only a simulation charges the submitting thread's cost; a native run pays it");
        return false;
    }
    return true;
}

/* --sched-cost US (the policy's measured cost per push) and --worker-cost US (the workers' measured cost per
 * task; 0 turns StarPU-SimGrid's own per-input cost off without charging anything, which calibrate measures
 * the simulation's remaining cost with): figures of dahlsim calibrate that only a simulation charges. */
static bool parse_sim_cost(const char *option, const char *text, double *out)
{
    if (!dahlsim_parse_double(option, text, 0, 1e6, out))
        return false;
    if (!dahl_engine_is_simulated()) {
        dahlsim_error("%s: only a simulation charges the runtime's measured costs; a native run pays them", option);
        return false;
    }
    return true;
}

/* Parses argv into o; returns -1 to go on, or an exit code. */
static int parse_options(int argc, char **argv, struct train_opts *o)
{
    enum { O_DATASET = 256, O_EPOCHS, O_SAMPLES, O_TEST_SAMPLES, O_BATCH, O_LR, O_MOMENTUM, O_SCHED, O_PRIORITIES, O_PRIORITY_INTERVAL, O_NCPU,
           O_NGPU, O_SEED, O_MODEL, O_REDUCTION, O_PERFMODEL, O_OUT, O_QUIET, O_HELP, O_SCENARIO, O_TRACE,
           O_TRACE_WINDOW, O_TRACE_PER_NODE, O_SUBMIT_COST, O_SCHED_COST, O_WORKER_COST };
    static const struct option options[] = {
        {"dataset", required_argument, NULL, O_DATASET},     {"epochs", required_argument, NULL, O_EPOCHS},
        {"samples", required_argument, NULL, O_SAMPLES},     {"test-samples", required_argument, NULL, O_TEST_SAMPLES},
        {"batch", required_argument, NULL, O_BATCH},         {"lr", required_argument, NULL, O_LR},
        {"momentum", required_argument, NULL, O_MOMENTUM},   {"sched", required_argument, NULL, O_SCHED},
        {"priorities", required_argument, NULL, O_PRIORITIES},
        {"priority-interval", required_argument, NULL, O_PRIORITY_INTERVAL},
        {"ncpu", required_argument, NULL, O_NCPU},           {"ngpu", required_argument, NULL, O_NGPU},
        {"seed", required_argument, NULL, O_SEED},           {"model", required_argument, NULL, O_MODEL},
        {"reduction", required_argument, NULL, O_REDUCTION}, {"perfmodel", required_argument, NULL, O_PERFMODEL},
        {"out", required_argument, NULL, O_OUT},             {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},                 {"scenario", required_argument, NULL, O_SCENARIO},
        {"trace", no_argument, NULL, O_TRACE},               {"trace-window", required_argument, NULL, O_TRACE_WINDOW},
        {"trace-per-node", no_argument, NULL, O_TRACE_PER_NODE},
        {"submit-cost", required_argument, NULL, O_SUBMIT_COST},
        {"sched-cost", required_argument, NULL, O_SCHED_COST},
        {"worker-cost", required_argument, NULL, O_WORKER_COST},
        {NULL, 0, NULL, 0},
    };
    *o = (struct train_opts){.dataset = "fashion-mnist", .epochs = 1, .samples = -1, .test_samples = -1,
                             .batch = 32, .ncpu = -1, .ngpu = 0, .seed = 1, .lr = 0.01, .momentum = 0.9,
                             .sched = "lws", .priority_interval = 32, .model = "lenet", .reduction = DAHL_REDUCTION_REDUX,
                             .perfmodel = DAHL_PERFMODEL_HISTORY, .trace_first = -1, .trace_last = -1,
                             .worker_us = -1};
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_DATASET:
            ok = parse_dataset(optarg, o);
            break;
        case O_EPOCHS:
            ok = dahlsim_parse_int("--epochs", optarg, 1, 100000, &o->epochs);
            break;
        case O_SAMPLES:
            ok = dahlsim_parse_int("--samples", optarg, 1, 10000000, &o->samples);
            break;
        case O_TEST_SAMPLES:
            ok = dahlsim_parse_int("--test-samples", optarg, 1, 10000000, &o->test_samples);
            break;
        case O_BATCH:
            ok = dahlsim_parse_int("--batch", optarg, 1, 65536, &o->batch);
            break;
        case O_LR:
            ok = parse_positive_double("--lr", optarg, 100, &o->lr);
            break;
        case O_MOMENTUM:
            ok = dahlsim_parse_double("--momentum", optarg, 0, 1, &o->momentum);
            if (ok && o->momentum >= 1) {
                dahlsim_error("--momentum: expected a number in [0, 1), got \"%s\"", optarg);
                ok = false;
            }
            break;
        case O_SCHED:
            o->sched = optarg;
            if (!dahl_sched_policy_known(optarg)) {
                dahlsim_error("--sched: expected a StarPU scheduling policy (lws, dmda, eager, ...), got \"%s\"",
                              optarg);
                dahlsim_scheduler_hint(optarg);
                ok = false;
            }
            break;
        case O_NCPU:
            ok = dahlsim_parse_int("--ncpu", optarg, 0, 1024, &o->ncpu);
            break;
        case O_NGPU:
            ok = dahlsim_parse_int("--ngpu", optarg, 0, 64, &o->ngpu);
            if (ok && o->ngpu > 0 && !dahl_engine_has_cuda()) {
                dahlsim_error("--ngpu: this dahlsim's StarPU was built without CUDA: expected 0, got \"%s\"", optarg);
                fprintf(stderr, "hint: rebuild StarPU with scripts/setup-deps --cuda on a machine with nvcc\n");
                ok = false;
            }
            break;
        case O_SEED:
            ok = dahlsim_parse_int("--seed", optarg, 0, SEED_MAX, &o->seed);
            break;
        case O_MODEL:
            o->model = optarg;
            break;
        case O_REDUCTION:
            if (strcmp(optarg, "redux") == 0) {
                o->reduction = DAHL_REDUCTION_REDUX;
            } else if (strcmp(optarg, "manual") == 0) {
                o->reduction = DAHL_REDUCTION_MANUAL;
            } else {
                dahlsim_error("--reduction: expected redux or manual, got \"%s\"", optarg);
                ok = false;
            }
            break;
        case O_PERFMODEL:
            if (dahl_perfmodel_kind_parse(optarg, &o->perfmodel) != 0) {
                dahlsim_error("--perfmodel: expected history, regression or nl-regression, got \"%s\"", optarg);
                ok = false;
            }
            break;
        case O_OUT:
            o->out = optarg;
            ok = dahlsim_parse_dir("--out", optarg);
            break;
        case O_PRIORITIES:
            o->priorities = optarg;
            break;
        case O_PRIORITY_INTERVAL:
            ok = dahlsim_parse_int("--priority-interval", optarg, 1, 1000000000, &o->priority_interval);
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_TRACE:
            o->trace = true;
            break;
        case O_TRACE_WINDOW:
            ok = dahlsim_trace_window_parse("--trace-window", optarg, &o->trace_first, &o->trace_last);
            o->trace = true;
            break;
        case O_TRACE_PER_NODE: /* hidden: set by dahlsim run for multi-node runs, which merges the nodes */
            o->trace_per_node = true;
            o->trace = true;
            break;
        case O_SCENARIO: /* hidden: set by dahlsim run for sim-train */
            o->scenario = optarg;
            break;
        case O_SUBMIT_COST: /* hidden: set by dahlsim run for sim-train, from the calibration's manifest */
            ok = parse_submit_cost(optarg, o);
            break;
        case O_SCHED_COST: /* hidden: set by dahlsim run for sim-train, from the calibration's manifest */
            ok = parse_sim_cost("--sched-cost", optarg, &o->sched_push_us);
            break;
        case O_WORKER_COST: /* hidden: set by dahlsim run for sim-train, from the calibration's manifest */
            ok = parse_sim_cost("--worker-cost", optarg, &o->worker_us);
            break;
        case O_HELP:
            help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("train", opt, argv, usage_line);
        }
        if (!ok)
            return DAHLSIM_EXIT_USAGE;
    }
    if (optind < argc)
        return dahlsim_unexpected_argument("train", argv[optind], usage_line);
    bool synthetic = o->syn_h > 0;
    if (o->samples < 0)
        o->samples = synthetic ? 1024 : 60000;
    if (o->test_samples < 0)
        o->test_samples = synthetic ? 256 : 10000;
    if (!synthetic && o->samples > 60000) {
        dahlsim_error("--samples: fashion-mnist has 60000 training samples, got %ld", o->samples);
        return DAHLSIM_EXIT_USAGE;
    }
    if (!synthetic && o->test_samples > 10000) {
        dahlsim_error("--test-samples: fashion-mnist has 10000 test samples, got %ld", o->test_samples);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->trace && o->out == NULL) {
        dahlsim_error("--trace: traces go to DIR/trace: expected --out DIR too");
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->trace_last >= 0 && o->trace_last >= o->samples / o->batch * o->epochs) {
        dahlsim_error("--trace-window: expected a window within the run's %ld training steps, got %ld:%ld",
                      o->samples / o->batch * o->epochs, o->trace_first + 1, o->trace_last + 1);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->batch > o->samples) {
        dahlsim_error("--batch: expected at most the %ld training samples (one full batch), got %ld", o->samples,
                      o->batch);
        return DAHLSIM_EXIT_USAGE;
    }
    return -1;
}

/* ---- the model ------------------------------------------------------------------------------------------ */

/* Reads layers[i].key as an integer in [min, max] into *out; absent: *out = dflt, or an error when dflt < 0. */
static bool layer_int(const char *path, int i, const cJSON *layer, const char *key, int min, int dflt, int *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(layer, key);
    if (item == NULL) {
        if (dflt >= 0) {
            *out = dflt;
            return true;
        }
        dahlsim_error("%s: layers[%d]: \"%s\" is missing", path, i, key);
        return false;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : -1;
    if (!cJSON_IsNumber(item) || v != (double)(int)v || v < min || v > 65536) {
        char *text = cJSON_PrintUnformatted(item);
        dahlsim_error("%s: layers[%d].%s: expected an integer in [%d, 65536], got %s", path, i, key, min,
                      text != NULL ? text : "?");
        free(text);
        return false;
    }
    *out = (int)v;
    return true;
}

/* Checks that layer i has only the keys "type" and those in allowed (NULL-terminated). */
static bool layer_keys(const char *path, int i, const cJSON *layer, const char *type, const char *const *allowed)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, layer)
    {
        bool known = strcmp(item->string, "type") == 0;
        for (size_t k = 0; !known && allowed[k] != NULL; k++)
            known = strcmp(item->string, allowed[k]) == 0;
        if (!known) {
            char expected[256] = "\"type\"";
            for (size_t k = 0; allowed[k] != NULL; k++) {
                size_t used = strlen(expected);
                snprintf(expected + used, sizeof(expected) - used, ", \"%s\"", allowed[k]);
            }
            dahlsim_error("%s: layers[%d]: unknown key \"%s\" for a %s layer (expected %s)", path, i, item->string,
                          type, expected);
            return false;
        }
    }
    return true;
}

/* Fills d->layers from a JSON model file; every error names the file and the field. */
static bool model_from_json(const char *path, struct dahl_network_desc *d)
{
    char *text = dahlsim_read_text(path, (size_t)64 << 20);
    if (text == NULL) {
        dahlsim_error("--model: %s: %s", path, strerror(errno));
        fprintf(stderr, "hint: --model takes lenet, deep, deep:BLOCKS or a JSON model file\n");
        return false;
    }
    cJSON *root = cJSON_Parse(text);
    if (root == NULL) {
        char where[96];
        dahlsim_error("%s: %s", path, dahlsim_json_error_where(text, where, sizeof(where)));
        free(text);
        return false;
    }
    free(text);
    bool ok = false;
    const cJSON *layers = NULL;
    if (!cJSON_IsObject(root)) {
        dahlsim_error("%s: expected an object {\"layers\": [...]}", path);
        goto out;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (strcmp(item->string, "layers") != 0) {
            dahlsim_error("%s: unknown key \"%s\" (expected \"layers\")", path, item->string);
            goto out;
        }
    }
    layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    int n = cJSON_GetArraySize(layers);
    if (!cJSON_IsArray(layers) || n < 1 || n > DAHL_NETWORK_MAX_LAYERS) {
        dahlsim_error("%s: \"layers\": expected an array of 1 to %d layers", path, DAHL_NETWORK_MAX_LAYERS);
        goto out;
    }
    d->nlayers = 0;
    int i = 0;
    cJSON_ArrayForEach(item, layers)
    {
        struct dahl_layer_desc *l = &d->layers[i];
        memset(l, 0, sizeof(*l));
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
        if (!cJSON_IsObject(item) || !cJSON_IsString(type)) {
            dahlsim_error("%s: layers[%d]: expected an object with a \"type\" string", path, i);
            goto out;
        }
        const char *t = type->valuestring;
        if (strcmp(t, "conv") == 0) {
            static const char *const keys[] = {"filters", "kernel", "stride", "pad", NULL};
            l->kind = DAHL_LAYER_CONV;
            if (!layer_keys(path, i, item, t, keys) || !layer_int(path, i, item, "filters", 1, -1, &l->filters) ||
                !layer_int(path, i, item, "kernel", 1, -1, &l->kernel) ||
                !layer_int(path, i, item, "stride", 1, 1, &l->stride) || !layer_int(path, i, item, "pad", 0, 0, &l->pad))
                goto out;
        } else if (strcmp(t, "relu") == 0) {
            static const char *const keys[] = {NULL};
            l->kind = DAHL_LAYER_RELU;
            if (!layer_keys(path, i, item, t, keys))
                goto out;
        } else if (strcmp(t, "maxpool") == 0) {
            static const char *const keys[] = {"kernel", "stride", NULL};
            l->kind = DAHL_LAYER_MAXPOOL;
            if (!layer_keys(path, i, item, t, keys) || !layer_int(path, i, item, "kernel", 1, -1, &l->kernel) ||
                !layer_int(path, i, item, "stride", 1, l->kernel, &l->stride))
                goto out;
        } else if (strcmp(t, "dense") == 0) {
            static const char *const keys[] = {"units", NULL};
            l->kind = DAHL_LAYER_DENSE;
            if (!layer_keys(path, i, item, t, keys) || !layer_int(path, i, item, "units", 1, -1, &l->units))
                goto out;
        } else {
            dahlsim_error("%s: layers[%d].type: expected conv, relu, maxpool or dense, got \"%s\"", path, i, t);
            goto out;
        }
        i++;
    }
    d->nlayers = i;
    ok = true;
out:
    cJSON_Delete(root);
    return ok;
}

/* Builds the network description for an input of c x h x w; returns false after printing an error. */
static bool model_desc(const char *model, int c, int h, int w, struct dahl_network_desc *d)
{
    memset(d, 0, sizeof(*d));
    if (strcmp(model, "lenet") == 0) {
        if (dahl_network_desc_lenet(c, h, w, NCLASSES, d) != 0) {
            dahlsim_error("--model lenet: a %dx%dx%d image is too small for LeNet (its second 5x5 convolution "
                          "needs at least 5x5 pixels after the first pooling)",
                          h, w, c);
            return false;
        }
    } else if (strcmp(model, "deep") == 0 || strncmp(model, "deep:", 5) == 0) {
        long blocks = DEEP_BLOCKS;
        if (model[4] == ':' && !dahlsim_parse_int("--model deep:BLOCKS", model + 5, 1, 9, &blocks))
            return false;
        if (dahl_network_desc_deep(c, h, w, NCLASSES, (int)blocks, DEEP_WIDTH, d) != 0) {
            dahlsim_error("--model %s: cannot build the deep variant for a %dx%dx%d image", model, h, w, c);
            return false;
        }
    } else {
        d->c = c;
        d->h = h;
        d->w = w;
        d->nclasses = NCLASSES;
        if (!model_from_json(model, d))
            return false;
    }
    char err[512];
    if (dahl_network_desc_check(d, err, sizeof(err)) != 0) {
        dahlsim_error("--model %s: %s", model, err);
        return false;
    }
    return true;
}

/* ---- helpers ------------------------------------------------------------------------------------------ */

/* The progress line on stderr: redrawn in place on a terminal, a plain line every few seconds otherwise. */
struct progress {
    bool enabled, tty;
    double last_s;
};

static void progress_show(struct progress *p, int epoch, int epochs, long done, long total, double elapsed_s)
{
    if (!p->enabled)
        return;
    double now = dahlsim_mono_s();
    if (now - p->last_s < (p->tty ? 0.25 : 2.0))
        return;
    p->last_s = now;
    fprintf(stderr, "%sepoch %d/%d  %ld/%ld samples  %.0f samples/s%s", p->tty ? "\r" : "", epoch, epochs, done,
            total, elapsed_s > 0 ? (double)done / elapsed_s : 0.0, p->tty ? "\033[K" : "\n");
}

static void progress_clear(struct progress *p)
{
    if (p->enabled && p->tty)
        fputs("\r\033[K", stderr);
}

/* ---- training ------------------------------------------------------------------------------------------ */

#define RESULTS_MAX_LINKS 64
#define RESULTS_MAX_NODES 16

struct run_state {
    const struct train_opts *o;
    bool simulated; /* StarPU-SimGrid: no metrics, no evaluation, times are simulated */
    struct dahl_dataset train, test;
    struct dahl_network *net;
    size_t nsymbols;
    const char *const *symbols;
    struct dahlsim_results_count *per_codelet;
    struct dahl_worker_stats *workers, *epoch_workers;
    int nworkers;
    double *iteration_s;
    long iterations;
    struct dahlsim_results_epoch *epochs;
    double makespan_s;
    struct dahlsim_nodes nodes; /* several nodes: this one's shard of every batch (dahlsim_nodes.h) */
    struct dahl_profile_link links[RESULTS_MAX_LINKS];
    int nlinks;
    struct dahl_profile_memnode memory[RESULTS_MAX_NODES];
    int nmemory;
    double *link_windows_us; /* per epoch: when the bus counters were reset and read (StarPU clock) */
    struct dahlsim_results_submission submission; /* native: summed over the epochs */
    /* The workers' task handling over the training phases (dahl_engine_sched_cost's cumulative figures,
     * differenced per epoch): from popping a task to asking for the next, the pushes in it, the tasks. */
    double handling_us, worker_push_us, busy_us;
    long handled_tasks;
    /* This process's memory mappings over the training steps, sampled on rank 0: under SMPI every rank's
     * simulated threads live in it, and each holds two mappings (stack and guard page). */
    struct dahlsim_proc_meter maps;
};

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long tasks_submitted(const struct run_state *st)
{
    long n = 0;
    for (size_t k = 0; k < st->nsymbols; k++)
        n += dahl_network_task_count(st->net, st->symbols[k]);
    return n;
}

/* Evaluates the test set in batches (the last one partial); returns 0 and the accuracy. */
static int evaluate(struct run_state *st, double *accuracy)
{
    struct dahl_network *net = st->net;
    size_t per = (size_t)st->test.c * st->test.h * st->test.w;
    int batch = st->nodes.local_batch; /* every node evaluates the whole test set with the same weights */
    dahl_network_metrics_reset(net);
    for (int s = 0; s < st->test.n; s += batch) {
        int n = st->test.n - s < batch ? st->test.n - s : batch;
        int ret = dahl_network_eval_step(net, st->test.images + (size_t)s * per, st->test.labels + s, n);
        if (ret != 0)
            return ret;
    }
    double loss_sum;
    long correct, samples;
    dahl_network_metrics(net, &loss_sum, &correct, &samples);
    *accuracy = samples > 0 ? (double)correct / (double)samples : 0.0;
    return 0;
}

/* One epoch: training steps, then evaluation. Fills st->epochs[e] and the per-iteration times. */
static int train_epoch(struct run_state *st, int e, struct progress *progress)
{
    const struct train_opts *o = st->o;
    struct dahl_network *net = st->net;
    int batch = (int)o->batch;
    long steps = st->train.n / batch;
    size_t per = (size_t)st->train.c * st->train.h * st->train.w;

    dahl_network_metrics_reset(net);
    for (size_t k = 0; k < st->nsymbols; k++)
        st->per_codelet[k].tasks -= dahl_network_task_count(net, st->symbols[k]);
    size_t done_before = dahl_network_steps_done(net);
    dahl_engine_worker_stats_reset();
    dahl_profile_counters_reset();
    struct dahl_sched_cost sched0;
    dahl_engine_sched_cost(&sched0);
    st->link_windows_us[2 * e] = dahl_engine_now_us();
    int barrier = dahl_mpi_barrier(); /* the nodes start each epoch together */
    if (barrier != 0)
        return barrier;
    double start_us = dahl_engine_now_us();
    /* The submitting thread's cost, natively: its CPU time while it submits the epoch and waits for it. */
    double cpu0_s = thread_cpu_s();
    long tasks0 = tasks_submitted(st);
    size_t copied0;
    double copy0_s;
    dahl_network_input_copies(net, &copied0, &copy0_s);
    for (long s = 0; s < steps; s++) {
        /* this node's shard of the step's samples */
        size_t first = (size_t)s * batch + (size_t)st->nodes.rank * st->nodes.local_batch;
        const float *images = st->train.images != NULL ? st->train.images + first * per : NULL;
        int ret = dahl_network_train_step(net, images, st->train.labels + first, !st->simulated);
        if (ret != 0)
            return ret;
        long done = (long)(dahl_network_steps_done(net) - done_before) * batch;
        if (st->nodes.rank == 0)
            dahlsim_proc_meter_tick(&st->maps, false);
        progress_show(progress, e + 1, (int)o->epochs, done, steps * batch, (dahl_engine_now_us() - start_us) / 1e6);
    }
    double loss_sum;
    long correct, samples;
    dahl_network_metrics(net, &loss_sum, &correct, &samples);
    const double *end_us;
    size_t nsteps = dahl_network_step_end_times(net, &end_us);
    if (nsteps != (size_t)(st->iterations + steps))
        return -EPROTO;
    if (!st->simulated) {
        size_t copied;
        double copy_s;
        dahl_network_input_copies(net, &copied, &copy_s);
        st->submission.thread_cpu_s += thread_cpu_s() - cpu0_s;
        st->submission.tasks += tasks_submitted(st) - tasks0;
        st->submission.copy_bytes += (double)(copied - copied0);
        st->submission.copy_cpu_s += copy_s - copy0_s;
    }
    /* Step durations and the epoch's time; with several nodes, the slowest node's (on rank 0). */
    double train_s;
    int merged = dahlsim_nodes_step_times(&st->nodes, end_us + st->iterations, start_us, (size_t)steps,
                                          st->iteration_s + st->iterations, &train_s);
    if (merged == 0)
        merged = dahlsim_nodes_sum_metrics(&st->nodes, &loss_sum, &correct, &samples);
    if (merged != 0)
        return merged;
    st->iterations += steps;
    st->makespan_s += train_s;
    int n = dahl_engine_worker_stats(st->epoch_workers, st->nworkers);
    struct dahl_sched_cost sched1;
    dahl_engine_sched_cost(&sched1);
    st->handling_us += sched1.handling_us - sched0.handling_us;
    st->worker_push_us += sched1.worker_push_total_us - sched0.worker_push_total_us;
    for (int w = 0; w < n; w++) {
        st->handled_tasks += st->epoch_workers[w].tasks;
        st->busy_us += 1e6 * st->epoch_workers[w].busy_s;
        st->workers[w].tasks += st->epoch_workers[w].tasks;
        st->workers[w].busy_s += st->epoch_workers[w].busy_s;
        st->workers[w].sleeping_s += st->epoch_workers[w].sleeping_s;
        st->workers[w].total_s += st->epoch_workers[w].total_s;
    }
    for (size_t k = 0; k < st->nsymbols; k++)
        st->per_codelet[k].tasks += dahl_network_task_count(net, st->symbols[k]);
    st->link_windows_us[2 * e + 1] = dahl_engine_now_us();
    st->nlinks = dahl_profile_links_add(st->links, st->nlinks, RESULTS_MAX_LINKS);
    st->nmemory = dahl_profile_memory_merge(st->memory, st->nmemory, RESULTS_MAX_NODES);
    progress_clear(progress);

    struct dahlsim_results_epoch *ep = &st->epochs[e];
    if (st->simulated) {
        *ep = (struct dahlsim_results_epoch){.epoch = e + 1, .loss = NAN, .train_accuracy = NAN,
                                             .test_accuracy = NAN, .time_s = train_s, .eval_s = NAN};
        if (st->nodes.rank == 0)
            printf("epoch %d/%ld  simulated time %.6f s  (%.0f samples/s)\n", e + 1, o->epochs, train_s,
               train_s > 0 ? (double)(steps * batch) / train_s : 0.0);
        fflush(stdout);
        return 0;
    }
    double eval_start_us = dahl_engine_now_us();
    double test_accuracy;
    int ret = evaluate(st, &test_accuracy);
    if (ret != 0)
        return ret;
    *ep = (struct dahlsim_results_epoch){
        .epoch = e + 1,
        .loss = samples > 0 ? loss_sum / (double)samples : 0.0,
        .train_accuracy = samples > 0 ? (double)correct / (double)samples : 0.0,
        .test_accuracy = test_accuracy,
        .time_s = train_s,
        .eval_s = (dahl_engine_now_us() - eval_start_us) / 1e6,
    };
    if (st->nodes.rank == 0)
        printf("epoch %d/%ld  loss %.4f  train %.2f %%  test %.2f %%  time %.1f s  (%.0f samples/s)\n", e + 1, o->epochs,
           ep->loss, 100.0 * ep->train_accuracy, 100.0 * ep->test_accuracy, train_s,
           train_s > 0 ? (double)(steps * batch) / train_s : 0.0);
    fflush(stdout);
    return 0;
}

/* Loads the datasets: Fashion-MNIST's two splits, or one synthetic draw split into train and held-out
 * test samples (so both share the class prototypes). Returns an exit code, -1 to go on. */
static int load_data(const struct train_opts *o, bool simulated, struct dahl_dataset *all,
                     struct dahl_dataset *train, struct dahl_dataset *test)
{
    if (o->syn_h > 0 || simulated) {
        /* Simulated: labels only, in the dataset's shape (Fashion-MNIST: 28x28x1), no file read. */
        const int c = o->syn_h > 0 ? o->syn_c : 1, h = o->syn_h > 0 ? o->syn_h : 28, w = o->syn_h > 0 ? o->syn_w : 28;
        int ret = dahl_dataset_synthetic((int)(o->samples + o->test_samples), c, h, w, NCLASSES, (uint64_t)o->seed,
                                         simulated ? 0 : 1, all);
        if (ret != 0) {
            dahlsim_error("--dataset %s: cannot make %ld samples: %s", o->dataset, o->samples + o->test_samples,
                          strerror(-ret));
            return ret == -ENOMEM ? DAHLSIM_EXIT_FAILURE : DAHLSIM_EXIT_USAGE;
        }
        size_t per = (size_t)all->c * all->h * all->w;
        *train = *all;
        train->n = (int)o->samples;
        *test = *all;
        test->n = (int)o->test_samples;
        test->images = all->images != NULL ? all->images + (size_t)o->samples * per : NULL;
        test->labels = all->labels + o->samples;
        return -1;
    }
    char err[1024];
    if (dahl_dataset_load_fashion_mnist(NULL, 1, (int)o->samples, train, err, sizeof(err)) != 0 ||
        dahl_dataset_load_fashion_mnist(NULL, 0, (int)o->test_samples, test, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    return -1;
}

static void run_state_fini(struct run_state *st)
{
    dahlsim_nodes_fini(&st->nodes);
    dahl_network_destroy(st->net);
    free(st->per_codelet);
    free(st->workers);
    free(st->epoch_workers);
    free(st->iteration_s);
    free(st->epochs);
    free(st->link_windows_us);
}

/* results.json's "submission": natively the measured totals and their rates, simulated what was charged. */
static struct dahlsim_results_submission submission_figures(const struct run_state *st)
{
    struct dahlsim_results_submission s = st->submission;
    if (st->simulated) {
        enum dahl_submit_charge c = dahl_engine_submit_charge();
        s.charged_on = dahl_engine_submit_charge_name(c);
        s.us_per_task = c != DAHL_SUBMIT_NOT_CHARGED ? st->o->submit_us_per_task : 0;
        s.copy_bytes_per_s = c != DAHL_SUBMIT_NOT_CHARGED ? st->o->input_copy_bytes_per_s : 0;
        return s;
    }
    s.us_per_task = s.tasks > 0 ? 1e6 * (s.thread_cpu_s - s.copy_cpu_s) / (double)s.tasks : 0;
    s.copy_bytes_per_s = s.copy_cpu_s > 0 ? s.copy_bytes / s.copy_cpu_s : 0;
    return s;
}

/* results.json's "scheduling": the policy's push_task calls, natively timed, simulated charged; the
 * workers' runtime cost per task over the training phases. */
static struct dahlsim_results_scheduling scheduling_figures(const struct run_state *st)
{
    struct dahl_sched_cost c;
    dahl_engine_sched_cost(&c);
    double worker_us = st->handled_tasks > 0
                           ? (st->handling_us - st->busy_us - st->worker_push_us) / (double)st->handled_tasks
                           : 0;
    return (struct dahlsim_results_scheduling){.counted = c.wrapped,
                                               .worker_us_per_task = c.pops_wrapped ? worker_us : NAN,
                                               .worker_charged_us = st->o->worker_us,
                                               .worker_pushes = c.worker_pushes,
                                               .other_pushes = c.other_pushes,
                                               .worker_slow = c.worker_slow,
                                               .other_slow = c.other_slow,
                                               .worker_push_us = c.worker_push_us,
                                               .other_push_us = c.other_push_us,
                                               .charged_us = c.charged_us};
}

static int write_results(struct run_state *st, double wall_start_s)
{
    const struct train_opts *o = st->o;
    long tasks_cpu = 0, tasks_cuda = 0;
    for (int w = 0; w < st->nworkers; w++) {
        if (strcmp(st->workers[w].arch, "cpu") == 0)
            tasks_cpu += st->workers[w].tasks;
        else if (strcmp(st->workers[w].arch, "cuda") == 0)
            tasks_cuda += st->workers[w].tasks;
    }
    /* Several nodes: counts summed and per-node figures gathered on rank 0, which alone writes the file. */
    if (dahlsim_nodes_merge_results(&st->nodes, st->per_codelet, st->nsymbols, &tasks_cpu, &tasks_cuda, st->workers,
                                    (size_t)st->nworkers) != 0) {
        dahlsim_error("train: cannot gather the nodes' results on rank 0");
        return DAHLSIM_EXIT_FAILURE;
    }
    if (st->nodes.rank != 0)
        return DAHLSIM_EXIT_OK;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* heteroprio: the policy as scenarios name it, and the lists the scheduler ended with. */
    static char lists[DAHL_NARCH][DAHL_HETEROPRIO_LIST_BYTES];
    char scheduler[64];
    struct dahl_heteroprio_conf hc = {0};
    struct dahlsim_results_heteroprio hp = {.priorities = o->priorities, .lists = {lists[0], lists[1]}};
    bool heteroprio = strcmp(o->sched, "heteroprio") == 0 && o->priorities != NULL;
    bool autoprio = heteroprio && dahl_heteroprio_parse_auto(o->priorities, &hc);
    snprintf(scheduler, sizeof(scheduler), "%s", o->sched);
    if (heteroprio) {
        hp.types = dahl_heteroprio_summary(&hp.recomputes, lists);
        hp.buckets = hc.by_footprint ? "footprint" : "symbol";
        hp.interval = autoprio ? (int)o->priority_interval : 0;
        if (autoprio)
            snprintf(scheduler, sizeof(scheduler), "heteroprio:auto-%s%s", dahl_autoprio_heuristic_name(hc.heuristic),
                     hc.by_footprint ? "/footprint" : "");
    }
    struct dahlsim_results r = {
        .mode = st->simulated ? "simulated" : "native",
        .scenario = o->scenario,
        .model = o->model,
        .dataset = o->dataset,
        .scheduler = scheduler,
        .heteroprio = heteroprio ? &hp : NULL,
        .batch = (int)o->batch,
        .c = st->train.c,
        .h = st->train.h,
        .w = st->train.w,
        .ncpu = dahl_engine_ncpu(),
        .ncuda = dahl_engine_ngpu(),
        .reduction = o->reduction == DAHL_REDUCTION_MANUAL ? "manual" : "redux",
        .perfmodel = dahl_perfmodel_kind_name(o->perfmodel),
        .epochs = (int)o->epochs,
        .iterations = st->iterations,
        .samples = st->train.n,
        .makespan_s = st->makespan_s,
        .iteration_times_s = st->iteration_s,
        .niteration_times = (size_t)st->iterations,
        .samples_per_s = st->makespan_s > 0 ? (double)(st->iterations * o->batch) / st->makespan_s : 0.0,
        .epochs_detail = st->epochs,
        .nepochs_detail = (size_t)o->epochs,
        .per_codelet = st->per_codelet,
        .ncodelets = st->nsymbols,
        .tasks_cpu = tasks_cpu,
        .tasks_cuda = tasks_cuda,
        .workers = st->workers,
        .nworkers = (size_t)st->nworkers,
        .links = st->links,
        .nlinks = (size_t)st->nlinks,
        .memory = st->memory,
        .nmemory = (size_t)st->nmemory,
        .nodes = st->nodes.mpi ? st->nodes.size : 0,
        .allreduce = dahl_allreduce_algo_name(DAHL_ALLREDUCE_TREE),
        .network = st->nodes.network,
        .nodes_detail = st->nodes.detail,
        .allreduce_times_s = st->nodes.allreduce_s,
        .nallreduce_times = st->nodes.nallreduce,
        .submission = submission_figures(st),
        .scheduling = scheduling_figures(st),
        .seed = (uint64_t)o->seed,
        .wall_s = dahlsim_mono_s() - wall_start_s,
        .peak_rss_kib = ru.ru_maxrss,
        .maps_first_step = st->maps.first,
        .maps_peak = st->maps.peak,
    };
    char err[4200];
    if (dahlsim_results_save(&r, o->out, err, sizeof(err)) != 0) {
        dahlsim_error("--out: %s", err);
        return DAHLSIM_EXIT_FAILURE;
    }
    if (!o->quiet)
        fprintf(stderr, "dahlsim %s: wrote %s/results.json\n", st->simulated ? "sim-train" : "train", o->out);
    return DAHLSIM_EXIT_OK;
}

/* Everything after the engine started; returns an exit code. */
static int train_run(struct run_state *st, const struct dahl_network_desc *desc, double wall_start_s)
{
    const struct train_opts *o = st->o;
    char err[512];
    if (dahlsim_nodes_init(&st->nodes, o->batch, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahl_train_conf conf = {.batch = st->nodes.local_batch, .lr = (float)o->lr, .momentum = (float)o->momentum,
                                   .reduction = o->reduction, .seed = (uint64_t)o->seed,
                                   .allreduce = st->nodes.allreduce, .global_batch = (int)o->batch};
    st->net = dahl_network_create(desc, &conf, err, sizeof(err));
    if (st->net == NULL) {
        dahlsim_error("train: %s", err);
        return DAHLSIM_EXIT_FAILURE;
    }
    st->symbols = dahl_codelet_symbols(&st->nsymbols);
    st->nworkers = dahl_engine_worker_count();
    long steps = st->train.n / o->batch;
    st->per_codelet = calloc(st->nsymbols, sizeof(*st->per_codelet));
    st->workers = calloc((size_t)st->nworkers, sizeof(*st->workers));
    st->epoch_workers = calloc((size_t)st->nworkers, sizeof(*st->epoch_workers));
    st->iteration_s = calloc((size_t)(steps * o->epochs), sizeof(double));
    st->epochs = calloc((size_t)o->epochs, sizeof(*st->epochs));
    st->link_windows_us = calloc(2 * (size_t)o->epochs, sizeof(double));
    if (st->per_codelet == NULL || st->workers == NULL || st->epoch_workers == NULL || st->iteration_s == NULL ||
        st->epochs == NULL || st->link_windows_us == NULL) {
        dahlsim_error("train: out of memory");
        return DAHLSIM_EXIT_FAILURE;
    }
    for (size_t k = 0; k < st->nsymbols; k++)
        st->per_codelet[k].name = st->symbols[k];
    if (dahl_engine_worker_stats(st->workers, st->nworkers) < 0) {
        dahlsim_error("train: StarPU profiling is not enabled");
        return DAHLSIM_EXIT_FAILURE;
    }
    for (int w = 0; w < st->nworkers; w++) { /* keep the names, start the counts from zero */
        st->workers[w].tasks = 0;
        st->workers[w].busy_s = st->workers[w].sleeping_s = st->workers[w].total_s = 0;
    }
    if (!o->quiet && st->nodes.rank == 0)
        fprintf(stderr,
                "dahlsim train: %s (%zu parameters) on %s (%dx%dx%d images), %d train / %d test samples, batch %ld, lr %g, "
                "momentum %g, %d CPU + %d GPU workers, scheduler %s\n",
                o->model, dahl_network_desc_params(desc), o->dataset, st->train.h, st->train.w, st->train.c,
                st->train.n, st->test.n, o->batch, o->lr, o->momentum, dahl_engine_ncpu(), dahl_engine_ngpu(),
                o->sched);
    dahlsim_proc_meter_init(&st->maps, 0.5);
    struct progress progress = {.enabled = !o->quiet && st->nodes.rank == 0, .tty = isatty(STDERR_FILENO) == 1, .last_s = dahlsim_mono_s()};
    for (int e = 0; e < o->epochs; e++) {
        int ret = train_epoch(st, e, &progress);
        if (ret != 0) {
            progress_clear(&progress);
            dahlsim_error("train: epoch %d: task submission failed: %s", e + 1, strerror(-ret));
            return DAHLSIM_EXIT_FAILURE;
        }
    }
    dahlsim_proc_meter_tick(&st->maps, true);
    int code = o->out != NULL ? write_results(st, wall_start_s) : DAHLSIM_EXIT_OK;
    dahlsim_nodes_stop(&st->nodes); /* before the network and StarPU go */
    return code;
}

/* Names of the network's layers for traces: conv1, relu1, pool1, ..., then "loss" (index nlayers). */
static void layer_names(const struct dahl_network_desc *desc, char names[][16], const char **out)
{
    static const char *const kinds[] = {[DAHL_LAYER_CONV] = "conv", [DAHL_LAYER_RELU] = "relu",
                                        [DAHL_LAYER_MAXPOOL] = "pool", [DAHL_LAYER_DENSE] = "dense"};
    int seen[4] = {0};
    for (int i = 0; i < desc->nlayers; i++) {
        enum dahl_layer_kind k = desc->layers[i].kind;
        snprintf(names[i], 16, "%s%d", kinds[k], ++seen[k]);
        out[i] = names[i];
    }
    out[desc->nlayers] = "loss";
}

/* After the engine stopped: StarPU's FxT trace converted and compared with dahl's records, then dahl's own
 * traces and summary into OUT/trace. Native runs draw the Gantt chart here; simulated ones leave it to the
 * native front end (dahlsim run), which starts no process from inside a SimGrid simulation. */
static int write_trace(struct run_state *st, const struct dahl_network_desc *desc)
{
    const struct train_opts *o = st->o;
    char dir[PATH_MAX], rec[PATH_MAX + 32], err[2 * PATH_MAX];
    if (o->trace_per_node) {
        /* Every rank its own directory; dahlsim run merges them into OUT/trace once every rank is done. */
        snprintf(dir, sizeof(dir), "%s/trace/node-%d", o->out, st->nodes.rank);
        int r = dahlsim_make_dirs(dir);
        if (r != 0) {
            dahlsim_error("--trace: cannot create %s: %s", dir, strerror(-r));
            return DAHLSIM_EXIT_FAILURE;
        }
    } else {
        snprintf(dir, sizeof(dir), "%s/trace", o->out);
    }
    struct dahl_profile_task *tasks;
    size_t ntasks = dahl_profile_tasks(&tasks);
    struct dahlsim_trace_fxt fxt = {0};
    struct dahlsim_trace_transfer *transfers = NULL;
    size_t ntransfers = 0;
    double t0 = dahlsim_mono_s();
    if (o->trace_per_node) {
        /* No FxT trace: the multi-node simulator's static StarPU is built without FxT (no data transfer
         * times, no comparison). */
    } else if (dahl_profile_fxt_convert(err, sizeof(err)) != 0) {
        fprintf(stderr, "dahlsim: warning: --trace: no StarPU FxT trace: %s\n", err);
    } else {
        snprintf(rec, sizeof(rec), "%s/starpu/tasks.rec", dir);
        if (dahlsim_trace_compare_fxt(rec, tasks, ntasks, &fxt, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: --trace: cannot compare with StarPU's FxT trace: %s\n", err);
        snprintf(rec, sizeof(rec), "%s/starpu/paje.trace", dir);
        if (dahlsim_trace_paje_sort(rec, &fxt.paje_reordered, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: --trace: %s\n", err);
        /* Only FxT knows when each transfer ran (StarPU 1.3.10 gives an application per-bus totals): dahl's
         * trace takes them from there, those of the training epochs only, the ones results.json's links
         * count (not StarPU's write-backs at shutdown, nor evaluation's). */
        else if (dahlsim_trace_fxt_transfers(rec, fxt.offset_us, st->link_windows_us, (size_t)o->epochs,
                                             &transfers, &ntransfers, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: --trace: no data transfers: %s\n", err);
    }
    /* Memory node names by id, as results.json's links name them. */
    const char *node_names[RESULTS_MAX_NODES];
    size_t nnodes = 0;
    for (int m = 0; m < st->nmemory; m++)
        if (st->memory[m].id >= 0 && st->memory[m].id < RESULTS_MAX_NODES && (size_t)st->memory[m].id + 1 > nnodes)
            nnodes = (size_t)st->memory[m].id + 1;
    for (size_t m = 0; m < nnodes; m++)
        node_names[m] = "?";
    for (int m = 0; m < st->nmemory; m++)
        if (st->memory[m].id >= 0 && st->memory[m].id < RESULTS_MAX_NODES)
            node_names[st->memory[m].id] = st->memory[m].name;
    double t1 = dahlsim_mono_s();
    char names_buf[DAHL_NETWORK_MAX_LAYERS][16];
    const char *names[DAHL_NETWORK_MAX_LAYERS + 1];
    layer_names(desc, names_buf, names);
    char title[512];
    snprintf(title, sizeof(title), "%s, %s, batch %ld, %d CPU + %d GPU workers, %s, %s", o->model, o->dataset,
             o->batch, dahl_engine_ncpu(), dahl_engine_ngpu(), o->sched, st->simulated ? "simulated" : "native");
    struct dahlsim_trace_run run = {
        .title = title,
        .workers = st->workers,
        .nworkers = (size_t)st->nworkers,
        .tasks = tasks,
        .ntasks = ntasks,
        .layer_names = names,
        .nlayers = desc->nlayers,
        .first_step = o->trace_first >= 0 ? o->trace_first : 0,
        .last_step = o->trace_last >= 0 ? o->trace_last : st->iterations - 1,
        .fxt = fxt.present ? &fxt : NULL,
        .transfers = transfers,
        .ntransfers = ntransfers,
        .node_names = node_names,
        .nnodes = nnodes,
    };
    int written = dahlsim_trace_write(&run, dir, err, sizeof(err));
    if (written == 0 && o->trace_per_node)
        written = dahlsim_trace_records_save(&run, dir, err, sizeof(err));
    free(transfers);
    if (written != 0) {
        dahlsim_error("--trace: %s", err);
        return DAHLSIM_EXIT_FAILURE;
    }
    double t2 = dahlsim_mono_s();
    if (!st->simulated && dahlsim_trace_render(dir, err, sizeof(err)) != 0)
        fprintf(stderr, "dahlsim: warning: --trace: %s\n", err);
    if (!o->quiet)
        fprintf(stderr,
                "dahlsim %s: traced %zu tasks into %s (StarPU's FxT trace converted and compared in %.2f s, dahl's "
                "traces and summary written in %.2f s%s)\n",
                st->simulated ? "sim-train" : "train", ntasks, dir, t1 - t0, t2 - t1,
                st->simulated ? "" : ", Gantt chart drawn");
    return DAHLSIM_EXIT_OK;
}

/* train and sim-train: the same program in either flavour. */
static int train_main(int argc, char **argv, bool simulated)
{
    double wall_start_s = dahlsim_mono_s();
    struct train_opts o;
    int code = parse_options(argc, argv, &o);
    if (code >= 0)
        return code;

    /* Everything a user can get wrong is checked before the data is loaded and StarPU starts. */
    int c = o.syn_h > 0 ? o.syn_c : 1, h = o.syn_h > 0 ? o.syn_h : 28, w = o.syn_h > 0 ? o.syn_w : 28;
    struct dahl_network_desc desc;
    if (!model_desc(o.model, c, h, w, &desc))
        return DAHLSIM_EXIT_USAGE;
    if (o.out != NULL) {
        int ret = dahlsim_make_dirs(o.out);
        if (ret != 0) {
            dahlsim_error("--out: cannot create %s: %s", o.out, strerror(-ret));
            return DAHLSIM_EXIT_USAGE;
        }
    }
    struct run_state st = {.o = &o, .simulated = simulated};
    struct dahl_dataset all = {0};
    code = load_data(&o, simulated, &all, &st.train, &st.test);
    if (code >= 0)
        return code;
    if (st.train.c != c || st.train.h != h || st.train.w != w) {
        dahlsim_error("--dataset %s: images are %dx%dx%d, expected %dx%dx%d", o.dataset, st.train.h, st.train.w,
                      st.train.c, h, w, c);
        code = DAHLSIM_EXIT_USAGE;
        goto out_data;
    }

    char fxt_dir[PATH_MAX];
    if (o.trace && !o.trace_per_node) {
        /* A fresh OUT/trace: files of an earlier traced run must not pass for this one's. */
        char trace_dir[PATH_MAX];
        snprintf(trace_dir, sizeof(trace_dir), "%s/trace", o.out);
        snprintf(fxt_dir, sizeof(fxt_dir), "%s/trace/starpu", o.out);
        int r = dahlsim_remove_tree(trace_dir);
        if (r == 0)
            r = dahlsim_make_dirs(fxt_dir);
        if (r != 0) {
            dahlsim_error("--trace: cannot create %s: %s", fxt_dir, strerror(-r));
            code = DAHLSIM_EXIT_USAGE;
            goto out_data;
        }
    }
    struct dahl_profile_conf profile = {.record_tasks = o.trace, .first_step = o.trace_first,
                                        .last_step = o.trace_last,
                                        .fxt_dir = o.trace && !o.trace_per_node ? fxt_dir : NULL};
    dahl_profile_setup(&profile);

    dahl_kernels_init();
    int ret = dahl_codelets_set_perfmodel(o.perfmodel);
    if (ret != 0) {
        dahlsim_error("--perfmodel: cannot switch to %s: %s", dahl_perfmodel_kind_name(o.perfmodel), strerror(-ret));
        code = DAHLSIM_EXIT_FAILURE;
        goto out_data;
    }
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = (int)o.ncpu;
    conf.ngpu = (int)o.ngpu;
    conf.sched = o.sched;
    struct dahl_heteroprio_conf heteroprio;
    code = dahlsim_heteroprio_conf(o.sched, o.priorities, o.priority_interval, &heteroprio);
    if (code >= 0)
        goto out_data;
    conf.heteroprio = &heteroprio;
    conf.profiling = true;
    conf.submit_us_per_task = o.submit_us_per_task;
    conf.input_copy_bytes_per_s = o.input_copy_bytes_per_s;
    conf.sched_push_us = o.sched_push_us;
    conf.worker_us_per_task = o.worker_us;
    ret = dahl_engine_start(&conf);
    if (ret == -ENODEV) {
        dahlsim_error("train: StarPU found no worker to run on");
        code = DAHLSIM_EXIT_SKIP;
        goto out_data;
    }
    if (ret != 0) {
        dahlsim_error("train: starpu_init failed: %s", strerror(-ret));
        code = DAHLSIM_EXIT_FAILURE;
        goto out_data;
    }
    code = train_run(&st, &desc, wall_start_s);
    dahl_network_destroy(st.net);
    st.net = NULL;
    dahl_engine_stop();
    if (code == DAHLSIM_EXIT_OK && o.trace)
        code = write_trace(&st, &desc);
    run_state_fini(&st);
    dahl_profile_fini();
out_data:
    if (o.syn_h > 0 || simulated) {
        dahl_dataset_fini(&all);
    } else {
        dahl_dataset_fini(&st.train);
        dahl_dataset_fini(&st.test);
    }
    return code;
}

int dahlsim_cmd_train(int argc, char **argv)
{
    if (dahl_engine_is_simulated()) {
        dahlsim_error("train: this is the native training command; the SimGrid binary cannot run it "
                      "(simulate with `dahlsim run`)");
        return DAHLSIM_EXIT_USAGE;
    }
    return train_main(argc, argv, false);
}

int dahlsim_cmd_sim_train(int argc, char **argv)
{
    if (!dahl_engine_is_simulated()) {
        dahlsim_error("sim-train: this is the simulated training program of the SimGrid binary "
                      "(build/dahlsim-sim); natively, use `dahlsim train`");
        return DAHLSIM_EXIT_USAGE;
    }
    return train_main(argc, argv, true);
}

/* train's and sim-train's options, and sim-train's --point: see train.h. */
#include "train.h"
#include "dahlsim_onnx.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_trace.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_MAX 9007199254740992L /* 2^53: results.json stores the seed as a JSON number */

static const char usage_line[] =
    "usage: dahlsim train [--dataset fashion-mnist[:SIZE]|cifar10:DIR|synthetic:HxWxC] [--epochs N] [--samples N]\n"
    "                     [--test-samples N] [--batch N] [--grain N|batch|auto [--machine NAME]] [--lr X] [--momentum X]\n"
    "                     [--sched POLICY] [--ncpu N] [--ngpu N] [--seed N] [--pipeline-depth N]\n"
    "                     [--pipeline-schedule fill|1f1b] [--shares N,N,...] [--stages L,L,... [--replicas R]]\n"
    "                     [--mpi-progress-core auto|shared|dedicated|busy]\n"
    "                     [--model lenet|vgg-small|resnet:DEPTH|deep|deep:BLOCKS|FILE.json|FILE.onnx [--onnx-weights]]\n"
    "                     [--reduction redux|manual]\n"
    "                     [--perfmodel history|regression|nl-regression] [--out DIR] [--quiet]\n"
    "                     [--trace] [--trace-window START:END]\n";

static void help(void)
{
    fputs(usage_line, stdout);
    printf("\nTrains a CNN natively: every layer of every sample is a StarPU task, gradients are reduced through\n"
           "StarPU. Prints one line per epoch (mean loss, train and test accuracy, training time); with --out DIR,\n"
           "writes DIR/results.json in the schema simulated runs use.\n\n"
           "options:\n"
           "  --dataset D        fashion-mnist (Debian's dataset-fashion-mnist package, in %s),\n"
           "                     fashion-mnist:SIZE (zero-padded to SIZExSIZE, e.g. 32 for resnet:DEPTH),\n"
           "                     cifar10:DIR (CIFAR-10's binary version: DIR/data_batch_1..5.bin and\n"
           "                     test_batch.bin), or synthetic:HxWxC, e.g. synthetic:28x28x3 (10 learnable\n"
           "                     classes); default fashion-mnist\n"
           "  --epochs N         passes over the training samples (default 1)\n"
           "  --samples N        training samples (default: all 60000 of fashion-mnist; 1024 synthetic)\n"
           "  --test-samples N   test samples (default 10000; 256 synthetic, held out from the same classes)\n"
           "  --batch N          samples per SGD step (default 32); a last partial batch is not trained on\n"
           "  --grain G          samples per layer task: 1 (default: one task per sample and layer), N (tasks\n"
           "                     over N consecutive samples; the last one smaller when N does not divide the\n"
           "                     batch), batch (one task per layer and step), or auto with --machine NAME\n"
           "  --machine NAME     with --grain auto: the calibration whose perf models pick the grain, as a\n"
           "                     scenario's \"grain\": \"auto\" does (recorded in results.json's grain_choice)\n"
           "  --pipeline-depth N up to N training steps in flight, PipeDream-like (default 1: synchronous SGD):\n"
           "                     a step's passes use the weights as they were N - 1 updates before (stashed)\n"
           "  --pipeline-schedule S  fill (default: steps' tasks in order) or 1f1b (a step's backward passes\n"
           "                     before the next steps' forward passes, with StarPU priorities)\n"
           "  --shares N,N,...   under mpirun (build/dahlsim-mpi): each rank's samples of every step, rank\n"
           "                     by rank, summing to --batch (a data partition; default batch / ranks each)\n"
           "  --stages L,L,...   under mpirun: a pipeline over the ranks, each a stage of consecutive layers\n"
           "                     starting at these layers (rank 0 from layer 0), activations and their\n"
           "                     gradients sent between them; --grain N groups are the micro-batches\n"
           "  --replicas R       with --stages: R ranks per stage (ranks stage by stage), splitting each step's\n"
           "                     samples and all-reducing their stage's gradients (a hybrid partition)\n"
           "  --mpi-progress-core C  under mpirun: where StarPU-MPI's progression thread runs, recorded with\n"
           "                     its CPU time in results.json: auto (default), shared (the rank has no core\n"
           "                     beyond its workers'), dedicated (a core of its own); a simulation has it\n"
           "                     take turns with the workers on their cores when shared (docs/multinode.md)\n"
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
           "  --model M          lenet (default), vgg-small, resnet:DEPTH (8, 14, 20, 26, 32), deep (%d conv\n"
           "                     blocks), deep:BLOCKS, an ONNX file exported from PyTorch (docs/onnx.md) or a\n"
           "                     JSON file (docs/models.md):\n"
           "                     {\"layers\": [{\"type\": \"conv\", \"filters\": 6, \"kernel\": 5, \"stride\": 1, \"pad\": 2},\n"
           "                      {\"type\": \"relu\"}, {\"type\": \"maxpool\", \"kernel\": 2, \"stride\": 2},\n"
           "                      {\"type\": \"dense\", \"units\": 10}]}  (the last layer gives the 10 classes;\n"
           "                     also avgpool {kernel, stride}, globalavgpool, batchnorm, dropout {percent},\n"
           "                     add {inputs: [j, k]}; any layer may read an earlier one: {input: j})\n"
           "  --onnx-weights     start from the ONNX file's weights (default: dahl's own initialisation)\n"
           "  --reduction R      redux (StarPU's REDUX, default) or manual (a tree of additions, reproducible)\n"
           "  --perfmodel K      history (default), regression or nl-regression: how StarPU models task times\n"
           "  --out DIR          create DIR and write DIR/results.json\n"
           "  --quiet            no progress line\n"
           "  --point FILE       the experiment as `dahlsim run` wrote it (OUT/point.json), in place of the\n"
           "                     options above (natively too: its workers, and \"workloads\" trained together);\n"
           "                     --out and --quiet still apply\n"
           "  --trace            with --out DIR: write DIR/trace/ (Paje traces: dahl.paje and StarPU's FxT trace\n"
           "                     in starpu/, Chrome trace.json, gantt.png and gantt.svg, summary.json and .txt)\n"
           "  --trace-window S:E trace training steps S to E only (counted from 1, over all epochs)\n"
           "\nStarPU's own environment (STARPU_HOME, STARPU_SILENT, ...) is respected.\n",
           DAHL_FASHION_MNIST_DIR, DAHL_DEEP_BLOCKS);
    char list[1024];
    dahl_sched_policy_list(list, sizeof(list));
    printf("\nscheduling policies (--sched, and a scenario's \"scheduler\"): %s\n", list);
}

/* ---- option values ----------------------------------------------------------------------------------- */

static bool parse_dataset(const char *text, struct train_opts *o)
{
    o->dataset = text;
    if (dahl_dataset_name_parse(text, &o->data))
        return true;
    dahlsim_error("--dataset: expected " DAHL_DATASET_NAMES ", e.g. synthetic:28x28x3, got \"%s\"",
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

enum {
    O_DATASET = 256, O_EPOCHS, O_SAMPLES, O_TEST_SAMPLES, O_BATCH, O_LR, O_MOMENTUM, O_SCHED, O_PRIORITIES,
    O_PRIORITY_INTERVAL, O_NCPU, O_NGPU, O_SEED, O_MODEL, O_REDUCTION, O_PERFMODEL, O_TRACE, O_TRACE_WINDOW, O_GRAIN,
    O_PIPELINE_DEPTH, O_PIPELINE_SCHEDULE, O_SHARES, O_STAGES, O_REPLICAS, O_MPI_PROGRESS_CORE,
    /* options that do not describe the experiment, and so go with --point: */
    O_OUT, O_QUIET, O_HELP, O_POINT, O_GRAIN_CHOICE, O_ONNX_WEIGHTS
};

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
    {"help", no_argument, NULL, O_HELP},                 {"point", required_argument, NULL, O_POINT},
    {"trace", no_argument, NULL, O_TRACE},               {"trace-window", required_argument, NULL, O_TRACE_WINDOW},
    {"grain", required_argument, NULL, O_GRAIN},
    {"grain-choice", required_argument, NULL, O_GRAIN_CHOICE}, /* set by the front end's --grain auto */
    {"pipeline-depth", required_argument, NULL, O_PIPELINE_DEPTH},
    {"pipeline-schedule", required_argument, NULL, O_PIPELINE_SCHEDULE},
    {"shares", required_argument, NULL, O_SHARES},
    {"stages", required_argument, NULL, O_STAGES},
    {"replicas", required_argument, NULL, O_REPLICAS},
    {"mpi-progress-core", required_argument, NULL, O_MPI_PROGRESS_CORE},
    {"onnx-weights", no_argument, NULL, O_ONNX_WEIGHTS},
    {NULL, 0, NULL, 0},
};

static bool parse_sched(const char *value, struct train_opts *o)
{
    o->sched = value;
    if (dahl_sched_policy_known(value))
        return true;
    dahlsim_error("--sched: expected a StarPU scheduling policy (lws, dmda, eager, ...), got \"%s\"", value);
    dahlsim_scheduler_hint(value);
    return false;
}

static bool parse_ngpu(const char *text, struct train_opts *o)
{
    if (!dahlsim_parse_int("--ngpu", text, 0, 64, &o->ngpu))
        return false;
    if (o->ngpu > 0 && !dahl_engine_has_cuda()) {
        dahlsim_error("--ngpu: this dahlsim's StarPU was built without CUDA: expected 0, got \"%s\"", text);
        fprintf(stderr, "hint: rebuild StarPU with scripts/setup-deps --cuda on a machine with nvcc\n");
        return false;
    }
    return true;
}

static bool parse_reduction(const char *value, struct train_opts *o)
{
    if (strcmp(value, "redux") == 0)
        o->reduction = DAHL_REDUCTION_REDUX;
    else if (strcmp(value, "manual") == 0)
        o->reduction = DAHL_REDUCTION_MANUAL;
    else {
        dahlsim_error("--reduction: expected redux or manual, got \"%s\"", value);
        return false;
    }
    return true;
}

/* --grain N|batch (-1: the batch); the bound by the batch is check_options'. */
static bool parse_grain(const char *value, struct train_opts *o)
{
    if (strcmp(value, "batch") == 0) {
        o->grain = -1;
        return true;
    }
    if (value[0] >= '0' && value[0] <= '9')
        return dahlsim_parse_int("--grain", value, 1, 65536, &o->grain);
    if (strcmp(value, "auto") == 0) {
        dahlsim_error("--grain auto: expected it from `dahlsim train --machine NAME` (the perf models that choose "
                      "the grain), got it here");
        return false;
    }
    dahlsim_error("--grain: expected a number of samples in [1, batch] or batch, got \"%s\"", value);
    return false;
}

static bool parse_pipeline_schedule(const char *value, struct train_opts *o)
{
    if (strcmp(value, "fill") == 0 || strcmp(value, "1f1b") == 0) {
        o->pipeline_schedule = value[0] == 'f' ? DAHL_PIPELINE_FILL : DAHL_PIPELINE_1F1B;
        return true;
    }
    dahlsim_error("--pipeline-schedule: expected fill or 1f1b, got \"%s\"", value);
    return false;
}

static bool parse_progress_core(const char *value, struct train_opts *o)
{
    if (dahl_progress_core_parse(value, &o->mpi_progress))
        return true;
    dahlsim_error("--mpi-progress-core: expected auto, shared, dedicated or busy, got \"%s\"", value);
    return false;
}

static bool parse_perfmodel(const char *value, struct train_opts *o)
{
    if (dahl_perfmodel_kind_parse(value, &o->perfmodel) == 0)
        return true;
    dahlsim_error("--perfmodel: expected history, regression or nl-regression, got \"%s\"", value);
    return false;
}

/* A comma-separated list of integers in [min, max] (at most DAHLSIM_NODES_MAX) into out; false when it is
 * not one. */
static bool parse_list(const char *text, long min, long max, long *out, long *n)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        char item[32], *end;
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof(item) || *n == DAHLSIM_NODES_MAX)
            return false;
        snprintf(item, sizeof(item), "%.*s", (int)len, p);
        errno = 0;
        long v = strtol(item, &end, 10);
        if (errno != 0 || *end != '\0' || item[0] == '+' || v < min || v > max)
            return false;
        out[(*n)++] = v;
        if (p[len] == '\0')
            return true;
        p += len + 1;
    }
}

/* --stages C1,C2,...: the cuts between pipeline stages, layers in increasing order (checked against the
 * model's layers once it is built: train_check). */
static bool parse_stages(const char *text, struct train_opts *o)
{
    long cuts[DAHLSIM_NODES_MAX], n;
    bool ok = parse_list(text, 1, DAHL_NETWORK_MAX_LAYERS - 1, cuts, &n);
    for (long i = 1; ok && i < n; i++)
        ok = cuts[i] > cuts[i - 1];
    if (!ok) {
        dahlsim_error("--stages: expected the layers where the pipeline's stages after the first start, increasing "
                      "and comma-separated (e.g. 6: layers 0-5 on rank 0, 6 on on rank 1), got \"%s\"", text);
        return false;
    }
    memcpy(o->stages, cuts, (size_t)n * sizeof(long));
    o->nstages = n + 1;
    return true;
}

/* --shares N,N,...: each node's samples of a step, rank by rank (their sum, the batch, is checked once the
 * node count is known: dahlsim_nodes_init). */
static bool parse_shares(const char *text, struct train_opts *o)
{
    if (parse_list(text, 1, 65536, o->shares, &o->nshares))
        return true;
    dahlsim_error("--shares: expected at most %d comma-separated sample counts in [1, 65536], one per node "
                  "(e.g. 24,8), got \"%s\"", DAHLSIM_NODES_MAX, text);
    return false;
}

/* One option of the experiment (opt, its value in arg) into o; false after printing the error. */
static bool set_option(int opt, const char *arg, struct train_opts *o)
{
    switch (opt) {
    case O_DATASET:
        return parse_dataset(arg, o);
    case O_EPOCHS:
        return dahlsim_parse_int("--epochs", arg, 1, 100000, &o->epochs);
    case O_SAMPLES:
        return dahlsim_parse_int("--samples", arg, 1, 10000000, &o->samples);
    case O_TEST_SAMPLES:
        return dahlsim_parse_int("--test-samples", arg, 1, 10000000, &o->test_samples);
    case O_BATCH:
        return dahlsim_parse_int("--batch", arg, 1, 65536, &o->batch);
    case O_GRAIN:
        return parse_grain(arg, o);
    case O_PIPELINE_DEPTH:
        return dahlsim_parse_int("--pipeline-depth", arg, 1, DAHL_PIPELINE_MAX_DEPTH, &o->pipeline_depth);
    case O_PIPELINE_SCHEDULE:
        return parse_pipeline_schedule(arg, o);
    case O_SHARES:
        return parse_shares(arg, o);
    case O_STAGES:
        return parse_stages(arg, o);
    case O_REPLICAS:
        return dahlsim_parse_int("--replicas", arg, 1, DAHLSIM_NODES_MAX, &o->replicas);
    case O_MPI_PROGRESS_CORE:
        return parse_progress_core(arg, o);
    case O_LR:
        return parse_positive_double("--lr", arg, 100, &o->lr);
    case O_MOMENTUM:
        if (!dahlsim_parse_double("--momentum", arg, 0, 1, &o->momentum))
            return false;
        if (o->momentum >= 1) {
            dahlsim_error("--momentum: expected a number in [0, 1), got \"%s\"", arg);
            return false;
        }
        return true;
    case O_SCHED:
        return parse_sched(arg, o);
    case O_NCPU:
        return dahlsim_parse_int("--ncpu", arg, 0, 1024, &o->ncpu);
    case O_NGPU:
        return parse_ngpu(arg, o);
    case O_SEED:
        return dahlsim_parse_int("--seed", arg, 0, SEED_MAX, &o->seed);
    case O_MODEL:
        o->model = arg;
        return true;
    case O_REDUCTION:
        return parse_reduction(arg, o);
    case O_PERFMODEL:
        return parse_perfmodel(arg, o);
    case O_PRIORITIES:
        o->priorities = arg;
        return true;
    case O_PRIORITY_INTERVAL:
        return dahlsim_parse_int("--priority-interval", arg, 1, 1000000000, &o->priority_interval);
    case O_TRACE:
        o->trace = true;
        return true;
    case O_TRACE_WINDOW:
        o->trace = true;
        return dahlsim_trace_window_parse("--trace-window", arg, &o->trace_first, &o->trace_last);
    }
    return false;
}

/* The experiment of --point FILE into o, through the same checks as the options it stands for. */
static bool set_point(const char *path, struct train_opts *o)
{
    char err[PATH_MAX + 256];
    if (dahlsim_experiment_load(path, &o->x, err, sizeof(err)) != 0) {
        dahlsim_error("--point: %s", err);
        return false;
    }
    const struct dahlsim_experiment *x = &o->x;
    char expected[256];
    if (!dahlsim_scheduler_value(x->scheduler, o->sched_policy, sizeof(o->sched_policy), o->priorities_value,
                                 sizeof(o->priorities_value), expected, sizeof(expected))) {
        dahlsim_error("%s: \"scheduler\": expected %s, got \"%s\"", path, expected, x->scheduler);
        return false;
    }
    if (!parse_dataset(x->dataset, o) || !parse_sched(o->sched_policy, o) || !parse_reduction(x->reduction, o) ||
        !parse_perfmodel(x->perfmodel, o) ||
        (x->pipeline_schedule[0] != '\0' && !parse_pipeline_schedule(x->pipeline_schedule, o)))
        return false;
    o->pipeline_depth = x->pipeline_depth < 1 ? 1 : x->pipeline_depth; /* points made without one: 1 */
    o->priorities = o->priorities_value[0] != '\0' ? o->priorities_value : NULL;
    o->model = x->model;
    o->samples = x->samples;
    o->batch = x->batch;
    o->grain = x->grain == 0 ? 1 : x->grain; /* points made without a grain (calibrate's) */
    /* a simulation evaluates nothing: the smallest test set (Fashion-MNIST's has 10000 samples) */
    o->test_samples = x->batch < 10000 ? x->batch : 10000;
    o->epochs = x->epochs;
    o->ncpu = x->cpus;
    o->ngpu = x->gpus;
    o->seed = x->seed;
    o->lr = x->lr;
    o->momentum = x->momentum;
    o->trace = x->trace;
    o->trace_first = x->trace_first;
    o->trace_last = x->trace_last;
    o->trace_per_node = x->trace && x->nodes > 0;
    o->scenario = x->scenario[0] != '\0' ? x->scenario : NULL;
    o->submit_us_per_task = x->submit_us_per_task;
    o->input_copy_bytes_per_s = x->input_copy_bytes_per_s;
    o->sched_push_us = x->sched_push_us;
    o->worker_us = x->worker_us;
    o->sched_gamma = x->sched_gamma;
    if (x->mpi_progress_core[0] != '\0' && !parse_progress_core(x->mpi_progress_core, o))
        return false;
    o->mpi_progress_phase = x->mpi_progress_phase;
    o->steady_warmup = x->steady_warmup;
    o->steady_tolerance = x->steady_tolerance;
    /* Node groups: every rank its share, and its own machine's workers (all of them) and costs. */
    for (long g = 0; g < x->ngroups; g++) {
        const struct dahlsim_node_group *grp = &x->groups[g];
        for (long k = 0; k < grp->count && o->nshares < DAHLSIM_NODES_MAX; k++) {
            o->ranks[o->nshares] = (struct dahl_engine_rank_conf){
                .ncpu = (int)grp->cpus, .ngpu = (int)grp->gpus, .submit_us_per_task = grp->submit_us_per_task,
                .input_copy_bytes_per_s = grp->input_copy_bytes_per_s, .sched_push_us = grp->sched_push_us,
                .worker_us_per_task = grp->worker_us};
            o->shares[o->nshares++] = grp->share;
        }
    }
    o->nranks = x->ngroups > 0 ? o->nshares : 0;
    if (x->stage_cuts[0] != '\0') { /* a pipeline: stages, not shares */
        o->nshares = 0;
        o->replicas = x->stage_replicas > 1 ? x->stage_replicas : 1;
        if (!parse_stages(x->stage_cuts, o))
            return false;
    }
    return true;
}

/* What no single option can check: sizes against the dataset, the trace window against the run. Returns 0,
 * or -EINVAL after printing the error. */
static int check_options(struct train_opts *o)
{
    /* each dataset's splits: fashion-mnist's and cifar10's files, synthetic's defaults */
    bool synthetic = o->data.source == DAHL_DATASET_SYNTHETIC;
    long train_max = o->data.source == DAHL_DATASET_CIFAR10 ? 50000 : 60000;
    if (o->samples < 0)
        o->samples = synthetic ? 1024 : train_max;
    if (o->test_samples < 0)
        o->test_samples = synthetic ? 256 : 10000;
    if (!synthetic && o->samples > train_max) {
        dahlsim_error("--samples: %s has %ld training samples, got %ld", o->dataset, train_max, o->samples);
        return -EINVAL;
    }
    if (!synthetic && o->test_samples > 10000) {
        dahlsim_error("--test-samples: %s has 10000 test samples, got %ld", o->dataset, o->test_samples);
        return -EINVAL;
    }
    if (o->trace && o->out == NULL) {
        dahlsim_error("--trace: traces go to DIR/trace: expected --out DIR too");
        return -EINVAL;
    }
    if (o->onnx_weights && (!dahlsim_onnx_is_path(o->model) || o->nstages > 0)) {
        dahlsim_error("--onnx-weights: expected --model FILE.onnx%s, got %s", o->nstages > 0 ? " without --stages" : "",
                      o->nstages > 0 ? "--stages" : o->model);
        return -EINVAL;
    }
    if (o->trace_last >= 0 && o->trace_last >= o->samples / o->batch * o->epochs) {
        dahlsim_error("--trace-window: expected a window within the run's %ld training steps, got %ld:%ld",
                      o->samples / o->batch * o->epochs, o->trace_first + 1, o->trace_last + 1);
        return -EINVAL;
    }
    if (o->grain == 0 || o->grain < -1 || o->grain > o->batch) {
        dahlsim_error("--grain: expected a number of samples in [1, batch] or batch: at most %ld, got %ld", o->batch,
                      o->grain);
        return -EINVAL;
    }
    if (o->replicas > 1 && o->nstages == 0) {
        dahlsim_error("--replicas: expected it with --stages (the replicas of each pipeline stage)");
        return -EINVAL;
    }
    if (o->nstages > 0 && o->nshares > 0) {
        dahlsim_error("--stages: expected either --stages (a pipeline: every stage trains every sample) or "
                      "--shares (a data partition), not both");
        return -EINVAL;
    }
    if (o->batch > o->samples) {
        dahlsim_error("--batch: expected at most the %ld training samples (one full batch), got %ld", o->samples,
                      o->batch);
        return -EINVAL;
    }
    return 0;
}

int train_parse_options(int argc, char **argv, bool simulated, struct train_opts *o)
{
    *o = (struct train_opts){.dataset = "fashion-mnist",
                             .data = {.source = DAHL_DATASET_FASHION_MNIST, .c = 1, .h = 28, .w = 28},
                             .epochs = 1, .samples = -1, .test_samples = -1,
                             .batch = 32, .grain = 1, .pipeline_depth = 1, .ncpu = -1, .ngpu = 0, .seed = 1, .lr = 0.01, .momentum = 0.9,
                             .sched = "lws", .priority_interval = 32, .model = "lenet", .reduction = DAHL_REDUCTION_REDUX,
                             .perfmodel = DAHL_PERFMODEL_HISTORY, .trace_first = -1, .trace_last = -1, .replicas = 1,
                             .worker_us = -1};
    const char *cmd = simulated ? "sim-train" : "train";
    const char *experiment_option = NULL; /* the first option describing the experiment, refused with --point */
    optind = 1;
    opterr = 0;
    int opt, index = -1;
    while ((opt = getopt_long(argc, argv, ":", options, &index)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_OUT:
            o->out = optarg;
            ok = dahlsim_parse_dir("--out", optarg);
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_ONNX_WEIGHTS:
            o->onnx_weights = true;
            break;
        case O_HELP:
            help();
            o->help = true;
            return 0;
        case O_POINT:
            o->point = optarg;
            break;
        case O_GRAIN_CHOICE:
            snprintf(o->x.grain_choice, sizeof(o->x.grain_choice), "%s", optarg);
            break;
        case ':':
        case '?':
            dahlsim_option_misuse(cmd, opt, argv, usage_line);
            return -EINVAL;
        default:
            if (experiment_option == NULL)
                experiment_option = options[index].name;
            ok = set_option(opt, optarg, o);
        }
        if (!ok)
            return -EINVAL;
    }
    if (optind < argc) {
        dahlsim_unexpected_argument(cmd, argv[optind], usage_line);
        return -EINVAL;
    }
    if (o->point != NULL) {
        if (experiment_option != NULL) {
            dahlsim_error("--%s: the experiment comes from --point %s: expected no other option of it", experiment_option,
                          o->point);
            return -EINVAL;
        }
        if (!set_point(o->point, o))
            return -EINVAL;
    }
    return check_options(o);
}

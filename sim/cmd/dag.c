/* `dahlsim dag`: the scheduler lab's command (gen, run, table, export; share and share-export are
 * cmd/dag_share.c's), option parsing and calls into sim/lab/ (dahlsim_dag.h). */
#include "dahlsim_cli.h"
#include "dahlsim_dag.h"
#include "dahlsim_fs.h"

#include "dahl_autoprio.h"
#include "dahl_dataset_name.h"
#include "dahl_perfnames.h"
#include "dahl_random.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char dag_usage[] =
    "usage: dahlsim dag gen --out FILE [--seed N] [--tasks N] [--min-types N] [--max-types N] [--max-cpus N]\n"
    "                       [--max-gpus N]\n"
    "       dahlsim dag run GRAPH (--priorities FILE | --auto HEURISTIC | --control) [--cpus N] [--gpus N]\n"
    "                       [--interval N] [--slow-factors] [--seed N]\n"
    "       dahlsim dag table [--graphs N] [--seed N] [--tasks N] [--min-types N] [--max-types N] [--interval N]\n"
    "                       [--slow-factors] [--csv FILE] [--save-graphs DIR] [GRAPH...]\n"
    "       dahlsim dag export --machine NAME --out FILE [--dataset D] [--model M] [--batch N] [--grain N]\n"
    "                       [--steps N]\n"
    "                       [--reduction redux|manual] [--redux-copies N] [--momentum X] [--perfmodel KIND]\n"
    "                       [--cpus N] [--gpus N] [--group symbol|footprint]\n"
    "       dahlsim dag share FILE [options]          (dahlsim dag share --help)\n"
    "       dahlsim dag share-export --machine NAME --job SPEC... --out FILE\n";

static void dag_help(void)
{
    char list[128];
    dahl_autoprio_heuristic_list(list, sizeof(list));
    printf("%s\n"
           "The scheduler lab: task graphs with per-type CPU/GPU costs, run by a deterministic emulation of\n"
           "StarPU's Heteroprio (no data transfers) on C CPU + G GPU workers.\n\n"
           "  gen    a random graph following the AutoHeteroprio paper's protocol (seeded)\n"
           "  run    emulate one graph with given priority lists, AutoHeteroprio, or the control priorities;\n"
           "         prints one JSON object (makespan, lower bound, tasks per architecture, the lists)\n"
           "  table  N generated graphs, or the GRAPH files given: the slowdown of each heuristic against the\n"
           "         control priorities, as in the paper's Table 3 (markdown on stdout, CSV with --csv)\n"
           "  export the task graph of dahl training steps (dahl_network.c's tasks and data accesses, StarPU's\n"
           "         dependency rules and REDUX reductions) with costs from a calibration's perf models\n"
           "  share  the GPU-sharing emulator: jobs sharing one GPU's memory, orders, eviction policies, a\n"
           "         genetic search (options: dahlsim dag share --help)\n"
           "  share-export  a GPU-sharing file from calibrated dahl networks\n\n"
           "options:\n"
           "  --priorities FILE  {\"cpu\": [types...], \"gpu\": [types...]}, most wanted first\n"
           "  --auto HEURISTIC   AutoHeteroprio with one of: %s\n"
           "  --control          the paper's control priorities (iterative search over permutations)\n"
           "  --cpus N, --gpus N workers (default: the graph's)\n"
           "  --interval N       auto: recompute the priorities every N pushed tasks (default 32)\n"
           "  --slow-factors     apply StarPU 1.3.10 heteroprio's slow-factor rule\n"
           "  --seed N           generator / control seed (default 1)\n"
           "  --tasks N          tasks per generated graph (default 1000)\n"
           "  --min-types N, --max-types N  task types per generated graph (default 3 to 6; at most 8 for control)\n"
           "  --max-cpus N, --max-gpus N    generated worker counts are drawn in [1, N] (default 15)\n"
           "  --graphs N         table: number of graphs (default 32)\n"
           "export options:\n"
           "  --machine NAME     calibration/NAME: its perf models give the costs (required)\n"
           "  --dataset D        fashion-mnist (default) or synthetic:HxWxC: the image shape\n"
           "  --model M          lenet (default), vgg-small, resnet:DEPTH, deep, deep:BLOCKS, a JSON model file or an\n"
           "                     ONNX file (.onnx)\n"
           "  --batch N          samples per step (default 32)\n"
           "  --grain N          samples per layer task, in [1, batch] (default 1)\n"
           "  --steps N          consecutive training steps in the graph (default 1)\n"
           "  --reduction R      redux (default) or manual, as dahlsim train\n"
           "  --redux-copies N   REDUX: per-worker copies StarPU reduces per gradient and step (default: the\n"
           "                     workers, at most the batch; the real number depends on the schedule)\n"
           "  --momentum X       as dahlsim train (default 0.9; 0 changes the SGD tasks)\n"
           "  --perfmodel KIND   history (default), regression or nl-regression\n"
           "  --cpus N, --gpus N the workers the graph is for (default: the machine's platform; CUDA costs\n"
           "                     only with --gpus > 0)\n"
           "  --group G          one task type per perf-model symbol (default) or per symbol and footprint\n",
           dag_usage, list);
}

struct dag_opts {
    const char *out, *priorities, *csv, *save_graphs;
    const char *machine, *dataset, *model, *reduction, *perfmodel, *group;
    long batch, grain, steps, redux_copies;
    double momentum;
    bool control, slow_factors, auto_set;
    enum dahl_autoprio_heuristic heuristic;
    long seed, tasks, min_types, max_types, max_cpus, max_gpus, cpus, gpus, interval, graphs;
};

static int dag_parse(int argc, char **argv, struct dag_opts *o, int *nargs, char ***args)
{
    enum {
        O_OUT = 256, O_PRIO, O_AUTO, O_CONTROL, O_CPUS, O_GPUS, O_INTERVAL, O_SLOW, O_SEED, O_TASKS, O_MINT, O_MAXT,
        O_MAXC, O_MAXG, O_GRAPHS, O_CSV, O_SAVE, O_HELP, O_MACHINE, O_DATASET, O_MODEL, O_BATCH, O_GRAIN, O_STEPS,
        O_REDUCTION, O_COPIES, O_MOMENTUM, O_PERFMODEL, O_GROUP
    };
    static const struct option options[] = {
        {"out", required_argument, NULL, O_OUT},         {"priorities", required_argument, NULL, O_PRIO},
        {"auto", required_argument, NULL, O_AUTO},       {"control", no_argument, NULL, O_CONTROL},
        {"cpus", required_argument, NULL, O_CPUS},       {"gpus", required_argument, NULL, O_GPUS},
        {"interval", required_argument, NULL, O_INTERVAL}, {"slow-factors", no_argument, NULL, O_SLOW},
        {"seed", required_argument, NULL, O_SEED},       {"tasks", required_argument, NULL, O_TASKS},
        {"min-types", required_argument, NULL, O_MINT},  {"max-types", required_argument, NULL, O_MAXT},
        {"max-cpus", required_argument, NULL, O_MAXC},   {"max-gpus", required_argument, NULL, O_MAXG},
        {"graphs", required_argument, NULL, O_GRAPHS},   {"csv", required_argument, NULL, O_CSV},
        {"save-graphs", required_argument, NULL, O_SAVE}, {"help", no_argument, NULL, O_HELP},
        {"machine", required_argument, NULL, O_MACHINE}, {"dataset", required_argument, NULL, O_DATASET},
        {"model", required_argument, NULL, O_MODEL},     {"batch", required_argument, NULL, O_BATCH},
        {"grain", required_argument, NULL, O_GRAIN},
        {"steps", required_argument, NULL, O_STEPS},     {"reduction", required_argument, NULL, O_REDUCTION},
        {"redux-copies", required_argument, NULL, O_COPIES}, {"momentum", required_argument, NULL, O_MOMENTUM},
        {"perfmodel", required_argument, NULL, O_PERFMODEL}, {"group", required_argument, NULL, O_GROUP},
        {NULL, 0, NULL, 0},
    };
    *o = (struct dag_opts){.seed = 1, .tasks = 1000, .min_types = 3, .max_types = 6, .max_cpus = 15, .max_gpus = 15,
                           .cpus = -1, .gpus = -1, .interval = 32, .graphs = 32, .dataset = "fashion-mnist",
                           .model = "lenet", .reduction = "redux", .perfmodel = "history", .group = "symbol",
                           .batch = 32, .grain = 1, .steps = 1, .redux_copies = -1, .momentum = 0.9};
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_OUT: o->out = optarg; break;
        case O_PRIO: o->priorities = optarg; break;
        case O_AUTO:
            if (!dahl_autoprio_heuristic_parse(optarg, &o->heuristic)) {
                char list[128];
                dahl_autoprio_heuristic_list(list, sizeof(list));
                dahlsim_error("dag: --auto: expected a heuristic (%s), got \"%s\"", list, optarg);
                ok = false;
            }
            o->auto_set = true;
            break;
        case O_CONTROL: o->control = true; break;
        case O_CPUS: ok = dahlsim_parse_int("--cpus", optarg, 0, 4096, &o->cpus); break;
        case O_GPUS: ok = dahlsim_parse_int("--gpus", optarg, 0, 4096, &o->gpus); break;
        case O_INTERVAL: ok = dahlsim_parse_int("--interval", optarg, 1, 1000000000, &o->interval); break;
        case O_SLOW: o->slow_factors = true; break;
        case O_SEED: ok = dahlsim_parse_int("--seed", optarg, 0, 2147483647, &o->seed); break;
        case O_TASKS: ok = dahlsim_parse_int("--tasks", optarg, 1, 10000000, &o->tasks); break;
        case O_MINT: ok = dahlsim_parse_int("--min-types", optarg, 1, DAHLSIM_DAG_MAX_TYPES, &o->min_types); break;
        case O_MAXT: ok = dahlsim_parse_int("--max-types", optarg, 1, DAHLSIM_DAG_MAX_TYPES, &o->max_types); break;
        case O_MAXC: ok = dahlsim_parse_int("--max-cpus", optarg, 1, 4096, &o->max_cpus); break;
        case O_MAXG: ok = dahlsim_parse_int("--max-gpus", optarg, 1, 4096, &o->max_gpus); break;
        case O_GRAPHS: ok = dahlsim_parse_int("--graphs", optarg, 1, 100000, &o->graphs); break;
        case O_CSV: o->csv = optarg; break;
        case O_SAVE: o->save_graphs = optarg; break;
        case O_MACHINE: o->machine = optarg; break;
        case O_DATASET: o->dataset = optarg; break;
        case O_MODEL: o->model = optarg; break;
        case O_BATCH: ok = dahlsim_parse_int("--batch", optarg, 1, 65536, &o->batch); break;
        case O_GRAIN: ok = dahlsim_parse_int("--grain", optarg, 1, 65536, &o->grain); break;
        case O_STEPS: ok = dahlsim_parse_int("--steps", optarg, 1, 100000, &o->steps); break;
        case O_COPIES: ok = dahlsim_parse_int("--redux-copies", optarg, 1, 1024, &o->redux_copies); break;
        case O_REDUCTION: o->reduction = optarg; break;
        case O_PERFMODEL: o->perfmodel = optarg; break;
        case O_GROUP: o->group = optarg; break;
        case O_MOMENTUM: {
            char *end;
            o->momentum = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !isfinite(o->momentum) || o->momentum < 0.0 || o->momentum >= 1.0) {
                dahlsim_error("dag: --momentum: expected a number in [0, 1), got \"%s\"", optarg);
                ok = false;
            }
            break;
        }
        case O_HELP: dag_help(); return -1;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("dag", opt, argv, dag_usage);
        }
        if (!ok)
            return DAHLSIM_EXIT_USAGE;
    }
    if (o->min_types > o->max_types) {
        dahlsim_error("dag: --min-types %ld: expected at most --max-types (%ld)", o->min_types, o->max_types);
        return DAHLSIM_EXIT_USAGE;
    }
    *nargs = argc - optind;
    *args = argv + optind;
    return 0;
}

static void print_list(FILE *f, const struct dahlsim_dag *g, const struct dahlsim_prio *p, int a)
{
    fputc('[', f);
    for (int k = 0; k < p->n[a]; k++)
        fprintf(f, "%s\"%s\"", k > 0 ? ", " : "", g->names[p->order[a][k]]);
    fputc(']', f);
}

static int dag_gen(const struct dag_opts *o, int nargs)
{
    if (nargs != 0 || o->out == NULL) {
        dahlsim_error("dag gen: expected --out FILE and no other argument");
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_dag_gen_conf gc = {.seed = (uint64_t)o->seed, .ntasks = (int)o->tasks, .min_types = (int)o->min_types,
                                      .max_types = (int)o->max_types, .max_cpus = (int)o->max_cpus,
                                      .max_gpus = (int)o->max_gpus};
    struct dahlsim_dag g;
    char err[512];
    if (dahlsim_dag_generate(&gc, &g, err, sizeof(err)) != 0) {
        dahlsim_error("dag gen: %s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    int ret = dahlsim_dag_save(&g, o->out, err, sizeof(err));
    if (ret != 0)
        dahlsim_error("dag gen: %s", err);
    else
        fprintf(stderr, "dahlsim dag gen: %s: %d tasks, %d types, %d CPUs + %d GPUs, pipeline makespan %.6g s\n", o->out,
                g.ntasks, g.ntypes, g.cpus, g.gpus, g.pipeline_s);
    dahlsim_dag_fini(&g);
    return ret != 0 ? DAHLSIM_EXIT_FAILURE : DAHLSIM_EXIT_OK;
}

static int dag_run(const struct dag_opts *o, int nargs, char **args)
{
    int modes = (o->priorities != NULL) + o->auto_set + o->control;
    if (nargs != 1 || modes != 1) {
        dahlsim_error("dag run: expected one GRAPH and exactly one of --priorities FILE, --auto HEURISTIC, --control");
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_dag g;
    char err[512];
    if (dahlsim_dag_load(args[0], &g, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_emu_conf conf = {.cpus = o->cpus >= 0 ? (int)o->cpus : g.cpus,
                                    .gpus = o->gpus >= 0 ? (int)o->gpus : g.gpus,
                                    .slow_factors = o->slow_factors, .autoprio = o->auto_set,
                                    .heuristic = o->heuristic, .interval = (int)o->interval};
    int status = DAHLSIM_EXIT_OK;
    struct dahlsim_prio prio = {0};
    struct dahlsim_emu_result r;
    if (conf.cpus + conf.gpus < 1) {
        dahlsim_error("dag run: %s: no workers (give --cpus/--gpus; the graph names none)", args[0]);
        status = DAHLSIM_EXIT_USAGE;
    } else if (o->priorities != NULL && dahlsim_prio_load(o->priorities, &g, &prio, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        status = DAHLSIM_EXIT_USAGE;
    } else if (o->control) {
        double ms;
        if (dahlsim_dag_control(&g, &conf, (uint64_t)o->seed, 16, &prio, &ms, err, sizeof(err)) != 0 ||
            dahlsim_dag_emulate(&g, &conf, &prio, &r, err, sizeof(err)) != 0) {
            dahlsim_error("dag run: %s: %s", args[0], err);
            status = DAHLSIM_EXIT_USAGE;
        }
    } else if (dahlsim_dag_emulate(&g, &conf, &prio, &r, err, sizeof(err)) != 0) {
        dahlsim_error("dag run: %s: %s", args[0], err);
        status = DAHLSIM_EXIT_USAGE;
    }
    if (status == DAHLSIM_EXIT_OK) {
        printf("{\"graph\": \"%s\", \"cpus\": %d, \"gpus\": %d, \"priorities\": \"%s\", \"makespan_s\": %.17g, "
               "\"lower_bound_s\": %.17g, \"pipeline_makespan_s\": %.17g, \"tasks_on\": {\"cpu\": %ld, \"gpu\": %ld}, "
               "\"busy_s\": {\"cpu\": %.17g, \"gpu\": %.17g}, \"lists\": {\"cpu\": ",
               args[0], conf.cpus, conf.gpus,
               o->control ? "control" : o->auto_set ? dahl_autoprio_heuristic_name(o->heuristic) : o->priorities,
               r.makespan_s, dahlsim_dag_lower_bound(&g, conf.cpus, conf.gpus), g.pipeline_s, r.tasks_on[0],
               r.tasks_on[1], r.busy_s[0], r.busy_s[1]);
        print_list(stdout, &g, &r.last, DAHL_ARCH_CPU);
        printf(", \"gpu\": ");
        print_list(stdout, &g, &r.last, DAHL_ARCH_GPU);
        printf("}}\n");
    }
    dahlsim_dag_fini(&g);
    return status;
}

/* The CPU and CUDA hosts of a machine's SimGrid platform. False when the file cannot be read. */
static bool platform_workers(const char *machine_dir, const char *machine, int *ncpu, int *ngpu, char *path,
                             size_t size)
{
    snprintf(path, size, "%s/sampling/bus/%s.platform.v4.xml", machine_dir, machine);
    char *text = dahlsim_read_text(path, 16u << 20);
    if (text == NULL)
        return false;
    *ncpu = *ngpu = 0;
    for (const char *p = strstr(text, "id=\""); p != NULL; p = strstr(p + 4, "id=\"")) {
        *ncpu += strncmp(p + 4, "CPU", 3) == 0;
        *ngpu += strncmp(p + 4, "CUDA", 4) == 0;
    }
    free(text);
    return true;
}

static int dag_export(const struct dag_opts *o, int nargs)
{
    if (nargs != 0 || o->out == NULL || o->machine == NULL) {
        dahlsim_error("dag export: expected --machine NAME and --out FILE, and no other argument");
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->grain > o->batch) {
        dahlsim_error("dag export: --grain: expected a number of samples in [1, %ld] (the batch), got %ld", o->batch,
                      o->grain);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_dag_export_conf conf = {.machine = o->machine, .model = o->model, .batch = (int)o->batch,
                                           .steps = (int)o->steps, .momentum = o->momentum != 0.0,
                                           .grain = (int)o->grain};
    struct dahl_dataset_name data;
    if (!dahl_dataset_name_parse(o->dataset, &data)) {
        dahlsim_error("dag export: --dataset: expected " DAHL_DATASET_NAMES ", got \"%s\"", o->dataset);
        return DAHLSIM_EXIT_USAGE;
    }
    long h = data.h, w = data.w, c = data.c;
    conf.h = (int)h, conf.w = (int)w, conf.c = (int)c;
    if (strcmp(o->reduction, "redux") != 0 && strcmp(o->reduction, "manual") != 0) {
        dahlsim_error("dag export: --reduction: expected redux or manual, got \"%s\"", o->reduction);
        return DAHLSIM_EXIT_USAGE;
    }
    conf.manual = strcmp(o->reduction, "manual") == 0;
    enum dahl_perfmodel_kind kind;
    if (dahl_perfmodel_kind_parse(o->perfmodel, &kind) != 0) {
        dahlsim_error("dag export: --perfmodel: expected history, regression or nl-regression, got \"%s\"", o->perfmodel);
        return DAHLSIM_EXIT_USAGE;
    }
    conf.perfmodel = (int)kind;
    if (strcmp(o->group, "symbol") != 0 && strcmp(o->group, "footprint") != 0) {
        dahlsim_error("dag export: --group: expected symbol or footprint, got \"%s\"", o->group);
        return DAHLSIM_EXIT_USAGE;
    }
    conf.group_footprint = strcmp(o->group, "footprint") == 0;
    char dir[PATH_MAX], platform[PATH_MAX + 128];
    if (snprintf(dir, sizeof(dir), "%s/%s", dahlsim_calibration_root(), o->machine) >= (int)sizeof(dir) ||
        !dahlsim_is_dir(dir)) {
        dahlsim_error("dag export: --machine %s: no directory %s", o->machine, dir);
        fprintf(stderr, "hint: machines are the directories of %s (dahlsim calibrate or dahlsim machine synth)\n",
                dahlsim_calibration_root());
        return DAHLSIM_EXIT_USAGE;
    }
    conf.machine_dir = dir;
    int ncpu, ngpu;
    if (!platform_workers(dir, o->machine, &ncpu, &ngpu, platform, sizeof(platform))) {
        dahlsim_error("dag export: --machine %s: cannot read its platform %s: %s", o->machine, platform, strerror(errno));
        return DAHLSIM_EXIT_USAGE;
    }
    conf.cpus = o->cpus >= 0 ? (int)o->cpus : ncpu;
    conf.gpus = o->gpus >= 0 ? (int)o->gpus : ngpu;
    if (conf.cpus > ncpu || conf.gpus > ngpu || conf.cpus + conf.gpus < 1) {
        dahlsim_error("dag export: --cpus %d --gpus %d: expected at least one worker and at most the %d CPUs and %d "
                      "GPUs of %s",
                      conf.cpus, conf.gpus, ncpu, ngpu, platform);
        return DAHLSIM_EXIT_USAGE;
    }
    /* REDUX: StarPU reduces one copy per worker that ran a REDUX task on the tensor; with many samples per
     * step every worker usually has, hence the default. */
    int workers = conf.cpus + conf.gpus;
    conf.redux_copies = o->redux_copies > 0 ? (int)o->redux_copies : workers < conf.batch ? workers : conf.batch;
    struct dahlsim_dag g;
    char err[1024];
    if (dahlsim_dag_export(&conf, &g, err, sizeof(err)) != 0) {
        dahlsim_error("dag export: %s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    int ret = dahlsim_dag_save(&g, o->out, err, sizeof(err));
    if (ret != 0)
        dahlsim_error("dag export: %s", err);
    else
        fprintf(stderr, "dahlsim dag export: %s: %d tasks, %d types, %d CPUs + %d GPUs, lower bound %.6g s\n", o->out,
                g.ntasks, g.ntypes, g.cpus, g.gpus, dahlsim_dag_lower_bound(&g, g.cpus, g.gpus));
    dahlsim_dag_fini(&g);
    return ret != 0 ? DAHLSIM_EXIT_FAILURE : DAHLSIM_EXIT_OK;
}

/* The table's column order: the paper's Table 3. */
static const enum dahl_autoprio_heuristic table_order[DAHL_AUTOPRIO_NHEURISTICS] = {
    DAHL_AUTOPRIO_OFFSET, DAHL_AUTOPRIO_SOFTPLUS, DAHL_AUTOPRIO_INTERP,
    DAHL_AUTOPRIO_PURWS,  DAHL_AUTOPRIO_PRWS,     DAHL_AUTOPRIO_NTC,
};

/* Running totals of the table's slowdowns: per heuristic, and of each graph's best (the last column). */
struct table_totals {
    double sum[DAHL_AUTOPRIO_NHEURISTICS + 1], worst[DAHL_AUTOPRIO_NHEURISTICS + 1];
    int best_under_110, wins[DAHL_AUTOPRIO_NHEURISTICS];
};

static void table_header(FILE *csv)
{
    printf("| graph | CPUs | GPUs | types | tasks | lower bound s | control s | control/LB |");
    for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
        printf(" %s |", dahl_autoprio_heuristic_name(table_order[h]));
    printf(" best |\n|---|---|---|---|---|---|---|---|");
    for (int h = 0; h <= DAHL_AUTOPRIO_NHEURISTICS; h++)
        printf("---|");
    printf("\n");
    if (csv != NULL) {
        fprintf(csv, "graph,seed,cpus,gpus,types,tasks,lower_bound_s,pipeline_s,control_s");
        for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
            fprintf(csv, ",%s", dahl_autoprio_heuristic_name(table_order[h]));
        fprintf(csv, ",best\n");
    }
}

/* Graph i of the table into g: the GRAPH file args[i] (with --cpus/--gpus applied), or, without files, the
 * graph generated from gseed. Returns DAHLSIM_EXIT_OK (g to be finalised) or an exit code after the error. */
static int table_graph(const struct dag_opts *o, int nargs, char **args, long i, uint64_t gseed,
                       struct dahlsim_dag *g)
{
    char err[1024];
    if (nargs == 0) {
        struct dahlsim_dag_gen_conf gc = {.seed = gseed, .ntasks = (int)o->tasks, .min_types = (int)o->min_types,
                                          .max_types = (int)o->max_types, .max_cpus = (int)o->max_cpus,
                                          .max_gpus = (int)o->max_gpus};
        if (dahlsim_dag_generate(&gc, g, err, sizeof(err)) != 0) {
            dahlsim_error("dag table: graph %ld: %s", i, err);
            return DAHLSIM_EXIT_USAGE;
        }
        return DAHLSIM_EXIT_OK;
    }
    if (dahlsim_dag_load(args[i], g, err, sizeof(err)) != 0) {
        dahlsim_error("dag table: %s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->cpus >= 0 || o->gpus >= 0) {
        g->cpus = o->cpus >= 0 ? (int)o->cpus : g->cpus;
        g->gpus = o->gpus >= 0 ? (int)o->gpus : g->gpus;
    }
    if (g->cpus + g->gpus < 1) {
        dahlsim_error("dag table: %s: no workers (give --cpus/--gpus; the graph names none)", args[i]);
        dahlsim_dag_fini(g);
        return DAHLSIM_EXIT_USAGE;
    }
    return DAHLSIM_EXIT_OK;
}

/* One row of the table (and of the CSV): g's control priorities, then each heuristic's slowdown against them,
 * added to the totals. Returns DAHLSIM_EXIT_OK or DAHLSIM_EXIT_FAILURE after the error. */
static int table_row(const struct dag_opts *o, const struct dahlsim_dag *g, long i, const char *label,
                     uint64_t gseed, FILE *csv, struct table_totals *tt)
{
    char err[1024];
    struct dahlsim_emu_conf conf = {.cpus = g->cpus, .gpus = g->gpus, .slow_factors = o->slow_factors,
                                    .interval = (int)o->interval};
    struct dahlsim_prio control;
    double control_s, slow[DAHL_AUTOPRIO_NHEURISTICS], best = INFINITY;
    if (dahlsim_dag_control(g, &conf, gseed, 16, &control, &control_s, err, sizeof(err)) != 0) {
        dahlsim_error("dag table: graph %ld: %s", i, err);
        return DAHLSIM_EXIT_FAILURE;
    }
    double lb = dahlsim_dag_lower_bound(g, g->cpus, g->gpus);
    /* %.4g: generated graphs cost seconds to hours, exported training steps milliseconds. */
    printf("| %s | %d | %d | %d | %d | %.4g | %.4g | %.3f |", label, g->cpus, g->gpus, g->ntypes, g->ntasks, lb,
           control_s, control_s / lb);
    for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++) {
        conf.autoprio = true;
        conf.heuristic = table_order[h];
        struct dahlsim_emu_result r;
        if (dahlsim_dag_emulate(g, &conf, NULL, &r, err, sizeof(err)) != 0) {
            dahlsim_error("dag table: graph %ld: %s", i, err);
            return DAHLSIM_EXIT_FAILURE;
        }
        slow[h] = r.makespan_s / control_s;
        printf(" %.3f |", slow[h]);
        tt->sum[h] += slow[h];
        if (slow[h] > tt->worst[h])
            tt->worst[h] = slow[h];
        if (slow[h] < best)
            best = slow[h];
    }
    for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
        if (slow[h] == best)
            tt->wins[h]++;
    tt->sum[DAHL_AUTOPRIO_NHEURISTICS] += best;
    if (best > tt->worst[DAHL_AUTOPRIO_NHEURISTICS])
        tt->worst[DAHL_AUTOPRIO_NHEURISTICS] = best;
    tt->best_under_110 += best < 1.10;
    printf(" %.3f |\n", best);
    fflush(stdout);
    if (csv != NULL) {
        fprintf(csv, "%s,%llu,%d,%d,%d,%d,%.17g,%.17g,%.17g", label, (unsigned long long)gseed, g->cpus, g->gpus,
                g->ntypes, g->ntasks, lb, g->pipeline_s, control_s);
        for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
            fprintf(csv, ",%.6f", slow[h]);
        fprintf(csv, ",%.6f\n", best);
    }
    return DAHLSIM_EXIT_OK;
}

static void table_footer(const struct table_totals *tt, long ngraphs, double t0)
{
    printf("| mean | | | | | | | |");
    for (int h = 0; h <= DAHL_AUTOPRIO_NHEURISTICS; h++)
        printf(" %.3f |", tt->sum[h] / (double)ngraphs);
    printf("\n| max | | | | | | | |");
    for (int h = 0; h <= DAHL_AUTOPRIO_NHEURISTICS; h++)
        printf(" %.3f |", tt->worst[h]);
    printf("\n| best on | | | | | | | |");
    for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
        printf(" %d |", tt->wins[h]);
    printf(" |\n\nbest heuristic < 1.10 on %d of %ld graphs\n", tt->best_under_110, ngraphs);
    fprintf(stderr, "dahlsim dag table: %ld graphs in %.1f s\n", ngraphs, dahlsim_mono_s() - t0);
}

static int dag_table(const struct dag_opts *o, int nargs, char **args)
{
    if (nargs == 0 && o->max_types > 8) {
        dahlsim_error("dag table: --max-types %ld: expected at most 8 (the control tries every permutation)",
                      o->max_types);
        return DAHLSIM_EXIT_USAGE;
    }
    FILE *csv = NULL;
    if (o->csv != NULL && (csv = fopen(o->csv, "w")) == NULL) {
        dahlsim_error("dag table: --csv %s: cannot write: %s", o->csv, strerror(errno));
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->save_graphs != NULL && dahlsim_make_dirs(o->save_graphs) != 0) {
        dahlsim_error("dag table: --save-graphs %s: cannot create the directory", o->save_graphs);
        if (csv)
            fclose(csv);
        return DAHLSIM_EXIT_USAGE;
    }
    table_header(csv);
    struct table_totals tt;
    memset(&tt, 0, sizeof(tt));
    double t0 = dahlsim_mono_s();
    int status = DAHLSIM_EXIT_OK;
    long ngraphs = nargs > 0 ? nargs : o->graphs;
    for (long i = 0; i < ngraphs && status == DAHLSIM_EXIT_OK; i++) {
        /* One seed per graph, drawn from the table's seed: graph i is the same whatever --graphs is. */
        uint64_t st = (uint64_t)o->seed * 0x100000001b3ull + (uint64_t)i;
        uint64_t gseed = dahl_splitmix64(&st);
        struct dahlsim_dag g;
        status = table_graph(o, nargs, args, i, gseed, &g);
        if (status != DAHLSIM_EXIT_OK)
            break;
        if (o->save_graphs != NULL) {
            char path[4096], err[1024];
            snprintf(path, sizeof(path), "%s/graph-%02ld.json", o->save_graphs, i);
            if (dahlsim_dag_save(&g, path, err, sizeof(err)) != 0)
                dahlsim_error("dag table: %s", err);
        }
        char label[64];
        if (nargs > 0) {
            const char *base = strrchr(args[i], '/');
            snprintf(label, sizeof(label), "%s", base != NULL ? base + 1 : args[i]);
        } else {
            snprintf(label, sizeof(label), "%ld", i);
        }
        status = table_row(o, &g, i, label, gseed, csv, &tt);
        dahlsim_dag_fini(&g);
    }
    if (status == DAHLSIM_EXIT_OK)
        table_footer(&tt, ngraphs, t0);
    if (csv != NULL && fclose(csv) != 0) {
        dahlsim_error("dag table: --csv %s: cannot write", o->csv);
        status = DAHLSIM_EXIT_FAILURE;
    }
    return status;
}

int dahlsim_cmd_dag(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) {
            fputs(dag_usage, stderr);
            return DAHLSIM_EXIT_USAGE;
        }
        dag_help();
        return DAHLSIM_EXIT_OK;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "share") == 0 || strcmp(sub, "share-export") == 0)
        return dahlsim_cmd_dag_share(argc - 1, argv + 1);
    if (strcmp(sub, "gen") != 0 && strcmp(sub, "run") != 0 && strcmp(sub, "table") != 0 && strcmp(sub, "export") != 0) {
        dahlsim_error("dag: unknown subcommand \"%s\" (expected gen, run, table, export, share or share-export)", sub);
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dag_opts o;
    int nargs = 0;
    char **args = NULL;
    int ret = dag_parse(argc - 1, argv + 1, &o, &nargs, &args);
    if (ret != 0)
        return ret < 0 ? DAHLSIM_EXIT_OK : ret;
    if (strcmp(sub, "gen") == 0)
        return dag_gen(&o, nargs);
    if (strcmp(sub, "run") == 0)
        return dag_run(&o, nargs, args);
    if (strcmp(sub, "export") == 0)
        return dag_export(&o, nargs);
    return dag_table(&o, nargs, args);
}

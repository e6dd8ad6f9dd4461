/* `dahlsim dag share` and `dahlsim dag share-export`: the GPU-sharing emulator of the scheduler lab
 * (sim/lab/dahlsim_share.h): option parsing, one emulation or all orders side by side, and the writer of
 * share files from calibrated dahl networks. */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_share.h"

#include "dahl_perfnames.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char share_usage[] =
    "usage: dahlsim dag share FILE [--memory-mib N | --memory-bytes N] [--bandwidth B/S] [--latency S]\n"
    "                       [--order fifo|round-robin|weight|ga|given:FILE] [--policy lru|starpu|belady]\n"
    "                       [--no-prefetch] [--window N] [--population N] [--select M] [--generations G]\n"
    "                       [--patience K] [--mutation X] [--seed N] [--all [--table]]\n"
    "       dahlsim dag share-export --machine NAME --job MODEL:DATASET:BATCH[:STEPS] [--job ...] --out FILE\n"
    "                       [--host-s S] [--memory-mib N | --memory-bytes N] [--bandwidth B/S] [--latency S]\n"
    "                       [--momentum X] [--perfmodel KIND]\n";

static void share_help(void)
{
    printf("%s\n"
           "The GPU-sharing emulator: training jobs take turns on one GPU whose memory holds less than their\n"
           "summed data; each job-step needs all its job's tensors on the GPU, loaded over a full-duplex PCIe\n"
           "link (latency + bytes / bandwidth per tensor), evicting other jobs' tensors (dirty ones are written\n"
           "back first). Deterministic: same file and options, same bytes out. The model, the policies and the\n"
           "orders: docs/scheduler-lab.md, \"GPU sharing emulator\".\n\n"
           "  share         emulate FILE (format dahlsim-share-1); prints one JSON object (makespan, GPU busy\n"
           "                fraction, GPU time waiting for data, per job and in total: end, steps, samples,\n"
           "                compute, wait, bytes and counts of host->GPU and GPU->host transfers, evictions;\n"
           "                the realised order)\n"
           "  share-export  write such a file with one job per --job from a calibration's CUDA perf models\n"
           "                (compute_s: one step's tasks on 1 GPU) and the tensors dahl's network registers\n\n"
           "share options:\n"
           "  --memory-mib N, --memory-bytes N  GPU memory (default: the file's); at least every job's data\n"
           "  --bandwidth B/S, --latency S      the link (default: the file's)\n"
           "  --order O       fifo (default; earliest-ready job first), round-robin, weight (the study's\n"
           "                  reward/penalty heuristic), ga (genetic search) or given:FILE (a JSON array of\n"
           "                  job indices or names, the k-th occurrence of a job being its step k, or a\n"
           "                  `dag share` result whose \"order\" is replayed)\n"
           "  --policy P      eviction: lru (default), starpu (StarPU 1.3.10's mc_list and reclaim), belady\n"
           "                  (MIN; dynamic orders are realised under lru, then replayed)\n"
           "  --no-prefetch   load a step's tensors when the GPU reaches it (default: while the previous\n"
           "                  step computes)\n"
           "  --window N      weight: steps per job in the reward's window (default 4, at most 256)\n"
           "  --population N  ga: orders per generation (default 32, at least 2)\n"
           "  --select M      ga: orders kept per generation (default population / 4, at least 1)\n"
           "  --generations G ga: at most G generations (default 50)\n"
           "  --patience K    ga: stop after K generations without a faster order (default 10)\n"
           "  --mutation X    ga: probability that a child has one element moved (default 0.2)\n"
           "  --seed N        ga: seed of its draws (default 1)\n"
           "  --all           every order (fifo, round-robin, weight, ga, and the given one with\n"
           "                  --order given:FILE) with prefetch on and off, under --policy: a JSON array\n"
           "  --table         with --all: a markdown table instead\n\n"
           "share-export options:\n"
           "  --machine NAME  calibration/NAME (with CUDA perf models and a platform; required)\n"
           "  --job SPEC      MODEL:DATASET:BATCH[:STEPS], MODEL lenet, deep or deep:N, DATASET fashion-mnist\n"
           "                  or synthetic:HxWxC, STEPS default 8 (e.g. lenet:synthetic:128x128x3:32:8);\n"
           "                  repeat for each job (at most %d)\n"
           "  --out FILE      the share file to write (required)\n"
           "  --host-s S      each job's time off the GPU between steps (default 0)\n"
           "  --memory-mib N, --memory-bytes N  GPU memory (default: half the jobs' summed data, at least the\n"
           "                  largest job's)\n"
           "  --bandwidth B/S, --latency S      the link (default: the platform's RAM-CUDA0 link)\n"
           "  --momentum X    as dahlsim train (default 0.9; 0: no velocity tensors)\n"
           "  --perfmodel K   history (default), regression or nl-regression\n",
           share_usage, DAHLSIM_SHARE_MAX_JOBS);
}

struct share_opts {
    const char *order, *policy, *machine, *out, *perfmodel;
    const char *jobs[DAHLSIM_SHARE_MAX_JOBS];
    int njobs;
    long memory_mib, memory_bytes, window, seed;
    double bandwidth, latency, host_s, momentum;
    struct dahlsim_share_ga_conf ga;
    bool no_prefetch, all, table, select_set;
};

enum {
    O_MEM_MIB = 256, O_MEM_BYTES, O_BANDWIDTH, O_LATENCY, O_ORDER, O_POLICY, O_NO_PREFETCH, O_WINDOW, O_POPULATION,
    O_SELECT, O_GENERATIONS, O_PATIENCE, O_MUTATION, O_SEED, O_ALL, O_TABLE, O_MACHINE, O_JOB, O_OUT, O_HOST,
    O_MOMENTUM, O_PERFMODEL, O_HELP
};

static const struct option share_options[] = {
    {"memory-mib", required_argument, NULL, O_MEM_MIB},   {"memory-bytes", required_argument, NULL, O_MEM_BYTES},
    {"bandwidth", required_argument, NULL, O_BANDWIDTH},  {"latency", required_argument, NULL, O_LATENCY},
    {"order", required_argument, NULL, O_ORDER},          {"policy", required_argument, NULL, O_POLICY},
    {"no-prefetch", no_argument, NULL, O_NO_PREFETCH},    {"window", required_argument, NULL, O_WINDOW},
    {"population", required_argument, NULL, O_POPULATION}, {"select", required_argument, NULL, O_SELECT},
    {"generations", required_argument, NULL, O_GENERATIONS}, {"patience", required_argument, NULL, O_PATIENCE},
    {"mutation", required_argument, NULL, O_MUTATION},    {"seed", required_argument, NULL, O_SEED},
    {"all", no_argument, NULL, O_ALL},                    {"table", no_argument, NULL, O_TABLE},
    {"machine", required_argument, NULL, O_MACHINE},      {"job", required_argument, NULL, O_JOB},
    {"out", required_argument, NULL, O_OUT},              {"host-s", required_argument, NULL, O_HOST},
    {"momentum", required_argument, NULL, O_MOMENTUM},    {"perfmodel", required_argument, NULL, O_PERFMODEL},
    {"help", no_argument, NULL, O_HELP},                  {NULL, 0, NULL, 0},
};

static bool share_set_int(int opt, const char *arg, struct share_opts *o)
{
    long v;
    switch (opt) {
    case O_MEM_MIB: return dahlsim_parse_int("--memory-mib", arg, 1, 1L << 33, &o->memory_mib);
    case O_MEM_BYTES: return dahlsim_parse_int("--memory-bytes", arg, 1, 1L << 53, &o->memory_bytes);
    case O_WINDOW: return dahlsim_parse_int("--window", arg, 1, 256, &o->window);
    case O_SEED: return dahlsim_parse_int("--seed", arg, 0, 2147483647, &o->seed);
    case O_POPULATION:
        if (!dahlsim_parse_int("--population", arg, -1000000, 100000, &v))
            return false;
        o->ga.population = (int)v;
        return true;
    case O_SELECT:
        o->select_set = true;
        if (!dahlsim_parse_int("--select", arg, 1, 100000, &v))
            return false;
        o->ga.select = (int)v;
        return true;
    case O_GENERATIONS:
        if (!dahlsim_parse_int("--generations", arg, 1, 1000000, &v))
            return false;
        o->ga.generations = (int)v;
        return true;
    default:
        if (!dahlsim_parse_int("--patience", arg, 1, 1000000, &v))
            return false;
        o->ga.patience = (int)v;
        return true;
    }
}

static bool share_set(int opt, const char *arg, void *ctx)
{
    struct share_opts *o = ctx;
    switch (opt) {
    case O_BANDWIDTH: return dahlsim_parse_double("--bandwidth", arg, 1e-300, 1e300, &o->bandwidth);
    case O_LATENCY: return dahlsim_parse_double("--latency", arg, 0.0, 1e6, &o->latency);
    case O_MUTATION: return dahlsim_parse_double("--mutation", arg, 0.0, 1.0, &o->ga.mutation);
    case O_HOST: return dahlsim_parse_double("--host-s", arg, 0.0, 1e9, &o->host_s);
    case O_MOMENTUM: return dahlsim_parse_double("--momentum", arg, 0.0, 0.999999, &o->momentum);
    case O_ORDER: o->order = arg; return true;
    case O_POLICY: o->policy = arg; return true;
    case O_NO_PREFETCH: o->no_prefetch = true; return true;
    case O_ALL: o->all = true; return true;
    case O_TABLE: o->table = true; return true;
    case O_MACHINE: o->machine = arg; return true;
    case O_OUT: o->out = arg; return true;
    case O_PERFMODEL: o->perfmodel = arg; return true;
    case O_JOB:
        if (o->njobs == DAHLSIM_SHARE_MAX_JOBS) {
            dahlsim_error("dag share-export: --job: at most %d jobs", DAHLSIM_SHARE_MAX_JOBS);
            return false;
        }
        o->jobs[o->njobs++] = arg;
        return true;
    default: return share_set_int(opt, arg, o);
    }
}

static const struct dahlsim_options share_parse = {"dag share", share_usage, share_options, O_HELP, share_help,
                                                   share_set};

/* Parses argv (argv[0]: the subcommand) into o; *nargs and *args: the positional arguments. Returns 0 (help
 * printed when *help) or -EINVAL after the error. */
static int share_parse_options(int argc, char **argv, struct share_opts *o, int *nargs, char ***args, bool *help)
{
    *o = (struct share_opts){.order = "fifo", .policy = "lru", .window = 4, .seed = 1, .memory_mib = -1,
                             .memory_bytes = -1, .bandwidth = -1.0, .latency = -1.0, .momentum = 0.9,
                             .perfmodel = "history"};
    dahlsim_share_ga_defaults(&o->ga);
    int ret = dahlsim_options_parse(&share_parse, argc, argv, o, help);
    if (ret != 0 || *help)
        return ret;
    if (!o->select_set)
        o->ga.select = o->ga.population / 4 > 1 ? o->ga.population / 4 : 1;
    if (o->memory_mib > 0 && o->memory_bytes > 0) {
        dahlsim_usage_error(share_usage, "dag share: expected --memory-mib or --memory-bytes, not both");
        return -EINVAL;
    }
    *nargs = argc - optind;
    *args = argv + optind;
    return 0;
}

/* Applies the memory and link options to s; memory_field gets the option naming the memory. */
static void share_override(const struct share_opts *o, struct dahlsim_share *s, char *memory_field, size_t size)
{
    if (o->memory_mib > 0) {
        s->memory_bytes = (uint64_t)o->memory_mib << 20;
        snprintf(memory_field, size, "--memory-mib %ld", o->memory_mib);
    } else if (o->memory_bytes > 0) {
        s->memory_bytes = (uint64_t)o->memory_bytes;
        snprintf(memory_field, size, "--memory-bytes");
    }
    if (o->bandwidth > 0.0)
        s->bandwidth_bytes_per_s = o->bandwidth;
    if (o->latency >= 0.0)
        s->latency_s = o->latency;
}

/* One emulation: order (GA: the search) under conf. */
static int share_one(const struct dahlsim_share *s, const struct dahlsim_share_conf *conf,
                     const struct share_opts *o, enum dahlsim_share_order order, const int *given, int ngiven,
                     cJSON **out, char *err, size_t err_size)
{
    struct dahlsim_share_result r;
    struct dahlsim_share_ga_stats stats;
    int ret;
    if (order == DAHLSIM_SHARE_GA) {
        struct dahlsim_share_ga_conf ga = o->ga;
        ga.seed = (uint64_t)o->seed;
        ret = dahlsim_share_ga(s, conf, &ga, &r, &stats, err, err_size);
    } else {
        ret = dahlsim_share_run(s, conf, order, given, ngiven, &r, err, err_size);
    }
    if (ret != 0)
        return ret;
    *out = dahlsim_share_result_json(s, conf, dahlsim_share_order_name(order), &r,
                                     order == DAHLSIM_SHARE_GA ? &stats : NULL);
    dahlsim_share_result_fini(&r);
    if (*out == NULL) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

static void share_table(const cJSON *all)
{
    printf("| order | prefetch | makespan s | GPU busy | GPU wait for data s | host->GPU MiB | GPU->host MiB | "
           "evictions |\n|---|---|---|---|---|---|---|---|\n");
    const cJSON *r;
    cJSON_ArrayForEach(r, all)
    {
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(r, "total");
#define NUM(o, k) cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k))
        printf("| %s | %s | %.6f | %.3f | %.6f | %.1f | %.1f | %.0f |\n",
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "order_kind")),
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "prefetch")) ? "on" : "off", NUM(r, "makespan_s"),
               NUM(r, "gpu_busy_fraction"), NUM(r, "gpu_wait_for_data_s"), NUM(total, "h2d_bytes") / 1048576.0,
               NUM(total, "d2h_bytes") / 1048576.0, NUM(total, "evictions"));
#undef NUM
    }
}

/* --all: every order x prefetch on/off into a JSON array (or a table). */
static int share_all(const struct dahlsim_share *s, struct dahlsim_share_conf conf, const struct share_opts *o,
                     const int *given, int ngiven, char *err, size_t err_size)
{
    cJSON *all = cJSON_CreateArray();
    int ret = all == NULL ? -ENOMEM : 0;
    for (int order = 0; ret == 0 && order < DAHLSIM_SHARE_NORDERS; order++) {
        if (order == DAHLSIM_SHARE_GIVEN && given == NULL)
            continue;
        for (int pf = 1; ret == 0 && pf >= 0; pf--) {
            conf.prefetch = pf;
            cJSON *one = NULL;
            ret = share_one(s, &conf, o, (enum dahlsim_share_order)order, given, ngiven, &one, err, err_size);
            if (ret == 0)
                cJSON_AddItemToArray(all, one);
        }
    }
    if (ret == 0 && o->table) {
        share_table(all);
    } else if (ret == 0) {
        char *text = cJSON_Print(all);
        if (text != NULL)
            printf("%s\n", text);
        free(text);
    }
    cJSON_Delete(all);
    return ret;
}

static int share_main(const struct share_opts *o, int nargs, char **args)
{
    if (nargs != 1)
        return dahlsim_usage_error(share_usage, "dag share: expected one FILE, got %d arguments", nargs);
    char err[1024], field[64] = "";
    enum dahlsim_share_policy policy;
    enum dahlsim_share_order order;
    const char *given_path = strncmp(o->order, "given:", 6) == 0 ? o->order + 6 : NULL;
    if (!dahlsim_share_policy_parse(o->policy, &policy, err, sizeof(err))) {
        dahlsim_error("dag share: --policy: %s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    if (given_path != NULL) {
        order = DAHLSIM_SHARE_GIVEN;
    } else if (!dahlsim_share_order_parse(o->order, &order, err, sizeof(err)) || order == DAHLSIM_SHARE_GIVEN) {
        dahlsim_error("dag share: --order: expected one of fifo, round-robin, weight, ga, given:FILE, got \"%s\"",
                      o->order);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->ga.population < 2) {
        dahlsim_error("dag share: --population %d: expected at least 2 orders", o->ga.population);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_share s;
    int ret = dahlsim_share_load(args[0], &s, err, sizeof(err));
    if (ret != 0) {
        dahlsim_error("dag share: %s", err);
        return dahlsim_exit_of(ret);
    }
    share_override(o, &s, field, sizeof(field));
    int *given = NULL, ngiven = 0;
    if (field[0] != '\0' || o->bandwidth > 0.0 || o->latency >= 0.0)
        ret = dahlsim_share_check(&s, field[0] != '\0' ? field : "gpu_memory_bytes", err, sizeof(err));
    if (ret == 0 && given_path != NULL)
        ret = dahlsim_share_order_load(given_path, &s, &given, &ngiven, err, sizeof(err));
    struct dahlsim_share_conf conf = {.policy = policy, .prefetch = !o->no_prefetch, .window = (int)o->window};
    cJSON *one = NULL;
    if (ret == 0 && o->all) {
        ret = share_all(&s, conf, o, given, ngiven, err, sizeof(err));
    } else if (ret == 0 && (ret = share_one(&s, &conf, o, order, given, ngiven, &one, err, sizeof(err))) == 0) {
        char *text = cJSON_Print(one);
        if (text != NULL)
            printf("%s\n", text);
        free(text);
        cJSON_Delete(one);
    }
    if (ret != 0)
        dahlsim_error("dag share: %s", err);
    free(given);
    dahlsim_share_fini(&s);
    return dahlsim_exit_of(ret);
}

/* --job MODEL:DATASET:BATCH[:STEPS] into job (name and model point into the caller's buffers). */
static bool parse_job_spec(const char *spec, int index, struct dahlsim_share_export_job *job, char *name,
                           size_t name_size, char *model, size_t model_size)
{
    char buf[256], *tok[8];
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *save = NULL, *t = strtok_r(buf, ":", &save); t != NULL && n < 8; t = strtok_r(NULL, ":", &save))
        tok[n++] = t;
    int k = 1;
    long h = 28, w = 28, c = 1, batch = 0, steps = 8;
    char tail;
    snprintf(model, model_size, "%s", n > 0 ? tok[0] : "");
    if (n > 1 && strcmp(tok[0], "deep") == 0 && strspn(tok[1], "0123456789") == strlen(tok[1]))
        snprintf(model, model_size, "deep:%s", tok[k++]);
    bool ok = n > k;
    if (ok && strcmp(tok[k], "fashion-mnist") == 0)
        k++;
    else if (ok && strcmp(tok[k], "synthetic") == 0 && n > k + 1)
        ok = sscanf(tok[k + 1], "%ldx%ldx%ld%c", &h, &w, &c, &tail) == 3 && h >= 1 && w >= 1 && c >= 1 &&
             h <= 4096 && w <= 4096 && c <= 64, k += 2;
    else
        ok = false;
    char *end = NULL;
    if (ok && n > k)
        batch = strtol(tok[k++], &end, 10), ok = *end == '\0' && batch >= 1 && batch <= 65536;
    else
        ok = false;
    if (ok && n > k)
        steps = strtol(tok[k++], &end, 10), ok = *end == '\0' && steps >= 1 && steps <= 1000000;
    if (!ok || n != k) {
        dahlsim_error("dag share-export: --job %s: expected MODEL:DATASET:BATCH[:STEPS] (MODEL lenet, deep or "
                      "deep:N; DATASET fashion-mnist or synthetic:HxWxC; e.g. lenet:fashion-mnist:32:8)",
                      spec);
        return false;
    }
    snprintf(name, name_size, "%d-%s-%ldx%ldx%ld-b%ld", index, model, h, w, c, batch);
    *job = (struct dahlsim_share_export_job){.name = name, .model = model, .c = (int)c, .h = (int)h, .w = (int)w,
                                             .batch = (int)batch, .steps = (int)steps, .host_s = 0.0};
    return true;
}

/* Memory and link of an exported file: the options, else half the summed data (at least the largest job's)
 * and the platform's link. */
static int export_finish(const struct share_opts *o, const char *dir, struct dahlsim_share *s, char *err,
                         size_t err_size)
{
    uint64_t sum = 0, largest = 0;
    for (int j = 0; j < s->njobs; j++) {
        uint64_t b = dahlsim_share_job_bytes(&s->jobs[j]);
        sum += b;
        largest = b > largest ? b : largest;
    }
    s->memory_bytes = sum / 2 > largest ? sum / 2 : largest;
    int ret = 0;
    if (o->bandwidth <= 0.0 || o->latency < 0.0)
        ret = dahlsim_share_platform_link(dir, o->machine, &s->bandwidth_bytes_per_s, &s->latency_s, err, err_size);
    char field[64] = "";
    share_override(o, s, field, sizeof(field));
    if (ret == 0)
        ret = dahlsim_share_check(s, field[0] != '\0' ? field : "the default memory", err, err_size);
    return ret;
}

static int share_export_main(const struct share_opts *o)
{
    if (o->machine == NULL || o->out == NULL || o->njobs == 0)
        return dahlsim_usage_error(share_usage, "dag share-export: expected --machine NAME, --out FILE and --job");
    char dir[PATH_MAX], err[1024];
    if (snprintf(dir, sizeof(dir), "%s/%s", dahlsim_calibration_root(), o->machine) >= (int)sizeof(dir) ||
        !dahlsim_is_dir(dir)) {
        dahlsim_error("dag share-export: --machine %s: no directory %s", o->machine, dir);
        return DAHLSIM_EXIT_USAGE;
    }
    enum dahl_perfmodel_kind kind;
    if (dahl_perfmodel_kind_parse(o->perfmodel, &kind) != 0) {
        dahlsim_error("dag share-export: --perfmodel: expected history, regression or nl-regression, got \"%s\"",
                      o->perfmodel);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_share_export_conf conf = {.machine_dir = dir, .machine = o->machine,
                                             .momentum = o->momentum != 0.0, .perfmodel = (int)kind};
    struct dahlsim_share s;
    memset(&s, 0, sizeof(s));
    int ret = 0;
    for (int i = 0; i < o->njobs && ret == 0; i++) {
        char name[64], model[32];
        struct dahlsim_share_export_job job;
        if (!parse_job_spec(o->jobs[i], i, &job, name, sizeof(name), model, sizeof(model))) {
            dahlsim_share_fini(&s);
            return DAHLSIM_EXIT_USAGE;
        }
        job.host_s = o->host_s;
        ret = dahlsim_share_export_job(&conf, &job, &s, err, sizeof(err));
    }
    if (ret == 0)
        ret = export_finish(o, dir, &s, err, sizeof(err));
    if (ret == 0) {
        snprintf(s.source, sizeof(s.source), "dahlsim dag share-export --machine %s (%s perf models, 1 GPU), momentum %s",
                 o->machine, o->perfmodel, conf.momentum ? "on" : "off");
        ret = dahlsim_share_save(&s, o->out, err, sizeof(err));
    }
    if (ret != 0)
        dahlsim_error("dag share-export: %s", err);
    else
        fprintf(stderr, "dahlsim dag share-export: %s: %d jobs, GPU memory %llu bytes\n", o->out, s.njobs,
                (unsigned long long)s.memory_bytes);
    dahlsim_share_fini(&s);
    return dahlsim_exit_of(ret);
}

int dahlsim_cmd_dag_share(int argc, char **argv)
{
    struct share_opts o;
    int nargs = 0;
    char **args = NULL;
    bool help = false;
    int ret = share_parse_options(argc, argv, &o, &nargs, &args, &help);
    if (ret != 0 || help)
        return dahlsim_exit_of(ret);
    if (strcmp(argv[0], "share") == 0)
        return share_main(&o, nargs, args);
    if (nargs != 0)
        return dahlsim_unexpected_argument("dag share-export", args[0], share_usage);
    return share_export_main(&o);
}

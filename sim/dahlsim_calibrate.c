/* `dahlsim calibrate`: measures, on the machine it runs on, the StarPU perf models of every dahl codelet at
 * every shape a set of training setups ("covers") needs, plus StarPU's bus measurements and generated
 * platform, and stores them as calibration/NAME/ (sampling/ is what STARPU_PERF_MODEL_DIR points at in
 * simulation, STARPU_HOSTNAME=NAME) with a manifest.json.
 *
 * How: rounds of the native training program (this same binary's `train`, STARPU_CALIBRATE=1) until a short
 * simulated run of the same setup (build/dahlsim-sim sim-train against the new files) prints no "not
 * calibrated" warning: StarPU's own criterion (STARPU_CALIBRATE_MINIMUM samples per footprint and worker
 * architecture) checked by the program that will use the models. Outliers: StarPU's history update already
 * refuses samples more than STARPU_HISTORY_MAX_ERROR % away from the running mean; on top of that every entry
 * whose relative standard deviation exceeds --max-rsd is flagged in the report, and --recalibrate-flagged
 * measures the codelets of flagged entries again from scratch. Everything is written to a temporary
 * directory next to the destination and moved into place at the end, so an interrupted or failed
 * calibration leaves the previous one intact. */
#include "dahlsim_manifest.h"
#include "dahlsim_cli.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_fs.h"
#include "dahlsim_scenario.h"
#include "dahlsim_spawn.h"

#include "dahl_codelets.h"
#include "dahl_dataset.h"
#include "dahl_engine.h"
#include "dahl_kernels.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dahlsim_commit.h" /* DAHLSIM_COMMIT, stamped by every build */
#ifndef DAHLSIM_SIMGRID_VERSION
#define DAHLSIM_SIMGRID_VERSION "unknown"
#endif

/* Buffers for paths built from another path buffer (GCC checks they cannot truncate). */
#define XPATH (PATH_MAX + 512)
#define MAX_COVERS 64
#define DEFAULT_BATCH 8
#define DEFAULT_STEPS 16  /* training steps per round: >= 11 updates of every per-layer codelet */
#define DEFAULT_ROUNDS 6
#define DEFAULT_MAX_RSD 0.5
#define DEFAULT_SCHEDULERS "eager,prio,random,ws,lws,dm,dmda,dmdar,dmdas"
#define DEFAULT_SCHED_STEPS 32 /* of 32 samples, per run timing a policy */
#define CHECK_STEPS 2     /* steps of the simulated check run */
#define CALIBRATE_MINIMUM "10" /* StarPU's default, made explicit */
#define HISTORY_MAX_ERROR "50" /* percent; StarPU's default, made explicit */

/* One training setup to calibrate for: its tasks' shapes depend on the dataset's image shape and the model
 * (not on the batch size: every task is one sample or one layer), and the perf-model kind. */
struct cover {
    char dataset[64];
    char model[PATH_MAX];
    char perfmodel[16];
};

static const char *const default_covers[] = {
    "fashion-mnist", "synthetic:28x28x3", "synthetic:128x128x3", "synthetic:512x512x3",
};

struct calib_opts {
    const char *machine;
    const char *dir; /* the calibration root, holding NAME/ */
    struct cover covers[MAX_COVERS];
    int ncovers;
    long batch, steps, rounds;
    long sched_steps; /* steps of SCHED_BATCH samples per scheduling run */
    int ngpu; /* CUDA workers in every run (0: CPU only) */
    char schedulers[512]; /* comma-separated scenario scheduler values whose push cost is measured; "" none */
    double max_rsd;
    bool force, recalibrate_flagged, report_only, quiet;
};

static const char usage_line[] =
    "usage: dahlsim calibrate --machine NAME [--scenario FILE]... [--cover DATASET[,model=M][,perfmodel=K]]...\n"
    "                         [--force]\n"
    "                         [--recalibrate-flagged] [--max-rsd X] [--rounds N] [--steps N] [--batch N]\n"
    "                         [--ngpu N] [--schedulers LIST] [--sched-steps N] [--dir DIR] [--report]\n"
    "                         [--quiet]\n";

static void help(void)
{
    fputs(usage_line, stdout);
    printf("\nMeasures StarPU perf models of every dahl codelet on this machine (native training with\n"
           "STARPU_CALIBRATE=1) until a simulated run of each covered setup finds them all calibrated, then\n"
           "stores them with StarPU's bus measurements, its platform file and a manifest.json under DIR/NAME/.\n"
           "A re-run only measures the setups whose models are missing or not calibrated enough.\n\n"
           "options:\n"
           "  --machine NAME        the machine's name (letters, digits, '.', '_', '-'): DIR/NAME/, and the\n"
           "                        STARPU_HOSTNAME simulations use\n"
           "  --cover SETUP         a setup to calibrate for, repeatable: DATASET (fashion-mnist or\n"
           "                        synthetic:HxWxC) with optional ,model=lenet|deep|deep:N|FILE and\n"
           "                        ,perfmodel=history|regression|nl-regression. Default: fashion-mnist,\n"
           "                        synthetic:28x28x3, synthetic:128x128x3 and synthetic:512x512x3, LeNet, history\n"
           "  --scenario FILE       cover every setup (dataset, model, perf-model kind) the scenario file's\n"
           "                        points use, sweeps included; repeatable, adds to --cover\n"
           "  --force               measure everything again from scratch (bus included)\n"
           "  --recalibrate-flagged drop the models of codelets with a flagged entry, then measure them again\n"
           "  --max-rsd X           flag entries whose standard deviation exceeds X times their mean\n"
           "                        (default %.2g)\n"
           "  --rounds N            at most N training runs per setup (default %d)\n"
           "  --steps N             training steps per run (default %d)\n"
           "  --batch N             samples per step (default %d)\n"
           "  --schedulers LIST     scheduling policies (scenario values, comma-separated, or none) whose\n"
           "                        cost per push the simulations charge, timed in plain native runs\n"
           "                        (default " DEFAULT_SCHEDULERS ")\n"
           "  --sched-steps N       steps of 32 samples per run timing a policy (default %d)\n"
           "  --ngpu N              CUDA workers next to the CPU ones (default 0; needs a CUDA build): the\n"
           "                        runs then use the dmda scheduler, which sends tasks to whichever worker\n"
           "                        kind still lacks measurements, so both get calibrated\n"
           "  --dir DIR             calibration root (default: calibration/ of the dahlsim tree)\n"
           "  --report              only print the per-model report of an existing calibration\n"
           "  --quiet               no progress lines\n",
           DEFAULT_MAX_RSD, DEFAULT_ROUNDS, DEFAULT_STEPS, DEFAULT_BATCH, DEFAULT_SCHED_STEPS);
}

/* ---- options ------------------------------------------------------------------------------------------ */

/* Parses "DATASET[,model=M][,perfmodel=K]". */
static bool parse_cover(const char *text, struct cover *c)
{
    *c = (struct cover){.model = "lenet", .perfmodel = "history"};
    char buf[PATH_MAX + 128];
    if (strlen(text) >= sizeof(buf)) {
        dahlsim_error("--cover: too long: \"%.40s...\"", text);
        return false;
    }
    strcpy(buf, text);
    char *save = NULL;
    char *part = strtok_r(buf, ",", &save);
    if (part == NULL || !(strcmp(part, "fashion-mnist") == 0 || strncmp(part, "synthetic:", 10) == 0) ||
        strlen(part) >= sizeof(c->dataset)) {
        dahlsim_error("--cover %s: expected a dataset first (fashion-mnist or synthetic:HxWxC), then optional "
                      ",model=M and ,perfmodel=K",
                      text);
        return false;
    }
    strcpy(c->dataset, part);
    while ((part = strtok_r(NULL, ",", &save)) != NULL) {
        if (strncmp(part, "model=", 6) == 0 && part[6] != '\0' && strlen(part + 6) < sizeof(c->model)) {
            strcpy(c->model, part + 6);
        } else if (strncmp(part, "perfmodel=", 10) == 0) {
            enum dahl_perfmodel_kind kind;
            if (dahl_perfmodel_kind_parse(part + 10, &kind) != 0) {
                dahlsim_error("--cover %s: perfmodel: expected history, regression or nl-regression, got \"%s\"",
                              text, part + 10);
                return false;
            }
            strcpy(c->perfmodel, part + 10);
        } else {
            dahlsim_error("--cover %s: unknown part \"%s\" (expected model=M or perfmodel=K)", text, part);
            return false;
        }
    }
    return true;
}

/* The values a scenario gives `key`: its "sweep" list if the key is swept, else its value, else dflt. Strings
 * only; writes at most max pointers into out (owned by root) and returns their count, or -1 after an error
 * naming the file and the field. */
static int scenario_strings(const char *path, const cJSON *root, const char *key, const char *dflt,
                            const char **out, int max)
{
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(root, "sweep");
    const cJSON *swept = cJSON_IsObject(sweep) ? cJSON_GetObjectItemCaseSensitive(sweep, key) : NULL;
    const cJSON *v = swept != NULL ? swept : cJSON_GetObjectItemCaseSensitive(root, key);
    if (v == NULL) {
        out[0] = dflt;
        return 1;
    }
    if (cJSON_IsString(v)) {
        out[0] = v->valuestring;
        return 1;
    }
    int n = 0;
    const cJSON *list = cJSON_IsArray(v) ? v : NULL, *item;
    cJSON_ArrayForEach(item, list)
    {
        if (!cJSON_IsString(item) || n == max)
            break;
        out[n++] = item->valuestring;
    }
    if (!cJSON_IsArray(v) || n == 0 || n != cJSON_GetArraySize(v)) {
        dahlsim_error("calibrate: --scenario %s: \"%s%s\": expected %s (at most %d)", path, swept ? "sweep." : "",
                      key, swept ? "a non-empty list of strings" : "a string", max);
        return -1;
    }
    return n;
}

/* Adds the setups (dataset x model x perf-model kind) that every point of a scenario file needs, without
 * validating the rest of it against a calibration (the one being made may not exist yet). Model files are
 * relative to the scenario, as `dahlsim run` reads them. Returns false after an error naming the file. */
static bool covers_from_scenario(const char *path, struct calib_opts *o)
{
    errno = 0;
    cJSON *root = dahlsim_read_json(path);
    if (root == NULL) {
        dahlsim_error("calibrate: --scenario %s: %s", path, errno ? strerror(errno) : "not valid JSON");
        return false;
    }
    bool ok = cJSON_IsObject(root);
    if (!ok)
        dahlsim_error("calibrate: --scenario %s: expected a JSON object (see scenarios/README.md)", path);
    const char *datasets[64], *models[16], *kinds[4];
    int nd = ok ? scenario_strings(path, root, "dataset", "fashion-mnist", datasets, 64) : -1;
    int nm = nd > 0 ? scenario_strings(path, root, "model", "lenet", models, 16) : -1;
    int nk = nm > 0 ? scenario_strings(path, root, "perfmodel", "history", kinds, 4) : -1;
    ok = nk > 0;
    for (int d = 0; ok && d < nd; d++)
        for (int m = 0; ok && m < nm; m++)
            for (int k = 0; ok && k < nk; k++) {
                char model[PATH_MAX], spec[PATH_MAX + 160];
                const char *slash = strrchr(path, '/');
                bool file = strcmp(models[m], "lenet") != 0 && strncmp(models[m], "deep", 4) != 0;
                if (file && models[m][0] != '/' && slash != NULL)
                    snprintf(model, sizeof(model), "%.*s/%s", (int)(slash - path), path, models[m]);
                else
                    snprintf(model, sizeof(model), "%s", models[m]);
                snprintf(spec, sizeof(spec), "%s,model=%s,perfmodel=%s", datasets[d], model, kinds[k]);
                struct cover c;
                if (!parse_cover(spec, &c)) {
                    fprintf(stderr, "hint: in --scenario %s\n", path);
                    ok = false;
                    break;
                }
                bool known = false;
                for (int i = 0; i < o->ncovers && !known; i++)
                    known = strcmp(o->covers[i].dataset, c.dataset) == 0 && strcmp(o->covers[i].model, c.model) == 0 &&
                            strcmp(o->covers[i].perfmodel, c.perfmodel) == 0;
                if (known)
                    continue;
                if (o->ncovers == MAX_COVERS) {
                    dahlsim_error("calibrate: --scenario %s: more than %d setups in all", path, MAX_COVERS);
                    ok = false;
                    break;
                }
                o->covers[o->ncovers++] = c;
            }
    cJSON_Delete(root);
    return ok;
}

/* Parses argv into o; returns -1 to go on, or an exit code. */
/* --schedulers: "none", or scenario scheduler values separated by commas. */
static bool parse_schedulers(const char *text, struct calib_opts *o)
{
    if (strcmp(text, "none") == 0) {
        o->schedulers[0] = '\0';
        return true;
    }
    if (strlen(text) >= sizeof(o->schedulers)) {
        dahlsim_error("--schedulers: at most %zu characters", sizeof(o->schedulers) - 1);
        return false;
    }
    char list[sizeof(o->schedulers)], *save = NULL;
    snprintf(list, sizeof(list), "%s", text);
    int n = 0;
    for (char *v = strtok_r(list, ",", &save); v != NULL; v = strtok_r(NULL, ",", &save), n++) {
        char expected[128];
        if (!dahlsim_scheduler_value(v, NULL, 0, NULL, 0, expected, sizeof(expected))) {
            dahlsim_error("--schedulers: \"%s\": expected %s", v, expected);
            dahlsim_scheduler_hint(v);
            return false;
        }
    }
    if (n == 0 || text[0] == ',' || text[strlen(text) - 1] == ',' || strstr(text, ",,") != NULL) {
        dahlsim_error("--schedulers: expected none or policies separated by single commas, got \"%s\"", text);
        return false;
    }
    snprintf(o->schedulers, sizeof(o->schedulers), "%s", text);
    return true;
}

static int parse_options(int argc, char **argv, struct calib_opts *o)
{
    enum { O_MACHINE = 256, O_COVER, O_FORCE, O_RECAL, O_MAX_RSD, O_ROUNDS, O_STEPS, O_BATCH, O_DIR, O_REPORT,
           O_QUIET, O_HELP, O_NGPU, O_SCENARIO, O_SCHEDULERS, O_SCHED_STEPS };
    static const struct option options[] = {
        {"machine", required_argument, NULL, O_MACHINE}, {"cover", required_argument, NULL, O_COVER},
        {"force", no_argument, NULL, O_FORCE},           {"recalibrate-flagged", no_argument, NULL, O_RECAL},
        {"max-rsd", required_argument, NULL, O_MAX_RSD}, {"rounds", required_argument, NULL, O_ROUNDS},
        {"steps", required_argument, NULL, O_STEPS},     {"batch", required_argument, NULL, O_BATCH},
        {"dir", required_argument, NULL, O_DIR},         {"report", no_argument, NULL, O_REPORT},
        {"quiet", no_argument, NULL, O_QUIET},           {"help", no_argument, NULL, O_HELP},
        {"ngpu", required_argument, NULL, O_NGPU},       {"scenario", required_argument, NULL, O_SCENARIO},
        {"schedulers", required_argument, NULL, O_SCHEDULERS},
        {"sched-steps", required_argument, NULL, O_SCHED_STEPS},
        {NULL, 0, NULL, 0},
    };
    *o = (struct calib_opts){.batch = DEFAULT_BATCH, .steps = DEFAULT_STEPS, .rounds = DEFAULT_ROUNDS,
                             .max_rsd = DEFAULT_MAX_RSD, .sched_steps = DEFAULT_SCHED_STEPS};
    snprintf(o->schedulers, sizeof(o->schedulers), "%s", DEFAULT_SCHEDULERS);
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_MACHINE:
            o->machine = optarg;
            if (!dahlsim_machine_name_valid(optarg)) {
                dahlsim_error("--machine: expected a name of 1 to 64 letters, digits, '.', '_' or '-' (not "
                              "starting with '.' or '-'), got \"%s\"",
                              optarg);
                ok = false;
            }
            break;
        case O_COVER:
            if (o->ncovers == MAX_COVERS) {
                dahlsim_error("--cover: at most %d setups", MAX_COVERS);
                ok = false;
            } else {
                ok = parse_cover(optarg, &o->covers[o->ncovers++]);
            }
            break;
        case O_SCENARIO:
            ok = covers_from_scenario(optarg, o);
            break;
        case O_FORCE:
            o->force = true;
            break;
        case O_RECAL:
            o->recalibrate_flagged = true;
            break;
        case O_MAX_RSD:
            ok = dahlsim_parse_double("--max-rsd", optarg, 0, 100, &o->max_rsd);
            break;
        case O_ROUNDS:
            ok = dahlsim_parse_int("--rounds", optarg, 1, 1000, &o->rounds);
            break;
        case O_STEPS:
            ok = dahlsim_parse_int("--steps", optarg, 1, 100000, &o->steps);
            break;
        case O_BATCH:
            ok = dahlsim_parse_int("--batch", optarg, 1, 4096, &o->batch);
            break;
        case O_NGPU: {
            long n = 0;
            ok = dahlsim_parse_int("--ngpu", optarg, 0, 8, &n);
            o->ngpu = (int)n;
            if (ok && n > 0 && !dahl_engine_has_cuda()) {
                dahlsim_error("--ngpu %ld: this dahlsim's StarPU has no CUDA", n);
                fprintf(stderr, "hint: scripts/setup-deps --flavours native-cuda, then build with cmake "
                                "-DDAHLSIM_CUDA=ON\n");
                ok = false;
            }
            break;
        }
        case O_DIR:
            o->dir = optarg;
            ok = dahlsim_parse_dir("--dir", optarg);
            break;
        case O_SCHEDULERS:
            ok = parse_schedulers(optarg, o);
            break;
        case O_SCHED_STEPS:
            ok = dahlsim_parse_int("--sched-steps", optarg, 1, 100000, &o->sched_steps);
            break;
        case O_REPORT:
            o->report_only = true;
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_HELP:
            help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("calibrate", opt, argv, usage_line);
        }
        if (!ok)
            return DAHLSIM_EXIT_USAGE;
    }
    if (optind < argc)
        return dahlsim_unexpected_argument("calibrate", argv[optind], usage_line);
    if (o->machine == NULL) {
        dahlsim_error("calibrate: --machine NAME is required");
        fputs(usage_line, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->ncovers == 0) {
        for (size_t i = 0; i < sizeof(default_covers) / sizeof(default_covers[0]); i++)
            parse_cover(default_covers[i], &o->covers[o->ncovers++]);
    }
    if (o->dir == NULL) {
        o->dir = dahlsim_calibration_root();
    }
    return -1;
}

/* ---- perf-model files: the report ---------------------------------------------------------------------- */

/* One history entry of a StarPU perf-model file. */
struct model_entry {
    char symbol[96];
    char arch[48];
    unsigned footprint;
    unsigned long size;
    double flops, mean_us, dev_us;
    unsigned nsample;
};

struct model_table {
    struct model_entry *v;
    size_t n, cap;
};

static int table_add(struct model_table *t, const struct model_entry *e)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct model_entry *v = realloc(t->v, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = *e;
    return 0;
}

/* Reads the history entries of one perf-model file (format 45, as perfmodel_history.c writes it): the
 * "# Model for <arch>" comment names the architecture, the lines after "# hash ..." are the entries. */
static int load_model_file(const char *path, const char *symbol, struct model_table *t)
{
    char *text = dahlsim_read_text(path, SIZE_MAX);
    if (text == NULL)
        return -errno;
    char arch[48] = "?";
    bool in_entries = false;
    int ret = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL && ret == 0; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "# Model for ", 12) == 0) {
            sscanf(line + 12, "%47s", arch);
            in_entries = false;
        } else if (strncmp(line, "# hash", 6) == 0) {
            in_entries = true;
        } else if (in_entries) {
            struct model_entry e = {0};
            double sum, sum2;
            if (sscanf(line, "%x %lu %le %le %le %le %le %u", &e.footprint, &e.size, &e.flops, &e.mean_us, &e.dev_us,
                       &sum, &sum2, &e.nsample) != 8) {
                in_entries = false;
                continue;
            }
            snprintf(e.symbol, sizeof(e.symbol), "%s", symbol);
            snprintf(e.arch, sizeof(e.arch), "%s", arch);
            ret = table_add(t, &e);
        }
    }
    free(text);
    return ret;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct model_entry *x = a, *y = b;
    int c = strcmp(x->symbol, y->symbol);
    if (c == 0)
        c = strcmp(x->arch, y->arch);
    if (c == 0)
        c = x->size < y->size ? -1 : x->size > y->size;
    if (c == 0)
        c = x->footprint < y->footprint ? -1 : x->footprint > y->footprint;
    return c;
}

/* Every entry of every "<symbol>.<machine>" file in sampling/codelets/45, sorted. */
static int load_models(const char *sampling, const char *machine, struct model_table *t)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/codelets/45", sampling);
    DIR *d = opendir(dir);
    if (d == NULL)
        return -errno;
    size_t mlen = strlen(machine);
    int ret = 0;
    struct dirent *e;
    while (ret == 0 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= mlen + 1 || e->d_name[len - mlen - 1] != '.' || strcmp(e->d_name + len - mlen, machine) != 0)
            continue;
        char symbol[96], path[XPATH];
        snprintf(symbol, sizeof(symbol), "%.*s", (int)(len - mlen - 1), e->d_name);
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        ret = load_model_file(path, symbol, t);
    }
    closedir(d);
    if (ret == 0 && t->n > 0)
        qsort(t->v, t->n, sizeof(*t->v), entry_cmp);
    return ret;
}

static double entry_rsd(const struct model_entry *e)
{
    return e->mean_us > 0 ? e->dev_us / e->mean_us : 0.0;
}

static bool entry_flagged(const struct model_entry *e, double max_rsd)
{
    return entry_rsd(e) > max_rsd;
}

static void print_report(const struct model_table *t, double max_rsd, FILE *f)
{
    fprintf(f, "%-32s %-12s %-8s %12s %8s %12s %12s %7s\n", "model", "arch", "footprint", "size", "samples",
            "mean_us", "stddev_us", "rsd");
    size_t flagged = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct model_entry *e = &t->v[i];
        bool flag = entry_flagged(e, max_rsd);
        flagged += flag;
        fprintf(f, "%-32s %-12s %08x %12lu %8u %12.2f %12.2f %7.3f%s\n", e->symbol, e->arch, e->footprint, e->size,
                e->nsample, e->mean_us, e->dev_us, entry_rsd(e), flag ? "  FLAGGED" : "");
    }
    fprintf(f, "%zu entries, %zu flagged (stddev > %.2g x mean)%s\n", t->n, flagged, max_rsd,
            flagged ? "; `dahlsim calibrate --machine NAME --recalibrate-flagged` measures them again" : "");
}

/* ---- one setup: native rounds, simulated check ---------------------------------------------------------- */

struct paths {
    char final[PATH_MAX], tmp[PATH_MAX], old[PATH_MAX], sampling[PATH_MAX], errlog[PATH_MAX], run[PATH_MAX];
};

/* What the simulated check found missing. */
struct check_result {
    int status;        /* the simulation's exit status */
    int uncalibrated;  /* "not calibrated" warnings */
    char first[512];   /* the first such warning (or the last stderr line on failure) */
};

static void cover_name(const struct cover *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s model=%s perfmodel=%s", c->dataset, c->model, c->perfmodel);
}

/* Runs a few simulated steps of the setup on the calibration in p->sampling and counts StarPU's "not
 * calibrated" warnings in its stderr. */
static int simulated_check(const struct calib_opts *o, const struct cover *c, const struct paths *p,
                           struct check_result *r)
{
    char samples[32], batch[32];
    snprintf(samples, sizeof(samples), "%ld", CHECK_STEPS * o->batch);
    snprintf(batch, sizeof(batch), "%ld", o->batch);
    char ngpu[16];
    snprintf(ngpu, sizeof(ngpu), "%d", o->ngpu);
    char *args[] = {"sim-train", "--dataset", (char *)c->dataset, "--model", (char *)c->model, "--perfmodel",
                    (char *)c->perfmodel, "--samples", samples, "--test-samples", batch, "--batch", batch,
                    "--ngpu", ngpu, "--quiet", o->ngpu > 0 ? "--sched" : NULL, "dmda", NULL};
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

/* Fills argv with the nfixed arguments of fixed, then those of extra (NULL, or NULL-terminated; at most
 * max_extra), then NULL: argv has room for nfixed + max_extra + 1. */
static void join_args(char **argv, const char *const *fixed, size_t nfixed, const char *const *extra,
                      size_t max_extra)
{
    size_t n = 0;
    for (size_t i = 0; i < nfixed; i++)
        argv[n++] = (char *)fixed[i];
    for (size_t i = 0; extra != NULL && extra[i] != NULL && i < max_extra; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
}

/* One native training run of setup c into p->run (results.json there): samples of batch, seed, with
 * STARPU_CALIBRATE=1 when calibrating; extra: NULL or NULL-terminated arguments to add (at most 8). */
static int native_train(const struct calib_opts *o, const struct cover *c, const struct paths *p, int seed,
                        bool calibrating, long samples, long batch, const char *const *extra)
{
    char self[PATH_MAX];
    if (dahlsim_sibling_path("dahlsim", self, sizeof(self)) != 0)
        return -1;
    char nsamples[32], nbatch[32], nseed[32];
    snprintf(nsamples, sizeof(nsamples), "%ld", samples);
    snprintf(nbatch, sizeof(nbatch), "%ld", batch);
    snprintf(nseed, sizeof(nseed), "%d", seed);
    /* regression is measured as nl-regression: see kind_rank */
    const char *kind = strcmp(c->perfmodel, "regression") == 0 ? "nl-regression" : c->perfmodel;
    char ngpu[16];
    snprintf(ngpu, sizeof(ngpu), "%d", o->ngpu);
    const char *fixed[] = {self, "train", "--dataset", c->dataset, "--model", c->model, "--perfmodel", kind,
                           "--samples", nsamples, "--test-samples", nbatch, "--batch", nbatch, "--seed", nseed,
                           "--ngpu", ngpu, "--quiet", "--out", p->run};
    char *argv[sizeof(fixed) / sizeof(fixed[0]) + 9];
    join_args(argv, fixed, sizeof(fixed) / sizeof(fixed[0]), extra, 8);
    const struct dahlsim_env_var env[] = {
        {"STARPU_PERF_MODEL_DIR", p->sampling},
        {"STARPU_HOSTNAME", o->machine},
        {"STARPU_CALIBRATE", calibrating ? "1" : "0"},
        {"STARPU_CALIBRATE_MINIMUM", CALIBRATE_MINIMUM},
        {"STARPU_HISTORY_MAX_ERROR", HISTORY_MAX_ERROR},
        {"STARPU_SILENT", "1"},
    };
    char out[4096]; /* the per-epoch lines: not shown */
    return dahlsim_spawn_err(argv, env, sizeof(env) / sizeof(env[0]), out, sizeof(out), p->errlog);
}

/* One run of setup c with the calibration's batch and steps (round: the seed): with STARPU_CALIBRATE=1 when
 * calibrating, else a plain run. */
static int native_round(const struct calib_opts *o, const struct cover *c, const struct paths *p, int round,
                        bool calibrating)
{
    /* With GPUs, dmda: under STARPU_CALIBRATE=1 it sends each task to a worker kind whose model still lacks
     * measurements, where lws would leave the GPU's models of rarely stolen tasks empty. */
    const char *const dmda[] = {"--sched", "dmda", NULL};
    return native_train(o, c, p, round, calibrating, o->steps * o->batch, o->batch, o->ngpu > 0 ? dmda : NULL);
}

/* The last non-empty line of a file, for error messages. */
static void last_line(const char *path, char *buf, size_t size)
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

/* Per-setup outcome, for the manifest. */
struct cover_status {
    const char *status; /* "calibrated", "already calibrated" */
    int rounds;
    double seconds;
};

/* One native calibration run of setup i; returns an exit code on failure, -1 when it ran. */
static int measure(const struct calib_opts *o, int i, const struct paths *p, int round, const char *name)
{
    if (!o->quiet)
        fprintf(stderr, "[%d/%d] %s: measuring, run %d/%ld (%ld steps of %ld samples)...\n", i + 1, o->ncovers, name,
                round, o->rounds, o->steps, o->batch);
    int status = native_round(o, &o->covers[i], p, round, true);
    if (status == 0)
        return -1;
    char line[512];
    last_line(p->errlog, line, sizeof(line));
    dahlsim_error("calibrate: %s: the native training run failed (exit %d): %s", name, status, line);
    return status == DAHLSIM_EXIT_USAGE ? DAHLSIM_EXIT_USAGE : DAHLSIM_EXIT_FAILURE;
}

/* First pass over setup i: nothing to do if the simulated check already passes (and not --force), else one
 * native run. Every setup gets its first run before any is checked, because regression models need the
 * several sizes of several setups before StarPU considers them calibrated. Returns an exit code, -1 to go
 * on; cs->status stays NULL while the setup is pending. */
static int first_pass(const struct calib_opts *o, int i, const struct paths *p, struct cover_status *cs)
{
    char name[PATH_MAX + 128];
    cover_name(&o->covers[i], name, sizeof(name));
    *cs = (struct cover_status){NULL, 0, 0};
    double start = dahlsim_mono_s();
    if (!o->force && dahlsim_is_dir(p->sampling)) {
        struct check_result r;
        if (simulated_check(o, &o->covers[i], p, &r) != 0)
            return DAHLSIM_EXIT_FAILURE;
        if (r.status == 0 && r.uncalibrated == 0) {
            *cs = (struct cover_status){"already calibrated", 0, dahlsim_mono_s() - start};
            if (!o->quiet)
                fprintf(stderr, "[%d/%d] %s: already calibrated\n", i + 1, o->ncovers, name);
            return -1;
        }
    }
    int code = measure(o, i, p, 1, name);
    cs->rounds = 1;
    cs->seconds = dahlsim_mono_s() - start;
    return code;
}

/* Second pass: more runs of setup i until the simulated check is clean. Returns an exit code, -1 when done. */
static int converge(const struct calib_opts *o, int i, const struct paths *p, struct cover_status *cs)
{
    /* Every setup is checked again here, "already calibrated" ones included: measuring an earlier setup may
     * have reset a regression fit (see kind_rank). */
    char name[PATH_MAX + 128];
    cover_name(&o->covers[i], name, sizeof(name));
    double start = dahlsim_mono_s() - cs->seconds;
    struct check_result r;
    for (;;) {
        if (simulated_check(o, &o->covers[i], p, &r) != 0)
            return DAHLSIM_EXIT_FAILURE;
        if (r.status == 0 && r.uncalibrated == 0) {
            if (cs->status != NULL && cs->rounds == 0)
                return -1; /* already calibrated, and still */
            cs->status = "calibrated";
            cs->seconds = dahlsim_mono_s() - start;
            if (!o->quiet)
                fprintf(stderr, "[%d/%d] %s: calibrated after %d run(s), %.1f s\n", i + 1, o->ncovers, name,
                        cs->rounds, cs->seconds);
            return -1;
        }
        if (!o->quiet)
            fprintf(stderr, "[%d/%d] %s: %d model entries not calibrated enough yet (%s)\n", i + 1, o->ncovers,
                    name, r.uncalibrated, r.first[0] ? r.first : "the simulated check failed");
        if (cs->rounds >= o->rounds)
            break;
        int code = measure(o, i, p, ++cs->rounds, name);
        if (code >= 0)
            return code;
    }
    dahlsim_error("calibrate: %s: still not calibrated after %ld runs: %s", name, o->rounds,
                  r.first[0] ? r.first : "the simulated check failed");
    fprintf(stderr, "hint: more --rounds or --steps; timing noise (another load on the machine) makes StarPU "
                    "reject samples; a regression perf model needs setups of several sizes\n");
    return DAHLSIM_EXIT_FAILURE;
}

/* ---- the manifest --------------------------------------------------------------------------------------- */

static void cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon != NULL) {
                colon += 1 + (colon[1] == ' ');
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(buf, size, "%s", colon);
            }
            break;
        }
    }
    fclose(f);
}

static void command_line(int argc, char **argv, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "dahlsim calibrate");
    for (int i = 1; i < argc && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, " %s", argv[i]);
}

#define SUBMIT_RUNS 3

/* The results.json of the run in p->run, parsed (NULL when missing or not JSON; the caller deletes it). */
static cJSON *run_results(const struct paths *p)
{
    char path[XPATH];
    snprintf(path, sizeof(path), "%s/results.json", p->run);
    return dahlsim_read_json(path);
}

/* The submitting thread's figures of the plain native run in p->run: us per task (image copies apart) and
 * the copy rate; false when results.json lacks them. */
static bool read_submission(const struct paths *p, double *us_per_task, double *copy_rate, double *tasks)
{
    cJSON *r = run_results(p);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "submission");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(s, "us_per_task");
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(s, "input_copy_bytes_per_s");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "tasks");
    bool ok = cJSON_IsNumber(us) && cJSON_IsNumber(rate) && cJSON_IsNumber(n) && us->valuedouble > 0 &&
              rate->valuedouble > 0;
    if (ok) {
        *us_per_task = us->valuedouble;
        *copy_rate = rate->valuedouble;
        *tasks = n->valuedouble;
    }
    cJSON_Delete(r);
    return ok;
}

/* The manifest's "submission": per image shape ("28x28x1" for fashion-mnist), the median over SUBMIT_RUNS
 * plain native runs (STARPU_CALIBRATE=0: under calibration StarPU's submission costs more, 2.9-3.2 against
 * 2.2-2.6 us per task at 28x28x3 here) of the shape's first covered setup, with the calibration's batch and
 * steps; at the top, over all shapes, weighted by their tasks (for a shape without its own entry). A shape
 * whose setups this calibration did not measure keeps the previous manifest's entry. The cost per task grows
 * with the image (build-2core-epyc: 2.2 us at 28x28x3, 3.0 at 128x128x3, 3.9 at 512x512x3). NULL after an
 * error line. */
static bool same_shape(const struct calib_opts *o, int a, int b)
{
    char x[64], y[64];
    dahlsim_dataset_shape(o->covers[a].dataset, x, sizeof(x));
    dahlsim_dataset_shape(o->covers[b].dataset, y, sizeof(y));
    return strcmp(x, y) == 0;
}

static cJSON *measure_submission(const struct calib_opts *o, const struct paths *p, const struct cover_status *cs,
                                 const cJSON *prev_submission)
{
    cJSON *shapes = cJSON_CreateObject();
    const cJSON *prev_shapes = cJSON_GetObjectItemCaseSensitive(prev_submission, "per_shape");
    const cJSON *e;
    cJSON_ArrayForEach(e, prev_shapes) cJSON_AddItemToObject(shapes, e->string, cJSON_Duplicate(e, true));
    for (int i = 0; i < o->ncovers; i++) {
        bool seen = false; /* the shape's first setup decided for it */
        for (int j = 0; j < i && !seen; j++)
            seen = same_shape(o, i, j);
        bool measured = false; /* a setup of this shape had native runs in this calibration */
        for (int j = 0; j < o->ncovers && !measured; j++)
            measured = cs[j].rounds > 0 && same_shape(o, i, j);
        char shape[64];
        dahlsim_dataset_shape(o->covers[i].dataset, shape, sizeof(shape));
        if (seen || (!measured && cJSON_GetObjectItemCaseSensitive(shapes, shape) != NULL))
            continue;
        if (!o->quiet)
            fprintf(stderr, "submitting thread: %s, %d plain native runs...\n", shape, SUBMIT_RUNS);
        double us[SUBMIT_RUNS], rate[SUBMIT_RUNS], tasks = 0;
        for (int r = 0; r < SUBMIT_RUNS; r++) {
            int st = native_round(o, &o->covers[i], p, r + 1, false);
            if (st != 0 || !read_submission(p, &us[r], &rate[r], &tasks)) {
                char line[512];
                last_line(p->errlog, line, sizeof(line));
                dahlsim_error("calibrate: %s: the plain native run for the submitting thread's cost failed (exit %d): %s",
                              o->covers[i].dataset, st, line);
                cJSON_Delete(shapes);
                return NULL;
            }
        }
        cJSON *entry = cJSON_CreateObject();
        cJSON_AddNumberToObject(entry, "us_per_task", dahlsim_median(us, SUBMIT_RUNS));
        cJSON_AddNumberToObject(entry, "input_copy_bytes_per_s", dahlsim_median(rate, SUBMIT_RUNS));
        cJSON_AddNumberToObject(entry, "runs", SUBMIT_RUNS);
        cJSON_AddNumberToObject(entry, "tasks", tasks);
        cJSON_AddStringToObject(entry, "dataset", o->covers[i].dataset);
        if (!cJSON_ReplaceItemInObjectCaseSensitive(shapes, shape, entry))
            cJSON_AddItemToObject(shapes, shape, entry);
    }
    if (cJSON_GetArraySize(shapes) == 0) {
        cJSON_Delete(shapes);
        return cJSON_CreateNull();
    }
    /* over all shapes, weighted by their tasks: the mean cost per task, the harmonic mean rate */
    double tasks = 0, us = 0, per_rate = 0;
    cJSON_ArrayForEach(e, shapes)
    {
        double n = cJSON_GetObjectItemCaseSensitive(e, "tasks")->valuedouble;
        tasks += n;
        us += n * cJSON_GetObjectItemCaseSensitive(e, "us_per_task")->valuedouble;
        per_rate += n / cJSON_GetObjectItemCaseSensitive(e, "input_copy_bytes_per_s")->valuedouble;
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "us_per_task", us / tasks);
    cJSON_AddNumberToObject(s, "input_copy_bytes_per_s", tasks / per_rate);
    cJSON_AddItemToObject(s, "per_shape", shapes);
    cJSON_AddStringToObject(s, "what",
                            "CPU time of the thread submitting the tasks (its CPU clock over the training phase, "
                            "image copies apart) per task submitted, and the rate of its image copies, per image "
                            "shape: median of plain native runs (STARPU_CALIBRATE=0) with the calibration's batch "
                            "and steps; simulations charge it, on the workers' cores when no core is left for that "
                            "thread, else on its own");
    return s;
}

#define SCHED_RUNS 3
#define SCHED_BATCH 32

/* From the results.json of the run in p->run: the worker threads' mean push time, the workers' runtime cost
 * per task and the CPU worker count; false when it lacks them. */
static bool read_scheduling(const struct paths *p, double *push_us, double *worker_us, int *ncpu)
{
    cJSON *r = run_results(p);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "scheduling");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(s, "worker_push_us");
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(s, "worker_us_per_task");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "workers"), "cpu");
    bool ok = (cJSON_IsNumber(task) || cJSON_IsNull(task)) && cJSON_IsNumber(cpu) &&
              (push_us == NULL || cJSON_IsNumber(us));
    if (ok) {
        if (push_us != NULL)
            *push_us = us->valuedouble;
        *worker_us = cJSON_IsNumber(task) ? task->valuedouble : NAN; /* NaN: no pop_task to time */
        *ncpu = (int)cpu->valuedouble;
    }
    cJSON_Delete(r);
    return ok;
}

/* A simulated run of setup c with the policy, ncpu CPU workers, the policy's push cost charged and
 * StarPU-SimGrid's per-input cost off (--worker-cost 0), into p->run: what the simulation still charges per
 * task on its own (its driver loop's sleeps). */
static int simulated_rest(const struct calib_opts *o, const struct cover *c, const struct paths *p,
                          const char *const *sched_args, int ncpu, double push_us)
{
    char samples[32], batch[32], ngpu[16], cpus[16], push[32];
    snprintf(samples, sizeof(samples), "%ld", o->sched_steps * SCHED_BATCH);
    snprintf(batch, sizeof(batch), "%d", SCHED_BATCH);
    snprintf(ngpu, sizeof(ngpu), "%d", o->ngpu);
    snprintf(cpus, sizeof(cpus), "%d", ncpu);
    snprintf(push, sizeof(push), "%.17g", push_us);
    const char *fixed[] = {"sim-train", "--dataset", c->dataset, "--model", c->model, "--perfmodel", c->perfmodel,
                           "--samples", samples, "--test-samples", batch, "--batch", batch, "--ngpu", ngpu,
                           "--ncpu", cpus, "--sched-cost", push, "--worker-cost", "0", "--quiet", "--out", p->run};
    char *args[sizeof(fixed) / sizeof(fixed[0]) + 5];
    join_args(args, fixed, sizeof(fixed) / sizeof(fixed[0]), sched_args, 4);
    const struct dahlsim_env_var env[] = {
        {"STARPU_PERF_MODEL_DIR", p->sampling}, {"STARPU_HOSTNAME", o->machine}, {"STARPU_CALIBRATE", "0"},
        {"STARPU_SILENT", "1"},
    };
    char out[4096];
    return dahlsim_spawn_sim_err(args, env, sizeof(env) / sizeof(env[0]), out, sizeof(out), p->errlog);
}

/* The covered setup with the smallest images: the policies' cost per push does not depend on the tasks'
 * sizes, and its runs are the shortest. */
static int smallest_cover(const struct calib_opts *o)
{
    int best = 0;
    long best_px = -1;
    for (int i = 0; i < o->ncovers; i++) {
        char shape[64];
        long h = 0, w = 0, c = 0;
        dahlsim_dataset_shape(o->covers[i].dataset, shape, sizeof(shape));
        if (sscanf(shape, "%ldx%ldx%ld", &h, &w, &c) == 3 && (best_px < 0 || h * w * c < best_px)) {
            best_px = h * w * c;
            best = i;
        }
    }
    return best;
}

/* Adds {key: {policy: value}} to obj. */
static void put(cJSON *obj, const char *key, const char *policy, cJSON *value)
{
    cJSON *per = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (per == NULL)
        per = cJSON_AddObjectToObject(obj, key);
    cJSON_DeleteItemFromObjectCaseSensitive(per, policy);
    cJSON_AddItemToObject(per, policy, value);
}

/* Measures one policy (a scenario scheduler value) with ncpu CPU workers (0: StarPU's default, all cores):
 * its cost per push into push and the workers' cost per task into worker (measured natively, and what the
 * simulation charges on its own once its per-input cost is off); *all_cpus gets the CPU worker count the
 * runs had. 0, or -1 after an error line. */
static int measure_policy(const struct calib_opts *o, const struct paths *p, const struct cover *c,
                          const char *value, int ncpu, cJSON *push, cJSON *worker, int *all_cpus)
{
    char sched[32], priorities[48], cpus[16];
    dahlsim_scheduler_value(value, sched, sizeof(sched), priorities, sizeof(priorities), NULL, 0);
    snprintf(cpus, sizeof(cpus), "%d", ncpu);
    const char *extra[8] = {"--sched", sched};
    size_t n = 2;
    if (priorities[0] != '\0') {
        extra[n++] = "--priorities";
        extra[n++] = priorities;
    }
    const char *sched_args[8];
    memcpy(sched_args, extra, sizeof(extra));
    if (ncpu > 0) {
        extra[n++] = "--ncpu";
        extra[n++] = cpus;
    }
    double push_us[SCHED_RUNS], task_us[SCHED_RUNS], rest_us = 0;
    int had = 0, had_sim = 0;
    for (int r = 0; r <= SCHED_RUNS; r++) {
        /* SCHED_RUNS native runs, then one simulated (deterministic) */
        int st = r < SCHED_RUNS ? native_train(o, c, p, r + 1, false, o->sched_steps * SCHED_BATCH, SCHED_BATCH, extra)
                                : simulated_rest(o, c, p, sched_args, had, dahlsim_median(push_us, SCHED_RUNS));
        bool ok = st == 0 && (r < SCHED_RUNS ? read_scheduling(p, &push_us[r], &task_us[r], &had)
                                             : read_scheduling(p, NULL, &rest_us, &had_sim));
        if (!ok) {
            char line[512];
            last_line(p->errlog, line, sizeof(line));
            dahlsim_error("calibrate: --schedulers %s: the %s run timing its pushes and tasks failed (exit %d): %s",
                          value, r < SCHED_RUNS ? "plain native" : "simulated", st, line);
            fprintf(stderr, "hint: leave that policy out of --schedulers\n");
            return -1;
        }
    }
    char key[32];
    dahlsim_sched_workers_key(had, o->ngpu, key, sizeof(key));
    double native_us = dahlsim_median(task_us, SCHED_RUNS);
    put(push, key, value, cJSON_CreateNumber(dahlsim_median(push_us, SCHED_RUNS)));
    *all_cpus = had;
    if (isnan(native_us) || isnan(rest_us))
        return 0; /* random, pheft: the workers' cost per task stays StarPU-SimGrid's */
    cJSON *w = cJSON_CreateObject();
    cJSON_AddNumberToObject(w, "charge", native_us > rest_us ? native_us - rest_us : 0);
    cJSON_AddNumberToObject(w, "native", native_us);
    cJSON_AddNumberToObject(w, "simulated_rest", rest_us);
    put(worker, key, value, w);
    return 0;
}

/* The manifest's "scheduling", per worker configuration (all cores, and one CPU worker) and per policy of
 * --schedulers, at the covered setup with the smallest images, from the medians over SCHED_RUNS plain native
 * runs:
 * - push_us: the mean wall time of a push_task call made by a worker thread (calls over 100 us left out:
 *   preemptions). StarPU-SimGrid charges none of the policy's own work; simulations sleep this after each
 *   push a worker makes.
 * - worker_us: the workers' runtime cost per task ("native": results.json's worker_us_per_task), what a
 *   simulation of the same runs still charges per task with StarPU-SimGrid's 1 us per input fetched turned
 *   off ("simulated_rest": its driver loop's 1 us sleeps), and the difference ("charge", at least 0), which
 *   simulations sleep after each task a worker pops, in place of the per-input cost.
 * Policies the previous manifest has keep their figures unless --force. The previous object when nothing is
 * to measure, NULL after an error line. */
static cJSON *measure_scheduling(const struct calib_opts *o, const struct paths *p, const cJSON *prev)
{
    const cJSON *prev_push = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "push_us");
    const cJSON *prev_worker = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "worker_us");
    cJSON *by_workers = prev_push != NULL ? cJSON_Duplicate(prev_push, true) : cJSON_CreateObject();
    cJSON *worker = prev_worker != NULL ? cJSON_Duplicate(prev_worker, true) : cJSON_CreateObject();
    const struct cover *c = &o->covers[smallest_cover(o)];
    char list[sizeof(o->schedulers)], *save = NULL;
    snprintf(list, sizeof(list), "%s", o->schedulers);
    int measured = 0;
    for (char *v = strtok_r(list, ",", &save); v != NULL; v = strtok_r(NULL, ",", &save)) {
        /* The all-cores run first: it says how many CPU workers that is. */
        int all = 0, one = 0;
        bool known = false;
        const cJSON *per;
        cJSON_ArrayForEach(per, by_workers) known = known || cJSON_GetObjectItemCaseSensitive(per, v) != NULL;
        /* A manifest from before the workers' cost was measured has push figures only: measure again. */
        bool in_worker = false;
        cJSON_ArrayForEach(per, worker) in_worker = in_worker || cJSON_GetObjectItemCaseSensitive(per, v) != NULL;
        known = known && (in_worker || prev_worker != NULL);
        if (known)
            continue;
        if (!o->quiet)
            fprintf(stderr, "scheduling policy %s: %d plain native runs per worker count...\n", v, SCHED_RUNS);
        if (measure_policy(o, p, c, v, 0, by_workers, worker, &all) != 0 ||
            (all > 1 && measure_policy(o, p, c, v, 1, by_workers, worker, &one) != 0)) {
            cJSON_Delete(by_workers);
            cJSON_Delete(worker);
            return NULL;
        }
        measured++;
    }
    if ((measured == 0 && prev != NULL) || cJSON_GetArraySize(by_workers) == 0) {
        cJSON_Delete(by_workers);
        cJSON_Delete(worker);
        return measured == 0 && prev != NULL ? cJSON_Duplicate(prev, true) : cJSON_CreateNull();
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToObject(s, "push_us", by_workers);
    cJSON_AddItemToObject(s, "worker_us", worker);
    cJSON_AddStringToObject(s, "dataset", c->dataset);
    cJSON_AddNumberToObject(s, "batch", SCHED_BATCH);
    cJSON_AddNumberToObject(s, "steps", (double)o->sched_steps);
    cJSON_AddNumberToObject(s, "runs", SCHED_RUNS);
    cJSON_AddStringToObject(s, "what",
                            "per worker configuration and policy, medians of plain native runs (STARPU_CALIBRATE=0). "
                            "push_us: wall time of the policy's push_task per call from a worker thread (calls over "
                            "100 us left out); simulations with the same policy and workers sleep it after each push "
                            "a worker makes (StarPU-SimGrid gives the policy's work no time). worker_us: the "
                            "workers' time per task outside the task and its pushes, from popping it to asking for "
                            "the next (native), what a simulation still charges per task with StarPU-SimGrid's 1 us "
                            "per input fetched off (simulated_rest), and their difference (charge), which "
                            "simulations sleep after each task a worker pops, in place of that per-input cost");
    return s;
}

static int write_manifest(const struct calib_opts *o, const struct cover_status *cs, const struct model_table *t,
                          cJSON *submission, cJSON *scheduling, const char *path, int argc, char **argv)
{
    cJSON *root = cJSON_CreateObject();
    char cpu[256], cmd[4096], date[32];
    cpu_model(cpu, sizeof(cpu));
    command_line(argc, argv, cmd, sizeof(cmd));
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(root, "machine", o->machine);
    cJSON_AddStringToObject(root, "source", "measured");
    cJSON *node = cJSON_AddObjectToObject(root, "node");
    cJSON_AddStringToObject(node, "cpu_model", cpu);
    cJSON_AddNumberToObject(node, "cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddNumberToObject(node, "gpus", o->ngpu);
    cJSON_AddNumberToObject(node, "memory_bytes", (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE));
    cJSON *v = cJSON_AddObjectToObject(root, "versions");
    cJSON_AddStringToObject(v, "dahlsim", DAHLSIM_VERSION);
    cJSON_AddStringToObject(v, "starpu", dahl_engine_starpu_version());
#ifdef DAHLSIM_STARPU_BUILD
    cJSON_AddStringToObject(v, "starpu_build", DAHLSIM_STARPU_BUILD); /* the native build that measured */
#endif
    cJSON_AddStringToObject(v, "simgrid", DAHLSIM_SIMGRID_VERSION);
#ifdef __VERSION__
    cJSON_AddStringToObject(v, "compiler", __VERSION__);
#endif
    cJSON_AddStringToObject(v, "openblas", dahl_kernels_blas_info());
    cJSON_AddStringToObject(v, "commit", DAHLSIM_COMMIT);
    cJSON_AddStringToObject(root, "date", date);
    cJSON_AddStringToObject(root, "command", cmd);
    cJSON *how = cJSON_AddObjectToObject(root, "method");
    cJSON_AddNumberToObject(how, "steps_per_run", (double)o->steps);
    cJSON_AddNumberToObject(how, "batch", (double)o->batch);
    cJSON_AddNumberToObject(how, "max_runs", (double)o->rounds);
    cJSON_AddStringToObject(how, "STARPU_CALIBRATE_MINIMUM", CALIBRATE_MINIMUM);
    cJSON_AddStringToObject(how, "STARPU_HISTORY_MAX_ERROR", HISTORY_MAX_ERROR);
    cJSON_AddNumberToObject(how, "max_rsd", o->max_rsd);
    cJSON_AddStringToObject(how, "converged_when",
                            "a simulated run of the setup prints no 'not calibrated' warning");
    cJSON *covered = cJSON_AddArrayToObject(root, "covered");
    for (int i = 0; i < o->ncovers; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "dataset", o->covers[i].dataset);
        cJSON_AddStringToObject(c, "model", o->covers[i].model);
        cJSON_AddStringToObject(c, "perfmodel", o->covers[i].perfmodel);
        cJSON_AddStringToObject(c, "status", cs[i].status);
        cJSON_AddNumberToObject(c, "runs", cs[i].rounds);
        cJSON_AddItemToArray(covered, c);
    }
    if (submission != NULL && !cJSON_IsNull(submission))
        cJSON_AddItemToObject(root, "submission", submission);
    else
        cJSON_Delete(submission);
    if (scheduling != NULL && !cJSON_IsNull(scheduling))
        cJSON_AddItemToObject(root, "scheduling", scheduling);
    else
        cJSON_Delete(scheduling);
    cJSON *models = cJSON_AddArrayToObject(root, "models");
    for (size_t i = 0; i < t->n; i++) {
        const struct model_entry *e = &t->v[i];
        cJSON *m = cJSON_CreateObject();
        char fp[16];
        snprintf(fp, sizeof(fp), "%08x", e->footprint);
        cJSON_AddStringToObject(m, "symbol", e->symbol);
        cJSON_AddStringToObject(m, "arch", e->arch);
        cJSON_AddStringToObject(m, "footprint", fp);
        cJSON_AddNumberToObject(m, "size", (double)e->size);
        cJSON_AddNumberToObject(m, "flops", e->flops);
        cJSON_AddNumberToObject(m, "samples", e->nsample);
        cJSON_AddNumberToObject(m, "mean_us", e->mean_us);
        cJSON_AddNumberToObject(m, "stddev_us", e->dev_us);
        cJSON_AddBoolToObject(m, "flagged", entry_flagged(e, o->max_rsd));
        cJSON_AddItemToArray(models, m);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL)
        return -ENOMEM;
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        int e = errno;
        free(text);
        return -e;
    }
    int ret = fputs(text, f) < 0 || fputc('\n', f) == EOF ? -EIO : 0;
    free(text);
    if (fclose(f) != 0 && ret == 0)
        ret = -errno;
    return ret;
}

/* ---- the command ------------------------------------------------------------------------------------- */

static int report_only(const struct calib_opts *o, const struct paths *p)
{
    if (!dahlsim_is_dir(p->final)) {
        dahlsim_error("calibrate --report: %s: no such calibration", p->final);
        fprintf(stderr, "hint: calibrate it first with dahlsim calibrate --machine %s\n", o->machine);
        return DAHLSIM_EXIT_USAGE;
    }
    char sampling[XPATH];
    snprintf(sampling, sizeof(sampling), "%s/sampling", p->final);
    struct model_table t = {0};
    int ret = load_models(sampling, o->machine, &t);
    if (ret != 0) {
        dahlsim_error("calibrate --report: %s/codelets/45: %s", sampling, strerror(-ret));
        free(t.v);
        return DAHLSIM_EXIT_USAGE;
    }
    print_report(&t, o->max_rsd, stdout);
    free(t.v);
    return DAHLSIM_EXIT_OK;
}

/* Deletes, in sampling, the model files of every codelet with a flagged entry. */
static int drop_flagged(const struct calib_opts *o, const char *sampling)
{
    struct model_table t = {0};
    int ret = load_models(sampling, o->machine, &t);
    for (size_t i = 0; ret == 0 && i < t.n; i++) {
        if (!entry_flagged(&t.v[i], o->max_rsd) || (i > 0 && strcmp(t.v[i].symbol, t.v[i - 1].symbol) == 0 &&
                                                     entry_flagged(&t.v[i - 1], o->max_rsd)))
            continue;
        char path[XPATH + 256];
        snprintf(path, sizeof(path), "%s/codelets/45/%s.%s", sampling, t.v[i].symbol, o->machine);
        if (remove(path) != 0 && errno != ENOENT)
            ret = -errno;
        else if (!o->quiet)
            fprintf(stderr, "dropped %s (entry %08x: stddev %.2f x mean)\n", t.v[i].symbol, t.v[i].footprint,
                    entry_rsd(&t.v[i]));
    }
    free(t.v);
    return ret == -ENOENT ? 0 : ret;
}

/* Rank of a perf-model kind in the measuring order. Two StarPU 1.3.10 behaviours decide it: a run with
 * STARPU_CALIBRATE=1 and history-based models writes the regression fit (alpha, beta) back as nan, keeping
 * only its sums; and a model built as plain regression does not load the history entries, so its run
 * rewrites the file without them. So history setups are measured first, and regression setups after them,
 * measured with the models built as nl-regression (which keeps the history entries and updates the same
 * log-log sums and fit). */
static int kind_rank(const struct cover *c)
{
    return strcmp(c->perfmodel, "history") == 0 ? 0 : strcmp(c->perfmodel, "nl-regression") == 0 ? 1 : 2;
}

static int cover_cmp(const void *a, const void *b)
{
    const struct cover *x = a, *y = b;
    return kind_rank(x) - kind_rank(y);
}

/* Adds the setups an earlier calibration covered and the command line did not name (so they are checked
 * again and stay covered), then orders all of them by kind_rank (stable: insertion sort). */
static void merge_covers(struct calib_opts *o, const cJSON *prev_covered)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, prev_covered)
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "dataset");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "model");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "perfmodel");
        if (!cJSON_IsString(d) || !cJSON_IsString(m) || !cJSON_IsString(k) || o->ncovers == MAX_COVERS ||
            strlen(d->valuestring) >= sizeof(o->covers[0].dataset) || strlen(m->valuestring) >= sizeof(o->covers[0].model) ||
            strlen(k->valuestring) >= sizeof(o->covers[0].perfmodel))
            continue;
        bool named = false;
        for (int i = 0; i < o->ncovers && !named; i++)
            named = strcmp(o->covers[i].dataset, d->valuestring) == 0 && strcmp(o->covers[i].model, m->valuestring) == 0 &&
                    strcmp(o->covers[i].perfmodel, k->valuestring) == 0;
        if (named)
            continue;
        struct cover *n = &o->covers[o->ncovers++];
        snprintf(n->dataset, sizeof(n->dataset), "%s", d->valuestring);
        snprintf(n->model, sizeof(n->model), "%s", m->valuestring);
        snprintf(n->perfmodel, sizeof(n->perfmodel), "%s", k->valuestring);
    }
    for (int i = 1; i < o->ncovers; i++)
        for (int j = i; j > 0 && cover_cmp(&o->covers[j - 1], &o->covers[j]) > 0; j--) {
            struct cover tmp = o->covers[j];
            o->covers[j] = o->covers[j - 1];
            o->covers[j - 1] = tmp;
        }
}

static int calibrate(struct calib_opts *o, struct paths *p, int argc, char **argv)
{
    int ret = dahlsim_make_dirs(o->dir);
    if (ret != 0) {
        dahlsim_error("calibrate: cannot create the calibration directory %s: %s", o->dir, strerror(-ret));
        return DAHLSIM_EXIT_USAGE;
    }
    char prev_path[XPATH];
    snprintf(prev_path, sizeof(prev_path), "%s/manifest.json", p->final);
    cJSON *prev = dahlsim_read_json(prev_path);
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(prev, "source");
    if (cJSON_IsString(source) && strcmp(source->valuestring, "measured") != 0) {
        dahlsim_error("calibrate: %s is a \"%s\" machine, not a measured calibration: refusing to mix them",
                      p->final, source->valuestring);
        fprintf(stderr, "hint: pick another --machine name\n");
        cJSON_Delete(prev);
        return DAHLSIM_EXIT_USAGE;
    }
    const cJSON *prev_covered = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "covered");
    merge_covers(o, prev_covered);
    dahlsim_remove_tree(p->tmp);
    if (mkdir(p->tmp, 0777) != 0) {
        dahlsim_error("calibrate: cannot write in %s: %s", o->dir, strerror(errno));
        cJSON_Delete(prev);
        return DAHLSIM_EXIT_USAGE;
    }
    char prev_sampling[XPATH];
    snprintf(prev_sampling, sizeof(prev_sampling), "%s/sampling", p->final);
    if (!o->force && dahlsim_is_dir(prev_sampling)) {
        ret = dahlsim_copy_tree(prev_sampling, p->sampling);
        if (ret != 0) {
            dahlsim_error("calibrate: cannot copy %s: %s", prev_sampling, strerror(-ret));
            goto fail;
        }
        if (o->recalibrate_flagged && (ret = drop_flagged(o, p->sampling)) != 0) {
            dahlsim_error("calibrate: %s: %s", p->sampling, strerror(-ret));
            goto fail;
        }
    }
    int code = DAHLSIM_EXIT_FAILURE;
    struct cover_status cs[MAX_COVERS];
    for (int i = 0; i < o->ncovers; i++) {
        code = first_pass(o, i, p, &cs[i]);
        if (code >= 0)
            goto fail_code;
    }
    for (int i = 0; i < o->ncovers; i++) {
        code = converge(o, i, p, &cs[i]);
        if (code >= 0)
            goto fail_code;
    }
    struct model_table t = {0};
    ret = load_models(p->sampling, o->machine, &t);
    if (ret != 0) {
        dahlsim_error("calibrate: %s/codelets/45: %s", p->sampling, strerror(-ret));
        free(t.v);
        goto fail;
    }
    char manifest[XPATH];
    snprintf(manifest, sizeof(manifest), "%s/manifest.json", p->tmp);
    cJSON *submission = measure_submission(o, p, cs, cJSON_GetObjectItemCaseSensitive(prev, "submission"));
    if (submission == NULL) {
        free(t.v);
        goto fail;
    }
    cJSON *scheduling = measure_scheduling(o, p, cJSON_GetObjectItemCaseSensitive(prev, "scheduling"));
    if (scheduling == NULL) {
        cJSON_Delete(submission);
        free(t.v);
        goto fail;
    }
    dahlsim_remove_tree(p->run); /* the plain runs' results and the last stderr: not part of the calibration */
    remove(p->errlog);
    ret = write_manifest(o, cs, &t, submission, scheduling, manifest, argc, argv);
    if (ret != 0) {
        dahlsim_error("calibrate: %s: %s", manifest, strerror(-ret));
        free(t.v);
        goto fail;
    }
    if (!o->quiet)
        print_report(&t, o->max_rsd, stderr);
    free(t.v);
    /* The swap: the previous calibration stays complete until the new one is in place. */
    bool had_previous = dahlsim_is_dir(p->final);
    if (had_previous && rename(p->final, p->old) != 0) {
        dahlsim_error("calibrate: cannot move %s aside: %s", p->final, strerror(errno));
        goto fail;
    }
    if (rename(p->tmp, p->final) != 0) {
        dahlsim_error("calibrate: cannot move %s to %s: %s", p->tmp, p->final, strerror(errno));
        if (had_previous)
            rename(p->old, p->final);
        goto fail;
    }
    if (had_previous)
        dahlsim_remove_tree(p->old);
    if (!o->quiet)
        fprintf(stderr, "dahlsim calibrate: wrote %s\n", p->final);
    cJSON_Delete(prev);
    return DAHLSIM_EXIT_OK;
fail:
    code = DAHLSIM_EXIT_FAILURE;
fail_code:
    cJSON_Delete(prev);
    dahlsim_remove_tree(p->tmp);
    if (!o->quiet && dahlsim_is_dir(p->final))
        fprintf(stderr, "dahlsim calibrate: %s is unchanged\n", p->final);
    return code;
}

int dahlsim_cmd_calibrate(int argc, char **argv)
{
    if (dahl_engine_is_simulated()) {
        dahlsim_error("calibrate: measuring needs the native build; this is the SimGrid binary (use "
                      "build/dahlsim calibrate)");
        return DAHLSIM_EXIT_USAGE;
    }
    struct calib_opts o;
    int code = parse_options(argc, argv, &o);
    if (code >= 0)
        return code;
    struct paths p;
    long pid = (long)getpid();
    if (snprintf(p.final, sizeof(p.final), "%s/%s", o.dir, o.machine) >= (int)sizeof(p.final) ||
        snprintf(p.tmp, sizeof(p.tmp), "%s/.%s.tmp-%ld", o.dir, o.machine, pid) >= (int)sizeof(p.tmp) ||
        snprintf(p.old, sizeof(p.old), "%s/.%s.old-%ld", o.dir, o.machine, pid) >= (int)sizeof(p.old) ||
        snprintf(p.sampling, sizeof(p.sampling), "%s/sampling", p.tmp) >= (int)sizeof(p.sampling) ||
        snprintf(p.errlog, sizeof(p.errlog), "%s/stderr.log", p.tmp) >= (int)sizeof(p.errlog) ||
        snprintf(p.run, sizeof(p.run), "%s/run", p.tmp) >= (int)sizeof(p.run)) {
        dahlsim_error("--dir: path too long");
        return DAHLSIM_EXIT_USAGE;
    }
    dahl_kernels_init();
    if (o.report_only)
        return report_only(&o, &p);
    for (int i = 0; i < o.ncovers; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/train-images-idx3-ubyte.gz", DAHL_FASHION_MNIST_DIR);
        if (strcmp(o.covers[i].dataset, "fashion-mnist") == 0 && access(path, R_OK) != 0) {
            dahlsim_error("calibrate: --cover fashion-mnist: %s: %s", path, strerror(errno));
            fprintf(stderr, "hint: apt-get install dataset-fashion-mnist, or cover synthetic:28x28x1 instead\n");
            return DAHLSIM_EXIT_USAGE;
        }
    }
    return calibrate(&o, &p, argc, argv);
}

/* `dahlsim calibrate --machine NAME`: measures this machine's perf models, bus and runtime costs into
 * calibration/NAME/ (dahlsim_calibrate.h), or with --report prints the per-model report of an existing
 * calibration. Native binary only. */
#include "dahlsim_calibrate.h"
#include "dahlsim_cli.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_fs.h"
#include "dahlsim_manifest.h"

#include "dahl_engine.h"
#include "dahl_kernels.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_BATCH 8
#define DEFAULT_STEPS 16  /* training steps per round: >= 11 updates of every per-layer codelet */
#define DEFAULT_ROUNDS 12
#define DEFAULT_MAX_RSD 0.5
#define DEFAULT_SCHEDULERS "eager,prio,random,ws,lws,dm,dmda,dmdar,dmdas,heteroprio:auto-prws"
#define DEFAULT_SCHED_STEPS 32 /* of 32 samples, per run timing a policy */

static const char usage_line[] =
    "usage: dahlsim calibrate --machine NAME [--scenario FILE]...\n"
    "                         [--cover DATASET[,model=M][,perfmodel=K][,grain=N]]...\n"
    "                         [--force]\n"
    "                         [--recalibrate-flagged] [--max-rsd X] [--rounds N] [--steps N] [--batch N]\n"
    "                         [--ngpu N] [--schedulers LIST] [--sched-steps N] [--noisy X] [--reruns N]\n"
    "                         [--no-one-worker] [--dir DIR] [--report] [--quiet]\n";

static void calibrate_print_help(void)
{
    fputs(usage_line, stdout);
    printf("\nMeasures StarPU perf models of every dahl codelet on this machine (native training with\n"
           "STARPU_CALIBRATE=1) until a simulated run of each covered setup finds them all calibrated, then\n"
           "stores them with StarPU's bus measurements, its platform file and a manifest.json under DIR/NAME/.\n"
           "A re-run only measures the setups whose models are missing or not calibrated enough.\n\n"
           "options:\n"
           "  --machine NAME        the machine's name (letters, digits, '.', '_', '-'): DIR/NAME/, and the\n"
           "                        STARPU_HOSTNAME simulations use\n"
           "  --cover SETUP         a setup to calibrate for, repeatable: DATASET (fashion-mnist[:SIZE] or\n"
           "                        synthetic:HxWxC) with optional ,model=lenet|vgg-small|resnet:D|deep:N|FILE and\n"
           "                        ,perfmodel=history|regression|nl-regression and ,grain=N (the runs train\n"
           "                        with tasks over N samples: the models a scenario's grain N needs, N and\n"
           "                        batch mod N; default 1). Default: fashion-mnist,\n"
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
           "  --noisy X             a run during which other processes and the hypervisor (steal time) took\n"
           "                        over X of the cores' time (/proc/stat against the run's own CPU time)\n"
           "                        is disturbed: its figures are dropped and it runs again (default 0.1).\n"
           "                        A run whose machine probe (dahl's conv2d kernel on every core, before\n"
           "                        and after it) is slower, or whose cores are further apart, is a speed\n"
           "                        spell of the machine's own: kept, and recorded in the manifest's\n"
           "                        machine_spread, which predictions' intervals come from\n"
           "  --reruns N            at most N disturbed runs again per run, then stop with exit 2 (default 2)\n"
           "  --max-error PCT       StarPU's STARPU_HISTORY_MAX_ERROR: a sample more than PCT %% away from its\n"
           "                        entry's mean is refused, and an entry with more refusals than samples\n"
           "                        starts over (default 50, StarPU's); on a machine shared with other work,\n"
           "                        a larger value keeps the samples of its loaded moments in the means\n"
           "  --ngpu N              CUDA workers next to the CPU ones (default 0; needs a CUDA build): the\n"
           "                        runs then use the dmda scheduler, which sends tasks to whichever worker\n"
           "                        kind still lacks measurements, so both get calibrated\n"
           "  --no-one-worker       do not measure the kernels again with one CPU worker (sampling-1cpu/,\n"
           "                        which simulations with fewer CPU workers than cores read: kernels run\n"
           "                        faster or slower with the other cores idle; measured by default on a\n"
           "                        machine of several cores without --ngpu; a previous calibration's are\n"
           "                        then left out)\n"
           "  --dir DIR             calibration root (default: calibration/ of the dahlsim tree)\n"
           "  --report              only print the per-model report of an existing calibration\n"
           "  --quiet               no progress lines\n",
           DEFAULT_MAX_RSD, DEFAULT_ROUNDS, DEFAULT_STEPS, DEFAULT_BATCH, DEFAULT_SCHED_STEPS);
}

/* --schedulers: "none", or scenario scheduler values separated by commas. */
static bool parse_schedulers(const char *text, struct dahlsim_calibrate_opts *o)
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

/* --ngpu: CUDA workers, which this build's StarPU must have. */
static bool parse_ngpu(const char *text, struct dahlsim_calibrate_opts *o)
{
    long n = 0;
    bool ok = dahlsim_parse_int("--ngpu", text, 0, 8, &n);
    o->ngpu = (int)n;
    if (ok && n > 0 && !dahl_engine_has_cuda()) {
        dahlsim_error("--ngpu %ld: this dahlsim's StarPU has no CUDA", n);
        fprintf(stderr, "hint: scripts/setup-deps --flavours native-cuda, then build with cmake -DDAHLSIM_CUDA=ON\n");
        ok = false;
    }
    return ok;
}

enum { O_MACHINE = 256, O_COVER, O_FORCE, O_RECAL, O_MAX_RSD, O_ROUNDS, O_STEPS, O_BATCH, O_DIR, O_REPORT,
       O_QUIET, O_HELP, O_NGPU, O_SCENARIO, O_SCHEDULERS, O_SCHED_STEPS, O_NOISY, O_RERUNS, O_MAX_ERROR,
       O_NO_ONE_WORKER };
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
    {"noisy", required_argument, NULL, O_NOISY},     {"reruns", required_argument, NULL, O_RERUNS},
    {"max-error", required_argument, NULL, O_MAX_ERROR},
    {"no-one-worker", no_argument, NULL, O_NO_ONE_WORKER},
    {NULL, 0, NULL, 0},
};

static bool calibrate_set_option(int opt, const char *arg, void *ctx)
{
    struct dahlsim_calibrate_opts *o = ctx;
    switch (opt) {
    case O_MACHINE:
        o->machine = arg;
        return dahlsim_parse_machine_name("--machine", arg);
    case O_COVER:
        return dahlsim_calibrate_covers_add(o, arg);
    case O_SCENARIO:
        return dahlsim_calibrate_covers_from_scenario(arg, o);
    case O_FORCE:
        o->force = true;
        return true;
    case O_RECAL:
        o->recalibrate_flagged = true;
        return true;
    case O_MAX_RSD:
        return dahlsim_parse_double("--max-rsd", arg, 0, 100, &o->max_rsd);
    case O_ROUNDS:
        return dahlsim_parse_int("--rounds", arg, 1, 1000, &o->rounds);
    case O_STEPS:
        return dahlsim_parse_int("--steps", arg, 1, 100000, &o->steps);
    case O_BATCH:
        return dahlsim_parse_int("--batch", arg, 1, 4096, &o->batch);
    case O_NGPU:
        return parse_ngpu(arg, o);
    case O_DIR:
        o->dir = arg;
        return dahlsim_parse_dir("--dir", arg);
    case O_SCHEDULERS:
        return parse_schedulers(arg, o);
    case O_SCHED_STEPS:
        return dahlsim_parse_int("--sched-steps", arg, 1, 100000, &o->sched_steps);
    case O_NOISY:
        return dahlsim_parse_double("--noisy", arg, 1e-6, 0.99, &o->noisy);
    case O_RERUNS:
        return dahlsim_parse_int("--reruns", arg, 0, 10, &o->reruns);
    case O_MAX_ERROR:
        return dahlsim_parse_int("--max-error", arg, 1, 100000, &o->history_max_error);
    case O_REPORT:
        o->report_only = true;
        return true;
    case O_NO_ONE_WORKER:
        o->one_worker = false;
        return true;
    case O_QUIET:
        o->quiet = true;
        return true;
    }
    return false;
}

static const struct dahlsim_options calibrate_options = {"calibrate", usage_line, options, O_HELP,
                                                          calibrate_print_help, calibrate_set_option};

/* Parses argv into o (*help: --help was printed). Returns 0, or -EINVAL after printing the error. */
static int calibrate_parse_options(int argc, char **argv, struct dahlsim_calibrate_opts *o, bool *help)
{
    *o = (struct dahlsim_calibrate_opts){.batch = DEFAULT_BATCH, .steps = DEFAULT_STEPS, .rounds = DEFAULT_ROUNDS,
                                         .max_rsd = DEFAULT_MAX_RSD, .sched_steps = DEFAULT_SCHED_STEPS,
                                         .noisy = 0.1, .reruns = 2, .history_max_error = 50,
                                         .one_worker = true};
    snprintf(o->schedulers, sizeof(o->schedulers), "%s", DEFAULT_SCHEDULERS);
    dahlsim_command_line(argc, argv, o->command, sizeof(o->command)); /* before getopt_long reorders argv */
    int ret = dahlsim_options_parse(&calibrate_options, argc, argv, o, help);
    if (ret != 0 || *help)
        return ret;
    if (optind < argc) {
        dahlsim_unexpected_argument("calibrate", argv[optind], usage_line);
        return -EINVAL;
    }
    if (o->machine == NULL) {
        dahlsim_usage_error(usage_line, "calibrate: --machine NAME is required");
        return -EINVAL;
    }
    dahlsim_calibrate_covers_default(o);
    for (int i = 0; i < o->ncovers; i++)
        if (o->covers[i].grain > o->batch) {
            dahlsim_error("calibrate: --cover %s,grain=%ld: expected a grain of at most --batch (%ld)",
                          o->covers[i].dataset, o->covers[i].grain, o->batch);
            fprintf(stderr, "hint: --batch %ld, or a smaller grain\n", o->covers[i].grain);
            return -EINVAL;
        }
    if (o->dir == NULL)
        o->dir = dahlsim_calibration_root();
    return 0;
}

int dahlsim_cmd_calibrate(int argc, char **argv)
{
    struct dahlsim_calibrate_opts o;
    bool help;
    int code = calibrate_parse_options(argc, argv, &o, &help);
    if (code != 0 || help)
        return dahlsim_exit_of(code);
    struct dahlsim_calibrate_paths p;
    if (!dahlsim_calibrate_paths_init(&p, &o)) {
        dahlsim_error("--dir: path too long");
        return DAHLSIM_EXIT_USAGE;
    }
    dahl_kernels_init();
    if (o.report_only)
        return dahlsim_exit_of(dahlsim_calibrate_report(&o, &p));
    int ret = dahlsim_calibrate(&o, &p);
    return ret == -EBUSY ? DAHLSIM_EXIT_USAGE : dahlsim_exit_of(ret); /* disturbed: the machine, not a failure */
}

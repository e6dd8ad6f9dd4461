/* `dahlsim demo`: the whole loop on the user's own machine, for scripts/quickstart. It calibrates this
 * machine for a scenario (calibrate --scenario, the scenario's policy only), simulates the scenario on that
 * calibration and on the scenario's own machine (a committed calibration of another machine), trains it
 * natively a few times, and prints predicted against measured samples/s, each labelled with the machine it
 * is for, the prediction with the interval the calibration's measured spread implies (dahlsim_interval.h).
 * Everything is a subprocess of this binary (calibrate, run, train), so what it prints is what those
 * commands give. */
#include "dahlsim_cli.h"
#include "dahlsim_experiment.h"
#include "dahlsim_fs.h"
#include "dahlsim_interval.h"
#include "dahlsim_probe.h"
#include "dahlsim_spawn.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SCENARIO "scenarios/fmnist-lenet-2core.json"
#define DEFAULT_MACHINE "local"
#define MAX_RUNS 9

static const char usage[] = "usage: dahlsim demo [--scenario FILE] [--machine NAME] [--runs N] [--out DIR]\n"
                            "                    [--no-calibrate]\n";

static void demo_print_help(void)
{
    fputs(usage, stdout);
    printf("\nThe whole loop on this machine: calibrates it for the scenario (dahlsim calibrate --machine NAME\n"
           "--scenario FILE --schedulers <its policy>: only what the calibration lacks is measured), simulates\n"
           "the scenario on that calibration and on the scenario's own machine (a calibration of another\n"
           "machine), trains it natively N times, and prints the predicted samples/s, with the interval this\n"
           "machine's measured spread implies, against the measured median, each labelled with its machine.\n"
           "Results go to DIR/local, DIR/reference and DIR/native-K (default DIR: results/demo).\n\n"
           "options:\n"
           "  --scenario FILE  the scenario (default " DEFAULT_SCENARIO "; one point)\n"
           "  --machine NAME   the calibration of this machine (default " DEFAULT_MACHINE
           ": calibration/" DEFAULT_MACHINE "/)\n"
           "  --runs N         native runs, median taken (default 3, at most %d)\n"
           "  --out DIR        where the runs go\n"
           "  --no-calibrate   use calibration NAME as it is\n",
           MAX_RUNS);
}

struct demo_opts {
    const char *scenario, *machine, *out;
    long runs;
    bool calibrate;
};

enum { O_SCENARIO = 1000, O_MACHINE, O_RUNS, O_OUT, O_NO_CALIBRATE, O_HELP };

static bool demo_set(int opt, const char *arg, void *ctx)
{
    struct demo_opts *o = ctx;
    switch (opt) {
    case O_SCENARIO:
        o->scenario = arg;
        return true;
    case O_MACHINE:
        o->machine = arg;
        return true;
    case O_RUNS:
        return dahlsim_parse_int("--runs", arg, 1, MAX_RUNS, &o->runs);
    case O_OUT:
        o->out = arg;
        return true;
    case O_NO_CALIBRATE:
        o->calibrate = false;
        return true;
    default:
        return false;
    }
}

static const struct option demo_long_options[] = {
    {"scenario", required_argument, NULL, O_SCENARIO}, {"machine", required_argument, NULL, O_MACHINE},
    {"runs", required_argument, NULL, O_RUNS},         {"out", required_argument, NULL, O_OUT},
    {"no-calibrate", no_argument, NULL, O_NO_CALIBRATE}, {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

static const struct dahlsim_options demo_options = {"demo", usage, demo_long_options, O_HELP, demo_print_help,
                                                    demo_set};

/* Runs this binary with args (NULL-terminated, args[0] the subcommand) and env, its stderr shown, its
 * stdout kept out of the demo's table. The exit status, -1 when it could not start. */
static int self(char *const args[], const struct dahlsim_env_var *env, size_t nenv)
{
    char bin[PATH_MAX];
    if (dahlsim_sibling_path("dahlsim", bin, sizeof(bin)) != 0)
        return -1;
    char *argv[48] = {bin};
    size_t n = 1;
    for (size_t k = 0; args[k] != NULL && n < 47; k++)
        argv[n++] = args[k];
    argv[n] = NULL;
    char out[8192];
    return dahlsim_spawn(argv, env, nenv, out, sizeof(out));
}

/* The demo's error for a subprocess that failed with status st (its own lines, on the same stderr, say
 * why): -EINVAL when it refused its input (the scenario, the calibration), else -EIO. */
static int failed(int st)
{
    return st == DAHLSIM_EXIT_USAGE ? -EINVAL : -EIO;
}

/* Simulates the scenario into out/name on machine (NULL: the scenario's own). 0, or a negative errno after
 * the error line (run's own lines before it). */
static int simulate(const struct demo_opts *o, const char *machine, const char *name, struct dahlsim_prediction *f)
{
    char dir[PATH_MAX], set[128];
    snprintf(dir, sizeof(dir), "%s/%s", o->out, name);
    snprintf(set, sizeof(set), "machine=%s", machine != NULL ? machine : "");
    char *args[] = {"run", (char *)o->scenario, "--out", dir, "--quiet", machine != NULL ? "--set" : NULL, set,
                    NULL};
    int st = self(args, NULL, 0);
    if (st != 0 || !dahlsim_prediction_read(dir, f)) {
        dahlsim_error("demo: simulating %s on %s failed (exit %d): see the lines above", o->scenario,
                      machine != NULL ? machine : "its machine", st);
        return failed(st);
    }
    return 0;
}

/* Trains the experiment x natively into out/native-K, runs times: the median samples/s and the range. */
static int train(const struct demo_opts *o, const struct dahlsim_experiment *x, double *med, double *lo,
                 double *hi)
{
    char samples[32], epochs[32], batch[32], ncpu[32], seed[32], sched[64], priorities[80] = "";
    snprintf(samples, sizeof(samples), "%ld", x->samples);
    snprintf(epochs, sizeof(epochs), "%ld", x->epochs);
    snprintf(batch, sizeof(batch), "%ld", x->batch);
    snprintf(ncpu, sizeof(ncpu), "%ld", x->cpus);
    snprintf(sched, sizeof(sched), "%s", x->scheduler);
    if (strncmp(x->scheduler, "heteroprio:auto-", 16) == 0) { /* train's --sched heteroprio --priorities */
        snprintf(sched, sizeof(sched), "heteroprio");
        snprintf(priorities, sizeof(priorities), "auto:%s", x->scheduler + 16);
    }
    char sampling[PATH_MAX + 16];
    snprintf(sampling, sizeof(sampling), "%s/%s/sampling", dahlsim_calibration_root(), o->machine);
    const struct dahlsim_env_var env[] = {{"STARPU_PERF_MODEL_DIR", sampling},
                                          {"STARPU_HOSTNAME", o->machine},
                                          {"STARPU_CALIBRATE", "0"},
                                          {"STARPU_SILENT", "1"}};
    double rates[MAX_RUNS];
    for (long k = 0; k < o->runs; k++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s/native-%ld", o->out, k + 1);
        snprintf(seed, sizeof(seed), "%ld", k + 1);
        char *args[] = {"train", "--dataset", (char *)x->dataset, "--model", (char *)x->model,
                        "--samples", samples, "--epochs", epochs, "--test-samples", batch,
                        "--batch", batch, "--ncpu", ncpu, "--sched", sched,
                        "--seed", seed, "--quiet", "--out", dir,
                        priorities[0] ? "--priorities" : NULL, priorities, NULL};
        fprintf(stderr, "dahlsim demo: native run %ld/%ld ...\n", k + 1, o->runs);
        struct dahlsim_prediction f;
        int st = self(args, env, sizeof(env) / sizeof(env[0]));
        if (st != 0 || !dahlsim_prediction_read(dir, &f)) {
            dahlsim_error("demo: the native run failed (exit %d): see the lines above", st);
            return failed(st);
        }
        rates[k] = f.samples_per_s;
    }
    *med = dahlsim_median(rates, (size_t)o->runs); /* sorts */
    *lo = rates[0];
    *hi = rates[o->runs - 1];
    return 0;
}

/* One line of the comparison: label, samples/s and its range or why there is none. */
static void line(const char *label, double rate, double lo, double hi, const char *unknown)
{
    printf("  %-68s %8.0f samples/s", label, rate);
    if (isfinite(lo))
        printf("  (%.0f to %.0f)\n", lo, hi);
    else
        printf("  (no interval: %s)\n", unknown[0] ? unknown : "none recorded");
}

/* The machine's probe now (dahl's conv2d on every core, median over them) against the spell the calibration
 * measured its perf models in and its spread, from its manifest: which spell the native runs met. */
static void spell_line(const struct demo_opts *o)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = online > 0 && online <= DAHLSIM_PROBE_MAX_CORES ? (int)online : 1;
    struct dahlsim_probe now = {0};
    if (dahlsim_probe_around(cores, &now, NULL) != 0)
        return;
    double g = dahlsim_median(now.gflops, (size_t)cores);
    char machine_dir[PATH_MAX + 32];
    snprintf(machine_dir, sizeof(machine_dir), "%s/%s", dahlsim_calibration_root(), o->machine);
    struct dahlsim_interval iv;
    if (dahlsim_interval_of_machine(machine_dir, &iv))
        printf("  machine probe: %.1f GFLOP/s after the native runs, %.1f where the perf models were measured "
               "(%.1f to %.1f over the calibration)\n", g, iv.calibrated, iv.p10, iv.p90);
    else
        printf("  machine probe: %.1f GFLOP/s after the native runs (the calibration recorded none)\n", g);
    /* The cores' placement moves small-task runs by 40-50 % on a 2-vCPU VM, and the runtime's costs were
     * measured in one placement: say which the native runs met, judged as validate judges it (the interval
     * leaves the placement out). */
    if (now.latency_ns > 0 && iv.shortest_ns > 0) {
        printf("  cores' round trip: %.0f ns after the native runs, %.0f ns the shortest over the calibration\n",
               now.latency_ns, iv.shortest_ns);
        struct dahlsim_node calibrated = {.core_latency_ns = iv.shortest_ns}, here = {.core_latency_ns = now.latency_ns};
        char why[512];
        if (dahlsim_node_latency_differs(&calibrated, &here, why, sizeof(why)))
            printf("  the cores are placed otherwise than where the runtime's costs were measured: not in the "
                   "interval\n");
    }
}

static int demo(const struct demo_opts *o)
{
    int ret = dahlsim_make_dirs(o->out);
    if (ret != 0) {
        dahlsim_error("demo: cannot create %s: %s", o->out, strerror(-ret));
        return -EINVAL;
    }
    struct dahlsim_prediction ref;
    if ((ret = simulate(o, NULL, "reference", &ref)) != 0) /* also checks the scenario first */
        return ret;
    char point[PATH_MAX + 32], err[PATH_MAX + 256];
    snprintf(point, sizeof(point), "%s/reference/point.json", o->out);
    struct dahlsim_experiment x;
    if (dahlsim_experiment_load(point, &x, err, sizeof(err)) != 0) {
        dahlsim_error("demo: %s", err);
        return -EIO;
    }
    if (o->calibrate) {
        fprintf(stderr, "dahlsim demo: calibrating this machine as %s for %s (scheduler %s) ...\n", o->machine,
                o->scenario, x.scheduler);
        char *args[] = {"calibrate", "--machine", (char *)o->machine, "--scenario", (char *)o->scenario,
                        "--schedulers", x.scheduler, NULL};
        int st = self(args, NULL, 0);
        if (st != 0) {
            dahlsim_error("demo: calibrate --machine %s failed (exit %d): see its lines above", o->machine, st);
            return failed(st);
        }
    }
    struct dahlsim_prediction here;
    if ((ret = simulate(o, o->machine, "local", &here)) != 0)
        return ret;
    double med, lo, hi;
    if ((ret = train(o, &x, &med, &lo, &hi)) != 0)
        return ret;
    printf("dahlsim demo: %s: %s, %s, batch %ld, %s, %ld CPU workers\n", o->scenario, x.dataset, x.model, x.batch,
           x.scheduler, x.cpus);
    char label[128];
    bool placed = strcmp(here.cores, "close") == 0 || strcmp(here.cores, "apart") == 0;
    snprintf(label, sizeof(label), "predicted for this machine (calibration %s%s%s):", o->machine,
             placed ? ", cores " : "", placed ? here.cores : "");
    line(label, here.samples_per_s, here.rate_lo, here.rate_hi, here.unknown);
    snprintf(label, sizeof(label), "predicted by the scenario's machine (calibration %s):", x.machine);
    line(label, ref.samples_per_s, ref.rate_lo, ref.rate_hi, ref.unknown);
    snprintf(label, sizeof(label), "measured on this machine (median of %ld native runs, range):", o->runs);
    line(label, med, lo, hi, "");
    spell_line(o);
    if (isfinite(here.rate_lo))
        printf("  the measured median is %s the interval; prediction error %+.1f %%\n",
               med >= here.rate_lo && med <= here.rate_hi ? "inside" : "outside",
               100 * (here.samples_per_s - med) / med);
    return 0;
}

int dahlsim_cmd_demo(int argc, char **argv)
{
    struct demo_opts o = {.scenario = DEFAULT_SCENARIO, .machine = DEFAULT_MACHINE, .out = "results/demo",
                          .runs = 3, .calibrate = true};
    bool help = false;
    if (dahlsim_options_parse(&demo_options, argc, argv, &o, &help) != 0)
        return DAHLSIM_EXIT_USAGE;
    if (help)
        return DAHLSIM_EXIT_OK;
    if (optind < argc)
        return dahlsim_unexpected_argument("demo", argv[optind], usage);
    return dahlsim_exit_of(demo(&o));
}

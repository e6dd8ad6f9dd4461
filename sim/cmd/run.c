/* `dahlsim check FILE` and `dahlsim run FILE`: validate a scenario, and simulate its one experiment
 * (dahlsim_run.h). */
#include "dahlsim_cli.h"
#include "dahlsim_interval.h"
#include "dahlsim_run.h"
#include "dahlsim_scenario.h"
#include "dahlsim_trace.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_SETS 64

/* Options shared by check and run. */
struct run_opts {
    const char *file;
    const char *out;
    const char *sets[MAX_SETS];
    size_t nsets;
    bool quiet;
    bool help;
    bool trace;                   /* run --trace / --trace-window */
    long trace_first, trace_last; /* -1: every step */
};

/* The predicted makespan and throughput with the interval the calibration's measured spread implies (or
 * that it is unknown), from out/results.json, on stderr. */
static void print_interval(const char *out)
{
    struct dahlsim_prediction p;
    if (!dahlsim_prediction_read(out, &p))
        return;
    if (isfinite(p.makespan_lo))
        fprintf(stderr, "dahlsim run: predicted %.4f s (%.4f to %.4f s), %.0f samples/s (%.0f to %.0f): the "
                "interval is the calibration's measured speed spread of its machine\n", p.makespan_s,
                p.makespan_lo, p.makespan_hi, p.samples_per_s, p.rate_lo, p.rate_hi);
    else
        fprintf(stderr, "dahlsim run: predicted %.4f s, %.0f samples/s; no interval: %s\n", p.makespan_s,
                p.samples_per_s, p.unknown[0] ? p.unknown : "none recorded");
}

/* Parses check's or run's options (takes_out: run's --out and --trace too) into o (o->help: --help was
 * printed). Returns 0, or -EINVAL after printing the error and usage. */
static int run_parse_options(const char *cmd, const char *usage, int argc, char **argv, struct run_opts *o,
                             bool takes_out)
{
    enum { O_OUT = 256, O_SET, O_QUIET, O_HELP, O_TRACE, O_TRACE_WINDOW };
    static const struct option options[] = {
        {"out", required_argument, NULL, O_OUT},
        {"trace", no_argument, NULL, O_TRACE},
        {"trace-window", required_argument, NULL, O_TRACE_WINDOW},
        {"set", required_argument, NULL, O_SET},
        {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    *o = (struct run_opts){.trace_first = -1, .trace_last = -1};
    optind = 1;
    opterr = 0;
    int opt, index = -1;
    while ((opt = getopt_long(argc, argv, ":", options, &index)) != -1) {
        switch (opt) {
        case O_OUT:
            if (!takes_out)
                goto unknown;
            o->out = optarg;
            break;
        case O_SET:
            if (o->nsets == MAX_SETS) {
                dahlsim_error("%s: at most %d --set", cmd, MAX_SETS);
                return -EINVAL;
            }
            o->sets[o->nsets++] = optarg;
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_TRACE:
            if (!takes_out)
                goto unknown;
            o->trace = true;
            break;
        case O_TRACE_WINDOW:
            if (!takes_out)
                goto unknown;
            if (!dahlsim_trace_window_parse("--trace-window", optarg, &o->trace_first, &o->trace_last))
                return -EINVAL;
            o->trace = true;
            break;
        case O_HELP:
            fputs(usage, stdout);
            o->help = true;
            return 0;
        default: /* ':' (no value) or an unknown option */
            dahlsim_option_misuse(cmd, opt, argv, usage);
            return -EINVAL;
        unknown: /* an option of run that check does not take */
            dahlsim_error("%s: unknown option \"--%s\"", cmd, options[index].name);
            fputs(usage, stderr);
            return -EINVAL;
        }
    }
    if (optind != argc - 1) {
        dahlsim_error("%s: expected one scenario file%s", cmd, optind < argc - 1 ? ", got several" : "");
        fputs(usage, stderr);
        return -EINVAL;
    }
    o->file = argv[optind];
    return 0;
}

static const char check_usage[] =
    "usage: dahlsim check FILE [--set KEY=VALUE]...\n"
    "Validates a scenario file (and every point of its sweep) against its machine's calibration without\n"
    "running it. Keys and defaults: scenarios/README.md.\n";

int dahlsim_cmd_check(int argc, char **argv)
{
    struct run_opts o;
    int ret = run_parse_options("check", check_usage, argc, argv, &o, false);
    if (ret != 0 || o.help)
        return dahlsim_exit_of(ret);
    struct dahlsim_scenario *s = dahlsim_scenario_load(o.file, o.sets, o.nsets);
    if (s == NULL)
        return DAHLSIM_EXIT_USAGE;
    const struct dahlsim_experiment *x = dahlsim_scenario_point(s, 0);
    printf("ok: %s: %zu experiment%s on machine %s\n", o.file, dahlsim_scenario_points(s),
           dahlsim_scenario_points(s) == 1 ? "" : "s", x->machine);
    dahlsim_scenario_destroy(s);
    return DAHLSIM_EXIT_OK;
}

static const char run_usage[] =
    "usage: dahlsim run FILE [--out DIR] [--set KEY=VALUE]... [--trace] [--trace-window START:END] [--quiet]\n"
    "Simulates the scenario's experiment with StarPU-SimGrid on its machine's calibration and writes\n"
    "DIR/results.json (default DIR: results/<scenario name>). --set overrides a scenario key (the value is\n"
    "read as JSON, else as a string), e.g. --set batch=14 --set scheduler=dmda. A scenario with a sweep\n"
    "runs with `dahlsim sweep`.\n"
    "--trace writes DIR/trace/: a Paje trace (dahl.paje, and StarPU's own FxT trace converted in starpu/),\n"
    "a Chrome trace-event JSON (trace.json), a Gantt chart (gantt.png, gantt.svg) and a utilisation summary\n"
    "(summary.json, summary.txt); --trace-window START:END traces training steps START to END (from 1) only.\n"
    "The scenario keys \"trace\" and \"trace_window\" do the same.\n";

/* results/<basename of file without .json>. */
static void default_out(const char *file, char *buf, size_t size)
{
    const char *base = strrchr(file, '/');
    base = base != NULL ? base + 1 : file;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    snprintf(buf, size, "results/%.*s", (int)len, base);
}

int dahlsim_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    int ret = run_parse_options("run", run_usage, argc, argv, &o, true);
    if (ret != 0 || o.help)
        return dahlsim_exit_of(ret);
    struct dahlsim_scenario *s = dahlsim_scenario_load(o.file, o.sets, o.nsets);
    if (s == NULL)
        return DAHLSIM_EXIT_USAGE;
    if (dahlsim_scenario_points(s) > 1) {
        dahlsim_error("run: %s has a sweep of %zu points: run it with dahlsim sweep", o.file,
                      dahlsim_scenario_points(s));
        fprintf(stderr, "hint: or fix the swept keys with --set KEY=VALUE\n");
        dahlsim_scenario_destroy(s);
        return DAHLSIM_EXIT_USAGE;
    }
    char out[PATH_MAX];
    if (o.out != NULL)
        snprintf(out, sizeof(out), "%s", o.out);
    else
        default_out(o.file, out, sizeof(out));
    struct dahlsim_experiment traced = *dahlsim_scenario_point(s, 0);
    if (o.trace) {
        long steps = traced.samples / traced.batch * traced.epochs;
        if (o.trace_last >= steps) {
            dahlsim_error("--trace-window: expected a window within the run's %ld training steps, got %ld:%ld", steps,
                          o.trace_first + 1, o.trace_last + 1);
            dahlsim_scenario_destroy(s);
            return DAHLSIM_EXIT_USAGE;
        }
        traced.trace = true;
        traced.trace_first = o.trace_first;
        traced.trace_last = o.trace_last;
    }
    const struct dahlsim_experiment *x = &traced;
    if (!o.quiet)
        fprintf(stderr, "dahlsim run: %s: %s on %s (%ld CPUs, %ld GPUs), %s, batch %ld, scheduler %s\n", o.file,
                x->dataset, x->machine, x->cpus, x->gpus, x->model, x->batch, x->scheduler);
    int status = dahlsim_run_experiment(x, o.file, out, NULL, o.quiet);
    dahlsim_scenario_destroy(s);
    if (status == DAHLSIM_EXIT_USAGE)
        return DAHLSIM_EXIT_USAGE;
    if (status != 0) {
        dahlsim_error("run: %s: the simulation failed (exit %d)", o.file, status);
        return DAHLSIM_EXIT_FAILURE;
    }
    if (!o.quiet)
        print_interval(out);
    if (!o.quiet)
        fprintf(stderr, "dahlsim run: wrote %s/results.json\n", out);
    return DAHLSIM_EXIT_OK;
}

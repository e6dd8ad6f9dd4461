/* `dahlsim check FILE` and `dahlsim run FILE`: validate a scenario, and simulate its one experiment by
 * starting build/dahlsim-sim sim-train (the training program under StarPU-SimGrid) with the machine's
 * calibration as STARPU_PERF_MODEL_DIR / STARPU_HOSTNAME. The simulated figures in DIR/results.json come from
 * StarPU-SimGrid only; wall time and peak RSS of the simulating process are recorded beside them. */
#include "dahlsim_run.h"
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_scenario.h"
#include "dahlsim_smpi.h"
#include "dahlsim_spawn.h"
#include "dahlsim_trace.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SETS 64

int dahlsim_run_experiment(const struct dahlsim_experiment *x, const char *scenario, const char *out_dir,
                           const char *stderr_path, bool quiet)
{
    char samples[32], batch[32], epochs[32], ncpu[32], ngpu[32], seed[32], lr[32], momentum[32], mem[32];
    char sampling[PATH_MAX + 16];
    snprintf(samples, sizeof(samples), "%ld", x->samples);
    snprintf(batch, sizeof(batch), "%ld", x->batch);
    snprintf(epochs, sizeof(epochs), "%ld", x->epochs);
    snprintf(ncpu, sizeof(ncpu), "%ld", x->cpus);
    snprintf(ngpu, sizeof(ngpu), "%ld", x->gpus);
    snprintf(seed, sizeof(seed), "%ld", x->seed);
    snprintf(lr, sizeof(lr), "%.17g", x->lr);
    snprintf(momentum, sizeof(momentum), "%.17g", x->momentum);
    snprintf(mem, sizeof(mem), "%ld", x->gpu_memory_mib);
    snprintf(sampling, sizeof(sampling), "%s/sampling", x->machine_dir);
    char *args[56];
    size_t n = 0;
    /* heteroprio:auto-HEURISTIC runs as --sched heteroprio --priorities auto:HEURISTIC. */
    char sched[32], priorities[48];
    if (!dahlsim_scheduler_value(x->scheduler, sched, sizeof(sched), priorities, sizeof(priorities), NULL, 0))
        return DAHLSIM_EXIT_USAGE;
    const char *fixed[] = {"sim-train", "--dataset", x->dataset, "--model", x->model, "--samples", samples,
                           "--batch", batch, "--epochs", epochs, "--ncpu", ncpu, "--ngpu", ngpu, "--sched",
                           sched, "--perfmodel", x->perfmodel, "--reduction", x->reduction, "--seed", seed,
                           "--lr", lr, "--momentum", momentum, "--test-samples", batch, "--quiet"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        args[n++] = (char *)fixed[i];
    if (priorities[0] != '\0') {
        args[n++] = "--priorities";
        args[n++] = priorities;
    }
    if (scenario != NULL) {
        args[n++] = "--scenario";
        args[n++] = (char *)scenario;
    }
    if (out_dir != NULL) {
        args[n++] = "--out";
        args[n++] = (char *)out_dir;
    }
    char submit_cost[80];
    if (x->submit_us_per_task > 0) {
        snprintf(submit_cost, sizeof(submit_cost), "%.17g,%.17g", x->submit_us_per_task, x->input_copy_bytes_per_s);
        args[n++] = "--submit-cost";
        args[n++] = submit_cost;
    }
    char sched_cost[40];
    if (x->sched_push_us > 0) {
        snprintf(sched_cost, sizeof(sched_cost), "%.17g", x->sched_push_us);
        args[n++] = "--sched-cost";
        args[n++] = sched_cost;
    }
    char worker_cost[40];
    if (x->worker_us >= 0) {
        snprintf(worker_cost, sizeof(worker_cost), "%.17g", x->worker_us);
        args[n++] = "--worker-cost";
        args[n++] = worker_cost;
    }
    char window[64];
    if (x->trace && out_dir != NULL) {
        args[n++] = "--trace";
        if (x->nodes > 0) {
            /* every rank traces into OUT/trace/node-RANK; merged below. A fresh OUT/trace: an earlier run's
             * nodes must not pass for this one's. */
            args[n++] = "--trace-per-node";
            char trace_dir[PATH_MAX + 8];
            snprintf(trace_dir, sizeof(trace_dir), "%s/trace", out_dir);
            int r = dahlsim_remove_tree(trace_dir);
            if (r != 0) {
                dahlsim_error("--trace: cannot remove %s: %s", trace_dir, strerror(-r));
                return DAHLSIM_EXIT_FAILURE;
            }
        }
        if (x->trace_first >= 0) {
            snprintf(window, sizeof(window), "%ld:%ld", x->trace_first + 1, x->trace_last + 1);
            args[n++] = "--trace-window";
            args[n++] = window;
        }
    }
    args[n] = NULL;
    struct dahlsim_env_var env[8];
    size_t nenv = 0;
    env[nenv++] = (struct dahlsim_env_var){"STARPU_PERF_MODEL_DIR", sampling};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_HOSTNAME", x->machine};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_CALIBRATE", "0"};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_PREFETCH", x->prefetch ? "1" : "0"};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_SILENT", "1"};
    if (x->gpu_memory_mib > 0)
        env[nenv++] = (struct dahlsim_env_var){"STARPU_LIMIT_CUDA_MEM", mem};
    char out[65536];
    int status = (x->nodes > 0 ? dahlsim_spawn_nodes(x, out_dir, args, env, nenv, quiet ? out : NULL, sizeof(out), stderr_path)
                                : dahlsim_spawn_sim_err(args, env, nenv, quiet ? out : NULL, sizeof(out), stderr_path));
    if (status == 0 && x->trace && out_dir != NULL) {
        /* The Gantt chart is drawn here, by the native front end: the simulation wrote its data and script. */
        char trace_dir[PATH_MAX + 8], err[PATH_MAX + 256];
        snprintf(trace_dir, sizeof(trace_dir), "%s/trace", out_dir);
        double t0 = dahlsim_mono_s();
        if (x->nodes > 0) {
            /* One trace over every node: a Paje container per node holding its workers, a Gantt row per node
             * and worker; each node's own charts too. */
            if (dahlsim_trace_merge_nodes(trace_dir, (int)x->nodes, err, sizeof(err)) != 0) {
                dahlsim_error("--trace: %s", err);
                return DAHLSIM_EXIT_FAILURE;
            }
            for (long node = 0; node < x->nodes; node++) {
                char node_dir[PATH_MAX + 40];
                snprintf(node_dir, sizeof(node_dir), "%s/node-%ld", trace_dir, node);
                if (dahlsim_trace_render(node_dir, err, sizeof(err)) != 0)
                    fprintf(stderr, "dahlsim: warning: %s\n", err);
            }
        }
        if (dahlsim_trace_render(trace_dir, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: %s\n", err);
        else if (!quiet)
            fprintf(stderr, "dahlsim run: Gantt chart drawn in %.2f s\n", dahlsim_mono_s() - t0);
    }
    return status;
}

/* Options shared by check and run. */
struct run_opts {
    const char *file;
    const char *out;
    const char *sets[MAX_SETS];
    size_t nsets;
    bool quiet;
    bool trace;                   /* run --trace / --trace-window */
    long trace_first, trace_last; /* -1: every step */
};

static int parse(const char *cmd, const char *usage, int argc, char **argv, struct run_opts *o, bool takes_out)
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
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case O_OUT:
            if (!takes_out)
                goto unknown;
            o->out = optarg;
            break;
        case O_SET:
            if (o->nsets == MAX_SETS) {
                dahlsim_error("%s: at most %d --set", cmd, MAX_SETS);
                return DAHLSIM_EXIT_USAGE;
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
                return DAHLSIM_EXIT_USAGE;
            o->trace = true;
            break;
        case O_HELP:
            fputs(usage, stdout);
            return DAHLSIM_EXIT_OK;
        case ':':
            dahlsim_error("%s: %s needs a value", cmd, argv[optind - 1]);
            fputs(usage, stderr);
            return DAHLSIM_EXIT_USAGE;
        default:
        unknown:
            dahlsim_error("%s: unknown option \"%s\"", cmd, argv[optind - 1]);
            fputs(usage, stderr);
            return DAHLSIM_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        dahlsim_error("%s: expected one scenario file%s", cmd, optind < argc - 1 ? ", got several" : "");
        fputs(usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    o->file = argv[optind];
    return -1;
}

static const char check_usage[] =
    "usage: dahlsim check FILE [--set KEY=VALUE]...\n"
    "Validates a scenario file (and every point of its sweep) against its machine's calibration without\n"
    "running it. Keys and defaults: scenarios/README.md.\n";

int dahlsim_cmd_check(int argc, char **argv)
{
    struct run_opts o;
    int code = parse("check", check_usage, argc, argv, &o, false);
    if (code >= 0)
        return code;
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
    int code = parse("run", run_usage, argc, argv, &o, true);
    if (code >= 0)
        return code;
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
    if (status != 0) {
        dahlsim_error("run: %s: the simulation failed (exit %d)", o.file, status);
        return DAHLSIM_EXIT_FAILURE;
    }
    if (!o.quiet)
        fprintf(stderr, "dahlsim run: wrote %s/results.json\n", out);
    return DAHLSIM_EXIT_OK;
}

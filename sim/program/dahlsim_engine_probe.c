/* `dahlsim engine-probe`: the probe task graph in this binary's flavour (dahlsim_engine_probe.h). */
#include "dahlsim_engine_probe.h"

#include "dahlsim_program.h"
#include "dahlsim_util.h"

#include "dahl_engine.h"
#include "dahl_probe.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char probe_usage[] =
    "usage: dahlsim engine-probe [--tasks N] [--duration-us D] [--ncpu N] [--sched POLICY] [--empty]\n";

struct probe_request {
    long tasks;
    double duration_us;
    long ncpu;
    const char *sched;
    bool empty; /* --empty: dahl_empty tasks on 64 small tensors (runtime cost per task) instead of probes */
};

static void engine_probe_print_help(void)
{
    fputs(probe_usage, stdout);
    printf("Runs N independent probe tasks of D microseconds in this binary's StarPU flavour and\n"
           "prints one JSON line with the makespan. --empty: N empty tasks on two buffers instead\n"
           "(what the runtime costs per task; D is ignored).\n");
}

static const struct option options[] = {
    {"tasks", required_argument, NULL, 't'}, {"duration-us", required_argument, NULL, 'd'},
    {"ncpu", required_argument, NULL, 'c'},  {"sched", required_argument, NULL, 's'},
    {"empty", no_argument, NULL, 'e'},       {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static bool engine_probe_set_option(int opt, const char *arg, void *ctx)
{
    struct probe_request *req = ctx;
    switch (opt) {
    case 't':
        return dahlsim_parse_int("--tasks", arg, 1, 1000000, &req->tasks);
    case 'd':
        return dahlsim_parse_double("--duration-us", arg, 0, 1e9, &req->duration_us);
    case 'c':
        return dahlsim_parse_int("--ncpu", arg, 1, 128, &req->ncpu);
    case 's':
        req->sched = arg;
        return true;
    case 'e':
        req->empty = true;
        return true;
    }
    return false;
}

static const struct dahlsim_options engine_probe_options = {"engine-probe", probe_usage, options, 'h',
                                                             engine_probe_print_help, engine_probe_set_option};

/* Parses argv into req (*help: --help was printed). Returns 0, or -EINVAL after printing the error. */
static int engine_probe_parse_options(int argc, char **argv, struct probe_request *req, bool *help)
{
    *req = (struct probe_request){.tasks = DAHLSIM_PROBE_TASKS, .duration_us = DAHLSIM_PROBE_DURATION_US,
                                  .ncpu = -1, .sched = "eager"};
    int ret = dahlsim_options_parse(&engine_probe_options, argc, argv, req, help);
    if (ret != 0 || *help)
        return ret;
    if (optind < argc) {
        dahlsim_unexpected_argument("engine-probe", argv[optind], probe_usage);
        return -EINVAL;
    }
    return 0;
}

int dahlsim_cmd_engine_probe(int argc, char **argv)
{
    struct probe_request req;
    bool help;
    int code = engine_probe_parse_options(argc, argv, &req, &help);
    if (code != 0 || help)
        return dahlsim_exit_of(code);
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = (int)req.ncpu;
    conf.ngpu = 0;
    conf.sched = req.sched;
    int ret = dahl_engine_start(&conf);
    if (ret == -ENODEV) {
        dahlsim_error("engine-probe: StarPU found no worker to run on");
        return DAHLSIM_EXIT_SKIP;
    }
    if (ret != 0) {
        dahlsim_error("engine-probe: starpu_init failed: %s", strerror(-ret));
        return DAHLSIM_EXIT_FAILURE;
    }
    double makespan_us = 0;
    ret = req.empty ? dahl_probe_empty_run((int)req.tasks, 64, &makespan_us)
                    : dahl_probe_run((int)req.tasks, req.duration_us, &makespan_us);
    int ncpu = dahl_engine_ncpu();
    dahl_engine_stop();
    if (ret != 0) {
        dahlsim_error("engine-probe: task submission failed: %s", strerror(-ret));
        return DAHLSIM_EXIT_FAILURE;
    }
    printf("{\"flavour\": \"%s\", \"sched\": \"%s\", \"ncpu\": %d, \"tasks\": %ld, \"empty\": %s, "
           "\"duration_us\": %.3f, \"makespan_us\": %.3f, \"ideal_us\": %.3f}\n",
           dahl_engine_flavour(), req.sched, ncpu, req.tasks, req.empty ? "true" : "false",
           req.empty ? 0.0 : req.duration_us, makespan_us,
           dahl_probe_ideal_us((int)req.tasks, req.empty ? 0.0 : req.duration_us, ncpu));
    return DAHLSIM_EXIT_OK;
}

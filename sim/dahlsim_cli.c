/* The dahlsim command line: the subcommand table and --help. */
#include "dahlsim_cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct subcommand {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    bool hidden;                       /* internal: started by dahlsim itself, not listed in --help */
};

static const struct subcommand subcommands[] = {
    {"train", "train a CNN natively through StarPU tasks (real kernels)", dahlsim_cmd_train_front, false},
    {"calibrate", "measure perf models and the bus of this machine into calibration/NAME/", dahlsim_cmd_calibrate,
     false},
    {"run", "simulate one scenario with StarPU-SimGrid and write results.json", dahlsim_cmd_run, false},
    {"sweep", "simulate every point of a scenario's sweep grid", dahlsim_cmd_sweep, false},
    {"report", "turn a sweep directory into one HTML page (plots, tables, Gantt charts)", dahlsim_cmd_report, false},
    {"plan", "plan a heterogeneous cluster's data partition for time or energy, and check it in simulation",
     dahlsim_cmd_plan, false},
    {"validate", "compare native and simulated makespans on this machine (fidelity report)", dahlsim_cmd_validate,
     false},
    {"check", "validate a scenario file without running it", dahlsim_cmd_check, false},
    {"machine", "describe a machine from its spec: `machine synth` (roofline perf models, platform)",
     dahlsim_cmd_machine, false},
    {"dag", "scheduler lab: emulate Heteroprio on task graphs, AutoHeteroprio heuristics vs control priorities",
     dahlsim_cmd_dag, false},
    {"platform", "write SimGrid platforms: `platform cluster` (the network of a multi-node run)",
     dahlsim_cmd_platform, false},
    {"figures", "check or regenerate the simulated figures the docs quote (docs/figures.json)", dahlsim_cmd_figures,
     false},
    {"demo", "the whole loop here: calibrate this machine, simulate a scenario, train it, predicted vs measured",
     dahlsim_cmd_demo, false},
    {"doctor", "check the installation: a probe task graph, natively and simulated", dahlsim_cmd_doctor, false},
    {"engine-probe", "run the probe task graph in this binary's flavour", dahlsim_cmd_engine_probe, true},
    {"sim-train", "the training program under StarPU-SimGrid (dahlsim-sim only)", dahlsim_cmd_sim_train, true},
};
static const size_t nsubcommands = sizeof(subcommands) / sizeof(subcommands[0]);

static void usage(FILE *to)
{
    fprintf(to, "usage: dahlsim <command> [options]\n"
                "       dahlsim <command> --help\n\n"
                "A deep-learning training simulator on StarPU and SimGrid.\n\ncommands:\n");
    for (size_t i = 0; i < nsubcommands; i++) {
        if (!subcommands[i].hidden)
            fprintf(to, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
    }
    fprintf(to, "\noptions:\n  --help     this text\n  --version  version and StarPU flavour\n");
}

int dahlsim_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return DAHLSIM_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        dahlsim_program_print_version();
        return DAHLSIM_EXIT_OK;
    }
    for (size_t i = 0; i < nsubcommands; i++) {
        if (strcmp(name, subcommands[i].name) != 0)
            continue;
        return subcommands[i].run(argc - 1, argv + 1);
    }
    dahlsim_error("unknown command \"%s\"", name);
    fprintf(stderr, "usage: dahlsim <command> [options]   (dahlsim --help lists the commands)\n");
    return DAHLSIM_EXIT_USAGE;
}

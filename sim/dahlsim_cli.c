/* The dahlsim command line: the subcommand table, --help, and the parsing helpers every subcommand uses.
 * Subcommands that later issues fill in say "not implemented yet" and exit 2. */
#include "dahlsim_cli.h"

#include "dahl_engine.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct subcommand {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* NULL: not implemented yet */
    bool hidden;                       /* internal: started by dahlsim itself, not listed in --help */
};

static const struct subcommand subcommands[] = {
    {"train", "train a CNN natively through StarPU tasks (real kernels)", dahlsim_cmd_train, false},
    {"calibrate", "measure perf models and the bus of this machine into calibration/NAME/", dahlsim_cmd_calibrate,
     false},
    {"run", "simulate one scenario with StarPU-SimGrid and write results.json", dahlsim_cmd_run, false},
    {"sweep", "simulate every point of a scenario's sweep grid", dahlsim_cmd_sweep, false},
    {"report", "turn a sweep directory into one HTML page (plots, tables, Gantt charts)", dahlsim_cmd_report, false},
    {"validate", "compare native and simulated makespans on this machine (fidelity report)", dahlsim_cmd_validate,
     false},
    {"check", "validate a scenario file without running it", dahlsim_cmd_check, false},
    {"machine", "describe a machine from its spec: `machine synth` (roofline perf models, platform)",
     dahlsim_cmd_machine, false},
    {"dag", "scheduler lab: emulate Heteroprio on task graphs, AutoHeteroprio heuristics vs control priorities",
     dahlsim_cmd_dag, false},
    {"platform", "write SimGrid platforms: `platform cluster` (the network of a multi-node run)",
     dahlsim_cmd_platform, false},
    {"doctor", "check the installation: a probe task graph, natively and simulated", dahlsim_cmd_doctor, false},
    {"engine-probe", "run the probe task graph in this binary's flavour", dahlsim_cmd_engine_probe, true},
    {"sim-train", "the training program under StarPU-SimGrid (dahlsim-sim only)", dahlsim_cmd_sim_train, true},
};
static const size_t nsubcommands = sizeof(subcommands) / sizeof(subcommands[0]);

void dahlsim_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dahlsim: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int dahlsim_option_misuse(const char *cmd, int opt, char *const *argv, const char *usage)
{
    if (opt == ':')
        dahlsim_error("%s: %s needs a value", cmd, argv[optind - 1]);
    else
        dahlsim_error("%s: unknown option \"%s\"", cmd, argv[optind - 1]);
    fputs(usage, stderr);
    return DAHLSIM_EXIT_USAGE;
}

int dahlsim_unexpected_argument(const char *cmd, const char *arg, const char *usage)
{
    dahlsim_error("%s: unexpected argument \"%s\"", cmd, arg);
    fputs(usage, stderr);
    return DAHLSIM_EXIT_USAGE;
}

bool dahlsim_parse_int(const char *option, const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
        dahlsim_error("%s: expected an integer in [%ld, %ld], got \"%s\"", option, min, max, text);
        return false;
    }
    *out = value;
    return true;
}

bool dahlsim_parse_double(const char *option, const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(value) || value < min || value > max) {
        dahlsim_error("%s: expected a number in [%g, %g], got \"%s\"", option, min, max, text);
        return false;
    }
    *out = value;
    return true;
}

bool dahlsim_parse_dir(const char *option, const char *text)
{
    if (text[0] == '\0') {
        dahlsim_error("%s: expected a directory, got \"\"", option);
        return false;
    }
    return true;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: dahlsim <command> [options]\n"
                "       dahlsim <command> --help\n\n"
                "A deep-learning training simulator on StarPU and SimGrid.\n\ncommands:\n");
    for (size_t i = 0; i < nsubcommands; i++) {
        if (!subcommands[i].hidden)
            fprintf(to, "  %-10s %s%s\n", subcommands[i].name, subcommands[i].summary,
                    subcommands[i].run == NULL ? " (not implemented yet)" : "");
    }
    fprintf(to, "\noptions:\n  --help     this text\n  --version  version and StarPU flavour\n");
}

/* The help of a subcommand that is not built yet; its options come with the issue that builds it. */
static int not_implemented(const struct subcommand *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: dahlsim %s [options]\n\n%s.\n\nThis command is not implemented yet.\n", cmd->name,
                   cmd->summary);
            return DAHLSIM_EXIT_OK;
        }
    }
    dahlsim_error("%s: not implemented yet", cmd->name);
    return DAHLSIM_EXIT_USAGE;
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
        printf("dahlsim %s (%s StarPU %s)\n", DAHLSIM_VERSION, dahl_engine_flavour(), dahl_engine_starpu_version());
        return DAHLSIM_EXIT_OK;
    }
    for (size_t i = 0; i < nsubcommands; i++) {
        if (strcmp(name, subcommands[i].name) != 0)
            continue;
        if (subcommands[i].run == NULL)
            return not_implemented(&subcommands[i], argc - 1, argv + 1);
        return subcommands[i].run(argc - 1, argv + 1);
    }
    dahlsim_error("unknown command \"%s\"", name);
    fprintf(stderr, "usage: dahlsim <command> [options]   (dahlsim --help lists the commands)\n");
    return DAHLSIM_EXIT_USAGE;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double dahlsim_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), compare_double);
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

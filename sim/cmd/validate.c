/* `dahlsim validate --machine NAME`: the fidelity report of a measured calibration on the machine it
 * measured, native runs against simulations of the same setups (dahlsim_validate.h). */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_manifest.h"
#include "dahlsim_validate.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char usage[] = "usage: dahlsim validate --machine NAME [--runs K] [--noisy X] [--reruns N] [--force]\n"
                            "                        [--setups FILE] [--nodes N] [--out DIR] [--quiet]\n";

static void validate_print_help(void)
{
    fputs(usage, stdout);
    printf("\nThe fidelity report: %zu small training setups (image sizes, batch 4 to 64, every policy family,\n"
           "1 and 2 CPU workers, pipelined steps, tasks over several samples where the calibration covers them),\n"
           "or those of --setups FILE, run natively here K times (in K rounds over the\n"
           "setups; median over the quiet runs) and simulated once with calibration/NAME, which must be a\n"
           "measured calibration of this machine (its manifest's CPU model, cores, memory and probe are\n"
           "compared with this machine's) covering 28x28x1, 28x28x3 and 128x128x3 LeNet. Before and after\n"
           "each native run a fixed compute probe (dahl's conv2d kernel) runs on every core the run uses, and\n"
           "a cache line goes from the first of them to each other and back: a run whose probe is more than X\n"
           "slower than the session's fastest on a core ran on a loaded machine, and one whose round trip is\n"
           "over 2 / (1 - X) times the session's shortest ran with its cores placed apart; either is marked\n"
           "noisy, run again, and left out of the medians. Prints the table and writes\n"
           "DIR/fidelity.json and DIR/fidelity.md (default DIR: results/validate-NAME).\n\n"
           "options:\n"
           "  --machine NAME   the calibration to validate (required)\n"
           "  --runs K         native runs per setup (default 3; --repeats is the same)\n"
           "  --noisy X        a run whose probe is X slower than the fastest, or whose cores' round trip\n"
           "                   is over 2 / (1 - X) times the shortest, is noisy (default 0.05)\n"
           "  --reruns N       a noisy run is run again up to N times (default 2)\n"
           "  --force          validate even where the calibration was measured on another machine\n"
           "  --setups FILE    your own setups instead: {\"setups\": [{\"dataset\", \"samples\", \"batch\",\n"
           "                   \"cpus\", \"scheduler\"[, \"pipeline_depth\"][, \"grain\"][, \"gpus\"][, \"name\"]}, ...]}\n"
           "                   (scenario values; gpus 0 to 8, the rest 1 to 64)\n"
           "  --nodes N        multi-node fidelity: every setup (%zu by default, 1 CPU worker each) trained by N\n"
           "                   StarPU-MPI ranks on this machine (mpirun -np N build/dahlsim-mpi; cpus x N of its\n"
           "                   cores), against N simulated nodes whose MPI progression threads share the\n"
           "                   workers' cores (\"mpi_progress_core\": \"shared\", docs/multinode.md)\n"
           "  --out DIR        where the report goes\n"
           "  --quiet          no progress lines\n",
           dahlsim_validate_nsetups(), dahlsim_validate_node_nsetups());
}

enum { O_MACHINE = 256, O_REPEATS, O_RUNS, O_NOISY, O_RERUNS, O_FORCE, O_SETUPS, O_NODES, O_OUT, O_QUIET, O_HELP };
static const struct option options[] = {
    {"machine", required_argument, NULL, O_MACHINE}, {"repeats", required_argument, NULL, O_REPEATS},
    {"runs", required_argument, NULL, O_RUNS},       {"noisy", required_argument, NULL, O_NOISY},
    {"reruns", required_argument, NULL, O_RERUNS},   {"force", no_argument, NULL, O_FORCE},
    {"setups", required_argument, NULL, O_SETUPS},   {"nodes", required_argument, NULL, O_NODES},
    {"out", required_argument, NULL, O_OUT},         {"quiet", no_argument, NULL, O_QUIET},
    {"help", no_argument, NULL, O_HELP},             {NULL, 0, NULL, 0},
};

static bool validate_set_option(int opt, const char *arg, void *ctx)
{
    struct dahlsim_validate_opts *o = ctx;
    switch (opt) {
    case O_MACHINE:
        o->machine = arg;
        return true;
    case O_REPEATS:
        return dahlsim_parse_int("--repeats", arg, 1, DAHLSIM_VALIDATE_MAX_REPEATS, &o->repeats);
    case O_RUNS:
        return dahlsim_parse_int("--runs", arg, 1, DAHLSIM_VALIDATE_MAX_REPEATS, &o->repeats);
    case O_NOISY:
        return dahlsim_parse_double("--noisy", arg, 1e-6, 0.99, &o->noisy);
    case O_RERUNS:
        return dahlsim_parse_int("--reruns", arg, 0, 10, &o->reruns);
    case O_FORCE:
        o->force = true;
        return true;
    case O_SETUPS:
        o->setups = arg;
        return true;
    case O_NODES:
        return dahlsim_parse_int("--nodes", arg, 2, 64, &o->nodes);
    case O_OUT:
        o->out = arg;
        return true;
    case O_QUIET:
        o->quiet = true;
        return true;
    }
    return false;
}

static const struct dahlsim_options validate_options = {"validate", usage, options, O_HELP, validate_print_help,
                                                         validate_set_option};

/* Parses argv into o (*help: --help was printed). Returns 0, or -EINVAL after printing the error. */
static int validate_parse_options(int argc, char **argv, struct dahlsim_validate_opts *o, bool *help)
{
    *o = (struct dahlsim_validate_opts){.repeats = 3, .noisy = 0.05, .reruns = 2};
    int ret = dahlsim_options_parse(&validate_options, argc, argv, o, help);
    if (ret != 0 || *help)
        return ret;
    if (optind < argc) {
        dahlsim_unexpected_argument("validate", argv[optind], usage);
        return -EINVAL;
    }
    if (o->machine == NULL) {
        dahlsim_error("validate: --machine NAME is required (a measured calibration of this machine)");
        fprintf(stderr, "hint: dahlsim calibrate --machine NAME first\n");
        return -EINVAL;
    }
    return 0;
}

int dahlsim_cmd_validate(int argc, char **argv)
{
    struct dahlsim_validate_opts o;
    bool help;
    int code = validate_parse_options(argc, argv, &o, &help);
    if (code != 0 || help)
        return dahlsim_exit_of(code);
    char sampling_dir[PATH_MAX + 96];
    snprintf(sampling_dir, sizeof(sampling_dir), "%s/%s/sampling", dahlsim_calibration_root(), o.machine);
    if (!dahlsim_machine_name_valid(o.machine) || !dahlsim_is_dir(sampling_dir)) {
        dahlsim_error("validate: --machine %s: no calibration at %s", o.machine, sampling_dir);
        fprintf(stderr, "hint: dahlsim calibrate --machine %s measures this machine\n", o.machine);
        return DAHLSIM_EXIT_USAGE;
    }
    char out[PATH_MAX];
    if (o.out != NULL)
        snprintf(out, sizeof(out), "%s", o.out);
    else
        snprintf(out, sizeof(out), "results/validate-%.64s", o.machine);
    o.out = out;
    int ret = dahlsim_make_dirs(out);
    if (ret != 0) {
        dahlsim_error("validate: --out: cannot create %s: %s", out, strerror(-ret));
        return DAHLSIM_EXIT_USAGE;
    }
    return dahlsim_exit_of(dahlsim_validate_run(&o));
}

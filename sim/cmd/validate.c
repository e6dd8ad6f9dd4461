/* `dahlsim validate --machine NAME`: the fidelity report of a measured calibration on the machine it
 * measured, native runs against simulations of the same setups (dahlsim_validate.h). */
#include "dahlsim_cli.h"
#include "dahlsim_commit.h" /* DAHLSIM_COMMIT, stamped by every build */
#include "dahlsim_fs.h"
#include "dahlsim_manifest.h"
#include "dahlsim_validate.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "usage: dahlsim validate --machine NAME [--runs K] [--noisy X] [--reruns N] [--force]\n"
                            "                        [--setups FILE] [--nodes N] [--out DIR] [--quiet]\n"
                            "       dahlsim validate --machine NAME --natives DIR [--noisy X] [--out DIR2] [--quiet]\n";

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
           "DIR/fidelity.json and DIR/fidelity.md (default DIR: results/validate-NAME). Beside each setup's\n"
           "error it judges the choices a user makes: per pair of setups differing in policy, batch or\n"
           "workers, the paired error (the simulated ratio of times per sample against the native one, runs made\n"
           "back to back), and whether the simulation orders the pair as natively (with Kendall's tau); and,\n"
           "where the calibration recorded its machine's spread, how many native runs fell inside their\n"
           "simulation's interval and the errors over the runs made in the calibration's spell.\n\n"
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
           "  --natives DIR    run nothing natively: take the native runs of an earlier report (validate's\n"
           "                   --out DIR: its fidelity.json and native/ runs, with its setups, runs and ranks),\n"
           "                   judge them again at --noisy X (default: the threshold they were judged at), and\n"
           "                   compare them with simulations made now with calibration NAME (another --out)\n"
           "  --out DIR        where the report goes\n"
           "  --quiet          no progress lines\n",
           dahlsim_validate_nsetups(), dahlsim_validate_node_nsetups());
}

enum {
    O_MACHINE = 256,
    O_REPEATS,
    O_RUNS,
    O_NOISY,
    O_RERUNS,
    O_FORCE,
    O_SETUPS,
    O_NODES,
    O_NATIVES,
    O_OUT,
    O_QUIET,
    O_HELP,
    O_COUNT
};
static const struct option options[] = {
    {"machine", required_argument, NULL, O_MACHINE}, {"repeats", required_argument, NULL, O_REPEATS},
    {"runs", required_argument, NULL, O_RUNS},       {"noisy", required_argument, NULL, O_NOISY},
    {"reruns", required_argument, NULL, O_RERUNS},   {"force", no_argument, NULL, O_FORCE},
    {"setups", required_argument, NULL, O_SETUPS},   {"nodes", required_argument, NULL, O_NODES},
    {"natives", required_argument, NULL, O_NATIVES}, {"out", required_argument, NULL, O_OUT},
    {"quiet", no_argument, NULL, O_QUIET},
    {"help", no_argument, NULL, O_HELP},             {NULL, 0, NULL, 0},
};

/* What the command line gave: the options, and which were named (--natives takes some from its report). */
struct validate_args {
    struct dahlsim_validate_opts o;
    bool given[O_COUNT - O_MACHINE];
};

static bool validate_set_option(int opt, const char *arg, void *ctx)
{
    struct validate_args *a = ctx;
    struct dahlsim_validate_opts *o = &a->o;
    if (opt >= O_MACHINE && opt < O_COUNT)
        a->given[opt - O_MACHINE] = true;
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
    case O_NATIVES:
        o->natives = arg;
        return true;
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

/* --natives DIR: the options its report decides are refused (one line, exit 2), and --noisy is its threshold
 * unless given. Returns 0, or -EINVAL after the error line. */
static int natives_options(struct validate_args *a)
{
    static const int theirs[] = {O_RUNS, O_REPEATS, O_RERUNS, O_SETUPS, O_NODES, O_FORCE};
    for (size_t k = 0; k < sizeof(theirs) / sizeof(theirs[0]); k++) {
        if (!a->given[theirs[k] - O_MACHINE])
            continue;
        const struct option *opt = options;
        while (opt->val != theirs[k])
            opt++;
        dahlsim_error("validate: --natives %s: --%s: expected none: the setups, runs and ranks are those of the "
                      "report's native runs", a->o.natives, opt->name);
        fprintf(stderr, "hint: drop --%s, or validate without --natives to run the setups anew\n", opt->name);
        return -EINVAL;
    }
    if (!a->given[O_NOISY - O_MACHINE])
        a->o.noisy = 0; /* the report's own threshold */
    return 0;
}

/* Parses argv into a (*help: --help was printed). Returns 0, or -EINVAL after printing the error. */
static int validate_parse_options(int argc, char **argv, struct validate_args *a, bool *help)
{
    *a = (struct validate_args){.o = {.repeats = 3, .noisy = 0.05, .reruns = 2, .commit = DAHLSIM_COMMIT}};
    int ret = dahlsim_options_parse(&validate_options, argc, argv, a, help);
    if (ret != 0 || *help)
        return ret;
    if (optind < argc) {
        dahlsim_unexpected_argument("validate", argv[optind], usage);
        return -EINVAL;
    }
    if (a->o.machine == NULL) {
        dahlsim_error("validate: --machine NAME is required (a measured calibration of this machine)");
        fprintf(stderr, "hint: dahlsim calibrate --machine NAME first\n");
        return -EINVAL;
    }
    return a->o.natives != NULL ? natives_options(a) : 0;
}

/* --natives DIR and --out DIR2 are not the same directory: the report there would be replaced, and with it
 * the runs' verdicts. Returns 0, or -EINVAL after the error line. */
static int natives_not_out(const struct dahlsim_validate_opts *o)
{
    char natives[PATH_MAX], out[PATH_MAX];
    if (realpath(o->natives, natives) == NULL) {
        dahlsim_error("validate: --natives %s: %s", o->natives, strerror(errno));
        fprintf(stderr, "hint: --natives takes the --out directory of an earlier dahlsim validate\n");
        return -EINVAL;
    }
    if (realpath(o->out, out) != NULL && strcmp(natives, out) == 0) {
        dahlsim_error("validate: --natives %s: expected another directory than --out %s, which would replace its "
                      "report", o->natives, o->out);
        fprintf(stderr, "hint: --out DIR2 (the default is results/validate-%s)\n", o->machine);
        return -EINVAL;
    }
    return 0;
}

int dahlsim_cmd_validate(int argc, char **argv)
{
    struct validate_args a;
    bool help;
    int code = validate_parse_options(argc, argv, &a, &help);
    if (code != 0 || help)
        return dahlsim_exit_of(code);
    struct dahlsim_validate_opts o = a.o;
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
    if (o.natives != NULL && natives_not_out(&o) != 0)
        return DAHLSIM_EXIT_USAGE;
    int ret = dahlsim_make_dirs(out);
    if (ret != 0) {
        dahlsim_error("validate: --out: cannot create %s: %s", out, strerror(-ret));
        return DAHLSIM_EXIT_USAGE;
    }
    return dahlsim_exit_of(dahlsim_validate_run(&o));
}

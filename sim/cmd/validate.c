/* `dahlsim validate --machine NAME`: the fidelity report of a measured calibration on the machine it
 * measured, native runs against simulations of the same setups (dahlsim_validate.h). */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_manifest.h"
#include "dahlsim_validate.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char usage[] = "usage: dahlsim validate --machine NAME [--repeats N] [--out DIR] [--quiet]\n";

static void validate_print_help(void)
{
    fputs(usage, stdout);
    printf("\nThe fidelity report: %zu small training setups (image sizes, batch sizes, schedulers, 1 and 2 CPU\n"
           "workers) run natively here N times (in N rounds over the setups; median) and simulated once with\n"
           "calibration/NAME, which must be a measured calibration of this machine covering 28x28x1, 28x28x3\n"
           "and 128x128x3 LeNet. Prints the table and writes DIR/fidelity.json and DIR/fidelity.md (default\n"
           "DIR: results/validate-NAME).\n\n"
           "options:\n"
           "  --machine NAME   the calibration to validate (required)\n"
           "  --repeats N      native runs per setup (default 5)\n"
           "  --out DIR        where the report goes\n"
           "  --quiet          no progress lines\n",
           dahlsim_validate_nsetups());
}

/* Parses argv into o; returns -1 to go on, or an exit code. */
static int validate_parse_options(int argc, char **argv, struct dahlsim_validate_opts *o)
{
    enum { O_MACHINE = 256, O_REPEATS, O_OUT, O_QUIET, O_HELP };
    static const struct option options[] = {
        {"machine", required_argument, NULL, O_MACHINE}, {"repeats", required_argument, NULL, O_REPEATS},
        {"out", required_argument, NULL, O_OUT},         {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},             {NULL, 0, NULL, 0},
    };
    *o = (struct dahlsim_validate_opts){.repeats = 5};
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case O_MACHINE:
            o->machine = optarg;
            break;
        case O_REPEATS:
            if (!dahlsim_parse_int("--repeats", optarg, 1, DAHLSIM_VALIDATE_MAX_REPEATS, &o->repeats))
                return DAHLSIM_EXIT_USAGE;
            break;
        case O_OUT:
            o->out = optarg;
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_HELP:
            validate_print_help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("validate", opt, argv, usage);
        }
    }
    if (optind < argc)
        return dahlsim_unexpected_argument("validate", argv[optind], usage);
    if (o->machine == NULL) {
        dahlsim_error("validate: --machine NAME is required (a measured calibration of this machine)");
        fprintf(stderr, "hint: dahlsim calibrate --machine NAME first\n");
        return DAHLSIM_EXIT_USAGE;
    }
    return -1;
}

int dahlsim_cmd_validate(int argc, char **argv)
{
    struct dahlsim_validate_opts o;
    int code = validate_parse_options(argc, argv, &o);
    if (code >= 0)
        return code;
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
    return dahlsim_validate_run(&o);
}

/* `dahlsim sweep FILE --out DIR`: simulates every point of a scenario's sweep grid, resuming where an earlier
 * run of the same command stopped, then writes DIR/results.csv and DIR/plots/; --emit-slurm writes
 * DIR/sweep.slurm, a job array of one point per task, instead (dahlsim_sweep.h). */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_scenario.h"
#include "dahlsim_sweep.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: dahlsim sweep FILE --out DIR [--jobs N] [--set KEY=VALUE]... [--emit-slurm] [--only I] [--quiet]\n";

static void sweep_print_help(void)
{
    fputs(usage, stdout);
    fputs("\nSimulates every point of the scenario's \"sweep\" grid (the last key varies fastest). Appends one\n"
          "JSON line per finished point to DIR/results.jsonl; re-running the same command resumes, skipping\n"
          "finished points. Then writes DIR/results.csv and DIR/plots/ (gnuplot, PNG and SVG).\n\n"
          "options:\n"
          "  --out DIR      the sweep directory (required)\n"
          "  --jobs N       simulations at once (default 1; each is one process, one core)\n"
          "  --set K=V      override a scenario key for every point\n"
          "  --emit-slurm   write DIR/sweep.slurm (a Slurm job array, one point per task) and stop\n"
          "  --only I       run point I only (what the Slurm tasks do)\n"
          "  --quiet        no progress bar\n",
          stdout);
}

enum { O_OUT = 256, O_JOBS, O_SET, O_SLURM, O_ONLY, O_QUIET, O_HELP };
static const struct option options[] = {
    {"out", required_argument, NULL, O_OUT},   {"jobs", required_argument, NULL, O_JOBS},
    {"set", required_argument, NULL, O_SET},   {"emit-slurm", no_argument, NULL, O_SLURM},
    {"only", required_argument, NULL, O_ONLY}, {"quiet", no_argument, NULL, O_QUIET},
    {"help", no_argument, NULL, O_HELP},       {NULL, 0, NULL, 0},
};

static bool sweep_set_option(int opt, const char *arg, void *ctx)
{
    struct dahlsim_sweep_opts *o = ctx;
    switch (opt) {
    case O_OUT:
        o->out = arg;
        return true;
    case O_JOBS:
        return dahlsim_parse_int("--jobs", arg, 1, DAHLSIM_SWEEP_MAX_JOBS, &o->jobs);
    case O_SET:
        if (o->nsets == DAHLSIM_SWEEP_MAX_SETS) {
            dahlsim_error("sweep: at most %d --set", DAHLSIM_SWEEP_MAX_SETS);
            return false;
        }
        o->sets[o->nsets++] = arg;
        return true;
    case O_SLURM:
        o->emit_slurm = true;
        return true;
    case O_ONLY:
        return dahlsim_parse_int("--only", arg, 0, 1000000, &o->only);
    case O_QUIET:
        o->quiet = true;
        return true;
    }
    return false;
}

static const struct dahlsim_options sweep_options = {"sweep", usage, options, O_HELP, sweep_print_help,
                                                      sweep_set_option};

/* Parses argv into o (*help: --help was printed). Returns 0, or -EINVAL after printing the error. */
static int sweep_parse_options(int argc, char **argv, struct dahlsim_sweep_opts *o, bool *help)
{
    *o = (struct dahlsim_sweep_opts){.jobs = 1, .only = -1};
    int ret = dahlsim_options_parse(&sweep_options, argc, argv, o, help);
    if (ret != 0 || *help)
        return ret;
    if (optind != argc - 1) {
        dahlsim_usage_error(usage, "sweep: expected one scenario file");
        return -EINVAL;
    }
    o->file = argv[optind];
    if (o->out == NULL || o->out[0] == '\0') {
        dahlsim_usage_error(usage, "sweep: --out DIR is required");
        return -EINVAL;
    }
    return 0;
}

int dahlsim_cmd_sweep(int argc, char **argv)
{
    struct dahlsim_sweep_opts o;
    bool help;
    int code = sweep_parse_options(argc, argv, &o, &help);
    if (code != 0 || help)
        return dahlsim_exit_of(code);
    struct dahlsim_scenario *s = dahlsim_scenario_load(o.file, o.sets, o.nsets);
    if (s == NULL)
        return DAHLSIM_EXIT_USAGE;
    size_t n = dahlsim_scenario_points(s);
    int ret = 0;
    if (o.only >= 0 && (size_t)o.only >= n) {
        dahlsim_error("sweep: --only %ld: %s has %zu points (0 to %zu)", o.only, o.file, n, n - 1);
        code = DAHLSIM_EXIT_USAGE;
    } else if ((ret = dahlsim_make_dirs(o.out)) != 0) {
        dahlsim_error("sweep: --out: cannot create %s: %s", o.out, strerror(-ret));
        code = DAHLSIM_EXIT_USAGE;
    } else {
        code = dahlsim_exit_of(o.emit_slurm ? dahlsim_sweep_write_slurm(&o, n) : dahlsim_sweep_run(&o, s));
    }
    dahlsim_scenario_destroy(s);
    return code;
}

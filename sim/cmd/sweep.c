/* `dahlsim sweep FILE --out DIR`: simulates every point of a scenario's sweep grid, resuming where an earlier
 * run of the same command stopped, then writes DIR/results.csv and DIR/plots/; --emit-slurm writes
 * DIR/sweep.slurm, a job array of one point per task, instead (dahlsim_sweep.h). */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_scenario.h"
#include "dahlsim_sweep.h"

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

/* Parses argv into o; returns -1 to go on, or an exit code. */
static int sweep_parse_options(int argc, char **argv, struct dahlsim_sweep_opts *o)
{
    enum { O_OUT = 256, O_JOBS, O_SET, O_SLURM, O_ONLY, O_QUIET, O_HELP };
    static const struct option options[] = {
        {"out", required_argument, NULL, O_OUT},   {"jobs", required_argument, NULL, O_JOBS},
        {"set", required_argument, NULL, O_SET},   {"emit-slurm", no_argument, NULL, O_SLURM},
        {"only", required_argument, NULL, O_ONLY}, {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},       {NULL, 0, NULL, 0},
    };
    *o = (struct dahlsim_sweep_opts){.jobs = 1, .only = -1};
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_OUT:
            o->out = optarg;
            break;
        case O_JOBS:
            ok = dahlsim_parse_int("--jobs", optarg, 1, DAHLSIM_SWEEP_MAX_JOBS, &o->jobs);
            break;
        case O_SET:
            if (o->nsets == DAHLSIM_SWEEP_MAX_SETS) {
                dahlsim_error("sweep: at most %d --set", DAHLSIM_SWEEP_MAX_SETS);
                ok = false;
            } else {
                o->sets[o->nsets++] = optarg;
            }
            break;
        case O_SLURM:
            o->emit_slurm = true;
            break;
        case O_ONLY:
            ok = dahlsim_parse_int("--only", optarg, 0, 1000000, &o->only);
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_HELP:
            sweep_print_help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("sweep", opt, argv, usage);
        }
        if (!ok)
            return DAHLSIM_EXIT_USAGE;
    }
    if (optind != argc - 1)
        return dahlsim_usage_error(usage, "sweep: expected one scenario file");
    o->file = argv[optind];
    if (o->out == NULL || o->out[0] == '\0')
        return dahlsim_usage_error(usage, "sweep: --out DIR is required");
    return -1;
}

int dahlsim_cmd_sweep(int argc, char **argv)
{
    struct dahlsim_sweep_opts o;
    int code = sweep_parse_options(argc, argv, &o);
    if (code >= 0)
        return code;
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
        code = o.emit_slurm ? dahlsim_sweep_write_slurm(&o, n) : dahlsim_sweep_run(&o, s);
    }
    dahlsim_scenario_destroy(s);
    return code;
}

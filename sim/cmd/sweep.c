/* `dahlsim sweep FILE --out DIR`: simulates every point of a scenario's sweep grid, resuming where an earlier
 * run of the same command stopped, then writes DIR/results.csv and DIR/plots/; --emit-slurm writes
 * DIR/sweep.slurm, a job array of one point per task, instead; --slurm submits the missing points as such an
 * array, waits for it and collects (dahlsim_sweep.h). */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_scenario.h"
#include "dahlsim_sweep.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: dahlsim sweep FILE --out DIR [--jobs N] [--set KEY=VALUE]... [--emit-slurm] [--only I] [--quiet]\n"
    "       dahlsim sweep FILE --out DIR --slurm [--poll SECONDS] [--sbatch-arg ARG]... [--set KEY=VALUE]...\n"
    "                     [--quiet]\n";

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
          "  --quiet        no progress bar\n\n"
          "On a Slurm cluster:\n"
          "  --slurm        submit the points not yet in results.jsonl as a job array (DIR/sweep.slurm, sbatch;\n"
          "                 the job id in DIR/slurm-job and on stdout, task logs DIR/slurm-JOB_POINT.log), wait\n"
          "                 until none of its tasks is queued, then write results.csv and plots/. Exit 1 when\n"
          "                 points are missing (a scancel, a failed task): the same command submits only\n"
          "                 those. Ctrl-C stops the wait, not the job: the same command waits for it again.\n"
          "  --poll S       seconds between two squeue polls (default 5)\n"
          "  --sbatch-arg A one more sbatch argument, e.g. --sbatch-arg=--partition=long (repeatable)\n",
          stdout);
}

enum { O_OUT = 256, O_JOBS, O_SET, O_EMIT_SLURM, O_ONLY, O_QUIET, O_SLURM, O_POLL, O_SBATCH_ARG, O_HELP };
static const struct option options[] = {
    {"out", required_argument, NULL, O_OUT},     {"jobs", required_argument, NULL, O_JOBS},
    {"set", required_argument, NULL, O_SET},     {"emit-slurm", no_argument, NULL, O_EMIT_SLURM},
    {"only", required_argument, NULL, O_ONLY},   {"quiet", no_argument, NULL, O_QUIET},
    {"slurm", no_argument, NULL, O_SLURM},       {"poll", required_argument, NULL, O_POLL},
    {"sbatch-arg", required_argument, NULL, O_SBATCH_ARG},
    {"help", no_argument, NULL, O_HELP},         {NULL, 0, NULL, 0},
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
    case O_EMIT_SLURM:
        o->emit_slurm = true;
        return true;
    case O_SLURM:
        o->slurm = true;
        return true;
    case O_POLL:
        return dahlsim_parse_double("--poll", arg, 0.1, 3600, &o->poll_s);
    case O_SBATCH_ARG:
        if (o->nsbatch_args == DAHLSIM_SWEEP_MAX_SBATCH_ARGS) {
            dahlsim_error("sweep: at most %d --sbatch-arg", DAHLSIM_SWEEP_MAX_SBATCH_ARGS);
            return false;
        }
        o->sbatch_args[o->nsbatch_args++] = arg;
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

/* The options that go with --slurm and those that do not. Returns 0, or -EINVAL after the error. */
static int sweep_check_slurm(struct dahlsim_sweep_opts *o)
{
    const char *bad = NULL;
    if (o->slurm && o->emit_slurm)
        bad = "--slurm submits the job array that --emit-slurm only writes: give one of them";
    else if (o->slurm && o->only >= 0)
        bad = "--only runs one point here; --slurm submits the missing ones";
    else if (o->slurm && o->jobs != 0)
        bad = "--jobs is for a local sweep; with --slurm each point is an array task";
    else if (!o->slurm && (o->poll_s > 0 || o->nsbatch_args > 0))
        bad = o->poll_s > 0 ? "--poll needs --slurm" : "--sbatch-arg needs --slurm";
    if (bad != NULL) {
        dahlsim_usage_error(usage, "sweep: %s", bad);
        return -EINVAL;
    }
    if (o->jobs == 0)
        o->jobs = 1;
    if (o->poll_s == 0)
        o->poll_s = 5;
    return 0;
}

/* Parses argv into o (*help: --help was printed). Returns 0, or -EINVAL after printing the error. */
static int sweep_parse_options(int argc, char **argv, struct dahlsim_sweep_opts *o, bool *help)
{
    *o = (struct dahlsim_sweep_opts){.jobs = 0, .only = -1};
    int ret = dahlsim_options_parse(&sweep_options, argc, argv, o, help);
    if (ret != 0 || *help)
        return ret;
    if ((ret = sweep_check_slurm(o)) != 0)
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
        code = dahlsim_exit_of(o.emit_slurm ? dahlsim_sweep_write_slurm(&o, n)
                               : o.slurm    ? dahlsim_sweep_slurm(&o, s)
                                            : dahlsim_sweep_run(&o, s));
    }
    dahlsim_scenario_destroy(s);
    return code;
}

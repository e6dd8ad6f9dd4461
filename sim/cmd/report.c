/* `dahlsim report DIR [--out FILE]`: the HTML page of a sweep directory (dahlsim_report.h), written to
 * DIR/report.html or FILE, whose path it prints. */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_report.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>

static const char usage[] = "usage: dahlsim report DIR [--out FILE]\n";

static void report_print_help(void)
{
    fputs(usage, stdout);
    fputs("\nTurns a sweep directory (dahlsim sweep --out DIR) into one HTML page: the sweep's plots, a table of\n"
          "its points (makespan, samples/s, parallel efficiency, bytes moved, peak memory) with links to each\n"
          "traced point's Gantt chart, and each traced point's per-worker utilisation. Points are traced with\n"
          "the scenario key \"trace\": true (or --set trace=true).\n\n"
          "options:\n"
          "  --out FILE   where to write the page (default DIR/report.html)\n",
          stdout);
}

enum { O_OUT = 256, O_HELP };
static const struct option options[] = {
    {"out", required_argument, NULL, O_OUT},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

static bool report_set_option(int opt, const char *arg, void *ctx)
{
    const char **out = ctx;
    if (opt != O_OUT)
        return false;
    *out = arg;
    return true;
}

static const struct dahlsim_options report_options = {"report", usage, options, O_HELP, report_print_help,
                                                       report_set_option};

/* Parses argv into *dir and *out (NULL: the default; *help: --help was printed). Returns 0, or -EINVAL after
 * printing the error. */
static int report_parse_options(int argc, char **argv, const char **dir, const char **out, bool *help)
{
    *out = NULL;
    int ret = dahlsim_options_parse(&report_options, argc, argv, out, help);
    if (ret != 0 || *help)
        return ret;
    if (optind != argc - 1) {
        dahlsim_usage_error(usage, "report: expected one sweep directory%s", optind < argc - 1 ? ", got several" : "");
        return -EINVAL;
    }
    *dir = argv[optind];
    return 0;
}

int dahlsim_cmd_report(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    bool help;
    int code = report_parse_options(argc, argv, &dir, &out, &help);
    if (code != 0 || help)
        return dahlsim_exit_of(code);
    if (!dahlsim_is_dir(dir)) {
        dahlsim_error("report: %s: expected a sweep directory (dahlsim sweep --out DIR)", dir);
        return DAHLSIM_EXIT_USAGE;
    }
    char path[PATH_MAX + 32];
    if (out != NULL)
        snprintf(path, sizeof(path), "%s", out);
    else
        snprintf(path, sizeof(path), "%s/report.html", dir);
    code = dahlsim_report_write(dir, path);
    if (code == 0)
        printf("%s\n", path);
    return dahlsim_exit_of(code);
}

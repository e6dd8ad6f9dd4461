/* Shared helpers: see dahlsim_util.h. */
#include "dahlsim_util.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void verror(const char *fmt, va_list ap)
{
    fputs("dahlsim: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void dahlsim_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(fmt, ap);
    va_end(ap);
}

int dahlsim_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(fmt, ap);
    va_end(ap);
    fputs(usage, stderr);
    return DAHLSIM_EXIT_USAGE;
}

int dahlsim_option_misuse(const char *cmd, int opt, char *const *argv, const char *usage)
{
    if (opt == ':')
        return dahlsim_usage_error(usage, "%s: %s needs a value", cmd, argv[optind - 1]);
    return dahlsim_usage_error(usage, "%s: unknown option \"%s\"", cmd, argv[optind - 1]);
}

int dahlsim_options_parse(const struct dahlsim_options *o, int argc, char **argv, void *ctx, bool *help)
{
    *help = false;
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", o->options, NULL)) != -1) {
        if (opt == o->help) {
            o->print_help();
            *help = true;
            return 0;
        }
        if (opt == ':' || opt == '?') {
            dahlsim_option_misuse(o->cmd, opt, argv, o->usage);
            return -EINVAL;
        }
        if (!o->set(opt, optarg, ctx))
            return -EINVAL;
    }
    return 0;
}

int dahlsim_unexpected_argument(const char *cmd, const char *arg, const char *usage)
{
    return dahlsim_usage_error(usage, "%s: unexpected argument \"%s\"", cmd, arg);
}

void dahlsim_command_line(int argc, char *const *argv, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "dahlsim");
    for (int i = 0; i < argc && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, " %s", argv[i]);
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

int dahlsim_exit_of(int ret)
{
    switch (ret) {
    case 0:
        return DAHLSIM_EXIT_OK;
    case -EINVAL:
    case -ENOENT:
    case -ENOTDIR:
    case -EISDIR:
    case -ENAMETOOLONG:
    case -ERANGE:
    case -EDOM:
    case -E2BIG:
        return DAHLSIM_EXIT_USAGE;
    case -ENODEV:
        return DAHLSIM_EXIT_SKIP;
    default:
        return DAHLSIM_EXIT_FAILURE;
    }
}

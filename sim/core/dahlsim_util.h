/* What every part of dahlsim shares, StarPU-free: exit codes, the one-line error, option parsing helpers,
 * the median. Only command functions choose an exit code; everything below them returns one to them. */
#ifndef DAHLSIM_UTIL_H
#define DAHLSIM_UTIL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

/* Exit codes (STYLE.md): only main exits, with one of these. */
enum {
    DAHLSIM_EXIT_OK = 0,
    DAHLSIM_EXIT_FAILURE = 1, /* runtime or simulation failure */
    DAHLSIM_EXIT_USAGE = 2,   /* usage or input error */
    DAHLSIM_EXIT_SKIP = 77,   /* nothing could run here (no worker, for example) */
};

/* The one error rule: a library function returns 0 or a negative errno (its message in the caller's err
 * buffer, or printed by the parsing functions below); only a command function chooses an exit code, this
 * way: 0 -> DAHLSIM_EXIT_OK; a bad input (-EINVAL, -ENOENT, -ENOTDIR, -EISDIR, -ENAMETOOLONG, -ERANGE,
 * -EDOM, -E2BIG) -> DAHLSIM_EXIT_USAGE; -ENODEV (nothing to run on) -> DAHLSIM_EXIT_SKIP; anything else
 * -> DAHLSIM_EXIT_FAILURE. */
int dahlsim_exit_of(int ret);

/* Prints "dahlsim: error: <message>" on stderr (printf-style). */
void dahlsim_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error of subcommand: prints "dahlsim: error: <message>" (printf-style), then usage, on stderr and
 * returns DAHLSIM_EXIT_USAGE. */
int dahlsim_usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A command's options, parsed the way every command does (getopt_long, optstring ":"). */
struct dahlsim_options {
    const char *cmd;               /* as errors name it: "sweep", "platform cluster" */
    const char *usage;             /* printed on stderr after a misuse */
    const struct option *options;  /* NULL-terminated, getopt_long's */
    int help;                      /* the code of --help */
    void (*print_help)(void);      /* --help's text on stdout */
    /* One recognised option (its code, its value or NULL) into ctx; false after printing the error. */
    bool (*set)(int opt, const char *arg, void *ctx);
};

/* Parses argv's options into ctx through o->set, leaving optind at the first positional argument. --help:
 * prints the help and sets *help (nothing else to do). Returns 0, or -EINVAL after printing the error (a
 * misuse also prints the usage). */
int dahlsim_options_parse(const struct dahlsim_options *o, int argc, char **argv, void *ctx, bool *help);

/* getopt_long (optstring ":") misuse by subcommand cmd: opt ':' is an option missing its value, anything
 * else an unknown option (argv[optind - 1] either way). Prints the error and usage on stderr and returns
 * DAHLSIM_EXIT_USAGE. */
int dahlsim_option_misuse(const char *cmd, int opt, char *const *argv, const char *usage);

/* A positional argument cmd does not take: prints the error and usage on stderr, returns DAHLSIM_EXIT_USAGE. */
int dahlsim_unexpected_argument(const char *cmd, const char *arg, const char *usage);

/* The command line as typed, "dahlsim" followed by a subcommand's argv[0..argc-1] (call it before
 * getopt_long reorders argv), into buf (truncated to size - 1). */
void dahlsim_command_line(int argc, char *const *argv, char *buf, size_t size);

/* Parses text as a base-10 integer in [min, max]; on failure prints an error naming option and returns
 * false. */
bool dahlsim_parse_int(const char *option, const char *text, long min, long max, long *out);

/* Parses text as a finite number in [min, max]; same error convention. */
bool dahlsim_parse_double(const char *option, const char *text, double min, double max, double *out);

/* A directory option's value: false, after printing the error naming option, when text is empty. */
bool dahlsim_parse_dir(const char *option, const char *text);

/* Median of v[0..n-1], which it sorts in place; NAN when n == 0. */
double dahlsim_median(double *v, size_t n);

#endif /* DAHLSIM_UTIL_H */

/* The scheduler of real runs, from the command line and scenarios: --sched, --priorities and
 * --priority-interval of train and sim-train into a heteroprio configuration (dahl_schedconf.h), a
 * scenario's "scheduler" value into those options, and the hint for a refused value. StarPU-free (the
 * policy names are dahl_schedconf.h's copy of StarPU's); part of dahlsim_lab (sim/lab/schedconf.c). */
#ifndef DAHLSIM_SCHEDCONF_H
#define DAHLSIM_SCHEDCONF_H

#include "dahl_schedconf.h"

#include <stdbool.h>
#include <stddef.h>

/* For train and sim-train: the heteroprio configuration from --sched, --priorities (a file of
 * {"cpu": [...], "gpu": [...]} naming dahl perf-model symbols, or auto:<heuristic>) and --priority-interval.
 * --priorities is required with --sched heteroprio and refused with any other policy. Returns 0, or -EINVAL
 * after printing a one-line error. */
int dahlsim_heteroprio_conf(const char *sched, const char *priorities, long interval,
                            struct dahl_heteroprio_conf *out);

/* Scenario "scheduler" values: a StarPU policy name, or "heteroprio:auto-HEURISTIC" (AutoHeteroprio).
 * Plain "heteroprio" is refused (it needs priorities). When value is valid, writes the policy to pass as
 * --sched and the --priorities argument ("auto:HEURISTIC", or "" for none) where the buffers are given,
 * and returns true; otherwise fills expected (a description of the valid values, for an error message). */
bool dahlsim_scheduler_value(const char *value, char *policy, size_t policy_size, char *priorities,
                             size_t priorities_size, char *expected, size_t expected_size);
/* Prints the "hint: " line for a refused scheduler value on stderr: the nearest policy's name, or how
 * heteroprio is written. */
void dahlsim_scheduler_hint(const char *value);

#endif /* DAHLSIM_SCHEDCONF_H */

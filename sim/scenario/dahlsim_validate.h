/* The fidelity report (`dahlsim validate`, sim/cmd/validate.c): a fixed set of small training setups run
 * natively on this machine, repeatedly, and simulated once with its calibration; per setup the makespans,
 * the relative error and where it comes from, and per pair of setups that differ by a user's choice (policy,
 * batch, workers) the paired error and ordering (dahlsim_pairs.h), on stdout and in DIR/fidelity.json and
 * DIR/fidelity.md. */
#ifndef DAHLSIM_VALIDATE_H
#define DAHLSIM_VALIDATE_H

#include "dahlsim_validate_opts.h"

#include <stdbool.h>
#include <stddef.h>

/* Reads a --setups FILE as validate does (for the fuzz target): the number of setups, or -EINVAL after the
 * one-line error naming the file and the field. */
long dahlsim_validate_setups_load(const char *path);

/* Reads an earlier report as validate --natives DIR does (for the fuzz target): the number of setups, or
 * -EINVAL after the one-line error naming the file and the field. */
long dahlsim_validate_natives_load(const char *dir);

/* How many setups the default set has, and --nodes N's. */
size_t dahlsim_validate_nsetups(void);
size_t dahlsim_validate_node_nsetups(void);

/* Validates calibration o->machine into o->out (which exists): native runs under o->out/native/, simulations
 * under o->out/simulated/, the perf models they use copied to o->out/models/. With o->natives, no native run:
 * that report's are judged again at o->noisy (0: at its own threshold) and compared with simulations made
 * now. Returns 0, or a negative errno after the error line (-EINVAL: the calibration does not cover a setup,
 * or o->natives is not a report validate wrote). */
int dahlsim_validate_run(const struct dahlsim_validate_opts *o);

#endif /* DAHLSIM_VALIDATE_H */

/* The fidelity report (`dahlsim validate`, sim/cmd/validate.c): a fixed set of small training setups run
 * natively on this machine, repeatedly, and simulated once with its calibration; per setup the makespans,
 * the relative error and where it comes from, and per pair of setups that differ by a user's choice (policy,
 * batch, workers) the paired error and ordering (dahlsim_pairs.h), on stdout and in DIR/fidelity.json and
 * DIR/fidelity.md. */
#ifndef DAHLSIM_VALIDATE_H
#define DAHLSIM_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_VALIDATE_MAX_REPEATS 20
#define DAHLSIM_VALIDATE_MAX_SETUPS 64

struct dahlsim_validate_opts {
    const char *machine; /* a measured calibration of this machine */
    const char *out;     /* the report's directory */
    const char *setups;  /* a file of setups ({"setups": [...]}) instead of the default set; NULL: those */
    long repeats;        /* native runs per setup (--runs), 1 to DAHLSIM_VALIDATE_MAX_REPEATS */
    double noisy;        /* a run whose probe is this much slower than the session's fastest is noisy (0.05) */
    long reruns;         /* a noisy run is run again up to this many times (2) */
    bool force;          /* validate even on another machine than the calibrated one */
    bool quiet;          /* no progress lines */
    long nodes;          /* --nodes N: N StarPU-MPI ranks on this machine, each setup's workers each (0: none) */
    const char *natives; /* --natives DIR: an earlier report's native runs (DIR/fidelity.json and DIR/native/),
                          * simulated again instead of running any; its setups, runs and ranks; NULL: run them */
    const char *commit;  /* the commit this report is made at (recorded in fidelity.json) */
};

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

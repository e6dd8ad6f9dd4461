/* The options of `dahlsim validate` (dahlsim_validate.h) and its limits, apart so that the report's files
 * (dahlsim_validate_report.h) can read them without the rest of validate. */
#ifndef DAHLSIM_VALIDATE_OPTS_H
#define DAHLSIM_VALIDATE_OPTS_H

#include <stdbool.h>

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

#endif /* DAHLSIM_VALIDATE_OPTS_H */

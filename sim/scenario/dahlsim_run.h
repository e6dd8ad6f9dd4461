/* Running one simulated experiment: the native front end writes the experiment to OUT/point.json and starts
 * build/dahlsim-sim sim-train --point on it, with its machine's calibration in the environment. Used by run,
 * sweep and validate. */
#ifndef DAHLSIM_RUN_H
#define DAHLSIM_RUN_H

#include "dahlsim_scenario.h"

#include <stdbool.h>

/* Simulates x in out_dir (created if needed): out_dir/point.json (x, with scenario, which may be NULL,
 * recorded in it), then out_dir/results.json. The simulation's stderr goes to stderr_path (NULL: inherited); its per-epoch lines to stdout unless
 * quiet. Returns the simulation's exit status (0 ok), or -1 when it could not start. */
int dahlsim_run_experiment(const struct dahlsim_experiment *x, const char *scenario, const char *out_dir,
                           const char *stderr_path, bool quiet);

#endif /* DAHLSIM_RUN_H */

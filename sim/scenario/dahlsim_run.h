/* Running one simulated experiment: the native front end writes the experiment to OUT/point.json and starts
 * build/dahlsim-sim sim-train --point on it, with its machine's calibration in the environment. Used by run,
 * sweep and validate. */
#ifndef DAHLSIM_RUN_H
#define DAHLSIM_RUN_H

#include "dahlsim_scenario.h"

#include <stdbool.h>

/* The exit status of a simulation StarPU could make no room in under its GPU memory limit
 * (scripts/patches/starpu-gpu-memory-limit.patch, STARPU_SIMGRID_ALLOC_TIMEOUT). */
#define DAHLSIM_SIM_EXIT_NO_ROOM 3

/* Simulates x in out_dir (created if needed): out_dir/point.json (x, with scenario, which may be NULL,
 * recorded in it), then out_dir/results.json. The simulation's stderr goes to stderr_path (NULL: inherited); its per-epoch lines to stdout unless
 * quiet. Returns the simulation's exit status (0 ok), -1 when it could not start, or DAHLSIM_EXIT_USAGE (said on
 * stderr) when the GPU memory limit left StarPU no room. */
int dahlsim_run_experiment(const struct dahlsim_experiment *x, const char *scenario, const char *out_dir,
                           const char *stderr_path, bool quiet);

#endif /* DAHLSIM_RUN_H */

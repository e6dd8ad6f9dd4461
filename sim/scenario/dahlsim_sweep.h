/* Sweeps (`dahlsim sweep FILE --out DIR`, sim/cmd/sweep.c): every point of a scenario's sweep grid simulated
 * as its own dahlsim-sim process, its record appended to DIR/results.jsonl once it has finished, then
 * DIR/results.csv and gnuplot plots rebuilt from that file; or a Slurm job array doing the same. */
#ifndef DAHLSIM_SWEEP_H
#define DAHLSIM_SWEEP_H

#include "dahlsim_scenario.h"

#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_SWEEP_MAX_SETS 64
#define DAHLSIM_SWEEP_MAX_JOBS 256

/* What the command line asks of a sweep; the strings are argv's. */
struct dahlsim_sweep_opts {
    const char *file, *out;
    const char *sets[DAHLSIM_SWEEP_MAX_SETS]; /* --set KEY=VALUE, applied to every point */
    size_t nsets;
    long jobs;  /* simulations at once */
    long only;  /* the one point to run, or -1 */
    bool emit_slurm, quiet;
};

/* Runs the points of s (loaded from o->file with o->sets) not yet in o->out/results.jsonl (o->out exists),
 * up to o->jobs at once, appending each finished one's record with one write() and an fsync; on SIGINT or
 * SIGTERM it stops launching and waits for the running ones. Then rebuilds results.csv and, unless o->only,
 * the plots. Returns 0, or a negative errno after the error lines (-EINVAL: o->out holds another sweep's
 * results; -EIO: a point failed or the sweep was interrupted). */
int dahlsim_sweep_run(const struct dahlsim_sweep_opts *o, const struct dahlsim_scenario *s);

/* Reads the finished points of path (DIR/results.jsonl) into done[] (dahlsim_scenario_points(s) flags, by
 * index, checking each label matches the scenario's point), dropping a trailing partial line (an interrupted
 * write) from the file. Returns the number done (0 without the file), or -1 after an error message. */
long dahlsim_sweep_load_done(const char *path, const struct dahlsim_scenario *s, bool *done);

/* Writes o->out/sweep.slurm, a job array of the npoints points (one per task, `--only I`), and prints its
 * path. Returns 0, or -EIO after the error line. */
int dahlsim_sweep_write_slurm(const struct dahlsim_sweep_opts *o, size_t npoints);

/* dir/results.csv from dir/results.jsonl (rows in point order; a missing results.jsonl writes nothing).
 * Returns 0 or a negative errno. */
int dahlsim_sweep_write_csv(const char *dir, const struct dahlsim_scenario *s);

/* dir/plots/: makespan and samples/s against each numeric swept key, one line per scheduler (gnuplot, PNG
 * and SVG), and the scaling plots of a node-count sweep (dahlsim_scaling.h). Returns 0, or 1 when gnuplot is
 * missing or failed (the sweep's results stand; only plots are missing). */
int dahlsim_sweep_write_plots(const char *dir, const struct dahlsim_scenario *s);

/* Runs gnuplot on a script the plot writers wrote (its output and errors discarded). Returns 0, or 1 when
 * gnuplot is missing or failed. */
int dahlsim_sweep_gnuplot(const char *script);

/* For a "workloads" scenario swept over gpu_memory_mib or job_count: dir/plots/gpu-sharing.csv (per job order
 * and prefetch setting, and per limit when job_count is swept: limit, footprint = the largest peak GPU use of
 * the no-limit points with as many jobs, oversubscription = footprint / limit, makespan, bytes moved,
 * evictions, jobs) and gpu-sharing-{makespan_s,h2d_mib}.{png,svg} against the number of jobs (job_count
 * swept) or else against oversubscription. Nothing for other sweeps. Returns 0, or 1 when the table could not
 * be written or gnuplot failed. */
int dahlsim_sweep_write_sharing(const char *dir, const struct dahlsim_scenario *s);

#endif /* DAHLSIM_SWEEP_H */

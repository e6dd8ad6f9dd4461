/* Sweeps (`dahlsim sweep FILE --out DIR`, sim/cmd/sweep.c): every point of a scenario's sweep grid simulated
 * as its own dahlsim-sim process, its record appended to DIR/results.jsonl once it has finished, then
 * DIR/results.csv and gnuplot plots rebuilt from that file; or a Slurm job array doing the same, written
 * (--emit-slurm) or submitted, waited for and collected (--slurm, dahlsim_sweep_slurm.c). */
#ifndef DAHLSIM_SWEEP_H
#define DAHLSIM_SWEEP_H

#include "dahlsim_scenario.h"

#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_SWEEP_MAX_SETS 64
#define DAHLSIM_SWEEP_MAX_JOBS 256
#define DAHLSIM_SWEEP_MAX_SBATCH_ARGS 32

/* What the command line asks of a sweep; the strings are argv's. */
struct dahlsim_sweep_opts {
    const char *file, *out;
    const char *sets[DAHLSIM_SWEEP_MAX_SETS]; /* --set KEY=VALUE, applied to every point */
    size_t nsets;
    long jobs;  /* simulations at once */
    long only;  /* the one point to run, or -1 */
    bool emit_slurm, quiet;
    bool slurm;                                                /* --slurm: submit, wait, collect */
    double poll_s;                                             /* --slurm: seconds between squeue polls */
    const char *sbatch_args[DAHLSIM_SWEEP_MAX_SBATCH_ARGS]; /* --sbatch-arg ARG, given to sbatch as is */
    size_t nsbatch_args;
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
/* The same without touching the file (a partial last line is only skipped): for a reader while other
 * processes append, who must not cut a line being written. */
long dahlsim_sweep_count_done(const char *path, const struct dahlsim_scenario *s, bool *done);

/* The sweep's locks on o->out, held until dahlsim_sweep_unlock or the process ends (the kernel drops them
 * then, kill -9 included, so a lock never outlives its sweep): a whole sweep takes DIR/.sweep.lock alone; an
 * --only point (a Slurm array's tasks run side by side) shares it and takes its point's own lock. fds[0..1]
 * get the descriptors (-1: none). Returns 0, or -EBUSY / another negative errno after an error message. */
int dahlsim_sweep_lock(const struct dahlsim_sweep_opts *o, int fds[2]);
void dahlsim_sweep_unlock(int fds[2]);
/* Opens and flocks path (how: LOCK_EX or LOCK_SH of <sys/file.h>, never waiting). Returns the descriptor,
 * -EWOULDBLOCK when another process holds it, or another negative errno. */
int dahlsim_sweep_lock_file(const char *path, int how);

/* Writes o->out/sweep.slurm, a job array of all npoints points (one per task, `--only I`; absolute paths,
 * so that it may be submitted from anywhere), and prints its path. Returns 0, or -EIO after the error line. */
int dahlsim_sweep_write_slurm(const struct dahlsim_sweep_opts *o, size_t npoints);

/* `--slurm`: the points of s not yet in o->out/results.jsonl as a Slurm job array (o->out/sweep.slurm, only
 * those points), submitted with sbatch (its id in o->out/slurm-job and on stdout), then waited for, polling
 * squeue every o->poll_s seconds with progress on stderr; when slurm-job names a job of this sweep still in
 * the queue, that job is waited for instead of submitting another. Then results.csv and the plots, as a
 * local sweep writes them. SIGINT or SIGTERM stops the wait, not the job. Returns 0 when every point is
 * recorded; -EIO when some are missing after the job (results.csv then has the others), the wait was
 * interrupted, or sbatch or squeue failed; -ENOENT when sbatch or squeue is not on PATH; -EBUSY when another
 * process drives or writes o->out; -EINVAL when results.jsonl is another sweep's. Messages are printed. */
int dahlsim_sweep_slurm(const struct dahlsim_sweep_opts *o, const struct dahlsim_scenario *s);

/* The points i < n with !done[i] as a Slurm array spec ("1,3,5-8") into buf. Returns their number, or -1
 * when buf is too small. */
long dahlsim_sweep_array_spec(const bool *done, size_t n, char *buf, size_t size);

/* results.csv, and the plots when plots is set, of dir as a finished sweep writes them (the errors and the
 * gnuplot note printed). Returns 0, or the negative errno of results.csv (a missing plot is no error). */
int dahlsim_sweep_write_outputs(const char *dir, const struct dahlsim_scenario *s, bool plots);

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

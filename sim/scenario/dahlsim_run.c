/* One simulated experiment (dahlsim_run.h): OUT/point.json, then build/dahlsim-sim sim-train (the training
 * program under StarPU-SimGrid) with the machine's calibration as STARPU_PERF_MODEL_DIR / STARPU_HOSTNAME.
 * The simulated figures in OUT/results.json come from StarPU-SimGrid only; wall time and peak RSS of the
 * simulating process are recorded beside them. */
#include "dahlsim_run.h"

#include "dahlsim_fs.h"
#include "dahlsim_interval.h"
#include "dahlsim_kernels.h"
#include "dahlsim_scenario.h"
#include "dahlsim_smpi.h"
#include "dahlsim_spawn.h"
#include "dahlsim_trace.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The simulation of x (its point file written at point_path) into out_dir, and its Gantt chart when traced.
 * Returns the simulation's exit status, or DAHLSIM_EXIT_* after an error line. */
static int simulate(const struct dahlsim_experiment *x, const char *scenario, const char *out_dir,
                    const char *point_path, const char *sampling, const char *stderr_path, bool quiet)
{
    char err[PATH_MAX + 256];
    char *args[] = {"sim-train", "--point", (char *)point_path, "--out", (char *)out_dir, "--quiet", NULL};
    char mem[32];
    snprintf(mem, sizeof(mem), "%ld", x->gpu_memory_mib);
    struct dahlsim_env_var env[8];
    size_t nenv = 0;
    env[nenv++] = (struct dahlsim_env_var){"STARPU_PERF_MODEL_DIR", sampling};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_HOSTNAME", x->machine};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_CALIBRATE", "0"};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_PREFETCH", x->prefetch ? "1" : "0"};
    env[nenv++] = (struct dahlsim_env_var){"STARPU_SILENT", "1"};
    if (x->gpu_memory_mib > 0) {
        env[nenv++] = (struct dahlsim_env_var){"STARPU_LIMIT_CUDA_MEM", mem};
        /* scripts/patches/starpu-gpu-memory-limit.patch: a limit StarPU can make no room under ends the run
         * (exit DAHLSIM_SIM_EXIT_NO_ROOM) after 1 s of simulated time instead of spinning forever. */
        env[nenv++] = (struct dahlsim_env_var){"STARPU_SIMGRID_ALLOC_TIMEOUT", "1"};
    }
    char out[65536];
    int status = (x->nodes > 0 ? dahlsim_spawn_nodes(x, out_dir, args, env, nenv, quiet ? out : NULL, sizeof(out), stderr_path)
                                : dahlsim_spawn_sim_err(args, env, nenv, quiet ? out : NULL, sizeof(out), stderr_path));
    if (status == DAHLSIM_SIM_EXIT_NO_ROOM && x->gpu_memory_mib > 0) {
        dahlsim_error("%s: \"gpu_memory_mib\": expected room for the run's tasks, got %ld: StarPU could not place "
                      "their data for 1 s of simulated time (raise the limit)",
                      scenario != NULL && scenario[0] ? scenario : point_path, x->gpu_memory_mib);
        return DAHLSIM_EXIT_USAGE;
    }
    if (status == 0 && x->trace) {
        /* The Gantt chart is drawn here, by the native front end: the simulation wrote its data and script. */
        char trace_dir[PATH_MAX + 8];
        snprintf(trace_dir, sizeof(trace_dir), "%s/trace", out_dir);
        double t0 = dahlsim_mono_s();
        if (x->nodes > 0) {
            /* One trace over every node: a Paje container per node holding its workers, a Gantt row per node
             * and worker; each node's own charts too. */
            if (dahlsim_trace_merge_nodes(trace_dir, (int)x->nodes, err, sizeof(err)) != 0) {
                dahlsim_error("--trace: %s", err);
                return DAHLSIM_EXIT_FAILURE;
            }
            for (long node = 0; node < x->nodes; node++) {
                char node_dir[PATH_MAX + 40];
                snprintf(node_dir, sizeof(node_dir), "%s/node-%ld", trace_dir, node);
                if (dahlsim_trace_render(node_dir, err, sizeof(err)) != 0)
                    fprintf(stderr, "dahlsim: warning: %s\n", err);
            }
        }
        if (dahlsim_trace_render(trace_dir, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: %s\n", err);
        else if (!quiet)
            fprintf(stderr, "dahlsim run: Gantt chart drawn in %.2f s\n", dahlsim_mono_s() - t0);
    }
    return status;
}

/* What a run writes into OUT. An earlier run's are kept until the new run has succeeded: set aside in
 * OUT/.previous/ before it starts, removed after it, or put back when it failed (a full disk, a killed
 * simulation), so that a failed run never leaves a mix of two runs' files, nor an earlier run's files lost. */
static const char *const outputs[] = {"results.json", "point.json", "trace"};
#define NOUTPUTS (sizeof(outputs) / sizeof(outputs[0]))

/* Moves every output held in previous back into OUT. */
static void put_back(const char *out_dir, const char *previous)
{
    char from[PATH_MAX + 32], to[PATH_MAX + 32];
    for (size_t k = 0; k < NOUTPUTS; k++) {
        snprintf(from, sizeof(from), "%s/%s", previous, outputs[k]);
        snprintf(to, sizeof(to), "%s/%s", out_dir, outputs[k]);
        if (access(from, F_OK) == 0 && rename(from, to) != 0)
            dahlsim_error("run: cannot put the earlier run's %s back from %s: %s", outputs[k], previous,
                          strerror(errno));
    }
}

/* Moves OUT's outputs into OUT/.previous (created only when there is one). *aside: whether any was. */
static int earlier_aside(const char *out_dir, bool *aside)
{
    char previous[PATH_MAX + 16], from[PATH_MAX + 32], to[PATH_MAX + 32];
    snprintf(previous, sizeof(previous), "%s/.previous", out_dir);
    *aside = false;
    int r = dahlsim_remove_tree(previous); /* left by a run killed before it could settle */
    for (size_t k = 0; r == 0 && k < NOUTPUTS; k++) {
        snprintf(from, sizeof(from), "%s/%s", out_dir, outputs[k]);
        snprintf(to, sizeof(to), "%s/%s", previous, outputs[k]);
        if (access(from, F_OK) != 0)
            continue;
        if (!*aside && mkdir(previous, 0777) != 0)
            r = -errno;
        else if (rename(from, to) != 0)
            r = -errno;
        else
            *aside = true;
    }
    if (r != 0) {
        dahlsim_error("run: cannot set the earlier run's files aside in %s: %s", previous, strerror(-r));
        if (*aside)
            put_back(out_dir, previous); /* what moved */
        rmdir(previous);
    }
    return r;
}

/* After the run: the earlier files dropped (it succeeded), or the new ones dropped and the earlier put back. */
static void earlier_settle(const char *out_dir, bool aside, bool succeeded)
{
    char previous[PATH_MAX + 16], path[PATH_MAX + 32];
    snprintf(previous, sizeof(previous), "%s/.previous", out_dir);
    for (size_t k = 0; !succeeded && k < NOUTPUTS; k++) {
        snprintf(path, sizeof(path), "%s/%s", out_dir, outputs[k]);
        dahlsim_remove_tree(path); /* the failed run's */
    }
    if (aside && !succeeded)
        put_back(out_dir, previous);
    if (aside)
        dahlsim_remove_tree(previous);
}

int dahlsim_run_experiment(const struct dahlsim_experiment *x, const char *scenario, const char *out_dir,
                           const char *stderr_path, bool quiet)
{
    /* The experiment travels as a typed file, OUT/point.json, which stays beside results.json: the
     * experiment exactly as this run replayed it. */
    struct dahlsim_experiment point = *x;
    snprintf(point.scenario, sizeof(point.scenario), "%s", scenario != NULL ? scenario : "");
    char point_path[PATH_MAX + 16], err[PATH_MAX + 256];
    snprintf(point_path, sizeof(point_path), "%s/point.json", out_dir);
    int r = dahlsim_make_dirs(out_dir);
    if (r != 0) {
        dahlsim_error("run: cannot create %s: %s", out_dir, strerror(-r));
        return DAHLSIM_EXIT_FAILURE;
    }
    /* the perf models for its worker count (dahlsim_kernels.h), a blend made in OUT/.kernel-models */
    char models[PATH_MAX + 32], work[PATH_MAX + 32];
    snprintf(work, sizeof(work), "%s/.kernel-models", out_dir);
    r = dahlsim_kernel_models(x, work, models, sizeof(models), point.kernel_models, sizeof(point.kernel_models), err,
                              sizeof(err));
    if (r != 0) {
        dahlsim_error("run: %s", err);
        if (r == -EINVAL)
            fprintf(stderr, "hint: calibrate the machine again (dahlsim calibrate --machine %s)\n", x->machine);
        dahlsim_remove_tree(work);
        return r == -EINVAL ? DAHLSIM_EXIT_USAGE : DAHLSIM_EXIT_FAILURE;
    }
    bool aside;
    if (earlier_aside(out_dir, &aside) != 0)
        return DAHLSIM_EXIT_FAILURE;
    int status = DAHLSIM_EXIT_FAILURE;
    if (dahlsim_experiment_save(&point, point_path, err, sizeof(err)) != 0)
        dahlsim_error("run: %s", err);
    else
        status = simulate(x, scenario, out_dir, point_path, models, stderr_path, quiet);
    /* the interval the calibration's measured spread implies; the simulated figures stand without it */
    if (status == 0 && dahlsim_interval_add(x->machine_dir, out_dir, err, sizeof(err)) != 0)
        fprintf(stderr, "dahlsim: warning: no prediction interval: %s\n", err);
    dahlsim_remove_tree(work);
    earlier_settle(out_dir, aside, status == 0);
    return status;
}

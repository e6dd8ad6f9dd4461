/* Running a multi-node experiment: the native front end writes the cluster platform and hostfile next to the
 * results, and starts build/dahlsim-sim-mpi under the sim-mpi flavour's starpu_smpirun (one simulated MPI
 * rank per node, each on its own copy of the node machine), with the known-harmless noise of SMPI and
 * StarPU-MPI filtered out of its stderr. */
#ifndef DAHLSIM_SMPI_H
#define DAHLSIM_SMPI_H

#include "dahlsim_scenario.h"
#include "dahlsim_spawn.h"

#include <stdbool.h>
#include <stddef.h>

/* Runs dahlsim-sim-mpi with args (NULL-terminated, without argv[0]) and the vars overrides for x->nodes
 * nodes, as dahlsim_spawn_sim_err does for one node: stdout captured into out (NULL: inherited), stderr
 * (filtered) to stderr_path or inherited. The platform goes to out_dir/cluster.xml and out_dir/hosts (a
 * temporary directory when out_dir is NULL). Returns the exit status, or -1 when it could not start. */
int dahlsim_spawn_nodes(const struct dahlsim_experiment *x, const char *out_dir, char *const args[],
                        const struct dahlsim_env_var *vars, size_t nvars, char *out, size_t out_size,
                        const char *stderr_path);

/* True for a line of stderr that is known noise: SimGrid's "ker_lmm ... Probable bug" warnings at exit,
 * StarPU-MPI's remark that SMPI gives MPI_THREAD_SINGLE (dahl makes every MPI call through StarPU-MPI), and
 * the host energy plugin's note on hosts without power figures (the run then reports no energy). */
bool dahlsim_smpi_noise(const char *line);

#endif /* DAHLSIM_SMPI_H */

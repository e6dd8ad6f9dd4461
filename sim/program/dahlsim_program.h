/* The program: what is built once per StarPU flavour (native, sim, native-mpi, sim-mpi) and the only part
 * of sim/ that links StarPU. Its commands, and the entry point of the binaries that carry only it:
 * build/dahlsim-sim (started by dahlsim run, sweep and validate with a point.json), build/dahlsim-sim-mpi
 * (the same under SMPI) and build/dahlsim-mpi (mpirun -np N build/dahlsim-mpi train ...). The native front
 * end, build/dahlsim, links the native program too and lists these commands beside its own (dahlsim_cli.h). */
#ifndef DAHLSIM_PROGRAM_H
#define DAHLSIM_PROGRAM_H

/* `train`: trains natively (the SimGrid binaries refuse it). */
int dahlsim_cmd_train(int argc, char **argv);
/* `sim-train` (hidden): the same program under StarPU-SimGrid (the native binaries refuse it). */
int dahlsim_cmd_sim_train(int argc, char **argv);
/* `engine-probe` (hidden): the probe task graph in this binary's flavour (dahlsim_engine_probe.h). */
int dahlsim_cmd_engine_probe(int argc, char **argv);

/* `--version`: dahlsim's version, this binary's StarPU flavour and StarPU's version, on stdout. */
void dahlsim_program_print_version(void);

/* The command line of a binary that carries only the program: its commands, and for those of the native
 * front end a one-line refusal naming it. Returns the process exit code. */
int dahlsim_program_main(int argc, char **argv);

#endif /* DAHLSIM_PROGRAM_H */

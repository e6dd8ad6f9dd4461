/* The dahlsim command line: one user-facing command with subcommands. The same code is built into the
 * native binary (build/dahlsim, what users run) and the SimGrid binary (build/dahlsim-sim, started by
 * dahlsim itself with the simulated machine's environment set; users never call it). */
#ifndef DAHLSIM_CLI_H
#define DAHLSIM_CLI_H

#include "dahlsim_util.h"

/* Runs the command line; returns the process exit code. */
int dahlsim_cli_main(int argc, char **argv);

/* Subcommands implemented in their own files. */
int dahlsim_cmd_doctor(int argc, char **argv);
int dahlsim_cmd_train(int argc, char **argv);
int dahlsim_cmd_calibrate(int argc, char **argv);
int dahlsim_cmd_run(int argc, char **argv);
int dahlsim_cmd_check(int argc, char **argv);
int dahlsim_cmd_sweep(int argc, char **argv);
int dahlsim_cmd_report(int argc, char **argv);
int dahlsim_cmd_validate(int argc, char **argv);
int dahlsim_cmd_sim_train(int argc, char **argv);
int dahlsim_cmd_machine(int argc, char **argv);
int dahlsim_cmd_platform(int argc, char **argv);
int dahlsim_cmd_dag(int argc, char **argv);
int dahlsim_cmd_engine_probe(int argc, char **argv);

#endif /* DAHLSIM_CLI_H */

/* The dahlsim command line: one user-facing command with subcommands, the native front end (build/dahlsim,
 * what users run). Its commands live in sim/cmd/, one file each, linked into it alone; the program's
 * commands (train, and the hidden sim-train and engine-probe) are the native program's (dahlsim_program.h). */
#ifndef DAHLSIM_CLI_H
#define DAHLSIM_CLI_H

#include "dahlsim_program.h"
#include "dahlsim_util.h"

/* Runs the command line; returns the process exit code. */
int dahlsim_cli_main(int argc, char **argv);

/* Subcommands implemented in their own files. */
int dahlsim_cmd_doctor(int argc, char **argv);
/* `dahlsim demo` (cmd/demo.c): calibrate, simulate and train one scenario here, predicted against measured. */
int dahlsim_cmd_demo(int argc, char **argv);
/* train (cmd/train.c): --grain auto --machine NAME resolved, then the program's dahlsim_cmd_train. */
int dahlsim_cmd_train_front(int argc, char **argv);
int dahlsim_cmd_calibrate(int argc, char **argv);
int dahlsim_cmd_run(int argc, char **argv);
int dahlsim_cmd_check(int argc, char **argv);
int dahlsim_cmd_sweep(int argc, char **argv);
int dahlsim_cmd_report(int argc, char **argv);
int dahlsim_cmd_validate(int argc, char **argv);
int dahlsim_cmd_machine(int argc, char **argv);
int dahlsim_cmd_platform(int argc, char **argv);
int dahlsim_cmd_dag(int argc, char **argv);
int dahlsim_cmd_plan(int argc, char **argv);
/* `dahlsim figures` (cmd/figures.c): the published figures against docs/figures.json. */
int dahlsim_cmd_figures(int argc, char **argv);
/* `dahlsim dag share` and `dag share-export` (cmd/dag_share.c): argv[0] is "share" or "share-export". */
int dahlsim_cmd_dag_share(int argc, char **argv);

#endif /* DAHLSIM_CLI_H */

/* `dahlsim engine-probe` (hidden): the probe task graph run in this binary's StarPU flavour, N independent
 * tasks of D microseconds (runtime/dahl_probe.h). `dahlsim doctor` (sim/cmd/doctor.c) runs it with its
 * defaults in both flavours and reads the one JSON line it prints on stdout:
 *   {"flavour": F, "sched": S, "ncpu": N, "tasks": T, "empty": B, "duration_us": D, "makespan_us": M,
 *    "ideal_us": I}
 * It links StarPU: part of the program, built in every flavour (dahlsim-sim runs it too). */
#ifndef DAHLSIM_ENGINE_PROBE_H
#define DAHLSIM_ENGINE_PROBE_H

/* engine-probe's defaults: what doctor runs and prints. */
#define DAHLSIM_PROBE_TASKS 16
#define DAHLSIM_PROBE_DURATION_US 5000.0

/* dahlsim_cmd_engine_probe itself is declared with the program's commands in dahlsim_program.h. */

#endif /* DAHLSIM_ENGINE_PROBE_H */

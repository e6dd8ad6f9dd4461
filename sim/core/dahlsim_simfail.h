/* Why a simulation died, in dahlsim's words: SimGrid and the kernel stop a simulator on resources the user
 * never sees (memory mappings per process, stacks of simulated threads, memory, open files) with messages
 * about actors and mappings, or with a bare signal. These read the simulator's exit status and stderr log
 * and name the resource, its limit and what to try. */
#ifndef DAHLSIM_SIMFAIL_H
#define DAHLSIM_SIMFAIL_H

#include <stddef.h>

/* The cause of a failed simulation (status as dahlsim_spawn returns it; log_path its stderr, or NULL) as one
 * sentence into why and a hint into hint (both "" when nothing is recognised). Returns 1 when a cause was
 * recognised, else 0. */
int dahlsim_simfail_explain(int status, const char *log_path, char *why, size_t why_size, char *hint,
                            size_t hint_size);
/* dahlsim_simfail_explain, printed as "dahlsim: error: ..." and "hint: ..." when recognised. */
void dahlsim_simfail_report(int status, const char *log_path);

#endif /* DAHLSIM_SIMFAIL_H */

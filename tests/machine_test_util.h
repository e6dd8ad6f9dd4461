/* Helpers of the `dahlsim machine synth` tests (test_machine.c, test_machine_energy.c): a scratch directory per
 * test, spec files, runs of synth and of the simulation, and the roofline sums they are checked against. */
#ifndef MACHINE_TEST_UTIL_H
#define MACHINE_TEST_UTIL_H

#include "dahl_test_util.h"

#include "dahl_network.h"

/* StarPU-SimGrid 1.3.10's polling microsecond per task (see test_flavours.c). */
#define SIM_TASK_OVERHEAD_US 1.0
/* The simulated runs: 2 steps of batch 8. */
#define SIM_STEPS 2
#define SIM_BATCH 8
#define SIM_SAMPLES "16" /* SIM_STEPS * SIM_BATCH */
#define STR_(x) #x
#define STR(x) STR_(x)
#define CPU1                                                                                                        \
    "\"cpu\": {\"model\": \"test core\", \"cores\": 1, \"core_gflops\": 50, \"core_mem_gbps\": 20, "                   \
    "\"task_overhead_us\": 1.5}"
#define GPU1                                                                                                        \
    "\"gpu\": {\"model\": \"test GPU\", \"count\": 1, \"fp32_tflops\": 10, \"mem_gib\": 16, \"mem_gbps\": 800},"     \
    " \"links\": {\"host_gpu_gbps\": 12, \"host_gpu_latency_us\": 10}"

extern struct dahl_test_run run; /* the last run of a binary */
extern char dir[64];             /* the test's scratch directory */
extern char err[1024];
extern const char one_cpu[], cpu_gpu[]; /* specs: one core; one core and one GPU */

/* The suite's setup and teardown: a fresh scratch directory, removed after. */
void scratch(void);
void cleanup(void);
/* Writes text to dir/name; returns the path (static buffer). */
const char *put(const char *name, const char *text);
/* Asserts that dahlsim_spec_load refuses text in one line naming the file and containing want. */
void assert_spec_error(const char *text, const char *want);
/* Names in dir (hidden ones included, not . and ..), sorted, each followed by a space (static buffer). */
const char *listing(void);
/* Runs build/dahlsim machine synth SPEC --machine NAME --out dir [extra...]. */
void synth(const char *spec, const char *name, const char *extra1, const char *extra2);
/* results.json's makespan and tasks.per_arch of dir/NAME. */
void results(const char *name, double *makespan_s, double *cpu_tasks, double *cuda_tasks);
/* Runs sim-train on dir/NAME (synthetic:12x12x1 LeNet, SIM_STEPS steps of SIM_BATCH, one CPU) into dir/OUT, with
 * StarPU-SimGrid's submission and input-fetching costs off (the perf models and the per-task microsecond
 * remain; by default StarPU-SimGrid also charges 1 us per buffer a task accesses). */
void simulate_grain(const char *name, const char *out, const char *ngpu, const char *sched, const char *reduction,
                    const char *grain);
void simulate(const char *name, const char *out, const char *ngpu, const char *sched, const char *reduction);
/* One step of the SIM_BATCH-sample LeNet on the spec's CPU: the tasks' roofline microseconds (*task_us), their
 * count (returned), and with StarPU-SimGrid's microsecond per task (*step_us). */
long roofline_step(const char *spec_path, enum dahl_reduction reduction, int grain, double *task_us,
                   double *step_us);
void assert_roofline_sum(const char *spec_path, const char *out, enum dahl_reduction reduction, int grain);

#endif /* MACHINE_TEST_UTIL_H */

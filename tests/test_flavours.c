/* Both StarPU flavours end to end, with the probe task graph (independent tasks of a fixed duration):
 * natively on this machine, and under StarPU-SimGrid on the hand-written machine in
 * tests/data/probe-machine (2 CPUs; "dahl_probe" perf model: 2 ms and 5 ms entries), where the simulated
 * makespan must be exactly what the perf model predicts.
 * The simulated runs go through build/dahlsim-sim as separate processes: Criterion 2.4's runner runs each
 * test in a child process and crashes when main is StarPU-SimGrid's wrapped one. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* StarPU-SimGrid 1.3.10 charges each task 1 us of datawizard polling on its worker
 * (src/datawizard/datawizard.c: starpu_sleep(0.000001) under STARPU_SIMGRID). */
#define SIM_TASK_OVERHEAD_US 1.0


static char *const sim_env[] = {
    "STARPU_PERF_MODEL_DIR=" DAHLSIM_SOURCE_DIR "/tests/data/probe-machine",
    "STARPU_HOSTNAME=probe-2cpu",
    "STARPU_SIMGRID_TASK_SUBMIT_COST=0",
    "STARPU_SIMGRID_FETCHING_INPUT_COST=0",
    "STARPU_SIMGRID_QUEUE_MALLOC_COST=0",
    "STARPU_SILENT=1",
    NULL,
};

static struct dahl_test_run run;

static void simulate(const char *sched, const char *ncpu, const char *tasks, const char *duration_us)
{
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "engine-probe", "--sched", (char *)sched,
                    "--ncpu", (char *)ncpu, "--tasks", (char *)tasks, "--duration-us", (char *)duration_us,
                    NULL};
    dahl_test_run(&run, argv, sim_env);
}

static void assert_simulated_makespan(double expected_us)
{
    cr_assert_eq(run.status, 0, "dahlsim-sim exited %d: %s", run.status, run.err);
    cr_assert(strstr(run.out, "\"flavour\": \"sim\"") != NULL, "%s", run.out);
    double makespan = dahl_test_json_number(run.out, "makespan_us");
    cr_assert_float_eq(makespan, expected_us, 1e-6 * expected_us, "makespan %.3f us, model says %.3f us",
                       makespan, expected_us);
}

Test(flavours, native_probe_runs_real_tasks)
{
    char home[] = "/tmp/dahlsim-test-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    char home_var[64];
    snprintf(home_var, sizeof(home_var), "STARPU_HOME=%s", home);
    char *env[] = {home_var, "STARPU_SILENT=1", NULL};
    char *argv[] = {DAHLSIM_BIN, "engine-probe", "--ncpu", "1", "--tasks", "4", "--duration-us", "2000", NULL};
    dahl_test_run(&run, argv, env);
    cr_assert_eq(run.status, 0, "dahlsim exited %d: %s", run.status, run.err);
    cr_assert(strstr(run.out, "\"flavour\": \"native\"") != NULL, "%s", run.out);
    cr_assert_eq(dahl_test_json_number(run.out, "ncpu"), 1);
    /* The kernel really ran: four 2 ms busy-waits in a row on one CPU cannot take less than 8 ms. */
    cr_assert_geq(dahl_test_json_number(run.out, "makespan_us"), 8000.0, "%s", run.out);
}

Test(flavours, simulated_eager_two_cpus_matches_the_model)
{
    simulate("eager", "2", "10", "2000");
    assert_simulated_makespan(5 * (2000.0 + SIM_TASK_OVERHEAD_US));
    cr_assert_eq(dahl_test_json_number(run.out, "ncpu"), 2);
}

Test(flavours, simulated_one_cpu_serialises_the_tasks)
{
    simulate("eager", "1", "3", "5000");
    assert_simulated_makespan(3 * (5000.0 + SIM_TASK_OVERHEAD_US));
}

Test(flavours, simulated_dmda_balances_an_odd_count)
{
    simulate("dmda", "2", "7", "2000");
    assert_simulated_makespan(4 * (2000.0 + SIM_TASK_OVERHEAD_US));
}

Test(flavours, simulation_is_deterministic)
{
    simulate("dmda", "2", "25", "5000");
    cr_assert_eq(run.status, 0, "%s", run.err);
    static char first[sizeof(run.out)];
    memcpy(first, run.out, sizeof(first));
    simulate("dmda", "2", "25", "5000");
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert_str_eq(run.out, first);
}

Test(flavours, simulated_shape_without_a_model_fails)
{
    /* No 3 ms entry in the hand-written model: StarPU must refuse, not invent a duration. */
    simulate("eager", "2", "2", "3000");
    cr_assert_neq(run.status, 0, "an uncalibrated task was simulated: %s", run.out);
}

/* engine-probe --empty (bench/runtime_overhead): tasks with no kernel and no perf model take no simulated time
 * of their own, so what is left is exactly StarPU-SimGrid's charge per task (here, with the submission and
 * input-fetching costs off, the 1 us of polling), spread over the workers. */
static void simulate_empty(const char *ncpu, const char *tasks)
{
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "engine-probe", "--empty", "--sched",
                    "eager", "--ncpu", (char *)ncpu, "--tasks", (char *)tasks, NULL};
    dahl_test_run(&run, argv, sim_env);
    cr_assert(strstr(run.out, "\"empty\": true") != NULL, "%s", run.out);
}

Test(flavours, simulated_empty_tasks_cost_only_the_runtime_charge)
{
    simulate_empty("1", "1000");
    assert_simulated_makespan(1000 * SIM_TASK_OVERHEAD_US);
    simulate_empty("2", "1000");
    assert_simulated_makespan(500 * SIM_TASK_OVERHEAD_US);
}

Test(flavours, native_empty_tasks_run)
{
    char home[] = "/tmp/dahlsim-test-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    char home_var[64];
    snprintf(home_var, sizeof(home_var), "STARPU_HOME=%s", home);
    char *env[] = {home_var, "STARPU_SILENT=1", NULL};
    char *argv[] = {DAHLSIM_BIN, "engine-probe", "--empty", "--ncpu", "1", "--tasks", "2000", NULL};
    dahl_test_run(&run, argv, env);
    cr_assert_eq(run.status, 0, "dahlsim exited %d: %s", run.status, run.err);
    cr_assert(strstr(run.out, "\"empty\": true") != NULL, "%s", run.out);
    /* 2000 tasks through StarPU's queues and data management cannot take less than 0.1 us each. */
    cr_assert_geq(dahl_test_json_number(run.out, "makespan_us"), 200.0, "%s", run.out);
}

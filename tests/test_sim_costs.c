/* What dahlsim's simulation charges beyond StarPU-SimGrid's own model, each checked by its effect on
 * simulated runs of the committed fixtures: the submitting thread's measured cost (the calibration manifest's
 * "submission"), the scheduling policy's cost per push and the workers' cost per task ("scheduling"),
 * StarPU's REDUX reduction tasks timed (scripts/patches/starpu-simgrid-redux-time.patch), and runs with a
 * simulated GPU repeatable to the bit (scripts/patches/starpu-handle-order.patch). A test binary
 * of its own: each of these runs several simulations. Also checks the bare StarPU-SimGrid baseline that
 * bench/sim_speed measures dahlsim's simulation speed against. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA DAHLSIM_SOURCE_DIR "/tests/data"
#define TINY DATA "/scenarios/tiny.json"

static struct dahl_test_run run;
static char *env[] = {"DAHLSIM_HOME=" DATA, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};

static void dahlsim(const char *const *args)
{
    dahl_test_run_args(&run, DAHLSIM_BIN, args, env);
}

static void assert_input_error(const char *what, const char *want1, const char *want2)
{
    dahl_test_assert_input_error(&run, what, want1, want2);
}

/* results.json of dir, parsed (the caller deletes it). */
static cJSON *read_results(const char *dir)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/results.json", dir);
    cJSON *root = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(root, "%s: not JSON", path);
    return root;
}

/* Writes home/calibration/tiny-2cpu, a copy of the fixture whose manifest also has key: json. */
static void tiny_with(const char *home, const char *key, const char *json)
{
    dahl_test_machine_copy(DATA "/calibration", "tiny-2cpu", home);
    char dir[256];
    snprintf(dir, sizeof(dir), "%s/calibration/tiny-2cpu", home);
    dahl_test_manifest_add(dir, key, json);
}

/* The same whose manifest says the submitting thread costs us_per_task (the key dahlsim calibrate writes). */
static void tiny_with_submission_cost(const char *home, const char *us_per_task)
{
    char json[128];
    snprintf(json, sizeof(json), "{\"us_per_task\": %s, \"input_copy_bytes_per_s\": 1e9}", us_per_task);
    tiny_with(home, "submission", json);
}

/* The calibration's measured cost of the thread submitting the tasks is charged in simulated time: on the
 * workers' cores when every core of the machine runs a worker (tiny-2cpu has 2), on a core of its own with
 * one worker; runs stay byte-identical; a bad value is refused naming the manifest and the field. */
Test(sim_costs, the_measured_submission_cost_is_charged_where_the_machine_has_room)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    tiny_with_submission_cost(home, "50");
    char home_var[128], out_plain[128], out_a[128], out_b[128], out_one[128];
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    snprintf(out_plain, sizeof(out_plain), "%s/plain", home);
    snprintf(out_a, sizeof(out_a), "%s/a", home);
    snprintf(out_b, sizeof(out_b), "%s/b", home);
    snprintf(out_one, sizeof(out_one), "%s/one", home);
    char *home_env[] = {home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};

    dahlsim((const char *[]){"run", TINY, "--out", out_plain, "--quiet", NULL}); /* the fixture: no cost */
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *argv[] = {DAHLSIM_BIN, "run", TINY, "--out", out_a, "--quiet", NULL};
    dahl_test_run(&run, argv, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    argv[4] = out_b;
    dahl_test_run(&run, argv, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *a = dahl_test_results_without_wall(out_a), *b = dahl_test_results_without_wall(out_b);
    cr_assert_str_eq(a, b, "two runs charging the submission cost differ");
    free(a);
    free(b);

    cJSON *plain = read_results(out_plain), *charged = read_results(out_a);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(plain, "submission");
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(charged, "submission");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ps, "charged_on")->valuestring, "not charged");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ps, "us_per_task")));
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cs, "charged_on")->valuestring, "worker cores");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cs, "core_share")->valuedouble, 0.5);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ps, "core_share")));
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cs, "us_per_task")->valuedouble, 50);
    double t_plain = cJSON_GetObjectItemCaseSensitive(plain, "makespan_s")->valuedouble;
    double t_charged = cJSON_GetObjectItemCaseSensitive(charged, "makespan_s")->valuedouble;
    /* 50 us per task, on 2 cores: at least a quarter of it per task lands on the makespan */
    double tasks = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(charged, "tasks"), "per_arch")
                       ->child->valuedouble;
    cr_assert_gt(t_charged, t_plain + 0.25 * 50e-6 * tasks, "plain %g s, charged %g s, %g tasks", t_plain, t_charged,
                 tasks);
    /* ... at half a core at most, busy worker or idle (natively an idle worker spins): 100 us a task, one after
     * another (measured 95 us a task with the workers' own tasks counted; at full speed it would be 50) */
    cr_assert_gt(t_charged, 1.5 * 50e-6 * tasks, "plain %g s, charged %g s, %g tasks", t_plain, t_charged, tasks);
    cJSON_Delete(plain);
    cJSON_Delete(charged);

    char *one[] = {DAHLSIM_BIN, "run", TINY, "--set", "cpus=1", "--out", out_one, "--quiet", NULL};
    dahl_test_run(&run, one, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cJSON *r1 = read_results(out_one);
    cr_assert_str_eq(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r1, "submission"), "charged_on")->valuestring,
        "own core");
    cJSON_Delete(r1);

    char calibration[256];
    snprintf(calibration, sizeof(calibration), "%s/calibration", home);
    dahl_test_remove_tree(calibration);
    tiny_with_submission_cost(home, "-1");
    dahl_test_run(&run, argv, home_env);
    assert_input_error("bad submission cost", "manifest.json: \"submission.us_per_task\": expected a number", NULL);
    dahl_test_remove_tree(home);
}

/* A simulation of tiny.json on 1 CPU against home/calibration/tiny-2cpu (env, argv: pointing into the
 * struct, which must stay where it is). */
struct one_cpu_run {
    char home_var[128], out[128];
    char *env[4];
    char *argv[9];
};

/* Writes home/calibration/tiny-2cpu, a copy of the fixture whose manifest has the "scheduling" object given
 * (the key dahlsim calibrate writes), and simulates tiny.json on 1 CPU with the fixture (*plain) and with
 * the copy (*charged, by r). */
static void one_cpu_runs_with_scheduling(const char *home, const char *scheduling, struct one_cpu_run *r,
                                         cJSON **plain, cJSON **charged)
{
    char out_plain[128];
    tiny_with(home, "scheduling", scheduling);
    snprintf(r->home_var, sizeof(r->home_var), "DAHLSIM_HOME=%s", home);
    snprintf(r->out, sizeof(r->out), "%s/one", home);
    snprintf(out_plain, sizeof(out_plain), "%s/plain", home);
    char *env[] = {r->home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_BIN, "run", TINY, "--set", "cpus=1", "--out", r->out, "--quiet", NULL};
    memcpy(r->env, env, sizeof(env));
    memcpy(r->argv, argv, sizeof(argv));
    dahlsim((const char *[]){"run", TINY, "--set", "cpus=1", "--out", out_plain, "--quiet", NULL}); /* fixture */
    cr_assert_eq(run.status, 0, "%s", run.err);
    dahl_test_run(&run, r->argv, r->env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    *plain = read_results(out_plain);
    *charged = read_results(r->out);
}

/* Replaces home/calibration/tiny-2cpu's "scheduling" by a bad one, expects r's run to refuse it with want,
 * and removes home. */
static void bad_scheduling_refused(const char *home, const char *scheduling, struct one_cpu_run *r,
                                   const char *want)
{
    char calibration[256];
    snprintf(calibration, sizeof(calibration), "%s/calibration", home);
    dahl_test_remove_tree(calibration);
    tiny_with(home, "scheduling", scheduling);
    dahl_test_run(&run, r->argv, r->env);
    assert_input_error("bad scheduling figure", want, NULL);
    dahl_test_remove_tree(home);
}

/* The calibration's measured cost per push of the scheduling policy (manifest "scheduling.push_us", per
 * worker configuration and policy, as dahlsim calibrate writes it) is slept by a worker after each push it
 * makes: with one CPU worker, which executes every task and so waits out every one of its pushes, the run is
 * longer by the pushes times the cost; a figure for other workers or another policy is not charged; a bad
 * value is refused naming the manifest and the field. */
Test(sim_costs, the_measured_push_cost_is_slept_by_the_pushing_worker)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    struct one_cpu_run r;
    cJSON *plain, *charged;
    one_cpu_runs_with_scheduling(home, "{\"push_us\": {\"1cpu\": {\"dmda\": 20}, \"2cpu\": {\"lws\": 1000}}}", &r,
                                 &plain, &charged);
    char out_two[128];
    snprintf(out_two, sizeof(out_two), "%s/two", home);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(plain, "scheduling");
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(charged, "scheduling");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ps, "push_us_charged")));
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cs, "push_us_charged")->valuedouble, 20);
    double pushes = cJSON_GetObjectItemCaseSensitive(cs, "worker_pushes")->valuedouble;
    /* Which thread pushes a task (a worker releasing its last dependency, or the one submitting it when it
     * is ready at once) depends on timing; every task is pushed once either way. */
    double all = pushes + cJSON_GetObjectItemCaseSensitive(cs, "other_pushes")->valuedouble;
    cr_assert_eq(all, cJSON_GetObjectItemCaseSensitive(ps, "worker_pushes")->valuedouble +
                          cJSON_GetObjectItemCaseSensitive(ps, "other_pushes")->valuedouble,
                 "the same pushes");
    cr_assert_gt(pushes, 0.5 * all, "%g of %g pushes by the worker", pushes, all);
    double t_plain = cJSON_GetObjectItemCaseSensitive(plain, "makespan_s")->valuedouble;
    double t_charged = cJSON_GetObjectItemCaseSensitive(charged, "makespan_s")->valuedouble;
    double slept = 20e-6 * pushes;
    cr_assert(t_charged > t_plain + 0.9 * slept && t_charged < t_plain + 1.1 * slept,
              "plain %g s, charged %g s, %g worker pushes of 20 us", t_plain, t_charged, pushes);
    cJSON_Delete(plain);
    cJSON_Delete(charged);

    char *two[] = {DAHLSIM_BIN, "run", TINY, "--out", out_two, "--quiet", NULL}; /* 2 CPUs, dmda: no figure */
    dahl_test_run(&run, two, r.env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cJSON *r2 = read_results(out_two);
    cr_assert(cJSON_IsNull(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r2, "scheduling"), "push_us_charged")));
    cJSON_Delete(r2);
    bad_scheduling_refused(home, "{\"push_us\": {\"1cpu\": {\"dmda\": \"fast\"}}}", &r,
                           "manifest.json: \"scheduling.push_us.1cpu.dmda\": expected a number");
}

/* heteroprio:auto-HEURISTIC: a heuristic the calibration did not time takes the figures of one it did (the
 * heuristic only orders the buckets), its own where it has them. */
/* A calibration with one-worker models (dahlsim_kernels.h): a run with one CPU worker reads them, one between
 * one worker and the calibration's all_cpus a blend written for it, which StarPU reads as it reads the
 * originals: with one-worker models identical to the all-cores ones, every run gives the makespan of the
 * calibration without them, and results.json says which models it read. */
Test(sim_costs, runs_read_the_kernel_models_of_their_worker_count)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    tiny_with(home, "one_worker", "{\"sampling\": \"sampling-1cpu\", \"all_cpus\": 4}");
    char cmd[512], home_var[128];
    snprintf(cmd, sizeof(cmd), "cp -r '%s/calibration/tiny-2cpu/sampling' '%s/calibration/tiny-2cpu/sampling-1cpu'",
             home, home);
    cr_assert_eq(system(cmd), 0);
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    char *home_env[] = {home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    const char *cpus[] = {"cpus=1", "cpus=2"};
    const char *want[] = {"measured with one CPU worker (sampling-1cpu)", "interpolated at 2 of 4 CPU workers"};
    for (int k = 0; k < 2; k++) {
        char out[128];
        snprintf(out, sizeof(out), "%s/run%d", home, k);
        dahlsim((const char *[]){"run", TINY, "--set", cpus[k], "--out", out, "--quiet", NULL}); /* the fixture */
        cr_assert_eq(run.status, 0, "%s: %s", cpus[k], run.err);
        cJSON *fixture = read_results(out);
        char *argv[] = {DAHLSIM_BIN, "run", TINY, "--set", (char *)cpus[k], "--out", out, "--quiet", NULL};
        dahl_test_run(&run, argv, home_env);
        cr_assert_eq(run.status, 0, "%s: %s", cpus[k], run.err);
        cJSON *r = read_results(out);
        const cJSON *models = cJSON_GetObjectItemCaseSensitive(r, "kernel_models");
        cr_assert(cJSON_IsString(models) && strstr(models->valuestring, want[k]) != NULL, "%s: kernel_models %s",
                  cpus[k], cJSON_IsString(models) ? models->valuestring : "not a string");
        cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(fixture, "kernel_models")));
        cr_assert_eq(dahl_test_number(r, "makespan_s"), dahl_test_number(fixture, "makespan_s"),
                     "%s: the same models read back differently", cpus[k]);
        snprintf(cmd, sizeof(cmd), "%s/.kernel-models", out);
        cr_assert_neq(access(cmd, F_OK), 0, "%s left behind", cmd);
        cJSON_Delete(r);
        cJSON_Delete(fixture);
    }
    dahl_test_remove_tree(home);
}

Test(sim_costs, a_heteroprio_heuristic_not_timed_takes_the_timed_ones_figures)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    tiny_with(home, "scheduling",
              "{\"push_us\": {\"1cpu\": {\"heteroprio:auto-prws\": 7, \"heteroprio:auto-ntc\": 9}}}");
    char home_var[128];
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    char *env[] = {home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    const char *heuristics[] = {"purws", "ntc"};
    const double want[] = {7, 9};
    for (int k = 0; k < 2; k++) {
        char sched[64], out[128];
        snprintf(sched, sizeof(sched), "scheduler=heteroprio:auto-%s", heuristics[k]);
        snprintf(out, sizeof(out), "%s/%s", home, heuristics[k]);
        char *argv[] = {DAHLSIM_BIN, "run", TINY, "--set", "cpus=1", "--set", sched, "--out", out, "--quiet", NULL};
        dahl_test_run(&run, argv, env);
        cr_assert_eq(run.status, 0, "%s: %s", sched, run.err);
        cJSON *r = read_results(out);
        const cJSON *charged =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "scheduling"), "push_us_charged");
        cr_assert(cJSON_IsNumber(charged), "%s: push_us_charged not a number", sched);
        cr_assert_eq(charged->valuedouble, want[k], "%s: push_us_charged %g", sched, charged->valuedouble);
        cJSON_Delete(r);
    }
    dahl_test_remove_tree(home);
}

/* The calibration's measured cost per task of the workers (manifest "scheduling.worker_us", per worker
 * configuration and policy) replaces StarPU-SimGrid's 1 us per input fetched: the worker sleeps the charge
 * after each task it pops, so the simulated run reports a cost per task of at least the charge (plus what
 * StarPU-SimGrid's driver loop still sleeps) and is longer; a bad charge is refused naming the field. */
Test(sim_costs, the_measured_worker_cost_replaces_the_per_input_cost)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    struct one_cpu_run r;
    cJSON *plain, *charged;
    one_cpu_runs_with_scheduling(
        home, "{\"worker_us\": {\"1cpu\": {\"dmda\": {\"charge\": 20, \"native\": 21, \"simulated_rest\": 1}}}}", &r,
        &plain, &charged);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(plain, "scheduling");
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(charged, "scheduling");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ps, "worker_us_charged")));
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cs, "worker_us_charged")->valuedouble, 20);
    double plain_us = cJSON_GetObjectItemCaseSensitive(ps, "worker_us_per_task")->valuedouble;
    double charged_us = cJSON_GetObjectItemCaseSensitive(cs, "worker_us_per_task")->valuedouble;
    /* StarPU-SimGrid alone: 1 us per input fetched and per driver loop turn, a few us per task */
    cr_assert(plain_us > 1 && plain_us < 10, "plain %g us per task", plain_us);
    cr_assert(charged_us > 20 && charged_us < 20 + plain_us, "charged %g us per task (plain %g)", charged_us, plain_us);
    double tasks = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(charged, "tasks"), "per_arch")
                       ->child->valuedouble;
    double t_plain = cJSON_GetObjectItemCaseSensitive(plain, "makespan_s")->valuedouble;
    double t_charged = cJSON_GetObjectItemCaseSensitive(charged, "makespan_s")->valuedouble;
    cr_assert_gt(t_charged, t_plain + (20 - plain_us) * 1e-6 * tasks, "plain %g s, charged %g s, %g tasks", t_plain,
                 t_charged, tasks);
    cJSON_Delete(plain);
    cJSON_Delete(charged);
    bad_scheduling_refused(home, "{\"worker_us\": {\"1cpu\": {\"dmda\": {\"charge\": -3}}}}", &r,
                           "manifest.json: \"scheduling.worker_us.1cpu.dmda.charge\": expected a number");
}

/* The workers' cost per task is CPU work on their cores, as natively: where the submitting thread takes its
 * turns on those cores (2 workers on tiny-2cpu's 2 cores), each worker's charge runs at what the thread leaves
 * of the core, so the simulated cost per task exceeds the same charge with the thread charged nowhere. */
static double two_worker_cost(const char *submission)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    tiny_with(home, "scheduling",
              "{\"worker_us\": {\"2cpu\": {\"dmda\": {\"charge\": 20, \"native\": 21, \"simulated_rest\": 1}}}}");
    char dir[256], home_var[128], out[128];
    snprintf(dir, sizeof(dir), "%s/calibration/tiny-2cpu", home);
    if (submission != NULL)
        dahl_test_manifest_add(dir, "submission", submission);
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    snprintf(out, sizeof(out), "%s/out", home);
    char *home_env[] = {home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_BIN, "run", TINY, "--out", out, "--quiet", NULL};
    dahl_test_run(&run, argv, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cJSON *r = read_results(out);
    const cJSON *sched = cJSON_GetObjectItemCaseSensitive(r, "scheduling");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(sched, "worker_us_charged")->valuedouble, 20);
    double us = cJSON_GetObjectItemCaseSensitive(sched, "worker_us_per_task")->valuedouble;
    cJSON_Delete(r);
    dahl_test_remove_tree(home);
    return us;
}

Test(sim_costs, the_workers_cost_shares_their_cores_with_the_submitting_thread)
{
    double alone = two_worker_cost(NULL);
    double shared = two_worker_cost("{\"us_per_task\": 50, \"input_copy_bytes_per_s\": 1e9}");
    cr_assert(alone >= 20 && alone < 30, "%g us per task, the thread charged nowhere", alone);
    cr_assert_gt(shared, alone + 2, "%g us per task with the thread on the workers' cores, %g without", shared, alone);
}

/* Runs charging the measured figures (both scheduling ones and the submission's, on 2 workers under dmda:
 * its decisions depend on every simulated time) give byte-identical results run after run. With
 * "runtime_costs": "starpu" the same calibration gives byte for byte the run of the fixture, which has none
 * of those figures (StarPU-SimGrid's own fixed costs), and results.json says nothing was charged. */
Test(sim_costs, measured_costs_runs_are_byte_identical_and_starpu_costs_leave_them_out)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    tiny_with(home, "scheduling",
              "{\"push_us\": {\"2cpu\": {\"dmda\": 3}}, \"worker_us\": {\"2cpu\": {\"dmda\": "
              "{\"charge\": 4, \"native\": 5, \"simulated_rest\": 1}}}}");
    char dir[256];
    snprintf(dir, sizeof(dir), "%s/calibration/tiny-2cpu", home);
    dahl_test_manifest_add(dir, "submission", "{\"us_per_task\": 50, \"input_copy_bytes_per_s\": 1e9}");
    char home_var[128], out_a[128], out_b[128], out_fixture[128];
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    snprintf(out_a, sizeof(out_a), "%s/a", home);
    snprintf(out_b, sizeof(out_b), "%s/b", home);
    snprintf(out_fixture, sizeof(out_fixture), "%s/fixture", home);
    char *home_env[] = {home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_BIN, "run", TINY, "--out", out_a, "--quiet", NULL, NULL, NULL};
    dahl_test_run(&run, argv, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    argv[4] = out_b;
    dahl_test_run(&run, argv, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *a = dahl_test_results_without_wall(out_a), *b = dahl_test_results_without_wall(out_b);
    cr_assert_str_eq(a, b, "two runs charging the measured figures differ");
    free(a);
    free(b);
    cJSON *r = read_results(out_a);
    const cJSON *sched = cJSON_GetObjectItemCaseSensitive(r, "scheduling");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(sched, "push_us_charged")->valuedouble, 3);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(sched, "worker_us_charged")->valuedouble, 4);
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(r, "submission");
    cr_assert_str_neq(cJSON_GetObjectItemCaseSensitive(sub, "charged_on")->valuestring, "not charged");
    cJSON_Delete(r);

    dahlsim((const char *[]){"run", TINY, "--out", out_fixture, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    argv[6] = "--set";
    argv[7] = "runtime_costs=starpu";
    dahl_test_run(&run, argv, home_env); /* into out_b */
    cr_assert_eq(run.status, 0, "%s", run.err);
    a = dahl_test_results_without_wall(out_fixture);
    b = dahl_test_results_without_wall(out_b);
    cr_assert_str_eq(a, b, "runtime_costs=starpu with measured costs differs from the fixture without them");
    free(a);
    free(b);
    r = read_results(out_b);
    sub = cJSON_GetObjectItemCaseSensitive(r, "submission");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(sub, "charged_on")->valuestring, "not charged");
    sched = cJSON_GetObjectItemCaseSensitive(r, "scheduling");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sched, "push_us_charged")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sched, "worker_us_charged")));
    cJSON_Delete(r);
    dahl_test_remove_tree(home);
}

/* StarPU's REDUX reduction tasks take simulated time (scripts/patches/starpu-simgrid-redux-time.patch): with
 * the reduction codelet's perf model 1000 times slower, a REDUX run (tiny.json: LeNet's gradients reduced
 * over 2 workers every step, by StarPU's own tasks running dahl_accumulate) is much longer, although dahl
 * itself submits no dahl_accumulate task. */
Test(sim_costs, redux_reduction_tasks_take_simulated_time)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    dahl_test_machine_copy(DATA "/calibration", "tiny-2cpu", home);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "cd '%s/calibration/tiny-2cpu/sampling/codelets/45' && awk 'NF == 8 && $1 ~ /^[0-9a-f]+$/ && length($1) "
             "== 8 { $4 = $4 * 1000 } { print }' dahl_accumulate.tiny-2cpu > slow && mv slow dahl_accumulate.tiny-2cpu",
             home);
    cr_assert_eq(system(cmd), 0);
    char home_var[128], out_plain[128], out_slow[128];
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    snprintf(out_plain, sizeof(out_plain), "%s/plain", home);
    snprintf(out_slow, sizeof(out_slow), "%s/slow", home);
    dahlsim((const char *[]){"run", TINY, "--out", out_plain, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *home_env[] = {home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_BIN, "run", TINY, "--out", out_slow, "--quiet", NULL};
    dahl_test_run(&run, argv, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cJSON *plain = read_results(out_plain), *slow = read_results(out_slow);
    const cJSON *per_codelet =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(slow, "tasks"), "per_codelet");
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(per_codelet, "dahl_accumulate");
    cr_assert(acc == NULL || acc->valuedouble == 0, "dahl submitted accumulate tasks itself");
    double t_plain = cJSON_GetObjectItemCaseSensitive(plain, "makespan_s")->valuedouble;
    double t_slow = cJSON_GetObjectItemCaseSensitive(slow, "makespan_s")->valuedouble;
    /* 16 steps, each ending with at least one reduction of >= 1 ms (1 us x 1000) before its updates */
    cr_assert_gt(t_slow, t_plain + 16 * 1e-3, "plain %g s, slow reductions %g s", t_plain, t_slow);
    cJSON_Delete(plain);
    cJSON_Delete(slow);
    dahl_test_remove_tree(home);
}

/* With a simulated GPU, transfers start in the order StarPU acquires a task's data, which StarPU 1.3.10 sorts
 * by handle address: simulated times then changed from run to run (up to 2 % under lws, ws, dm, eager and
 * random on 13 CPUs + V100) until scripts/patches/starpu-handle-order.patch sorted by registration order.
 * Three runs of that case (3 steps: 3 different makespans in 5 runs without the patch) give one results.json. */
Test(sim_costs, a_gpu_run_is_byte_identical_run_after_run)
{
    char dir[] = "/tmp/dahlsim-gpu-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char scen[96], out[3][96];
    snprintf(scen, sizeof(scen), "%s/gpu.json", dir);
    dahl_test_write_file(scen, "{\"machine\": \"roofline-14cpu-1v100\", \"dataset\": \"synthetic:28x28x3\", \"samples\": 96, "
                         "\"batch\": 32, \"scheduler\": \"lws\", \"cpus\": 13, \"gpus\": 1}\n");
    char *home_env[] = {"DAHLSIM_HOME=" DAHLSIM_SOURCE_DIR, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *first = NULL;
    for (int i = 0; i < 3; i++) {
        snprintf(out[i], sizeof(out[i]), "%s/run%d", dir, i);
        char *argv[] = {DAHLSIM_BIN, "run", scen, "--out", out[i], "--quiet", NULL};
        dahl_test_run(&run, argv, home_env);
        cr_assert_eq(run.status, 0, "%s", run.err);
        char *r = dahl_test_results_without_wall(out[i]);
        if (first == NULL)
            first = r;
        else {
            cr_assert_str_eq(r, first, "run %d differs from run 0", i);
            free(r);
        }
    }
    free(first);
    dahl_test_remove_tree(dir);
}

/* The simulated time of one bench/sim_empty_tasks run (the bare StarPU-SimGrid baseline of bench/sim_speed)
 * on the tiny-2cpu fixture, 200 tasks on 2 CPU workers, with up to four more arguments (NULL: none). */
/* StarPU-SimGrid loads the platform before the program's main parses its arguments: every run, a refused one
 * too, names the fixture's calibration (a clean home has no bus files of its own for this host). */
static char *env_bare[] = {"STARPU_PERF_MODEL_DIR=" DATA "/calibration/tiny-2cpu/sampling",
                           "STARPU_HOSTNAME=tiny-2cpu", "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};

static double bare_simulated_s(const char *opt1, const char *opt2, const char *opt3, const char *opt4)
{
    char *argv[] = {SIM_EMPTY_TASKS_BIN, "--tasks", "200", "--ncpu", "2", (char *)opt1, (char *)opt2, (char *)opt3,
                    (char *)opt4, NULL};
    dahl_test_run(&run, argv, env_bare);
    cr_assert_eq(run.status, 0, "sim_empty_tasks %s %s: %s", opt1 ? opt1 : "", opt2 ? opt2 : "", run.err);
    double s = dahl_test_json_number(run.out, "simulated_s");
    cr_assert(s > 0, "no simulated_s in: %s", run.out);
    return s;
}

/* The bare baseline that simulation speed is measured against does what it says: --task-us gives every task
 * that simulated time (200 tasks of 50 us on 2 workers: 5 ms more than untimed ones), and --buffers adds
 * buffers to fetch, each of which StarPU-SimGrid charges 1 us (3 buffers instead of 2: 100 us more). */
Test(sim_costs, the_bare_baseline_tasks_take_their_time_and_buffers)
{
    double untimed = bare_simulated_s(NULL, NULL, NULL, NULL);
    double timed = bare_simulated_s("--task-us", "50", NULL, NULL);
    double three = bare_simulated_s("--task-us", "50", "--buffers", "3");
    double half = bare_simulated_s("--task-us", "50", "--buffers", "2.5");
    cr_expect(timed - untimed > 0.005 * 0.95 && timed - untimed < 0.005 * 1.05,
              "200 tasks of 50 us on 2 workers: %g s, untimed %g s", timed, untimed);
    cr_expect(three - timed > 100e-6 * 0.5 && three - timed < 100e-6 * 1.5,
              "a third buffer on 200 tasks, 2 workers: %g s against %g s", three, timed);
    cr_expect(half > timed && half < three, "2.5 buffers a task: %g s, between %g and %g", half, timed, three);
    char *argv[] = {SIM_EMPTY_TASKS_BIN, "--tasks", "10", "--buffers", "1", NULL};
    dahl_test_run(&run, argv, env_bare);
    cr_expect_eq(run.status, 2, "--buffers 1 refused: %s", run.err);
    cr_expect_not_null(strstr(run.err, "--buffers"), "%s", run.err);
}

/* Scenario files through `dahlsim check` and `dahlsim run`, against the committed measured calibration
 * tests/data/calibration/tiny-2cpu (LeNet on 12x12x1 images): strict validation naming the file and the field,
 * sweep points named in errors, and a simulated run whose results.json is byte-identical run after run apart
 * from the wall-time and RSS fields. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATA DAHLSIM_SOURCE_DIR "/tests/data"
#define TINY DATA "/scenarios/tiny.json"

static struct dahl_test_run run;
static char *env[] = {"DAHLSIM_HOME=" DATA, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};

static void dahlsim(const char *const *args)
{
    dahl_test_run_args(&run, DAHLSIM_BIN, args, env);
}

/* A scenario file written for one test. */
static void assert_input_error(const char *what, const char *want1, const char *want2)
{
    dahl_test_assert_input_error(&run, what, want1, want2);
}

Test(scenario, check_accepts_the_fixtures)
{
    dahlsim((const char *[]){"check", TINY, NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.out, "ok: ") != NULL && strstr(run.out, "1 experiment on machine tiny-2cpu") != NULL,
              "%s", run.out);
    dahlsim((const char *[]){"check", DATA "/scenarios/tiny-sweep.json", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.out, "6 experiments") != NULL, "%s", run.out);
}

Test(scenario, set_fixes_a_swept_key_and_takes_it_out_of_the_sweep)
{
    dahlsim((const char *[]){"check", DATA "/scenarios/tiny-sweep.json", "--set", "batch=8", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.out, "2 experiments") != NULL, "%s", run.out);
    dahlsim((const char *[]){"check", DATA "/scenarios/tiny-sweep.json", "--set", "batch=8", "--set",
                             "scheduler=eager", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.out, "1 experiment on machine tiny-2cpu") != NULL, "%s", run.out);
    /* the fixed value is checked like any other */
    dahlsim((const char *[]){"check", DATA "/scenarios/tiny-sweep.json", "--set", "batch=0", NULL});
    assert_input_error("--set batch=0", "tiny-sweep.json", "\"batch\"");
}

Test(scenario, bad_values_name_the_file_and_the_field)
{
    const struct {
        const char *set, *want1, *want2;
    } cases[] = {
        {"batch=\"eight\"", "\"batch\": expected an integer", "got \"eight\""},
        {"batch=100", "\"batch\": expected at most the 64 training samples", "got 100"},
        {"cpus=3", "\"cpus\": expected at most the 2 CPUs of tiny-2cpu's platform", NULL},
        {"gpus=1", "\"gpus\": expected at most the 0 GPUs", NULL},
        {"scheduler=fastest", "\"scheduler\": expected a StarPU scheduling policy", "got \"fastest\""},
        {"dataset=synthetic:64x64x3", "\"dataset\": expected a setup calibration tiny-2cpu covers", NULL},
        {"dataset=mnist", "\"dataset\": expected fashion-mnist, fashion-mnist:SIZE (padded, 28 to 512), cifar10:DIR or "
                            "synthetic:HxWxC", NULL},
        {"machine=no-such-machine", "\"machine\": expected a machine of", "got \"no-such-machine\""},
        {"reduction=tree", "\"reduction\": expected redux or manual", NULL},
        {"runtime_costs=none", "\"runtime_costs\": expected measured or starpu", "got \"none\""},
        {"prefetch=1", "\"prefetch\": expected true or false", NULL},
        {"perfmodel=linear", "\"perfmodel\": expected history, regression or nl-regression", NULL},
        {"batchsize=3", "--set batchsize=3: unknown key \"batchsize\"", NULL},
        {"grain=0", "\"grain\": expected a number of samples per layer task in [1, 8] (the batch), \"batch\" or",
         "got 0"},
        {"grain=9", "\"grain\": expected a number of samples per layer task in [1, 8]", "got 9"},
        {"grain=\"smallest\"", "\"grain\": expected a number of samples per layer task", "got \"smallest\""},
        {"grain=2", "\"grain\": expected grains calibration tiny-2cpu covers: it has no tasks over 2 samples", NULL},
        {"pipeline_depth=0", "\"pipeline_depth\": expected an integer in [1, 64]", "got 0"},
        {"pipeline_depth=65", "\"pipeline_depth\": expected an integer in [1, 64]", "got 65"},
        {"pipeline_schedule=\"gpipe\"", "\"pipeline_schedule\": expected fill or 1f1b", "got \"gpipe\""},
        {"steady_state=\"yes\"", "\"steady_state\": expected false, true, or {\"warmup\"", "got \"yes\""},
        {"steady_state={\"warmup\":-1}", "\"steady_state.warmup\": expected an integer in [0, 10000]", "got -1"},
        {"steady_state={\"tolerance\":0}", "\"steady_state.tolerance\": expected a number in (0, 0.1]", "got 0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dahlsim((const char *[]){"check", TINY, "--set", cases[i].set, NULL});
        assert_input_error(cases[i].set, TINY ": ", cases[i].want1);
        assert_input_error(cases[i].set, cases[i].want1, cases[i].want2);
    }
    /* a misspelt scheduler: one short line, and the nearest policy or how heteroprio is written as the hint */
    const char *sched_hints[][2] = {{"scheduler=dmdaa", "hint: did you mean \"dmda\"?"},
                                    {"scheduler=heteroprio", "hint: heteroprio needs priorities: heteroprio:auto-"},
                                    {"scheduler=fastest", "hint: common policies: lws"}};
    /* a built-in model is a name, not a path relative to the scenario: the hint covers it by name */
    dahlsim((const char *[]){"check", TINY, "--set", "model=\"vgg-small\"", NULL});
    assert_input_error("model=vgg-small", "\"dataset\": expected a setup calibration tiny-2cpu covers", NULL);
    cr_assert(strstr(run.err, "--cover synthetic:12x12x1,model=vgg-small,perfmodel=history") != NULL, "%s", run.err);
    for (size_t i = 0; i < sizeof(sched_hints) / sizeof(sched_hints[0]); i++) {
        dahlsim((const char *[]){"check", TINY, "--set", sched_hints[i][0], NULL});
        assert_input_error(sched_hints[i][0], "\"scheduler\": expected a StarPU scheduling policy", NULL);
        cr_assert(strstr(run.err, sched_hints[i][1]) != NULL, "%s: no \"%s\" in: %s", sched_hints[i][0],
                  sched_hints[i][1], run.err);
        cr_assert_lt(strchr(run.err, '\n') - run.err, (long)strlen(TINY) + 160, "%s: a short error line: %s",
                     sched_hints[i][0], run.err);
    }
    dahlsim((const char *[]){"check", TINY, "--set", "dataset=synthetic:64x64x3", NULL});
    cr_assert(strstr(run.err, "hint: dahlsim calibrate --machine tiny-2cpu --cover synthetic:64x64x3") != NULL, "%s",
              run.err);
}

Test(scenario, unknown_keys_bad_json_and_bad_sweep_points_are_errors)
{
    char path[] = "/tmp/dahlsim-scenario-XXXXXX.json";
    int fd = mkstemps(path, 5);
    cr_assert_geq(fd, 0);
    close(fd);
    dahl_test_write_file(path, "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"batch_size\": 3}");
    dahlsim((const char *[]){"check", path, NULL});
    assert_input_error("unknown key", "unknown key \"batch_size\"", path);
    dahl_test_write_file(path, "{\"machine\": \"tiny-2cpu\",\n \"dataset\": }");
    dahlsim((const char *[]){"check", path, NULL});
    assert_input_error("bad JSON", "line 2, column 13: not valid JSON (unexpected '}')", NULL);
    dahl_test_write_file(path, "{\"machine\": \"tiny-2cpu\"");
    dahlsim((const char *[]){"check", path, NULL});
    assert_input_error("cut JSON", "line 1, column 24: not valid JSON (the text ends too early)", NULL);
    dahl_test_write_file(path, "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"samples\": 64,"
                         " \"sweep\": {\"batch\": [8, 128]}}");
    dahlsim((const char *[]){"check", path, NULL});
    assert_input_error("bad sweep point", "sweep point (batch=128): \"batch\"", "got 128");
    dahl_test_write_file(path, "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"sweep\": {\"colour\": [1]}}");
    dahlsim((const char *[]){"check", path, NULL});
    assert_input_error("unknown sweep key", "\"sweep\": unknown key \"colour\"", NULL);
    unlink(path);
}

Test(scenario, run_is_simulated_and_byte_identical_twice)
{
    char dir[] = "/tmp/dahlsim-run-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char out1[64], out2[64];
    snprintf(out1, sizeof(out1), "%s/a", dir);
    snprintf(out2, sizeof(out2), "%s/b", dir);
    dahlsim((const char *[]){"run", TINY, "--out", out1, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.err, "not calibrated") == NULL, "%s", run.err);
    dahlsim((const char *[]){"run", TINY, "--out", out2, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *a = dahl_test_results_without_wall(out1), *b = dahl_test_results_without_wall(out2);
    cr_assert_str_eq(a, b, "two runs of one scenario differ");
    char path[128];
    snprintf(path, sizeof(path), "%s/results.json", out1);
    cJSON *root = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(root);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "mode")->valuestring, "simulated");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "scenario")->valuestring, TINY);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "scheduler")->valuestring, "dmda");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(root, "iterations")->valuedouble, 16); /* 2 epochs x 64 / 8 */
    cr_assert_gt(cJSON_GetObjectItemCaseSensitive(root, "makespan_s")->valuedouble, 0);
    cJSON_Delete(root);
    /* the experiment the simulation read, beside its results */
    snprintf(path, sizeof(path), "%s/point.json", out1);
    root = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(root, "no %s", path);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "scenario")->valuestring, TINY);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "scheduler")->valuestring, "dmda");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(root, "batch")->valuedouble, 8);
    cJSON_Delete(root);
    free(a);
    free(b);
    dahl_test_remove_tree(dir);

    dahlsim((const char *[]){"run", DATA "/scenarios/tiny-sweep.json", NULL});
    assert_input_error("run of a sweep", "has a sweep of 6 points: run it with dahlsim sweep", NULL);
}

/* Lines of a file. */
static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

Test(scenario, an_interrupted_sweep_resumes_with_every_point_exactly_once)
{
    char dir[] = "/tmp/dahlsim-sweep-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char jsonl[64];
    snprintf(jsonl, sizeof(jsonl), "%s/results.jsonl", dir);
    /* 6 points, one at a time; Ctrl-C (SIGINT to the whole process group, as a terminal sends it) once at
     * least one point is recorded. */
    char *argv[] = {DAHLSIM_BIN, "sweep", DATA "/scenarios/tiny-sweep.json", "--out", dir, "--quiet", "--set",
                    "epochs=2", "--set", "seed=7", NULL};
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        setpgid(0, 0);
        for (char **e = env; *e != NULL; e++)
            putenv(*e);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    /* Up to 240 s for the first point: under AddressSanitizer on 2 busy cores it once took over 30 s (the
     * limit this wait had), and the test failed with nothing recorded. */
    for (int i = 0; i < 24000 && count_lines(jsonl) < 1; i++)
        usleep(10000);
    kill(-pid, SIGINT);
    int status;
    waitpid(pid, &status, 0);
    int recorded = count_lines(jsonl);
    cr_assert_geq(recorded, 1, "no point recorded before the interrupt");
    if (recorded < 6) /* the interrupt landed before the end: the sweep says so */
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "interrupted sweep: status %d", status);

    dahlsim((const char *[]){"sweep", DATA "/scenarios/tiny-sweep.json", "--out", dir, "--quiet", "--set",
                             "epochs=2", "--set", "seed=7", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert_eq(count_lines(jsonl), 6, "results.jsonl has %d lines", count_lines(jsonl));
    bool seen[6] = {false};
    FILE *f = fopen(jsonl, "r");
    char line[8192];
    while (fgets(line, sizeof(line), f) != NULL) {
        cJSON *o = cJSON_Parse(line);
        cr_assert_not_null(o, "bad line: %s", line);
        int i = (int)cJSON_GetObjectItemCaseSensitive(o, "point")->valuedouble;
        cr_assert(i >= 0 && i < 6 && !seen[i], "point %d twice or out of range", i);
        seen[i] = true;
        cJSON_Delete(o);
    }
    fclose(f);
    char csv[64];
    snprintf(csv, sizeof(csv), "%s/results.csv", dir);
    cr_assert_eq(count_lines(csv), 7, "results.csv: header + 6 rows");
    dahl_test_remove_tree(dir);
}

/* A sweep on a machine with power figures (roofline-14cpu-1v100): every row of results.csv ends with the
 * point's joules, the same as its results.json says, and the energy plot's script is written. */
Test(scenario, a_sweep_records_each_points_energy)
{
    char dir[] = "/tmp/dahlsim-energy-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char scen[96];
    snprintf(scen, sizeof(scen), "%s/energy.json", dir);
    dahl_test_write_file(scen, "{\"machine\": \"roofline-14cpu-1v100\", \"dataset\": \"synthetic:28x28x3\", "
                               "\"samples\": 32, \"batch\": 16, \"gpus\": 0, \"scheduler\": \"lws\", "
                               "\"sweep\": {\"cpus\": [1, 2]}}\n");
    char out[96];
    snprintf(out, sizeof(out), "%s/out", dir);
    char *argv[] = {DAHLSIM_BIN, "sweep", scen, "--out", out, "--quiet", NULL};
    char *source_home[] = {"DAHLSIM_HOME=" DAHLSIM_SOURCE_DIR, "STARPU_SILENT=1", NULL};
    dahl_test_run(&run, argv, source_home);
    cr_assert_eq(run.status, 0, "%s", run.err);
    char path[160];
    snprintf(path, sizeof(path), "%s/results.csv", out);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[4096];
    cr_assert_not_null(fgets(line, sizeof(line), f));
    cr_assert(strstr(line, ",energy_j,energy_per_sample_j,makespan_lo_s,makespan_hi_s\n") != NULL, "header: %s", line);
    int rows = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        int point = atoi(line);
        for (int k = 0; k < 2; k++) /* the interval's ends */
            *strrchr(line, ',') = '\0';
        char *last = strrchr(line, ','), *cut = last;
        *cut = '\0';
        double joules = strtod(strrchr(line, ',') + 1, NULL);
        snprintf(path, sizeof(path), "%s/points/%04d/results.json", out, point);
        cJSON *r = cJSON_Parse(dahl_test_read_file(path));
        cr_assert_not_null(r);
        const cJSON *energy = cJSON_GetObjectItemCaseSensitive(r, "energy");
        cr_assert_eq(joules, cJSON_GetObjectItemCaseSensitive(energy, "total_j")->valuedouble, "point %d", point);
        cr_assert_gt(joules, 0);
        cJSON_Delete(r);
        rows++;
    }
    fclose(f);
    cr_assert_eq(rows, 2);
    snprintf(path, sizeof(path), "%s/plots/energy-vs-makespan.gp", out);
    cr_assert_eq(access(path, F_OK), 0, "no energy plot");
    dahl_test_remove_tree(dir);
}

Test(scenario, a_calibration_missing_a_perf_model_is_refused_before_simulating)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    dahl_test_machine_copy(DATA "/calibration", "tiny-2cpu", home);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm '%s/calibration/tiny-2cpu/sampling/codelets/45/dahl_relu_forward.tiny-2cpu'", home);
    cr_assert_eq(system(cmd), 0);
    char home_var[128];
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    char *home_env[] = {home_var, "STARPU_SILENT=1", NULL};
    char *argv[] = {DAHLSIM_BIN, "run", TINY, "--out", home, NULL};
    dahl_test_run(&run, argv, home_env);
    assert_input_error("missing perf model",
                       TINY ": \"machine\": expected a calibration with every perf model the network runs",
                       "dahl_relu_forward.tiny-2cpu");
    cr_assert(strstr(run.err, "hint: recalibrate with dahlsim calibrate --machine tiny-2cpu") != NULL, "%s", run.err);
    dahl_test_remove_tree(home);
}

/* The interval around a run's makespan: unknown on a calibration without a measured spread of its machine;
 * on one with it (calibrated in a spell probing 80 GFLOP/s, p10 64, p90 100), the makespan times 80/100 to
 * 80/64, and the throughput's likewise, in results.json. */
Test(scenario, a_run_carries_the_calibrations_measured_spread)
{
    char home[] = "/tmp/dahlsim-home-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    char out[64];
    snprintf(out, sizeof(out), "%s/out", home);
    dahlsim((const char *[]){"run", TINY, "--out", out, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cJSON *r = dahl_test_results_json(out);
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(r, "prediction_interval");
    cr_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(iv, "unknown")), "no unknown interval");
    cJSON_Delete(r);

    dahl_test_machine_copy(DATA "/calibration", "tiny-2cpu", home);
    char machine[96];
    snprintf(machine, sizeof(machine), "%s/calibration/tiny-2cpu", home);
    dahl_test_manifest_add(machine, "machine_spread",
                           "{\"runs\": 10, \"probe_gflops\": {\"min\": 50, \"p10\": 64, \"median\": 80, "
                           "\"p90\": 100, \"max\": 110}, \"calibrated_in\": {\"runs\": 4, \"probe_gflops\": 80}}");
    char home_var[128];
    snprintf(home_var, sizeof(home_var), "DAHLSIM_HOME=%s", home);
    char *home_env[] = {home_var, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_BIN, "run", TINY, "--out", out, NULL};
    dahl_test_run(&run, argv, home_env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.err, "the interval is the calibration's measured speed spread") != NULL, "%s", run.err);
    r = dahl_test_results_json(out);
    iv = cJSON_GetObjectItemCaseSensitive(r, "prediction_interval");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(iv, "makespan_s");
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(iv, "samples_per_s");
    double makespan = dahl_test_number(r, "makespan_s"), samples = dahl_test_number(r, "samples_per_s");
    cr_assert_eq(cJSON_GetArraySize(t), 2);
    cr_assert_float_eq(cJSON_GetArrayItem(t, 0)->valuedouble, makespan * 0.8, 1e-12);
    cr_assert_float_eq(cJSON_GetArrayItem(t, 1)->valuedouble, makespan * 1.25, 1e-12);
    cr_assert_float_eq(cJSON_GetArrayItem(rate, 0)->valuedouble, samples / 1.25, 1e-9);
    cr_assert_float_eq(cJSON_GetArrayItem(rate, 1)->valuedouble, samples / 0.8, 1e-9);
    cJSON_Delete(r);
    dahl_test_remove_tree(home);
}

/* The run's per_codelet count of symbol and its pipeline block's depth and staleness. */
static long pipelined_run(const char *out, const char *depth, long *depth_out, long *staleness)
{
    char set[32];
    snprintf(set, sizeof(set), "pipeline_depth=%s", depth);
    dahlsim((const char *[]){"run", TINY, "--set", set, "--out", out, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.err, "not calibrated") == NULL, "%s", run.err);
    char path[128];
    snprintf(path, sizeof(path), "%s/results.json", out);
    cJSON *root = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(root);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "pipeline");
    *depth_out = (long)cJSON_GetObjectItemCaseSensitive(p, "depth")->valuedouble;
    *staleness = (long)cJSON_GetObjectItemCaseSensitive(p, "staleness")->valuedouble;
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "tasks"), "per_codelet");
    long zeros = (long)cJSON_GetObjectItemCaseSensitive(tasks, "dahl_zero")->valuedouble;
    cJSON_Delete(root);
    return zeros;
}

/* A pipelined run simulates with the calibration's own models (the stash refreshes are dahl_zero and
 * dahl_accumulate tasks of the gradients' sizes): one refresh per parameter tensor and step more than
 * synchronous SGD, and results.json says how stale the weights were. */
Test(scenario, a_pipelined_run_simulates_and_reports_its_staleness)
{
    char dir[] = "/tmp/dahlsim-pipe-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char a[64], b[64];
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    long depth1, stale1, depth3, stale3;
    long zeros1 = pipelined_run(a, "1", &depth1, &stale1), zeros3 = pipelined_run(b, "3", &depth3, &stale3);
    cr_assert_eq(depth1, 1);
    cr_assert_eq(stale1, 0);
    cr_assert_eq(depth3, 3);
    cr_assert_eq(stale3, 2);
    cr_assert_eq(zeros3 - zeros1, 16 * 8, "16 steps x 8 parameter tensors: %ld and %ld", zeros1, zeros3);
    dahl_test_remove_tree(dir);
}

/* Runs TINY with --set SAMPLES (and steady_state with a warm-up of 4 steps where steady) into out; returns
 * results.json. */
static cJSON *steady_run(const char *out, const char *samples, bool steady)
{
    dahlsim((const char *[]){"run", TINY, "--set", samples, "--set",
                             steady ? "steady_state={\"warmup\": 4}" : "steady_state=false", "--out", out, "--quiet",
                             NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    return dahl_test_results_json(out);
}

/* "steady_state": each epoch's steps are simulated until the rest can be counted at their mean step, then
 * extrapolated; the makespan stays within 0.5 % of the full simulation's, results.json says how many steps were extrapolated
 * and counts them in its step times. An epoch too short to get steady is simulated in full, to the bit. */
Test(scenario, a_steady_state_run_extrapolates_within_half_a_percent)
{
    char dir[] = "/tmp/dahlsim-steady-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char a[64], b[64];
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    cJSON *full = steady_run(a, "samples=2048", false), *steady = steady_run(b, "samples=2048", true);
    double t_full = dahl_test_number(full, "makespan_s"), t_steady = dahl_test_number(steady, "makespan_s");
    cr_assert_lt(fabs(t_steady - t_full), 0.005 * t_full, "full %.9f s, steady %.9f s", t_full, t_steady);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(full, "steady_state")));
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(steady, "steady_state");
    cr_assert_eq(dahl_test_number(ss, "warmup"), 4);
    long extrapolated = (long)dahl_test_number(ss, "extrapolated_steps");
    cr_assert_gt(extrapolated, 0, "no step extrapolated");
    const cJSON *e;
    long simulated = 0, epochs = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(ss, "epochs"))
    {
        cr_assert_eq((long)dahl_test_number(e, "simulated_steps") + (long)dahl_test_number(e, "extrapolated_steps"), 256);
        cr_assert_geq(dahl_test_number(e, "simulated_steps"), 37, "a warm-up of 4, a first step, 8 blocks of 4 steps");
        simulated += (long)dahl_test_number(e, "simulated_steps");
        epochs++;
    }
    cr_assert_eq(epochs, 2);
    cr_assert_eq(simulated + extrapolated, 512);
    /* every step has a time, the extrapolated ones too, and they add up to the makespan */
    const cJSON *times = cJSON_GetObjectItemCaseSensitive(steady, "iteration_times_s"), *t;
    cr_assert_eq(cJSON_GetArraySize(times), 512);
    double sum = 0;
    cJSON_ArrayForEach(t, times) sum += t->valuedouble;
    cr_assert_lt(fabs(sum - t_steady), 1e-3 * t_steady, "steps sum to %.9f s, makespan %.9f s", sum, t_steady);
    /* fewer simulated steps: fewer tasks counted */
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(full, "tasks"), "per_arch"),
                *ts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(steady, "tasks"), "per_arch");
    cr_assert_lt(dahl_test_number(ts, "cpu"), dahl_test_number(tf, "cpu"));
    cJSON_Delete(full);
    cJSON_Delete(steady);
    /* 8 steps an epoch: too few for the blocks, so every step is simulated, to the bit */
    full = steady_run(a, "samples=64", false);
    steady = steady_run(b, "samples=64", true);
    cr_assert_eq(dahl_test_number(full, "makespan_s"), dahl_test_number(steady, "makespan_s"));
    ss = cJSON_GetObjectItemCaseSensitive(steady, "steady_state");
    cr_assert_eq(dahl_test_number(ss, "extrapolated_steps"), 0);
    cr_assert(strstr(cJSON_GetObjectItemCaseSensitive(ss, "what")->valuestring, "no epoch reached") != NULL);
    cJSON_Delete(full);
    cJSON_Delete(steady);
    dahl_test_remove_tree(dir);
}

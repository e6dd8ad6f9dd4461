/* `dahlsim train` as a user runs it: every bad option value is an input error (exit 2) naming the option or
 * the model file's field; a small synthetic run trains, prints one line per epoch and writes a results.json
 * whose counts follow from the model, batch and epochs; one worker with manual reduction gives the same
 * losses and accuracies run after run. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef DAHL_TEST_HAS_CUDA
#define DAHL_TEST_HAS_CUDA 0
#endif

static struct dahl_test_run run;
static char home_var[128];
static char *env[] = {home_var, "STARPU_SILENT=1", NULL};

/* A fresh STARPU_HOME per test, so perf models and bus calibrations never land in the user's ~/.starpu. */
static void scratch_home(char *dir, size_t size)
{
    snprintf(dir, size, "/tmp/dahlsim-train-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(home_var, sizeof(home_var), "STARPU_HOME=%s", dir);
}

/* Removes a scratch directory made by scratch_home (and what StarPU wrote there). */
static void remove_tree(const char *dir)
{
    cr_assert(strncmp(dir, "/tmp/dahlsim-train-", 19) == 0);
    dahl_test_remove_tree(dir);
}

/* Runs build/dahlsim train with up to 24 arguments (NULL-terminated). */
static void train(const char *const *args)
{
    char *argv[32] = {DAHLSIM_BIN, "train"};
    size_t n = 2;
    for (size_t i = 0; args[i] != NULL && n < 31; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    dahl_test_run(&run, argv, env);
}

/* The run failed as an input error, with one "dahlsim: error:" line containing every string in want. */
static void assert_input_error(const char *what, const char *want1, const char *want2)
{
    dahl_test_assert_input_error(&run, what, want1, want2);
    cr_assert_eq(run.out[0], '\0', "%s wrote to stdout: %s", what, run.out);
}

Test(train, bad_option_values_are_input_errors_naming_the_option)
{
    char home[64];
    scratch_home(home, sizeof(home));
    train((const char *[]){"--batch", "0", NULL});
    assert_input_error("--batch 0", "--batch:", "\"0\"");
    train((const char *[]){"--dataset", "synthetic:0x28x3", NULL});
    assert_input_error("synthetic:0x28x3", "--dataset:", "synthetic:HxWxC");
    train((const char *[]){"--dataset", "bogus", NULL});
    assert_input_error("--dataset bogus", "--dataset:", "\"bogus\"");
    train((const char *[]){"--perfmodel", "bogus", NULL});
    assert_input_error("--perfmodel bogus", "--perfmodel:", "nl-regression");
    train((const char *[]){"--reduction", "tree", NULL});
    assert_input_error("--reduction tree", "--reduction:", "redux or manual");
    train((const char *[]){"--sched", "fastest", NULL});
    assert_input_error("--sched fastest", "--sched:", "lws");
    train((const char *[]){"--momentum", "1", NULL});
    assert_input_error("--momentum 1", "--momentum:", "[0, 1)");
    train((const char *[]){"--lr", "0", NULL});
    assert_input_error("--lr 0", "--lr:", "positive");
    train((const char *[]){"--dataset", "synthetic:12x12x1", "--samples", "4", "--batch", "8", NULL});
    assert_input_error("--batch > --samples", "--batch:", NULL);
    train((const char *[]){"--grain", "0", NULL});
    assert_input_error("--grain 0", "--grain:", "\"0\"");
    train((const char *[]){"--grain", "bogus", NULL});
    assert_input_error("--grain bogus", "--grain:", "or batch");
    train((const char *[]){"--grain", "auto", NULL});
    assert_input_error("--grain auto without --machine", "--grain auto:", "--machine NAME");
    train((const char *[]){"--machine", "roofline-14cpu-1v100", NULL});
    assert_input_error("--machine without --grain auto", "--machine:", "with --grain auto");
    train((const char *[]){"--grain=auto", "--machine", "no-such-machine", NULL});
    assert_input_error("--grain auto on no calibration", "train --grain auto", "no-such-machine");
    train((const char *[]){"--dataset", "synthetic:12x12x1", "--batch", "8", "--grain", "9", NULL});
    assert_input_error("--grain > --batch", "--grain:", "at most 8, got 9");
    train((const char *[]){"--pipeline-depth", "0", NULL});
    assert_input_error("--pipeline-depth 0", "--pipeline-depth:", "\"0\"");
    train((const char *[]){"--pipeline-depth", "65", NULL});
    assert_input_error("--pipeline-depth 65", "--pipeline-depth:", "\"65\"");
    train((const char *[]){"--pipeline-schedule", "gpipe", NULL});
    assert_input_error("--pipeline-schedule gpipe", "--pipeline-schedule:", "fill or 1f1b");
    train((const char *[]){"--mpi-progress-core", "own", NULL});
    assert_input_error("--mpi-progress-core own", "--mpi-progress-core:", "auto, shared, dedicated or busy");
    train((const char *[]){"--dataset", "synthetic:2x2x1", NULL});
    assert_input_error("too small for lenet", "--model lenet:", "too small");
    train((const char *[]){"--model", "deep:0", "--dataset", "synthetic:12x12x1", NULL});
    assert_input_error("deep:0", "--model deep:BLOCKS:", NULL);
    train((const char *[]){"--epochs", NULL});
    assert_input_error("--epochs without value", "--epochs", "needs a value");
    train((const char *[]){"--frobnicate", NULL});
    assert_input_error("unknown option", "--frobnicate", NULL);
    if (!DAHL_TEST_HAS_CUDA) {
        train((const char *[]){"--ngpu", "1", NULL});
        assert_input_error("--ngpu 1", "--ngpu:", "without CUDA");
    }
    rmdir(home);
}

/* Writes text into dir/name and returns the path (static buffer). */
static const char *write_model(const char *dir, const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

Test(train, model_files_are_parsed_strictly)
{
    char home[64];
    scratch_home(home, sizeof(home));
    train((const char *[]){"--model", "missing.json", NULL});
    assert_input_error("missing model", "--model: missing.json", "No such file");

    const char *path = write_model(home, "unknown-key.json",
                                   "{\"layers\": [{\"type\": \"conv\", \"filters\": 6, \"kernel\": 5, \"padding\": 2},\n"
                                   "             {\"type\": \"dense\", \"units\": 10}]}\n");
    train((const char *[]){"--model", path, NULL});
    assert_input_error("unknown layer key", path, "layers[0]: unknown key \"padding\"");

    path = write_model(home, "unknown-type.json", "{\"layers\": [{\"type\": \"softmax\"}]}");
    train((const char *[]){"--model", path, NULL});
    assert_input_error("unknown layer type", path, "layers[0].type");

    path = write_model(home, "unknown-top.json", "{\"layers\": [{\"type\": \"dense\", \"units\": 10}], \"name\": 1}");
    train((const char *[]){"--model", path, NULL});
    assert_input_error("unknown top-level key", path, "unknown key \"name\"");

    path = write_model(home, "bad-value.json", "{\"layers\": [{\"type\": \"dense\", \"units\": 2.5}]}");
    train((const char *[]){"--model", path, NULL});
    assert_input_error("non-integer units", path, "layers[0].units");

    path = write_model(home, "not-json.json", "{\"layers\": [\n{\"type\": \"relu\"},,\n]}");
    train((const char *[]){"--model", path, NULL});
    assert_input_error("invalid JSON", path, "line 2");

    /* well-formed, but the network does not end in 10 classes: dahl_network_desc_check's message */
    path = write_model(home, "seven.json", "{\"layers\": [{\"type\": \"dense\", \"units\": 7}]}");
    train((const char *[]){"--model", path, NULL});
    assert_input_error("wrong class count", path, "expected 10 classes");

    const char *names[] = {"unknown-key.json", "unknown-type.json", "unknown-top.json", "bad-value.json",
                           "not-json.json", "seven.json"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", home, names[i]);
        unlink(p);
    }
    rmdir(home);
}

Test(train, the_simgrid_binary_refuses_to_train)
{
    /* as test_flavours.c runs it: on the probe machine */
    char *sim_env[] = {"STARPU_PERF_MODEL_DIR=" DAHLSIM_SOURCE_DIR "/tests/data/probe-machine",
                       "STARPU_HOSTNAME=probe-2cpu", "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "train", "--dataset", "synthetic:12x12x1",
                    NULL};
    dahl_test_run(&run, argv, sim_env);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "dahlsim: error: train: this is the native training command") != NULL, "%s", run.err);
}

Test(train, only_sim_train_reads_a_point_and_then_no_experiment_option)
{
    char *sim_env[] = {"STARPU_PERF_MODEL_DIR=" DAHLSIM_SOURCE_DIR "/tests/data/probe-machine",
                       "STARPU_HOSTNAME=probe-2cpu", "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *both[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "sim-train", "--batch", "4", "--point",
                    "/nonexistent/point.json", NULL};
    dahl_test_run(&run, both, sim_env);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "dahlsim: error: --batch: the experiment comes from --point /nonexistent/point.json")
                  != NULL, "%s", run.err);
    char *missing[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "sim-train", "--point",
                       "/nonexistent/point.json", NULL};
    dahl_test_run(&run, missing, sim_env);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "dahlsim: error: --point: /nonexistent/point.json: No such file") != NULL, "%s",
              run.err);
    char *native[] = {DAHLSIM_BIN, "train", "--point", "/nonexistent/point.json", NULL};
    dahl_test_run(&run, native, NULL);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "dahlsim: error: --point: /nonexistent/point.json: No such file") != NULL, "%s",
              run.err);
}

static const char *small_run[] = {"--dataset", "synthetic:12x12x1", "--samples", "256", "--test-samples", "64",
                                  "--batch", "8", "--epochs", "3", "--ncpu", "2", "--quiet"};
#define SMALL_RUN_ARGS (sizeof(small_run) / sizeof(small_run[0]))

static int count_epoch_lines(const char *out)
{
    int n = 0;
    for (const char *p = out; (p = strstr(p, "epoch ")) != NULL; p++)
        n += p == out || p[-1] == '\n';
    return n;
}

static cJSON *load_json(const char *path)
{
    cJSON *root = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(root, "%s is not valid JSON", path);
    return root;
}

static double number(const cJSON *o, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(item), "\"%s\" is not a number", key);
    return item->valuedouble;
}

Test(train, a_small_synthetic_run_writes_results)
{
    char home[64];
    scratch_home(home, sizeof(home));
    char out_dir[128];
    snprintf(out_dir, sizeof(out_dir), "%s/out/nested", home);
    const char *args[SMALL_RUN_ARGS + 3];
    memcpy(args, small_run, sizeof(small_run));
    args[SMALL_RUN_ARGS] = "--out";
    args[SMALL_RUN_ARGS + 1] = out_dir;
    args[SMALL_RUN_ARGS + 2] = NULL;
    train(args);
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert_eq(count_epoch_lines(run.out), 3, "%s", run.out);
    cr_assert(strstr(run.out, "epoch 3/3  loss ") != NULL, "%s", run.out);

    char path[256];
    snprintf(path, sizeof(path), "%s/.results.json.tmp", out_dir);
    cr_assert_neq(access(path, F_OK), 0, "the temporary file was left behind");
    snprintf(path, sizeof(path), "%s/results.json", out_dir);
    cJSON *root = load_json(path);
    cr_assert_eq(number(root, "schema"), 1);
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(root, "mode");
    cr_assert(cJSON_IsString(mode) && strcmp(mode->valuestring, "native") == 0);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "scenario")));
    cr_assert_eq(number(root, "iterations"), 96, "256 / 8 steps x 3 epochs");
    cr_assert_eq(number(root, "batch"), 8);
    cr_assert_eq(number(cJSON_GetObjectItemCaseSensitive(root, "workers"), "cpu"), 2);
    const cJSON *image = cJSON_GetObjectItemCaseSensitive(root, "image");
    cr_assert(number(image, "c") == 1 && number(image, "h") == 12 && number(image, "w") == 12);

    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(root, "tasks");
    const cJSON *per_codelet = cJSON_GetObjectItemCaseSensitive(tasks, "per_codelet");
    cr_assert_eq(number(per_codelet, "dahl_conv2d_forward"), 2 * 256 * 3, "training tasks only, not evaluation");
    cr_assert_eq(number(per_codelet, "dahl_softmax_xent"), 256 * 3);
    cr_assert_eq(number(per_codelet, "dahl_sgd_update"), 8 * 96, "w and b of 4 layers per step");
    double submitted = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, per_codelet) submitted += item->valuedouble;
    const cJSON *per_arch = cJSON_GetObjectItemCaseSensitive(tasks, "per_arch");
    cr_assert_eq(number(per_arch, "cuda"), 0);
    cr_assert_geq(number(per_arch, "cpu"), submitted, "executed %g < submitted %g (REDUX adds StarPU's own)",
                  number(per_arch, "cpu"), submitted);

    const cJSON *times = cJSON_GetObjectItemCaseSensitive(root, "iteration_times_s");
    cr_assert_eq(cJSON_GetArraySize(times), 96);
    double sum = 0;
    cJSON_ArrayForEach(item, times)
    {
        cr_assert_gt(item->valuedouble, 0);
        sum += item->valuedouble;
    }
    double makespan = number(root, "makespan_s");
    cr_assert_lt(fabs(sum - makespan), 1e-6 * 96 + 1e-9 * makespan, "sum %g vs makespan %g", sum, makespan);
    cr_assert_lt(fabs(number(root, "samples_per_s") - 96 * 8 / makespan), 1e-6 * number(root, "samples_per_s"));

    const cJSON *epochs = cJSON_GetObjectItemCaseSensitive(root, "epochs_detail");
    cr_assert_eq(cJSON_GetArraySize(epochs), 3);
    const cJSON *last = cJSON_GetArrayItem(epochs, 2);
    cr_assert_eq(number(last, "epoch"), 3);
    cr_assert_gt(number(last, "test_accuracy"), 0.5, "test accuracy %g after 3 epochs", number(last, "test_accuracy"));

    const cJSON *workers = cJSON_GetObjectItemCaseSensitive(root, "workers_detail");
    cr_assert_eq(cJSON_GetArraySize(workers), 2);
    double executed = 0;
    cJSON_ArrayForEach(item, workers)
    {
        cr_assert_geq(number(item, "busy_s"), 0);
        cr_assert_geq(number(item, "idle_s"), 0);
        executed += number(item, "tasks");
    }
    cr_assert_eq(executed, number(per_arch, "cpu"));
    /* The submitting thread: it submitted every training task and copied every training image in, once. */
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(root, "submission");
    cr_assert_eq(number(sub, "tasks"), submitted);
    cr_assert_eq(number(sub, "input_copy_bytes"), 3 * 256 * 12 * 12 * 1 * sizeof(float));
    cr_assert_gt(number(sub, "input_copy_cpu_s"), 0);
    cr_assert_gt(number(sub, "thread_cpu_s"), number(sub, "input_copy_cpu_s"));
    cr_assert_lt(number(sub, "thread_cpu_s"), 2 * makespan + 1, "the thread's CPU time within the run's");
    /* its time waiting for a core: null only where the kernel keeps no schedstat */
    const cJSON *wait = cJSON_GetObjectItemCaseSensitive(sub, "thread_wait_s");
    cr_assert(cJSON_IsNull(wait) || cJSON_IsNumber(wait), "thread_wait_s: a number or null");
    if (access("/proc/thread-self/schedstat", R_OK) == 0) {
        cr_assert(cJSON_IsNumber(wait), "thread_wait_s is null where /proc has schedstat");
        cr_assert_geq(wait->valuedouble, 0);
        cr_assert_lt(wait->valuedouble, makespan + 1, "the thread's wait within the run");
    }
    cr_assert_lt(fabs(number(sub, "us_per_task") -
                      1e6 * (number(sub, "thread_cpu_s") - number(sub, "input_copy_cpu_s")) / submitted),
                 1e-9 * number(sub, "us_per_task"));
    /* The policy's pushes: every task executed was pushed once, by a worker or the submitting thread
     * (evaluation's tasks too), each timed. */
    const cJSON *sched = cJSON_GetObjectItemCaseSensitive(root, "scheduling");
    double pushes = number(sched, "worker_pushes") + number(sched, "other_pushes");
    cr_assert_geq(pushes, number(per_arch, "cpu"), "%g pushes for %g training tasks", pushes, number(per_arch, "cpu"));
    cr_assert_gt(number(sched, "worker_pushes"), 0);
    cr_assert_gt(number(sched, "worker_push_us"), 0);
    cr_assert_lt(number(sched, "worker_push_us"), 100, "slow calls (over 100 us) are left out of the mean");
    cr_assert_leq(number(sched, "worker_slow_pushes"), number(sched, "worker_pushes"));
    /* ... and the workers' own cost per task, between popping a task and asking for the next */
    cr_assert(number(sched, "worker_us_per_task") > 0 && number(sched, "worker_us_per_task") < 1000,
              "worker_us_per_task %g", number(sched, "worker_us_per_task"));
    const cJSON *versions = cJSON_GetObjectItemCaseSensitive(root, "versions");
    const cJSON *starpu = cJSON_GetObjectItemCaseSensitive(versions, "starpu");
    cr_assert(cJSON_IsString(starpu) && strcmp(starpu->valuestring, "1.3.10") == 0);
    /* The commit is the checkout's HEAD as of the build ("-dirty" after it when tracked files differ), not
     * as of the last CMake configure. */
    const cJSON *commit = cJSON_GetObjectItemCaseSensitive(versions, "commit");
    cr_assert(cJSON_IsString(commit));
    char head[64] = "";
    FILE *git = popen("git -C '" DAHLSIM_SOURCE_DIR "' rev-parse HEAD 2>/dev/null", "r");
    if (git != NULL) {
        if (fgets(head, sizeof(head), git) == NULL)
            head[0] = '\0';
        head[strcspn(head, "\n")] = '\0';
        pclose(git);
    }
    if (strlen(head) == 40)
        cr_assert(strncmp(commit->valuestring, head, 40) == 0 &&
                      (commit->valuestring[40] == '\0' || strcmp(commit->valuestring + 40, "-dirty") == 0),
                  "versions.commit \"%s\", HEAD %s (hint: rebuild)", commit->valuestring, head);
    const cJSON *build = cJSON_GetObjectItemCaseSensitive(versions, "starpu_build");
    cr_assert(cJSON_IsString(build) && build->valuestring[0] != '\0' && strcmp(build->valuestring, "unknown") != 0,
              "versions.starpu_build names the StarPU install");
    cr_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(versions, "openblas")));
    cr_assert_gt(number(root, "peak_rss_kib"), 0);
    cJSON_Delete(root);
    remove_tree(home);
}

/* The epoch lines without their time fields (from "  time " on). */
static void strip_times(const char *out, char *dst, size_t size)
{
    size_t used = 0;
    for (const char *line = out; *line != '\0' && used + 1 < size;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol != NULL ? (size_t)(eol - line) : strlen(line);
        const char *time = strstr(line, "  time ");
        if (time != NULL && time < line + len)
            len = (size_t)(time - line);
        used += (size_t)snprintf(dst + used, size - used, "%.*s\n", (int)len, line);
        line += eol != NULL ? (size_t)(eol - line) + 1 : strlen(line);
    }
}

/* --grain auto --machine NAME picks the grain a scenario's "grain": "auto" picks for the same setup on that
 * machine (the simulated run of it says which, in its results.json), trains natively with it and records both
 * the grain and the account of the choice. */
Test(train, grain_auto_trains_with_the_grain_a_scenario_picks)
{
    char home[64];
    scratch_home(home, sizeof(home));
    char out_dir[128], scenario[128], sim_dir[128], path[256];
    snprintf(out_dir, sizeof(out_dir), "%s/native", home);
    snprintf(sim_dir, sizeof(sim_dir), "%s/sim", home);
    snprintf(scenario, sizeof(scenario), "%s/auto.json", home);
    dahl_test_write_file(scenario, "{\"machine\": \"roofline-14cpu-1v100\", \"dataset\": \"synthetic:28x28x3\", "
                                   "\"samples\": 64, \"batch\": 16, \"scheduler\": \"lws\", \"cpus\": 2, "
                                   "\"gpus\": 0, \"grain\": \"auto\"}\n");
    dahl_test_run_args(&run, DAHLSIM_BIN, (const char *[]){"run", scenario, "--out", sim_dir, "--quiet", NULL}, env);
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    snprintf(path, sizeof(path), "%s/results.json", sim_dir);
    cJSON *sim = load_json(path);
    train((const char *[]){"--dataset", "synthetic:28x28x3", "--samples", "64", "--test-samples", "32", "--batch",
                           "16", "--sched", "lws", "--ncpu", "2", "--grain", "auto", "--machine",
                           "roofline-14cpu-1v100", "--quiet", "--out", out_dir, NULL});
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    snprintf(path, sizeof(path), "%s/results.json", out_dir);
    cJSON *native = load_json(path);
    const cJSON *choice = cJSON_GetObjectItemCaseSensitive(native, "grain_choice");
    const cJSON *sim_choice = cJSON_GetObjectItemCaseSensitive(sim, "grain_choice");
    cr_assert(cJSON_IsString(choice) && strncmp(choice->valuestring, "auto: ", 6) == 0);
    cr_assert(cJSON_IsString(sim_choice) && strcmp(choice->valuestring, sim_choice->valuestring) == 0,
              "native \"%s\", simulated \"%s\"", choice->valuestring, cJSON_GetStringValue(sim_choice));
    cr_assert_eq(number(native, "grain"), number(sim, "grain"));
    cr_assert(strstr(choice->valuestring, "of 1, 2, 4, 8, 16;") != NULL, "%s", choice->valuestring);
    cr_assert(strstr(run.err, choice->valuestring) == NULL, "--quiet: the choice is not printed: %s", run.err);
    cJSON_Delete(native);
    cJSON_Delete(sim);
    remove_tree(home);
}

Test(train, one_worker_manual_reduction_reproduces_every_epoch)
{
    char home[64];
    scratch_home(home, sizeof(home));
    const char *args[SMALL_RUN_ARGS + 3];
    memcpy(args, small_run, sizeof(small_run));
    args[11] = "1"; /* --ncpu 1 */
    args[SMALL_RUN_ARGS] = "--reduction";
    args[SMALL_RUN_ARGS + 1] = "manual";
    args[SMALL_RUN_ARGS + 2] = NULL;
    char lines[2][4096];
    for (int i = 0; i < 2; i++) {
        train(args);
        cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
        cr_assert_eq(count_epoch_lines(run.out), 3, "%s", run.out);
        strip_times(run.out, lines[i], sizeof(lines[i]));
    }
    cr_assert_str_eq(lines[0], lines[1]);
    remove_tree(home);
}

/* CIFAR-10's binary version from a directory the user gives: a tiny one written here (20 training and 8 test
 * images of 3x32x32) trains natively with globalavgpool at the head and reports its test accuracy; a missing
 * batch file is an input error naming it. */
Test(train, cifar10_from_a_directory)
{
    char home[64];
    scratch_home(home, sizeof(home));
    const char *names[] = {"data_batch_1.bin", "test_batch.bin"};
    const int counts[] = {20, 8};
    for (int k = 0; k < 2; k++) {
        char path[160];
        snprintf(path, sizeof(path), "%s/%s", home, names[k]);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        for (int r = 0; r < counts[k]; r++) {
            fputc(r % 10, f);
            for (int i = 0; i < 3072; i++)
                fputc((r * 31 + i) % 256, f);
        }
        fclose(f);
    }
    const char *model = write_model(home, "gap.json",
                                    "{\"layers\": [{\"type\": \"conv\", \"filters\": 4, \"kernel\": 3, \"stride\": 2,"
                                    " \"pad\": 1}, {\"type\": \"relu\"}, {\"type\": \"globalavgpool\"},"
                                    " {\"type\": \"dense\", \"units\": 10}]}");
    char dataset[128], out_dir[128];
    snprintf(dataset, sizeof(dataset), "cifar10:%s", home);
    snprintf(out_dir, sizeof(out_dir), "%s/out", home);
    train((const char *[]){"--dataset", dataset, "--model", model, "--samples", "20", "--test-samples", "8",
                           "--batch", "4", "--ncpu", "1", "--quiet", "--out", out_dir, NULL});
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.out, "epoch 1/1  loss ") != NULL && strstr(run.out, "test ") != NULL, "%s", run.out);
    char path[256];
    snprintf(path, sizeof(path), "%s/results.json", out_dir);
    cJSON *root = load_json(path);
    const cJSON *image = cJSON_GetObjectItemCaseSensitive(root, "image");
    cr_assert(number(image, "c") == 3 && number(image, "h") == 32 && number(image, "w") == 32);
    cJSON_Delete(root);
    train((const char *[]){"--dataset", dataset, "--samples", "24", "--test-samples", "8", "--batch", "4", "--quiet",
                           NULL});
    assert_input_error("a missing batch", "data_batch_2.bin", "No such file");
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
    cr_assert_eq(system(cmd), 0);
}

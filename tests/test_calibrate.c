/* `dahlsim calibrate` as a user runs it: bad options and directories are input errors naming what is wrong;
 * a small calibration completes, writes StarPU's files and a manifest, and a simulated run of the covered
 * setup then finds every model calibrated (no "not calibrated" warning) and gives the same simulated times
 * twice; a re-run measures nothing new; a failing re-run leaves the previous calibration byte for byte. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static struct dahl_test_run run;
static char *env[] = {"STARPU_SILENT=1", NULL};

/* A scratch calibration root under /tmp. */
static void scratch_dir(char *dir, size_t size)
{
    snprintf(dir, size, "/tmp/dahlsim-calibrate-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_tree(const char *dir)
{
    cr_assert(strncmp(dir, "/tmp/dahlsim-calibrate-", 23) == 0);
    dahl_test_remove_tree(dir);
}

/* Runs build/dahlsim calibrate with args (NULL-terminated); no run is judged disturbed (the test suite's own
 * load would be: --noisy 0.99), but in calibrate::a_busy_neighbour_is_refused, and StarPU keeps
 * the samples of loaded moments (--max-error 1000: under ctest -j2 its default 50 % refused so many that
 * dahl_sgd_update had 2 samples after 6 runs). */
static void calibrate(const char *const *args)
{
    char *argv[40] = {DAHLSIM_BIN, "calibrate", "--noisy", "0.99", "--max-error", "1000"};
    size_t n = 6;
    for (size_t i = 0; args[i] != NULL && n < 39; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    dahl_test_run(&run, argv, env);
}

static void assert_input_error(const char *what, const char *want)
{
    dahl_test_assert_input_error(&run, what, want, NULL);
}

Test(calibrate, bad_options_and_directories_are_input_errors)
{
    calibrate((const char *[]){"--cover", "synthetic:12x12x1", NULL});
    assert_input_error("no --machine", "--machine NAME is required");
    calibrate((const char *[]){"--machine", "../up", NULL});
    assert_input_error("--machine ../up", "--machine: expected a name");
    calibrate((const char *[]){"--machine", "m", "--cover", "mnist", NULL});
    assert_input_error("--cover mnist", "--cover mnist: expected a dataset first");
    calibrate((const char *[]){"--machine", "m", "--cover", "synthetic:8x8x1,perfmodel=linear", NULL});
    assert_input_error("perfmodel=linear", "perfmodel: expected history, regression or nl-regression");
    calibrate((const char *[]){"--machine", "m", "--cover", "synthetic:8x8x1,batch=3", NULL});
    assert_input_error("batch=3", "unknown part \"batch=3\"");
    calibrate((const char *[]){"--machine", "m", "--cover", "synthetic:8x8x1,grain=0", NULL});
    assert_input_error("grain=0", "--cover grain=N:");
    calibrate((const char *[]){"--machine", "m", "--max-error", "0", NULL});
    assert_input_error("--max-error 0", "--max-error:");
    calibrate((const char *[]){"--machine", "m", "--cover", "synthetic:8x8x1,grain=16", "--batch", "8", NULL});
    assert_input_error("grain=16 > --batch 8", "--cover synthetic:8x8x1,grain=16: expected a grain of at most");
    calibrate((const char *[]){"--machine", "m", "--scenario", "/no/such/scenario.json", NULL});
    assert_input_error("--scenario missing", "--scenario /no/such/scenario.json: No such file");
    char bad[96];
    scratch_dir(bad, sizeof(bad));
    strcat(bad, "/bad.json");
    FILE *f = fopen(bad, "w");
    cr_assert_not_null(f);
    fputs("{\"machine\": \"m\", \"sweep\": {\"dataset\": [\"synthetic:8x8x1\", 3]}}", f);
    fclose(f);
    calibrate((const char *[]){"--machine", "m", "--scenario", bad, NULL});
    assert_input_error("--scenario with a bad sweep", "\"sweep.dataset\": expected a non-empty list of strings");
    *strrchr(bad, '/') = '\0';
    remove_tree(bad);
    calibrate((const char *[]){"--machine", "m", "--schedulers", "lws,fastest", NULL});
    assert_input_error("--schedulers with an unknown policy", "--schedulers: \"fastest\": expected");
    calibrate((const char *[]){"--machine", "m", "--schedulers", "lws,", NULL});
    assert_input_error("--schedulers ending in a comma", "--schedulers: expected none or policies separated");
    calibrate((const char *[]){"--machine", "m", "--sched-steps", "0", NULL});
    assert_input_error("--sched-steps 0", "--sched-steps");
    calibrate((const char *[]){"--machine", "m", "--max-rsd", "lots", NULL});
    assert_input_error("--max-rsd lots", "--max-rsd");
    calibrate((const char *[]){"--machine", "m", "--dir", "/proc/no-such-dahlsim-dir", NULL});
    assert_input_error("unwritable --dir", "cannot create the calibration directory /proc/no-such-dahlsim-dir");
    char dir[64];
    scratch_dir(dir, sizeof(dir));
    calibrate((const char *[]){"--machine", "nowhere", "--dir", dir, "--report", NULL});
    assert_input_error("--report of an unknown machine", "no such calibration");
    cr_assert(strstr(run.err, "hint: calibrate it first") != NULL, "%s", run.err);
    remove_tree(dir);
}

Test(calibrate, the_simgrid_binary_refuses_to_calibrate)
{
    char *sim_env[] = {"STARPU_PERF_MODEL_DIR=" DAHLSIM_SOURCE_DIR "/tests/data/probe-machine",
                       "STARPU_HOSTNAME=probe-2cpu", "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "calibrate", "--machine", "x", NULL};
    dahl_test_run(&run, argv, sim_env);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "calibrate: measuring needs the native build") != NULL, "%s", run.err);
}

static char *read_all(const char *path)
{
    return strdup(dahl_test_read_file(path));
}

/* Runs sim-train of the covered setup on the calibration and returns its makespan; asserts that StarPU
 * found every perf model calibrated. */
static double simulate(const char *dir, const char *out)
{
    char models[256];
    snprintf(models, sizeof(models), "STARPU_PERF_MODEL_DIR=%s/test-local/sampling", dir);
    char *sim_env[] = {models, "STARPU_HOSTNAME=test-local", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "sim-train", "--dataset",
                    "synthetic:12x12x1", "--samples", "64", "--batch", "8", "--epochs", "2", "--quiet", "--out",
                    (char *)out, NULL};
    dahl_test_run(&run, argv, sim_env);
    cr_assert_eq(run.status, 0, "sim-train: exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "not calibrated") == NULL, "the calibration is incomplete: %s", run.err);
    char path[256];
    snprintf(path, sizeof(path), "%s/results.json", out);
    char *text = read_all(path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root);
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(root, "mode");
    cr_assert(cJSON_IsString(mode) && strcmp(mode->valuestring, "simulated") == 0);
    const cJSON *makespan = cJSON_GetObjectItemCaseSensitive(root, "makespan_s");
    cr_assert(cJSON_IsNumber(makespan) && makespan->valuedouble > 0);
    double value = makespan->valuedouble;
    cJSON_Delete(root);
    return value;
}

static bool has_tmp_dirs(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        found |= strstr(e->d_name, ".tmp-") != NULL || strstr(e->d_name, ".old-") != NULL;
    closedir(d);
    return found;
}

Test(calibrate, a_small_calibration_serves_simulation_and_survives_a_failed_rerun)
{
    char dir[64];
    scratch_dir(dir, sizeof(dir));
    const char *args[] = {"--machine", "test-local", "--dir", dir, "--cover", "synthetic:12x12x1",
                          "--schedulers", "lws,random", "--sched-steps", "2", "--quiet", NULL};
    calibrate(args);
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);

    char path[256];
    snprintf(path, sizeof(path), "%s/test-local/manifest.json", dir);
    char *manifest = read_all(path);
    cJSON *root = cJSON_Parse(manifest);
    cr_assert_not_null(root);
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(root, "source");
    cr_assert(cJSON_IsString(source) && strcmp(source->valuestring, "measured") == 0);
    const cJSON *covered = cJSON_GetObjectItemCaseSensitive(root, "covered");
    cr_assert_eq(cJSON_GetArraySize(covered), 1);
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(root, "models");
    cr_assert_gt(cJSON_GetArraySize(models), 10, "too few model entries");
    const cJSON *m;
    cJSON_ArrayForEach(m, models)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "samples");
        char *entry = cJSON_PrintUnformatted(m);
        cr_assert(cJSON_IsNumber(n) && n->valuedouble >= 10, "an entry with fewer than 10 samples: %s",
                  entry != NULL ? entry : "?");
        free(entry);
    }
    /* The submitting thread's cost, from the native runs' results.json: over all shapes and per shape */
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(root, "submission");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(sub, "us_per_task");
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sub, "per_shape"), "12x12x1"), "runs");
    cr_assert(cJSON_IsNumber(us) && us->valuedouble > 0 && us->valuedouble < 1000, "submission: %s", manifest);
    cr_assert(cJSON_IsNumber(runs) && runs->valuedouble >= 1, "submission: %s", manifest);
    cr_assert_gt(cJSON_GetObjectItemCaseSensitive(sub, "input_copy_bytes_per_s")->valuedouble, 0);
    /* ... and per CPU worker count, the share of a core the thread had (all of one with a core to itself) */
    const cJSON *per_workers = cJSON_GetObjectItemCaseSensitive(sub, "per_workers");
    cr_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(per_workers, "1")), "submission: %s", manifest);
    const cJSON *w;
    cJSON_ArrayForEach(w, per_workers)
    {
        if (!cJSON_IsObject(w))
            continue;
        double share = dahl_test_number(w, "core_share");
        cr_assert(share > 0 && share <= 1, "per_workers.%s.core_share %g", w->string, share);
        cr_assert_gt(dahl_test_number(w, "cpu_us_per_task"), 0);
        cr_assert_geq(dahl_test_number(w, "waiting_us_per_task"), 0);
    }
    char *first_sub = cJSON_PrintUnformatted(sub);
    /* The policies' cost per push, for all cores' CPU workers and for one, each timed natively */
    const cJSON *push = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "scheduling"), "push_us");
    char all_key[32];
    snprintf(all_key, sizeof(all_key), "%ldcpu", sysconf(_SC_NPROCESSORS_ONLN));
    const char *keys[] = {"1cpu", all_key};
    for (size_t k = 0; k < 2; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(push, keys[k]), "lws");
        cr_assert(cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 100, "scheduling.push_us.%s.lws: %s",
                  keys[k], manifest);
    }
    cr_assert_eq(cJSON_GetArraySize(push), sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1, "%s", manifest);
    /* ... and the workers' cost per task: native, what the simulation still charges on its own, and the
     * difference it is charged */
    const cJSON *worker = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "scheduling"), "worker_us");
    for (size_t k = 0; k < 2; k++) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(worker, keys[k]), "lws");
        double native = cJSON_GetObjectItemCaseSensitive(w, "native")->valuedouble;
        double rest = cJSON_GetObjectItemCaseSensitive(w, "simulated_rest")->valuedouble;
        double charge = cJSON_GetObjectItemCaseSensitive(w, "charge")->valuedouble;
        cr_assert(native > 0 && rest > 0 && charge >= 0, "scheduling.worker_us.%s.lws: %s", keys[k], manifest);
        cr_assert_float_eq(charge, native > rest ? native - rest : 0, 1e-9, "%s", manifest);
    }
    /* random has no pop_task: its pushes are timed, its workers' cost per task is not */
    for (size_t k = 0; k < 2; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(push, keys[k]), "random");
        cr_assert(cJSON_IsNumber(v) && v->valuedouble > 0, "scheduling.push_us.%s.random: %s", keys[k], manifest);
        cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(worker, keys[k]), "random"),
                       "%s", manifest);
    }
    char *first_push = cJSON_PrintUnformatted(push);
    /* The kernels again with one CPU worker, where there is more than one core, which simulations with one
     * worker read (test_kernel_models) */
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(root, "one_worker");
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
        cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(one, "sampling")), "sampling-1cpu");
        cr_assert_eq(cJSON_GetObjectItemCaseSensitive(one, "all_cpus")->valuedouble, sysconf(_SC_NPROCESSORS_ONLN));
        cr_assert_gt(cJSON_GetObjectItemCaseSensitive(one, "entries")->valuedouble, 10, "%s", manifest);
        const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(one, "mean_ratio"),
                                                              "median");
        cr_assert(cJSON_IsNumber(ratio) && ratio->valuedouble > 0, "%s", manifest);
        snprintf(path, sizeof(path), "%s/test-local/sampling-1cpu/codelets/45/dahl_conv2d_forward.test-local", dir);
        cr_assert_eq(access(path, R_OK), 0, "%s missing", path);
    } else {
        cr_assert_null(one, "one core: nothing to measure with one worker");
    }
    cJSON_Delete(root);
    const char *files[] = {"sampling/bus/test-local.platform.v4.xml", "sampling/bus/test-local.bandwidth",
                           "sampling/bus/test-local.latency", "sampling/codelets/45/dahl_conv2d_forward.test-local",
                           "sampling/codelets/45/dahl_sgd_update.test-local"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/test-local/%s", dir, files[i]);
        cr_assert_eq(access(path, R_OK), 0, "%s missing", path);
    }

    /* nothing of the calibration's own runs is left in it */
    const char *absent[] = {"stderr.log", "run"};
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
        snprintf(path, sizeof(path), "%s/test-local/%s", dir, absent[i]);
        cr_assert_neq(access(path, F_OK), 0, "%s left in the calibration", path);
    }

    char out1[128], out2[128];
    snprintf(out1, sizeof(out1), "%s/run1", dir);
    snprintf(out2, sizeof(out2), "%s/run2", dir);
    double t1 = simulate(dir, out1), t2 = simulate(dir, out2);
    cr_assert_eq(t1, t2, "simulated makespans differ: %.9f vs %.9f", t1, t2);

    /* A re-run measures nothing: the simulated check finds the setup calibrated, and the policies it times
     * were timed. */
    calibrate((const char *[]){"--machine", "test-local", "--dir", dir, "--cover", "synthetic:12x12x1",
                               "--schedulers", "random,lws", NULL});
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "already calibrated") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "measuring") == NULL, "%s", run.err);
    cr_assert(strstr(run.err, "scheduling policy") == NULL, "%s", run.err);
    /* So does one for a scenario that uses that setup (its sweep of schedulers and batches adds no shape). */
    calibrate((const char *[]){"--machine", "test-local", "--dir", dir, "--scenario",
                               DAHLSIM_SOURCE_DIR "/tests/data/scenarios/tiny-sweep.json", "--schedulers", "none",
                               NULL});
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "[1/1] synthetic:12x12x1") != NULL && strstr(run.err, "already calibrated") != NULL,
              "%s", run.err);
    free(manifest);
    snprintf(path, sizeof(path), "%s/test-local/manifest.json", dir);
    manifest = read_all(path);
    /* ... and keeps the submission cost measured before */
    root = cJSON_Parse(manifest);
    char *kept_sub = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, "submission"));
    cr_assert_str_eq(kept_sub, first_sub, "the re-run that measured nothing changed the submission cost");
    free(kept_sub);
    free(first_sub);
    char *kept_push = cJSON_PrintUnformatted(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "scheduling"), "push_us"));
    cr_assert_str_eq(kept_push, first_push, "the re-runs changed the policies' push costs");
    free(kept_push);
    free(first_push);
    cJSON_Delete(root);

    /* A re-run that fails (its model file does not exist) leaves the calibration as it was. */
    calibrate((const char *[]){"--machine", "test-local", "--dir", dir, "--force", "--cover",
                               "synthetic:12x12x1,model=/no/such/model.json", NULL});
    cr_assert_neq(run.status, 0, "a failing calibration exited 0: %s", run.err);
    cr_assert(strstr(run.err, "/no/such/model.json") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "is unchanged") != NULL, "%s", run.err);
    char *after = read_all(path);
    cr_assert_str_eq(after, manifest, "the manifest changed");
    free(after);
    free(manifest);
    cr_assert(!has_tmp_dirs(dir), "temporary directories left in %s", dir);
    snprintf(path, sizeof(path), "%s/test-local/sampling/codelets/45/dahl_conv2d_forward.test-local", dir);
    cr_assert_eq(access(path, R_OK), 0, "%s lost", path);

    /* --report reads it back. */
    calibrate((const char *[]){"--machine", "test-local", "--dir", dir, "--report", NULL});
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.out, "dahl_conv2d_forward") != NULL && strstr(run.out, "flagged") != NULL, "%s", run.out);
    remove_tree(dir);
}

/* Calibrates machine under dir for the tiny cover synthetic:12x12x1, timing no policy, with all cores only
 * (--no-one-worker), --reruns reruns, --noisy noisy and, unless NULL, DAHLSIM_FAULT=fault; the outcome in
 * run. */
static void calibrate_tiny(const char *dir, const char *machine, const char *fault, const char *reruns,
                           const char *noisy)
{
    char fault_var[64];
    snprintf(fault_var, sizeof(fault_var), "DAHLSIM_FAULT=%s", fault != NULL ? fault : "");
    char *argv[] = {DAHLSIM_BIN, "calibrate", "--machine", (char *)machine, "--dir", (char *)dir, "--cover",
                    "synthetic:12x12x1", "--schedulers", "none", "--reruns", (char *)reruns, "--noisy", (char *)noisy,
                    "--no-one-worker", NULL};
    char *env[] = {"ASAN_OPTIONS=detect_leaks=0", fault != NULL ? fault_var : NULL, NULL};
    dahl_test_run(&run, argv, env);
}

/* machine_spread of the manifest under dir/machine, parsed (cJSON_Delete the root *m). */
static const cJSON *spread_of(const char *dir, const char *machine, cJSON **m)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/%s/manifest.json", dir, machine);
    *m = cJSON_Parse(dahl_test_read_file(path));
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(*m, "machine_spread");
    cr_assert(cJSON_IsObject(s), "%s: no machine_spread", path);
    return s;
}

/* A machine that probes slower after each run than before it (DAHLSIM_FAULT=slow-probe halves every probe
 * after the first): a speed spell of its own, not interference. The runs are kept, and the manifest's
 * machine_spread records the spell: every run's probe is the slowed one, half the fastest. */
Test(calibrate, a_slow_spell_is_recorded_not_refused)
{
    char dir[64];
    scratch_dir(dir, sizeof(dir));
    calibrate_tiny(dir, "spell", "slow-probe", "1", "0.99");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "disturbed") == NULL, "%s", run.err);
    cJSON *m;
    const cJSON *s = spread_of(dir, "spell", &m);
    const cJSON *probe = cJSON_GetObjectItemCaseSensitive(s, "probe_gflops");
    double lo = dahl_test_number(probe, "min"), hi = dahl_test_number(probe, "max");
    cr_assert(lo > 0 && lo <= dahl_test_number(probe, "median") && dahl_test_number(probe, "median") <= hi);
    cr_assert_geq(dahl_test_number(s, "runs"), 2); /* a measuring run and the plain ones */
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(s, "calibrated_in");
    cr_assert_geq(dahl_test_number(in, "runs"), 1);
    cr_assert(dahl_test_number(in, "probe_gflops") >= lo && dahl_test_number(in, "probe_gflops") <= hi);
    const cJSON *load = cJSON_GetObjectItemCaseSensitive(s, "interference_share");
    cr_assert(dahl_test_number(load, "min") >= 0 && dahl_test_number(load, "max") <= 1.5);
    cJSON_Delete(m);
    remove_tree(dir);
}

/* Cores placed apart after the first probe (DAHLSIM_FAULT=far-cores: every round trip after the first ten
 * times as long): a spell of the machine's own too. Kept, and recorded: every kept run had its cores apart,
 * and the runtime's costs say in which spell they were measured. (Two cores or more.) */
Test(calibrate, cores_placed_apart_are_a_spell_recorded)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        cr_skip_test("one core: no round trip between cores");
    char dir[64];
    scratch_dir(dir, sizeof(dir));
    calibrate_tiny(dir, "apart", "far-cores", "1", "0.99");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cJSON *m;
    const cJSON *s = spread_of(dir, "apart", &m);
    cr_assert_eq(dahl_test_number(s, "cores_apart_share"), 1);
    cr_assert_eq(dahl_test_number(cJSON_GetObjectItemCaseSensitive(s, "calibrated_in"), "cores_apart_share"), 1);
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "submission"), "per_shape"), "12x12x1");
    const cJSON *spells = cJSON_GetObjectItemCaseSensitive(shape, "us_per_task_spells");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(spells, "close"), "a close spell with every run apart");
    cr_assert_eq(dahl_test_number(cJSON_GetObjectItemCaseSensitive(spells, "apart"), "runs"), 3);
    cJSON_Delete(m);
    remove_tree(dir);
}

/* A CPU-bound neighbour on every core while calibrate measures: other processes' CPU time, against the run's
 * own, says the machine is disturbed; the runs are dropped, measured again --reruns times, then calibrate
 * stops with exit 2 and one line saying what took the cores, and stores nothing. */
Test(calibrate, a_busy_neighbour_is_refused)
{
    char dir[64];
    scratch_dir(dir, sizeof(dir));
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t spin[64];
    int nspin = (int)(cores < 64 ? cores : 64);
    for (int k = 0; k < nspin; k++) {
        spin[k] = fork();
        cr_assert_geq(spin[k], 0);
        if (spin[k] == 0) {
            alarm(120); /* never outlives the test */
            for (volatile unsigned long x = 0;; x++)
                ;
        }
    }
    calibrate_tiny(dir, "busy", NULL, "1", "0.1");
    for (int k = 0; k < nspin; k++) {
        kill(spin[k], SIGKILL);
        waitpid(spin[k], NULL, 0);
    }
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "run 1 was disturbed (other processes took ") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "the machine was disturbed: 2 run(s) in a row shared over 10 % of the cores' time "
                              "with other work") != NULL, "%s", run.err);
    char path[128];
    snprintf(path, sizeof(path), "%s/busy", dir);
    cr_assert_neq(access(path, F_OK), 0, "a disturbed calibration was stored in %s", path);
    remove_tree(dir);
}

/* The perf models measured quietly, then every plain run noisy (DAHLSIM_FAULT=noisy-plain-runs: a machine
 * loaded after the models were measured): the models are stored all the same, without the runtime's costs,
 * and calibrate fails saying so; a later calibrate measures only those costs. */
Test(calibrate, noisy_plain_runs_keep_the_perf_models_and_fail)
{
    char dir[64];
    scratch_dir(dir, sizeof(dir));
    calibrate_tiny(dir, "plain", "noisy-plain-runs", "0", "0.99");
    cr_assert_eq(run.status, 1, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "synthetic:12x12x1, plain run 1: the machine was disturbed: 1 run(s) in a row") != NULL,
              "%s", run.err);
    cr_assert(strstr(run.err, "with its perf models, but without the runtime's costs") != NULL, "%s", run.err);
    char path[160];
    snprintf(path, sizeof(path), "%s/plain/manifest.json", dir);
    cJSON *m = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(m, "submission"), "%s: a submission cost", path);
    cr_assert(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "models")) > 0, "%s: no models", path);
    cJSON_Delete(m);

    /* quiet again: only the submitting thread's cost is measured, the models stay */
    calibrate_tiny(dir, "plain", NULL, "0", "0.99");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "already calibrated") != NULL, "%s", run.err);
    m = cJSON_Parse(dahl_test_read_file(path));
    cr_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(m, "submission")), "%s: no submission", path);
    /* no perf-model run this time: the spell the models were measured in is still the first calibrate's */
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "machine_spread"),
                                                       "calibrated_in");
    cr_assert_geq(dahl_test_number(in, "runs"), 1, "%s: calibrated_in lost", path);
    cr_assert_gt(dahl_test_number(in, "probe_gflops"), 0);
    cJSON_Delete(m);
}

/* A simulator that cannot start (here a dahlsim-sim beside a copy of dahlsim that fails as a missing library
 * does) is not a model short of measurements: calibrate stops at its second identical failure, naming it,
 * instead of measuring every round first. */
Test(calibrate, a_simulator_that_cannot_start_stops_calibrate_early)
{
    char dir[64], path[128], cmd[512];
    scratch_dir(dir, sizeof(dir));
    snprintf(cmd, sizeof(cmd),
             "cp '%s' '%s/dahlsim' && printf '#!/bin/sh\\necho \"dahlsim-sim: symbol lookup error: undefined symbol: "
             "main\" >&2\\nexit 127\\n' >'%s/dahlsim-sim' && chmod 755 '%s/dahlsim-sim'",
             DAHLSIM_BIN, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(path, sizeof(path), "%s/dahlsim", dir);
    char cal[96];
    snprintf(cal, sizeof(cal), "%s/cal", dir);
    char *argv[] = {path, "calibrate", "--noisy", "0.99", "--max-error", "1000", "--machine", "broken", "--dir", cal,
                    "--cover", "synthetic:12x12x1", "--schedulers", "none", "--steps", "4", NULL};
    char *broken_env[] = {"STARPU_SILENT=1", "DAHLSIM_HOME=" DAHLSIM_SOURCE_DIR, NULL};
    dahl_test_run(&run, argv, broken_env);
    cr_assert_eq(run.status, 1, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "the simulated check failed (exit 127: dahlsim-sim: symbol lookup error") != NULL, "%s",
              run.err);
    cr_assert(strstr(run.err, "dahlsim: error: calibrate: synthetic:12x12x1 model=lenet perfmodel=history: the "
                              "simulated check fails on its own (exit 127): dahlsim-sim: symbol lookup error: "
                              "undefined symbol: main\n") != NULL,
              "%s", run.err);
    cr_assert(strstr(run.err, "run 3/6") == NULL, "measured on after the simulator failed twice: %s", run.err);
    snprintf(path, sizeof(path), "%s/broken", cal);
    cr_assert_neq(access(path, F_OK), 0, "a calibration was stored in %s", path);
    remove_tree(dir);
}

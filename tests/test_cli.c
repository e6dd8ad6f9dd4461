/* The command line as a user meets it: --help, a wrong command, the commands not built yet, bad option
 * values. Each check runs build/dahlsim and asserts its exit code and what it printed where. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct dahl_test_run run;

static void dahlsim(char *a1, char *a2, char *a3)
{
    char *argv[] = {DAHLSIM_BIN, a1, a2, a3, NULL};
    dahl_test_run(&run, argv, NULL);
}

Test(cli, help_lists_every_command_on_stdout)
{
    dahlsim("--help", NULL, NULL);
    cr_assert_eq(run.status, 0);
    const char *commands[] = {"train", "calibrate", "demo", "run", "sweep", "validate", "check", "doctor"};
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        cr_assert(strstr(run.out, commands[i]) != NULL, "--help does not list %s", commands[i]);
    cr_assert_eq(run.err[0], '\0', "--help wrote to stderr: %s", run.err);
    cr_assert(strstr(run.out, "engine-probe") == NULL, "internal command listed");
}

/* dahlsim demo on the tiny fixture without calibrating (its calibration stands for this machine's, given a
 * measured spread): the scenario simulated on it and on the scenario's machine, trained natively, and the
 * figures printed each with its machine, the prediction with its interval and the verdict on the measured
 * median. Bad options are usage errors. */
Test(cli, demo_prints_predicted_against_measured)
{
    char home[] = "/tmp/dahlsim-demo-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    dahl_test_machine_copy(DAHLSIM_SOURCE_DIR "/tests/data/calibration", "tiny-2cpu", home);
    char machine[96], env_home[96], out[96];
    snprintf(machine, sizeof(machine), "%s/calibration/tiny-2cpu", home);
    snprintf(env_home, sizeof(env_home), "DAHLSIM_HOME=%s", home);
    snprintf(out, sizeof(out), "%s/demo", home);
    dahl_test_manifest_add(machine, "machine_spread",
                           "{\"runs\": 10, \"probe_gflops\": {\"min\": 50, \"p10\": 64, \"median\": 80, "
                           "\"p90\": 100, \"max\": 110}, \"core_latency_shortest_ns\": 100, \"calibrated_in\": "
                           "{\"runs\": 4, \"probe_gflops\": 80}}");
    char *env[] = {env_home, "ASAN_OPTIONS=detect_leaks=0", NULL};
    const char *args[] = {"demo", "--scenario", DAHLSIM_SOURCE_DIR "/tests/data/scenarios/tiny.json", "--machine",
                          "tiny-2cpu", "--no-calibrate", "--runs", "1", "--out", out, NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, args, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.out, "predicted for this machine (calibration tiny-2cpu):") != NULL, "%s", run.out);
    cr_assert(strstr(run.out, "predicted by the scenario's machine (calibration tiny-2cpu):") != NULL, "%s", run.out);
    cr_assert(strstr(run.out, "measured on this machine (median of 1 native runs, range):") != NULL, "%s", run.out);
    cr_assert(strstr(run.out, "machine probe: ") != NULL &&
                  strstr(run.out, " where the perf models were measured (64.0 to 100.0 over the calibration)") != NULL,
              "%s", run.out);
    /* the placement the native runs met, where there are two cores to place */
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
        cr_assert(strstr(run.out, " ns after the native runs, 100 ns the shortest over the calibration") != NULL, "%s",
                  run.out);
    cr_assert(strstr(run.out, "the measured median is inside the interval") != NULL ||
                  strstr(run.out, "the measured median is outside the interval") != NULL, "%s", run.out);
    char path[160];
    snprintf(path, sizeof(path), "%s/native-1/results.json", out);
    cJSON *r = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "mode")), "native");
    cJSON_Delete(r);
    /* a scenario that is not there: run's own error line, and exit 2 */
    const char *missing[] = {"demo", "--scenario", "/nonexistent/scenario.json", "--no-calibrate", "--out", out, NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, missing, env);
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "dahlsim: error: /nonexistent/scenario.json: No such file or directory") != NULL, "%s",
              run.err);
    const char *zero[] = {"demo", "--runs", "0", NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, zero, env);
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "--runs") != NULL, "%s", run.err);
    dahl_test_remove_tree(home);
}

Test(cli, no_command_is_a_usage_error)
{
    dahlsim(NULL, NULL, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "usage: dahlsim") != NULL);
}

Test(cli, unknown_command_exits_2_with_usage_on_stderr)
{
    dahlsim("simulate-everything", NULL, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "dahlsim: error: unknown command \"simulate-everything\"") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "usage: dahlsim") != NULL);
    cr_assert_eq(run.out[0], '\0');
}

Test(cli, validate_without_machine_is_a_usage_error)
{
    dahlsim("validate", NULL, NULL);
    cr_assert_eq(run.status, 2, "validate exited %d", run.status);
    cr_assert(strstr(run.err, "validate: --machine NAME is required") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "hint: dahlsim calibrate --machine NAME first") != NULL, "%s", run.err);
    dahlsim("validate", "--machine", "no-such-machine");
    cr_assert_eq(run.status, 2, "validate --machine no-such-machine exited %d", run.status);
    cr_assert(strstr(run.err, "validate: --machine no-such-machine: no calibration at") != NULL, "%s", run.err);
}

/* Member key of o, which must be a string (the test fails otherwise). */
static const char *test_string(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsString(v), "no string \"%s\"", key);
    return v->valuestring;
}

/* Member key of o, which must be a boolean. */
static bool test_bool(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsBool(v), "no boolean \"%s\"", key);
    return cJSON_IsTrue(v);
}

/* The row of fidelity.json's setups named name. */
static const cJSON *setup_row(const cJSON *report, const char *name)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "setups"))
        if (strcmp(test_string(row, "setup"), name) == 0)
            return row;
    cr_assert_fail("no setup \"%s\" in fidelity.json", name);
    return NULL;
}

/* The kind of pair of setups rows a, b by validate's rule, from the rows' fields: "policy" (same dataset and
 * batch, anything else differs), "batch-workers" (same dataset and scheduler, batch or workers differ), or
 * NULL (not compared); never across nodes or GPUs. */
static const char *rows_pair_kind(const cJSON *a, const cJSON *b)
{
    const char *rest[] = {"cpus", "pipeline_depth", "grain", "samples"};
    bool same_sched = strcmp(test_string(a, "scheduler"), test_string(b, "scheduler")) == 0, same_rest = true;
    for (size_t k = 0; k < sizeof(rest) / sizeof(rest[0]); k++)
        same_rest = same_rest && dahl_test_number(a, rest[k]) == dahl_test_number(b, rest[k]);
    if (strcmp(test_string(a, "dataset"), test_string(b, "dataset")) != 0 ||
        dahl_test_number(a, "nodes") != dahl_test_number(b, "nodes") ||
        dahl_test_number(a, "gpus") != dahl_test_number(b, "gpus"))
        return NULL;
    if (dahl_test_number(a, "batch") == dahl_test_number(b, "batch"))
        return same_sched && same_rest ? NULL : "policy";
    return same_sched ? "batch-workers" : NULL;
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Run r of setups row `row`: its makespan, and whether it was noisy. */
static double row_run(const cJSON *row, int r, bool *noisy)
{
    const cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(row, "runs"), r);
    *noisy = test_bool(run, "noisy");
    return dahl_test_number(run, "makespan_s");
}

/* The native ratio of rows a over b from their runs: the median over the rounds where neither is noisy (over
 * all of them where there is none) of a's time per sample over b's. */
static double rows_native_ratio(const cJSON *a, const cJSON *b)
{
    int rounds = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "runs")), quiet = 0, n = 0;
    double ratio[32], ta[32], tb[32];
    bool q[32], na, nb;
    cr_assert(rounds > 0 && rounds <= 32);
    for (int r = 0; r < rounds; r++) {
        ta[r] = row_run(a, r, &na);
        tb[r] = row_run(b, r, &nb);
        q[r] = !na && !nb;
        quiet += q[r];
    }
    for (int r = 0; r < rounds; r++)
        if (quiet == 0 || q[r])
            ratio[n++] = ta[r] / tb[r];
    qsort(ratio, (size_t)n, sizeof(ratio[0]), compare_doubles);
    double median = n % 2 == 1 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
    return median * dahl_test_number(b, "samples") / dahl_test_number(a, "samples"); /* per sample */
}

static int sign_of(double d)
{
    return (d > 0) - (d < 0);
}

/* What the summary figures of fidelity.json's pairs should be, counted from them. */
struct pairs_count {
    int distinct, ordered, concordant, discordant, tied_native, tied_simulated;
    double max_abs_error;
};

/* Pair p of fidelity.json against the setups rows it names: its kind, ratios, error and verdicts as the
 * rows' figures give them; counted into c. */
static void assert_pair(const cJSON *report, const cJSON *p, struct pairs_count *c)
{
    const cJSON *a = setup_row(report, test_string(p, "a")), *b = setup_row(report, test_string(p, "b"));
    const char *kind = rows_pair_kind(a, b);
    cr_assert(kind != NULL && strcmp(test_string(p, "kind"), kind) == 0, "%s / %s: kind %s, by the rule %s",
              test_string(p, "a"), test_string(p, "b"), test_string(p, "kind"), kind != NULL ? kind : "none");
    double native = dahl_test_number(p, "native_ratio"), simulated = dahl_test_number(p, "simulated_ratio");
    double error = dahl_test_number(p, "paired_error");
    /* per sample: a choice is about throughput */
    double na = dahl_test_number(a, "samples"), nb = dahl_test_number(b, "samples");
    double med_a = dahl_test_number(a, "native_median_s") / na, med_b = dahl_test_number(b, "native_median_s") / nb;
    double sim_a = dahl_test_number(a, "simulated_s") / na, sim_b = dahl_test_number(b, "simulated_s") / nb;
    cr_assert_float_eq(error, simulated / native - 1, 1e-12);
    cr_assert_float_eq(simulated, sim_a / sim_b, 1e-12);
    cr_assert_float_eq(native, rows_native_ratio(a, b), 1e-12);
    bool distinct = test_bool(p, "distinct"), ordered = test_bool(p, "ordered");
    int native_sign = sign_of(med_a - med_b), simulated_sign = sign_of(sim_a - sim_b);
    cr_assert_eq(distinct, fabs(med_a / med_b - 1) > 0.05);
    cr_assert_eq(ordered, native_sign == simulated_sign);
    c->distinct += distinct;
    c->ordered += distinct && ordered;
    c->concordant += native_sign * simulated_sign > 0;
    c->discordant += native_sign * simulated_sign < 0;
    c->tied_native += native_sign == 0;
    c->tied_simulated += simulated_sign == 0;
    c->max_abs_error = fmax(c->max_abs_error, fabs(error));
}

/* fidelity.json's pairs against its setups rows: one per pair of rows the rule compares, each consistent with
 * the rows (assert_pair), and the summary figures consistent with the pairs (null without one). Returns the
 * number of pairs. */
static int assert_pairs_consistent(const cJSON *report)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(report, "setups");
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(report, "pairs"), *p;
    cr_assert(cJSON_IsArray(pairs), "fidelity.json has no \"pairs\" list");
    int expected = 0, nrows = cJSON_GetArraySize(rows);
    for (int i = 0; i < nrows; i++)
        for (int j = i + 1; j < nrows; j++)
            expected += rows_pair_kind(cJSON_GetArrayItem(rows, i), cJSON_GetArrayItem(rows, j)) != NULL;
    cr_assert_eq(cJSON_GetArraySize(pairs), expected);
    struct pairs_count c = {0};
    cJSON_ArrayForEach(p, pairs) assert_pair(report, p, &c);
    cr_assert_eq(dahl_test_number(report, "distinct_pairs"), c.distinct);
    cr_assert_eq(dahl_test_number(report, "distinct_pairs_ordered"), c.ordered);
    cr_assert_leq(c.ordered, c.distinct);
    const char *figures[] = {"paired_median_abs_error", "paired_max_abs_error", "kendall_tau"};
    for (size_t k = 0; expected == 0 && k < sizeof(figures) / sizeof(figures[0]); k++)
        cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(report, figures[k])), "%s: not null", figures[k]);
    if (expected == 0)
        return 0;
    cr_assert_float_eq(dahl_test_number(report, "paired_max_abs_error"), c.max_abs_error, 1e-12);
    double median = dahl_test_number(report, "paired_median_abs_error");
    cr_assert(median >= 0 && median <= c.max_abs_error, "median |error| %g", median);
    double denominator = sqrt((double)(expected - c.tied_native) * (expected - c.tied_simulated));
    if (denominator > 0)
        cr_assert_float_eq(dahl_test_number(report, "kendall_tau"), (c.concordant - c.discordant) / denominator,
                           1e-12);
    else
        cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(report, "kendall_tau")));
    return expected;
}

/* validate's options, and a calibration measured on another machine (its manifest's node names another CPU):
 * one-line errors, exit 2; --force goes past the machine check. */
Test(cli, validate_refuses_bad_options_and_another_machine)
{
    const char *bad[][3] = {{"--runs", "0", "--runs: expected an integer"},
                            {"--noisy", "0", "--noisy: expected a number"},
                            {"--noisy", "-0.1", "--noisy: expected a number"},
                            {"--reruns", "11", "--reruns: expected an integer"},
                            {"--nodes", "1", "--nodes: expected an integer in [2, 64]"},
                            {"--nodes", "two", "--nodes: expected an integer in [2, 64]"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        char *argv[] = {DAHLSIM_BIN, "validate", "--machine", "tiny-2cpu", (char *)bad[k][0], (char *)bad[k][1], NULL};
        dahl_test_run(&run, argv, NULL);
        dahl_test_assert_input_error(&run, bad[k][0], bad[k][2], NULL);
    }
    char home[] = "/tmp/dahlsim-cli-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    dahl_test_machine_copy(DAHLSIM_SOURCE_DIR "/tests/data/calibration", "tiny-2cpu", home);
    char machine[160], env_home[192];
    snprintf(machine, sizeof(machine), "%s/calibration/tiny-2cpu", home);
    dahl_test_manifest_add(machine, "node", "{\"cpu_model\": \"no such CPU\", \"cores\": 1, \"memory_bytes\": 1}");
    snprintf(env_home, sizeof(env_home), "DAHLSIM_HOME=%s", home);
    char *env[] = {env_home, NULL};
    char out[224];
    snprintf(out, sizeof(out), "%s/report", home);
    char *argv[] = {DAHLSIM_BIN, "validate", "--machine", "tiny-2cpu", "--out", out, "--runs", "1", NULL};
    dahl_test_run(&run, argv, env);
    dahl_test_assert_input_error(&run, "another machine", "was measured on another machine (cpu_model: calibrated "
                                                          "\"no such CPU\", here",
                                 NULL);
    cr_assert(strstr(run.err, "hint: calibrate this one") != NULL, "%s", run.err);
    /* --force: past the check (the fixture then fails on what it does not cover, a different error) */
    char *forced[] = {DAHLSIM_BIN, "validate", "--machine", "tiny-2cpu", "--out", out, "--force", NULL};
    dahl_test_run(&run, forced, env);
    cr_assert(strstr(run.err, "validating anyway (--force)") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "was measured on another machine (") != NULL, "%s", run.err);
    /* --setups FILE: its fields checked, one line naming the file and the field */
    char setups[224];
    snprintf(setups, sizeof(setups), "%s/setups.json", home);
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:28x28x3\", \"samples\": 64, "
                                 "\"cpus\": 1, \"scheduler\": \"lws\"}]}");
    char *with_setups[] = {DAHLSIM_BIN, "validate", "--machine", "tiny-2cpu", "--out", out, "--setups", setups, NULL};
    dahl_test_run(&run, with_setups, env);
    dahl_test_assert_input_error(&run, "--setups without a batch", "setups.json: \"setups[0].batch\": expected an "
                                                                  "integer in [1, 65536]",
                                 NULL);
    dahl_test_write_file(setups, "{\"setups\": []}");
    dahl_test_run(&run, with_setups, env);
    dahl_test_assert_input_error(&run, "--setups empty", "\"setups\": expected a list of 1 to 64 setup objects", NULL);
    /* --nodes: the ranks' workers must fit this machine's cores (64 x 64 fit none) */
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 8, "
                                 "\"cpus\": 64, \"scheduler\": \"lws\"}]}");
    char *ranks[] = {DAHLSIM_BIN, "validate", "--machine", "tiny-2cpu", "--out", out, "--setups", setups, "--nodes", "64",
                     NULL};
    dahl_test_run(&run, ranks, env);
    dahl_test_assert_input_error(&run, "--nodes 64 x 64 cpus", "--nodes 64: setup \"synthetic:12x12x1 b8 lws 64cpu\": "
                                                               "expected CPU workers only, cpus x nodes within",
                                 "got 64 CPU(s) x 64 ranks");
    /* a setup over several samples per task that the calibration does not cover is left out, with the
     * calibrate command that would add it; none left: an error */
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 8, "
                                 "\"cpus\": 1, \"scheduler\": \"lws\", \"grain\": 4}]}");
    char *grained[] = {DAHLSIM_BIN, "validate", "--machine", "tiny-2cpu", "--out", out, "--force", "--setups", setups,
                       NULL};
    dahl_test_run(&run, grained, env);
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "left out: calibration tiny-2cpu has no tasks over 4 samples (dahlsim calibrate "
                              "--machine tiny-2cpu --cover synthetic:12x12x1,grain=4)") != NULL,
              "%s", run.err);
    cr_assert(strstr(run.err, "dahlsim: error: validate: no setup left") != NULL, "%s", run.err);
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 8, "
                                 "\"cpus\": 1, \"scheduler\": \"lws\", \"grain\": \"four\"}]}");
    dahl_test_run(&run, grained, env);
    dahl_test_assert_input_error(&run, "--setups grain four", "\"setups[0].grain\": expected an integer in [1, 65536] "
                                                             "or \"auto\"",
                                 NULL);
    /* "gpus": CUDA workers, at most 8, and at most what the calibrated machine has (tiny-2cpu: none) */
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 8, "
                                 "\"cpus\": 1, \"gpus\": 9, \"scheduler\": \"dmda\"}]}");
    dahl_test_run(&run, grained, env);
    dahl_test_assert_input_error(&run, "--setups gpus 9", "\"setups[0].gpus\": expected an integer in [0, 8], got 9",
                                 NULL);
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 8, "
                                 "\"cpus\": 1, \"gpus\": 1, \"scheduler\": \"dmda\"}]}");
    dahl_test_run(&run, grained, env); /* after --force's warning line */
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "dahlsim: error: validate setup \"synthetic:12x12x1 b8 dmda 1cpu+1gpu\": \"gpus\": "
                              "expected at most the 0 GPUs of tiny-2cpu's platform, got 1\n") != NULL,
              "%s", run.err);
    /* "grain": "auto": resolved as a scenario's, from what the calibration covers (here grain 1 only), and
     * said; the native and simulated runs then take that grain */
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 8, "
                                 "\"cpus\": 1, \"scheduler\": \"lws\", \"grain\": \"auto\"}]}");
    char *auto_argv[] = {DAHLSIM_BIN, "validate", "--machine", "tiny-2cpu", "--out", out, "--force", "--runs", "1",
                         "--setups", setups, NULL};
    dahl_test_run(&run, auto_argv, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.err, "b8 lws 1cpu grain auto: auto: 1 of 1; predicted step") != NULL, "%s", run.err);
    /* one setup: no pair to judge the decisions on */
    cr_assert(strstr(run.out, "\npaired errors: no comparable pair\n") != NULL, "%s", run.out);
    cJSON *report = dahl_test_json_in(out, "fidelity.json");
    cr_assert_eq(assert_pairs_consistent(report), 0);
    cJSON_Delete(report);
    dahl_test_remove_tree(home);
}

/* Field key of fidelity.json's first setup (a number), from a report parsed with cJSON. */
static double first_setup_number(const cJSON *report, const char *key)
{
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, "setups"), 0);
    return dahl_test_number(row, key);
}

/* dir/fidelity.json, parsed (the caller deletes it). */
static cJSON *fidelity_json(const char *dir)
{
    return dahl_test_json_in(dir, "fidelity.json");
}

/* Sets run r's probe distances of setup i in dir/fidelity.json: as if its kernel probe had read slower than
 * the session's fastest, with the cores' round trip the session's shortest (the run's own may have been
 * longer: this VM's cores move apart for minutes at a time, which made the verdicts below flaky). */
static void set_probe_slower(const char *dir, int i, int r, double slower)
{
    cJSON *doc = fidelity_json(dir);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "setups"), i);
    cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(row, "runs"), r);
    cr_assert(cJSON_ReplaceItemInObjectCaseSensitive(run, "probe_slower", cJSON_CreateNumber(slower)));
    cr_assert(cJSON_ReplaceItemInObjectCaseSensitive(run, "latency_ratio", cJSON_CreateNumber(1)));
    char path[256], *text = cJSON_Print(doc);
    snprintf(path, sizeof(path), "%s/fidelity.json", dir);
    dahl_test_write_file(path, text);
    free(text);
    cJSON_Delete(doc);
}

/* validate --natives DIR: an earlier report's native runs against simulations made now, judged again at
 * --noisy; what the report decides cannot be given; a report that is not one is an input error. */
/* fidelity.json's figures on the machine's spread against its rows: each run's inside_interval as its makespan
 * against its setup's simulated interval, its in_calibrated_spell as its probe against calibrated (GFLOP/s),
 * and the counts; every run had an interval (runs in all). */
static void assert_spread_consistent(const cJSON *report, double calibrated, int runs)
{
    const cJSON *row, *r;
    int inside = 0, with = 0, spell_setups = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "setups"))
    {
        const cJSON *iv = cJSON_GetObjectItemCaseSensitive(row, "simulated_interval_s");
        cr_assert_eq(cJSON_GetArraySize(iv), 2, "no simulated_interval_s");
        double lo = cJSON_GetArrayItem(iv, 0)->valuedouble, hi = cJSON_GetArrayItem(iv, 1)->valuedouble;
        double sim = dahl_test_number(row, "simulated_s");
        cr_assert(lo <= sim && sim <= hi, "%g outside [%g, %g]", sim, lo, hi);
        int in_spell = 0;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(row, "runs"))
        {
            double t = dahl_test_number(r, "makespan_s"), g = dahl_test_number(r, "probe_gflops");
            cr_assert(g > 0);
            cr_assert_eq(test_bool(r, "inside_interval"), t >= lo && t <= hi);
            cr_assert_eq(test_bool(r, "in_calibrated_spell"), fabs(g / calibrated - 1) <= 0.05);
            cr_assert_geq(dahl_test_number(r, "interference_share"), 0);
            inside += t >= lo && t <= hi;
            in_spell += fabs(g / calibrated - 1) <= 0.05;
            with++;
        }
        cr_assert_eq(dahl_test_number(row, "spell_runs"), in_spell);
        spell_setups += in_spell > 0;
    }
    cr_assert_eq(with, runs);
    cr_assert_eq(dahl_test_number(report, "runs_with_interval"), with);
    cr_assert_eq(dahl_test_number(report, "runs_inside_interval"), inside);
    cr_assert_eq(dahl_test_number(report, "spell_setups"), spell_setups);
    cr_assert_eq(dahl_test_number(report, "calibrated_probe_gflops"), calibrated);
}

Test(cli, validate_natives_simulates_an_earlier_reports_runs_again)
{
    char home[] = "/tmp/dahlsim-natives-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    dahl_test_machine_copy(DAHLSIM_SOURCE_DIR "/tests/data/calibration", "tiny-2cpu", home);
    char env_home[192], setups[224], first[224], again[224], missing[224];
    snprintf(env_home, sizeof(env_home), "DAHLSIM_HOME=%s", home);
    char *env[] = {env_home, NULL};
    snprintf(setups, sizeof(setups), "%s/setups.json", home);
    snprintf(first, sizeof(first), "%s/first", home);
    snprintf(again, sizeof(again), "%s/again", home);
    snprintf(missing, sizeof(missing), "%s/none", home);
    /* four setups, five pairs: lws/eager, 1/2 workers (lws), 1 worker eager/2 workers lws at batch 8; batch 8/16
     * at lws, with 1 or 2 workers; not eager b8 against lws b16 (batch and scheduler both differ) */
    dahl_test_write_file(setups, "{\"setups\": [{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 8, "
                                 "\"cpus\": 1, \"scheduler\": \"lws\"}, {\"dataset\": \"synthetic:12x12x1\", "
                                 "\"samples\": 64, \"batch\": 8, \"cpus\": 1, \"scheduler\": \"eager\"}, "
                                 "{\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 16, \"cpus\": 1, "
                                 "\"scheduler\": \"lws\"}, {\"dataset\": \"synthetic:12x12x1\", \"samples\": 64, "
                                 "\"batch\": 8, \"cpus\": 2, \"scheduler\": \"lws\"}]}");
    /* a measured spread of the machine, so that every simulation has an interval; the fixture's manifest
     * records no node: --force */
    char machine[224];
    snprintf(machine, sizeof(machine), "%s/calibration/tiny-2cpu", home);
    dahl_test_manifest_add(machine, "machine_spread",
                           "{\"runs\": 10, \"probe_gflops\": {\"min\": 50, \"p10\": 64, \"median\": 80, "
                           "\"p90\": 100, \"max\": 110}, \"calibrated_in\": {\"runs\": 4, \"probe_gflops\": 80}}");
    const char *make[] = {"validate", "--machine", "tiny-2cpu", "--out", first, "--force", "--runs", "2",
                          "--setups", setups, "--quiet", NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, make, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    const char *natives[] = {"validate", "--machine", "tiny-2cpu", "--natives", first, "--out", again, NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, natives, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.err, "the native runs of") != NULL, "%s", run.err);
    cJSON *was = fidelity_json(first), *now = fidelity_json(again);
    /* the same native runs, and the same simulation: simulations are deterministic */
    const char *same[] = {"native_median_s", "simulated_s", "relative_error", "native_busy_median_s", "quiet_runs"};
    for (size_t k = 0; k < sizeof(same) / sizeof(same[0]); k++)
        cr_assert_eq(first_setup_number(now, same[k]), first_setup_number(was, same[k]), "%s differs", same[k]);
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(now, "natives_from");
    cr_assert(cJSON_IsString(from) && strcmp(from->valuestring, first) == 0);
    cr_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(now, "commit")));
    cr_assert_eq(dahl_test_number(now, "noisy_threshold"), dahl_test_number(was, "noisy_threshold"));
    /* the intervals and the spell, from the runs' own figures, the same again */
    assert_spread_consistent(was, 80, 8);
    assert_spread_consistent(now, 80, 8);
    /* the decisions: the pairs as the rows give them, the same again */
    cr_assert_eq(assert_pairs_consistent(was), 5);
    cr_assert_eq(assert_pairs_consistent(now), 5);
    cr_assert(strstr(run.out, " over 5 pairs; distinct pairs (native > 5 % apart) ordered as natively: ") != NULL,
              "%s", run.out);
    const cJSON *pairs_now = cJSON_GetObjectItemCaseSensitive(now, "pairs");
    cr_assert(cJSON_Compare(pairs_now, cJSON_GetObjectItemCaseSensitive(was, "pairs"), true), "the pairs differ");
    cJSON_Delete(now);
    /* judged again: run 1 probed 30 % slow is noisy at 0.2 (its median is run 2's), quiet at 0.5; the other
     * setups' runs quiet */
    set_probe_slower(first, 0, 0, 0.3);
    set_probe_slower(first, 0, 1, 0);
    for (int i = 1; i < 4; i++)
        for (int r = 0; r < 2; r++)
            set_probe_slower(first, i, r, 0);
    const char *strict[] = {"validate", "--machine", "tiny-2cpu", "--natives", first, "--out", again, "--noisy", "0.2",
                            NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, strict, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    now = fidelity_json(again);
    cr_assert_eq(first_setup_number(now, "quiet_runs"), 1);
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(was,
                                                                                                            "setups"),
                                                                            0),
                                                         "runs");
    cr_assert_eq(first_setup_number(now, "native_median_s"), dahl_test_number(cJSON_GetArrayItem(runs, 1), "makespan_s"));
    cr_assert_eq(dahl_test_number(now, "noisy_threshold"), 0.2);
    cr_assert_eq(dahl_test_number(now, "noisy_runs_dropped"), 1);
    /* the first setup's pairs: round 2's ratio alone (lws against eager at b8, the first pair) */
    cr_assert_eq(assert_pairs_consistent(now), 5);
    const cJSON *eager_runs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(was, "setups"), 1), "runs");
    const cJSON *lws_eager = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(now, "pairs"), 0);
    cr_assert_str_eq(test_string(lws_eager, "kind"), "policy");
    cr_assert_float_eq(dahl_test_number(lws_eager, "native_ratio"),
                       dahl_test_number(cJSON_GetArrayItem(runs, 1), "makespan_s") /
                           dahl_test_number(cJSON_GetArrayItem(eager_runs, 1), "makespan_s"),
                       1e-12);
    cJSON_Delete(now);
    const char *lenient[] = {"validate", "--machine", "tiny-2cpu", "--natives", first, "--out", again, "--noisy",
                             "0.5", "--quiet", NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, lenient, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    now = fidelity_json(again);
    cr_assert_eq(first_setup_number(now, "quiet_runs"), 2);
    cJSON_Delete(now);
    cJSON_Delete(was);
    /* bad input: one line, exit 2 */
    const char *runs_too[] = {"validate", "--machine", "tiny-2cpu", "--natives", first, "--out", again, "--runs", "2",
                              NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, runs_too, env);
    dahl_test_assert_input_error(&run, "--natives with --runs", "--runs: expected none: the setups, runs and ranks",
                                 NULL);
    const char *onto[] = {"validate", "--machine", "tiny-2cpu", "--natives", first, "--out", first, NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, onto, env);
    dahl_test_assert_input_error(&run, "--natives onto itself", "expected another directory than --out", NULL);
    const char *nowhere[] = {"validate", "--machine", "tiny-2cpu", "--natives", missing, "--out", again, NULL};
    dahl_test_run_args(&run, DAHLSIM_BIN, nowhere, env);
    dahl_test_assert_input_error(&run, "--natives missing", "--natives", "No such file or directory");
    char path[512], cmd[512];
    snprintf(path, sizeof(path), "%s/native/00-1", first);
    dahl_test_remove_tree(path);
    dahl_test_run_args(&run, DAHLSIM_BIN, natives, env);
    dahl_test_assert_input_error(&run, "--natives without a run", "native/00-1/results.json: expected the native run",
                                 NULL);
    snprintf(cmd, sizeof(cmd), "sed -i 's/\"makespan_s\":.*,/\"makespan_s\": \"slow\",/' '%s/fidelity.json'", first);
    cr_assert_eq(system(cmd), 0);
    dahl_test_run_args(&run, DAHLSIM_BIN, natives, env);
    dahl_test_assert_input_error(&run, "--natives, a makespan not a number", "fidelity.json: \"setups[0].runs[0]."
                                                                             "makespan_s\": expected a number",
                                 NULL);
    dahl_test_remove_tree(home);
}

Test(cli, subcommand_help_exits_0)
{
    dahlsim("run", "--help", NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "usage: dahlsim run") != NULL, "%s", run.out);
    dahlsim("doctor", "--help", NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "usage: dahlsim doctor") != NULL, "%s", run.out);
    dahlsim("train", "--help", NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "usage: dahlsim train") != NULL, "%s", run.out);
    cr_assert(strstr(run.out, "not implemented") == NULL, "%s", run.out);
}

Test(cli, version_names_the_flavour)
{
    dahlsim("--version", NULL, NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "native StarPU 1.3.10") != NULL, "%s", run.out);
}

Test(cli, bad_option_values_name_the_option)
{
    dahlsim("engine-probe", "--tasks", "-3");
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "dahlsim: error: --tasks: expected an integer in [1, 1000000], got \"-3\"") != NULL,
              "%s", run.err);
    dahlsim("engine-probe", "--duration-us", "5ms");
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--duration-us: expected a number") != NULL, "%s", run.err);
    dahlsim("engine-probe", "--frobnicate", NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "usage: dahlsim engine-probe") != NULL, "%s", run.err);
    dahlsim("doctor", "extra", NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "doctor: unexpected argument \"extra\"") != NULL, "%s", run.err);
}

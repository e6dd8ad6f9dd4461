/* Several jobs sharing one machine ("workloads", sim/program/jobs.c): simulated on the committed roofline V100
 * machine (every job order runs, results repeat to the bit, per-job transfers add up, a memory limit makes
 * StarPU evict), natively on this machine's CPUs (both jobs learn, as much as alone), and the scenario
 * errors (one line naming the file and the field, exit 2). */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA DAHLSIM_SOURCE_DIR "/tests/data"

static struct dahl_test_run run;
/* roofline-14cpu-1v100 is committed under calibration/ */
static char *v100_env[] = {"DAHLSIM_HOME=" DAHLSIM_SOURCE_DIR, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
static char *tiny_env[] = {"DAHLSIM_HOME=" DATA, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
static char dir[] = "/tmp/dahlsim-jobs-XXXXXX";

static void setup(void)
{
    strcpy(dir, "/tmp/dahlsim-jobs-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    dahl_test_remove_tree(dir);
}

/* Writes dir/NAME with text; returns its path (static). */
static const char *scenario(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    dahl_test_write_file(path, text);
    return path;
}

/* Two small jobs (28x28 and 128x128x3 LeNet) on 2 CPUs + the V100. */
static const char two_jobs[] =
    "{\"machine\": \"roofline-14cpu-1v100\", \"scheduler\": \"dmda\", \"cpus\": 2, \"gpus\": 1, \"batch\": 16,\n"
    " \"workloads\": [{\"name\": \"small\", \"dataset\": \"fashion-mnist\", \"samples\": 48},\n"
    "                {\"name\": \"large\", \"dataset\": \"synthetic:128x128x3\", \"samples\": 32}]}\n";

static cJSON *results(const char *out)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/results.json", out);
    cJSON *root = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(root, "no %s", path);
    return root;
}

static double number(const cJSON *o, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(item), "no number %s", key);
    return item->valuedouble;
}

/* Runs FILE with one --set into dir/OUT; returns its results. */
static cJSON *simulate(const char *file, const char *out_name, const char *set1, const char *set2)
{
    char out[128];
    snprintf(out, sizeof(out), "%s/%s", dir, out_name);
    char *argv[] = {DAHLSIM_BIN, "run", (char *)file, "--out", out, "--quiet", "--set", (char *)set1, "--set",
                    (char *)set2, NULL};
    dahl_test_run(&run, argv, v100_env);
    cr_assert_eq(run.status, 0, "%s %s: %s", set1, set2, run.err);
    return results(out);
}

Test(jobs, every_order_runs_and_repeats_to_the_bit, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *file = scenario("two.json", two_jobs);
    const char *orders[] = {"job_order=\"round-robin\"", "job_order=\"fifo\"", "job_order=\"weight\"",
                            "job_order=\"ga\""};
    for (size_t k = 0; k < sizeof(orders) / sizeof(orders[0]); k++) {
        cJSON *r = simulate(file, "o", orders[k], "prefetch=true");
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
        cr_assert_not_null(jobs);
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(jobs, "sequence");
        cr_assert_eq(cJSON_GetArraySize(seq), 5, "%s: 3 + 2 job-steps", orders[k]); /* 48/16 + 32/16 */
        int count[2] = {0, 0};
        const cJSON *e;
        cJSON_ArrayForEach(e, seq) count[(int)e->valuedouble]++;
        cr_assert(count[0] == 3 && count[1] == 2, "%s", orders[k]);
        /* each job's figures, and the total at least their sum (StarPU's own buffers add to it) */
        const cJSON *detail = cJSON_GetObjectItemCaseSensitive(jobs, "detail");
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(jobs, "total");
        double h2d = 0, busy = 0;
        cJSON_ArrayForEach(e, detail) {
            cr_assert_gt(number(e, "h2d_bytes"), 0, "%s: a job moved nothing to the GPU", orders[k]);
            cr_assert_gt(number(e, "gpu_busy_s"), 0);
            cr_assert_leq(number(e, "end_s"), number(r, "makespan_s") + 1e-12);
            h2d += number(e, "h2d_bytes");
            busy += number(e, "gpu_busy_s");
        }
        cr_assert_geq(number(total, "h2d_bytes"), h2d);
        cr_assert_geq(number(total, "gpu_busy_s"), busy - 1e-12);
        cJSON_Delete(r);
    }
    /* round-robin alternates; a given sequence is run as given */
    cJSON *r = simulate(file, "rr", "job_order=\"round-robin\"", "prefetch=true");
    char *seq = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "jobs"),
                                                                        "sequence"));
    cr_assert_str_eq(seq, "[0,1,0,1,0]");
    free(seq);
    cJSON_Delete(r);
    r = simulate(file, "given", "job_order=\"given\"", "job_sequence=[\"large\", \"small\", \"small\", 1, 0]");
    seq = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "jobs"),
                                                                  "sequence"));
    cr_assert_str_eq(seq, "[1,0,0,1,0]");
    free(seq);
    cJSON_Delete(r);
    /* the same scenario twice: the same bytes (wall-time fields aside) */
    cJSON_Delete(simulate(file, "again", "job_order=\"round-robin\"", "prefetch=true"));
    char a[128], b[128];
    snprintf(a, sizeof(a), "%s/rr", dir);
    snprintf(b, sizeof(b), "%s/again", dir);
    char *ra = dahl_test_results_without_wall(a), *rb = dahl_test_results_without_wall(b);
    cr_assert_str_eq(ra, rb, "two runs of one scenario differ");
    free(ra);
    free(rb);
}

/* job_count runs the first N of the workloads (a sweep varies the number of jobs); a job's priority orders
 * round-robin's cycle; job_contexts per-job gives each job its own StarPU scheduling context over the same
 * workers: the same job-steps run, in the same order. */
Test(jobs, job_count_priority_and_per_job_contexts, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *file = scenario("two.json", two_jobs);
    cJSON *r = simulate(file, "one", "job_count=1", "prefetch=true");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(jobs, "detail")), 1);
    char *seq = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(jobs, "sequence"));
    cr_assert_str_eq(seq, "[0,0,0]");
    free(seq);
    cJSON_Delete(r);
    r = simulate(file, "ctx", "job_contexts=\"per-job\"", "prefetch=true");
    jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(jobs, "contexts")->valuestring, "per-job");
    seq = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(jobs, "sequence"));
    cr_assert_str_eq(seq, "[0,1,0,1,0]");
    free(seq);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(jobs, "detail")) {
        cr_assert_gt(number(e, "gpu_busy_s"), 0, "a job's context never used the GPU");
        cr_assert_gt(number(e, "samples_per_s"), 0);
    }
    /* a job's priority puts it first in round-robin's cycle */
    const char *prio = scenario("prio.json",
                                "{\"machine\": \"roofline-14cpu-1v100\", \"scheduler\": \"dmda\", \"cpus\": 2, "
                                "\"gpus\": 1, \"batch\": 16, \"workloads\": [{\"name\": \"small\", \"dataset\": "
                                "\"fashion-mnist\", \"samples\": 48}, {\"name\": \"large\", \"dataset\": "
                                "\"synthetic:128x128x3\", \"samples\": 32, \"priority\": 1}]}");
    cJSON *p = simulate(prio, "prio", "job_order=\"round-robin\"", "prefetch=false");
    seq = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "jobs"),
                                                                  "sequence"));
    cr_assert_str_eq(seq, "[1,0,1,0,0]");
    free(seq);
    cJSON_Delete(p);
    cJSON *shared = simulate(file, "shared", "job_contexts=\"shared\"", "prefetch=true");
    cr_assert_eq(number(r, "iterations"), number(shared, "iterations"));
    const cJSON *tasks_a = cJSON_GetObjectItemCaseSensitive(r, "tasks");
    const cJSON *tasks_b = cJSON_GetObjectItemCaseSensitive(shared, "tasks");
    char *ta = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(tasks_a, "per_codelet"));
    char *tb = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(tasks_b, "per_codelet"));
    cr_assert_str_eq(ta, tb, "per-job contexts ran other tasks");
    free(ta);
    free(tb);
    cJSON_Delete(shared);
    cJSON_Delete(r);
}

Test(jobs, a_memory_limit_makes_starpu_evict, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *file = scenario("two.json", two_jobs);
    cJSON *free_run = simulate(file, "free", "gpu_memory_mib=null", "prefetch=true");
    cJSON *tight = simulate(file, "tight", "gpu_memory_mib=48", "prefetch=true");
    const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(free_run, "jobs"), "total");
    const cJSON *t1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tight, "jobs"), "total");
    cr_assert_eq(number(t0, "evictions"), 0);
    cr_assert_gt(number(t1, "evictions"), 0, "48 MiB for two jobs (116 MiB without a limit): nothing evicted");
    cr_assert_gt(number(t1, "h2d_bytes"), number(t0, "h2d_bytes"), "evictions without reloads");
    cJSON_Delete(free_run);
    cJSON_Delete(tight);
}

/* A limit above every task's data that StarPU still cannot run the jobs in (their fully-connected weights
 * and REDUX contributions together): a clear error in seconds, not a simulation that never returns. */
Test(jobs, a_limit_with_no_room_ends_with_an_error, .init = setup, .fini = teardown, .timeout = 120)
{
    const char *file = scenario("noroom.json",
                                "{\"machine\": \"roofline-14cpu-1v100\", \"scheduler\": \"dmda\", \"cpus\": 13, "
                                "\"batch\": 32, \"samples\": 64, \"gpu_memory_mib\": 16, \"job_order\": \"weight\", "
                                "\"workloads\": [{\"name\": \"a\", \"dataset\": \"synthetic:128x128x3\"}, "
                                "{\"name\": \"b\", \"dataset\": \"synthetic:128x128x3\"}, {\"name\": \"c\"}]}");
    char out[128];
    snprintf(out, sizeof(out), "%s/noroom", dir);
    char *argv[] = {DAHLSIM_BIN, "run", (char *)file, "--out", out, "--quiet", NULL};
    dahl_test_run(&run, argv, v100_env);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "\"gpu_memory_mib\": expected room for the run's tasks, got 16") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "raise the limit") != NULL, "%s", run.err);
}

Test(jobs, two_jobs_learn_natively_together_as_alone, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *both = "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"batch\": 8, \"samples\": "
                       "64, \"epochs\": 4, \"scheduler\": \"dmda\", \"reduction\": \"manual\", \"workloads\": "
                       "[{\"name\": \"a\"}, {\"name\": \"b\", \"batch\": 16}], \"job_contexts\": \"per-job\"}";
    const char *alone = "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"batch\": 8, \"samples\": "
                        "64, \"epochs\": 4, \"scheduler\": \"dmda\", \"reduction\": \"manual\", \"workloads\": "
                        "[{\"name\": \"b\", \"batch\": 16}]}";
    double last[2][2]; /* [together, alone][job b, job a] */
    const char *files[] = {scenario("both.json", both), scenario("alone.json", alone)};
    for (int k = 0; k < 2; k++) {
        char sim[128], native[128], point[160];
        snprintf(sim, sizeof(sim), "%s/sim%d", dir, k);
        snprintf(native, sizeof(native), "%s/native%d", dir, k);
        snprintf(point, sizeof(point), "%s/point.json", sim);
        char *argv[] = {DAHLSIM_BIN, "run", (char *)files[k], "--out", sim, "--quiet", NULL};
        dahl_test_run(&run, argv, tiny_env); /* writes the point the native run reads */
        cr_assert_eq(run.status, 0, "%s", run.err);
        char *train[] = {DAHLSIM_BIN, "train", "--point", point, "--out", native, "--quiet", NULL};
        dahl_test_run(&run, train, tiny_env);
        cr_assert_eq(run.status, 0, "%s", run.err);
        cJSON *r = results(native);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "mode")->valuestring, "native");
        const cJSON *e;
        int i = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "jobs"), "detail")) {
            double first = number(e, "loss_first"), end = number(e, "loss_last");
            cr_assert_lt(end, 0.9 * first, "job %d does not learn: loss %g -> %g", i, first, end);
            bool is_b = strcmp(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, "b") == 0;
            last[k][is_b ? 0 : 1] = end;
            i++;
        }
        cJSON_Delete(r);
    }
    /* job b draws the same data and weights alone or beside a (its seed is its name's), reduced in a fixed
     * order (manual), in its own scheduling context or in the shared one: the same loss to float rounding */
    cr_assert_float_eq(last[0][0], last[1][0], 1e-4 * last[1][0], "together %g, alone %g", last[0][0], last[1][0]);
}

Test(jobs, bad_workloads_are_one_line_errors, .init = setup, .fini = teardown)
{
    const struct {
        const char *text, *want1, *want2;
    } cases[] = {
        {"\"workloads\": []", "\"workloads\": expected a list of 1 to 8 job objects", NULL},
        {"\"workloads\": [{\"model\": \"resnet\"}]", "\"workloads[0]\": expected a model of lenet", NULL},
        {"\"workloads\": [{}], \"job_order\": \"lifo\"", "\"job_order\": expected one of round-robin", "\"lifo\""},
        {"\"workloads\": [{\"dataset\": \"synthetic:28x28x3\"}, {\"dataset\": \"fashion-mnist\"}], \"grain\": 4",
         "\"grain\": expected grains calibration roofline-14cpu-1v100 covers: it has no tasks over 4 samples for "
         "fashion-mnist/lenet",
         NULL},
        {"\"workloads\": [{}], \"grain\": \"auto\"", "\"grain\": expected a number of samples or \"batch\" with "
                                                     "workloads",
         NULL},
        {"\"workloads\": [{}], \"job_order\": \"ga\", \"ga\": {\"population\": 1}", "\"ga.population\": expected an "
                                                                                    "integer in [2,", NULL},
        {"\"workloads\": [{\"dataset\": \"synthetic:128x128x3\"}], \"gpu_memory_mib\": 4",
         "\"gpu_memory_mib\": expected at least 16 MiB (the", "MiB one task of job \"job0\""},
        {"\"dataset\": \"synthetic:128x128x3\", \"gpus\": 1, \"gpu_memory_mib\": 15",
         "\"gpu_memory_mib\": expected at least 16 MiB", "one task of the model"},
        {"\"workloads\": [{\"colour\": 1}]", "\"workloads[0].colour\": expected no such key", NULL},
        {"\"job_order\": \"fifo\"", "\"job_order\": expected \"workloads\" too", NULL},
        {"\"workloads\": [{}], \"job_count\": 2", "\"job_count\": expected an integer in [1, 1]", NULL},
        {"\"workloads\": [{}], \"job_contexts\": \"private\"", "\"job_contexts\": expected \"shared\" or",
         "\"private\""},
        {"\"workloads\": [{}], \"scheduler\": \"heteroprio:auto-prws\", \"job_contexts\": \"per-job\"",
         "\"job_contexts\": expected \"shared\" with heteroprio", NULL},
        {"\"workloads\": [{}], \"job_order\": \"given\", \"job_sequence\": [0]", "\"job_sequence\": expected job "
                                                                                  "\"job0\" 2 times", NULL},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char text[512];
        snprintf(text, sizeof(text),
                 "{\"machine\": \"roofline-14cpu-1v100\", \"batch\": 16, \"samples\": 32, %s}", cases[k].text);
        const char *file = scenario("bad.json", text);
        char *argv[] = {DAHLSIM_BIN, "check", (char *)file, NULL};
        dahl_test_run(&run, argv, v100_env);
        dahl_test_assert_input_error(&run, cases[k].text, cases[k].want1, cases[k].want2);
    }
}

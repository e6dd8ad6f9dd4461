/* The experiment record's file (point.json, sim/core/dahlsim_experiment.h), in-process: what is saved loads
 * back bit for bit, and a file that is not one of its own is refused naming the file and the field. */
#include <criterion/criterion.h>

#include "dahlsim_experiment.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/dahlsim-experiment-XXXXXX";
static char path[PATH_MAX];

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/point.json", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

static struct dahlsim_experiment sample(void)
{
    struct dahlsim_experiment x = {.samples = 4096, .batch = 32, .epochs = 2, .cpus = 13, .gpus = 1,
                                   .gpu_memory_mib = 512, .prefetch = true, .trace = true, .trace_first = 2,
                                   .trace_last = 5, .seed = 9007199254740992L, .lr = 0.1, .momentum = 0.9,
                                   .nodes = 4, .network_bps = 1e10 / 3, .network_latency_s = 1.5e-6,
                                   .submit_us_per_task = 3.0000000000000004, .input_copy_bytes_per_s = 1e9,
                                   .sched_push_us = 0.7, .worker_us = -1};
    snprintf(x.scenario, sizeof(x.scenario), "scenarios/a \"quoted\" name.json");
    snprintf(x.machine, sizeof(x.machine), "tiny-2cpu");
    snprintf(x.machine_dir, sizeof(x.machine_dir), "/somewhere/calibration/tiny-2cpu");
    snprintf(x.model, sizeof(x.model), "deep:2");
    snprintf(x.dataset, sizeof(x.dataset), "synthetic:12x12x1");
    snprintf(x.scheduler, sizeof(x.scheduler), "heteroprio:auto-prws/footprint");
    snprintf(x.perfmodel, sizeof(x.perfmodel), "regression");
    snprintf(x.reduction, sizeof(x.reduction), "manual");
    snprintf(x.network, sizeof(x.network), "10 Gbit/s, 1.5 us");
    snprintf(x.topology, sizeof(x.topology), "fat-tree");
    snprintf(x.runtime_costs, sizeof(x.runtime_costs), "measured");
    snprintf(x.point, sizeof(x.point), "batch=32 scheduler=dmda");
    /* two jobs and a given order */
    x.njobs = 2;
    x.jobs[0] = (struct dahlsim_job){.batch = 16, .samples = 64, .start_s = 0.1 + 0.2, .priority = -3};
    x.jobs[1] = (struct dahlsim_job){.batch = 8, .samples = 32, .start_s = 0};
    snprintf(x.jobs[0].name, sizeof(x.jobs[0].name), "small");
    snprintf(x.jobs[0].model, sizeof(x.jobs[0].model), "lenet");
    snprintf(x.jobs[0].dataset, sizeof(x.jobs[0].dataset), "fashion-mnist");
    snprintf(x.jobs[1].name, sizeof(x.jobs[1].name), "large");
    snprintf(x.jobs[1].model, sizeof(x.jobs[1].model), "deep:2");
    snprintf(x.jobs[1].dataset, sizeof(x.jobs[1].dataset), "synthetic:128x128x3");
    snprintf(x.job_order, sizeof(x.job_order), "given");
    x.job_window = 3;
    x.nsequence = 8;
    for (int i = 0; i < 8; i++)
        x.sequence[i] = i % 3 == 0;
    /* two node groups */
    x.ngroups = 2;
    x.groups[0] = (struct dahlsim_node_group){.count = 1, .share = 20, .cpus = 14, .gpus = 1, .worker_us = -1};
    x.groups[1] = (struct dahlsim_node_group){.count = 3, .share = 4, .cpus = 2, .submit_us_per_task = 0.1 + 0.2,
                                              .input_copy_bytes_per_s = 2e9, .sched_push_us = 0.3, .worker_us = 1.5};
    snprintf(x.groups[0].machine, sizeof(x.groups[0].machine), "roofline-14cpu-1v100");
    snprintf(x.groups[1].machine, sizeof(x.groups[1].machine), "tiny-2cpu");
    return x;
}

static void write_file(const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(experiment, saved_loads_back_exactly, .init = setup, .fini = teardown)
{
    struct dahlsim_experiment x = sample(), y;
    char err[PATH_MAX + 256];
    cr_assert_eq(dahlsim_experiment_save(&x, path, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahlsim_experiment_load(path, &y, err, sizeof(err)), 0, "%s", err);
    /* field by field (padding bytes differ): every number bit for bit, every string whole */
    cr_assert_str_eq(y.scenario, x.scenario);
    cr_assert_str_eq(y.scheduler, x.scheduler);
    cr_assert_str_eq(y.point, x.point);
    cr_assert_str_eq(y.machine_dir, x.machine_dir);
    cr_assert_eq(y.seed, x.seed);
    cr_assert_eq(y.trace_first, 2);
    cr_assert_eq(y.worker_us, -1);
    cr_assert(y.prefetch && y.trace);
    cr_assert_eq(memcmp(&y.network_bps, &x.network_bps, sizeof(double)), 0);
    cr_assert_eq(memcmp(&y.submit_us_per_task, &x.submit_us_per_task, sizeof(double)), 0);
    cr_assert_eq(memcmp(&y.lr, &x.lr, sizeof(double)), 0);
    cr_assert_eq(y.njobs, 2);
    cr_assert_str_eq(y.jobs[1].dataset, "synthetic:128x128x3");
    cr_assert_eq(memcmp(&y.jobs[0].start_s, &x.jobs[0].start_s, sizeof(double)), 0);
    cr_assert_eq(y.jobs[0].priority, -3);
    cr_assert_str_eq(y.job_order, "given");
    cr_assert_eq(y.nsequence, 8);
    cr_assert_eq(memcmp(y.sequence, x.sequence, 8 * sizeof(int)), 0);
    cr_assert_eq(y.ngroups, 2);
    cr_assert_str_eq(y.groups[0].machine, "roofline-14cpu-1v100");
    char gdir[PATH_MAX];
    cr_assert_eq(dahlsim_node_group_dir(&y, &y.groups[1], gdir, sizeof(gdir)), 0);
    cr_assert_str_eq(gdir, "/somewhere/calibration/tiny-2cpu", "a group's machine beside the experiment's");
    cr_assert_eq(y.groups[1].count, 3);
    cr_assert_eq(y.groups[1].share, 4);
    cr_assert_eq(y.groups[0].worker_us, -1);
    cr_assert_eq(memcmp(&y.groups[1].submit_us_per_task, &x.groups[1].submit_us_per_task, sizeof(double)), 0);
    /* saved again: the same bytes */
    char again[PATH_MAX + 16];
    snprintf(again, sizeof(again), "%s/again.json", dir);
    cr_assert_eq(dahlsim_experiment_save(&y, again, err, sizeof(err)), 0, "%s", err);
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", path, again);
    cr_assert_eq(system(cmd), 0, "a loaded point saved again differs");
    unlink(again);
}

/* Loads path and asserts it is refused with -EINVAL and both texts in the message. */
static void assert_refused(const char *want1, const char *want2)
{
    struct dahlsim_experiment y;
    char err[PATH_MAX + 256] = "";
    cr_assert_eq(dahlsim_experiment_load(path, &y, err, sizeof(err)), -EINVAL, "accepted: %s", err);
    cr_assert(strstr(err, path) != NULL && strstr(err, want1) != NULL && strstr(err, want2) != NULL,
              "unexpected message: %s", err);
}

/* The saved sample with one edit: text from `from` to the end of its line replaced by `to`. */
static void write_edited(const char *from, const char *to)
{
    struct dahlsim_experiment x = sample();
    char err[PATH_MAX + 256];
    cr_assert_eq(dahlsim_experiment_save(&x, path, err, sizeof(err)), 0, "%s", err);
    FILE *f = fopen(path, "r");
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = strstr(text, from);
    cr_assert_not_null(at, "%s not in the saved file", from);
    char *eol = strchr(at, '\n');
    static char edited[1 << 16];
    snprintf(edited, sizeof(edited), "%.*s%s%s", (int)(at - text), text, to, eol);
    write_file(edited);
}

Test(experiment, a_file_not_its_own_is_refused, .init = setup, .fini = teardown)
{
    write_file("{\"batch\": 3");
    assert_refused("line 1", "not valid JSON");
    write_file("{\"dahlsim_point\": 2}");
    assert_refused("\"dahlsim_point\"", "expected 1");
    write_edited("\"batch\":", "\"batch\":\t3.5,");
    assert_refused("\"batch\"", "an integer");
    write_edited("\"prefetch\":", "\"prefetch\":\t1,");
    assert_refused("\"prefetch\"", "true or false");
    write_edited("\"machine\":", "\"machine\":\t7,");
    assert_refused("\"machine\"", "a string");
    write_edited("\"point\":", "\"colour\":\t\"red\",");
    assert_refused("\"colour\"", "unknown key");
    write_edited("\"lr\":", "\"lrate\":\t0.1,");
    assert_refused("\"lrate\"", "unknown key");
    write_edited("\"sequence\":", "\"sequence\":\t[0, 9]");
    assert_refused("\"sequence\"", "job indices");
    write_edited("\"name\":\t\"small\"", "\"name\":\t1,");
    assert_refused("\"jobs\"", "\"name\" is a string");
}

Test(experiment, a_missing_file_says_why, .init = setup, .fini = teardown)
{
    struct dahlsim_experiment y;
    char err[PATH_MAX + 256] = "";
    cr_assert_eq(dahlsim_experiment_load(path, &y, err, sizeof(err)), -ENOENT);
    cr_assert(strstr(err, "No such file") != NULL, "%s", err);
}

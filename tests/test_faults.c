/* Hard faults under a sweep (issue 24): kill -9 of the sweep at several moments, in the middle of writing a
 * point's record, and of a simulation under it; then the same command finishes with every point exactly once
 * and every results file parseable. A killed sweep leaves no simulation running. Two sweeps on one directory:
 * the second refuses. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DATA DAHLSIM_SOURCE_DIR "/tests/data"

extern char **environ;

static char dir[] = "/tmp/dahlsim-faults-XXXXXX";
static struct dahl_test_run run;

static void setup(void)
{
    strcpy(dir, "/tmp/dahlsim-faults-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    dahl_test_remove_tree(dir);
}

/* 12 short points on the 2-CPU fixture machine. */
static const char grid[] = "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"samples\": 64,\n"
                           " \"sweep\": {\"scheduler\": [\"eager\", \"dmda\"], \"batch\": [4, 8, 16], "
                           "\"seed\": [1, 2]}}\n";
#define GRID_POINTS 12

/* One point of a few seconds (2048 samples in steps of 4). */
static const char long_point[] = "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"samples\": 2048, "
                                 "\"batch\": 4, \"scheduler\": \"eager\"}\n";

static const char *path_in(const char *name)
{
    static char path[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
    return path[k];
}

/* Starts `dahlsim sweep FILE --out OUT --quiet [extra]` in the background (output to OUT.log), with fault
 * (NULL: none) as DAHLSIM_FAULT. */
static pid_t start_sweep(const char *file, const char *out, const char *extra1, const char *extra2, const char *fault)
{
    char fault_var[64], log[192];
    snprintf(fault_var, sizeof(fault_var), "DAHLSIM_FAULT=%s", fault != NULL ? fault : "");
    snprintf(log, sizeof(log), "%s.log", out);
    /* this process's environment (CTest's STARPU_HOME, PATH), then the run's own variables */
    static char *env[512];
    size_t n = 0;
    for (char **e = environ; *e != NULL && n < 500; e++)
        if (strncmp(*e, "DAHLSIM_", 8) != 0 && strncmp(*e, "ASAN_OPTIONS=", 13) != 0)
            env[n++] = *e;
    env[n++] = "DAHLSIM_HOME=" DATA;
    env[n++] = "STARPU_SILENT=1";
    env[n++] = "ASAN_OPTIONS=detect_leaks=0";
    env[n++] = fault_var;
    env[n] = NULL;
    char *argv[] = {DAHLSIM_BIN, "sweep", (char *)file, "--out", (char *)out, "--quiet", (char *)extra1,
                    (char *)extra2, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log, O_WRONLY | O_CREAT | O_APPEND, 0666);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, argv[0], &actions, NULL, argv, env), 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

static int wait_status(pid_t pid)
{
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The sweep run to its end (in the foreground); its exit status. */
static int sweep_to_end(const char *file, const char *out)
{
    return wait_status(start_sweep(file, out, NULL, NULL, NULL));
}

/* Every point of an n-point sweep in out/results.jsonl exactly once, every line and every point's
 * results.json parseable, results.csv with a row per point. */
static void assert_complete(const char *out, int n)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/results.jsonl", out);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no %s", path);
    int seen[64] = {0};
    char *line = NULL;
    size_t cap = 0;
    int lines = 0;
    while (getline(&line, &cap, f) > 0) {
        lines++;
        cJSON *o = cJSON_Parse(line);
        cr_assert_not_null(o, "%s: line %d does not parse: %s", path, lines, line);
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(o, "point");
        cr_assert(cJSON_IsNumber(idx) && idx->valuedouble >= 0 && idx->valuedouble < n, "%s", line);
        seen[(int)idx->valuedouble]++;
        cJSON_Delete(o);
    }
    free(line);
    fclose(f);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(seen[i], 1, "point %d recorded %d times", i, seen[i]);
        snprintf(path, sizeof(path), "%s/points/%04d/results.json", out, i);
        cJSON *r = cJSON_Parse(dahl_test_read_file(path));
        cr_assert_not_null(r, "%s does not parse", path);
        cJSON_Delete(r);
    }
    snprintf(path, sizeof(path), "%s/results.csv", out);
    const char *csv = dahl_test_read_file(path);
    int rows = 0;
    for (const char *c = csv; *c != '\0'; c++)
        rows += *c == '\n';
    cr_assert_eq(rows, n + 1, "%s: %d lines", path, rows);
}

/* The pid of a process whose command line holds both needles; 0 when none. */
static pid_t find_process(const char *needle1, const char *needle2)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *e;
    pid_t found = 0;
    while (found == 0 && (e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        char path[64], cmd[4096];
        snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t n = fread(cmd, 1, sizeof(cmd) - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++)
            cmd[i] = cmd[i] == '\0' ? ' ' : cmd[i];
        cmd[n] = '\0';
        if (strstr(cmd, needle1) != NULL && strstr(cmd, needle2) != NULL)
            found = (pid_t)pid;
    }
    closedir(d);
    return found;
}

/* Waits up to 2 s for every process whose command line names out (a sweep's forked children, simulations)
 * to be gone, and fails the test when one is left. */
static void await_none(const char *out)
{
    pid_t left = 0;
    for (int t = 0; t < 200 && (left = find_process("dahlsim", out)) != 0; t++)
        sleep_ms(10);
    cr_assert_eq(left, 0, "process %d still works on %s 2 s after its sweep was killed", (int)left, out);
}

/* Waits up to ms for a process matching both needles to appear; its pid. */
static pid_t await_process(const char *needle1, const char *needle2, long ms)
{
    for (long t = 0; t < ms; t += 10) {
        pid_t pid = find_process(needle1, needle2);
        if (pid != 0)
            return pid;
        sleep_ms(10);
    }
    cr_assert_fail("no process running %s %s after %ld ms", needle1, needle2, ms);
    return 0;
}

Test(faults, kill_9_of_the_sweep_at_any_moment_loses_nothing, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *file = path_in("grid.json"), *out = path_in("out");
    dahl_test_write_file(file, grid);
    /* killed again and again, at moments from its start to well into its points */
    const long delays_ms[] = {20, 120, 300, 600, 900, 1300};
    for (size_t k = 0; k < sizeof(delays_ms) / sizeof(delays_ms[0]); k++) {
        pid_t pid = start_sweep(file, out, NULL, NULL, NULL);
        sleep_ms(delays_ms[k]);
        kill(pid, SIGKILL);
        int status = wait_status(pid);
        cr_assert(status == 137 || status == 0, "sweep %zu: exit %d", k, status);
        await_none(out);
    }
    cr_assert_eq(sweep_to_end(file, out), 0, "%s", dahl_test_read_file(path_in("out.log")));
    assert_complete(out, GRID_POINTS);
}

Test(faults, a_record_torn_by_kill_9_is_dropped_and_its_point_rerun, .init = setup, .fini = teardown,
     .timeout = 120)
{
    const char *file = path_in("grid.json"), *out = path_in("out");
    dahl_test_write_file(file, grid);
    /* the third record half written, then the sweep killed */
    pid_t pid = start_sweep(file, out, NULL, NULL, "torn-record:3");
    cr_assert_eq(wait_status(pid), 137);
    char jsonl[192];
    snprintf(jsonl, sizeof(jsonl), "%s/results.jsonl", out);
    const char *text = dahl_test_read_file(jsonl);
    size_t len = strlen(text);
    cr_assert(len > 0 && text[len - 1] != '\n', "no torn last line: %s", text);
    cr_assert_eq(sweep_to_end(file, out), 0, "%s", dahl_test_read_file(path_in("out.log")));
    assert_complete(out, GRID_POINTS);
}

Test(faults, a_simulation_killed_under_a_sweep_is_rerun, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *file = path_in("grid.json"), *out = path_in("out");
    /* one long point among the short ones: the one killed */
    char text[512];
    snprintf(text, sizeof(text),
             "{\"machine\": \"tiny-2cpu\", \"dataset\": \"synthetic:12x12x1\", \"samples\": 64, \"batch\": 4,\n"
             " \"sweep\": {\"samples\": [64, 2048, 128], \"scheduler\": [\"eager\"]}}\n");
    dahl_test_write_file(file, text);
    pid_t sweep = start_sweep(file, out, NULL, NULL, NULL);
    char point[192];
    snprintf(point, sizeof(point), "%s/points/0001", out);
    pid_t sim = await_process("dahlsim-sim", point, 60000);
    sleep_ms(200);
    kill(sim, SIGKILL);
    cr_assert_eq(wait_status(sweep), 1, "the sweep did not report its failed point");
    cr_assert(strstr(dahl_test_read_file(path_in("out.log")), "point 1 (samples=2048 scheduler=eager) failed") != NULL,
              "%s", dahl_test_read_file(path_in("out.log")));
    cr_assert_eq(sweep_to_end(file, out), 0, "%s", dahl_test_read_file(path_in("out.log")));
    assert_complete(out, 3);
}

/* Starts a sweep of the one long point into dir/out (*file, *out: their paths; point: its point's directory)
 * and waits until its simulation runs: the sweep holds its lock from before its first point. */
static pid_t start_long_sweep(const char **file, const char **out, char *point, size_t size)
{
    *file = path_in("long.json");
    *out = path_in("out");
    dahl_test_write_file(*file, long_point);
    pid_t sweep = start_sweep(*file, *out, NULL, NULL, NULL);
    snprintf(point, size, "%s/points/0000", *out);
    await_process("dahlsim-sim", point, 60000);
    return sweep;
}

/* A sweep killed with kill -9 takes its running simulation with it: nothing finishes the point behind the
 * next run's back. */
Test(faults, a_killed_sweep_leaves_no_simulation_running, .init = setup, .fini = teardown, .timeout = 120)
{
    const char *file, *out;
    char point[192];
    pid_t sweep = start_long_sweep(&file, &out, point, sizeof(point));
    kill(sweep, SIGKILL);
    cr_assert_eq(wait_status(sweep), 137);
    pid_t left = 0;
    for (int t = 0; t < 200 && (left = find_process("dahlsim-sim", point)) != 0; t++)
        sleep_ms(10);
    cr_assert_eq(left, 0, "the simulation of %s still runs 2 s after its sweep was killed", point);
    char results[224];
    snprintf(results, sizeof(results), "%s/results.json", point);
    cr_assert_neq(access(results, F_OK), 0, "a point finished after its sweep was killed");
}

Test(faults, a_second_sweep_on_the_same_directory_refuses, .init = setup, .fini = teardown, .timeout = 120)
{
    const char *file, *out;
    char point[192];
    pid_t first = start_long_sweep(&file, &out, point, sizeof(point));
    char *env[] = {"DAHLSIM_HOME=" DATA, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    const char *second[][2] = {{NULL, NULL}, {"--only", "0"}};
    for (size_t k = 0; k < 2; k++) {
        char *argv[] = {DAHLSIM_BIN, "sweep", (char *)file, "--out", (char *)out, "--quiet", (char *)second[k][0],
                        (char *)second[k][1], NULL};
        dahl_test_run(&run, argv, env);
        cr_assert_eq(run.status, 1, "second sweep %zu: exit %d: %s", k, run.status, run.err);
        cr_assert(strstr(run.err, "dahlsim: error: sweep: another dahlsim sweep is writing") != NULL, "%s", run.err);
        cr_assert(strstr(run.err, "hint: wait for it to end, or give this one another --out") != NULL, "%s", run.err);
    }
    kill(first, SIGKILL);
    wait_status(first);
    await_none(out);
    /* Slurm array tasks run --only points side by side; the same point twice refuses */
    pid_t a = start_sweep(file, out, "--only", "0", NULL);
    await_process("dahlsim-sim", point, 60000);
    char *argv[] = {DAHLSIM_BIN, "sweep", (char *)file, "--out", (char *)out, "--quiet", "--only", "0", NULL};
    dahl_test_run(&run, argv, env);
    cr_assert_eq(run.status, 1, "the same --only point twice: exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "points/0000.lock") != NULL, "%s", run.err);
    kill(a, SIGKILL);
    wait_status(a);
}

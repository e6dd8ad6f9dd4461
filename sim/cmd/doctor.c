/* `dahlsim doctor`: checks an installation end to end with the probe task graph (independent tasks of a
 * known duration). Natively it reports how close this machine gets to perfect scheduling; under
 * StarPU-SimGrid, on the hand-written probe machine (tests/data/probe-machine: 2 CPUs, a "dahl_probe"
 * model of 5 ms), the simulated makespan must equal what the perf model predicts. Both runs are
 * `dahlsim engine-probe` (dahlsim_engine_probe.h), the hidden half inside either flavour's binary. */
#include "dahlsim_cli.h"
#include "dahlsim_engine_probe.h"
#include "dahlsim_fs.h"
#include "dahlsim_spawn.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The hand-written machine the simulated probe runs on, relative to the data directory. */
#define PROBE_MACHINE_DIR "tests/data/probe-machine"
#define PROBE_MACHINE_NAME "probe-2cpu"
#define PROBE_MACHINE_NCPU 2

/* Reads "key": number out of one JSON line written by engine-probe. */
static bool json_number(const char *line, const char *key, double *out)
{
    char pattern[64];
    snprintf(pattern, sizeof(pattern), "\"%s\": ", key);
    const char *at = strstr(line, pattern);
    if (at == NULL)
        return false;
    char *end;
    *out = strtod(at + strlen(pattern), &end);
    return end != at + strlen(pattern);
}

static int doctor_native(void)
{
    char exe[4096];
    if (dahlsim_sibling_path("dahlsim", exe, sizeof(exe)) != 0)
        return DAHLSIM_EXIT_FAILURE;
    char scratch[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof(scratch), "%s/dahlsim-doctor-%u", tmp != NULL ? tmp : "/tmp", (unsigned)getuid());
    if (mkdir(scratch, 0700) != 0 && errno != EEXIST) {
        dahlsim_error("doctor: cannot create %s: %s", scratch, strerror(errno));
        return DAHLSIM_EXIT_FAILURE;
    }
    /* A scratch STARPU_HOME: the probe's history must not land in the user's ~/.starpu. */
    const struct dahlsim_env_var vars[] = {{"STARPU_HOME", scratch}, {"STARPU_SILENT", "1"}};
    char *args[] = {exe, "engine-probe", NULL};
    char out[4096];
    int status = dahlsim_spawn(args, vars, sizeof(vars) / sizeof(vars[0]), out, sizeof(out));
    double makespan, ideal, ncpu;
    if (status != 0 || !json_number(out, "makespan_us", &makespan) || !json_number(out, "ideal_us", &ideal) ||
        !json_number(out, "ncpu", &ncpu)) {
        dahlsim_error("doctor: the native probe failed (exit %d)", status);
        return DAHLSIM_EXIT_FAILURE;
    }
    printf("native     %2.0f CPU  %2d tasks x %4.1f ms  makespan %8.3f ms  ideal %8.3f ms  efficiency %5.1f %%\n",
           ncpu, DAHLSIM_PROBE_TASKS, DAHLSIM_PROBE_DURATION_US / 1e3, makespan / 1e3, ideal / 1e3, 100.0 * ideal / makespan);
    /* Busy-waiting tasks on idle cores reach 95 % and more; less means the cores are not the run's alone. */
    if (ideal / makespan < 0.9)
        printf("           note: a native efficiency of %.0f %% (under 90 %%) means other work shares these cores (a\n"
               "           busy or virtual machine): native timings here (calibrate, validate) will be noisy;\n"
               "           validate takes medians over rounds, and a quieter machine calibrates better.\n",
               100.0 * ideal / makespan);
    return DAHLSIM_EXIT_OK;
}

static int doctor_simulated(void)
{
    char machine[4096];
    snprintf(machine, sizeof(machine), "%s/%s", dahlsim_home(), PROBE_MACHINE_DIR);
    char platform[4200];
    snprintf(platform, sizeof(platform), "%s/bus/%s.platform.v4.xml", machine, PROBE_MACHINE_NAME);
    if (access(platform, R_OK) != 0) {
        dahlsim_error("doctor: %s: %s", platform, strerror(errno));
        fprintf(stderr, "hint: set DAHLSIM_HOME to the dahlsim source tree\n");
        return DAHLSIM_EXIT_FAILURE;
    }
    /* Overheads off: the makespan must then be exactly what the perf model predicts. */
    const struct dahlsim_env_var vars[] = {
        {"STARPU_PERF_MODEL_DIR", machine},         {"STARPU_HOSTNAME", PROBE_MACHINE_NAME},
        {"STARPU_SIMGRID_TASK_SUBMIT_COST", "0"},   {"STARPU_SIMGRID_FETCHING_INPUT_COST", "0"},
        {"STARPU_SIMGRID_QUEUE_MALLOC_COST", "0"},  {"STARPU_SIMGRID_SCHED_COST", "0"},
        {"STARPU_SILENT", "1"},
    };
    char ncpu_text[16];
    snprintf(ncpu_text, sizeof(ncpu_text), "%d", PROBE_MACHINE_NCPU);
    char *args[] = {"engine-probe", "--ncpu", ncpu_text, NULL};
    char out[4096];
    int status = dahlsim_spawn_sim(args, vars, sizeof(vars) / sizeof(vars[0]), out, sizeof(out));
    double makespan, ideal;
    if (status != 0 || !json_number(out, "makespan_us", &makespan) || !json_number(out, "ideal_us", &ideal)) {
        dahlsim_error("doctor: the simulated probe failed (exit %d)", status);
        return DAHLSIM_EXIT_FAILURE;
    }
    printf("simulated  %2d CPU  %2d tasks x %4.1f ms  makespan %8.3f ms  model  %8.3f ms  error      %5.2f %%\n",
           PROBE_MACHINE_NCPU, DAHLSIM_PROBE_TASKS, DAHLSIM_PROBE_DURATION_US / 1e3, makespan / 1e3, ideal / 1e3,
           100.0 * fabs(makespan - ideal) / ideal);
    if (fabs(makespan - ideal) > 1e-3 * ideal) {
        dahlsim_error("doctor: the simulated makespan differs from the perf model's prediction");
        return DAHLSIM_EXIT_FAILURE;
    }
    return DAHLSIM_EXIT_OK;
}

static void doctor_print_help(void)
{
    printf("usage: dahlsim doctor\n\nChecks the installation: runs %d independent %.0f ms probe tasks\n"
           "natively (this machine) and under StarPU-SimGrid (the hand-written %s machine in\n"
           "%s), and checks that the simulated makespan is what the perf model predicts.\n",
           DAHLSIM_PROBE_TASKS, DAHLSIM_PROBE_DURATION_US / 1e3, PROBE_MACHINE_NAME, PROBE_MACHINE_DIR);
}

int dahlsim_cmd_doctor(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            doctor_print_help();
            return DAHLSIM_EXIT_OK;
        }
        return dahlsim_unexpected_argument("doctor", argv[i], "usage: dahlsim doctor\n");
    }
    printf("dahlsim doctor: %d independent probe tasks of %.0f ms, scheduler eager\n", DAHLSIM_PROBE_TASKS,
           DAHLSIM_PROBE_DURATION_US / 1e3);
    int ret = doctor_native();
    if (ret != DAHLSIM_EXIT_OK)
        return ret;
    ret = doctor_simulated();
    if (ret == DAHLSIM_EXIT_OK)
        printf("ok: both StarPU flavours work\n");
    return ret;
}

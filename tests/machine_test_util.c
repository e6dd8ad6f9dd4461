/* Helpers of the `dahlsim machine synth` tests: see machine_test_util.h. */
#include "machine_test_util.h"

#include <criterion/criterion.h>

#include "dahl_test_util.h"
#include "dahlsim_machine.h"
#include "dahlsim_spec.h"

#include "dahl_catalogue.h"
#include "dahl_codelets.h"
#include "dahl_network.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dahl_test_run run;
char dir[64];
char err[1024];

void scratch(void)
{
    snprintf(dir, sizeof(dir), "/tmp/dahlsim-machine-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

void cleanup(void)
{
    if (strncmp(dir, "/tmp/dahlsim-machine-", 21) == 0)
        dahl_test_remove_tree(dir);
}

TestSuite(machine, .init = scratch, .fini = cleanup);

/* Writes text to dir/name; returns the path (static buffer). */
const char *put(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}


const char one_cpu[] = "{\"description\": \"one core\", " CPU1 "}";
const char cpu_gpu[] = "{\"description\": \"one core, one GPU\", " CPU1 ", " GPU1 "}";

void assert_spec_error(const char *text, const char *want)
{
    const char *path = put("spec.json", text);
    struct dahlsim_spec spec;
    cr_assert_eq(dahlsim_spec_load(path, &spec, NULL, err, sizeof(err)), -1, "accepted: %s", text);
    cr_assert(strncmp(err, path, strlen(path)) == 0, "the message does not start with the file: %s", err);
    cr_assert(strstr(err, want) != NULL, "expected \"%s\" in: %s", want, err);
    cr_assert(strchr(err, '\n') == NULL, "not one line: %s", err);
}


/* Runs build/dahlsim machine synth SPEC --machine NAME --out dir [extra...]. */
void synth(const char *spec, const char *name, const char *extra1, const char *extra2)
{
    char *argv[] = {DAHLSIM_BIN, "machine", "synth", (char *)spec, "--machine", (char *)name, "--out", dir,
                    "--quiet", (char *)extra1, (char *)extra2, NULL};
    dahl_test_run(&run, argv, NULL);
}

/* Names in dir (hidden ones included, not . and ..), sorted, each followed by a space (static buffer). */
const char *listing(void)
{
    static char names[1024];
    names[0] = '\0';
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);
    cr_assert_geq(n, 0);
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s ", list[i]->d_name);
        free(list[i]);
    }
    free(list);
    return names;
}

/* results.json's makespan and tasks.per_arch of dir/NAME. */
void results(const char *name, double *makespan_s, double *cpu_tasks, double *cuda_tasks)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s/results.json", dir, name);
    cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(doc);
    *makespan_s = cJSON_GetObjectItemCaseSensitive(doc, "makespan_s")->valuedouble;
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "tasks"), "per_arch");
    *cpu_tasks = cJSON_GetObjectItemCaseSensitive(arch, "cpu")->valuedouble;
    *cuda_tasks = cJSON_GetObjectItemCaseSensitive(arch, "cuda")->valuedouble;
    cJSON_Delete(doc);
}

/* Runs sim-train on dir/NAME (synthetic:12x12x1 LeNet, SIM_STEPS steps of SIM_BATCH, one CPU) into dir/OUT, with
 * StarPU-SimGrid's submission and input-fetching costs off (the perf models and the per-task microsecond
 * remain; by default StarPU-SimGrid also charges 1 us per buffer a task accesses). */
void simulate_grain(const char *name, const char *out, const char *ngpu, const char *sched,
                           const char *reduction, const char *grain)
{
    char models[256], host[128], outdir[256];
    snprintf(models, sizeof(models), "STARPU_PERF_MODEL_DIR=%s/%s/sampling", dir, name);
    snprintf(host, sizeof(host), "STARPU_HOSTNAME=%s", name);
    snprintf(outdir, sizeof(outdir), "%s/%s", dir, out);
    char *env[] = {models, host, "STARPU_SIMGRID_TASK_SUBMIT_COST=0", "STARPU_SIMGRID_FETCHING_INPUT_COST=0",
                   "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "sim-train", "--dataset",
                    "synthetic:12x12x1", "--samples", SIM_SAMPLES, "--batch", STR(SIM_BATCH), "--ncpu", "1",
                    "--ngpu", (char *)ngpu,
                    "--sched", (char *)sched, "--reduction", (char *)reduction, "--grain", (char *)grain, "--quiet",
                    "--out", outdir, NULL};
    dahl_test_run(&run, argv, env);
    cr_assert_eq(run.status, 0, "sim-train: exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "not calibrated") == NULL, "a perf model is missing: %s", run.err);
}

void simulate(const char *name, const char *out, const char *ngpu, const char *sched, const char *reduction)
{
    simulate_grain(name, out, ngpu, sched, reduction, "1");
}

/* The simulated makespan of SIM_STEPS steps (momentum 0.9, sim-train's default) on the one core: every task
 * one after the other, each its roofline time plus StarPU-SimGrid's microsecond; one worker means one REDUX
 * copy per gradient. StarPU's own REDUX reduction tasks cost their model like dahl's tasks: StarPU-SimGrid
 * 1.3.10 skips internal jobs, but scripts/patches/starpu-simgrid-redux-time.patch times reduction tasks. */
/* One step of the SIM_BATCH-sample LeNet on the spec's CPU: the tasks' roofline microseconds (*task_us), their
 * count (returned), and with StarPU-SimGrid's microsecond per task (*step_us). */
long roofline_step(const char *spec_path, enum dahl_reduction reduction, int grain, double *task_us,
                          double *step_us)
{
    struct dahlsim_spec spec;
    cr_assert_eq(dahlsim_spec_load(spec_path, &spec, NULL, err, sizeof(err)), 0, "%s", err);
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 10, &d), 0);
    struct dahl_catalogue cat;
    dahl_catalogue_init(&cat);
    struct dahl_catalogue_conf conf = {.batch = SIM_BATCH, .reduction = reduction, .momentum = true,
                                       .redux_copies = 1, .grain = grain};
    cr_assert_eq(dahl_catalogue_add_step(&cat, &d, &conf, err, sizeof(err)), 0, "%s", err);
    long tasks = 0;
    *task_us = *step_us = 0;
    for (size_t i = 0; i < cat.n; i++) {
        const struct dahl_catalogue_entry *e = &cat.entries[i];
        double t = dahlsim_roofline_us(&spec, DAHLSIM_ARCH_CPU, dahlsim_symbol_index(e->symbol), e->flops, e->bytes);
        *task_us += (double)e->count * t;
        *step_us += (double)e->count * (t + SIM_TASK_OVERHEAD_US);
        tasks += e->count;
    }
    dahl_catalogue_fini(&cat);
    return tasks;
}

void assert_roofline_sum(const char *spec_path, const char *out, enum dahl_reduction reduction, int grain)
{
    double task_us, step_us;
    long tasks = roofline_step(spec_path, reduction, grain, &task_us, &step_us);
    double makespan_s, cpu_tasks, cuda_tasks;
    results(out, &makespan_s, &cpu_tasks, &cuda_tasks);
    cr_assert_eq(cpu_tasks, SIM_STEPS * (double)tasks, "%g tasks ran, the catalogue says %ld per step", cpu_tasks,
                 tasks);
    cr_assert_eq(cuda_tasks, 0);
    /* The last step's zeroing of the gradients runs after its last SGD update, where the makespan ends. */
    double expected_s = SIM_STEPS * step_us / 1e6;
    cr_assert(fabs(makespan_s - expected_s) <= 0.01 * expected_s,
              "%s: simulated %.6f s, roofline sum %.6f s (%+.2f %%)", out, makespan_s, expected_s,
              100 * (makespan_s / expected_s - 1));
}

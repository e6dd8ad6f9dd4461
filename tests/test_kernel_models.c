/* Which perf models a simulation reads (dahlsim_kernels.h): a calibration's all-cores models, its models
 * measured with one CPU worker, or a blend of the two by worker count (dahlsim_model_dir_blend), and the
 * errors of a manifest whose "one_worker" does not hold. StarPU-free: hand-written model files. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"
#include "dahlsim_calibrate.h"
#include "dahlsim_experiment.h"
#include "dahlsim_fs.h"
#include "dahlsim_kernels.h"
#include "dahlsim_modeltable.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

/* A perf-model file of symbol for machine m in sampling/codelets/45: one CPU entry (footprint 0000abcd,
 * mean cpu_us over 20 samples) and one CUDA entry (mean 7 us), as StarPU 1.3.10 writes them. */
static void write_model(const char *sampling, const char *symbol, double cpu_us)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/codelets/45", sampling);
    cr_assert_eq(dahlsim_make_dirs(path), 0);
    snprintf(path, sizeof(path), "%s/codelets/45/%s.m", sampling, symbol);
    char text[4096];
    const char *entry = "%08x\t%-15lu\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%u\n";
    char cpu[256], gpu[256];
    snprintf(cpu, sizeof(cpu), entry, 0xabcdu, 480ul, 480.0, cpu_us, 0.5, 20 * cpu_us, 20 * (0.25 + cpu_us * cpu_us),
             20u);
    snprintf(gpu, sizeof(gpu), entry, 0xabcdu, 480ul, 480.0, 7.0, 0.5, 140.0, 20 * 49.25, 20u);
    snprintf(text, sizeof(text),
             "##################\n# Performance Model Version\n45\n\n####################\n# COMBs\n"
             "# Model for cpu0_impl0 (Comb0)\n# number of entries\n1\n"
             "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n%s\n"
             "# Model for cuda0_impl0 (Comb1)\n# number of entries\n1\n"
             "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n%s\n",
             cpu, gpu);
    dahl_test_write_file(path, text);
}

/* root/m: a calibration measured on all_cpus cores (all_cpus 0: no "one_worker"), dahl_relu_forward at 10 us
 * with every core a worker and 4 us with one. */
static void calibration(long all_cpus)
{
    snprintf(root, sizeof(root), "/tmp/dahl-kmodels-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    char dir[PATH_MAX], manifest[256];
    snprintf(dir, sizeof(dir), "%s/m/sampling", root);
    write_model(dir, "dahl_relu_forward", 10);
    snprintf(dir, sizeof(dir), "%s/m/sampling-1cpu", root);
    write_model(dir, "dahl_relu_forward", 4);
    snprintf(manifest, sizeof(manifest), "{\"one_worker\": {\"sampling\": \"sampling-1cpu\", \"all_cpus\": %ld}}",
             all_cpus);
    snprintf(dir, sizeof(dir), "%s/m/manifest.json", root);
    dahl_test_write_file(dir, all_cpus > 0 ? manifest : "{}");
}

/* The experiment of a run with cpus CPU and gpus GPU workers on root/m. */
static struct dahlsim_experiment run_of(long cpus, long gpus)
{
    struct dahlsim_experiment x = {.cpus = cpus, .gpus = gpus};
    snprintf(x.machine, sizeof(x.machine), "m");
    snprintf(x.machine_dir, sizeof(x.machine_dir), "%s/m", root);
    return x;
}

/* The CPU and CUDA means of dahl_relu_forward in the models of dir. */
static void means(const char *dir, double *cpu, double *gpu)
{
    struct dahlsim_model_table t = {0};
    cr_assert_eq(dahlsim_model_table_load(dir, "m", &t), 0, "%s", dir);
    const struct dahlsim_model_entry *c = dahlsim_model_table_find(&t, "dahl_relu_forward", "cpu0_impl0", 480, 0xabcd);
    const struct dahlsim_model_entry *g = dahlsim_model_table_find(&t, "dahl_relu_forward", "cuda0_impl0", 480, 0xabcd);
    cr_assert(c != NULL && g != NULL, "%s: entries lost", dir);
    *cpu = c->mean_us;
    *gpu = g->mean_us;
    dahlsim_model_table_fini(&t);
}

static void picks(long cpus, long gpus, const char *want_dir, const char *want_what)
{
    struct dahlsim_experiment x = run_of(cpus, gpus);
    char work[PATH_MAX], dir[PATH_MAX], want[PATH_MAX], what[256], err[512] = "";
    snprintf(work, sizeof(work), "%s/work", root);
    snprintf(want, sizeof(want), "%s/%s", root, want_dir);
    cr_assert_eq(dahlsim_kernel_models(&x, work, dir, sizeof(dir), what, sizeof(what), err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(dir, want, "%ld CPU + %ld GPU workers", cpus, gpus);
    cr_assert(strstr(what, want_what) != NULL, "%ld CPU workers: \"%s\"", cpus, what);
}

Test(kernel_models, a_run_reads_the_models_of_its_worker_count)
{
    calibration(4);
    picks(4, 0, "m/sampling", "");
    picks(8, 0, "m/sampling", "");          /* more workers than measured: the all-cores ones */
    picks(0, 0, "m/sampling", "");          /* StarPU's default: every core */
    picks(1, 1, "m/sampling", "");          /* with a GPU: not measured with one worker */
    picks(1, 0, "m/sampling-1cpu", "one CPU worker");
    picks(3, 0, "work", "interpolated at 3 of 4 CPU workers");
    double cpu, gpu;
    char work[PATH_MAX];
    snprintf(work, sizeof(work), "%s/work", root);
    means(work, &cpu, &gpu);
    cr_assert_float_eq(cpu, 4 + (10 - 4) * 2.0 / 3.0, 1e-4, "3 of 4 workers: %g us", cpu);
    cr_assert_float_eq(gpu, 7, 1e-9, "the CUDA entry changed: %g us", gpu);
    /* sum and sum of squares follow the mean, as StarPU reads them back */
    struct dahlsim_model_table t = {0};
    cr_assert_eq(dahlsim_model_table_load(work, "m", &t), 0);
    cr_assert_eq(t.v[0].nsample, 20);
    dahlsim_model_table_fini(&t);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/codelets/45/dahl_relu_forward.m", work);
    const char *text = dahl_test_read_file(path);
    char sum[64];
    snprintf(sum, sizeof(sum), "%-15e", 20 * cpu);
    cr_assert(strstr(text, sum) != NULL, "no sum %s in %s", sum, text);
    /* the one-worker models themselves are left as measured */
    snprintf(path, sizeof(path), "%s/m/sampling-1cpu", root);
    means(path, &cpu, &gpu);
    cr_assert_float_eq(cpu, 4, 1e-9);
    dahlsim_remove_tree(root);
}

Test(kernel_models, a_calibration_without_one_worker_models_reads_its_own)
{
    calibration(0);
    picks(1, 0, "m/sampling", "");
    dahlsim_remove_tree(root);
}

Test(kernel_models, a_broken_one_worker_entry_names_the_file_and_the_field)
{
    calibration(4);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/m/manifest.json", root);
    dahl_test_write_file(path, "{\"one_worker\": {\"sampling\": \"../elsewhere\", \"all_cpus\": 4}}");
    struct dahlsim_experiment x = run_of(1, 0);
    char work[PATH_MAX], dir[PATH_MAX], what[256], err[512] = "";
    snprintf(work, sizeof(work), "%s/work", root);
    cr_assert_eq(dahlsim_kernel_models(&x, work, dir, sizeof(dir), what, sizeof(what), err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, path) != NULL && strstr(err, "\"one_worker\": expected") != NULL, "%s", err);
    /* a count that is no count: every worker count is refused, not only those below it */
    dahl_test_write_file(path, "{\"one_worker\": {\"sampling\": \"sampling-1cpu\", \"all_cpus\": \"four\"}}");
    x.cpus = 8;
    cr_assert_eq(dahlsim_kernel_models(&x, work, dir, sizeof(dir), what, sizeof(what), err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "\"all_cpus\": 2 or more") != NULL, "%s", err);
    x.cpus = 1;
    dahl_test_write_file(path, "{\"one_worker\": {\"sampling\": \"sampling-gone\", \"all_cpus\": 4}}");
    cr_assert_eq(dahlsim_kernel_models(&x, work, dir, sizeof(dir), what, sizeof(what), err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "sampling-gone, which is missing") != NULL, "%s", err);
    dahlsim_remove_tree(root);
}

/* sampling/codelets/45/dahl_relu_forward.m with one CPU entry of the given mean over n samples, as StarPU
 * writes it. */
static void write_cpu_entry(const char *sampling, double mean, unsigned n)
{
    char path[PATH_MAX], text[1024];
    snprintf(path, sizeof(path), "%s/codelets/45", sampling);
    cr_assert_eq(dahlsim_make_dirs(path), 0);
    snprintf(path, sizeof(path), "%s/codelets/45/dahl_relu_forward.m", sampling);
    snprintf(text, sizeof(text),
             "##################\n# Performance Model Version\n45\n\n# Model for cpu0_impl0 (Comb0)\n"
             "# number of entries\n1\n# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n"
             "%08x\t%-15lu\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%u\n",
             0xabcdu, 480ul, 480.0, mean, 1.0, mean * n, n * (1.0 + mean * mean), n);
    dahl_test_write_file(path, text);
}

/* The CPU entry of dahl_relu_forward in dir. */
static struct dahlsim_model_entry cpu_entry(const char *dir)
{
    struct dahlsim_model_table t = {0};
    cr_assert_eq(dahlsim_model_table_load(dir, "m", &t), 0, "%s", dir);
    const struct dahlsim_model_entry *e = dahlsim_model_table_find(&t, "dahl_relu_forward", "cpu0_impl0", 480, 0xabcd);
    cr_assert_not_null(e);
    struct dahlsim_model_entry copy = *e;
    dahlsim_model_table_fini(&t);
    return copy;
}

/* Robust means (calibrate): each kept run's own mean is the entry's sums after it less those before it (all
 * of it where StarPU started the entry over); with 3 runs or more the entry takes their median, its sample
 * count kept. Runs of 10 samples at 10 us, 10 at 30 us (a slow spell), 20 at 15 us: StarPU's mean 17.5, the
 * median 15. */
Test(kernel_models, an_entry_of_three_runs_takes_their_median_mean)
{
    snprintf(root, sizeof(root), "/tmp/dahl-kmodels-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    char before[PATH_MAX], now[PATH_MAX];
    snprintf(before, sizeof(before), "%s/before", root);
    snprintf(now, sizeof(now), "%s/sampling", root);
    write_cpu_entry(now, 10, 10);
    cr_assert_eq(dahlsim_calibrate_robust_record(before, now, "m"), 0); /* no models before the first run */
    int changed = -1;
    cr_assert_eq(dahlsim_calibrate_robust_apply(now, "m", &changed), 0);
    cr_assert_eq(changed, 0, "one run: StarPU's mean stays");
    write_cpu_entry(before, 10, 10);
    write_cpu_entry(now, 20, 20);
    cr_assert_eq(dahlsim_calibrate_robust_record(before, now, "m"), 0);
    write_cpu_entry(before, 20, 20);
    write_cpu_entry(now, 17.5, 40);
    cr_assert_eq(dahlsim_calibrate_robust_record(before, now, "m"), 0);
    cr_assert_eq(dahlsim_calibrate_robust_apply(now, "m", &changed), 0);
    cr_assert_eq(changed, 1);
    struct dahlsim_model_entry e = cpu_entry(now);
    cr_assert_float_eq(e.mean_us, 15, 1e-9);
    cr_assert_eq(e.nsample, 40);
    /* StarPU started the entry over (5 samples after 40): the run's mean is all of it, 12; median of 10, 12,
     * 15, 30 */
    write_cpu_entry(before, 15, 40);
    write_cpu_entry(now, 12, 5);
    cr_assert_eq(dahlsim_calibrate_robust_record(before, now, "m"), 0);
    cr_assert_eq(dahlsim_calibrate_robust_apply(now, "m", &changed), 0);
    cr_assert_float_eq(cpu_entry(now).mean_us, 13.5, 1e-9);
    dahl_test_remove_tree(root);
}

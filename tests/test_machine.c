/* `dahlsim machine synth`: spec files are parsed strictly (every error names the file and the field); a
 * failed or refused synth leaves nothing behind and never overwrites a measured calibration; the bus and
 * platform files have the shape StarPU 1.3.10 reads; and machines synthesized from specs simulate: on a
 * 1-CPU machine the simulated makespan is the sum over the catalogue's tasks of their roofline times plus
 * StarPU-SimGrid's 1 us per task, and with a GPU the CUDA worker runs tasks. */
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

/* StarPU-SimGrid 1.3.10's polling microsecond per task (see test_flavours.c). */
#define SIM_TASK_OVERHEAD_US 1.0
/* The simulated runs: 2 steps of batch 8. */
#define SIM_STEPS 2
#define SIM_BATCH 8
#define SIM_SAMPLES "16" /* SIM_STEPS * SIM_BATCH */
#define STR_(x) #x
#define STR(x) STR_(x)


static struct dahl_test_run run;
static char dir[64];
static char err[1024];

static void scratch(void)
{
    snprintf(dir, sizeof(dir), "/tmp/dahlsim-machine-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void cleanup(void)
{
    if (strncmp(dir, "/tmp/dahlsim-machine-", 21) == 0)
        dahl_test_remove_tree(dir);
}

TestSuite(machine, .init = scratch, .fini = cleanup);

/* Writes text to dir/name; returns the path (static buffer). */
static const char *put(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define CPU1                                                                                                        \
    "\"cpu\": {\"model\": \"test core\", \"cores\": 1, \"core_gflops\": 50, \"core_mem_gbps\": 20, "                   \
    "\"task_overhead_us\": 1.5}"
#define GPU1                                                                                                        \
    "\"gpu\": {\"model\": \"test GPU\", \"count\": 1, \"fp32_tflops\": 10, \"mem_gib\": 16, \"mem_gbps\": 800},"     \
    " \"links\": {\"host_gpu_gbps\": 12, \"host_gpu_latency_us\": 10}"

static const char one_cpu[] = "{\"description\": \"one core\", " CPU1 "}";
static const char cpu_gpu[] = "{\"description\": \"one core, one GPU\", " CPU1 ", " GPU1 "}";

static void assert_spec_error(const char *text, const char *want)
{
    const char *path = put("spec.json", text);
    struct dahlsim_spec spec;
    cr_assert_eq(dahlsim_spec_load(path, &spec, NULL, err, sizeof(err)), -1, "accepted: %s", text);
    cr_assert(strncmp(err, path, strlen(path)) == 0, "the message does not start with the file: %s", err);
    cr_assert(strstr(err, want) != NULL, "expected \"%s\" in: %s", want, err);
    cr_assert(strchr(err, '\n') == NULL, "not one line: %s", err);
}

Test(machine, spec_errors_name_the_file_and_the_field)
{
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 2, \"core_gflops\": -3, "
                      "\"core_mem_gbps\": 10}}",
                      "\"cpu.core_gflops\": expected a positive number (at most 100000), got -3");
    assert_spec_error("{\"description\": \"x\", " CPU1 ", \"gpus\": {}}", "\"gpus\": unknown key (expected");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 2, \"core_gflop\": 3, "
                      "\"core_mem_gbps\": 10}}",
                      "\"cpu.core_gflop\": unknown key (expected \"model\", \"cores\", \"core_gflops\"");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"core_gflops\": 3, "
                      "\"core_mem_gbps\": 10}}",
                      "\"cpu.cores\": missing (expected an integer in [1, 128])");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 1.5, \"core_gflops\": 3, "
                      "\"core_mem_gbps\": 10}}",
                      "\"cpu.cores\": expected an integer in [1, 128], got 1.5");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 2, \"core_gflops\": \"fast\", "
                      "\"core_mem_gbps\": 10}}",
                      "\"cpu.core_gflops\": expected a positive number (at most 100000), got \"fast\"");
    assert_spec_error("{\"cpu\": {}}", "\"description\": missing (expected a string)");
    assert_spec_error("{\"description\": \"x\"}", "\"cpu\": missing (expected an object)");
    assert_spec_error("{\"description\": \"x\", " CPU1 ", \"gpu\": {\"model\": \"g\", \"count\": 1, "
                      "\"fp32_tflops\": 1, \"mem_gib\": 1, \"mem_gbps\": 1}}",
                      "\"links\": missing (expected an object with \"host_gpu_gbps\"");
    assert_spec_error("{\"description\": \"x\", " CPU1 ", \"gpu\": {\"model\": \"g\", \"count\": 9, "
                      "\"fp32_tflops\": 1, \"mem_gib\": 1, \"mem_gbps\": 1}, \"links\": {}}",
                      "\"gpu.count\": expected an integer in [1, 8], got 9");
    assert_spec_error("{\"description\": \"x\", " CPU1 ", " GPU1 ", \"efficiency\": {\"cpu\": {\"dahl_conv3d\": {}}}}",
                      "\"efficiency.cpu.dahl_conv3d\": unknown perf-model symbol");
    assert_spec_error("{\"description\": \"x\", " CPU1 ", \"efficiency\": {\"cuda\": {\"dahl_zero\": "
                      "{\"compute\": 0}}}}",
                      "\"efficiency.cuda.dahl_zero.compute\": expected a positive number");
    assert_spec_error("{\"description\": \"x\", " CPU1 ", \"efficiency\": {\"gpu\": {}}}",
                      "\"efficiency.gpu\": unknown key (expected \"cpu\", \"cuda\")");
    assert_spec_error("{\"description\": \"x\",\n " CPU1 ",\n \"gpu\": [}", "line 3, column 10: not valid JSON (unexpected '}')");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 2, \"core_gflops\": 3, "
                      "\"core_mem_gbps\": 10, \"idle_w\": 5, \"full_w\": 4}}",
                      "\"cpu.full_w\": expected at least cpu.idle_w (5 W), got 4");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 2, \"core_gflops\": 3, "
                      "\"core_mem_gbps\": 10, \"full_w\": 4}}",
                      "\"cpu.idle_w\": missing (expected a number");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 1, \"core_gflops\": 50, "
                      "\"core_mem_gbps\": 20, \"idle_w\": 2, \"full_w\": 10}, " GPU1 "}",
                      "\"gpu.idle_w\", \"gpu.full_w\": missing (expected power figures for the GPU too");

    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 1, \"core_gflops\": 50, "
                      "\"core_mem_gbps\": 20, \"idle_w\": 2, \"full_w\": 10, \"pstates\": [{\"ghz\": 1}]}}",
                      "\"cpu.pstates\": given without \"cpu.ghz\"");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 1, \"core_gflops\": 50, "
                      "\"core_mem_gbps\": 20, \"idle_w\": 2, \"full_w\": 10, \"ghz\": 2, \"pstates\": "
                      "[{\"ghz\": 1, \"idle_w\": -1, \"full_w\": 4}]}}",
                      "\"cpu.pstates[0].idle_w\": expected a number in [0, 100000], got -1");
    assert_spec_error("{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 1, \"core_gflops\": 50, "
                      "\"core_mem_gbps\": 20, \"idle_w\": 2, \"full_w\": 10, \"ghz\": 2, \"pstates\": []}}",
                      "\"cpu.pstates\": expected an array of 1 to 8 states");

    struct dahlsim_spec spec;
    cr_assert_eq(dahlsim_spec_load("/nonexistent/spec.json", &spec, NULL, err, sizeof(err)), -1);
    cr_assert(strstr(err, "/nonexistent/spec.json: cannot read: No such file or directory") != NULL, "%s", err);
}

Test(machine, spec_values_and_efficiency_overrides)
{
    const char *path = put("spec.json", "{\"description\": \"x\", " CPU1 ", " GPU1 ", \"efficiency\": {\"cuda\": "
                                        "{\"dahl_conv2d_forward\": {\"memory\": 0.25}}}}");
    struct dahlsim_spec spec;
    cr_assert_eq(dahlsim_spec_load(path, &spec, NULL, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(spec.cpu.cores, 1);
    cr_assert_eq(spec.gpu.count, 1);
    cr_assert_float_eq(spec.links.gpu_gpu_gbps, 6.0, 1e-12, "through the host: half the host link");
    cr_assert(!spec.links.gpu_gpu_direct);
    int k = dahlsim_symbol_index("dahl_conv2d_forward");
    struct dahlsim_efficiency def;
    cr_assert(dahlsim_efficiency_default("dahl_conv2d_forward", DAHLSIM_ARCH_CUDA, &def));
    cr_assert_eq(spec.eff[DAHLSIM_ARCH_CUDA][k].memory, 0.25);
    cr_assert_eq(spec.eff[DAHLSIM_ARCH_CUDA][k].compute, def.compute, "the factor not given keeps its default");
    cr_assert(spec.eff_from_spec[DAHLSIM_ARCH_CUDA][k]);
    cr_assert(!spec.eff_from_spec[DAHLSIM_ARCH_CPU][k]);
    /* Roofline: 1 GFLOP at 50 GFLOP/s and efficiency e, or 1 GB at 20 GB/s: the larger, plus the overhead. */
    struct dahlsim_efficiency cpu = spec.eff[DAHLSIM_ARCH_CPU][k];
    cr_assert_float_eq(dahlsim_roofline_us(&spec, DAHLSIM_ARCH_CPU, k, 1e9, 0), 1e6 / (50 * cpu.compute) + 1.5, 1e-6);
    cr_assert_float_eq(dahlsim_roofline_us(&spec, DAHLSIM_ARCH_CPU, k, 0, 1e9), 1e6 / (20 * cpu.memory) + 1.5, 1e-6);
    /* Every dahl symbol has a default on both architectures. */
    size_t n;
    const char *const *symbols = dahl_codelet_symbols(&n);
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < DAHLSIM_NARCHS; a++)
            cr_assert(dahlsim_efficiency_default(symbols[i], (enum dahlsim_arch)a, &def), "%s", symbols[i]);
}

/* Runs build/dahlsim machine synth SPEC --machine NAME --out dir [extra...]. */
static void synth(const char *spec, const char *name, const char *extra1, const char *extra2)
{
    char *argv[] = {DAHLSIM_BIN, "machine", "synth", (char *)spec, "--machine", (char *)name, "--out", dir,
                    "--quiet", (char *)extra1, (char *)extra2, NULL};
    dahl_test_run(&run, argv, NULL);
}

/* Names in dir (hidden ones included, not . and ..), sorted, each followed by a space (static buffer). */
static const char *listing(void)
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

Test(machine, a_bad_spec_is_an_input_error_and_leaves_nothing)
{
    char path[256];
    snprintf(path, sizeof(path), "%s", put("bad.json", "{\"description\": \"x\", \"cpu\": {\"model\": \"m\", "
                                                      "\"cores\": 2, \"core_gflops\": -3, \"core_mem_gbps\": 10}}"));
    synth(path, "bad", NULL, NULL);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    char want[512];
    snprintf(want, sizeof(want), "dahlsim: error: %s: \"cpu.core_gflops\": expected a positive number", path);
    cr_assert(strncmp(run.err, want, strlen(want)) == 0, "%s", run.err);
    cr_assert_str_eq(listing(), "bad.json ", "nothing but the spec in %s", dir);

    synth(path, "../escape", NULL, NULL);
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "--machine: expected a name") != NULL, "%s", run.err);
    put("good.json", one_cpu);
    char good[256];
    snprintf(good, sizeof(good), "%s/good.json", dir);
    synth(good, "m", "--cover", "synthetic:2x2x1");
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "--cover synthetic:2x2x1: model lenet: a 2x2x1 image is too small for LeNet") != NULL,
              "%s", run.err);
    synth(good, "m", "--cover", "fashion-mnist,model=resnet");
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "--cover fashion-mnist,model=resnet: model: resnet: No such file") != NULL, "%s",
              run.err);
    cr_assert(strstr(run.err, "hint: a model is lenet, vgg-small, resnet:DEPTH, deep, deep:BLOCKS or a JSON model file") !=
                  NULL,
              "%s", run.err);
    synth(good, "m", "--cover", "fashion-mnist:32,model=resnet:9");
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "resnet:DEPTH: expected 8, 14, 20, 26 or 32 (6n + 2), got \"9\"") != NULL, "%s", run.err);
    cr_assert_str_eq(listing(), "bad.json good.json ", "nothing written in %s", dir);
}

Test(machine, never_overwrites_a_measured_calibration)
{
    char spec[256], machine[256], manifest[300];
    snprintf(spec, sizeof(spec), "%s", put("spec.json", one_cpu));
    snprintf(machine, sizeof(machine), "%s/real", dir);
    cr_assert_eq(mkdir(machine, 0777), 0);
    const char *measured = "{\"machine\": \"real\", \"source\": \"measured\"}\n";
    put("real/manifest.json", measured);
    synth(spec, "real", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "is not a roofline machine (its manifest.json says \"source\": \"measured\"): refusing "
                              "to overwrite it") != NULL,
              "%s", run.err);
    snprintf(manifest, sizeof(manifest), "%s/manifest.json", machine);
    cr_assert_str_eq(dahl_test_read_file(manifest), measured);
    cr_assert_str_eq(listing(), "real spec.json ", "no temporary left in %s", dir);

    /* A roofline machine is replaced whole. */
    synth(spec, "synth", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    synth(spec, "synth", "--cover", "synthetic:16x16x1");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    snprintf(manifest, sizeof(manifest), "%s/synth/manifest.json", dir);
    cJSON *doc = cJSON_Parse(dahl_test_read_file(manifest));
    cr_assert_not_null(doc);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(doc, "source")->valuestring, "roofline");
    const cJSON *covered = cJSON_GetObjectItemCaseSensitive(doc, "covered");
    cr_assert_eq(cJSON_GetArraySize(covered), 1);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(covered, 0), "dataset")->valuestring,
                     "synthetic:16x16x1");
    cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(doc, "spec"));
    cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "versions"), "commit"));
    cJSON_Delete(doc);
    cr_assert_str_eq(listing(), "real spec.json synth ", "no temporary or old copy left in %s", dir);
}

Test(machine, the_simgrid_binary_refuses)
{
    char *env[] = {"STARPU_PERF_MODEL_DIR=" DAHLSIM_SOURCE_DIR "/tests/data/probe-machine",
                   "STARPU_HOSTNAME=probe-2cpu", "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "machine", "synth", "x.json",
                    "--machine", "x", NULL};
    dahl_test_run(&run, argv, env);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "the SimGrid binary cannot write machines") != NULL, "%s", run.err);
}

/* The files StarPU reads, for a 2-GPU machine with peer links: node order RAM, CUDA0, CUDA1; every bus row
 * padded with a trailing nan; one perf-model combination per architecture. */
Test(machine, bus_platform_and_model_files)
{
    const char *path = put("spec.json", "{\"description\": \"two GPUs\", " CPU1 ", \"gpu\": {\"model\": \"g\", "
                                        "\"count\": 2, \"fp32_tflops\": 10, \"mem_gib\": 2, \"mem_gbps\": 800}, "
                                        "\"links\": {\"host_gpu_gbps\": 12, \"host_gpu_latency_us\": 10, "
                                        "\"gpu_gpu_gbps\": 50, \"gpu_gpu_latency_us\": 3}}");
    struct dahlsim_spec spec;
    cr_assert_eq(dahlsim_spec_load(path, &spec, NULL, err, sizeof(err)), 0, "%s", err);
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 10, &d), 0);
    struct dahl_catalogue cat;
    dahl_catalogue_init(&cat);
    struct dahl_catalogue_conf conf = {.batch = 2, .reduction = DAHL_REDUCTION_REDUX, .momentum = true,
                                       .redux_copies = 1};
    cr_assert_eq(dahl_catalogue_add_step(&cat, &d, &conf, err, sizeof(err)), 0, "%s", err);
    char sampling[256], file[320];
    snprintf(sampling, sizeof(sampling), "%s/sampling", dir);
    cr_assert_eq(dahlsim_machine_write_sampling(sampling, "g2", &spec, path, &cat, err, sizeof(err)), 0, "%s", err);

    snprintf(file, sizeof(file), "%s/bus/g2.bandwidth", sampling);
    cr_assert_str_eq(dahl_test_read_file(file), "# to 0\t\tto 1\t\tto 2\t\tto 3\t\t\n"
                                                "0.000000e+00\t1.200000e+04\t1.200000e+04\tnan\n"
                                                "1.200000e+04\t0.000000e+00\t5.000000e+04\tnan\n"
                                                "1.200000e+04\t5.000000e+04\t0.000000e+00\tnan\n");
    snprintf(file, sizeof(file), "%s/bus/g2.latency", sampling);
    const char *latency = dahl_test_read_file(file);
    cr_assert(strstr(latency, "1.000000e+01\t0.000000e+00\t3.000000e+00\tnan\n") != NULL, "%s", latency);
    snprintf(file, sizeof(file), "%s/bus/g2.config", sampling);
    const char *config = dahl_test_read_file(file);
    cr_assert(strstr(config, "\n2 # Number of CUDA devices\n") != NULL, "%s", config);
    snprintf(file, sizeof(file), "%s/bus/g2.platform.v4.xml", sampling);
    const char *xml = dahl_test_read_file(file);
    cr_assert(strstr(xml, "<platform version=\"4.1\">") != NULL);
    cr_assert(strstr(xml, "<host id=\"CPU0\" speed=\"1Gf\"/>") != NULL);
    cr_assert(strstr(xml, "<host id=\"CUDA1\" speed=\"1Gf\">\n      <prop id=\"memsize\" value=\"2147483648\"/>") !=
                  NULL,
              "%s", xml);
    cr_assert(strstr(xml, "<link id=\"RAM-CUDA0\" bandwidth=\"12GBps\" latency=\"10us\"/>") != NULL, "%s", xml);
    cr_assert(strstr(xml, "<route src=\"CUDA0\" dst=\"CUDA1\" symmetrical=\"NO\"><link_ctn id=\"CUDA0-CUDA1\"/>"
                          "</route>") != NULL,
              "peer links bypass the host: %s", xml);
    cr_assert(strstr(xml, "<route src=\"RAM\" dst=\"CUDA1\" symmetrical=\"NO\"><link_ctn id=\"RAM-CUDA1\"/><link_ctn "
                          "id=\"Host\"/></route>") != NULL,
              "%s", xml);

    snprintf(file, sizeof(file), "%s/codelets/45/dahl_conv2d_forward.g2", sampling);
    const char *model = dahl_test_read_file(file);
    cr_assert(strncmp(model, "##################\n# Performance Model Version\n45\n", 49) == 0, "%s", model);
    cr_assert(strstr(model, "# number of combinations\n3\n") != NULL, "%s", model);
    cr_assert(strstr(model, "# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3, MPI_MS - 5)\n1\n"
                            "####################\n# DEV_0\n# device id \n1\n") != NULL,
              "%s", model);
    /* The first conv layer's entry on the CPU: its footprint, size, flops, the roofline time, 10 samples. */
    struct dahl_conv2d_shape s = {.c = 1, .h = 12, .w = 12, .f = 6, .kh = 5, .kw = 5, .stride = 1, .pad = 2};
    const struct dahl_catalogue_entry *e =
        dahl_catalogue_find(&cat, "dahl_conv2d_forward", dahl_conv2d_footprint_of(&s));
    cr_assert_not_null(e);
    char line[256];
    double t = dahlsim_roofline_us(&spec, DAHLSIM_ARCH_CPU, dahlsim_symbol_index("dahl_conv2d_forward"), e->flops,
                                   e->bytes);
    snprintf(line, sizeof(line), "%08x\t%-15zu\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t10\n", dahl_conv2d_footprint_of(&s),
             e->size, e->flops, t, 0.0, 10 * t, 10 * t * t);
    cr_assert(strstr(model, line) != NULL, "no line\n%s in\n%s", line, model);
    dahl_catalogue_fini(&cat);
}

/* results.json's makespan and tasks.per_arch of dir/NAME. */
static void results(const char *name, double *makespan_s, double *cpu_tasks, double *cuda_tasks)
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
static void simulate_grain(const char *name, const char *out, const char *ngpu, const char *sched,
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

static void simulate(const char *name, const char *out, const char *ngpu, const char *sched, const char *reduction)
{
    simulate_grain(name, out, ngpu, sched, reduction, "1");
}

/* The simulated makespan of SIM_STEPS steps (momentum 0.9, sim-train's default) on the one core: every task
 * one after the other, each its roofline time plus StarPU-SimGrid's microsecond; one worker means one REDUX
 * copy per gradient. StarPU's own REDUX reduction tasks cost their model like dahl's tasks: StarPU-SimGrid
 * 1.3.10 skips internal jobs, but scripts/patches/starpu-simgrid-redux-time.patch times reduction tasks. */
/* One step of the SIM_BATCH-sample LeNet on the spec's CPU: the tasks' roofline microseconds (*task_us), their
 * count (returned), and with StarPU-SimGrid's microsecond per task (*step_us). */
static long roofline_step(const char *spec_path, enum dahl_reduction reduction, int grain, double *task_us,
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

static void assert_roofline_sum(const char *spec_path, const char *out, enum dahl_reduction reduction, int grain)
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

Test(machine, one_cpu_makespan_is_the_roofline_sum)
{
    char spec_path[256];
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", one_cpu));
    synth(spec_path, "one", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    simulate("one", "redux", "0", "eager", "redux");
    assert_roofline_sum(spec_path, "redux", DAHL_REDUCTION_REDUX, 1);
    simulate("one", "manual", "0", "eager", "manual");
    assert_roofline_sum(spec_path, "manual", DAHL_REDUCTION_MANUAL, 1);
}

/* Tasks over several samples (--cover ...,grains=N): every grouped task has its model, and the makespan on
 * one core is again the roofline sum of the grouped catalogue (fewer tasks, so fewer per-task microseconds,
 * each task's parameters counted once). */
Test(machine, one_cpu_grained_makespan_is_the_roofline_sum)
{
    char spec_path[256];
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", one_cpu));
    synth(spec_path, "one", "--cover", "synthetic:12x12x1,grains=" STR(SIM_BATCH));
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    simulate_grain("one", "g3", "0", "eager", "redux", "3");
    assert_roofline_sum(spec_path, "g3", DAHL_REDUCTION_REDUX, 3);
    simulate_grain("one", "gb", "0", "eager", "manual", STR(SIM_BATCH));
    assert_roofline_sum(spec_path, "gb", DAHL_REDUCTION_MANUAL, SIM_BATCH);
    double one_s, grouped_s, cpu, cuda;
    simulate("one", "g1", "0", "eager", "redux");
    results("g1", &one_s, &cpu, &cuda);
    results("g3", &grouped_s, &cpu, &cuda);
    cr_assert_lt(grouped_s, one_s, "grain 3 %.6f s, grain 1 %.6f s: fewer tasks, less overhead", grouped_s, one_s);
}

Test(machine, a_gpu_machine_runs_tasks_on_the_gpu)
{
    char spec_path[256];
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", cpu_gpu));
    synth(spec_path, "gpu", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    simulate("gpu", "run", "1", "dmda", "redux");
    double makespan_s, cpu_tasks, cuda_tasks;
    results("run", &makespan_s, &cpu_tasks, &cuda_tasks);
    cr_assert_gt(cuda_tasks, 0, "no task ran on the GPU (%g on the CPU)", cpu_tasks);
    cr_assert_gt(makespan_s, 0);
}

/* Power figures in the spec: the platform turns SimGrid's host energy plugin on and gives each core its watts,
 * and results.json's "energy" has the core's joules over the training. One CPU worker runs every task in
 * turn, so the core draws nearly its full-load watts for the whole makespan. Without figures, "energy" is
 * null. */
Test(machine, energy_is_each_hosts_watts_over_the_training)
{
    char spec_path[256];
    snprintf(spec_path, sizeof(spec_path), "%s",
             put("spec.json", "{\"description\": \"one core with watts\", \"cpu\": {\"model\": \"test core\", "
                              "\"cores\": 1, \"core_gflops\": 50, \"core_mem_gbps\": 20, \"task_overhead_us\": 1.5, "
                              "\"idle_w\": 2, \"full_w\": 10}}"));
    synth(spec_path, "watts", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    char file[256];
    snprintf(file, sizeof(file), "%s/watts/sampling/bus/watts.platform.v4.xml", dir);
    const char *xml = dahl_test_read_file(file);
    cr_assert(strstr(xml, "<prop id=\"plugin\" value=\"host_energy\"></prop>") != NULL, "%s", xml);
    cr_assert(strstr(xml, "<host id=\"CPU0\" speed=\"1Gf\">\n      <prop id=\"wattage_per_state\" value=\"2:10\"/>") !=
                  NULL,
              "%s", xml);
    simulate("watts", "energy", "0", "eager", "redux");
    char path[256];
    snprintf(path, sizeof(path), "%s/energy/results.json", dir);
    cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(doc);
    double makespan = cJSON_GetObjectItemCaseSensitive(doc, "makespan_s")->valuedouble;
    const cJSON *energy = cJSON_GetObjectItemCaseSensitive(doc, "energy");
    cr_assert(cJSON_IsObject(energy), "no energy block");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(energy, "source")->valuestring, "spec sheet");
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(energy, "hosts");
    cr_assert_eq(cJSON_GetArraySize(hosts), 1, "one core, no GPU: one host");
    double cpu0 = cJSON_GetObjectItemCaseSensitive(hosts, "CPU0")->valuedouble;
    /* Loaded while a task runs (its roofline time), idle for StarPU-SimGrid's microsecond per task (a sleep,
     * not work): 10 W for the tasks' time and 2 W for the rest of the makespan. */
    double task_us, step_us;
    roofline_step(spec_path, DAHL_REDUCTION_REDUX, 1, &task_us, &step_us);
    double busy_s = SIM_STEPS * task_us / 1e6, expected = 10 * busy_s + 2 * (makespan - busy_s);
    cr_assert(fabs(cpu0 - expected) <= 0.02 * expected,
              "CPU0 %.6g J over %.6g s, %.6g s of it in tasks: expected %.6g J (%+.2f %%)", cpu0, makespan, busy_s,
              expected, 100 * (cpu0 / expected - 1));
    cr_assert_float_eq(cJSON_GetObjectItemCaseSensitive(energy, "total_j")->valuedouble, cpu0, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItemCaseSensitive(energy, "per_sample_j")->valuedouble,
                       cpu0 / (SIM_STEPS * SIM_BATCH), 1e-12);
    cJSON_Delete(doc);

    /* the same machine without watts: no energy */
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", one_cpu));
    synth(spec_path, "nowatts", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    simulate("nowatts", "noenergy", "0", "eager", "redux");
    snprintf(path, sizeof(path), "%s/noenergy/results.json", dir);
    doc = cJSON_Parse(dahl_test_read_file(path));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(doc, "energy")));
    cJSON_Delete(doc);
}

/* A frequency state by the stated rule: at half the clock a compute-bound task takes twice as long (the
 * one-core LeNet's makespan roughly doubles: its tasks are mostly compute-bound) at the state's watts, and
 * the manifest says which state and rule; a state the spec lacks is refused. */
Test(machine, a_pstate_scales_compute_and_takes_its_watts)
{
    char spec_path[256];
    snprintf(spec_path, sizeof(spec_path), "%s",
             put("spec.json", "{\"description\": \"one core, two clocks\", \"cpu\": {\"model\": \"test core\", "
                              "\"cores\": 1, \"core_gflops\": 50, \"core_mem_gbps\": 1000, \"task_overhead_us\": 1.5, "
                              "\"idle_w\": 2, \"full_w\": 10, \"ghz\": 2, \"pstates\": [{\"ghz\": 1, \"idle_w\": 2, "
                              "\"full_w\": 4}]}}"));
    synth(spec_path, "fast", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    char *argv[] = {DAHLSIM_BIN, "machine", "synth", spec_path, "--machine", "slow", "--out", dir, "--quiet",
                    "--cover", "synthetic:12x12x1", "--pstate", "1", NULL};
    dahl_test_run(&run, argv, NULL);
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    char path[256];
    snprintf(path, sizeof(path), "%s/slow/manifest.json", dir);
    cJSON *m = cJSON_Parse(dahl_test_read_file(path));
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(m, "pstate");
    cr_assert(cJSON_IsObject(ps));
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(ps, "ghz")->valuedouble, 1);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(ps, "core_gflops")->valuedouble, 25);
    cJSON_Delete(m);
    snprintf(path, sizeof(path), "%s/slow/sampling/bus/slow.platform.v4.xml", dir);
    cr_assert(strstr(dahl_test_read_file(path), "\"wattage_per_state\" value=\"2:4\"") != NULL);
    simulate("fast", "pfast", "0", "eager", "redux");
    simulate("slow", "pslow", "0", "eager", "redux");
    double t[2];
    const char *outs[2] = {"pfast", "pslow"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s/results.json", dir, outs[i]);
        cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
        cr_assert_not_null(doc);
        t[i] = cJSON_GetObjectItemCaseSensitive(doc, "makespan_s")->valuedouble;
        cJSON_Delete(doc);
    }
    cr_assert(t[1] > 1.6 * t[0] && t[1] < 2.05 * t[0], "half the clock: %.6g s against %.6g s", t[1], t[0]);
    char *bad[] = {DAHLSIM_BIN, "machine", "synth", spec_path, "--machine", "none", "--out", dir, "--quiet",
                   "--pstate", "2", NULL};
    dahl_test_run(&run, bad, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--pstate: expected a state of") != NULL && strstr(run.err, "(1 to 1), got 2") != NULL,
              "%s", run.err);
}

/* --fit recovers what a "measured" calibration was made with: here one written by the same roofline with
 * every CPU efficiency 0.4 and a 2.5 us task overhead. */
Test(machine, fit_recovers_known_efficiencies)
{
    size_t n;
    const char *const *symbols = dahl_codelet_symbols(&n);
    char text[4096] = "{\"description\": \"x\", \"cpu\": {\"model\": \"m\", \"cores\": 1, \"core_gflops\": 50, "
                      "\"core_mem_gbps\": 20, \"task_overhead_us\": 2.5}, \"efficiency\": {\"cpu\": {";
    for (size_t i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\"%s\": {\"compute\": 0.4, \"memory\": 0.4}",
                 i > 0 ? ", " : "", symbols[i]);
    strcat(text, "}}}");
    char truth[256], spec[256];
    snprintf(truth, sizeof(truth), "%s", put("truth.json", text));
    snprintf(spec, sizeof(spec), "%s", put("spec.json", one_cpu));
    synth(truth, "meas", "--cover", "synthetic:32x32x3");
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    char meas[256];
    snprintf(meas, sizeof(meas), "%s/meas", dir);
    char *argv[] = {DAHLSIM_BIN, "machine", "synth", spec, "--machine", "fitted", "--out", dir, "--cover",
                    "synthetic:32x32x3", "--fit", meas, NULL};
    dahl_test_run(&run, argv, NULL);
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "CPU fitted to") != NULL, "%s", run.err);

    char path[256];
    snprintf(path, sizeof(path), "%s/fitted/manifest.json", dir);
    cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(doc);
    const cJSON *fit = cJSON_GetObjectItemCaseSensitive(doc, "fit");
    double overhead = cJSON_GetObjectItemCaseSensitive(fit, "cpu_task_overhead_us")->valuedouble;
    cr_assert_float_eq(overhead, 2.5, 0.05, "fitted overhead %g us", overhead);
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "efficiency"), "cpu");
    const char *const big[] = {"dahl_conv2d_forward", "dahl_conv2d_backward_weights", "dahl_relu_forward",
                               "dahl_dense_forward", "dahl_sgd_update"};
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        const cJSON *eff = cJSON_GetObjectItemCaseSensitive(cpu, big[i]);
        double e = cJSON_GetObjectItemCaseSensitive(eff, "compute")->valuedouble;
        cr_assert_float_eq(e, 0.4, 0.04, "%s: fitted efficiency %g", big[i], e);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(eff, "from")->valuestring, "fit");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(fit, "symbols"), big[i]);
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(per, "fitted")), "%s not fitted", big[i]);
    }
    cJSON_Delete(doc);

    /* A directory without perf models is an input error. */
    char *bad[] = {DAHLSIM_BIN, "machine", "synth", spec, "--machine", "f2", "--out", dir, "--fit", dir, NULL};
    dahl_test_run(&run, bad, NULL);
    cr_assert_eq(run.status, 2, "exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "--fit: ") != NULL && strstr(run.err, "no perf model found") != NULL, "%s", run.err);
}

/* "grain" in a scenario on a synthesized machine (DAHLSIM_HOME=dir, machines in dir/calibration): "auto"
 * picks among the grains the machine covers and says how in results.json; on a machine that covers none,
 * auto keeps 1 and a given grain is refused with the synth hint. */
Test(machine, auto_grain_picks_among_the_covered_grains)
{
    char cal[128], spec_path[256], home[96];
    snprintf(home, sizeof(home), "DAHLSIM_HOME=%s", dir);
    snprintf(cal, sizeof(cal), "%s/calibration", dir);
    cr_assert_eq(mkdir(cal, 0755), 0);
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", "{\"description\": \"two cores\", \"cpu\": "
                                                                 "{\"model\": \"test core\", \"cores\": 2, "
                                                                 "\"core_gflops\": 50, \"core_mem_gbps\": 20, "
                                                                 "\"task_overhead_us\": 1.5}}"));
    const char *covers[] = {"synthetic:12x12x1,grains=8", "synthetic:12x12x1"};
    const char *names[] = {"grained", "plain"};
    char *env[] = {home, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    for (int m = 0; m < 2; m++) {
        char *argv[] = {DAHLSIM_BIN, "machine", "synth", spec_path, "--machine", (char *)names[m], "--out", cal,
                        "--quiet", "--cover", (char *)covers[m], NULL};
        dahl_test_run(&run, argv, NULL);
        cr_assert_eq(run.status, 0, "%s", run.err);
        char text[256], out[128];
        snprintf(text, sizeof(text),
                 "{\"machine\": \"%s\", \"dataset\": \"synthetic:12x12x1\", \"samples\": 16, \"batch\": 8, "
                 "\"cpus\": 2, \"grain\": \"auto\"}",
                 names[m]);
        const char *scenario = put("auto.json", text);
        snprintf(out, sizeof(out), "%s/out-%s", dir, names[m]);
        char *run_argv[] = {DAHLSIM_BIN, "run", (char *)scenario, "--out", out, "--quiet", NULL};
        dahl_test_run(&run, run_argv, env);
        cr_assert_eq(run.status, 0, "%s: %s", names[m], run.err);
        char path[160];
        snprintf(path, sizeof(path), "%s/results.json", out);
        cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
        cr_assert_not_null(doc);
        const char *choice = cJSON_GetObjectItemCaseSensitive(doc, "grain_choice")->valuestring;
        int grain = (int)cJSON_GetObjectItemCaseSensitive(doc, "grain")->valuedouble;
        char want[64];
        snprintf(want, sizeof(want), "auto: %d of 1%s;", grain, m == 0 ? ", 2, 4, 8" : "");
        cr_assert(strncmp(choice, want, strlen(want)) == 0, "%s: grain %d, \"%s\"", names[m], grain, choice);
        cr_assert(m == 1 || grain > 1, "two cores, 8 samples of 12x12: fewer, larger tasks are predicted faster");
        cJSON_Delete(doc);
    }
    const char *scenario = put("four.json", "{\"machine\": \"plain\", \"dataset\": \"synthetic:12x12x1\", "
                                            "\"samples\": 16, \"batch\": 8, \"grain\": 4}");
    char *check[] = {DAHLSIM_BIN, "check", (char *)scenario, NULL};
    dahl_test_run(&run, check, env);
    dahl_test_assert_input_error(&run, "grain 4 on a machine without grains",
                                 "\"grain\": expected grains calibration plain covers: it has no tasks over 4 samples",
                                 "got 4");
    cr_assert(strstr(run.err, "hint: a synthesized machine: dahlsim machine synth SPEC --machine plain --cover "
                              "synthetic:12x12x1,grains=4") != NULL,
              "%s", run.err);
}

/* "sched_gamma": dmda weighs each task's joules (the codelets' energy models, from the machine's watts). On a
 * core and a GPU whose every task is a 50 us launch drawing 300 W, against the core's roofline microseconds
 * at 10 W, a large gamma puts the tasks on the core, and the run uses less energy; without power figures,
 * or with a policy that weighs no energy, the key is refused. */
Test(machine, sched_gamma_weighs_the_codelets_joules)
{
    char cal[128], spec_path[256], home[96];
    snprintf(home, sizeof(home), "DAHLSIM_HOME=%s", dir);
    snprintf(cal, sizeof(cal), "%s/calibration", dir);
    cr_assert_eq(mkdir(cal, 0755), 0);
    snprintf(spec_path, sizeof(spec_path), "%s",
             put("spec.json", "{\"description\": \"a core and a costly GPU\", \"cpu\": {\"model\": \"test core\", "
                              "\"cores\": 1, \"core_gflops\": 50, \"core_mem_gbps\": 20, \"task_overhead_us\": 1.5, "
                              "\"idle_w\": 2, \"full_w\": 10}, \"gpu\": {\"model\": \"test GPU\", \"count\": 1, "
                              "\"fp32_tflops\": 10, \"mem_gib\": 16, \"mem_gbps\": 800, \"task_overhead_us\": 50, "
                              "\"idle_w\": 20, \"full_w\": 300}, \"links\": {\"host_gpu_gbps\": 12, "
                              "\"host_gpu_latency_us\": 10}}"));
    char *argv[] = {DAHLSIM_BIN, "machine", "synth", spec_path, "--machine", "costly", "--out", cal, "--quiet",
                    "--cover", "synthetic:12x12x1", NULL};
    dahl_test_run(&run, argv, NULL);
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *env[] = {home, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
    double cuda[2], joules[2];
    const char *gammas[2] = {"0", "1e9"};
    for (int i = 0; i < 2; i++) {
        char text[256], out[128], path[160];
        snprintf(text, sizeof(text), "{\"machine\": \"costly\", \"dataset\": \"synthetic:12x12x1\", \"samples\": 32, "
                                     "\"batch\": 8, \"scheduler\": \"dmda\", \"sched_gamma\": %s}", gammas[i]);
        const char *scenario = put("gamma.json", text);
        snprintf(out, sizeof(out), "%s/gamma-%d", dir, i);
        char *run_argv[] = {DAHLSIM_BIN, "run", (char *)scenario, "--out", out, "--quiet", NULL};
        dahl_test_run(&run, run_argv, env);
        cr_assert_eq(run.status, 0, "gamma %s: %s", gammas[i], run.err);
        snprintf(path, sizeof(path), "%s/results.json", out);
        cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
        cr_assert_not_null(doc);
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(doc, "sched_gamma");
        cr_assert(i == 0 ? cJSON_IsNull(g) : g->valuedouble == 1e9);
        cuda[i] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
                                                       cJSON_GetObjectItemCaseSensitive(doc, "tasks"), "per_arch"),
                                                   "cuda")->valuedouble;
        joules[i] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "energy"), "total_j")
                        ->valuedouble;
        cJSON_Delete(doc);
    }
    cr_assert_lt(cuda[1], cuda[0] / 2, "a joule worth 1e9 us keeps the GPU's tasks down: %g against %g", cuda[1],
                 cuda[0]);
    cr_assert_lt(joules[1], joules[0], "and the run uses less energy: %g J against %g J", joules[1], joules[0]);
    const char *lws = put("lws.json", "{\"machine\": \"costly\", \"dataset\": \"synthetic:12x12x1\", \"samples\": 32, "
                                      "\"batch\": 8, \"scheduler\": \"lws\", \"sched_gamma\": 1000}");
    char *check[] = {DAHLSIM_BIN, "check", (char *)lws, NULL};
    dahl_test_run(&run, check, env);
    dahl_test_assert_input_error(&run, "gamma with lws", "\"sched_gamma\": expected 0 with scheduler lws", "got 1000");
}

/* `machine power`: measured watts for a calibration that had none (here a synthesized one without figures):
 * its hosts get them, the simulated energy reports their source, and the makespan does not move; a second
 * call replaces the figures; a GPU machine needs --gpu too, and bad watts are refused. */
Test(machine, power_gives_a_calibration_measured_watts)
{
    char spec_path[256], cal[128];
    snprintf(cal, sizeof(cal), "%s", dir);
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", one_cpu));
    synth(spec_path, "plain", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "%s", run.err);
    simulate("plain", "before", "0", "eager", "redux");
    for (int i = 0; i < 2; i++) {
        char *argv[] = {DAHLSIM_BIN, "machine", "power", "plain", "--dir", cal, "--cpu", i == 0 ? "1:5" : "2:10",
                        "--source", "wattmeter, test", NULL};
        dahl_test_run(&run, argv, NULL);
        cr_assert_eq(run.status, 0, "%s", run.err);
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/plain/sampling/bus/plain.platform.v4.xml", dir);
    const char *xml = dahl_test_read_file(path);
    cr_assert(strstr(xml, "value=\"2:10\"") != NULL && strstr(xml, "value=\"1:5\"") == NULL, "replaced: %s", xml);
    simulate("plain", "after", "0", "eager", "redux");
    double makespan[2];
    const char *outs[2] = {"before", "after"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s/results.json", dir, outs[i]);
        cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
        cr_assert_not_null(doc);
        makespan[i] = cJSON_GetObjectItemCaseSensitive(doc, "makespan_s")->valuedouble;
        const cJSON *energy = cJSON_GetObjectItemCaseSensitive(doc, "energy");
        if (i == 0)
            cr_assert(cJSON_IsNull(energy));
        else
            cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(energy, "source")->valuestring, "wattmeter, test");
        cJSON_Delete(doc);
    }
    cr_assert_eq(makespan[0], makespan[1], "watts change no time");
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", cpu_gpu));
    synth(spec_path, "gpu", "--cover", "synthetic:12x12x1");
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *no_gpu[] = {DAHLSIM_BIN, "machine", "power", "gpu", "--dir", cal, "--cpu", "1:5", "--source", "x", NULL};
    dahl_test_run(&run, no_gpu, NULL);
    dahl_test_assert_input_error(&run, "no --gpu", "machine power: --gpu: missing (expected the GPUs' watts too", NULL);
    char *bad[] = {DAHLSIM_BIN, "machine", "power", "gpu", "--dir", cal, "--cpu", "-1:5", "--source", "x", NULL};
    dahl_test_run(&run, bad, NULL);
    dahl_test_assert_input_error(&run, "negative watts", "--cpu: expected IDLE:FULL watts", "got \"-1:5\"");
}

/* A JSON model file is covered like a built-in model: `machine synth --cover DATASET,model=FILE` writes perf
 * models for its tasks (read through the one model-file reader), and the simulated program trains that
 * network on the machine without a task left uncalibrated. */
Test(machine, a_model_file_is_covered)
{
    char spec_path[256], model[256];
    snprintf(spec_path, sizeof(spec_path), "%s", put("spec.json", one_cpu));
    snprintf(model, sizeof(model), "%s",
             put("net.json", "{\"layers\": [{\"type\": \"conv\", \"filters\": 3, \"kernel\": 3, \"pad\": 1},"
                             " {\"type\": \"relu\"}, {\"type\": \"maxpool\", \"kernel\": 3, \"stride\": 3},"
                             " {\"type\": \"dense\", \"units\": 10}]}"));
    char cover[400];
    snprintf(cover, sizeof(cover), "synthetic:12x12x1,model=%s", model);
    synth(spec_path, "netfile", "--cover", cover);
    cr_assert_eq(run.status, 0, "exit %d: %s", run.status, run.err);
    char models[300], host[128], outdir[300];
    snprintf(models, sizeof(models), "STARPU_PERF_MODEL_DIR=%s/netfile/sampling", dir);
    snprintf(host, sizeof(host), "STARPU_HOSTNAME=netfile");
    snprintf(outdir, sizeof(outdir), "%s/netfile-run", dir);
    char *env[] = {models, host, "ASAN_OPTIONS=detect_leaks=0", NULL};
    char *argv[] = {DAHLSIM_SIM_BIN, "--log=root.thres:warning", "sim-train", "--dataset", "synthetic:12x12x1",
                    "--model", model, "--samples", SIM_SAMPLES, "--batch", STR(SIM_BATCH), "--ncpu", "1", "--ngpu",
                    "0", "--quiet", "--out", outdir, NULL};
    dahl_test_run(&run, argv, env);
    cr_assert_eq(run.status, 0, "sim-train: exit %d: %s", run.status, run.err);
    cr_assert(strstr(run.err, "not calibrated") == NULL, "a perf model is missing: %s", run.err);
    /* a layer file's key the model does not take is refused through the same reader */
    put("bad.json", "{\"layers\": [{\"type\": \"maxpool\", \"kernel\": 2, \"units\": 3}]}");
    snprintf(cover, sizeof(cover), "synthetic:12x12x1,model=%s/bad.json", dir);
    synth(spec_path, "badfile", "--cover", cover);
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "bad.json: layers[0]: unknown key \"units\" for a maxpool layer") != NULL, "%s",
              run.err);
}

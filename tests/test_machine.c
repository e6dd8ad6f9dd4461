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
#include "machine_test_util.h"

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
    cr_assert(strstr(run.err, "hint: a model is lenet, vgg-small, resnet:DEPTH, deep, deep:BLOCKS, a JSON model file or "
                              "an ONNX file (.onnx)") != NULL,
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

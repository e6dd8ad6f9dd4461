/* `dahlsim machine synth`, continued: energy (hosts' watts over the training, P-states, measured watts), fits to
 * a measured calibration, automatic grains, energy-aware scheduling and model files covered. */
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

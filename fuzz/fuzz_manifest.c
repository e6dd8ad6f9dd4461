/* Fuzz target: a calibration's manifest.json as `dahlsim run` and `check` read it while loading a scenario
 * (sim/scenario/dahlsim_scenario.c: "covered", "submission", "scheduling"). The input is the manifest of a
 * machine "fz" (the committed build-2core-epyc's platform and perf models) under a private DAHLSIM_HOME; a fixed scenario
 * sweeps the datasets, perf-model kinds, schedulers and worker counts that select its entries, with the measured
 * runtime costs (a "starpu" point reads only "covered", which every point reads: it was dropped from the sweep,
 * halving each input's 48 points, docs/reliability.md). Then the perf models a simulation of 1, 2 and 3 CPU
 * workers would read ("one_worker", dahlsim_kernels.h). */
#include "fuzz_util.h"

#include "dahlsim_experiment.h"
#include "dahlsim_fs.h"
#include "dahlsim_kernels.h"
#include "dahlsim_scenario.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MACHINE "calibration/build-2core-epyc/sampling"

/* The machine's perf models: build-2core-epyc's, renamed SYMBOL.fz. */
static void copy_models(void)
{
    char dir[PATH_MAX];
    fuzz_path(dir, sizeof(dir), "calibration/fz/sampling/codelets/45");
    DIR *d = opendir(DAHLSIM_SOURCE_DIR "/" MACHINE "/codelets/45");
    if (dahlsim_make_dirs(dir) != 0 || d == NULL)
        abort();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *dot = strchr(e->d_name, '.');
        if (e->d_name[0] == '.' || dot == NULL)
            continue;
        char src[PATH_MAX], dst[PATH_MAX + 300];
        snprintf(src, sizeof(src), MACHINE "/codelets/45/%s", e->d_name);
        snprintf(dst, sizeof(dst), "%s/%.*s.fz", dir, (int)(dot - e->d_name), e->d_name);
        fuzz_copy_source(src, dst);
    }
    closedir(d);
}

static const char scenario[] =
    "{\"machine\": \"fz\", \"samples\": 64, \"batch\": 8, \"sweep\": {"
    "\"dataset\": [\"fashion-mnist\", \"synthetic:28x28x3\", \"synthetic:128x128x3\"],"
    "\"perfmodel\": [\"history\", \"regression\"], \"scheduler\": [\"lws\", \"dmda\"], \"cpus\": [1, 2]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char manifest[PATH_MAX], scenario_path[PATH_MAX];
    if (manifest[0] == '\0') {
        char bus[PATH_MAX], platform[PATH_MAX];
        fuzz_path(bus, sizeof(bus), "calibration/fz/sampling/bus");
        fuzz_path(platform, sizeof(platform), "calibration/fz/sampling/bus/fz.platform.v4.xml");
        fuzz_path(manifest, sizeof(manifest), "calibration/fz/manifest.json");
        fuzz_path(scenario_path, sizeof(scenario_path), "scenario.json");
        if (dahlsim_make_dirs(bus) != 0)
            abort();
        fuzz_copy_source(MACHINE "/bus/build-2core-epyc.platform.v4.xml", platform);
        copy_models();
        fuzz_write(scenario_path, scenario, strlen(scenario));
        setenv("DAHLSIM_HOME", fuzz_dir(), 1);
    }
    fuzz_write(manifest, data, size);
    dahlsim_scenario_destroy(dahlsim_scenario_load(scenario_path, NULL, 0));
    struct dahlsim_experiment x = {0};
    snprintf(x.machine, sizeof(x.machine), "fz");
    fuzz_path(x.machine_dir, sizeof(x.machine_dir), "calibration/fz");
    char work[PATH_MAX], dir[PATH_MAX], what[256], err[512];
    fuzz_path(work, sizeof(work), "kernel-models");
    for (x.cpus = 1; x.cpus <= 3; x.cpus++)
        dahlsim_kernel_models(&x, work, dir, sizeof(dir), what, sizeof(what), err, sizeof(err));
    return 0;
}

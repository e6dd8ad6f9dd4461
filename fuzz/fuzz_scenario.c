/* Fuzz target: scenario files (sim/scenario/dahlsim_scenario.c, dahlsim_workloads.c) with --set overrides.
 * The input's first NUL-separated part is the scenario file, each further part one --set KEY=VALUE; the
 * machines are the committed calibrations, read as `dahlsim run` reads them. A point that loads must also
 * survive its trip through point.json (dahlsim_experiment_save/load), as it does on its way to the simulator. */
#include "fuzz_util.h"

#include "dahlsim_experiment.h"
#include "dahlsim_scenario.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[PATH_MAX], point_path[PATH_MAX];
    if (path[0] == '\0') {
        fuzz_path(path, sizeof(path), "scenario.json");
        fuzz_path(point_path, sizeof(point_path), "point.json");
    }
    struct fuzz_parts parts;
    fuzz_parts_init(&parts, data, size);
    fuzz_write(path, parts.text[0], parts.len[0]);
    struct dahlsim_scenario *s = dahlsim_scenario_load(path, (const char *const *)parts.text + 1, parts.n - 1);
    if (s != NULL) {
        const struct dahlsim_experiment *x = dahlsim_scenario_point(s, dahlsim_scenario_points(s) - 1);
        static struct dahlsim_experiment back;
        char err[512];
        if (dahlsim_experiment_save(x, point_path, err, sizeof(err)) != 0 ||
            dahlsim_experiment_load(point_path, &back, err, sizeof(err)) != 0) {
            fprintf(stderr, "fuzz_scenario: a loaded point does not round-trip: %s\n", err);
            abort();
        }
    }
    dahlsim_scenario_destroy(s);
    fuzz_parts_fini(&parts);
    return 0;
}

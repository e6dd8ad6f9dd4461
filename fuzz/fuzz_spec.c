/* Fuzz target: machine specs (the JSON files of platforms/specs/) as `dahlsim machine synth` reads them
 * (sim/scenario/dahlsim_spec.c), then the roofline time of every perf-model symbol on the CPU and, with GPUs,
 * the GPU of an accepted spec, which dahlsim_spec.h promises is > 0 (a NaN or an infinity is a finding). */
#include "fuzz_util.h"

#include "dahlsim_spec.h"

#include "dahl_perfnames.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[PATH_MAX];
    if (path[0] == '\0')
        fuzz_path(path, sizeof(path), "spec.json");
    fuzz_write(path, data, size);
    static struct dahlsim_spec spec;
    void *json = NULL;
    char err[512];
    if (dahlsim_spec_load(path, &spec, &json, err, sizeof(err)) == 0) {
        size_t nsym;
        dahl_codelet_symbols(&nsym);
        int narch = spec.gpu.count > 0 ? DAHLSIM_NARCHS : 1;
        for (int a = 0; a < narch; a++)
            for (int i = 0; i < (int)nsym; i++) {
                double us = dahlsim_roofline_us(&spec, (enum dahlsim_arch)a, i, 1e9, 1e8);
                if (!(us > 0 && isfinite(us))) {
                    fprintf(stderr, "fuzz_spec: symbol %d on %s: roofline time %g\n", i,
                            dahlsim_arch_name((enum dahlsim_arch)a), us);
                    abort();
                }
            }
    }
    cJSON_Delete(json);
    return 0;
}

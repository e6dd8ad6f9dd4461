/* Fuzz target: StarPU perf-model files (format 45) as dahlsim reads them: sim/lab/perfmodel.c (the costs of
 * exported graphs and workloads, every perf-model kind) and sim/core/dahlsim_modeltable.c (the history table
 * `dahlsim calibrate` reports). The input is sampling/codelets/45/dahl_relu_forward.fz of a private
 * calibration; every entry the table finds is then looked up under each kind on cpu0 and cuda0, and the file
 * is blended with its own table as a simulation between one worker and all cores blends (dahlsim_kernels.h),
 * which must keep every entry. */
#include "fuzz_util.h"

#include "dahlsim_fs.h"
#include "dahlsim_modeltable.h"
#include "dahlsim_perfmodel.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char sampling[PATH_MAX], path[PATH_MAX];
    static FILE *null;
    if (path[0] == '\0') {
        char dir[PATH_MAX];
        fuzz_path(sampling, sizeof(sampling), "sampling");
        fuzz_path(dir, sizeof(dir), "sampling/codelets/45");
        fuzz_path(path, sizeof(path), "sampling/codelets/45/dahl_relu_forward.fz");
        if (dahlsim_make_dirs(dir) != 0 || (null = fopen("/dev/null", "w")) == NULL)
            abort();
    }
    fuzz_write(path, data, size);
    struct dahlsim_model_table t = {0};
    dahlsim_model_table_load(sampling, "fz", &t);
    dahlsim_model_table_print(&t, 0.5, null);
    char err[512];
    struct dahlsim_perfmodel *m = dahlsim_perfmodel_load(path, err, sizeof(err));
    static const char *const archs[] = {"cpu0", "cuda0"};
    for (size_t i = 0; m != NULL && i <= t.n; i++)
        for (int a = 0; a < 2; a++)
            for (int k = DAHL_PERFMODEL_HISTORY; k <= DAHL_PERFMODEL_NL_REGRESSION; k++)
                dahlsim_perfmodel_us(m, archs[a], (enum dahl_perfmodel_kind)k, i < t.n ? t.v[i].footprint : 0,
                                     i < t.n ? t.v[i].size : 4096);
    dahlsim_perfmodel_destroy(m);
    if (dahlsim_model_dir_blend(sampling, "fz", &t, 0.5) == 0) {
        struct dahlsim_model_table blended = {0};
        dahlsim_model_table_load(sampling, "fz", &blended);
        if (blended.n != t.n)
            abort(); /* a blend lost or made up entries */
        dahlsim_model_table_fini(&blended);
    }
    dahlsim_model_table_fini(&t);
    return 0;
}

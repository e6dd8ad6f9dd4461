/* Fuzz target: the files `dahlsim validate` reads besides the calibration (sim/scenario/dahlsim_validate.c):
 * --setups FILE, the user's own setups, each field checked (an accepted file has 1 to
 * DAHLSIM_VALIDATE_MAX_SETUPS setups); and, from the same input, --natives DIR's report: the input's first
 * part (up to a NUL byte) as DIR/fidelity.json, its second as the first native run's results.json (an
 * accepted report has as many setups). */
#include "fuzz_util.h"

#include "dahlsim_fs.h"
#include "dahlsim_validate.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[PATH_MAX], report[PATH_MAX], fidelity[PATH_MAX], run[PATH_MAX];
    if (path[0] == '\0') {
        fuzz_path(path, sizeof(path), "setups.json");
        fuzz_path(report, sizeof(report), "report");
        fuzz_path(fidelity, sizeof(fidelity), "report/fidelity.json");
        fuzz_path(run, sizeof(run), "report/native/00-0");
        if (dahlsim_make_dirs(run) != 0)
            abort();
        fuzz_path(run, sizeof(run), "report/native/00-0/results.json");
    }
    fuzz_write(path, data, size);
    long n = dahlsim_validate_setups_load(path);
    if (n == 0 || n > DAHLSIM_VALIDATE_MAX_SETUPS) {
        fprintf(stderr, "fuzz_setups: accepted %ld setups\n", n);
        abort();
    }
    struct fuzz_parts parts;
    fuzz_parts_init(&parts, data, size);
    fuzz_write(fidelity, parts.text[0], parts.len[0]);
    fuzz_write(run, parts.n > 1 ? parts.text[1] : "", parts.n > 1 ? parts.len[1] : 0);
    fuzz_parts_fini(&parts);
    n = dahlsim_validate_natives_load(report);
    if (n == 0 || n > DAHLSIM_VALIDATE_MAX_SETUPS) {
        fprintf(stderr, "fuzz_setups: read a report of %ld setups\n", n);
        abort();
    }
    return 0;
}

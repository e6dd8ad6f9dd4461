/* Fuzz target: `dahlsim validate --setups FILE` (sim/scenario/dahlsim_validate.c): the user's own setups,
 * each field checked; an accepted file has 1 to DAHLSIM_VALIDATE_MAX_SETUPS setups. */
#include "fuzz_util.h"

#include "dahlsim_validate.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[PATH_MAX];
    if (path[0] == '\0')
        fuzz_path(path, sizeof(path), "setups.json");
    fuzz_write(path, data, size);
    long n = dahlsim_validate_setups_load(path);
    if (n == 0 || n > DAHLSIM_VALIDATE_MAX_SETUPS) {
        fprintf(stderr, "fuzz_setups: accepted %ld setups\n", n);
        abort();
    }
    return 0;
}

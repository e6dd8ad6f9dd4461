/* Fuzz target: a sweep's results.jsonl as `dahlsim sweep` resumes from it (dahlsim_sweep_load_done in
 * sim/scenario/dahlsim_sweep.c), then results.csv rebuilt from it (dahlsim_sweep_write_csv) where it was
 * accepted, as the sweep does. The scenario is the committed scenarios/batch-size-2core.json. */
#include "fuzz_util.h"

#include "dahlsim_scenario.h"
#include "dahlsim_sweep.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct dahlsim_scenario *s;
    static char jsonl[PATH_MAX];
    if (s == NULL) {
        fuzz_path(jsonl, sizeof(jsonl), "results.jsonl");
        s = dahlsim_scenario_load(DAHLSIM_SOURCE_DIR "/scenarios/batch-size-2core.json", NULL, 0);
        if (s == NULL)
            abort();
    }
    fuzz_write(jsonl, data, size);
    bool *done = calloc(dahlsim_scenario_points(s), sizeof(*done));
    if (done == NULL)
        abort();
    if (dahlsim_sweep_load_done(jsonl, s, done) >= 0)
        dahlsim_sweep_write_csv(fuzz_dir(), s);
    free(done);
    return 0;
}

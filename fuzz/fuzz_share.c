/* Fuzz target: the GPU-sharing emulator's files (sim/lab/share_io.c: dahlsim-share-1 inputs; share_order.c:
 * given orders). The input's first NUL-separated part is the share file, the second a given order read against
 * it. A file that loads must survive a save and a load; with at most 4096 job-steps it is also emulated (the
 * given order where it loads, else fifo, under the LRU policy with prefetch), which must succeed. */
#include "fuzz_util.h"

#include "dahlsim_share.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static struct dahlsim_share s, back;

static void round_trip(const char *path)
{
    char err[512];
    if (dahlsim_share_save(&s, path, err, sizeof(err)) != 0 || dahlsim_share_load(path, &back, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_share: a loaded file does not round-trip: %s\n", err);
        abort();
    }
    dahlsim_share_fini(&back);
}

static void emulate(const int *order, int n)
{
    long steps = 0;
    for (int j = 0; j < s.njobs; j++)
        steps += s.jobs[j].steps;
    if (steps > 4096)
        return;
    struct dahlsim_share_conf conf = {.policy = DAHLSIM_SHARE_LRU, .prefetch = true, .window = 4};
    struct dahlsim_share_result r;
    char err[512];
    if (dahlsim_share_run(&s, &conf, order != NULL ? DAHLSIM_SHARE_GIVEN : DAHLSIM_SHARE_FIFO, order, n, &r, err,
                          sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_share: a loaded file does not emulate: %s\n", err);
        abort();
    }
    dahlsim_share_result_fini(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[PATH_MAX], order_path[PATH_MAX], saved_path[PATH_MAX];
    if (path[0] == '\0') {
        fuzz_path(path, sizeof(path), "share.json");
        fuzz_path(order_path, sizeof(order_path), "order.json");
        fuzz_path(saved_path, sizeof(saved_path), "saved.json");
    }
    struct fuzz_parts parts;
    fuzz_parts_init(&parts, data, size);
    fuzz_write(path, parts.text[0], parts.len[0]);
    char err[512];
    if (dahlsim_share_load(path, &s, err, sizeof(err)) == 0) {
        round_trip(saved_path);
        int *order = NULL, n = 0;
        if (parts.n > 1) {
            fuzz_write(order_path, parts.text[1], parts.len[1]);
            if (dahlsim_share_order_load(order_path, &s, &order, &n, err, sizeof(err)) != 0)
                order = NULL;
        }
        emulate(order, n);
        free(order);
        dahlsim_share_fini(&s);
    }
    fuzz_parts_fini(&parts);
    return 0;
}

/* Fuzz target: the scheduler lab's files (sim/lab/graph.c: dahlsim-dag-1 graphs and their priority lists;
 * sim/lab/schedconf.c: the --priorities file of train and sim-train). The input's first NUL-separated part is
 * the graph, the second the priority file, read against the graph (or a fixed two-type graph where the first
 * part is refused) and as a --priorities file. A graph that loads must survive a save and a load, and one
 * emulation of Heteroprio (2 CPUs, 1 GPU) with those lists or AutoHeteroprio's must finish. */
#include "fuzz_util.h"

#include "dahlsim_dag.h"
#include "dahlsim_schedconf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char fallback[] = "{\"format\": \"dahlsim-dag-1\", \"types\": [{\"name\": \"A\", \"cpu_s\": 1}, "
                               "{\"name\": \"B\", \"cpu_s\": 2, \"gpu_s\": 0.5}], \"tasks\": [[0], [1, 0], [0, 1]]}";

/* Saves g and loads it back: what `dahlsim dag` writes it must read. */
static void round_trip(const struct dahlsim_dag *g, const char *path)
{
    struct dahlsim_dag back;
    char err[512];
    if (dahlsim_dag_save(g, path, err, sizeof(err)) != 0 || dahlsim_dag_load(path, &back, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_dag: a loaded graph does not round-trip: %s\n", err);
        abort();
    }
    if (back.ntasks != g->ntasks || back.ntypes != g->ntypes) {
        fprintf(stderr, "fuzz_dag: the graph changed on its round trip\n");
        abort();
    }
    dahlsim_dag_fini(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dag_path[PATH_MAX], prio_path[PATH_MAX], saved_path[PATH_MAX];
    if (dag_path[0] == '\0') {
        fuzz_path(dag_path, sizeof(dag_path), "dag.json");
        fuzz_path(prio_path, sizeof(prio_path), "prio.json");
        fuzz_path(saved_path, sizeof(saved_path), "saved.json");
    }
    struct fuzz_parts parts;
    fuzz_parts_init(&parts, data, size);
    fuzz_write(dag_path, parts.text[0], parts.len[0]);
    fuzz_write(prio_path, parts.n > 1 ? parts.text[1] : "", parts.n > 1 ? parts.len[1] : 0);
    struct dahlsim_dag g;
    char err[512];
    bool fuzzed = dahlsim_dag_load(dag_path, &g, err, sizeof(err)) == 0;
    if (fuzzed) {
        round_trip(&g, saved_path);
    } else {
        fuzz_write(dag_path, fallback, strlen(fallback));
        if (dahlsim_dag_load(dag_path, &g, err, sizeof(err)) != 0)
            abort();
    }
    struct dahlsim_prio prio;
    bool have_prio = dahlsim_prio_load(prio_path, &g, &prio, err, sizeof(err)) == 0;
    if (fuzzed) {
        struct dahlsim_emu_conf conf = {.cpus = 2, .gpus = 1, .slow_factors = true, .autoprio = !have_prio,
                                        .interval = 8};
        struct dahlsim_emu_result res;
        dahlsim_dag_emulate(&g, &conf, have_prio ? &prio : NULL, &res, err, sizeof(err));
        dahlsim_dag_lower_bound(&g, 2, 1);
    }
    dahlsim_dag_fini(&g);
    struct dahl_heteroprio_conf hp;
    dahlsim_heteroprio_conf("heteroprio", prio_path, 32, &hp);
    fuzz_parts_fini(&parts);
    return 0;
}

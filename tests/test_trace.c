/* Traces (--trace), the results' bytes per link and peak memory per node, and `dahlsim report`, through the
 * dahlsim binaries as a user runs them: simulated on the committed tiny-2cpu calibration (tests/data) and the
 * roofline 14-CPU + V100 machine (calibration/), and native. Every Paje file must parse with pj_dump (pajeng),
 * every Chrome trace with cJSON, and dahl's own records must agree with StarPU's FxT trace of the same run. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"
#include "dahlsim_trace.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA DAHLSIM_SOURCE_DIR "/tests/data"
#define TINY DATA "/scenarios/tiny.json"

static struct dahl_test_run run;
static char *tiny_env[] = {"DAHLSIM_HOME=" DATA, "STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};
static char *home_env[] = {"STARPU_SILENT=1", "ASAN_OPTIONS=detect_leaks=0", NULL};

static void dahlsim(char *const *env, const char *const *args)
{
    dahl_test_run_args(&run, DAHLSIM_BIN, args, env);
}

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s is missing", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (size != NULL)
        *size = (size_t)n;
    return buf;
}

static cJSON *json_file(const char *path)
{
    char *text = slurp(path, NULL);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "%s does not parse as JSON", path);
    free(text);
    return root;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "\"%s\" is not a number", key);
    return v->valuedouble;
}

/* pj_dump (Debian's pajeng, installed by scripts/setup-deps) must parse path without error. */
static void assert_pj_dump_parses(const char *path)
{
    const char *candidates[] = {"/usr/bin/pj_dump", "/usr/local/bin/pj_dump"};
    const char *pj = NULL;
    for (size_t i = 0; i < 2 && pj == NULL; i++)
        if (access(candidates[i], X_OK) == 0)
            pj = candidates[i];
    cr_assert_not_null(pj, "pj_dump not found: install pajeng (scripts/setup-deps does)");
    char *argv[] = {(char *)pj, (char *)path, NULL};
    static struct dahl_test_run pj_run;
    dahl_test_run(&pj_run, argv, NULL);
    cr_assert_eq(pj_run.status, 0, "pj_dump %s: exit %d: %.500s", path, pj_run.status, pj_run.err);
    cr_assert(strstr(pj_run.out, "Container, ") != NULL, "pj_dump %s: no container in the trace", path);
}

/* Data transfers of a Paje file as pj_dump reads them, summed per (from, to) memory node: link lines are
 * "Link, container, type, start, end, duration, bytes, from, to, key". Returns the number of links. */
struct paje_link_sum {
    char src[32], dst[32];
    long transfers;
    double bytes;
};

/* pj_dump's lines of path that start with prefix (the whole dump can exceed what dahl_test_run keeps). */
static char *pj_dump_lines(const char *path, const char *prefix)
{
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof(cmd), "set -o pipefail; /usr/bin/pj_dump '%s' | { grep '^%s' || true; }", path, prefix);
    char *argv[] = {"/bin/bash", "-c", cmd, NULL};
    static struct dahl_test_run pj_run;
    dahl_test_run(&pj_run, argv, NULL);
    cr_assert_eq(pj_run.status, 0, "pj_dump %s: exit %d: %.500s", path, pj_run.status, pj_run.err);
    cr_assert_lt(strlen(pj_run.out), sizeof(pj_run.out) - 1, "pj_dump %s: too many %s lines to read", path, prefix);
    return pj_run.out;
}

static long pj_dump_links(const char *path, struct paje_link_sum *sums, int max, int *nsums)
{
    char *out = pj_dump_lines(path, "Link, ");
    long links = 0;
    *nsums = 0;
    for (char *line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strncmp(line, "Link, ", 6) != 0)
            continue;
        char src[32], dst[32];
        double start, end, dur, bytes;
        cr_assert_eq(sscanf(line, "Link, dahl, Data transfer, %lf, %lf, %lf, %lf, %31[^,], %31[^,],", &start, &end,
                            &dur, &bytes, src, dst),
                     6, "pj_dump %s: unexpected link: %s", path, line);
        cr_assert(bytes > 0 && end >= start, "%s", line);
        links++;
        int i = 0;
        while (i < *nsums && !(strcmp(sums[i].src, src) == 0 && strcmp(sums[i].dst, dst) == 0))
            i++;
        if (i == *nsums) {
            cr_assert_lt(i, max);
            sums[i] = (struct paje_link_sum){0};
            snprintf(sums[i].src, sizeof(sums[i].src), "%s", src);
            snprintf(sums[i].dst, sizeof(sums[i].dst), "%s", dst);
            (*nsums)++;
        }
        sums[i].transfers++;
        sums[i].bytes += bytes;
    }
    return links;
}

static void assert_file_at_least(const char *path, long bytes)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s is missing", path);
    cr_assert_geq(st.st_size, bytes, "%s: %ld bytes, expected at least %ld", path, (long)st.st_size, bytes);
}

/* Checks one trace directory: both Paje files parse, the Chrome JSON parses and holds one event per task,
 * the Gantt images exist, and the summary agrees with the FxT trace within tolerance_us (99th percentile).
 * Returns the summary (cJSON_Delete it). */
static cJSON *check_trace_dir(const char *dir, double tolerance_us, bool gantt)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/dahl.paje", dir);
    assert_pj_dump_parses(path);
    char *paje = slurp(path, NULL); /* one container per worker, task states named by codelet */
    cr_assert(strstr(paje, "\"CPU 0\"") != NULL && strstr(paje, "S w0 dahl_conv2d_forward") != NULL, "%s", path);
    free(paje);
    snprintf(path, sizeof(path), "%s/starpu/paje.trace", dir);
    assert_pj_dump_parses(path);
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    cJSON *summary = json_file(path);
    long tasks = (long)num(summary, "tasks");
    cr_assert_gt(tasks, 0);
    double eff = num(summary, "parallel_efficiency");
    cr_assert(eff > 0 && eff <= 1, "parallel efficiency %g", eff);
    long worker_tasks = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(summary, "workers"))
    {
        worker_tasks += (long)num(w, "tasks");
        cr_assert_geq(num(w, "idle_s"), 0);
        cr_assert_leq(num(w, "busy_s"), num(summary, "span_s") * (1 + 1e-9));
    }
    cr_assert_eq(worker_tasks, tasks);
    const cJSON *fxt = cJSON_GetObjectItemCaseSensitive(summary, "fxt");
    cr_assert(cJSON_IsObject(fxt), "no FxT comparison in %s", path);
    cr_assert_eq((long)num(fxt, "worker_mismatches"), 0, "FxT puts tasks on other workers");
    cr_assert_gt(num(fxt, "matched"), 0);
    cr_assert_leq(num(fxt, "p99_diff_us"), tolerance_us, "dahl and FxT disagree: p99 %g us", num(fxt, "p99_diff_us"));

    snprintf(path, sizeof(path), "%s/trace.json", dir);
    cJSON *chrome = json_file(path);
    long complete = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(chrome, "traceEvents"))
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        if (cJSON_IsString(ph) && strcmp(ph->valuestring, "X") == 0 && cJSON_IsString(cat) &&
            strcmp(cat->valuestring, "transfer") != 0)
            complete++;
    }
    cr_assert_eq(complete, tasks, "trace.json: %ld task events, summary: %ld tasks", complete, tasks);
    cJSON_Delete(chrome);
    if (gantt) {
        snprintf(path, sizeof(path), "%s/gantt.png", dir);
        assert_file_at_least(path, 5000);
        char *png = slurp(path, NULL);
        cr_assert(memcmp(png, "\x89PNG", 4) == 0, "%s is not a PNG", path);
        free(png);
        snprintf(path, sizeof(path), "%s/gantt.svg", dir);
        char *svg = slurp(path, NULL);
        cr_assert(strstr(svg, "<svg") != NULL && strstr(svg, "dahl_conv2d_forward") != NULL, "%s", path);
        free(svg);
    }
    return summary;
}

Test(trace, simulated_run_traces_agree_with_fxt_and_repeat_byte_for_byte)
{
    char dir[] = "/tmp/dahlsim-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char a[64], b[64], path[128];
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    dahlsim(tiny_env, (const char *[]){"run", TINY, "--out", a, "--trace", "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.err, "warning") == NULL, "%s", run.err);
    snprintf(path, sizeof(path), "%s/trace", a);
    /* Simulated: both sides read SimGrid's clock; only FxT's 1 us later origin differs. */
    cJSON *summary = check_trace_dir(path, 0.01, true);
    const cJSON *fxt = cJSON_GetObjectItemCaseSensitive(summary, "fxt");
    cr_assert_eq(num(fxt, "matched"), num(summary, "tasks"), "every record is in the FxT trace");
    cr_assert_eq(num(fxt, "missing"), 0);
    cr_assert_leq(num(fxt, "max_start_diff_us"), 0.01);
    cr_assert_leq(num(fxt, "max_end_diff_us"), 0.01);
    /* CPU workers only: one memory node, nothing to transfer, no link in the trace */
    cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(summary, "transfers"), "count"), 0);
    struct paje_link_sum none[4];
    int nnone;
    snprintf(path, sizeof(path), "%s/trace/dahl.paje", a);
    cr_assert_eq(pj_dump_links(path, none, 4, &nnone), 0);
    /* tiny.json: 2 epochs of 64 / 8 steps, all traced */
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(summary, "steps");
    cr_assert_eq(num(steps, "first"), 1);
    cr_assert_eq(num(steps, "last"), 16);
    cJSON_Delete(summary);

    /* results.json: one memory node (RAM), StarPU's allocations and dahl's tensors both counted; no links */
    snprintf(path, sizeof(path), "%s/results.json", a);
    cJSON *results = json_file(path);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(results, "links")), 0);
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(results, "memory_nodes");
    cr_assert_eq(cJSON_GetArraySize(mem), 1);
    const cJSON *ram = cJSON_GetArrayItem(mem, 0);
    cr_assert_gt(num(ram, "starpu_peak_bytes"), 0);
    cr_assert_gt(num(ram, "app_bytes"), 0);
    cr_assert_eq(num(ram, "peak_bytes"), num(ram, "starpu_peak_bytes") + num(ram, "app_bytes"));
    cJSON_Delete(results);

    /* The same run traced again: the same bytes. */
    dahlsim(tiny_env, (const char *[]){"run", TINY, "--out", b, "--trace", "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    const char *files[] = {"dahl.paje", "trace.json", "summary.json", "summary.txt", "gantt.dat"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char pa[128], pb[128];
        snprintf(pa, sizeof(pa), "%s/trace/%s", a, files[i]);
        snprintf(pb, sizeof(pb), "%s/trace/%s", b, files[i]);
        size_t na, nb;
        char *ta = slurp(pa, &na), *tb = slurp(pb, &nb);
        cr_assert(na == nb && memcmp(ta, tb, na) == 0, "%s differs between two runs", files[i]);
        free(ta);
        free(tb);
    }
    dahl_test_remove_tree(dir);
}

/* Task events per training step (args.step, from 1) in a trace.json. */
static void steps_of(const char *trace_json, long *per_step, int nsteps)
{
    cJSON *chrome = json_file(trace_json);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(chrome, "traceEvents"))
    {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        const cJSON *step = cJSON_GetObjectItemCaseSensitive(args, "step");
        if (!cJSON_IsNumber(step))
            continue;
        int s = (int)step->valuedouble;
        cr_assert(s >= 1 && s <= nsteps, "step %d", s);
        per_step[s - 1]++;
    }
    cJSON_Delete(chrome);
}

Test(trace, a_window_traces_its_steps_only)
{
    char dir[] = "/tmp/dahlsim-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char full[64], win[64], path[128];
    snprintf(full, sizeof(full), "%s/full", dir);
    snprintf(win, sizeof(win), "%s/window", dir);
    dahlsim(tiny_env, (const char *[]){"run", TINY, "--out", full, "--trace", "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    dahlsim(tiny_env, (const char *[]){"run", TINY, "--out", win, "--trace-window", "3:4", "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    long all[16] = {0}, part[16] = {0};
    snprintf(path, sizeof(path), "%s/trace/trace.json", full);
    steps_of(path, all, 16);
    snprintf(path, sizeof(path), "%s/trace/trace.json", win);
    steps_of(path, part, 16);
    for (int s = 0; s < 16; s++) {
        cr_assert_gt(all[s], 0, "step %d has no task", s + 1);
        cr_assert_eq(part[s], s == 2 || s == 3 ? all[s] : 0, "step %d: %ld tasks in the window, %ld in the run", s + 1,
                     part[s], all[s]);
    }
    snprintf(path, sizeof(path), "%s/trace", win);
    cJSON *summary = check_trace_dir(path, 0.01, true);
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(summary, "steps");
    cr_assert_eq(num(steps, "first"), 3);
    cr_assert_eq(num(steps, "last"), 4);
    cr_assert_eq(num(summary, "tasks"), all[2] + all[3]);
    cJSON_Delete(summary);
    dahl_test_remove_tree(dir);
}

Test(trace, bad_trace_options_are_input_errors)
{
    const char *bad[] = {"0:2", "3:2", "2", "2:x", "1:17"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dahlsim(tiny_env, (const char *[]){"run", TINY, "--out", "/tmp/dahlsim-trace-never", "--trace-window", bad[i],
                                          "--quiet", NULL});
        cr_assert_eq(run.status, 2, "--trace-window %s: exit %d", bad[i], run.status);
        cr_assert(strstr(run.err, "dahlsim: error: --trace-window: expected") != NULL, "%s", run.err);
    }
    dahlsim(tiny_env, (const char *[]){"train", "--dataset", "synthetic:12x12x1", "--trace", NULL});
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--trace: traces go to DIR/trace: expected --out DIR too") != NULL, "%s", run.err);
    dahlsim(tiny_env, (const char *[]){"check", TINY, "--set", "trace=1", NULL});
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "\"trace\": expected true or false, got 1") != NULL, "%s", run.err);
    dahlsim(tiny_env, (const char *[]){"check", TINY, "--set", "trace_window=2:40", NULL});
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "\"trace_window\": expected a window within the run's 16 training steps") != NULL,
              "%s", run.err);
    /* multi-node runs trace too (each node its own directory, merged) */
    dahlsim(tiny_env, (const char *[]){"check", TINY, "--set", "nodes=2", "--set", "trace=true", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
}

#ifdef DAHL_TEST_HAS_SIM_MPI
Test(trace, multi_node_runs_trace_every_node_and_merge_them)
{
    char dir[] = "/tmp/dahlsim-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    /* 2 nodes, 2 steps of 8 samples (4 per node) */
    dahlsim(tiny_env, (const char *[]){"run", TINY, "--set", "nodes=2", "--set", "samples=16", "--set", "epochs=1",
                                      "--trace", "--out", dir, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.err, "warning") == NULL, "%s", run.err);
    long node_tasks = 0;
    for (int n = 0; n < 2; n++) {
        snprintf(path, sizeof(path), "%s/trace/node-%d/dahl.paje", dir, n);
        assert_pj_dump_parses(path);
        snprintf(path, sizeof(path), "%s/trace/node-%d/summary.json", dir, n);
        cJSON *summary = json_file(path);
        cr_assert_gt(num(summary, "tasks"), 0, "node %d traced no task", n);
        cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(summary, "fxt")), "sim-mpi has no FxT");
        node_tasks += (long)num(summary, "tasks");
        cJSON_Delete(summary);
        snprintf(path, sizeof(path), "%s/trace/node-%d/gantt.png", dir, n);
        assert_file_at_least(path, 5000);
    }
    /* the merged trace: one Node container per node holding its two workers */
    snprintf(path, sizeof(path), "%s/trace/dahl.paje", dir);
    assert_pj_dump_parses(path);
    int hosts = 0, workers = 0;
    for (char *line = strtok(pj_dump_lines(path, "Container, "), "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char parent[64], name[64];
        if (sscanf(line, "Container, %63[^,], Node, %*f, %*f, %*f, %63[^\n]", parent, name) == 2) {
            cr_assert_str_eq(parent, "dahl");
            hosts++;
        } else if (sscanf(line, "Container, %63[^,], Worker, %*f, %*f, %*f, %63[^\n]", parent, name) == 2) {
            cr_assert(strncmp(name, parent, strlen(parent)) == 0 && name[strlen(parent)] == ' ',
                      "worker %s is not in its node's container %s", name, parent);
            workers++;
        }
    }
    cr_assert_eq(hosts, 2);
    cr_assert_eq(workers, 4);
    snprintf(path, sizeof(path), "%s/trace/summary.json", dir);
    cJSON *summary = json_file(path);
    cr_assert_eq((long)num(summary, "tasks"), node_tasks, "the merged trace has every node's tasks");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(summary, "workers")), 4);
    double eff = num(summary, "parallel_efficiency");
    cr_assert(eff > 0 && eff <= 1, "parallel efficiency %g", eff);
    cJSON_Delete(summary);
    snprintf(path, sizeof(path), "%s/trace/trace.json", dir);
    cJSON_Delete(json_file(path));
    snprintf(path, sizeof(path), "%s/trace/gantt.svg", dir); /* one row per node and worker */
    char *svg = slurp(path, NULL);
    cr_assert(strstr(svg, "node 1 CPU 1") != NULL && strstr(svg, "node 0 CPU 0") != NULL, "%s", path);
    free(svg);
    dahl_test_remove_tree(dir);
}
#endif

Test(trace, simulated_gpu_links_carry_bytes_and_gpu_memory_peaks)
{
    char dir[] = "/tmp/dahlsim-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char scenario[64], out[64], path[128];
    snprintf(scenario, sizeof(scenario), "%s/gpu.json", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    FILE *f = fopen(scenario, "w");
    cr_assert_not_null(f);
    fputs("{\"machine\": \"roofline-14cpu-1v100\", \"dataset\": \"synthetic:28x28x3\", \"iterations\": 3, "
          "\"batch\": 14, \"scheduler\": \"dmda\", \"cpus\": 2, \"gpus\": 1, \"trace\": true}\n",
          f);
    fclose(f);
    dahlsim(home_env, (const char *[]){"run", scenario, "--out", out, "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    snprintf(path, sizeof(path), "%s/results.json", out);
    cJSON *results = json_file(path);
    double to_gpu = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(results, "links"))
    {
        const cJSON *dst = cJSON_GetObjectItemCaseSensitive(l, "dst");
        if (cJSON_IsString(dst) && strncmp(dst->valuestring, "CUDA", 4) == 0)
            to_gpu += num(l, "bytes");
        cr_assert_geq(num(l, "transfers"), num(l, "bytes") > 0 ? 1 : 0);
    }
    cr_assert_gt(to_gpu, 0, "no byte reached the simulated GPU");
    bool gpu_node = false;
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(results, "memory_nodes"))
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(m, "kind");
        if (cJSON_IsString(kind) && strcmp(kind->valuestring, "cuda") == 0) {
            gpu_node = true;
            cr_assert_gt(num(m, "starpu_peak_bytes"), 0);
            cr_assert_leq(num(m, "starpu_peak_bytes"), num(m, "capacity_bytes"));
        }
    }
    cr_assert(gpu_node, "no CUDA memory node in results.json");
    /* dahl.paje: one link per transfer, read back by pj_dump; per bus link the same count and bytes as
     * results.json (StarPU's bus profiling over the training epochs: FxT's transfers of that time) */
    struct paje_link_sum sums[8];
    int nsums;
    snprintf(path, sizeof(path), "%s/trace/dahl.paje", out);
    long links = pj_dump_links(path, sums, 8, &nsums);
    cr_assert_gt(links, 0, "no transfer in dahl.paje");
    long results_transfers = 0;
    int nresults = 0;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(results, "links"))
    {
        const char *src = cJSON_GetObjectItemCaseSensitive(l, "src")->valuestring;
        const char *dst = cJSON_GetObjectItemCaseSensitive(l, "dst")->valuestring;
        if (num(l, "transfers") == 0)
            continue;
        nresults++;
        results_transfers += (long)num(l, "transfers");
        int i = 0;
        while (i < nsums && !(strcmp(sums[i].src, src) == 0 && strcmp(sums[i].dst, dst) == 0))
            i++;
        cr_assert_lt(i, nsums, "results.json's link %s -> %s has no transfer in dahl.paje", src, dst);
        cr_assert_eq(sums[i].transfers, (long)num(l, "transfers"), "%s -> %s: %ld links in dahl.paje, %g in results",
                     src, dst, sums[i].transfers, num(l, "transfers"));
        cr_assert_eq(sums[i].bytes, num(l, "bytes"), "%s -> %s: %g bytes in dahl.paje, %g in results", src, dst,
                     sums[i].bytes, num(l, "bytes"));
    }
    cr_assert_eq(nsums, nresults, "dahl.paje links nodes that results.json does not");
    cr_assert_eq(links, results_transfers);
    cJSON_Delete(results);
    snprintf(path, sizeof(path), "%s/trace", out);
    cJSON *summary = check_trace_dir(path, 0.01, true);
    cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(summary, "transfers"), "count"), links);
    cJSON_Delete(summary);
    /* trace.json: one async begin and one end per transfer */
    snprintf(path, sizeof(path), "%s/trace/trace.json", out);
    cJSON *chrome = json_file(path);
    long begins = 0, ends = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(chrome, "traceEvents"))
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        if (cJSON_IsString(ph) && strcmp(ph->valuestring, "b") == 0) {
            begins++;
            cr_assert_gt(num(cJSON_GetObjectItemCaseSensitive(e, "args"), "bytes"), 0);
        } else if (cJSON_IsString(ph) && strcmp(ph->valuestring, "e") == 0) {
            ends++;
        }
    }
    cr_assert(begins == links && ends == links, "trace.json: %ld begins, %ld ends, %ld transfers", begins, ends, links);
    cJSON_Delete(chrome);
    dahl_test_remove_tree(dir);
}

/* StarPU's Paje file out of time order, as its FxT converter writes it under load: a codelet's value is
 * defined (untimed) after an event at 2.0, and an event at 1.5 that uses it comes after the definition.
 * Sorted, every definition stays ahead of the events that use it (pj_dump refused the file otherwise: seen
 * in about one native run in four). */
Test(trace, paje_sort_keeps_definitions_ahead_of_their_events)
{
    char dir[] = "/tmp/dahlsim-paje-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/paje.trace", dir);
    dahl_test_write_file(path, "%EventDef PajeDefineContainerType 1\n% Alias string\n% Type string\n"
                               "% Name string\n%EndEventDef\n"
                               "%EventDef PajeDefineStateType 3\n% Alias string\n% Type string\n"
                               "% Name string\n%EndEventDef\n"
                               "%EventDef PajeDefineEntityValue 6\n% Alias string\n% Type string\n"
                               "% Name string\n% Color color\n%EndEventDef\n"
                               "%EventDef PajeCreateContainer 7\n% Time date\n% Alias string\n% Type string\n"
                               "% Container string\n% Name string\n%EndEventDef\n"
                               "%EventDef PajeDestroyContainer 8\n% Time date\n% Name string\n"
                               "% Type string\n%EndEventDef\n"
                               "%EventDef PajeSetState 10\n% Time date\n% Container string\n% Type string\n"
                               "% Value string\n%EndEventDef\n"
                               "1 W 0 \"Worker\"\n"
                               "3 S W \"State\"\n"
                               "7 0.0 w0 W 0 \"w0\"\n"
                               "6 a S \"a\" \"1 0 0\"\n"
                               "10 1.0 w0 S a\n"
                               "10 2.0 w0 S a\n"
                               "6 zero S \"zero\" \"0 1 0\"\n"
                               "10 1.5 w0 S zero\n"
                               "8 3.0 w0 W\n");
    long moved = 0;
    char err[256];
    cr_assert_eq(dahlsim_trace_paje_sort(path, &moved, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(moved, 1);
    const char *text = dahl_test_read_file(path);
    const char *def = strstr(text, "6 zero"), *use = strstr(text, "10 1.5 w0 S zero");
    cr_assert(def != NULL && use != NULL && def < use, "the value is used before its definition:\n%s", text);
    cr_assert(strstr(text, "10 1.0 w0 S a\n10 1.5 w0 S zero\n10 2.0 w0 S a\n") != NULL, "%s", text);
    assert_pj_dump_parses(path);
    dahl_test_remove_tree(dir);
}

Test(trace, native_training_traces_agree_with_fxt)
{
    char dir[] = "/tmp/dahlsim-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    dahlsim(home_env, (const char *[]){"train", "--dataset", "synthetic:12x12x1", "--samples", "64", "--batch", "8",
                                       "--ncpu", "2", "--out", dir, "--trace", "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    snprintf(path, sizeof(path), "%s/trace", dir);
    /* Natively the two sides read two clocks a few instructions apart; a loaded machine can preempt a worker
     * between them, hence the 99th percentile and a loose bound. */
    cJSON *summary = check_trace_dir(path, 200, true);
    const cJSON *fxt = cJSON_GetObjectItemCaseSensitive(summary, "fxt");
    cr_assert_eq(num(fxt, "matched"), num(summary, "tasks"));
    cJSON_Delete(summary);
    snprintf(path, sizeof(path), "%s/results.json", dir);
    cJSON *results = json_file(path);
    const cJSON *ram = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(results, "memory_nodes"), 0);
    cr_assert_not_null(ram);
    cr_assert_gt(num(ram, "app_bytes"), 0);
    cr_assert_gt(num(ram, "capacity_bytes"), 0);
    cJSON_Delete(results);
    dahl_test_remove_tree(dir);
}

Test(trace, report_turns_a_traced_sweep_into_one_page)
{
    char dir[] = "/tmp/dahlsim-report-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    dahlsim(tiny_env, (const char *[]){"sweep", DATA "/scenarios/tiny-sweep.json", "--out", dir, "--set", "trace=true",
                                      "--quiet", NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    dahlsim(tiny_env, (const char *[]){"report", dir, NULL});
    cr_assert_eq(run.status, 0, "%s", run.err);
    snprintf(path, sizeof(path), "%s/report.html", dir);
    cr_assert(strstr(run.out, path) != NULL, "%s", run.out);
    char *html = slurp(path, NULL);
    cr_assert(strstr(html, "<!DOCTYPE html>") == html);
    cr_assert(strstr(html, "test fixture: a 2 x 3 grid of schedulers and batch sizes") != NULL, "no question");
    cr_assert(strstr(html, "<svg") != NULL, "no inline plot");
    for (int p = 0; p < 6; p++) {
        char link[64];
        snprintf(link, sizeof(link), "href=\"points/%04d/trace/gantt.svg\"", p);
        cr_assert(strstr(html, link) != NULL, "no link to point %d's Gantt chart", p);
        snprintf(path, sizeof(path), "%s/points/%04d/trace/gantt.svg", dir, p);
        assert_file_at_least(path, 1000);
    }
    cr_assert(strstr(html, "parallel efficiency") != NULL);
    /* Self-contained: nothing fetched from elsewhere (SVG's xmlns URIs are names, not fetches). */
    cr_assert(strstr(html, "src=\"http") == NULL && strstr(html, "href=\"http") == NULL && strstr(html, "<script") == NULL,
              "the page must be self-contained");
    free(html);
    snprintf(path, sizeof(path), "%s/points/0000/trace", dir);
    cJSON_Delete(check_trace_dir(path, 0.01, true));

    dahlsim(tiny_env, (const char *[]){"report", "/tmp/dahlsim-no-such-sweep", NULL});
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "dahlsim: error: report: /tmp/dahlsim-no-such-sweep: expected a sweep directory") != NULL,
              "%s", run.err);
    dahl_test_remove_tree(dir);
}

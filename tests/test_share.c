/* The GPU-sharing emulator (sim/lab/dahlsim_share.h): makespans worked out by hand on tiny cases (a link
 * of 1 byte/s and no latency, so a tensor of n bytes takes n seconds), prefetch against no prefetch, Belady
 * against LRU, StarPU's reclaim, the GA against fifo, determinism, every error with its message, and the
 * `dahlsim dag share` command line. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"
#include "dahlsim_share.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends a job of `steps` steps with one tensor per entry of bytes[] (all written or none). */
static void add_job(struct dahlsim_share *s, const char *name, int steps, double compute_s, double host_s,
                    int ntensors, const uint64_t *bytes, bool written)
{
    struct dahlsim_share_job *j = &s->jobs[s->njobs++];
    snprintf(j->name, sizeof(j->name), "%s", name);
    j->steps = steps;
    j->compute_s = compute_s;
    j->host_s = host_s;
    j->ntensors = ntensors;
    j->tensors = calloc((size_t)ntensors, sizeof(*j->tensors));
    cr_assert_not_null(j->tensors);
    for (int i = 0; i < ntensors; i++)
        j->tensors[i] = (struct dahlsim_share_tensor){.bytes = bytes[i], .written = written};
}

static void unit_link(struct dahlsim_share *s, uint64_t memory)
{
    memset(s, 0, sizeof(*s));
    s->memory_bytes = memory;
    s->bandwidth_bytes_per_s = 1.0;
    s->latency_s = 0.0;
}

static double run(const struct dahlsim_share *s, enum dahlsim_share_policy policy, bool prefetch,
                  enum dahlsim_share_order order, struct dahlsim_share_result *r)
{
    struct dahlsim_share_conf conf = {.policy = policy, .prefetch = prefetch, .window = 4};
    char err[256];
    int ret = dahlsim_share_run(s, &conf, order, NULL, 0, r, err, sizeof(err));
    cr_assert_eq(ret, 0, "%s", err);
    return r->makespan_s;
}

static double makespan(const struct dahlsim_share *s, enum dahlsim_share_policy policy, bool prefetch,
                       enum dahlsim_share_order order)
{
    struct dahlsim_share_result r;
    double m = run(s, policy, prefetch, order, &r);
    dahlsim_share_result_fini(&r);
    return m;
}

/* Two jobs of one step (3 s) and one 2-byte tensor each. */
static void two_jobs(struct dahlsim_share *s, uint64_t memory, bool written)
{
    static const uint64_t two[] = {2};
    unit_link(s, memory);
    add_job(s, "a", 1, 3.0, 0.0, 1, two, written);
    add_job(s, "b", 1, 3.0, 0.0, 1, two, written);
}

/* Job a's host phase (10 s) keeps its second step away; b has none. Memory for both. */
static void host_phase(struct dahlsim_share *s)
{
    static const uint64_t one[] = {1};
    unit_link(s, 2);
    add_job(s, "a", 2, 1.0, 10.0, 1, one, false);
    add_job(s, "b", 2, 1.0, 0.0, 1, one, false);
}

Test(share, two_jobs_by_hand)
{
    struct dahlsim_share s;
    /* Memory for one tensor: A loads [0, 2] and computes [2, 5]; B cannot load under A's compute (A's tensor is
     * in use), so it loads [5, 7] and computes [7, 10], with or without prefetch: the sum of loads and computes. */
    two_jobs(&s, 2, false);
    for (int p = 0; p < DAHLSIM_SHARE_NPOLICIES; p++) {
        cr_assert_float_eq(makespan(&s, p, false, DAHLSIM_SHARE_FIFO), 10.0, 1e-12);
        cr_assert_float_eq(makespan(&s, p, true, DAHLSIM_SHARE_FIFO), 10.0, 1e-12);
    }
    /* Memory for both: with prefetch B loads [2, 4] under A's compute and computes [5, 8]; without, it still
     * loads when the GPU reaches it. */
    s.memory_bytes = 4;
    for (int p = 0; p < DAHLSIM_SHARE_NPOLICIES; p++) {
        struct dahlsim_share_result r;
        cr_assert_float_eq(run(&s, p, true, DAHLSIM_SHARE_FIFO, &r), 8.0, 1e-12);
        cr_assert_float_eq(r.wait_for_data_s, 2.0, 1e-12); /* A's load only */
        cr_assert_float_eq(r.busy_fraction, 6.0 / 8.0, 1e-12);
        cr_assert_eq(r.total.h2d_count, 2);
        cr_assert_eq(r.total.evictions, 0);
        dahlsim_share_result_fini(&r);
        cr_assert_float_eq(makespan(&s, p, false, DAHLSIM_SHARE_FIFO), 10.0, 1e-12);
    }
    dahlsim_share_fini(&s);
}

Test(share, dirty_evictions_wait_for_their_write_back)
{
    struct dahlsim_share s;
    /* A written: when B needs the room at 5, A's tensor goes back [5, 7] and B loads [7, 9], computes [9, 12]. */
    two_jobs(&s, 2, true);
    struct dahlsim_share_result r;
    cr_assert_float_eq(run(&s, DAHLSIM_SHARE_LRU, false, DAHLSIM_SHARE_FIFO, &r), 12.0, 1e-12);
    cr_assert_eq(r.jobs[0].d2h_bytes, 2);
    cr_assert_eq(r.jobs[0].d2h_count, 1);
    cr_assert_eq(r.jobs[0].evictions, 1);
    cr_assert_eq(r.jobs[1].d2h_count, 0);
    cr_assert_eq(r.total.h2d_bytes, 4);
    cr_assert_float_eq(r.jobs[1].wait_for_data_s, 4.0, 1e-12);
    cr_assert_float_eq(r.jobs[0].end_s, 5.0, 1e-12);
    dahlsim_share_result_fini(&r);
    dahlsim_share_fini(&s);
}

Test(share, fifo_takes_the_earliest_ready_step)
{
    struct dahlsim_share s;
    host_phase(&s);
    struct dahlsim_share_result r;
    /* a [1, 2], b loaded [1, 2] under it (prefetch), b0 [2, 3], b1 ready at 3 [3, 4], a1 ready at 12 [12, 13]. */
    cr_assert_float_eq(run(&s, DAHLSIM_SHARE_LRU, true, DAHLSIM_SHARE_FIFO, &r), 13.0, 1e-12);
    int want[] = {0, 1, 1, 0};
    cr_assert_eq(r.norder, 4);
    cr_assert_arr_eq(r.order, want, sizeof(want));
    dahlsim_share_result_fini(&r);
    /* round-robin is strict: a, b, then a waits for its host phase: a1 [12, 13], b1 [13, 14]. */
    cr_assert_float_eq(makespan(&s, DAHLSIM_SHARE_LRU, true, DAHLSIM_SHARE_ROUND_ROBIN), 14.0, 1e-12);
    dahlsim_share_fini(&s);
}

/* Three one-tensor jobs, memory for two, run a, b, c, a, b, c, a, b, c. */
static void three_in_two(struct dahlsim_share *s)
{
    static const uint64_t one[] = {1};
    unit_link(s, 2);
    add_job(s, "a", 3, 1.0, 0.0, 1, one, false);
    add_job(s, "b", 3, 1.0, 0.0, 1, one, false);
    add_job(s, "c", 3, 1.0, 0.0, 1, one, false);
}

/* A job's priority decides where an order has a choice: round-robin's cycle, fifo's and weight's ties. */
Test(share, priority_breaks_the_ties)
{
    struct dahlsim_share s;
    three_in_two(&s);
    s.jobs[2].priority = 1;
    int want[] = {2, 0, 1, 2, 0, 1, 2, 0, 1};
    enum dahlsim_share_order orders[] = {DAHLSIM_SHARE_ROUND_ROBIN, DAHLSIM_SHARE_FIFO};
    for (int k = 0; k < 2; k++) {
        struct dahlsim_share_result r;
        run(&s, DAHLSIM_SHARE_LRU, false, orders[k], &r);
        cr_assert_eq(r.norder, 9);
        cr_assert_arr_eq(r.order, want, sizeof(want), "order %d", k);
        dahlsim_share_result_fini(&r);
    }
    /* weight: every job weighs the same before it ran (its whole data missing): c first */
    struct dahlsim_share_result r;
    run(&s, DAHLSIM_SHARE_LRU, false, DAHLSIM_SHARE_WEIGHT, &r);
    cr_assert_eq(r.order[0], 2);
    dahlsim_share_result_fini(&r);
    dahlsim_share_fini(&s);
}

Test(share, belady_moves_fewer_bytes_than_lru)
{
    struct dahlsim_share s;
    three_in_two(&s);
    struct dahlsim_share_result lru, min;
    /* LRU always evicts the tensor needed next: 9 loads. MIN keeps it: c evicts b (a is used sooner), then
     * b evicts a, a evicts c, c evicts a: 6 loads, each missing load 1 s before a 1 s compute. */
    run(&s, DAHLSIM_SHARE_LRU, false, DAHLSIM_SHARE_ROUND_ROBIN, &lru);
    run(&s, DAHLSIM_SHARE_BELADY, false, DAHLSIM_SHARE_ROUND_ROBIN, &min);
    cr_assert_eq(lru.total.h2d_bytes, 9);
    cr_assert_eq(min.total.h2d_bytes, 6);
    cr_assert_float_eq(lru.makespan_s, 18.0, 1e-12);
    cr_assert_float_eq(min.makespan_s, 15.0, 1e-12);
    cr_assert_arr_eq(lru.order, min.order, 9 * sizeof(int));
    dahlsim_share_result_fini(&lru);
    dahlsim_share_result_fini(&min);
    dahlsim_share_fini(&s);
}

Test(share, starpu_reclaims_twice_the_size_from_the_mc_list_head)
{
    static const uint64_t one[] = {1}, two[] = {2};
    struct dahlsim_share s;
    unit_link(&s, 3);
    add_job(&s, "a", 1, 1.0, 0.0, 1, one, false);
    add_job(&s, "b", 1, 1.0, 0.0, 1, one, false);
    add_job(&s, "c", 1, 1.0, 0.0, 1, one, false);
    add_job(&s, "d", 1, 1.0, 0.0, 1, two, false);
    struct dahlsim_share_result r;
    /* d needs 2 bytes, no chunk has its size: StarPU frees 4 bytes from the head (a, b, c: all of them);
     * LRU evicts a and b only. */
    run(&s, DAHLSIM_SHARE_STARPU, false, DAHLSIM_SHARE_FIFO, &r);
    cr_assert_eq(r.total.evictions, 3);
    dahlsim_share_result_fini(&r);
    run(&s, DAHLSIM_SHARE_LRU, false, DAHLSIM_SHARE_FIFO, &r);
    cr_assert_eq(r.total.evictions, 2);
    cr_assert_eq(r.jobs[2].evictions, 0);
    dahlsim_share_result_fini(&r);
    dahlsim_share_fini(&s);
}

Test(share, starpu_reuses_a_same_size_chunk_and_prefetch_never_evicts)
{
    struct dahlsim_share s;
    three_in_two(&s);
    struct dahlsim_share_result r;
    /* Each fetch reuses the mc_list head (same size): 7 evictions, 9 loads of 1 s, 18 s. Under StarPU a prefetch
     * only fills free memory: b loads [1, 2] under a's compute, but from then on two jobs fill the memory and
     * the next one loads when the GPU reaches it: 17 s. */
    cr_assert_float_eq(run(&s, DAHLSIM_SHARE_STARPU, false, DAHLSIM_SHARE_ROUND_ROBIN, &r), 18.0, 1e-12);
    cr_assert_eq(r.total.evictions, 7);
    dahlsim_share_result_fini(&r);
    cr_assert_float_eq(makespan(&s, DAHLSIM_SHARE_STARPU, true, DAHLSIM_SHARE_ROUND_ROBIN), 17.0, 1e-12);
    /* LRU prefetch evicts under the compute: c loads [2, 3] during b's compute, and so on: 1 + 9 x 1 s. */
    cr_assert_float_eq(makespan(&s, DAHLSIM_SHARE_LRU, true, DAHLSIM_SHARE_ROUND_ROBIN), 10.0, 1e-12);
    dahlsim_share_fini(&s);
}

/* Two jobs of 4 steps, each filling the memory: fifo alternates them (8 loads); grouping the steps of a job
 * loads each once. */
static void alternating(struct dahlsim_share *s)
{
    static const uint64_t one[] = {1};
    unit_link(s, 1);
    add_job(s, "a", 4, 1.0, 0.0, 1, one, false);
    add_job(s, "b", 4, 1.0, 0.0, 1, one, false);
}

Test(share, ga_beats_fifo_where_fifo_thrashes)
{
    struct dahlsim_share s;
    alternating(&s);
    struct dahlsim_share_conf conf = {.policy = DAHLSIM_SHARE_LRU, .prefetch = true, .window = 4};
    struct dahlsim_share_ga_conf ga;
    dahlsim_share_ga_defaults(&ga);
    struct dahlsim_share_result best;
    struct dahlsim_share_ga_stats stats;
    char err[256];
    cr_assert_eq(dahlsim_share_ga(&s, &conf, &ga, &best, &stats, err, sizeof(err)), 0, "%s", err);
    double fifo = makespan(&s, DAHLSIM_SHARE_LRU, true, DAHLSIM_SHARE_FIFO);
    cr_assert_float_eq(fifo, 16.0, 1e-12);
    cr_assert_float_eq(best.makespan_s, 10.0, 1e-12); /* 2 loads + 8 computes */
    cr_assert_lt(best.makespan_s, fifo);
    cr_assert_gt(stats.evaluations, ga.population);
    cr_assert_geq(stats.generations, 1);
    cr_assert_eq(best.total.h2d_count, 2);
    dahlsim_share_result_fini(&best);
    dahlsim_share_fini(&s);
}

Test(share, ga_is_never_worse_than_fifo_and_deterministic)
{
    static const uint64_t mixed[] = {1, 2, 3}, two[] = {2};
    struct dahlsim_share s;
    unit_link(&s, 7);
    add_job(&s, "a", 5, 2.0, 0.5, 3, mixed, true);
    add_job(&s, "b", 3, 1.0, 0.0, 1, two, false);
    add_job(&s, "c", 4, 3.0, 1.0, 3, mixed, true);
    struct dahlsim_share_conf conf = {.policy = DAHLSIM_SHARE_STARPU, .prefetch = true, .window = 4};
    struct dahlsim_share_ga_conf ga;
    dahlsim_share_ga_defaults(&ga);
    ga.seed = 7;
    struct dahlsim_share_result x, y;
    struct dahlsim_share_ga_stats sx, sy;
    char err[256];
    cr_assert_eq(dahlsim_share_ga(&s, &conf, &ga, &x, &sx, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahlsim_share_ga(&s, &conf, &ga, &y, &sy, err, sizeof(err)), 0, "%s", err);
    for (int o = 0; o < DAHLSIM_SHARE_GA; o++)
        cr_assert_leq(x.makespan_s, makespan(&s, conf.policy, true, o));
    cr_assert_eq(x.makespan_s, y.makespan_s);
    cr_assert_eq(sx.evaluations, sy.evaluations);
    cr_assert_arr_eq(x.order, y.order, (size_t)x.norder * sizeof(int));
    cJSON *jx = dahlsim_share_result_json(&s, &conf, "ga", &x, &sx), *jy = dahlsim_share_result_json(&s, &conf, "ga", &y, &sy);
    char *tx = cJSON_Print(jx), *ty = cJSON_Print(jy);
    cr_assert_str_eq(tx, ty);
    free(tx);
    free(ty);
    cJSON_Delete(jx);
    cJSON_Delete(jy);
    dahlsim_share_result_fini(&x);
    dahlsim_share_result_fini(&y);
    dahlsim_share_fini(&s);
}

Test(share, weight_runs_the_resident_job_first)
{
    struct dahlsim_share s;
    alternating(&s);
    struct dahlsim_share_result r;
    /* Round 1: a, b (equal weights, equal penalties: index). Then b is resident (penalty 0, infinite weight):
     * b, a; then a: a, b; then b, a. Loads: a, b, a, b, a (5 of 1 s) + 8 computes. */
    cr_assert_float_eq(run(&s, DAHLSIM_SHARE_LRU, false, DAHLSIM_SHARE_WEIGHT, &r), 13.0, 1e-12);
    int want[] = {0, 1, 1, 0, 0, 1, 1, 0};
    cr_assert_arr_eq(r.order, want, sizeof(want));
    dahlsim_share_result_fini(&r);
    dahlsim_share_fini(&s);
}

/* Not a law of the model: a partial prefetch can queue a load that waits for a write-back at the head of the
 * host->GPU FIFO (docs/scheduler-lab.md), but on these cases prefetch never loses. */
Test(share, prefetch_is_never_slower_on_the_hand_cases)
{
    struct dahlsim_share cases[6];
    two_jobs(&cases[0], 2, false);
    two_jobs(&cases[1], 4, false);
    two_jobs(&cases[2], 2, true);
    host_phase(&cases[3]);
    three_in_two(&cases[4]);
    alternating(&cases[5]);
    for (int c = 0; c < 6; c++) {
        for (int p = 0; p < DAHLSIM_SHARE_NPOLICIES; p++)
            for (int o = 0; o < DAHLSIM_SHARE_GA; o++)
                cr_assert_leq(makespan(&cases[c], p, true, o), makespan(&cases[c], p, false, o) + 1e-12,
                              "case %d, policy %s, order %s", c, dahlsim_share_policy_name(p),
                              dahlsim_share_order_name(o));
        dahlsim_share_fini(&cases[c]);
    }
}

Test(share, errors_name_the_field_and_the_sizes)
{
    static const uint64_t big[] = {600, 500};
    struct dahlsim_share s;
    unit_link(&s, 1000);
    add_job(&s, "big", 2, 1.0, 0.0, 2, big, true);
    char err[512];
    cr_assert_eq(dahlsim_share_check(&s, "--memory-bytes", err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "--memory-bytes: 1000 bytes is less than job \"big\"'s data (1100 bytes)") != NULL, "%s", err);

    s.memory_bytes = 2000;
    struct dahlsim_share_conf conf = {.policy = DAHLSIM_SHARE_LRU, .prefetch = true, .window = 4};
    struct dahlsim_share_ga_conf ga;
    dahlsim_share_ga_defaults(&ga);
    ga.population = 1;
    ga.select = 1;
    struct dahlsim_share_result r;
    struct dahlsim_share_ga_stats st;
    cr_assert_eq(dahlsim_share_ga(&s, &conf, &ga, &r, &st, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "GA population: expected 2 to 100000 orders, got 1") != NULL, "%s", err);

    enum dahlsim_share_policy p;
    enum dahlsim_share_order o;
    cr_assert(!dahlsim_share_policy_parse("belady2", &p, err, sizeof(err)));
    cr_assert_str_eq(err, "expected one of lru, starpu, belady, got \"belady2\"");
    cr_assert(!dahlsim_share_order_parse("fifo ", &o, err, sizeof(err)));
    cr_assert_str_eq(err, "expected one of fifo, round-robin, weight, ga, given, got \"fifo \"");
    cr_assert(dahlsim_share_order_parse("round-robin", &o, err, sizeof(err)) && o == DAHLSIM_SHARE_ROUND_ROBIN);

    /* Given orders: the k-th occurrence of a job is its step k, so each job must appear `steps` times. */
    int three[] = {0, 0, 0}, one[] = {0}, bad[] = {0, 1};
    cr_assert_eq(dahlsim_share_run(&s, &conf, DAHLSIM_SHARE_GIVEN, three, 3, &r, err, sizeof(err)), -EINVAL);
    cr_assert_str_eq(err, "given order: job 0 (\"big\") appears 3 times, expected 2 (its steps)");
    cr_assert_eq(dahlsim_share_order_check(&s, one, 1, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "appears 1 times, expected 2") != NULL, "%s", err);
    cr_assert_eq(dahlsim_share_order_check(&s, bad, 2, err, sizeof(err)), -EINVAL);
    cr_assert_str_eq(err, "given order: element 1: 1 is not a job index (expected 0 to 0)");
    int two[] = {0, 0};
    cr_assert_eq(dahlsim_share_run(&s, &conf, DAHLSIM_SHARE_GIVEN, two, 2, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_float_eq(r.makespan_s, 1100.0 + 2.0, 1e-9);
    dahlsim_share_result_fini(&r);
    dahlsim_share_fini(&s);
}

static const char share_file[] =
    "{\"format\": \"dahlsim-share-1\", \"gpu_memory_bytes\": 4, \"link\": {\"bandwidth_bytes_per_s\": 1, "
    "\"latency_s\": 0},\n \"jobs\": [{\"name\": \"a\", \"steps\": 1, \"compute_s\": 3, \"tensors\": [{\"bytes\": 2, "
    "\"written\": false}]},\n {\"name\": \"b\", \"steps\": 1, \"compute_s\": 3, \"host_s\": 0, \"tensors\": "
    "[{\"bytes\": 2, \"written\": false}]}]}\n";

Test(share, files_load_strictly)
{
    char dir[] = "/tmp/dahlsim-share-XXXXXX", path[128], err[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/s.json", dir);
    dahl_test_write_file(path, share_file);
    struct dahlsim_share s;
    cr_assert_eq(dahlsim_share_load(path, &s, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(s.njobs, 2);
    cr_assert_float_eq(makespan(&s, DAHLSIM_SHARE_LRU, true, DAHLSIM_SHARE_FIFO), 8.0, 1e-12);
    char saved[160];
    snprintf(saved, sizeof(saved), "%s/saved.json", dir);
    cr_assert_eq(dahlsim_share_save(&s, saved, err, sizeof(err)), 0, "%s", err);
    dahlsim_share_fini(&s);
    cr_assert_eq(dahlsim_share_load(saved, &s, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(s.jobs[1].tensors[0].bytes, 2);
    dahlsim_share_fini(&s);

    static const struct { const char *from, *to, *want; } cases[] = {
        {"\"gpu_memory_bytes\": 4", "\"gpu_memory_bytes\": 1",
         "s.json: \"gpu_memory_bytes\": 1 bytes is less than job \"a\"'s data (2 bytes)"},
        {"\"gpu_memory_bytes\": 4", "\"gpu_memory_mib\": 0", "\"gpu_memory_mib\": expected a number"},
        {"\"steps\": 1, \"compute_s\": 3, \"tensors\"", "\"steps\": 0, \"compute_s\": 3, \"tensors\"",
         "\"jobs\"[0].\"steps\": expected an integer in [1, 1e+07]"},
        {"\"host_s\": 0", "\"host\": 0", "\"jobs\"[1]: unknown key \"host\""},
        {"\"written\": false}]}]", "\"writen\": false}]}]", "\"jobs\"[1].\"tensors\"[0]: unknown key \"writen\""},
        {"\"latency_s\": 0", "\"latency_s\": -1", "\"link\".\"latency_s\": expected a number in [0, 1e+06]"},
        {"dahlsim-share-1", "dahlsim-share-2", "\"format\": expected \"dahlsim-share-1\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[sizeof(share_file) + 64];
        const char *at = strstr(share_file, cases[i].from);
        cr_assert_not_null(at, "case %zu", i);
        snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - share_file), share_file, cases[i].to,
                 at + strlen(cases[i].from));
        dahl_test_write_file(path, text);
        cr_assert_eq(dahlsim_share_load(path, &s, err, sizeof(err)), -EINVAL, "case %zu", i);
        cr_assert(strstr(err, cases[i].want) != NULL && strncmp(err, path, strlen(path)) == 0, "case %zu: %s", i, err);
    }
    dahl_test_remove_tree(dir);
}

static struct dahl_test_run cli;

Test(share_cli, runs_and_refuses_bad_input_with_exit_2)
{
    char dir[] = "/tmp/dahlsim-share-cli-XXXXXX", path[128], order[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/s.json", dir);
    snprintf(order, sizeof(order), "given:%s/o.json", dir);
    dahl_test_write_file(path, share_file);
    dahl_test_write_file(order + 6, "[\"b\", 0]");

    char *ok[] = {DAHLSIM_BIN, "dag", "share", path, "--policy", "belady", NULL};
    dahl_test_run(&cli, ok, NULL);
    cr_assert_eq(cli.status, 0, "%s", cli.err);
    cJSON *doc = cJSON_Parse(cli.out);
    cr_assert_not_null(doc, "%s", cli.out);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(doc, "makespan_s")), 8.0, 1e-12);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "policy")), "belady");
    cJSON_Delete(doc);
    char first[sizeof(cli.out)];
    snprintf(first, sizeof(first), "%s", cli.out);
    dahl_test_run(&cli, ok, NULL);
    cr_assert_str_eq(cli.out, first); /* same input, same bytes */

    char *given[] = {DAHLSIM_BIN, "dag", "share", path, "--order", order, "--no-prefetch", NULL};
    dahl_test_run(&cli, given, NULL);
    cr_assert_eq(cli.status, 0, "%s", cli.err);
    cr_assert(strstr(cli.out, "\"order\":\t[1, 0]") != NULL, "%s", cli.out);

    char *all[] = {DAHLSIM_BIN, "dag", "share", path, "--all", "--table", "--population", "4", NULL};
    dahl_test_run(&cli, all, NULL);
    cr_assert_eq(cli.status, 0, "%s", cli.err);
    cr_assert(strstr(cli.out, "| ga | off | 10.000000 |") != NULL, "%s", cli.out);

    char *small[] = {DAHLSIM_BIN, "dag", "share", path, "--memory-bytes", "1", NULL};
    dahl_test_run(&cli, small, NULL);
    dahl_test_assert_input_error(&cli, "memory", "--memory-bytes: 1 bytes is less than job \"a\"'s data (2 bytes)",
                                 NULL);
    char *policy[] = {DAHLSIM_BIN, "dag", "share", path, "--policy", "lfu", NULL};
    dahl_test_run(&cli, policy, NULL);
    dahl_test_assert_input_error(&cli, "policy", "--policy: expected one of lru, starpu, belady", NULL);
    char *ord[] = {DAHLSIM_BIN, "dag", "share", path, "--order", "random", NULL};
    dahl_test_run(&cli, ord, NULL);
    dahl_test_assert_input_error(&cli, "order", "expected one of fifo, round-robin, weight, ga, given:FILE", NULL);
    char *pop[] = {DAHLSIM_BIN, "dag", "share", path, "--order", "ga", "--population", "1", NULL};
    dahl_test_run(&cli, pop, NULL);
    dahl_test_assert_input_error(&cli, "population", "--population 1: expected at least 2", NULL);
    dahl_test_write_file(order + 6, "[0, 0]");
    dahl_test_run(&cli, given, NULL);
    dahl_test_assert_input_error(&cli, "given", "o.json: given order: job 0 (\"a\") appears 2 times, expected 1", NULL);
    char *missing[] = {DAHLSIM_BIN, "dag", "share", "/nonexistent/s.json", NULL};
    dahl_test_run(&cli, missing, NULL);
    dahl_test_assert_input_error(&cli, "missing", "/nonexistent/s.json", NULL);
    char *job[] = {DAHLSIM_BIN, "dag", "share-export", "--machine", "roofline-14cpu-1v100", "--job", "lenet:mnist:32",
                   "--out", path, NULL};
    dahl_test_run(&cli, job, NULL);
    dahl_test_assert_input_error(&cli, "job", "--job lenet:mnist:32: expected MODEL:DATASET:BATCH[:STEPS]", NULL);
    dahl_test_remove_tree(dir);
}

Test(share_cli, export_sizes_come_from_the_network)
{
    char dir[] = "/tmp/dahlsim-share-exp-XXXXXX", path[128], err[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/jobs.json", dir);
    char *cmd[] = {DAHLSIM_BIN, "dag", "share-export", "--machine", "roofline-14cpu-1v100", "--job",
                   "lenet:fashion-mnist:32:8", "--job", "lenet:synthetic:128x128x3:32:4", "--out", path, NULL};
    dahl_test_run(&cli, cmd, NULL);
    cr_assert_eq(cli.status, 0, "%s", cli.err);
    struct dahlsim_share s;
    cr_assert_eq(dahlsim_share_load(path, &s, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(s.njobs, 2);
    cr_assert_eq(s.jobs[0].steps, 8);
    cr_assert_eq(s.jobs[1].steps, 4);
    cr_assert_float_eq(s.bandwidth_bytes_per_s, 12e9, 1.0); /* the platform's RAM-CUDA0 link */
    cr_assert_float_eq(s.latency_s, 10e-6, 1e-12);
    /* LeNet at 28x28x1, batch 32: the input is 32 x 784 floats; conv1 (6 filters 5x5, 1 channel: 150 weights,
     * 6 biases) with momentum: weights, gradients, velocities = 3 x 156 floats. */
    cr_assert_str_eq(s.jobs[0].tensors[0].name, "input");
    cr_assert_eq(s.jobs[0].tensors[0].bytes, 32u * 784u * 4u);
    cr_assert(!s.jobs[0].tensors[0].written);
    cr_assert_str_eq(s.jobs[0].tensors[2].name, "L0.conv.params");
    cr_assert_eq(s.jobs[0].tensors[2].bytes, 3u * 156u * 4u);
    cr_assert_gt(s.jobs[1].compute_s, s.jobs[0].compute_s);
    uint64_t sum = dahlsim_share_job_bytes(&s.jobs[0]) + dahlsim_share_job_bytes(&s.jobs[1]);
    cr_assert_eq(s.memory_bytes, sum / 2 > dahlsim_share_job_bytes(&s.jobs[1]) ? sum / 2
                                                                               : dahlsim_share_job_bytes(&s.jobs[1]));
    dahlsim_share_fini(&s);
    dahl_test_remove_tree(dir);
}

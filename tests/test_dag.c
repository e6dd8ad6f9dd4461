/* AutoHeteroprio and the scheduler lab: the metrics and heuristic scores on a case computed by hand (the
 * paper's example types A: CPU 1 s / GPU 2 s, B: 2 s / 1 s, C: 1 s / 1 s), scale invariance of the
 * normalisation, the Heteroprio emulator's makespans on small DAGs worked out by hand on 2 CPUs + 1 GPU,
 * the generator's determinism and validity, the control priorities, and `dahlsim dag` errors. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"
#include "dahlsim_dag.h"
#include "dahlsim_perfmodel.h"

#include "dahl_autoprio.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { A, B, C };
static const char *const abc_names[] = {"A", "B", "C"};
static const double abc_cost[3][DAHL_NARCH] = {{1.0, 2.0}, {2.0, 1.0}, {1.0, 1.0}};
static const double idle_half_quarter[DAHL_NARCH] = {0.5, 0.25};

static void abc_types(struct dahl_autoprio_type t[3], double scale)
{
    memset(t, 0, 3 * sizeof(*t));
    for (int i = 0; i < 3; i++) {
        t[i].runs_on[0] = t[i].runs_on[1] = true;
        t[i].cost[0] = abc_cost[i][0] * scale;
        t[i].cost[1] = abc_cost[i][1] * scale;
        t[i].proportion = 1.0;
    }
    /* C releases three tasks of in-degree 1 (one A, one B, one C): NOD 3, best-time sum 3; with Pexec A on
     * CPU, B on GPU, C half and half: NRT_cpu = 1 + 0 + 0.5 = 1.5, NRT_gpu = 0 + 1 + 0.5 = 1.5. */
    t[C].nod = 3.0;
    t[C].succ_best = 3.0 * scale;
    t[C].nrt[0] = 1.5 * scale;
    t[C].nrt[1] = 1.5 * scale;
}

Test(autoprio, metrics_by_hand)
{
    struct dahl_autoprio_type t[3];
    abc_types(t, 1.0);
    cr_assert_float_eq(dahl_autoprio_scale(t, 3), 1.0, 1e-12);
    struct dahl_autoprio_metrics m;
    dahl_autoprio_metrics(t, 3, A, idle_half_quarter, &m);
    cr_assert_float_eq(m.diff[DAHL_ARCH_CPU], 1.0, 1e-12);
    cr_assert_float_eq(m.diff[DAHL_ARCH_GPU], -1.0, 1e-12);
    cr_assert_float_eq(m.rel_diff[DAHL_ARCH_CPU], 2.0, 1e-12);
    cr_assert_float_eq(m.rel_diff[DAHL_ARCH_GPU], 0.5, 1e-12);
    cr_assert_float_eq(m.urt, 0.0, 1e-12);
    dahl_autoprio_metrics(t, 3, C, idle_half_quarter, &m);
    /* URT = NRT_cpu IDLE(cpu) + NRT_gpu IDLE(gpu) = 1.5 * 0.5 + 1.5 * 0.25 */
    cr_assert_float_eq(m.urt, 1.125, 1e-12);
    cr_assert_float_eq(m.diff[DAHL_ARCH_CPU], 0.0, 1e-12);

    /* Normalisation weights types by their proportion: X best 2 s (3 tasks), Y best 6 s (1 task) -> 3 s. */
    struct dahl_autoprio_type xy[2] = {
        {.runs_on = {true, true}, .cost = {2.0, 4.0}, .proportion = 3.0},
        {.runs_on = {true, false}, .cost = {6.0, 0.0}, .proportion = 1.0},
    };
    cr_assert_float_eq(dahl_autoprio_scale(xy, 2), 3.0, 1e-12);
    dahl_autoprio_metrics(xy, 2, 1, idle_half_quarter, &m);
    cr_assert_float_eq(m.z[DAHL_ARCH_CPU], 2.0, 1e-12);
    cr_assert_float_eq(m.z[DAHL_ARCH_GPU], DAHL_AUTOPRIO_NO_COST, 1e-12);
}

Test(autoprio, heuristic_scores_by_hand)
{
    struct dahl_autoprio_type t[3];
    abc_types(t, 1.0);
    struct dahl_autoprio_params p = dahl_autoprio_params_default();
    struct dahl_autoprio_metrics a, c;
    dahl_autoprio_metrics(t, 3, A, idle_half_quarter, &a);
    dahl_autoprio_metrics(t, 3, C, idle_half_quarter, &c);
    const int cpu = DAHL_ARCH_CPU, gpu = DAHL_ARCH_GPU;
    /* offset: (1.3 + URT)(1 + diff) */
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_OFFSET, &p, &a, cpu), 1.3 * 2.0, 1e-12);
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_OFFSET, &p, &a, gpu), 0.0, 1e-12);
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_OFFSET, &p, &c, cpu), 2.425, 1e-12);
    /* softplus: (1 + URT) ln(1 + e^diff) */
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_SOFTPLUS, &p, &c, cpu), 2.125 * log(2.0), 1e-12);
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_SOFTPLUS, &p, &a, gpu), log1p(exp(-1.0)), 1e-12);
    /* interpolation: URT >= 1 -> (1 + URT)(1 + diff); URT = 0 -> -ln(1 + e^-diff) */
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_INTERP, &p, &c, cpu), 2.125, 1e-12);
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_INTERP, &p, &a, cpu), -log1p(exp(-1.0)), 1e-12);
    /* NTC: diff + 0.3 exp(-0.5 (rd - 1)^2) NOD */
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_NTC, &p, &c, cpu), 0.9, 1e-12);
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_NTC, &p, &a, cpu), 1.0, 1e-12);
    /* PRWS: NOD (succ_best + diff) / z; PURWS: URT (succ_best + diff) / z */
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_PRWS, &p, &c, gpu), 9.0, 1e-12);
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_PURWS, &p, &c, gpu), 3.375, 1e-12);
    cr_assert_float_eq(dahl_autoprio_score(DAHL_AUTOPRIO_PRWS, &p, &a, cpu), 0.0, 1e-12);
}

Test(autoprio, priorities_do_not_depend_on_the_time_unit)
{
    struct dahl_autoprio_type s[3], us[3];
    abc_types(s, 1.0);
    abc_types(us, 1e6);
    struct dahl_autoprio_params p = dahl_autoprio_params_default();
    for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++) {
        for (int i = 0; i < 3; i++) {
            struct dahl_autoprio_metrics ms, mu;
            dahl_autoprio_metrics(s, 3, i, idle_half_quarter, &ms);
            dahl_autoprio_metrics(us, 3, i, idle_half_quarter, &mu);
            for (int arch = 0; arch < DAHL_NARCH; arch++)
                cr_assert_float_eq(dahl_autoprio_score(h, &p, &ms, arch), dahl_autoprio_score(h, &p, &mu, arch), 1e-9,
                                   "%s, type %d, arch %d", dahl_autoprio_heuristic_name(h), i, arch);
        }
    }
}

Test(autoprio, offset_lists_favour_the_faster_architecture)
{
    /* Independent tasks (no successors, URT 0): the offset model orders by diff alone. */
    struct dahl_autoprio_type t[3];
    abc_types(t, 1.0);
    t[C].nod = t[C].succ_best = t[C].nrt[0] = t[C].nrt[1] = 0.0;
    struct dahl_autoprio_params p = dahl_autoprio_params_default();
    int order[3];
    cr_assert_eq(dahl_autoprio_order(DAHL_AUTOPRIO_OFFSET, &p, t, 3, idle_half_quarter, DAHL_ARCH_CPU, order), 3);
    cr_assert(order[0] == A && order[1] == C && order[2] == B);
    cr_assert_eq(dahl_autoprio_order(DAHL_AUTOPRIO_OFFSET, &p, t, 3, idle_half_quarter, DAHL_ARCH_GPU, order), 3);
    cr_assert(order[0] == B && order[1] == C && order[2] == A);
    enum dahl_autoprio_heuristic h;
    cr_assert(dahl_autoprio_heuristic_parse("purws", &h) && h == DAHL_AUTOPRIO_PURWS);
    cr_assert_not(dahl_autoprio_heuristic_parse("fifo", &h));
}

Test(autoprio, tracker_recomputes_on_new_types_and_every_nth_push)
{
    struct dahl_autoprio *ap = dahl_autoprio_create(DAHL_AUTOPRIO_OFFSET, NULL, 4);
    cr_assert_not_null(ap);
    bool both[DAHL_NARCH] = {true, true};
    for (int i = 0; i < 3; i++)
        cr_assert_eq(dahl_autoprio_declare(ap, i, both, abc_cost[i]), i);
    int succ_type[1] = {B};
    double succ_indeg[1] = {2.0};
    bool due[8];
    int types[8] = {A, A, A, B, A, A, A, A};
    for (int k = 0; k < 8; k++)
        due[k] = dahl_autoprio_push(ap, types[k], 1, succ_type, succ_indeg);
    /* push 0 (new A, and 0 % 4), 3 (new B), 4 (4 % 4): due; the others not. */
    bool want[8] = {true, false, false, true, true, false, false, false};
    for (int k = 0; k < 8; k++)
        cr_assert_eq(due[k], want[k], "push %d", k);
    struct dahl_autoprio_type a;
    dahl_autoprio_type_get(ap, A, &a);
    cr_assert_float_eq(a.nod, 0.5, 1e-12);              /* 1 / ID */
    cr_assert_float_eq(a.succ_best, 1.0, 1e-12);        /* B's best: 1 s on GPU */
    cr_assert_float_eq(a.nrt[DAHL_ARCH_GPU], 0.5, 1e-12); /* B runs on GPU before any ran: 1 * 1 s / 2 */
    cr_assert_float_eq(a.nrt[DAHL_ARCH_CPU], 0.0, 1e-12);
    /* Measured times replace the estimates. */
    dahl_autoprio_executed(ap, A, DAHL_ARCH_CPU, 3.0);
    dahl_autoprio_executed(ap, A, DAHL_ARCH_CPU, 5.0);
    dahl_autoprio_type_get(ap, A, &a);
    cr_assert_float_eq(a.cost[DAHL_ARCH_CPU], 4.0, 1e-12);
    dahl_autoprio_destroy(ap);
    dahl_autoprio_destroy(NULL);
}

/* ---- the emulator ---- */

static void make_dag(struct dahlsim_dag *g, int n, const int *type, const int *pstart, const int *pred)
{
    char err[256];
    int ret = dahlsim_dag_init(g, 3, abc_names, abc_cost, n, type, pstart, pred, err, sizeof(err));
    cr_assert_eq(ret, 0, "%s", err);
}

static struct dahlsim_prio lists(const char *cpu, const char *gpu)
{
    struct dahlsim_prio p = {0};
    for (const char *c = cpu; *c; c++)
        p.order[DAHL_ARCH_CPU][p.n[DAHL_ARCH_CPU]++] = *c - 'A';
    for (const char *c = gpu; *c; c++)
        p.order[DAHL_ARCH_GPU][p.n[DAHL_ARCH_GPU]++] = *c - 'A';
    return p;
}

static double emulate(const struct dahlsim_dag *g, const struct dahlsim_prio *p, struct dahlsim_emu_result *r)
{
    struct dahlsim_emu_conf conf = {.cpus = 2, .gpus = 1};
    char err[256];
    int ret = dahlsim_dag_emulate(g, &conf, p, r, err, sizeof(err));
    cr_assert_eq(ret, 0, "%s", err);
    return r->makespan_s;
}

Test(emulator, independent_tasks_by_hand)
{
    /* Tasks 0:A 1:A 2:B 3:B 4:C, no edges; workers CPU0, CPU1, GPU0 pick in that order.
     * CPU A,C,B / GPU B,C,A: t=0 CPU0 A0, CPU1 A1, GPU B2 (all end at 1); t=1 CPU0 C4 (ends 2), CPU1 takes B3
     * before the GPU looks (2 s on a CPU, ends 3), the GPU finds nothing: makespan 3.
     * CPU A,C (B never on CPUs): t=1 CPU0 C4, GPU B3, both end at 2: makespan 2. */
    int type[] = {A, A, B, B, C}, pstart[] = {0, 0, 0, 0, 0, 0};
    struct dahlsim_dag g;
    make_dag(&g, 5, type, pstart, NULL);
    struct dahlsim_emu_result r;
    struct dahlsim_prio p = lists("ACB", "BCA");
    cr_assert_float_eq(emulate(&g, &p, &r), 3.0, 1e-12);
    cr_assert_eq(r.tasks_on[DAHL_ARCH_CPU], 4);
    cr_assert_eq(r.tasks_on[DAHL_ARCH_GPU], 1);
    p = lists("AC", "BCA");
    cr_assert_float_eq(emulate(&g, &p, &r), 2.0, 1e-12);
    cr_assert_eq(r.tasks_on[DAHL_ARCH_GPU], 2);
    cr_assert_float_eq(r.busy_s[DAHL_ARCH_CPU], 3.0, 1e-12);
    dahlsim_dag_fini(&g);
}

Test(emulator, dependent_tasks_by_hand)
{
    /* 0:C (successors 3:B, 4:B, 5:A), roots 1:A, 2:B.
     * Faster arch first, CPU A,C,B / GPU B,C,A: t=0 CPU0 A1, CPU1 C0, GPU B2; t=1 C0 releases 3, 4, 5:
     * CPU0 A5 (ends 2), CPU1 B3 (2 s, ends 3), GPU B4 (ends 2): makespan 3.
     * Slower arch first, CPU B,C,A / GPU A,C,B: t=0 CPU0 B2 (ends 2), CPU1 C0 (ends 1), GPU A1 (2 s, ends 2);
     * t=1 CPU1 B3 (ends 3); t=2 CPU0 B4 (ends 4), GPU A5 (ends 4): makespan 4. */
    int type[] = {C, A, B, B, B, A}, pstart[] = {0, 0, 0, 0, 1, 2, 3}, pred[] = {0, 0, 0};
    struct dahlsim_dag g;
    make_dag(&g, 6, type, pstart, pred);
    struct dahlsim_emu_result r;
    struct dahlsim_prio p = lists("ACB", "BCA");
    cr_assert_float_eq(emulate(&g, &p, &r), 3.0, 1e-12);
    p = lists("BCA", "ACB");
    cr_assert_float_eq(emulate(&g, &p, &r), 4.0, 1e-12);
    /* Critical path 2 s (C then A or B); area: A (2 x 1 s) and C (1 s) on the CPUs, B (2 s on CPU, 1 s on
     * GPU) split so both sides end together: 3 + 2 b = 2 T and 3 - b = T give T = 2.25 s. */
    cr_assert_float_eq(dahlsim_dag_lower_bound(&g, 2, 1), 2.25, 1e-9);

    /* The control search finds lists at least as good as the by-hand best (3 s) and never beats the bound. */
    struct dahlsim_emu_conf conf = {.cpus = 2, .gpus = 1};
    struct dahlsim_prio best;
    double ms;
    char err[256];
    cr_assert_eq(dahlsim_dag_control(&g, &conf, 7, 8, &best, &ms, err, sizeof(err)), 0, "%s", err);
    cr_assert_leq(ms, 3.0);
    cr_assert_geq(ms, 2.25);
    cr_assert_float_eq(emulate(&g, &best, &r), ms, 1e-12);
    dahlsim_dag_fini(&g);
}

Test(emulator, slow_factors_keep_a_slower_arch_off_short_queues)
{
    /* Two B tasks (GPU 1 s, CPU 2 s: slow factor 2 for CPUs), 2 CPUs + 1 GPU, lists B / B.
     * Without slow factors CPU0 and CPU1 take both at t=0: 2 CPU tasks, makespan 2.
     * With them a CPU takes a B only while the bucket holds >= 2 tasks per GPU worker: CPU0 sees 2 and takes
     * B0, CPU1 sees 1 and waits, the GPU takes B1: 1 CPU task, makespan still 2 (CPU0). */
    int type[] = {B, B}, pstart[] = {0, 0, 0};
    struct dahlsim_dag g;
    make_dag(&g, 2, type, pstart, NULL);
    struct dahlsim_prio p = lists("B", "B");
    struct dahlsim_emu_result r;
    cr_assert_float_eq(emulate(&g, &p, &r), 2.0, 1e-12);
    cr_assert_eq(r.tasks_on[DAHL_ARCH_CPU], 2);
    struct dahlsim_emu_conf conf = {.cpus = 2, .gpus = 1, .slow_factors = true};
    char err[256];
    cr_assert_eq(dahlsim_dag_emulate(&g, &conf, &p, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(r.tasks_on[DAHL_ARCH_CPU], 1);
    cr_assert_eq(r.tasks_on[DAHL_ARCH_GPU], 1);
    cr_assert_float_eq(r.makespan_s, 2.0, 1e-12);
    dahlsim_dag_fini(&g);
}

Test(emulator, a_type_on_no_list_is_an_error)
{
    int type[] = {A, B}, pstart[] = {0, 0, 0};
    struct dahlsim_dag g;
    make_dag(&g, 2, type, pstart, NULL);
    struct dahlsim_prio p = lists("A", "A");
    struct dahlsim_emu_result r;
    struct dahlsim_emu_conf conf = {.cpus = 2, .gpus = 1};
    char err[256];
    cr_assert_eq(dahlsim_dag_emulate(&g, &conf, &p, &r, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "type \"B\"") != NULL, "%s", err);
    dahlsim_dag_fini(&g);
}

Test(emulator, auto_priorities_run_every_task_deterministically)
{
    struct dahlsim_dag_gen_conf gc = {.seed = 11, .ntasks = 400, .min_types = 3, .max_types = 5, .max_cpus = 6,
                                      .max_gpus = 3};
    struct dahlsim_dag g;
    char err[256];
    cr_assert_eq(dahlsim_dag_generate(&gc, &g, err, sizeof(err)), 0, "%s", err);
    double lb = dahlsim_dag_lower_bound(&g, g.cpus, g.gpus);
    for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++) {
        struct dahlsim_emu_conf conf = {.cpus = g.cpus, .gpus = g.gpus, .autoprio = true, .heuristic = h, .interval = 8};
        struct dahlsim_emu_result r1, r2;
        cr_assert_eq(dahlsim_dag_emulate(&g, &conf, NULL, &r1, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(dahlsim_dag_emulate(&g, &conf, NULL, &r2, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(r1.tasks_on[0] + r1.tasks_on[1], g.ntasks);
        cr_assert_eq(memcmp(&r1.makespan_s, &r2.makespan_s, sizeof(double)), 0);
        cr_assert_geq(r1.makespan_s, lb * (1 - 1e-12), "%s: %g below the bound %g", dahl_autoprio_heuristic_name(h),
                      r1.makespan_s, lb);
        cr_assert_eq(r1.last.n[0], g.ntypes);
    }
    dahlsim_dag_fini(&g);
}

/* ---- the generator ---- */

Test(generator, same_seed_same_graph_and_a_valid_pipeline)
{
    struct dahlsim_dag_gen_conf gc = {.seed = 5, .ntasks = 500, .min_types = 3, .max_types = 6, .max_cpus = 15,
                                      .max_gpus = 15};
    struct dahlsim_dag g1, g2, g3;
    char err[256];
    cr_assert_eq(dahlsim_dag_generate(&gc, &g1, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahlsim_dag_generate(&gc, &g2, err, sizeof(err)), 0, "%s", err);
    gc.seed = 6;
    cr_assert_eq(dahlsim_dag_generate(&gc, &g3, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(g1.ntasks, 500);
    cr_assert_eq(g1.ntypes, g2.ntypes);
    cr_assert_eq(g1.pred_start[g1.ntasks], g2.pred_start[g2.ntasks]);
    cr_assert_eq(memcmp(g1.type, g2.type, sizeof(int) * 500), 0);
    cr_assert_eq(memcmp(g1.pred, g2.pred, sizeof(int) * (size_t)g1.pred_start[500]), 0);
    cr_assert_eq(memcmp(g1.cost, g2.cost, sizeof(*g1.cost) * (size_t)g1.ntypes), 0);
    cr_assert(g1.ntypes != g3.ntypes || memcmp(g1.type, g3.type, sizeof(int) * 500) != 0 ||
              g1.pred_start[500] != g3.pred_start[500]);
    cr_assert_gt(g1.pred_start[500], 0, "the graph has edges");
    /* The pipeline is a schedule, so it cannot beat the lower bound. */
    cr_assert_geq(g1.pipeline_s, dahlsim_dag_lower_bound(&g1, g1.cpus, g1.gpus) * (1 - 1e-12));
    /* Save and load give the same graph. */
    char path[] = "/tmp/dahlsim-test-dag-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    struct dahlsim_dag back;
    cr_assert_eq(dahlsim_dag_save(&g1, path, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahlsim_dag_load(path, &back, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(back.ntasks, g1.ntasks);
    cr_assert_eq(memcmp(back.pred, g1.pred, sizeof(int) * (size_t)g1.pred_start[500]), 0);
    cr_assert_eq(memcmp(back.cost, g1.cost, sizeof(*g1.cost) * (size_t)g1.ntypes), 0);
    cr_assert_eq(back.pipeline_s, g1.pipeline_s);
    unlink(path);
    dahlsim_dag_fini(&back);
    dahlsim_dag_fini(&g1);
    dahlsim_dag_fini(&g2);
    dahlsim_dag_fini(&g3);
}

/* ---- the command line ---- */

static struct dahl_test_run run;

/* dahlsim_perfmodel_get keeps a parsed file until its bytes change: the same file gives the same model, an
 * edited one (same size even) is parsed again, and a vanished one is an error naming it. */
Test(dag, perfmodel_cache_follows_the_file)
{
    char path[] = "/tmp/dahlsim-pm-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    const char *model = "# Model for cpu0_impl0\n# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n"
                        "0000abcd\t100\t\t1.0e+00\t%s\t0.0\t1.0\t1.0\t10\n";
    char text[512], err[256];
    snprintf(text, sizeof(text), model, "2.5e+00");
    dahl_test_write_file(path, text);
    const struct dahlsim_perfmodel *a = dahlsim_perfmodel_get(path, err, sizeof(err));
    cr_assert_not_null(a, "%s", err);
    cr_expect_float_eq(dahlsim_perfmodel_us(a, "cpu0", DAHL_PERFMODEL_HISTORY, 0xabcd, 100), 2.5, 1e-12);
    cr_expect_eq(dahlsim_perfmodel_get(path, err, sizeof(err)), a, "the same bytes: the same model");
    snprintf(text, sizeof(text), model, "7.5e+00");
    dahl_test_write_file(path, text);
    const struct dahlsim_perfmodel *b = dahlsim_perfmodel_get(path, err, sizeof(err));
    cr_assert_not_null(b, "%s", err);
    cr_expect_float_eq(dahlsim_perfmodel_us(b, "cpu0", DAHL_PERFMODEL_HISTORY, 0xabcd, 100), 7.5, 1e-12);
    unlink(path);
    cr_expect_null(dahlsim_perfmodel_get(path, err, sizeof(err)));
    cr_expect(strstr(err, path) != NULL, "%s", err);
}

Test(dag_cli, errors_name_the_option_or_file)
{
    char *bad_auto[] = {DAHLSIM_BIN, "dag", "run", "/nonexistent.json", "--auto", "fastest", NULL};
    dahl_test_run(&run, bad_auto, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--auto: expected a heuristic (prws, purws, offset, softplus, interpolation, ntc), "
                              "got \"fastest\"") != NULL,
              "%s", run.err);
    char *missing[] = {DAHLSIM_BIN, "dag", "run", "/nonexistent.json", "--control", NULL};
    dahl_test_run(&run, missing, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "/nonexistent.json: cannot read or parse the graph") != NULL, "%s", run.err);
    char *two_modes[] = {DAHLSIM_BIN, "dag", "run", "g.json", "--control", "--auto", "ntc", NULL};
    dahl_test_run(&run, two_modes, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "exactly one of --priorities FILE, --auto HEURISTIC, --control") != NULL, "%s", run.err);
    char *sub[] = {DAHLSIM_BIN, "dag", "plot", NULL};
    dahl_test_run(&run, sub, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "unknown subcommand \"plot\"") != NULL, "%s", run.err);
}

Test(dag_cli, gen_then_run_prints_the_makespan)
{
    char dir[] = "/tmp/dahlsim-test-dagcli-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char graph[256], prio[256];
    snprintf(graph, sizeof(graph), "%s/g.json", dir);
    snprintf(prio, sizeof(prio), "%s/p.json", dir);
    char *gen[] = {DAHLSIM_BIN, "dag", "gen", "--out", graph, "--seed", "3", "--tasks", "200", NULL};
    dahl_test_run(&run, gen, NULL);
    cr_assert_eq(run.status, 0, "%s", run.err);
    char *control[] = {DAHLSIM_BIN, "dag", "run", graph, "--control", NULL};
    dahl_test_run(&run, control, NULL);
    cr_assert_eq(run.status, 0, "%s", run.err);
    double control_s = dahl_test_json_number(run.out, "makespan_s");
    double lb = dahl_test_json_number(run.out, "lower_bound_s");
    cr_assert(control_s >= lb && lb > 0.0, "%s", run.out);
    char *auto_run[] = {DAHLSIM_BIN, "dag", "run", graph, "--auto", "purws", "--interval", "16", NULL};
    dahl_test_run(&run, auto_run, NULL);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert_geq(dahl_test_json_number(run.out, "makespan_s"), lb);
    /* A priorities file naming an unknown type is refused with the file and the key. */
    FILE *f = fopen(prio, "w");
    cr_assert_not_null(f);
    fputs("{\"cpu\": [\"T0\", \"nope\"]}\n", f);
    fclose(f);
    char *manual[] = {DAHLSIM_BIN, "dag", "run", graph, "--priorities", prio, NULL};
    dahl_test_run(&run, manual, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "\"cpu\": expected names of types the graph runs on cpu, got \"nope\"") != NULL, "%s",
              run.err);
    unlink(graph);
    unlink(prio);
    rmdir(dir);
}

/* ---- heteroprio in real runs ---- */

Test(heteroprio, scenarios_run_autoheteroprio_deterministically_and_refuse_bare_heteroprio)
{
    char dir[] = "/tmp/dahlsim-test-hp-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char scen[256], bare[256], out1[256], out2[256];
    snprintf(scen, sizeof(scen), "%s/hp.json", dir);
    snprintf(bare, sizeof(bare), "%s/bare.json", dir);
    snprintf(out1, sizeof(out1), "%s/out1", dir);
    snprintf(out2, sizeof(out2), "%s/out2", dir);
    dahl_test_write_file(scen, "{\"machine\": \"roofline-14cpu-1v100\", \"samples\": 16, \"batch\": 8, \"cpus\": 3, \"gpus\": 1,\n"
                     " \"scheduler\": \"heteroprio:auto-offset\"}\n");
    dahl_test_write_file(bare, "{\"machine\": \"roofline-14cpu-1v100\", \"samples\": 16, \"batch\": 8, \"scheduler\": \"heteroprio\"}\n");
    char *env[] = {"DAHLSIM_HOME=" DAHLSIM_SOURCE_DIR, NULL};
    char *check[] = {DAHLSIM_BIN, "check", bare, NULL};
    dahl_test_run(&run, check, env);
    cr_assert_eq(run.status, 2, "%s", run.err);
    cr_assert(strstr(run.err, "\"scheduler\": expected a StarPU scheduling policy") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "hint: heteroprio needs priorities: heteroprio:auto-HEURISTIC[/footprint], HEURISTIC one of prws, purws, "
                                  "offset") != NULL,
              "%s", run.err);
    double makespan[2];
    const char *outs[2] = {out1, out2};
    for (int i = 0; i < 2; i++) {
        char *cmd[] = {DAHLSIM_BIN, "run", scen, "--out", (char *)outs[i], "--quiet", NULL};
        dahl_test_run(&run, cmd, env);
        cr_assert_eq(run.status, 0, "%s", run.err);
        char path[300];
        snprintf(path, sizeof(path), "%s/results.json", outs[i]);
        const char *text = dahl_test_read_file(path);
        cJSON *doc = cJSON_Parse(text);
        cr_assert_not_null(doc, "%s", path);
        const cJSON *ms = cJSON_GetObjectItemCaseSensitive(doc, "makespan_s");
        cr_assert(cJSON_IsNumber(ms) && ms->valuedouble > 0.0, "%s", text);
        makespan[i] = ms->valuedouble;
        /* The GPU ran tasks. */
        double gpu_tasks = 0.0;
        const cJSON *w;
        cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(doc, "workers_detail"))
        {
            const cJSON *arch = cJSON_GetObjectItemCaseSensitive(w, "arch");
            if (cJSON_IsString(arch) && strcmp(arch->valuestring, "cuda") == 0)
                gpu_tasks += cJSON_GetObjectItemCaseSensitive(w, "tasks")->valuedouble;
        }
        cr_assert_gt(gpu_tasks, 0.0, "%s", text);
        /* results.json names the policy as the scenario does, and the lists heteroprio ended with. */
        const cJSON *sched = cJSON_GetObjectItemCaseSensitive(doc, "scheduler");
        cr_assert(cJSON_IsString(sched) && strcmp(sched->valuestring, "heteroprio:auto-offset") == 0, "%s", text);
        const cJSON *hp = cJSON_GetObjectItemCaseSensitive(doc, "heteroprio");
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(hp, "buckets")->valuestring, "symbol");
        cr_assert_eq(cJSON_GetObjectItemCaseSensitive(hp, "interval")->valuedouble, 32.0);
        double types = cJSON_GetObjectItemCaseSensitive(hp, "types")->valuedouble;
        cr_assert_eq(types, 14.0, "LeNet with REDUX and momentum: 14 symbols, got %g", types);
        cr_assert_geq(cJSON_GetObjectItemCaseSensitive(hp, "recomputes")->valuedouble, 14.0);
        const cJSON *lists = cJSON_GetObjectItemCaseSensitive(hp, "lists");
        cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(lists, "cpu")), 14, "%s", text);
        cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(lists, "cuda")), 14, "%s", text);
        cJSON_Delete(doc);
    }
    cr_assert_eq(memcmp(&makespan[0], &makespan[1], sizeof(double)), 0, "%.17g vs %.17g", makespan[0], makespan[1]);
    dahl_test_remove_tree(dir);
}

Test(heteroprio, native_training_with_manual_lists_and_their_errors)
{
    char dir[] = "/tmp/dahlsim-test-hpn-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char good[256], bad[256];
    snprintf(good, sizeof(good), "%s/good.json", dir);
    snprintf(bad, sizeof(bad), "%s/bad.json", dir);
    dahl_test_write_file(good, "{\"cpu\": [\"dahl_softmax_xent\", \"dahl_conv2d_forward\"]}\n");
    dahl_test_write_file(bad, "{\"cpu\": [\"dahl_conv3d\"]}\n");
    char *ok[] = {DAHLSIM_BIN, "train", "--dataset", "synthetic:28x28x1", "--samples", "32", "--test-samples", "8",
                  "--batch", "8", "--ncpu", "1", "--sched", "heteroprio", "--priorities", good, "--quiet", NULL};
    dahl_test_run(&run, ok, NULL);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.out, "epoch 1/1") != NULL, "%s", run.out);
    char *unknown[] = {DAHLSIM_BIN, "train", "--dataset", "synthetic:28x28x1", "--samples", "32", "--ncpu", "1",
                       "--sched", "heteroprio", "--priorities", bad, "--quiet", NULL};
    dahl_test_run(&run, unknown, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "\"cpu\": expected dahl perf-model symbols (") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "got \"dahl_conv3d\"") != NULL, "%s", run.err);
    char *missing[] = {DAHLSIM_BIN, "train", "--samples", "32", "--dataset", "synthetic:28x28x1", "--sched",
                       "heteroprio", "--quiet", NULL};
    dahl_test_run(&run, missing, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--sched heteroprio: expected --priorities FILE or --priorities auto:HEURISTIC") != NULL,
              "%s", run.err);
    char *stray[] = {DAHLSIM_BIN, "train", "--samples", "32", "--dataset", "synthetic:28x28x1", "--sched", "eager",
                     "--priorities", "auto:ntc", "--quiet", NULL};
    dahl_test_run(&run, stray, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--priorities: only with --sched heteroprio") != NULL, "%s", run.err);
    unlink(good);
    unlink(bad);
    rmdir(dir);
}

/* One bucket per symbol and footprint: LeNet's two convolutions (and its differently sized parameter tensors)
 * get buckets of their own, named "symbol:footprint", and results.json says so. */
Test(heteroprio, footprint_buckets_in_a_scenario)
{
    char dir[] = "/tmp/dahlsim-test-hpf-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char scen[256], out[256], path[300];
    snprintf(scen, sizeof(scen), "%s/hp.json", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    dahl_test_write_file(scen, "{\"machine\": \"roofline-14cpu-1v100\", \"samples\": 16, \"batch\": 8, \"cpus\": 3, \"gpus\": 1,\n"
                     " \"scheduler\": \"heteroprio:auto-interpolation/footprint\"}\n");
    char *env[] = {"DAHLSIM_HOME=" DAHLSIM_SOURCE_DIR, NULL};
    char *cmd[] = {DAHLSIM_BIN, "run", scen, "--out", out, "--quiet", NULL};
    dahl_test_run(&run, cmd, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    snprintf(path, sizeof(path), "%s/results.json", out);
    cJSON *doc = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(doc);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(doc, "scheduler")->valuestring,
                     "heteroprio:auto-interpolation/footprint");
    const cJSON *hp = cJSON_GetObjectItemCaseSensitive(doc, "heteroprio");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(hp, "buckets")->valuestring, "footprint");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(hp, "priorities")->valuestring, "auto:interpolation/footprint");
    double types = cJSON_GetObjectItemCaseSensitive(hp, "types")->valuedouble;
    cr_assert_gt(types, 14.0, "more buckets than symbols, got %g", types);
    int convs = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(hp, "lists"), "cpu"))
    {
        cr_assert(strchr(v->valuestring, ':') != NULL, "%s", v->valuestring);
        convs += strncmp(v->valuestring, "dahl_conv2d_forward:", 20) == 0;
    }
    cr_assert_eq(convs, 2, "one bucket per convolution layer");
    cJSON_Delete(doc);
    char *bad[] = {DAHLSIM_BIN, "train", "--samples", "32", "--dataset", "synthetic:28x28x1", "--sched", "heteroprio",
                   "--priorities", "auto:ntc/layer", "--quiet", NULL};
    dahl_test_run(&run, bad, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--priorities: expected auto:HEURISTIC or auto:HEURISTIC/footprint") != NULL, "%s",
              run.err);
    dahl_test_remove_tree(dir);
}

/* ---- training graphs in the lab ---- */

/* Per-task costs: the emulator runs each task for its own cost, the lower bound uses them too. Two tasks of
 * one type, 1 s and 3 s on the CPU (mean 2 s), in a chain on one CPU: makespan and critical path 4 s. */
Test(emulator, per_task_costs_by_hand)
{
    const char *names[] = {"X"};
    const double cost[1][DAHL_NARCH] = {{2.0, 0.0}};
    int type[2] = {0, 0}, pstart[3] = {0, 0, 1}, pred[1] = {0};
    struct dahlsim_dag g;
    char err[256];
    cr_assert_eq(dahlsim_dag_init(&g, 1, names, cost, 2, type, pstart, pred, err, sizeof(err)), 0, "%s", err);
    const double tcost[2][DAHL_NARCH] = {{1.0, 0.0}, {3.0, 0.0}};
    cr_assert_eq(dahlsim_dag_set_task_costs(&g, tcost, err, sizeof(err)), 0, "%s", err);
    struct dahlsim_prio prio = {.n = {1, 0}, .order = {{0}}};
    struct dahlsim_emu_conf conf = {.cpus = 1, .gpus = 0};
    struct dahlsim_emu_result r;
    cr_assert_eq(dahlsim_dag_emulate(&g, &conf, &prio, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_float_eq(r.makespan_s, 4.0, 1e-12);
    cr_assert_float_eq(dahlsim_dag_lower_bound(&g, 1, 0), 4.0, 1e-9);
    /* a GPU cost where the type has none */
    const double wrong[2][DAHL_NARCH] = {{1.0, 1.0}, {3.0, 0.0}};
    cr_assert_eq(dahlsim_dag_set_task_costs(&g, wrong, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "task 0: expected a positive GPU cost exactly where its type \"X\" has one") != NULL, "%s",
              err);
    dahlsim_dag_fini(&g);
}

/* More than 8 types: the control's insertion search ends on a list of every type, whose emulated makespan
 * is the one returned, and never worse than the list it started from. */
Test(control, more_than_eight_types_by_insertion)
{
    struct dahlsim_dag_gen_conf gc = {.seed = 5, .ntasks = 400, .min_types = 10, .max_types = 10, .max_cpus = 4,
                                      .max_gpus = 2};
    struct dahlsim_dag g;
    char err[256];
    cr_assert_eq(dahlsim_dag_generate(&gc, &g, err, sizeof(err)), 0, "%s", err);
    struct dahlsim_emu_conf conf = {.cpus = g.cpus, .gpus = g.gpus};
    struct dahlsim_prio best, start;
    double ms, start_ms;
    cr_assert_eq(dahlsim_dag_control(&g, &conf, 9, 0, &start, &start_ms, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahlsim_dag_control(&g, &conf, 9, 16, &best, &ms, err, sizeof(err)), 0, "%s", err);
    cr_assert_leq(ms, start_ms);
    struct dahlsim_emu_result r;
    cr_assert_eq(dahlsim_dag_emulate(&g, &conf, &best, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(r.makespan_s, ms);
    for (int a = 0; a < DAHL_NARCH; a++) {
        cr_assert_eq(best.n[a], 10);
        int seen = 0;
        for (int k = 0; k < best.n[a]; k++)
            seen |= 1 << best.order[a][k];
        cr_assert_eq(seen, (1 << 10) - 1);
    }
    dahlsim_dag_fini(&g);
}

/* `dahlsim dag export` of a LeNet step on the 14-CPU + V100 machine: the graph loads back with its per-task
 * costs and the tasks of a REDUX step (batch 4, 2 workers: 2 copies per gradient tensor), costs from the perf
 * models (StarPU's reductions of LeNet's last bias, 10 floats, cost 1.515789 us on a CPU in the roofline
 * file), footprint types named symbol:footprint; the table runs on exported graphs; errors. */
Test(dag_cli, export_a_training_step)
{
    char dir[] = "/tmp/dahlsim-test-export-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char g1[256], g2[256];
    snprintf(g1, sizeof(g1), "%s/lenet.json", dir);
    snprintf(g2, sizeof(g2), "%s/lenet-fp.json", dir);
    char *env[] = {"DAHLSIM_HOME=" DAHLSIM_SOURCE_DIR, NULL};
    char *exp1[] = {DAHLSIM_BIN, "dag", "export", "--machine", "roofline-14cpu-1v100", "--batch", "4", "--cpus", "1",
                    "--gpus", "1", "--out", g1, NULL};
    dahl_test_run(&run, exp1, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    struct dahlsim_dag g;
    char err[512];
    cr_assert_eq(dahlsim_dag_load(g1, &g, err, sizeof(err)), 0, "%s", err);
    /* 22 tasks per sample (9 forward, the loss, 12 backward), then per gradient tensor (8): 2 StarPU
     * reductions, SGD, zero. */
    cr_assert_eq(g.ntasks, 4 * 22 + 8 * 4, "%d tasks", g.ntasks);
    cr_assert_eq(g.ntypes, 14);
    cr_assert_eq(g.cpus, 1);
    cr_assert_eq(g.gpus, 1);
    cr_assert_not_null(g.task_cost);
    cr_assert(strstr(g.source, "batch 4, REDUX reduction of up to 2 per-worker copies") != NULL, "%s", g.source);
    bool found = false;
    for (int t = 0; t < g.ntasks; t++) {
        cr_assert_gt(g.task_cost[t][0], 0.0);
        cr_assert_gt(g.task_cost[t][1], 0.0);
        if (strcmp(g.names[g.type[t]], "dahl_accumulate") == 0 && fabs(g.task_cost[t][0] - 1.515789e-6) < 1e-12)
            found = true;
    }
    cr_assert(found, "no dahl_accumulate task of the 10-float bias at 1.515789 us");
    int lenet_tasks = g.ntasks;
    dahlsim_dag_fini(&g);
    /* LeNet written as a model file exports the same graph (the one reader of model files) */
    char model[256];
    snprintf(model, sizeof(model), "%s/lenet-as-file.json", dir);
    FILE *f = fopen(model, "w");
    cr_assert_not_null(f);
    fputs("{\"layers\": [{\"type\": \"conv\", \"filters\": 6, \"kernel\": 5, \"pad\": 2}, {\"type\": \"relu\"},\n"
          " {\"type\": \"maxpool\", \"kernel\": 2}, {\"type\": \"conv\", \"filters\": 16, \"kernel\": 5},\n"
          " {\"type\": \"relu\"}, {\"type\": \"maxpool\", \"kernel\": 2}, {\"type\": \"dense\", \"units\": 120},\n"
          " {\"type\": \"relu\"}, {\"type\": \"dense\", \"units\": 10}]}\n",
          f);
    fclose(f);
    char *exp_file[] = {DAHLSIM_BIN, "dag", "export", "--machine", "roofline-14cpu-1v100", "--model", model,
                        "--batch", "4", "--cpus", "1", "--gpus", "1", "--out", g2, NULL};
    dahl_test_run(&run, exp_file, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert_eq(dahlsim_dag_load(g2, &g, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(g.ntasks, lenet_tasks);
    dahlsim_dag_fini(&g);
    char *exp2[] = {DAHLSIM_BIN, "dag", "export", "--machine", "roofline-14cpu-1v100", "--dataset",
                    "synthetic:28x28x3", "--batch", "2", "--steps", "2", "--reduction", "manual", "--group",
                    "footprint", "--out", g2, NULL};
    dahl_test_run(&run, exp2, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert_eq(dahlsim_dag_load(g2, &g, err, sizeof(err)), 0, "%s", err);
    cr_assert_gt(g.ntypes, 14);
    cr_assert_eq(g.cpus, 14, "the platform's CPUs by default");
    int convs = 0;
    for (int i = 0; i < g.ntypes; i++)
        convs += strncmp(g.names[i], "dahl_conv2d_forward:", 20) == 0;
    cr_assert_eq(convs, 2);
    dahlsim_dag_fini(&g);
    char *table[] = {DAHLSIM_BIN, "dag", "table", g1, NULL};
    dahl_test_run(&run, table, env);
    cr_assert_eq(run.status, 0, "%s", run.err);
    cr_assert(strstr(run.out, "| lenet.json | 1 | 1 | 14 | 120 |") != NULL, "%s", run.out);
    char *nomachine[] = {DAHLSIM_BIN, "dag", "export", "--machine", "no-such-machine", "--out", g1, NULL};
    dahl_test_run(&run, nomachine, env);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "dag export: --machine no-such-machine: no directory") != NULL, "%s", run.err);
    char *uncovered[] = {DAHLSIM_BIN, "dag", "export", "--machine", "roofline-14cpu-1v100", "--dataset",
                         "synthetic:40x40x3", "--out", g1, NULL};
    dahl_test_run(&run, uncovered, env);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "no history estimate for dahl_conv2d_forward footprint") != NULL, "%s", run.err);
    dahl_test_remove_tree(dir);
}

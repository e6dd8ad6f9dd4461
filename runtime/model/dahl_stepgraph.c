/* The task graph of training steps (see dahl_stepgraph.h).
 *
 * Why built from the network description and not recorded from a run: a recorded graph would need a StarPU
 * run (native, or simulated on a calibration that covers the setup), a scheduler with hooks (only dahl's
 * heteroprio has them), and it would still be incomplete: starpu_task_get_task_succs only lists the
 * successors submitted before the task is pushed, and edges to tasks already finished are never made. The
 * data accesses of a step are fixed by dahl_network.c, and StarPU's rules for turning accesses into
 * dependencies (src/core/dependencies/implicit_data_deps.c) are simple, so the graph follows deterministically
 * from the description, for any batch, reduction and number of steps, on a machine that could not run it.
 * tests/test_stepgraph.c checks its task counts against a real run and its edges on a hand-drawn network.
 *
 * Dependencies, as StarPU 1.3.10 makes them per data handle: a reader after readers depends on what those
 * readers depended on (the last writer); a REDUX access after REDUX accesses likewise; any other access
 * depends on every accessor of the previous group (StarPU inserts an empty synchronisation task when there
 * are several and the new access is not W; the lab has no empty tasks, so the edges go straight to the
 * group). SCRATCH buffers (the im2col workspace) make no dependency. When a non-REDUX access follows REDUX
 * ones, StarPU (src/datawizard/reduction.c) reduces the handle and its per-worker copies by a binary tree of
 * reduction tasks (dahl_accumulate), submitted once every REDUX access has finished; the access then waits
 * for the tree's root. A split parameter update (dahl_update_chunks) partitions the parameter and its summed
 * gradient into chunks and gathers them back (StarPU's asynchronous partitioning, src/datawizard/filters.c):
 * partitioning is an empty task accessing the whole handle in RW (which first reduces a REDUX handle) and
 * every chunk in W, gathering one accessing the whole handle in W and every chunk in RW; here the next
 * accessors of the chunks, or of the whole handle, depend on what those empty tasks depend on. */
#include "dahl_stepgraph.h"

#include "dahl_array.h"
#include "dahl_footprint.h"
#include "dahl_layer.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mode { M_NONE, M_R, M_W, M_REDUX }; /* M_W: W or RW */

struct list {
    int *v;
    int n, cap; /* ints, not size_t: every handle has two lists, and a graph up to 4M handles */
};

struct handle {
    enum mode mode;
    struct list group; /* the accessors of the current mode */
    struct list sync;  /* what the current group's accessors depend on */
    size_t n;          /* elements (for the footprint of its reduction tasks) */
};

struct builder {
    struct dahl_stepgraph *g;
    size_t tcap, pcap, ecap; /* of g->tasks, g->pred_start, g->pred */
    struct handle *h;
    int nh;
    int L, batch; /* batch: the groups of samples per step (the batch at grain 1) */
    int samples, grain;
    int copies;
    struct list deps; /* scratch */
    int step;
    int chunk_base;                          /* handle ids from here on are chunks of split updates */
    int chunk_off[13][DAHL_NETWORK_MAX_LAYERS]; /* per (kind, layer): its first chunk, from chunk_base */
    const struct dahl_network_desc *d;
    bool manual;
};

static int list_push(struct list *l, int x)
{
    size_t cap = (size_t)l->cap;
    int *v = dahl_array_grow(l->v, &cap, (size_t)l->n + 1, sizeof(int));
    if (v == NULL)
        return -ENOMEM;
    l->v = v;
    l->cap = cap < INT_MAX ? (int)cap : INT_MAX; /* fewer than it holds is safe */
    l->v[l->n++] = x;
    return 0;
}

static int list_append(struct list *l, const struct list *from)
{
    for (int i = 0; i < from->n; i++)
        if (list_push(l, from->v[i]) != 0)
            return -ENOMEM;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Sorts l and drops its repeated values: a partition's dependencies gather the groups of every chunk, which
 * repeat the same tasks (unsorted, 117 chunks of LeNet's dense1 at 512x512x3 gave each chunk's update
 * 35 049 predecessors to sort, of a few hundred distinct). */
static void list_unique(struct list *l)
{
    if (l->n < 2)
        return;
    qsort(l->v, (size_t)l->n, sizeof(int), cmp_int);
    int n = 1;
    for (int i = 1; i < l->n; i++)
        if (l->v[i] != l->v[n - 1])
            l->v[n++] = l->v[i];
    l->n = n;
}

/* Appends a task whose predecessors are b->deps (sorted and made unique here). */
static int add_task(struct builder *b, const char *symbol, uint32_t footprint, int layer, bool by_starpu)
{
    struct dahl_stepgraph *g = b->g;
    struct dahl_stepgraph_task *tasks = dahl_array_grow(g->tasks, &b->tcap, (size_t)g->ntasks + 1, sizeof(*tasks));
    if (tasks == NULL)
        return -ENOMEM;
    g->tasks = tasks;
    int *ps = dahl_array_grow(g->pred_start, &b->pcap, (size_t)g->ntasks + 2, sizeof(int));
    if (ps == NULL)
        return -ENOMEM;
    g->pred_start = ps;
    if (b->deps.n > 1)
        qsort(b->deps.v, (size_t)b->deps.n, sizeof(int), cmp_int);
    int *p = dahl_array_grow(g->pred, &b->ecap, (size_t)g->nedges + (size_t)b->deps.n, sizeof(int));
    if (p == NULL)
        return -ENOMEM;
    g->pred = p;
    int t = g->ntasks++;
    g->pred_start[t] = (int)g->nedges;
    for (int i = 0; i < b->deps.n; i++)
        if (i == 0 || b->deps.v[i] != b->deps.v[i - 1])
            g->pred[g->nedges++] = b->deps.v[i];
    g->pred_start[t + 1] = (int)g->nedges;
    g->tasks[t] = (struct dahl_stepgraph_task){.symbol = symbol, .footprint = footprint, .layer = layer,
                                               .step = b->step, .by_starpu = by_starpu};
    b->deps.n = 0;
    return 0;
}

/* StarPU's reduction of handle h at the end of its REDUX group: replicate 0 is the handle itself (never
 * empty here: dahl_zero wrote it), 1..copies the per-worker copies; step by step, replicate i += replicate
 * i + step. Every task waits for the whole REDUX group (the tree is submitted when it has finished). */
static int reduce(struct builder *b, struct handle *h, int layer)
{
    int count = 1 + (b->copies < h->group.n ? b->copies : h->group.n);
    int last[1 + 1024];
    if (count > (int)(sizeof(last) / sizeof(last[0])))
        count = (int)(sizeof(last) / sizeof(last[0]));
    for (int i = 0; i < count; i++)
        last[i] = -1;
    uint32_t fp = dahl_reduce_footprint_of(h->n);
    for (int step = 1; step < count; step *= 2) {
        for (int i = 0; i + step < count; i += 2 * step) {
            int pair[2] = {i, i + step};
            for (int k = 0; k < 2; k++) {
                int ret = last[pair[k]] >= 0 ? list_push(&b->deps, last[pair[k]]) : list_append(&b->deps, &h->group);
                if (ret != 0)
                    return ret;
            }
            int ret = add_task(b, "dahl_accumulate", fp, layer, true);
            if (ret != 0)
                return ret;
            last[i] = b->g->ntasks - 1;
        }
    }
    h->group.n = 0;
    h->mode = M_W;
    return list_push(&h->group, last[0]);
}

/* Makes h's state what an empty task with dependencies deps leaves: later accesses depend on deps. */
static int set_written(struct handle *h, const struct list *deps)
{
    h->mode = M_W;
    h->group.n = 0;
    h->sync.n = 0;
    return list_append(&h->group, deps);
}

/* StarPU's partitioning of handle whole into chunks c0 .. c0 + k - 1 (see the top of the file). */
static int partition(struct builder *b, int whole, int c0, int k, int layer)
{
    struct handle *h = &b->h[whole];
    if (h->mode == M_REDUX) {
        int ret = reduce(b, h, layer);
        if (ret != 0)
            return ret;
    }
    struct list deps = {0};
    int ret = list_append(&deps, &h->group);
    for (int c = 0; c < k && ret == 0; c++)
        ret = list_append(&deps, &b->h[c0 + c].group);
    list_unique(&deps);
    for (int c = 0; c < k && ret == 0; c++)
        ret = set_written(&b->h[c0 + c], &deps);
    if (ret == 0)
        ret = set_written(h, &deps);
    free(deps.v);
    return ret;
}

/* StarPU's gathering of chunks c0 .. c0 + k - 1 back into handle whole. */
static int unpartition(struct builder *b, int whole, int c0, int k)
{
    struct list deps = {0};
    int ret = list_append(&deps, &b->h[whole].group);
    for (int c = 0; c < k && ret == 0; c++)
        ret = list_append(&deps, &b->h[c0 + c].group);
    list_unique(&deps);
    for (int c = 0; c < k && ret == 0; c++)
        ret = set_written(&b->h[c0 + c], &deps);
    if (ret == 0)
        ret = set_written(&b->h[whole], &deps);
    free(deps.v);
    return ret;
}

/* Records an access of the task about to be added: its dependencies go into b->deps, the handle's state is
 * updated with task index t (the index the task will get). */
static int record_access(struct builder *b, int hid, enum mode m, int t)
{
    struct handle *h = &b->h[hid];
    if (m == h->mode && (m == M_R || m == M_REDUX)) {
        if (list_append(&b->deps, &h->sync) != 0)
            return -ENOMEM;
        return list_push(&h->group, t);
    }
    if (list_append(&b->deps, &h->group) != 0)
        return -ENOMEM;
    struct list old = h->sync;
    h->sync = h->group;
    h->group = old;
    h->group.n = 0;
    h->mode = m;
    return list_push(&h->group, t);
}

struct acc {
    int h;
    enum mode m;
};

/* Submits one dahl task with its accesses: first the reductions its non-REDUX accesses of REDUX-mode handles
 * trigger, then the task. */
static int submit(struct builder *b, const char *symbol, uint32_t footprint, int layer, const struct acc *a, int n)
{
    for (int i = 0; i < n; i++) {
        struct handle *h = &b->h[a[i].h];
        if (h->mode == M_REDUX && a[i].m != M_REDUX) {
            int ret = reduce(b, h, layer);
            if (ret != 0)
                return ret;
        }
    }
    int t = b->g->ntasks;
    for (int i = 0; i < n; i++) {
        int ret = record_access(b, a[i].h, a[i].m, t);
        if (ret != 0)
            return ret;
    }
    return add_task(b, symbol, footprint, layer, false);
}

/* Handle ids: one per (kind, layer, group of samples), group == b->batch for a whole tensor. K_EDX0 and K_EDX1
 * are a layer's own buffers for the gradients of its inputs 0 and 1 (fan-out), K_STATS its step sums and K_RUN
 * its running state. */
enum kind { K_ACT, K_GRAD, K_METRICS, K_W, K_B, K_VW, K_VB, K_DW, K_DB, K_EDX0, K_EDX1, K_STATS, K_RUN, K_N };

static int hid(const struct builder *b, enum kind k, int layer, int sample)
{
    return ((int)k * (b->L + 1) + layer) * (b->batch + 1) + sample;
}
_Static_assert(K_N == sizeof(((struct builder *)0)->chunk_off) / sizeof(((struct builder *)0)->chunk_off[0]),
               "struct builder's chunk_off has one row per kind");

/* The handle of input k's gradient for layer i, group s: its source's gradient, or the layer's own buffer
 * (-1: the network's input has none). */
static int input_grad(const struct builder *b, int i, int k, int s)
{
    int src = dahl_network_desc_input(b->d, i, k);
    if (src < 0)
        return -1;
    return dahl_network_desc_input_direct(b->d, i, k) ? hid(b, K_GRAD, src + 1, s)
                                                      : hid(b, k == 0 ? K_EDX0 : K_EDX1, i, s);
}

/* The first chunk handle of kind k's tensor of layer (its summed gradient, for K_DW and K_DB). */
static int chunk_hid(const struct builder *b, enum kind k, int layer)
{
    return b->chunk_base + b->chunk_off[k][layer];
}

#define TRY(call)                                                                                               \
    do {                                                                                                        \
        int try_ret_ = (call);                                                                                  \
        if (try_ret_ != 0)                                                                                      \
            return try_ret_;                                                                                    \
    } while (0)
#define ACCS(...) (const struct acc[]){__VA_ARGS__}, (int)(sizeof((const struct acc[]){__VA_ARGS__}) / sizeof(struct acc))

/* The handle of a step sum of kind k (K_STATS, K_DW, K_DB) of layer i as a task of group s accesses it:
 * written, group s's buffer (manual) or the REDUX tensor; read, the sum (group 0's buffer after the manual
 * tree, or the REDUX tensor, which StarPU reduces first). */
static int sum_hid(const struct builder *b, enum kind k, int i, int s, bool read)
{
    return b->manual ? hid(b, k, i, read ? 0 : s) : hid(b, k, i, b->batch);
}

/* Submits one layer task of layer i for group s: its tensors are that layer's and group's handles, its
 * gradients' and sums' mode gm (REDUX, or W for the manual reduction's per-group buffers); SCRATCH accesses
 * make no dependency. */
static int layer_task(struct builder *b, const struct dahl_layer_task *t, int i, int s, enum mode gm)
{
    int whole = b->batch;
    bool two = dahl_network_desc_ninputs(b->d, i) > 1;
    const int ids[DAHL_T_COUNT] = {
        [DAHL_T_X] = hid(b, K_ACT, dahl_network_desc_input(b->d, i, 0) + 1, s),
        [DAHL_T_X2] = two ? hid(b, K_ACT, dahl_network_desc_input(b->d, i, 1) + 1, s) : -1,
        [DAHL_T_DX2] = two ? input_grad(b, i, 1, s) : -1,
        [DAHL_T_Y] = hid(b, K_ACT, i + 1, s),
        [DAHL_T_DX] = input_grad(b, i, 0, s),   [DAHL_T_DY] = hid(b, K_GRAD, i + 1, s),
        [DAHL_T_W] = hid(b, K_W, i, whole),     [DAHL_T_B] = hid(b, K_B, i, whole),
        [DAHL_T_RUNNING] = hid(b, K_RUN, i, whole),
        [DAHL_T_WORKSPACE] = -1,
    };
    struct acc a[DAHL_LAYER_TASK_MAX_ACCESSES];
    int n = 0;
    for (int k = 0; k < t->naccesses; k++) {
        enum dahl_layer_access m = t->access[k].mode;
        enum dahl_layer_tensor x = t->access[k].tensor;
        if (m == DAHL_ACCESS_SCRATCH)
            continue;
        int id = ids[x];
        if (x == DAHL_T_STATS || x == DAHL_T_DW || x == DAHL_T_DB)
            id = sum_hid(b, x == DAHL_T_STATS ? K_STATS : x == DAHL_T_DW ? K_DW : K_DB, i, s, m == DAHL_ACCESS_R);
        a[n++] = (struct acc){id, m == DAHL_ACCESS_R ? M_R : m == DAHL_ACCESS_GRAD ? gm : M_W};
    }
    return submit(b, t->symbol, t->footprint, i, a, n);
}

/* After layer i's backward tasks over group s (n samples): its input gradients written into its own buffers
 * added to their sources' (dahl_network.c's layer_tasks). */
static int fan_out(struct builder *b, const struct dahl_layer_shape *l, int i, int s, int n)
{
    size_t elems = (size_t)n * (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
    for (int k = 0; k < dahl_network_desc_ninputs(b->d, i); k++) {
        int src = dahl_network_desc_input(b->d, i, k);
        if (src >= 0 && !dahl_network_desc_input_direct(b->d, i, k))
            TRY(submit(b, "dahl_accumulate", dahl_reduce_footprint_of(elems), i,
                       ACCS({hid(b, K_GRAD, src + 1, s), M_W}, {input_grad(b, i, k, s), M_R})));
    }
    return 0;
}

/* dahl_network.c's forward_group and backward_group for group s (its n samples). */
static int sample_tasks(struct builder *b, const struct dahl_network_desc *d, const struct dahl_layer_shape *ls,
                        const struct dahl_catalogue_conf *conf, int s)
{
    int L = d->nlayers;
    int n = b->samples - s * b->grain < b->grain ? b->samples - s * b->grain : b->grain;
    bool manual = conf->reduction == DAHL_REDUCTION_MANUAL;
    enum mode gm = manual ? M_W : M_REDUX;
    struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
    for (int i = 0; i < L; i++) {
        int nt = dahl_layer_tasks(&ls[i], DAHL_PASS_FORWARD, n, dahl_network_desc_input(d, i, 0) >= 0, tasks);
        for (int t = 0; t < nt; t++)
            TRY(layer_task(b, &tasks[t], i, s, gm));
    }
    TRY(submit(b, "dahl_softmax_xent", dahl_grouped_footprint_of(dahl_softmax_xent_footprint_of(d->nclasses), n), L,
               ACCS({hid(b, K_ACT, L, s), M_R}, {hid(b, K_GRAD, L, s), M_W}, {hid(b, K_METRICS, 0, s), M_W})));
    for (int i = L - 1; i >= 0; i--) {
        int nt = dahl_layer_tasks(&ls[i], DAHL_PASS_BACKWARD, n, dahl_network_desc_input(d, i, 0) >= 0, tasks);
        for (int t = 0; t < nt; t++)
            TRY(layer_task(b, &tasks[t], i, s, gm));
        TRY(fan_out(b, &ls[i], i, s, n));
    }
    return 0;
}

/* The manual reduction's tree over the groups' buffers of kind k of layer i (n elements each) into group 0's. */
static int tree(struct builder *b, enum kind k, int i, size_t n)
{
    uint32_t rfp = dahl_reduce_footprint_of(n);
    for (int stride = 1; stride < b->batch; stride *= 2)
        for (int s = 0; s + stride < b->batch; s += 2 * stride)
            TRY(submit(b, "dahl_accumulate", rfp, i, ACCS({hid(b, k, i, s), M_W}, {hid(b, k, i, s + stride), M_R})));
    return 0;
}

/* Samples in group s. */
static int group_n(const struct builder *b, int s)
{
    return b->samples - s * b->grain < b->grain ? b->samples - s * b->grain : b->grain;
}

/* dahl_network.c's layer_pass: layer i's pass over every group, phase by phase, the manual reduction's trees
 * of the sums a phase wrote in between (a REDUX sum is reduced by submit, on its first read). */
static int layer_pass(struct builder *b, const struct dahl_network_desc *d, const struct dahl_layer_shape *l, int i,
                      enum dahl_pass pass)
{
    enum mode gm = b->manual ? M_W : M_REDUX;
    int phases = dahl_layer_phases(l, pass);
    bool has_dx = dahl_network_desc_input(d, i, 0) >= 0;
    struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
    for (int p = 0; p < phases; p++) {
        for (int s = 0; s < b->batch; s++) {
            int nt = dahl_layer_tasks(l, pass, group_n(b, s), has_dx, tasks);
            for (int t = 0; t < nt; t++)
                if (tasks[t].phase == p)
                    TRY(layer_task(b, &tasks[t], i, s, gm));
            if (pass == DAHL_PASS_BACKWARD && p == phases - 1)
                TRY(fan_out(b, l, i, s, group_n(b, s)));
        }
        if (p + 1 == phases || !b->manual)
            continue;
        int nt = dahl_layer_tasks(l, pass, b->grain, has_dx, tasks);
        bool done[K_N] = {false};
        for (int t = 0; t < nt; t++)
            for (int a = 0; a < tasks[t].naccesses && tasks[t].phase == p; a++) {
                enum dahl_layer_tensor x = tasks[t].access[a].tensor;
                enum kind k = x == DAHL_T_STATS ? K_STATS : x == DAHL_T_DW ? K_DW : K_DB;
                if (tasks[t].access[a].mode != DAHL_ACCESS_GRAD || done[k])
                    continue;
                done[k] = true;
                TRY(tree(b, k, i, x == DAHL_T_STATS ? 2 * (size_t)l->in_c + 1 : x == DAHL_T_DW ? l->nw : l->nb));
            }
    }
    return 0;
}

/* dahl_network.c's layer_major_passes: every layer's forward pass over every group, the loss of every group,
 * every layer's backward pass. */
static int layer_major_passes(struct builder *b, const struct dahl_network_desc *d, const struct dahl_layer_shape *ls)
{
    int L = d->nlayers;
    for (int i = 0; i < L; i++)
        TRY(layer_pass(b, d, &ls[i], i, DAHL_PASS_FORWARD));
    for (int s = 0; s < b->batch; s++)
        TRY(submit(b, "dahl_softmax_xent",
                   dahl_grouped_footprint_of(dahl_softmax_xent_footprint_of(d->nclasses), group_n(b, s)), L,
                   ACCS({hid(b, K_ACT, L, s), M_R}, {hid(b, K_GRAD, L, s), M_W}, {hid(b, K_METRICS, 0, s), M_W})));
    for (int i = L - 1; i >= 0; i--)
        TRY(layer_pass(b, d, &ls[i], i, DAHL_PASS_BACKWARD));
    return 0;
}

/* dahl_network.c's step_tasks: layer i's once-per-step tasks, then its step sums zeroed. */
static int step_tasks(struct builder *b, const struct dahl_layer_shape *l, int i)
{
    struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
    int nt = dahl_layer_tasks(l, DAHL_PASS_STEP, b->samples, true, tasks);
    for (int t = 0; t < nt; t++)
        TRY(layer_task(b, &tasks[t], i, 0, b->manual ? M_W : M_REDUX));
    if (!dahl_layer_uses_tensor(l, DAHL_T_STATS))
        return 0;
    uint32_t fp = dahl_reduce_footprint_of(2 * (size_t)l->in_c + 1);
    for (int s = 0; s < (b->manual ? b->batch : 1); s++)
        TRY(submit(b, "dahl_zero", fp, i, ACCS({hid(b, K_STATS, i, b->manual ? s : b->batch), M_W})));
    return 0;
}

/* dahl_network.c's update_params for one parameter tensor p (n elements) of layer i, gradient kind gk. */
static int update_tasks(struct builder *b, const struct dahl_catalogue_conf *conf, int i, enum kind pk,
                        enum kind gk, enum kind vk, size_t n, bool summed)
{
    int whole = b->batch;
    uint32_t rfp = dahl_reduce_footprint_of(n);
    int grad;
    if (conf->reduction == DAHL_REDUCTION_MANUAL) {
        if (!summed)
            TRY(tree(b, gk, i, n));
        grad = hid(b, gk, i, 0);
    } else {
        grad = hid(b, gk, i, whole);
    }
    b->h[grad].n = n;
    int k = dahl_update_chunks(n, conf->update_chunk);
    if (k >= 2) {
        int pc = chunk_hid(b, pk, i), gc = chunk_hid(b, gk, i), vc = chunk_hid(b, vk, i);
        TRY(partition(b, grad, gc, k, i));
        TRY(partition(b, hid(b, pk, i, whole), pc, k, i));
        for (int c = 0; c < k; c++) {
            uint32_t fp = dahl_sgd_update_footprint_of(dahl_update_chunk_elems(n, k, c), conf->momentum);
            if (conf->momentum)
                TRY(submit(b, "dahl_sgd_update", fp, i, ACCS({pc + c, M_W}, {gc + c, M_R}, {vc + c, M_W})));
            else
                TRY(submit(b, "dahl_sgd_update", fp, i, ACCS({pc + c, M_W}, {gc + c, M_R})));
        }
        for (int c = 0; c < k; c++)
            TRY(submit(b, "dahl_zero", dahl_reduce_footprint_of(dahl_update_chunk_elems(n, k, c)), i,
                       ACCS({gc + c, M_W})));
        TRY(unpartition(b, hid(b, pk, i, whole), pc, k));
        TRY(unpartition(b, grad, gc, k));
        if (conf->reduction == DAHL_REDUCTION_MANUAL)
            for (int s = 1; s < b->batch; s++)
                TRY(submit(b, "dahl_zero", rfp, i, ACCS({hid(b, gk, i, s), M_W})));
        return 0;
    }
    uint32_t sfp = dahl_sgd_update_footprint_of(n, conf->momentum);
    if (conf->momentum)
        TRY(submit(b, "dahl_sgd_update", sfp, i,
                   ACCS({hid(b, pk, i, whole), M_W}, {grad, M_R}, {hid(b, vk, i, whole), M_W})));
    else
        TRY(submit(b, "dahl_sgd_update", sfp, i, ACCS({hid(b, pk, i, whole), M_W}, {grad, M_R})));
    if (conf->reduction == DAHL_REDUCTION_MANUAL) {
        for (int s = 0; s < b->batch; s++)
            TRY(submit(b, "dahl_zero", rfp, i, ACCS({hid(b, gk, i, s), M_W})));
    } else {
        TRY(submit(b, "dahl_zero", rfp, i, ACCS({grad, M_W})));
    }
    return 0;
}

static int build(struct builder *b, const struct dahl_network_desc *d, const struct dahl_layer_shape *ls,
                 const struct dahl_catalogue_conf *conf, int steps)
{
    bool layer_major = dahl_network_desc_layer_major(d);
    for (b->step = 0; b->step < steps; b->step++) {
        if (layer_major)
            TRY(layer_major_passes(b, d, ls));
        for (int s = 0; s < b->batch && !layer_major; s++)
            TRY(sample_tasks(b, d, ls, conf, s));
        for (int i = 0; i < d->nlayers; i++) {
            if (ls[i].nw == 0)
                continue;
            TRY(step_tasks(b, &ls[i], i));
            bool summed = dahl_layer_sums_grads_early(&ls[i]);
            TRY(update_tasks(b, conf, i, K_W, K_DW, K_VW, ls[i].nw, summed));
            if (ls[i].nb > 0) /* no bias: no update of one */
                TRY(update_tasks(b, conf, i, K_B, K_DB, K_VB, ls[i].nb, summed));
        }
    }
    return 0;
}

int dahl_stepgraph_build(struct dahl_stepgraph *g, const struct dahl_network_desc *d,
                         const struct dahl_catalogue_conf *conf, int steps, char *err, size_t err_size)
{
    memset(g, 0, sizeof(*g));
    if (conf->batch < 1 || steps < 1 || (conf->reduction == DAHL_REDUCTION_REDUX && conf->redux_copies < 1) ||
        conf->grain < 0 || conf->grain > conf->batch) {
        snprintf(err, err_size, "step graph: batch >= 1, steps >= 1, grain in [0, batch] and, with REDUX, "
                                "redux_copies >= 1 expected");
        return -EINVAL;
    }
    if (conf->pipeline_depth > 1) {
        snprintf(err, err_size, "step graph: pipeline_depth %d: pipelined steps are not modelled (expected 1)",
                 conf->pipeline_depth);
        return -EINVAL;
    }
    if (conf->redux_copies > 1024) {
        snprintf(err, err_size, "step graph: redux_copies: expected at most 1024, got %d", conf->redux_copies);
        return -EINVAL;
    }
    struct dahl_layer_shape ls[DAHL_NETWORK_MAX_LAYERS];
    int ret = dahl_network_desc_shapes(d, ls, err, err_size);
    if (ret != 0)
        return ret;
    int grain = conf->grain > 1 ? conf->grain : 1;
    struct builder b = {.g = g,
                        .d = d,
                        .manual = conf->reduction == DAHL_REDUCTION_MANUAL,
                        .L = d->nlayers,
                        .batch = (conf->batch + grain - 1) / grain,
                        .samples = conf->batch,
                        .grain = grain,
                        .copies = conf->redux_copies};
    b.chunk_base = (int)K_N * (b.L + 1) * (b.batch + 1);
    int nchunks = 0;
    for (int i = 0; i < d->nlayers; i++) {
        if (ls[i].nw == 0)
            continue;
        const struct {
            enum kind p, g, v;
            size_t n;
        } tensors[] = {{K_W, K_DW, K_VW, ls[i].nw}, {K_B, K_DB, K_VB, ls[i].nb}};
        for (int t = 0; t < 2; t++) {
            int k = dahl_update_chunks(tensors[t].n, conf->update_chunk);
            if (k < 2)
                continue;
            if (k > ((1 << 22) - nchunks) / 3) { /* 3 handles per chunk, a few dozen bytes each */
                snprintf(err, err_size, "step graph: layer %d: %d update chunks per tensor is too many (update_chunk %zu)",
                         i, k, conf->update_chunk);
                return -EINVAL;
            }
            b.chunk_off[tensors[t].p][i] = nchunks;
            b.chunk_off[tensors[t].g][i] = nchunks + k;
            b.chunk_off[tensors[t].v][i] = nchunks + 2 * k;
            nchunks += 3 * k;
        }
    }
    b.nh = b.chunk_base + nchunks;
    b.h = calloc((size_t)b.nh, sizeof(*b.h));
    for (int i = 0; b.h != NULL && i < d->nlayers; i++) { /* elements of the sums StarPU may reduce early */
        b.h[hid(&b, K_DW, i, b.batch)].n = ls[i].nw;
        b.h[hid(&b, K_DB, i, b.batch)].n = ls[i].nb;
        b.h[hid(&b, K_STATS, i, b.batch)].n = 2 * (size_t)ls[i].in_c + 1;
    }
    g->pred_start = calloc(1, sizeof(int));
    b.pcap = 1;
    ret = b.h != NULL && g->pred_start != NULL ? build(&b, d, ls, conf, steps) : -ENOMEM;
    for (int i = 0; b.h != NULL && i < b.nh; i++) {
        free(b.h[i].group.v);
        free(b.h[i].sync.v);
    }
    free(b.h);
    free(b.deps.v);
    if (ret != 0) {
        dahl_stepgraph_fini(g);
        snprintf(err, err_size, "step graph: out of memory");
    }
    return ret;
}

void dahl_stepgraph_fini(struct dahl_stepgraph *g)
{
    free(g->tasks);
    free(g->pred_start);
    free(g->pred);
    memset(g, 0, sizeof(*g));
}

long dahl_stepgraph_count(const struct dahl_stepgraph *g, const char *symbol, bool dahl_only)
{
    long n = 0;
    for (int t = 0; t < g->ntasks; t++)
        n += strcmp(g->tasks[t].symbol, symbol) == 0 && !(dahl_only && g->tasks[t].by_starpu);
    return n;
}

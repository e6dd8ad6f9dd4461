/* The task catalogue of a training step (see dahl_catalogue.h). It walks the layer shapes the way
 * dahl_network.c submits tasks (forward_group, backward_group, update_params): a layer's tasks, with their
 * footprints, sizes, flops and bytes, come from the layer table (dahl_layer.h), the updates' from the
 * functions the codelets and kernels themselves use. tests/test_catalogue.c
 * checks it against what StarPU records in a real run: a change to the task graph that is not made here too
 * fails there. */
#include "dahl_catalogue.h"

#include "dahl_array.h"
#include "dahl_footprint.h"
#include "dahl_layer.h"
#include "dahl_kernels.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dahl_catalogue_init(struct dahl_catalogue *c)
{
    *c = (struct dahl_catalogue){0};
}

void dahl_catalogue_fini(struct dahl_catalogue *c)
{
    free(c->entries);
    dahl_catalogue_init(c);
}

const struct dahl_catalogue_entry *dahl_catalogue_find(const struct dahl_catalogue *c, const char *symbol,
                                                       uint32_t footprint)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->entries[i].footprint == footprint && strcmp(c->entries[i].symbol, symbol) == 0)
            return &c->entries[i];
    return NULL;
}

long dahl_catalogue_count(const struct dahl_catalogue *c, const char *symbol, bool dahl_only)
{
    long n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->entries[i].symbol, symbol) == 0)
            n += c->entries[i].count - (dahl_only ? c->entries[i].starpu_count : 0);
    return n;
}

/* Adds count tasks of one kind (by_starpu: StarPU submits them). A (symbol, footprint) pair seen before is
 * the same work: the footprint is all StarPU keys a task's time by (a REDUX reduction and a manual
 * accumulate of the same size are one kind). */
static int add(struct dahl_catalogue *c, const char *symbol, uint32_t footprint, size_t size, double flops,
               double bytes, long count, bool by_starpu)
{
    if (count <= 0)
        return 0;
    struct dahl_catalogue_entry *e = (struct dahl_catalogue_entry *)dahl_catalogue_find(c, symbol, footprint);
    if (e != NULL) {
        e->count += count;
        e->starpu_count += by_starpu ? count : 0;
        return 0;
    }
    struct dahl_catalogue_entry *grown = dahl_array_grow(c->entries, &c->cap, c->n + 1, sizeof(*grown));
    if (grown == NULL)
        return -ENOMEM;
    c->entries = grown;
    c->entries[c->n++] = (struct dahl_catalogue_entry){.symbol = symbol, .footprint = footprint, .size = size,
                                                       .flops = flops, .bytes = bytes, .count = count,
                                                       .starpu_count = by_starpu ? count : 0};
    return 0;
}

#define ADD(...)                                                                                                \
    do {                                                                                                        \
        int add_ret_ = add(__VA_ARGS__);                                                                        \
        if (add_ret_ != 0)                                                                                      \
            return add_ret_;                                                                                    \
    } while (0)

#define ADD_TASKS(call)                                                                                         \
    do {                                                                                                        \
        int add_ret_ = (call);                                                                                  \
        if (add_ret_ != 0)                                                                                      \
            return add_ret_;                                                                                    \
    } while (0)

/* One layer task (dahl_layer.h), count times. */
static int add_layer_task(struct dahl_catalogue *c, const struct dahl_layer_task *t, long count)
{
    return add(c, t->symbol, t->footprint, t->size, t->flops, t->bytes, count, false);
}

/* The addition of a layer's input gradient, written into its own buffer, to its source's (fan-out): one per
 * group of n samples, count times. */
static int fan_out_task(struct dahl_catalogue *c, const struct dahl_layer_shape *l, int n, long count)
{
    size_t elems = (size_t)n * (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
    double flops = dahl_accumulate_flops(elems);
    ADD(c, "dahl_accumulate", dahl_reduce_footprint_of(elems), dahl_size_of_flops(flops), flops,
        (double)dahl_accumulate_bytes(elems), count, false);
    return 0;
}

/* The tasks of every layer over a group of n samples in the pass (forward: first to last layer, then the
 * loss; backward: last to first), count such groups: dahl_network.c's forward_group and backward_group. */
static int pass_tasks(struct dahl_catalogue *c, const struct dahl_network_desc *d,
                      const struct dahl_layer_shape *layers, enum dahl_pass pass, int n, long count)
{
    bool fwd = pass == DAHL_PASS_FORWARD;
    for (int k = 0; k < d->nlayers; k++) {
        int i = fwd ? k : d->nlayers - 1 - k;
        struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
        int nt = dahl_layer_tasks(&layers[i], pass, n, dahl_network_desc_input(d, i, 0) >= 0, tasks);
        for (int t = 0; t < nt; t++)
            ADD_TASKS(add_layer_task(c, &tasks[t], count));
        for (int k = 0; k < dahl_network_desc_ninputs(d, i) && !fwd; k++)
            if (dahl_network_desc_input(d, i, k) >= 0 && !dahl_network_desc_input_direct(d, i, k))
                ADD_TASKS(fan_out_task(c, &layers[i], n, count));
    }
    if (fwd) {
        struct dahl_layer_task loss = dahl_layer_task_grouped(
            "dahl_softmax_xent", dahl_softmax_xent_footprint_of(d->nclasses), n, dahl_softmax_xent_flops(d->nclasses),
            dahl_softmax_xent_bytes(d->nclasses), 0);
        ADD_TASKS(add_layer_task(c, &loss, count));
    }
    return 0;
}

/* One SGD update of n elements, and one zeroing of n elements, count times each. */
static int sgd_tasks(struct dahl_catalogue *c, size_t n, bool momentum, long count)
{
    double flops = dahl_sgd_update_flops(n, momentum);
    ADD(c, "dahl_sgd_update", dahl_sgd_update_footprint_of(n, momentum), dahl_size_of_flops(flops), flops,
        (double)dahl_sgd_update_bytes(n, momentum), count, false);
    return 0;
}

/* dahl_zero's size is the element count it writes: it does no arithmetic (see reduce.c). */
static int zero_tasks(struct dahl_catalogue *c, size_t n, long count)
{
    ADD(c, "dahl_zero", dahl_reduce_footprint_of(n), dahl_size_of_flops((double)n), dahl_zero_flops(n),
        (double)dahl_zero_bytes(n), count, false);
    return 0;
}

/* update_params for one parameter tensor of n elements: the reduction of its gradient (manual: a tree of
 * groups - 1 additions; REDUX: StarPU's, one addition per per-worker copy), the SGD update, and the zeroing
 * of the gradient for the next step (manual: every per-group buffer; REDUX: the one tensor). A split
 * update (dahl_update_chunks) has one SGD task and one zeroing of the summed gradient per chunk; the
 * reduction stays whole. */
static int update_tasks(struct dahl_catalogue *c, size_t n, const struct dahl_catalogue_conf *conf, int groups)
{
    double flops = dahl_accumulate_flops(n);
    bool redux = conf->reduction == DAHL_REDUCTION_REDUX;
    ADD(c, "dahl_accumulate", dahl_reduce_footprint_of(n), dahl_size_of_flops(flops), flops,
        (double)dahl_accumulate_bytes(n), redux ? conf->redux_copies : groups - 1, redux);
    int k = dahl_update_chunks(n, conf->update_chunk);
    if (k < 2) {
        ADD_TASKS(sgd_tasks(c, n, conf->momentum, 1));
        ADD_TASKS(zero_tasks(c, n, redux ? 1 : groups));
        return 0;
    }
    for (int i = 0; i < k; i++) {
        size_t m = dahl_update_chunk_elems(n, k, i);
        ADD_TASKS(sgd_tasks(c, m, conf->momentum, 1));
        ADD_TASKS(zero_tasks(c, m, 1));
    }
    /* manual: the per-group buffers other than the sum (group 0) are zeroed whole */
    ADD_TASKS(zero_tasks(c, n, redux ? 0 : groups - 1));
    return 0;
}

/* A layer's step sums (DAHL_T_STATS, 2C + 1 values): their reduction (manual: a tree of groups - 1 additions
 * between the forward phases; REDUX: StarPU's), its once-per-step tasks (DAHL_PASS_STEP) and the sums' zeroing
 * (manual: every group's buffer). */
static int step_sum_tasks(struct dahl_catalogue *c, const struct dahl_layer_shape *l,
                          const struct dahl_catalogue_conf *conf, int groups)
{
    struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
    int nt = dahl_layer_tasks(l, DAHL_PASS_STEP, conf->batch, true, tasks);
    for (int t = 0; t < nt; t++)
        ADD_TASKS(add_layer_task(c, &tasks[t], 1));
    if (!dahl_layer_uses_tensor(l, DAHL_T_STATS))
        return 0;
    size_t n = 2 * (size_t)l->in_c + 1;
    double flops = dahl_accumulate_flops(n);
    bool redux = conf->reduction == DAHL_REDUCTION_REDUX;
    ADD(c, "dahl_accumulate", dahl_reduce_footprint_of(n), dahl_size_of_flops(flops), flops,
        (double)dahl_accumulate_bytes(n), redux ? conf->redux_copies : groups - 1, redux);
    return zero_tasks(c, n, redux ? 1 : groups);
}

int dahl_catalogue_add_step(struct dahl_catalogue *c, const struct dahl_network_desc *d,
                            const struct dahl_catalogue_conf *conf, char *err, size_t err_size)
{
    if (conf->batch < 1 || (conf->reduction == DAHL_REDUCTION_REDUX && conf->redux_copies < 1) ||
        conf->grain < 0 || conf->grain > conf->batch) {
        snprintf(err, err_size,
                 "catalogue: batch >= 1, grain in [0, batch] and, with REDUX, redux_copies >= 1 expected");
        return -EINVAL;
    }
    struct dahl_layer_shape layers[DAHL_NETWORK_MAX_LAYERS];
    int ret = dahl_network_desc_shapes(d, layers, err, err_size);
    if (ret != 0)
        return ret;
    /* batch / grain groups of grain samples, and one of the rest */
    int grain = conf->grain > 1 ? conf->grain : 1;
    int full = conf->batch / grain, rest = conf->batch % grain, groups = full + (rest > 0);
    ret = pass_tasks(c, d, layers, DAHL_PASS_FORWARD, grain, full);
    if (ret == 0 && rest > 0)
        ret = pass_tasks(c, d, layers, DAHL_PASS_FORWARD, rest, 1);
    if (ret == 0)
        ret = pass_tasks(c, d, layers, DAHL_PASS_BACKWARD, grain, full);
    if (ret == 0 && rest > 0)
        ret = pass_tasks(c, d, layers, DAHL_PASS_BACKWARD, rest, 1);
    for (int i = 0; i < d->nlayers && ret == 0; i++) {
        if (layers[i].nw == 0)
            continue;
        ret = step_sum_tasks(c, &layers[i], conf, groups);
        if (ret == 0)
            ret = update_tasks(c, layers[i].nw, conf, groups);
        if (ret == 0 && layers[i].nb > 0) /* no bias: no update of one */
            ret = update_tasks(c, layers[i].nb, conf, groups);
        /* pipelining: the slot's stash refreshed from the updated parameters */
        for (int t = 0; t < (layers[i].nb > 0 ? 2 : 1) && ret == 0 && conf->pipeline_depth > 1; t++) {
            size_t n = t == 0 ? layers[i].nw : layers[i].nb;
            double flops = dahl_accumulate_flops(n);
            ret = zero_tasks(c, n, 1);
            if (ret == 0)
                ret = add(c, "dahl_accumulate", dahl_reduce_footprint_of(n), dahl_size_of_flops(flops), flops,
                          (double)dahl_accumulate_bytes(n), 1, false);
        }
    }
    if (ret == -ENOMEM)
        snprintf(err, err_size, "catalogue: out of memory");
    return ret;
}

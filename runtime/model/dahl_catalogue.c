/* The task catalogue of a training step (see dahl_catalogue.h). It walks the layer shapes the way
 * dahl_network.c submits tasks (forward_group, backward_group, update_params), and takes every footprint,
 * size, flop and byte count from the functions the codelets and kernels themselves use. tests/test_catalogue.c
 * checks it against what StarPU records in a real run: a change to the task graph that is not made here too
 * fails there. */
#include "dahl_catalogue.h"

#include "dahl_array.h"
#include "dahl_footprint.h"
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

/* A task over n samples (the grain): n times one sample's work, its footprint grouped (dahl_footprint.h),
 * and the parameters (params of one sample's bytes) read or written once, not n times. */
static int add_grouped(struct dahl_catalogue *c, const char *symbol, uint32_t footprint, int n, double flops,
                       size_t bytes, size_t params, long count)
{
    double total = (double)n * flops;
    return add(c, symbol, dahl_grouped_footprint_of(footprint, n), dahl_size_of_flops(total), total,
               (double)n * (double)bytes - (double)(n - 1) * (double)params, count, false);
}

#define ADD_GROUPED(...) ADD_TASKS(add_grouped(__VA_ARGS__))

/* forward_group: one task per layer, then the loss, over n samples; count such groups. */
static int forward_tasks(struct dahl_catalogue *c, const struct dahl_network_desc *d,
                         const struct dahl_layer_shape *layers, int n, long count)
{
    for (int i = 0; i < d->nlayers; i++) {
        const struct dahl_layer_shape *l = &layers[i];
        size_t n_in = (size_t)l->in_c * l->in_h * l->in_w;
        const size_t fl = sizeof(float);
        switch (l->desc.kind) {
        case DAHL_LAYER_CONV:
            ADD_GROUPED(c, "dahl_conv2d_forward", dahl_conv2d_footprint_of(&l->conv), n,
                        dahl_conv2d_forward_flops(&l->conv), dahl_conv2d_forward_bytes(&l->conv),
                        fl * (l->nw + l->nb), count);
            break;
        case DAHL_LAYER_RELU: {
            size_t all = (size_t)n * n_in;
            double flops = dahl_relu_forward_flops(all);
            ADD(c, "dahl_relu_forward", dahl_relu_footprint_of(all), dahl_size_of_flops(flops), flops,
                (double)dahl_relu_forward_bytes(all), count, false);
            break;
        }
        case DAHL_LAYER_MAXPOOL:
            ADD_GROUPED(c, "dahl_maxpool_forward", dahl_maxpool_footprint_of(&l->pool), n,
                        dahl_maxpool_forward_flops(&l->pool), dahl_maxpool_forward_bytes(&l->pool), 0, count);
            break;
        case DAHL_LAYER_DENSE:
            ADD_GROUPED(c, "dahl_dense_forward", dahl_dense_footprint_of((int)n_in, l->desc.units), n,
                        dahl_dense_forward_flops((int)n_in, l->desc.units),
                        dahl_dense_forward_bytes((int)n_in, l->desc.units), fl * (l->nw + l->nb), count);
            break;
        }
    }
    ADD_GROUPED(c, "dahl_softmax_xent", dahl_softmax_xent_footprint_of(d->nclasses), n,
                dahl_softmax_xent_flops(d->nclasses), dahl_softmax_xent_bytes(d->nclasses), 0, count);
    return 0;
}

/* backward_group: the weight gradients of every layer with parameters, and the input gradient of every
 * layer but the first, over n samples; count such groups. */
static int backward_tasks(struct dahl_catalogue *c, const struct dahl_network_desc *d,
                          const struct dahl_layer_shape *layers, int n, long count)
{
    for (int i = d->nlayers - 1; i >= 0; i--) {
        const struct dahl_layer_shape *l = &layers[i];
        size_t n_in = (size_t)l->in_c * l->in_h * l->in_w;
        long has_dx = i > 0 ? count : 0;
        const size_t fl = sizeof(float);
        switch (l->desc.kind) {
        case DAHL_LAYER_CONV:
            ADD_GROUPED(c, "dahl_conv2d_backward_weights", dahl_conv2d_footprint_of(&l->conv), n,
                        dahl_conv2d_backward_weights_flops(&l->conv), dahl_conv2d_backward_weights_bytes(&l->conv),
                        2 * fl * (l->nw + l->nb), count);
            ADD_GROUPED(c, "dahl_conv2d_backward_input", dahl_conv2d_footprint_of(&l->conv), n,
                        dahl_conv2d_backward_input_flops(&l->conv), dahl_conv2d_backward_input_bytes(&l->conv),
                        fl * l->nw, has_dx);
            break;
        case DAHL_LAYER_RELU: {
            size_t all = (size_t)n * n_in;
            double flops = dahl_relu_backward_flops(all);
            ADD(c, "dahl_relu_backward", dahl_relu_footprint_of(all), dahl_size_of_flops(flops), flops,
                (double)dahl_relu_backward_bytes(all), has_dx, false);
            break;
        }
        case DAHL_LAYER_MAXPOOL:
            ADD_GROUPED(c, "dahl_maxpool_backward", dahl_maxpool_footprint_of(&l->pool), n,
                        dahl_maxpool_backward_flops(&l->pool), dahl_maxpool_backward_bytes(&l->pool), 0, has_dx);
            break;
        case DAHL_LAYER_DENSE:
            ADD_GROUPED(c, "dahl_dense_backward_weights", dahl_dense_footprint_of((int)n_in, l->desc.units), n,
                        dahl_dense_backward_weights_flops((int)n_in, l->desc.units),
                        dahl_dense_backward_weights_bytes((int)n_in, l->desc.units), 2 * fl * (l->nw + l->nb), count);
            ADD_GROUPED(c, "dahl_dense_backward_input", dahl_dense_footprint_of((int)n_in, l->desc.units), n,
                        dahl_dense_backward_input_flops((int)n_in, l->desc.units),
                        dahl_dense_backward_input_bytes((int)n_in, l->desc.units), fl * l->nw, has_dx);
            break;
        }
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
    ret = forward_tasks(c, d, layers, grain, full);
    if (ret == 0 && rest > 0)
        ret = forward_tasks(c, d, layers, rest, 1);
    if (ret == 0)
        ret = backward_tasks(c, d, layers, grain, full);
    if (ret == 0 && rest > 0)
        ret = backward_tasks(c, d, layers, rest, 1);
    for (int i = 0; i < d->nlayers && ret == 0; i++) {
        if (layers[i].nw == 0)
            continue;
        ret = update_tasks(c, layers[i].nw, conf, groups);
        if (ret == 0)
            ret = update_tasks(c, layers[i].nb, conf, groups);
        /* pipelining: the slot's stash refreshed from the updated parameters */
        for (int t = 0; t < 2 && ret == 0 && conf->pipeline_depth > 1; t++) {
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

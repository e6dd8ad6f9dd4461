/* Building a dahl network (see dahl_network.h and dahl_network.c): its layers' tensors, parameters and their
 * initial values, gradients, step sums, workspaces and update chunk plans, and the profiler's labels. */
#include "dahl_network_internal.h"

#include "dahl_codelets_starpu.h"
#include "dahl_profile_starpu.h"
#include "dahl_random.h"
#include "dahl_tensor_starpu.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* He-normal initial weights: N(0, 2 / fan_in), by Box-Muller from the seed; 1 for a kind's scale. */
static int init_weights(struct layer *l, uint64_t *state)
{
    if (DAHL_SIMULATED)
        return 0;
    size_t fan_in = l->s.nw / (l->s.nb > 0 ? l->s.nb : (size_t)l->s.out_c); /* a convolution without bias: filters */
    float *v = malloc(l->s.nw * sizeof(float));
    if (v == NULL)
        return -ENOMEM;
    if (dahl_layer_type_get(l->s.desc.kind)->weights_one) { /* a scale (batch norm's gamma): 1, no random draw */
        for (size_t i = 0; i < l->s.nw; i++)
            v[i] = 1.0f;
        int ret = dahl_tensor_write(l->w, v, l->s.nw);
        free(v);
        return ret;
    }
    double sigma = sqrt(2.0 / (double)fan_in);
    for (size_t i = 0; i < l->s.nw; i++) {
        double u1 = ((double)(dahl_splitmix64(state) >> 11) + 1.0) / 9007199254740993.0;
        double u2 = (double)(dahl_splitmix64(state) >> 11) / 9007199254740992.0;
        v[i] = (float)(sigma * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
    }
    int ret = dahl_tensor_write(l->w, v, l->s.nw);
    free(v);
    return ret;
}

/* Running statistics start as mean 0 and variance 1 (the first C values, then the next C). */
static int running_init(struct layer *l)
{
    if (DAHL_SIMULATED)
        return 0;
    size_t c = (size_t)l->s.in_c;
    float *v = calloc(2 * c, sizeof(float));
    if (v == NULL)
        return -ENOMEM;
    for (size_t i = c; i < 2 * c; i++)
        v[i] = 1.0f;
    int ret = dahl_tensor_write(l->running, v, 2 * c);
    free(v);
    return ret;
}

/* A [batch][...] tensor split per group of grain samples, or a single whole tensor when batch is 0. */
static struct dahl_tensor *tensor(int batch, int grain, size_t per_sample)
{
    if (per_sample > (size_t)0x7fffffff)
        return NULL;
    struct dahl_tensor *t = batch > 0 ? dahl_tensor_create(2, (int[]){batch, (int)per_sample})
                                      : dahl_tensor_create(1, (int[]){(int)per_sample});
    if (t != NULL && batch > 0 && dahl_tensor_split_groups(t, grain) != 0) {
        dahl_tensor_destroy(t);
        return NULL;
    }
    return t;
}

starpu_data_handle_t dahl_network_summed_grad(const struct dahl_network *net, const struct dahl_tensor *g)
{
    return net->conf.reduction == DAHL_REDUCTION_MANUAL ? dahl_tensor_group(g, 0) : dahl_tensor_handle(g);
}

/* Plans the chunks of an n-element parameter p, its summed gradient and its velocity when its update is
 * split; the velocity is partitioned for good here (once, before any task uses it). */
static int plan_chunks(struct dahl_network *net, struct update_chunks *u, struct dahl_tensor *p,
                       struct dahl_tensor *const *g, struct dahl_tensor *v, size_t n)
{
    int k = dahl_update_chunks(n, net->conf.update_chunk);
    if (k < 2)
        return 0;
    int ret = dahl_chunks_plan(&u->p, dahl_tensor_handle(p), k);
    for (int s = 0; s < net->depth && ret == 0; s++)
        ret = dahl_chunks_plan(&u->g[s], dahl_network_summed_grad(net, g[s]), k);
    if (ret == 0 && v != NULL) {
        ret = dahl_chunks_plan(&u->v, dahl_tensor_handle(v), k);
        if (ret == 0)
            dahl_chunks_partition_submit(&u->v);
    }
    return ret;
}

/* dst = src, as two tasks whose perf models every calibration has (a parameter's size is its gradient's):
 * dahl_zero then dahl_accumulate (0 + x is x). Returns 0 or a negative StarPU error. */
static int stash(struct dahl_tensor *src, struct dahl_tensor *dst)
{
    int ret = dahl_insert_zero(dahl_tensor_handle(dst));
    return ret != 0 ? ret : dahl_insert_accumulate(dahl_tensor_handle(dst), dahl_tensor_handle(src));
}

static int layer_create(struct dahl_network *net, struct layer *l, uint64_t *state)
{
    if (l->s.nw == 0)
        return 0;
    /* a layer without bias (nb 0: a convolution without one) has no b, db, sb or vb */
    const bool bias = l->s.nb > 0;
    l->w = tensor(0, 1, l->s.nw);
    l->b = bias ? tensor(0, 1, l->s.nb) : NULL;
    if (l->w == NULL || (bias && l->b == NULL))
        return -ENOMEM;
    bool manual = net->conf.reduction == DAHL_REDUCTION_MANUAL;
    int grad_batch = manual ? net->groups : 0;
    for (int s = 0; s < net->depth; s++) {
        l->dw[s] = tensor(grad_batch, 1, l->s.nw);
        l->db[s] = bias ? tensor(grad_batch, 1, l->s.nb) : NULL;
        if (l->dw[s] == NULL || (bias && l->db[s] == NULL))
            return -ENOMEM;
        if (!manual) {
            dahl_gradient_enable_redux(dahl_tensor_handle(l->dw[s]));
            if (bias)
                dahl_gradient_enable_redux(dahl_tensor_handle(l->db[s]));
        }
        if (net->depth > 1) {
            l->sw[s] = tensor(0, 1, l->s.nw);
            l->sb[s] = bias ? tensor(0, 1, l->s.nb) : NULL;
            if (l->sw[s] == NULL || (bias && l->sb[s] == NULL))
                return -ENOMEM;
        }
    }
    if (net->conf.momentum != 0.0f) {
        l->vw = tensor(0, 1, l->s.nw);
        l->vb = bias ? tensor(0, 1, l->s.nb) : NULL;
        if (l->vw == NULL || (bias && l->vb == NULL))
            return -ENOMEM;
    }
    if (dahl_layer_uses_tensor(&l->s, DAHL_T_STATS)) {
        l->stats = tensor(grad_batch, 1, 2 * (size_t)l->s.in_c + 1);
        if (l->stats == NULL)
            return -ENOMEM;
        if (!manual)
            dahl_gradient_enable_redux(dahl_tensor_handle(l->stats));
    }
    if (dahl_layer_uses_tensor(&l->s, DAHL_T_RUNNING)) {
        l->running = tensor(0, 1, 2 * (size_t)l->s.in_c);
        int ret = l->running == NULL ? -ENOMEM : running_init(l);
        if (ret != 0)
            return ret;
    }
    size_t ws = dahl_layer_workspace_bytes(&l->s, net->grain, manual && net->grain > 1);
    if (ws > 0 && (l->workspace = dahl_workspace_create(ws)) == NULL)
        return -ENOMEM;
    int ret = init_weights(l, state);
    /* every slot's stash starts as the initial weights (not counted as a step's tasks) */
    for (int s = 0; s < net->depth && l->sw[s] != NULL && ret == 0; s++)
        ret = stash(l->w, l->sw[s]) == 0 && (!bias || stash(l->b, l->sb[s]) == 0) ? 0 : -EIO;
    if (ret == 0)
        ret = plan_chunks(net, &l->wu, l->w, l->dw, l->vw, l->s.nw);
    if (ret == 0 && bias)
        ret = plan_chunks(net, &l->bu, l->b, l->db, l->vb, l->s.nb);
    return ret;
}

/* Tells the profiler which layer tasks writing t work for, t whole and each of its groups. */
static void label_tensor(struct dahl_tensor *t, int layer)
{
    if (t == NULL)
        return;
    dahl_profile_label(dahl_tensor_handle(t), layer);
    for (int g = 0; g < dahl_tensor_groups(t); g++)
        dahl_profile_label(dahl_tensor_group(t, g), layer);
}

/* Layer i writes its output act[i + 1], the gradient of its input grad[i] and its parameters and their
 * gradients; the loss (index nlayers) writes grad[nlayers] and the metrics. */
static void label_layers(struct dahl_network *net)
{
    int L = net->desc.nlayers;
    for (int i = 0; i < L; i++) {
        struct layer *l = &net->layers[i];
        label_tensor(net->act[i + 1], i);
        for (int k = 0; k < DAHL_LAYER_MAX_INPUTS; k++) {
            int src = k < dahl_network_desc_ninputs(&net->desc, i) ? dahl_network_desc_input(&net->desc, i, k) : -1;
            if (src >= 0 && dahl_network_desc_input_direct(&net->desc, i, k))
                label_tensor(net->grad[src + 1], i);
        }
        struct dahl_tensor *params[] = {l->w, l->b, l->vw, l->vb, l->edx[0], l->edx[1], l->stats, l->running};
        for (size_t k = 0; k < sizeof(params) / sizeof(params[0]); k++)
            label_tensor(params[k], i);
        for (int s = 0; s < net->depth; s++) {
            struct dahl_tensor *per_slot[] = {l->dw[s], l->db[s], l->sw[s], l->sb[s]};
            for (size_t k = 0; k < sizeof(per_slot) / sizeof(per_slot[0]); k++)
                label_tensor(per_slot[k], i);
        }
        struct dahl_chunks *plans[2 * DAHL_PIPELINE_MAX_DEPTH + 4] = {&l->wu.p, &l->wu.v, &l->bu.p, &l->bu.v};
        int nplans = 4;
        for (int s = 0; s < net->depth; s++) {
            plans[nplans++] = &l->wu.g[s];
            plans[nplans++] = &l->bu.g[s];
        }
        for (int k = 0; k < nplans; k++)
            for (int c = 0; c < plans[k]->n; c++)
                dahl_profile_label(plans[k]->parts[c], i);
    }
    label_tensor(net->grad[L], L);
    label_tensor(net->metrics, L);
}

struct dahl_network *dahl_network_create(const struct dahl_network_desc *d, const struct dahl_train_conf *conf,
                                         char *err, size_t err_size)
{
    if (conf->batch < 1 || !(conf->lr > 0.0f) || conf->momentum < 0.0f || conf->momentum >= 1.0f ||
        conf->grain < 0 || conf->grain > conf->batch || conf->pipeline_depth < 0 ||
        conf->pipeline_depth > DAHL_PIPELINE_MAX_DEPTH) {
        snprintf(err, err_size,
                 "training configuration: batch >= 1, lr > 0, momentum in [0, 1), grain in [0, batch] and "
                 "pipeline_depth in [0, %d] expected",
                 DAHL_PIPELINE_MAX_DEPTH);
        return NULL;
    }
    if (conf->stage_end > 0 && (conf->stage_first < 0 || conf->stage_first >= conf->stage_end ||
                                conf->stage_end > d->nlayers ||
                                (conf->stage_first > 0) != (conf->stage_prev >= 0) ||
                                (conf->stage_end < d->nlayers) != (conf->stage_next >= 0))) {
        snprintf(err, err_size, "pipeline stage: layers [%d, %d) of %d, previous rank %d, next rank %d: expected a "
                 "range of the layers with a neighbour on each side that has layers there",
                 conf->stage_first, conf->stage_end, d->nlayers, conf->stage_prev, conf->stage_next);
        return NULL;
    }
    if (conf->stage_end > 0 && (!dahl_network_desc_cut_ok(d, conf->stage_first) ||
                                (conf->stage_end < d->nlayers && !dahl_network_desc_cut_ok(d, conf->stage_end)))) {
        snprintf(err, err_size, "pipeline stage: layers [%d, %d): a skip connection crosses its bounds (a stage "
                 "must begin where only the previous layer's output goes on)", conf->stage_first, conf->stage_end);
        return NULL;
    }
    if (conf->stage_end > 0 && dahl_network_desc_layer_major(d)) {
        snprintf(err, err_size, "pipeline stages: a network with batch normalisation cannot be cut into stages (its "
                 "statistics need every sample of a step before any goes on)");
        return NULL;
    }
    if (conf->pipeline_depth > 1 && conf->allreduce != NULL) {
        snprintf(err, err_size, "pipeline_depth %d: pipelining across nodes is not supported (expected 1)",
                 conf->pipeline_depth);
        return NULL;
    }
    struct dahl_network *net = calloc(1, sizeof(*net));
    if (net == NULL) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    net->desc = *d;
    net->conf = *conf;
    net->grain = conf->grain > 1 ? conf->grain : 1;
    net->groups = (conf->batch + net->grain - 1) / net->grain;
    net->depth = conf->pipeline_depth > 1 ? conf->pipeline_depth : 1;
    net->first = conf->stage_end > 0 ? conf->stage_first : 0;
    net->end = conf->stage_end > 0 ? conf->stage_end : d->nlayers;
    net->layer_major = dahl_network_desc_layer_major(d);
    pthread_mutex_init(&net->lock, NULL);
    net->symbols = dahl_codelet_symbols(&net->nsymbols);
    net->task_counts = calloc(net->nsymbols, sizeof(long));
    net->slots = calloc((size_t)net->groups, sizeof(*net->slots));
    if (net->task_counts == NULL || net->slots == NULL) {
        snprintf(err, err_size, "out of memory");
        dahl_network_destroy(net);
        return NULL;
    }
    struct dahl_layer_shape shapes[DAHL_NETWORK_MAX_LAYERS];
    if (dahl_network_desc_shapes(d, shapes, err, err_size) != 0) {
        net->desc.nlayers = 0; /* nothing was created */
        dahl_network_destroy(net);
        return NULL;
    }
    for (int i = 0; i < d->nlayers; i++)
        net->layers[i].s = shapes[i];
    uint64_t state = conf->seed;
    int L = d->nlayers;
    net->act[0] = tensor(conf->batch, net->grain, (size_t)d->c * d->h * d->w);
    int ret = net->act[0] == NULL ? -ENOMEM : 0;
    for (int i = 0; i < L && ret == 0; i++) {
        struct layer *l = &net->layers[i];
        size_t out = (size_t)l->s.out_c * l->s.out_h * l->s.out_w;
        net->act[i + 1] = tensor(conf->batch, net->grain, out);
        net->grad[i + 1] = tensor(conf->batch, net->grain, out);
        ret = net->act[i + 1] == NULL || net->grad[i + 1] == NULL ? -ENOMEM : layer_create(net, l, &state);
        size_t in = (size_t)l->s.in_c * l->s.in_h * l->s.in_w;
        for (int k = 0; k < DAHL_LAYER_MAX_INPUTS && ret == 0; k++)
            if (k < dahl_network_desc_ninputs(d, i) && dahl_network_desc_input(d, i, k) >= 0 &&
                !dahl_network_desc_input_direct(d, i, k) && (l->edx[k] = tensor(conf->batch, net->grain, in)) == NULL)
                ret = -ENOMEM;
    }
    if (ret == 0) {
        net->metrics = tensor(conf->batch, net->grain, 2);
        ret = net->metrics == NULL ? -ENOMEM : 0;
    }
    if (ret != 0) {
        snprintf(err, err_size, "cannot create the network's tensors: %s", strerror(-ret));
        dahl_network_destroy(net);
        return NULL;
    }
    for (int g = 0; g < net->groups; g++)
        net->slots[g] = (struct metric_slot){.net = net, .handle = dahl_tensor_group(net->metrics, g)};
    label_layers(net);
    return net;
}

void dahl_network_destroy(struct dahl_network *net)
{
    if (net == NULL)
        return;
    dahl_network_wait_marks(net);
    for (int i = 0; i < net->desc.nlayers; i++) {
        struct layer *l = &net->layers[i];
        struct dahl_chunks *plans[] = {&l->wu.p, &l->wu.v, &l->bu.p, &l->bu.v};
        for (size_t k = 0; k < sizeof(plans) / sizeof(plans[0]); k++)
            dahl_chunks_fini(plans[k]);
        for (int s = 0; s < net->depth; s++) {
            dahl_chunks_fini(&l->wu.g[s]);
            dahl_chunks_fini(&l->bu.g[s]);
            dahl_tensor_destroy(l->dw[s]);
            dahl_tensor_destroy(l->db[s]);
            dahl_tensor_destroy(l->sw[s]);
            dahl_tensor_destroy(l->sb[s]);
        }
        dahl_workspace_destroy(l->workspace);
        for (int k = 0; k < DAHL_LAYER_MAX_INPUTS; k++)
            dahl_tensor_destroy(l->edx[k]);
        dahl_tensor_destroy(l->stats);
        dahl_tensor_destroy(l->running);
        dahl_tensor_destroy(l->w);
        dahl_tensor_destroy(l->b);
        dahl_tensor_destroy(l->vw);
        dahl_tensor_destroy(l->vb);
    }
    for (int i = 0; i <= net->desc.nlayers; i++) {
        dahl_tensor_destroy(net->act[i]);
        dahl_tensor_destroy(net->grad[i]);
    }
    dahl_tensor_destroy(net->metrics);
    pthread_mutex_destroy(&net->lock);
    free(net->end_us);
    free(net->slots);
    free(net->task_counts);
    free(net);
}

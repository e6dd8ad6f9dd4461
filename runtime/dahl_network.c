/* The CNN task graph: see dahl_network.h; the network is built by dahl_network_build.c. Tensors: act[0] is the
 * network's input and act[i + 1] the output of layer i ([batch][...], split per group of `grain` samples, one
 * group per sample at grain 1; act[L] holds the logits), grad[i] = dLoss/dact[i] (i >= 1), and each layer with
 * parameters has w, b, their gradients (REDUX: one dw/db; manual: one per group, summed by a binary tree) and,
 * with momentum, velocities. Metrics come back through starpu_data_acquire_cb, so reading them never blocks
 * the submitting thread; so do the times at which each step's SGD updates complete (a read acquire of every
 * parameter tensor after the updates, counted down per step). A parameter tensor larger than the update
 * chunk (dahl_update_chunks) is updated chunk by chunk: its weights, summed gradient and velocity have a
 * partition plan of the same contiguous chunks; the weights and gradient are partitioned for the update and
 * gathered back after it (forward and backward tasks read them whole), the velocity, which only the update
 * touches, stays partitioned. */
#include "dahl_network_internal.h"
#include "dahl_engine.h"

#include "dahl_array.h"
#include "dahl_codelets_starpu.h"
#include "dahl_mpi_starpu.h"
#include "dahl_profile_starpu.h"
#include "dahl_random.h"
#include "dahl_tensor_starpu.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void count(struct dahl_network *net, const char *symbol)
{
    for (size_t i = 0; i < net->nsymbols; i++) {
        if (strcmp(net->symbols[i], symbol) == 0) {
            net->task_counts[i]++;
            return;
        }
    }
}

long dahl_network_task_count(const struct dahl_network *net, const char *symbol)
{
    for (size_t i = 0; i < net->nsymbols; i++)
        if (strcmp(net->symbols[i], symbol) == 0)
            return net->task_counts[i];
    return 0;
}

/* Submits and counts one task. */
#define SUBMIT(net, symbol, call)                                                                                \
    do {                                                                                                         \
        int submit_ret_ = (call);                                                                                \
        if (submit_ret_ != 0)                                                                                    \
            return submit_ret_;                                                                                  \
        count((net), (symbol));                                                                                  \
        dahl_engine_charge_submission(1, 0);                                                                     \
    } while (0)

static starpu_data_handle_t group(struct dahl_tensor *t, int g)
{
    return dahl_tensor_group(t, g);
}

/* Samples in group g of a training step. */
static int group_size(const struct dahl_network *net, int g)
{
    return dahl_tensor_group_size(net->conf.batch, net->grain, g);
}

/* Copies group g's n images into its part of the input tensor, after waiting for that part's readers of
 * the last step. The simulation has no images (images == NULL) but waits the same way: that wait holds the
 * submitting thread back until the previous step's first-layer tasks on the group are done, and orders the
 * next step's reads after them, in simulated time as on the real machine. */
static int load_input(struct dahl_network *net, int g, int n, const float *images)
{
    if ((!DAHL_SIMULATED && images == NULL) || net->first > 0) /* a later stage's input comes by message */
        return 0;
    size_t per = dahl_tensor_sample_count(net->act[0]);
    starpu_data_handle_t h = group(net->act[0], g);
    DAHL_CHECK_STARPU(starpu_data_acquire(h, STARPU_W));
    if (images != NULL) {
        /* timed for dahlsim calibrate, which charges the simulated copies at this rate */
        struct timespec t0, t1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        memcpy(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), images + (size_t)g * (size_t)net->grain * per,
               (size_t)n * per * sizeof(float));
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        net->copy_cpu_s += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        net->copy_bytes += (size_t)n * per * sizeof(float);
    }
    starpu_data_release(h);
    dahl_engine_charge_submission(0, (size_t)n * per * sizeof(float));
    return 0;
}

void dahl_network_input_copies(const struct dahl_network *net, size_t *bytes, double *cpu_s)
{
    *bytes = net->copy_bytes;
    *cpu_s = net->copy_cpu_s;
}

/* The weights and bias the passes of pipeline slot `slot` read: its stash at a depth above 1, else (and
 * for an evaluation, slot < 0) the latest. */
static starpu_data_handle_t weights(const struct layer *l, int slot)
{
    return slot >= 0 && l->sw[slot] != NULL ? dahl_tensor_handle(l->sw[slot]) : dahl_tensor_handle(l->w);
}

static starpu_data_handle_t bias(const struct layer *l, int slot)
{
    if (l->b == NULL) /* a convolution without bias: its tasks access none */
        return NULL;
    return slot >= 0 && l->sb[slot] != NULL ? dahl_tensor_handle(l->sb[slot]) : dahl_tensor_handle(l->b);
}

/* A layer's tasks are the layer table's (dahl_layer.h), which dahl_catalogue.c and dahl_stepgraph.c walk too;
 * they list the rest of forward_group, backward_group and update_params (the loss and the updates)
 * the same way: a task added or changed here goes there too (test_catalogue and test_stepgraph
 * check both against what StarPU records and counts). Every task of group g covers its n samples (the
 * group's size, as the tensors are split). */
/* A pipeline message's tag: the forward pass's number, the group, the direction (0: activations forward, 1:
 * their gradient back). */
static int64_t pipe_tag(const struct dahl_network *net, int64_t pass, int g, int backward)
{
    return (pass * net->groups + g) * 2 + backward;
}

/* One pipeline message of h, counted (submission only: no callback runs for it). */
static int pipe_send(struct dahl_network *net, starpu_data_handle_t h, int peer, int64_t tag)
{
    net->pipe.messages_sent++;
    net->pipe.bytes_sent += (double)starpu_data_get_size(h);
    return dahl_mpi_isend(h, peer, tag);
}

static int pipe_recv(struct dahl_network *net, starpu_data_handle_t h, int peer, int64_t tag)
{
    net->pipe.messages_received++;
    net->pipe.bytes_received += (double)starpu_data_get_size(h);
    return dahl_mpi_irecv(h, peer, tag);
}

void dahl_network_pipe_stats(const struct dahl_network *net, struct dahl_pipe_stats *out)
{
    *out = net->pipe;
}

/* The gradient buffers group g's backward tasks accumulate into: the REDUX tensor, or the group's own. */
static starpu_data_handle_t grad_handle(struct dahl_network *net, struct dahl_tensor *t, int g)
{
    return net->conf.reduction == DAHL_REDUCTION_MANUAL ? group(t, g) : dahl_tensor_handle(t);
}

/* The activations layer i reads as input k, and where the gradient of that input goes (NULL for the network's
 * input): its source's gradient, or the layer's own buffer when another layer's backward pass wrote that
 * first (the buffer is added to it after the layer's backward tasks). */
static struct dahl_tensor *input_act(const struct dahl_network *net, int i, int k)
{
    return net->act[dahl_network_desc_input(&net->desc, i, k) + 1];
}

static struct dahl_tensor *input_grad(const struct dahl_network *net, int i, int k)
{
    int src = dahl_network_desc_input(&net->desc, i, k);
    if (src < 0)
        return NULL;
    const struct layer *l = &net->layers[i];
    return l->edx[k] != NULL ? l->edx[k] : net->grad[src + 1];
}

/* The handle a task accesses a step's sum through: the group's buffer (GRAD: REDUX, or group g's under the
 * manual reduction), or the sum itself (R: after the tree, group 0's buffer). */
static starpu_data_handle_t sum_handle(struct dahl_network *net, struct dahl_tensor *t, int g,
                                       enum dahl_layer_access mode)
{
    if (t == NULL)
        return NULL;
    return mode == DAHL_ACCESS_GRAD ? grad_handle(net, t, g) : dahl_network_summed_grad(net, t);
}

/* Submits layer i's tasks (the layer table's, dahl_layer.h) of the pass over group g (n samples), those of
 * phase `phase` only (-1: all), for the step in pipeline slot `slot` (< 0: an evaluation); after its last
 * backward tasks, the gradients it wrote into buffers of its own are added to their sources' (fan-out). */
static int layer_tasks(struct dahl_network *net, int i, int g, int n, enum dahl_pass pass, int slot, int phase)
{
    struct layer *l = &net->layers[i];
    bool params = l->s.nw > 0, two = dahl_network_desc_ninputs(&net->desc, i) > 1;
    struct dahl_tensor *dx = input_grad(net, i, 0), *dx2 = two ? input_grad(net, i, 1) : NULL;
    starpu_data_handle_t h[DAHL_T_COUNT] = {
        [DAHL_T_X] = group(input_act(net, i, 0), g),
        [DAHL_T_X2] = two ? group(input_act(net, i, 1), g) : NULL,
        [DAHL_T_DX2] = dx2 != NULL ? group(dx2, g) : NULL,
        [DAHL_T_Y] = group(net->act[i + 1], g),
        [DAHL_T_DX] = dx != NULL ? group(dx, g) : NULL,
        [DAHL_T_DY] = group(net->grad[i + 1], g),
        [DAHL_T_W] = params ? weights(l, slot) : NULL,
        [DAHL_T_B] = params ? bias(l, slot) : NULL,
        [DAHL_T_WORKSPACE] = l->workspace,
        [DAHL_T_RUNNING] = l->running != NULL ? dahl_tensor_handle(l->running) : NULL,
    };
    enum starpu_data_access_mode mode = net->conf.reduction == DAHL_REDUCTION_MANUAL ? STARPU_RW : STARPU_REDUX;
    dahl_codelets_set_context(&(struct dahl_task_context){.seed = net->conf.seed, .step = slot >= 0 ? net->step : -1,
                                                          .layer = i, .first_sample = (long)g * net->grain});
    struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
    int nt = dahl_layer_tasks(&l->s, pass, n, dx != NULL, tasks), last = 0;
    for (int t = 0; t < nt; t++) {
        last = tasks[t].phase > last ? tasks[t].phase : last;
        if (phase >= 0 && tasks[t].phase != phase)
            continue;
        /* a step's sums: written per group, read summed */
        for (int a = 0; a < tasks[t].naccesses; a++) {
            enum dahl_layer_tensor x = tasks[t].access[a].tensor;
            enum dahl_layer_access m = tasks[t].access[a].mode;
            if (x == DAHL_T_STATS)
                h[x] = sum_handle(net, l->stats, g, m);
            else if ((x == DAHL_T_DW || x == DAHL_T_DB) && params && slot >= 0)
                h[x] = sum_handle(net, x == DAHL_T_DW ? l->dw[slot] : l->db[slot], g, m);
        }
        SUBMIT(net, tasks[t].symbol, dahl_insert_layer_task(&tasks[t], &l->s, n, h, mode));
    }
    for (int k = 0; k < DAHL_LAYER_MAX_INPUTS && pass == DAHL_PASS_BACKWARD && (phase < 0 || phase == last); k++)
        if (l->edx[k] != NULL)
            SUBMIT(net, "dahl_accumulate",
                   dahl_insert_accumulate(group(net->grad[dahl_network_desc_input(&net->desc, i, k) + 1], g),
                                          group(l->edx[k], g)));
    return 0;
}

/* The loss over group g (n samples): softmax and cross-entropy, the logits' gradient and the metrics. */
static int loss_task(struct dahl_network *net, int g, int n, const uint8_t *labels)
{
    int L = net->desc.nlayers;
    SUBMIT(net, "dahl_softmax_xent",
           dahl_insert_softmax_xent_n(net->desc.nclasses, n, labels, group(net->act[L], g), group(net->grad[L], g),
                                      group(net->metrics, g)));
    return 0;
}

static int forward_group(struct dahl_network *net, int g, const uint8_t *labels, int slot)
{
    int n = group_size(net, g);
    int64_t pass = net->passes;
    if (net->first > 0) /* a later stage: this group's activations come from the stage before */
        DAHL_CHECK_STARPU(pipe_recv(net, group(net->act[net->first], g), net->conf.stage_prev,
                                    pipe_tag(net, pass, g, 0)));
    for (int i = net->first; i < net->end; i++)
        DAHL_CHECK_STARPU(layer_tasks(net, i, g, n, slot >= 0 ? DAHL_PASS_FORWARD : DAHL_PASS_EVAL, slot, -1));
    int L = net->desc.nlayers;
    if (net->end < L) /* an earlier stage: on to the next one */
        return pipe_send(net, group(net->act[net->end], g), net->conf.stage_next, pipe_tag(net, pass, g, 0));
    return loss_task(net, g, n, labels);
}

static int backward_group(struct dahl_network *net, int g, int slot)
{
    int n = group_size(net, g);
    int64_t pass = net->passes;
    if (net->end < net->desc.nlayers) /* an earlier stage: the gradient of its output comes back */
        DAHL_CHECK_STARPU(pipe_recv(net, group(net->grad[net->end], g), net->conf.stage_next,
                                    pipe_tag(net, pass, g, 1)));
    for (int i = net->end - 1; i >= net->first; i--)
        DAHL_CHECK_STARPU(layer_tasks(net, i, g, n, DAHL_PASS_BACKWARD, slot, -1));
    if (net->first > 0) /* a later stage: the gradient of its input goes back to the stage before */
        return pipe_send(net, group(net->grad[net->first], g), net->conf.stage_prev, pipe_tag(net, pass, g, 1));
    return 0;
}

/* Manual reduction: sums the per-group gradients into group 0's buffer by a binary tree (depth
 * ceil(log2(groups))), and returns that handle. Each group's task summed its samples by the same tree, so a
 * power-of-two grain adds every sample's gradient in the grain-1 order. */
static int tree_sum(struct dahl_network *net, struct dahl_tensor *g, starpu_data_handle_t *sum)
{
    int groups = net->groups;
    for (int stride = 1; stride < groups; stride *= 2)
        for (int s = 0; s + stride < groups; s += 2 * stride)
            SUBMIT(net, "dahl_accumulate", dahl_insert_accumulate(group(g, s), group(g, s + stride)));
    *sum = group(g, 0);
    return 0;
}

/* index: the gradient's number within the step, the same on every node (names its allreduce messages).
 * summed: the manual reduction's tree already ran (the backward pass read the sum). With chunks (u->p.n > 1), one SGD task and one zeroing of the summed gradient per chunk, between the
 * partitioning of the parameter and gradient and their gathering; the partitioning of a REDUX gradient
 * waits for StarPU's reduction of it, so every chunk reads the summed gradient. */
static int update_params(struct dahl_network *net, struct dahl_tensor *p, struct dahl_tensor *g, struct dahl_tensor *v,
                         struct update_chunks *u, int slot, int index, bool summed)
{
    /* the mean of the per-sample gradients, over every node's samples */
    int global_batch = net->conf.global_batch > 0 ? net->conf.global_batch : net->conf.batch;
    float lr = net->conf.lr / (float)global_batch;
    starpu_data_handle_t grad;
    if (net->conf.reduction == DAHL_REDUCTION_MANUAL && !summed) {
        int ret = tree_sum(net, g, &grad);
        if (ret != 0)
            return ret;
    } else {
        grad = dahl_network_summed_grad(net, g); /* REDUX, or summed by the backward pass (dahl_layer_sums_grads_early) */
    }
    DAHL_CHECK_STARPU(dahl_allreduce_submit(net->conf.allreduce, index, grad));
    if (u->p.n > 1) {
        struct dahl_chunks *gc = &u->g[slot];
        dahl_chunks_partition_submit(gc);
        dahl_chunks_partition_submit(&u->p);
        for (int c = 0; c < u->p.n; c++)
            SUBMIT(net, "dahl_sgd_update",
                   dahl_insert_sgd_update(u->p.parts[c], gc->parts[c], v != NULL ? u->v.parts[c] : NULL, lr,
                                          net->conf.momentum));
        for (int c = 0; c < gc->n; c++)
            SUBMIT(net, "dahl_zero", dahl_insert_zero(gc->parts[c]));
        dahl_chunks_unpartition_submit(&u->p);
        dahl_chunks_unpartition_submit(gc);
        if (net->conf.reduction == DAHL_REDUCTION_MANUAL)
            for (int s = 1; s < net->groups; s++)
                SUBMIT(net, "dahl_zero", dahl_insert_zero(group(g, s)));
        return 0;
    }
    SUBMIT(net, "dahl_sgd_update",
           dahl_insert_sgd_update(dahl_tensor_handle(p), grad, v != NULL ? dahl_tensor_handle(v) : NULL, lr,
                                  net->conf.momentum));
    /* The next step's gradients start from zero. */
    if (net->conf.reduction == DAHL_REDUCTION_MANUAL) {
        for (int s = 0; s < net->groups; s++)
            SUBMIT(net, "dahl_zero", dahl_insert_zero(group(g, s)));
    } else {
        SUBMIT(net, "dahl_zero", dahl_insert_zero(grad));
    }
    return 0;
}

/* Between phases p and p + 1 of layer i's pass: the sums phase p's tasks accumulated, summed by the manual
 * reduction's tree (StarPU reduces a REDUX one when phase p + 1 first reads it). */
static int sum_phase(struct dahl_network *net, int i, enum dahl_pass pass, int p, int slot)
{
    if (net->conf.reduction != DAHL_REDUCTION_MANUAL)
        return 0;
    struct layer *l = &net->layers[i];
    struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
    int nt = dahl_layer_tasks(&l->s, pass, net->grain, true, tasks);
    bool done[DAHL_T_COUNT] = {false};
    for (int t = 0; t < nt; t++)
        for (int a = 0; a < tasks[t].naccesses && tasks[t].phase == p; a++) {
            enum dahl_layer_tensor x = tasks[t].access[a].tensor;
            if (tasks[t].access[a].mode != DAHL_ACCESS_GRAD || done[x])
                continue;
            done[x] = true;
            struct dahl_tensor *sum = x == DAHL_T_STATS ? l->stats : x == DAHL_T_DW ? l->dw[slot] : l->db[slot];
            starpu_data_handle_t unused;
            DAHL_CHECK_STARPU(tree_sum(net, sum, &unused));
        }
    return 0;
}

/* Layer i's pass over every group, phase by phase, with the sums in between (a layer-major step). */
static int layer_pass(struct dahl_network *net, int i, enum dahl_pass pass, int slot)
{
    int phases = dahl_layer_phases(&net->layers[i].s, pass);
    for (int p = 0; p < phases; p++) {
        for (int g = 0; g < net->groups; g++)
            DAHL_CHECK_STARPU(layer_tasks(net, i, g, group_size(net, g), pass, slot, p));
        if (p + 1 < phases)
            DAHL_CHECK_STARPU(sum_phase(net, i, pass, p, slot));
    }
    return 0;
}

/* A training step's passes layer by layer (net->layer_major): every group's input, each layer's forward pass
 * over every group, the loss of every group, then each layer's backward pass. */
static int layer_major_passes(struct dahl_network *net, const float *images, const uint8_t *labels,
                              bool track_metrics, int slot, bool one_f_one_b)
{
    for (int g = 0; g < net->groups; g++)
        DAHL_CHECK_STARPU(load_input(net, g, group_size(net, g), images));
    dahl_codelets_set_priority(0);
    for (int i = net->first; i < net->end; i++)
        DAHL_CHECK_STARPU(layer_pass(net, i, DAHL_PASS_FORWARD, slot));
    for (int g = 0; g < net->groups; g++) {
        DAHL_CHECK_STARPU(loss_task(net, g, group_size(net, g), labels + (size_t)g * (size_t)net->grain));
        if (track_metrics)
            DAHL_CHECK_STARPU(dahl_network_track(net, g, group_size(net, g)));
    }
    dahl_codelets_set_priority(one_f_one_b ? 1 : 0);
    for (int i = net->end - 1; i >= net->first; i--)
        DAHL_CHECK_STARPU(layer_pass(net, i, DAHL_PASS_BACKWARD, slot));
    return 0;
}

/* Layer i's tasks once per step (batch norm's running statistics), then its step's sums zeroed. */
static int step_tasks(struct dahl_network *net, int i, int slot)
{
    struct layer *l = &net->layers[i];
    DAHL_CHECK_STARPU(layer_tasks(net, i, 0, net->conf.batch, DAHL_PASS_STEP, slot, -1));
    if (l->stats == NULL)
        return 0;
    if (net->conf.reduction == DAHL_REDUCTION_MANUAL) {
        for (int g = 0; g < net->groups; g++)
            SUBMIT(net, "dahl_zero", dahl_insert_zero(group(l->stats, g)));
    } else {
        SUBMIT(net, "dahl_zero", dahl_insert_zero(dahl_tensor_handle(l->stats)));
    }
    return 0;
}

/* Pipelining (depth > 1): after step t's update of p, the stash of t's slot, which step t + depth reads,
 * becomes the latest p (PipeDream's weight stashing: t + depth's passes see the updates up to t's). */
static int restash(struct dahl_network *net, struct dahl_tensor *p, struct dahl_tensor *stash_of_slot)
{
    SUBMIT(net, "dahl_zero", dahl_insert_zero(dahl_tensor_handle(stash_of_slot)));
    SUBMIT(net, "dahl_accumulate",
           dahl_insert_accumulate(dahl_tensor_handle(stash_of_slot), dahl_tensor_handle(p)));
    return 0;
}

int dahl_network_train_step(struct dahl_network *net, const float *images, const uint8_t *labels, bool track_metrics)
{
    int batch = net->conf.batch;
    pthread_mutex_lock(&net->lock);
    long step = (long)net->steps_submitted; /* mark_step_end counts it at the end of this function */
    pthread_mutex_unlock(&net->lock);
    net->step = step;
    dahl_profile_step_begin(step);
    for (int s = 0; s < batch; s++)
        if (labels[s] >= net->desc.nclasses)
            return -EINVAL;
    int slot = (int)(step % net->depth);
    /* 1f1b: the backward passes and updates of a step go before the forward passes of the next ones */
    bool one_f_one_b = net->depth > 1 && net->conf.pipeline_schedule == DAHL_PIPELINE_1F1B;
    for (int g = 0; g < net->groups && !net->layer_major; g++) {
        int n = group_size(net, g);
        DAHL_CHECK_STARPU(load_input(net, g, n, images));
        dahl_codelets_set_priority(0);
        DAHL_CHECK_STARPU(forward_group(net, g, labels + (size_t)g * (size_t)net->grain, slot));
        if (track_metrics && net->end == net->desc.nlayers) /* the metrics are the last stage's */
            DAHL_CHECK_STARPU(dahl_network_track(net, g, n));
        dahl_codelets_set_priority(one_f_one_b ? 1 : 0);
        DAHL_CHECK_STARPU(backward_group(net, g, slot));
    }
    if (net->layer_major)
        DAHL_CHECK_STARPU(layer_major_passes(net, images, labels, track_metrics, slot, one_f_one_b));
    net->passes++;
    DAHL_CHECK_STARPU(dahl_allreduce_step_begin(net->conf.allreduce));
    for (int i = net->first; i < net->end; i++) {
        struct layer *l = &net->layers[i];
        if (l->s.nw == 0)
            continue;
        DAHL_CHECK_STARPU(step_tasks(net, i, slot));
        bool summed = dahl_layer_sums_grads_early(&l->s);
        DAHL_CHECK_STARPU(update_params(net, l->w, l->dw[slot], l->vw, &l->wu, slot, 2 * i, summed));
        if (l->b != NULL)
            DAHL_CHECK_STARPU(update_params(net, l->b, l->db[slot], l->vb, &l->bu, slot, 2 * i + 1, summed));
        if (net->depth > 1) {
            DAHL_CHECK_STARPU(restash(net, l->w, l->sw[slot]));
            if (l->b != NULL)
                DAHL_CHECK_STARPU(restash(net, l->b, l->sb[slot]));
        }
    }
    dahl_codelets_set_priority(0);
    return dahl_network_mark_step_end(net);
}

int dahl_network_eval_step(struct dahl_network *net, const float *images, const uint8_t *labels, int n)
{
    if (n < 1 || n > net->conf.batch)
        return -EINVAL;
    dahl_profile_step_begin(-1); /* evaluation: not recorded */
    for (int s = 0; s < n; s++)
        if (labels[s] >= net->desc.nclasses)
            return -EINVAL;
    /* Whole groups, as their tensors are split; the places after the n samples get label 0 and no input
     * copy: they compute on the last step's values, and their metrics are not counted. */
    uint8_t *padded = malloc((size_t)net->grain);
    if (padded == NULL)
        return -ENOMEM;
    int ret = 0;
    for (int g = 0; g * net->grain < n && ret == 0; g++) {
        int first = g * net->grain, size = group_size(net, g), valid = n - first < size ? n - first : size;
        for (int i = 0; i < size; i++)
            padded[i] = i < valid ? labels[first + i] : 0;
        ret = load_input(net, g, valid, images);
        if (ret == 0)
            ret = forward_group(net, g, padded, -1);
        if (ret == 0 && net->end == net->desc.nlayers)
            ret = dahl_network_track(net, g, valid);
    }
    net->passes++;
    free(padded);
    return ret;
}

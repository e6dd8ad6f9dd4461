/* What StarPU tells a network back (see dahl_network_internal.h): each group's metrics, read through
 * starpu_data_acquire_cb so the submitting thread never blocks, and each step's end (a read acquire of every
 * parameter tensor after its update, counted down per step); the prefetch of the parameters to a GPU and
 * reading them back. */
#include "dahl_network_internal.h"

#include "dahl_array.h"
#include "dahl_engine.h"
#include "dahl_profile_starpu.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#define LOSS_SCALE 4294967296.0 /* 2^32 */

/* One reading of a group's metrics: its first n places hold samples (fewer than the group's size at the end
 * of a partial evaluation). Allocated per reading, freed by its callback. */
struct metric_read {
    struct metric_slot *slot;
    int n;
};

/* StarPU callback: the group's metrics are readable; add them to the totals and let the graph go on. */
static void metrics_ready(void *arg)
{
    struct metric_read *r = arg;
    struct metric_slot *slot = r->slot;
    /* acquired in main memory, but this callback may run in a CUDA worker's thread, whose "local" pointer is
     * the device copy's: name the node */
    const float *m = (const float *)starpu_data_handle_to_pointer(slot->handle, STARPU_MAIN_RAM);
    pthread_mutex_lock(&slot->net->lock);
    for (int i = 0; i < r->n; i++) {
        slot->net->loss_fixed += llround((double)m[2 * i] * LOSS_SCALE);
        slot->net->correct += m[2 * i + 1] > 0.5f;
        slot->net->samples++;
    }
    pthread_mutex_unlock(&slot->net->lock);
    starpu_data_release(slot->handle);
    free(r);
}

/* Counts the first n samples of group g's metrics once its softmax has run. */
int dahl_network_track(struct dahl_network *net, int g, int n)
{
    if (DAHL_SIMULATED) {
        pthread_mutex_lock(&net->lock);
        net->samples += n;
        pthread_mutex_unlock(&net->lock);
        return 0;
    }
    struct metric_read *r = malloc(sizeof(*r));
    if (r == NULL)
        return -ENOMEM;
    *r = (struct metric_read){.slot = &net->slots[g], .n = n};
    int ret = starpu_data_acquire_cb(net->slots[g].handle, STARPU_R, metrics_ready, r);
    if (ret != 0)
        free(r);
    return ret;
}

/* StarPU callback: this parameter tensor's update of the step has run. The last one of the step records
 * the time. The mark (which holds every reference) is freed by the callback that releases last, not by the
 * one that counted last: another callback may still be releasing its reference (freeing it earlier made
 * StarPU release a handle read from freed memory: "corrupted double-linked list" in one native run under
 * load). Its last access to the network is the count of pending references, after the release: once that
 * count is 0 (dahl_network_wait_marks), no callback touches the network any more. */
static void step_param_updated(void *arg)
{
    struct step_ref *ref = arg;
    struct step_mark *mark = ref->mark;
    struct dahl_network *net = mark->net;
    starpu_data_handle_t handle = ref->handle;
    double now = starpu_timing_now();
    pthread_mutex_lock(&net->lock);
    bool last = --mark->remaining == 0;
    size_t index = mark->index;
    if (last) {
        net->end_us[index] = now;
        net->steps_done++;
    }
    pthread_mutex_unlock(&net->lock);
    if (last)
        dahl_profile_step_end((long)index);
    starpu_data_release_on_node(handle, STARPU_ACQUIRE_NO_NODE);
    pthread_mutex_lock(&net->lock);
    bool unused = --mark->unreleased == 0;
    net->refs_pending--;
    pthread_mutex_unlock(&net->lock);
    if (unused)
        free(mark);
}

/* The parameter tensors, in a fixed order: w and b of every layer that has them (w alone without bias). */
static int param_handles(struct dahl_network *net, starpu_data_handle_t *out)
{
    int n = 0;
    for (int i = net->first; i < net->end; i++) {
        const struct layer *l = &net->layers[i];
        if (l->s.nw == 0 || l->w == NULL || (l->s.nb > 0 && l->b == NULL))
            continue; /* no parameters, or a network whose creation failed half way */
        out[n++] = dahl_tensor_handle(l->w);
        if (l->b != NULL)
            out[n++] = dahl_tensor_handle(l->b);
    }
    return n;
}

/* Asks to be told, without blocking, when the step just submitted has updated every parameter. */
int dahl_network_mark_step_end(struct dahl_network *net)
{
    starpu_data_handle_t handles[2 * DAHL_NETWORK_MAX_LAYERS];
    int n = param_handles(net, handles);
    if (n == 0)
        return 0;
    pthread_mutex_lock(&net->lock);
    double *grown = dahl_array_grow(net->end_us, &net->steps_capacity, net->steps_submitted + 1, sizeof(double));
    if (grown == NULL) {
        pthread_mutex_unlock(&net->lock);
        return -ENOMEM;
    }
    net->end_us = grown;
    size_t index = net->steps_submitted++;
    net->end_us[index] = 0.0;
    pthread_mutex_unlock(&net->lock);
    struct step_mark *mark = malloc(sizeof(*mark) + (size_t)n * sizeof(struct step_ref));
    if (mark == NULL)
        return -ENOMEM;
    *mark = (struct step_mark){.net = net, .index = index, .remaining = n, .unreleased = n, .n = n};
    for (int i = 0; i < n; i++)
        mark->refs[i] = (struct step_ref){.mark = mark, .handle = handles[i]};
    pthread_mutex_lock(&net->lock);
    net->refs_pending += (size_t)n;
    pthread_mutex_unlock(&net->lock);
    for (int i = 0; i < n; i++) {
        /* NO_NODE: the callback needs no copy of the data, so a parameter living on a GPU is not fetched. */
        int ret = starpu_data_acquire_on_node_cb(handles[i], STARPU_ACQUIRE_NO_NODE, STARPU_R, step_param_updated,
                                                 &mark->refs[i]);
        if (ret != 0) {
            /* the references from i on will have no callback; the step never completes its countdown and
             * its mark leaks with it (never freed: the earlier references' callbacks may still run) */
            pthread_mutex_lock(&net->lock);
            net->refs_pending -= (size_t)(n - i);
            mark->unreleased = -1;
            pthread_mutex_unlock(&net->lock);
            return ret;
        }
    }
    return 0;
}

/* Waits for the tasks, then for the step callbacks still pending (see step_param_updated). Not a write
 * acquire of the parameters: under StarPU-SimGrid its invalidation of a GPU copy can wait forever on an idle
 * GPU worker (seen at teardown with several jobs under a GPU memory limit). */
void dahl_network_wait_marks(struct dahl_network *net)
{
    dahl_wait_for_all("dahl_network: step marks");
    for (;;) {
        pthread_mutex_lock(&net->lock);
        size_t pending = net->refs_pending;
        pthread_mutex_unlock(&net->lock);
        if (pending == 0)
            break;
        dahl_engine_sleep_us(10.0);
    }
}

void dahl_network_wait(struct dahl_network *net)
{
    starpu_data_handle_t handles[2 * DAHL_NETWORK_MAX_LAYERS];
    int n = param_handles(net, handles);
    /* R: the step's update is the last writer of every parameter, and a read acquire waits for it alone */
    for (int i = 0; i < n; i++) {
        if (starpu_data_acquire_on_node(handles[i], STARPU_ACQUIRE_NO_NODE, STARPU_R) == 0)
            starpu_data_release_on_node(handles[i], STARPU_ACQUIRE_NO_NODE);
    }
}

/* The handles that hold parameter tensor t now: its chunks while it is partitioned (touching the whole, or
 * the chunks of a tensor that is not, would make StarPU partition or gather it behind the network's back),
 * else itself. */
static int leaves(const struct dahl_tensor *t, const struct dahl_chunks *plan, starpu_data_handle_t *out, int max)
{
    if (t == NULL || max < 1)
        return 0;
    if (plan->n == 0 || !plan->partitioned) {
        out[0] = dahl_tensor_handle(t);
        return 1;
    }
    int n = 0;
    for (int c = 0; c < plan->n && n < max; c++)
        out[n++] = plan->parts[c];
    return n;
}

int dahl_network_prefetch(struct dahl_network *net)
{
    int gpu_node = -1;
    for (unsigned node = 0; node < starpu_memory_nodes_get_count() && gpu_node < 0; node++)
        if (starpu_node_get_kind(node) == STARPU_CUDA_RAM)
            gpu_node = (int)node;
    if (gpu_node < 0)
        return 0;
    enum { MAX_CHUNKS = 1024 }; /* per tensor: 256 M floats at the default chunk size */
    static starpu_data_handle_t out[4 * MAX_CHUNKS]; /* the submitting thread's only */
    for (int i = 0; i < net->desc.nlayers; i++) {
        struct layer *l = &net->layers[i];
        int n = leaves(l->w, &l->wu.p, out, MAX_CHUNKS);
        n += leaves(l->b, &l->bu.p, out + n, MAX_CHUNKS);
        n += leaves(l->vw, &l->wu.v, out + n, MAX_CHUNKS);
        n += leaves(l->vb, &l->bu.v, out + n, MAX_CHUNKS);
        for (int k = 0; k < n; k++) {
            int ret = starpu_data_prefetch_on_node(out[k], (unsigned)gpu_node, 1);
            if (ret != 0)
                return ret;
        }
    }
    return 0;
}

size_t dahl_network_step_end_times(struct dahl_network *net, const double **times_us)
{
    dahl_network_wait_marks(net);
    pthread_mutex_lock(&net->lock);
    size_t n = net->steps_submitted;
    *times_us = net->end_us;
    pthread_mutex_unlock(&net->lock);
    return n;
}

size_t dahl_network_step_ends_since(struct dahl_network *net, size_t first, double *ends, size_t max)
{
    pthread_mutex_lock(&net->lock);
    size_t k = net->steps_done > first ? net->steps_done - first : 0;
    if (k > max)
        k = 0;
    for (size_t i = 0; i < k; i++) {
        ends[i] = net->end_us[first + i];
        if (!(ends[i] > 0))
            k = 0;
    }
    pthread_mutex_unlock(&net->lock);
    return k;
}

size_t dahl_network_steps_done(struct dahl_network *net)
{
    pthread_mutex_lock(&net->lock);
    size_t n = net->steps_done;
    pthread_mutex_unlock(&net->lock);
    return n;
}

/* Waits for the tasks, then for the metric callbacks still pending (a write acquire of each slot is granted
 * only after the callbacks' read acquires are released). */
static void wait_metrics(struct dahl_network *net)
{
    dahl_wait_for_all("dahl_network: metrics");
    if (DAHL_SIMULATED)
        return;
    for (int g = 0; g < net->groups; g++) {
        if (starpu_data_acquire(net->slots[g].handle, STARPU_RW) == 0)
            starpu_data_release(net->slots[g].handle);
    }
}

void dahl_network_metrics(struct dahl_network *net, double *loss_sum, long *correct, long *samples)
{
    wait_metrics(net);
    pthread_mutex_lock(&net->lock);
    *loss_sum = (double)net->loss_fixed / LOSS_SCALE;
    *correct = net->correct;
    *samples = net->samples;
    pthread_mutex_unlock(&net->lock);
}

void dahl_network_metrics_reset(struct dahl_network *net)
{
    wait_metrics(net);
    pthread_mutex_lock(&net->lock);
    net->loss_fixed = 0;
    net->correct = 0;
    net->samples = 0;
    pthread_mutex_unlock(&net->lock);
}

int dahl_network_read_params(struct dahl_network *net, int layer, float *dst, size_t count)
{
    if (DAHL_SIMULATED)
        return -ENODATA;
    if (layer < 0 || layer >= net->desc.nlayers)
        return -EINVAL;
    struct layer *l = &net->layers[layer];
    if (l->s.nw == 0 || count != l->s.nw + l->s.nb)
        return -EINVAL;
    DAHL_CHECK_STARPU(dahl_tensor_read(l->w, dst, l->s.nw));
    return l->b != NULL ? dahl_tensor_read(l->b, dst + l->s.nw, l->s.nb) : 0;
}

int dahl_network_write_params(struct dahl_network *net, int layer, const float *src, size_t count,
                              const float *running)
{
    if (DAHL_SIMULATED)
        return -ENODATA;
    if (layer < 0 || layer >= net->desc.nlayers)
        return -EINVAL;
    struct layer *l = &net->layers[layer];
    if (l->s.nw == 0 || count != l->s.nw + l->s.nb || (running != NULL && l->running == NULL))
        return -EINVAL;
    DAHL_CHECK_STARPU(dahl_tensor_write(l->w, src, l->s.nw));
    if (l->b != NULL)
        DAHL_CHECK_STARPU(dahl_tensor_write(l->b, src + l->s.nw, l->s.nb));
    for (int s = 0; s < DAHL_PIPELINE_MAX_DEPTH; s++) {
        if (l->sw[s] != NULL)
            DAHL_CHECK_STARPU(dahl_tensor_write(l->sw[s], src, l->s.nw));
        if (l->sb[s] != NULL)
            DAHL_CHECK_STARPU(dahl_tensor_write(l->sb[s], src + l->s.nw, l->s.nb));
    }
    return running != NULL ? dahl_tensor_write(l->running, running, 2 * (size_t)l->s.in_c) : 0;
}

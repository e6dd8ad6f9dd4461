/* Gradient allreduce between nodes with StarPU-MPI, and the few collective helpers training needs (barrier,
 * gather of metrics to rank 0). See dahl_mpi.h. Without StarPU-MPI every function is the one-node case.
 *
 * Algorithm: a binomial tree. Each gradient tensor is reduced to rank 0 in ceil(log2 P) levels (at level s a
 * rank whose bit s is set sends its partial sum to rank - s and is done; the others receive from rank + s
 * into a temporary buffer and add it with a dahl_accumulate task), then broadcast back down the same tree.
 * Why a tree and not a ring: the ring's reduce-scatter needs every gradient cut into P chunks, that is
 * StarPU partitioning of handles that the rest of the step uses whole (REDUX accumulation, SGD update), for
 * every node count; the tree sends whole handles with starpu_mpi_isend/irecv_detached and StarPU's own data
 * dependencies order everything, so a rank submits O(log P) requests per gradient and simulating 64 ranks
 * stays cheap. The price: each level moves the whole gradient, 2 log2(P) full transfers on the critical
 * path where a ring moves 2 (P-1)/P of it, so for large gradients (512x512 LeNet: 122 MB) the tree is the
 * pessimistic choice, and the results say "tree". Point-to-point requests rather than starpu_mpi_task_insert:
 * with task_insert every rank would submit every rank's tasks (O(P) per gradient) to let StarPU-MPI infer
 * the transfers that are spelled out here directly. */
#include "dahl_mpi.h"

#include "dahl_array.h"
#include "dahl_codelets_starpu.h"
#include "dahl_light.h"
#include "dahl_mpi_starpu.h"
#include "dahl_progress.h"
#include "dahl_tensor_starpu.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if DAHL_MPI
#include <starpu_mpi.h>
#endif

/* Tags: one per (step, gradient, phase, level), so that no two messages between the same two ranks in
 * flight at once share one. StarPU-MPI tags are 64-bit. */
#define TAG_LEVELS 64
#define TAG_GRADS 256
#define TREE_LEVELS 16 /* levels of a binomial tree: up to 65536 ranks */
#define TAG_GATHER INT64_C(0x7fff000000000000)

#if DAHL_MPI
/* Every detached request goes through here: counted, and where its pending time matters (natively, and
 * simulated ranks whose progression thread takes turns) timed through its completion callback
 * (dahl_progress.h). Elsewhere no callback: a callback reorders StarPU-MPI's completions within a simulated
 * instant (measured: a dmda node-groups run moved by 0.16 %). */
static int detached(bool send, starpu_data_handle_t h, int peer, starpu_mpi_tag_t tag)
{
    bool timed = dahl_progress_request_begin();
    void (*done)(void *) = timed ? dahl_progress_request_done : NULL;
    int ret = send ? starpu_mpi_isend_detached(h, peer, tag, MPI_COMM_WORLD, done, NULL)
                   : starpu_mpi_irecv_detached(h, peer, tag, MPI_COMM_WORLD, done, NULL);
    if (ret != 0 && timed)
        done(NULL);
    return ret;
}

static int isend(starpu_data_handle_t h, int peer, starpu_mpi_tag_t tag)
{
    return detached(true, h, peer, tag);
}

static int irecv(starpu_data_handle_t h, int peer, starpu_mpi_tag_t tag)
{
    return detached(false, h, peer, tag);
}
#endif

struct dahl_allreduce {
    enum dahl_allreduce_algo algo;
    int base, size; /* the ranks that reduce together: base .. base + size - 1 (size 0: all of them) */
    /* Receive buffers, one per gradient index and tree level, made at first use. One per level, not one per
     * gradient: a receive into a buffer still being read (by the previous level's accumulate) is posted only
     * once that read is done, and a message arriving before its receive is posted costs StarPU-MPI a real
     * allocation of its size (122 MB for a 512x512 LeNet's dense gradient), in simulation too. */
    struct dahl_tensor *tmp[TAG_GRADS][TREE_LEVELS];
    starpu_data_handle_t grads[TAG_GRADS]; /* the gradients seen, to wait for their timing callbacks */
    pthread_mutex_t lock;               /* guards everything below (StarPU callbacks write it) */
    double *start_us, *end_us;
    size_t steps, start_cap, end_cap;
    struct dahl_allreduce_stats stats;
};

struct time_mark {
    struct dahl_allreduce *ar;
    size_t step;
    int index; /* the gradient's */
    bool end;
    starpu_data_handle_t handle;
};

bool dahl_mpi_built(void)
{
    return DAHL_MPI;
}

int dahl_mpi_rank(void)
{
#if DAHL_MPI
    /* In the MPI builds the engine starts StarPU and StarPU-MPI together (dahl_engine_start). */
    return starpu_is_initialized() ? starpu_mpi_world_rank() : 0;
#else
    return 0;
#endif
}

int dahl_mpi_size(void)
{
#if DAHL_MPI
    return starpu_is_initialized() ? starpu_mpi_world_size() : 1;
#else
    return 1;
#endif
}

int dahl_mpi_barrier(void)
{
#if DAHL_MPI
    if (dahl_mpi_size() > 1) {
        dahl_light_post_barrier();
        int ret = starpu_mpi_barrier(MPI_COMM_WORLD) == 0 ? 0 : -EIO;
        dahl_light_post_barrier_left();
        return ret;
    }
#endif
    return 0;
}

int dahl_mpi_gather(const double *mine, size_t n, double *all)
{
    size_t size = (size_t)dahl_mpi_size();
    size_t *sizes = malloc(size * sizeof(*sizes));
    if (sizes == NULL)
        return -ENOMEM;
    for (size_t r = 0; r < size; r++)
        sizes[r] = n * sizeof(double);
    int ret = dahl_mpi_gather_bytes(mine, n * sizeof(double), all, sizes);
    free(sizes);
    return ret;
}

int dahl_mpi_gather_bytes(const void *mine, size_t nbytes, void *all, const size_t *sizes)
{
    int rank = dahl_mpi_rank(), size = dahl_mpi_size();
    if (rank == 0 && nbytes > 0)
        memcpy(all, mine, nbytes);
    if (size == 1)
        return 0;
#if DAHL_MPI
    /* Handles on the caller's memory: these are real bytes, in the SimGrid build too. Nothing travels for an
     * empty part (both ends know it is empty: the sender its own size, rank 0 from sizes). */
    if (rank != 0) {
        if (nbytes == 0)
            return 0;
        starpu_data_handle_t h;
        starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)mine, (uint32_t)nbytes, 1);
        int ret = starpu_mpi_send(h, 0, TAG_GATHER, MPI_COMM_WORLD);
        starpu_data_unregister(h);
        return ret == 0 ? 0 : -EIO;
    }
    size_t *offset = malloc((size_t)size * sizeof(*offset));
    if (offset == NULL)
        return -ENOMEM;
    offset[0] = 0;
    for (int r = 1; r < size; r++)
        offset[r] = offset[r - 1] + sizes[r - 1];
    /* A light rank (dahl_light.h) sends nothing: its part is its representative's, received first. */
    int ret = 0;
    for (int r = 1; r < size && ret == 0; r++) {
        if (sizes[r] == 0 || dahl_light_rep_of(r) != r)
            continue;
        starpu_data_handle_t h;
        starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)((char *)all + offset[r]), (uint32_t)sizes[r], 1);
        MPI_Status status;
        ret = starpu_mpi_recv(h, r, TAG_GATHER, MPI_COMM_WORLD, &status) == 0 ? 0 : -EIO;
        starpu_data_unregister(h);
    }
    for (int r = 1; r < size && ret == 0; r++) {
        int rep = dahl_light_rep_of(r);
        if (rep != r && sizes[r] == sizes[rep])
            memcpy((char *)all + offset[r], (char *)all + offset[rep], sizes[r]);
    }
    free(offset);
    return ret;
#else
    (void)sizes;
    return -ENOSYS;
#endif
}

#define TAG_PIPE (INT64_C(1) << 60)

int dahl_mpi_isend(starpu_data_handle_t h, int peer, int64_t tag)
{
#if DAHL_MPI
    return isend(h, peer, TAG_PIPE | tag) == 0 ? 0 : -EIO;
#else
    (void)h, (void)peer, (void)tag;
    return -ENOSYS;
#endif
}

int dahl_mpi_irecv(starpu_data_handle_t h, int peer, int64_t tag)
{
#if DAHL_MPI
    return irecv(h, peer, TAG_PIPE | tag) == 0 ? 0 : -EIO;
#else
    (void)h, (void)peer, (void)tag;
    return -ENOSYS;
#endif
}

const char *dahl_allreduce_algo_name(enum dahl_allreduce_algo a)
{
    return a == DAHL_ALLREDUCE_TREE ? "tree" : "?";
}

int dahl_allreduce_algo_parse(const char *text, enum dahl_allreduce_algo *out)
{
    if (strcmp(text, "tree") == 0) {
        *out = DAHL_ALLREDUCE_TREE;
        return 0;
    }
    return -EINVAL;
}

struct dahl_allreduce *dahl_allreduce_create(enum dahl_allreduce_algo algo)
{
    return dahl_allreduce_create_among(algo, 0, 0);
}

struct dahl_allreduce *dahl_allreduce_create_among(enum dahl_allreduce_algo algo, int base, int size)
{
    struct dahl_allreduce *ar = calloc(1, sizeof(*ar));
    if (ar == NULL)
        return NULL;
    ar->algo = algo;
    ar->base = base;
    ar->size = size;
    pthread_mutex_init(&ar->lock, NULL);
    return ar;
}

/* Waits for the transfers, then for the timing callbacks still pending: a write acquire of a gradient is
 * granted only once the callbacks' read acquires before it are released. */
static void wait_marks(struct dahl_allreduce *ar)
{
#if DAHL_MPI
    if (dahl_mpi_size() > 1) {
        dahl_light_post_barrier(); /* StarPU-MPI's wait for all is a barrier too */
        starpu_mpi_wait_for_all(MPI_COMM_WORLD);
        dahl_light_post_barrier_left();
    }
#endif
    dahl_wait_for_all("dahl_allreduce");
    for (size_t i = 0; i < TAG_GRADS; i++) {
        if (ar->grads[i] != NULL && starpu_data_acquire_on_node(ar->grads[i], STARPU_ACQUIRE_NO_NODE, STARPU_RW) == 0)
            starpu_data_release_on_node(ar->grads[i], STARPU_ACQUIRE_NO_NODE);
    }
}

void dahl_allreduce_destroy(struct dahl_allreduce *ar)
{
    if (ar == NULL)
        return;
    wait_marks(ar);
    for (size_t i = 0; i < TAG_GRADS; i++)
        for (size_t l = 0; l < TREE_LEVELS; l++)
            dahl_tensor_destroy(ar->tmp[i][l]);
    pthread_mutex_destroy(&ar->lock);
    free(ar->start_us);
    free(ar->end_us);
    free(ar);
}

/* How many ranks reduce together, and this one's place among them. */
static int members(const struct dahl_allreduce *ar, int *me)
{
    *me = dahl_mpi_rank() - ar->base;
    return ar->size > 0 ? ar->size : dahl_mpi_size();
}

int dahl_allreduce_step_begin(struct dahl_allreduce *ar)
{
    int me;
    if (ar == NULL || members(ar, &me) == 1)
        return 0;
    pthread_mutex_lock(&ar->lock);
    double *s = dahl_array_grow(ar->start_us, &ar->start_cap, ar->steps + 1, sizeof(double));
    if (s != NULL)
        ar->start_us = s;
    double *e = s != NULL ? dahl_array_grow(ar->end_us, &ar->end_cap, ar->steps + 1, sizeof(double)) : NULL;
    if (e == NULL) {
        pthread_mutex_unlock(&ar->lock);
        return -ENOMEM;
    }
    ar->end_us = e;
    ar->start_us[ar->steps] = INFINITY;
    ar->end_us[ar->steps] = 0.0;
    ar->steps++;
    pthread_mutex_unlock(&ar->lock);
    dahl_light_post_step(ar->steps - 1);
    return 0;
}

#if DAHL_MPI
/* StarPU callback: the gradient is readable, i.e. ready for the allreduce (start) or reduced (end). */
static void mark_time(void *arg)
{
    struct time_mark *m = arg;
    struct dahl_allreduce *ar = m->ar;
    double now = starpu_timing_now();
    pthread_mutex_lock(&ar->lock);
    if (m->end) {
        if (now > ar->end_us[m->step])
            ar->end_us[m->step] = now;
        dahl_light_post_done(m->step, m->index); /* representative ranks: the sum is here */
    } else if (now < ar->start_us[m->step]) {
        ar->start_us[m->step] = now;
    }
    pthread_mutex_unlock(&ar->lock);
    if (!m->end) { /* representative ranks: the gradient is ready, for the light ranks to follow */
        int worker = starpu_worker_get_id();
        int core = worker >= 0 && starpu_worker_get_type(worker) == STARPU_CPU_WORKER ? worker : -1;
        dahl_light_post_ready(m->step, m->index, core);
    }
    starpu_data_release_on_node(m->handle, STARPU_ACQUIRE_NO_NODE);
    free(m);
}

static int mark(struct dahl_allreduce *ar, starpu_data_handle_t h, int index, bool end)
{
    struct time_mark *m = malloc(sizeof(*m));
    if (m == NULL)
        return -ENOMEM;
    pthread_mutex_lock(&ar->lock);
    *m = (struct time_mark){.ar = ar, .step = ar->steps - 1, .index = index, .end = end, .handle = h};
    pthread_mutex_unlock(&ar->lock);
    /* NO_NODE: only the ordering matters, no copy of the data is fetched for the callback. */
    int ret = starpu_data_acquire_on_node_cb(h, STARPU_ACQUIRE_NO_NODE, STARPU_R, mark_time, m);
    if (ret != 0)
        free(m);
    return ret;
}

static starpu_mpi_tag_t tag_of(size_t step, int index, int phase, int level)
{
    return dahl_allreduce_tag(step, index, phase, level);
}

#endif

int64_t dahl_allreduce_tag(size_t step, int index, int phase, int level)
{
    return (((int64_t)step * TAG_GRADS + index) * 2 + phase) * TAG_LEVELS + level;
}

int dahl_allreduce_submit(struct dahl_allreduce *ar, int index, starpu_data_handle_t grad)
{
    int rank = 0;
    int size = ar != NULL ? members(ar, &rank) : 1;
    if (ar == NULL || size == 1)
        return 0;
#if DAHL_MPI
    if (index < 0 || index >= TAG_GRADS)
        return -EINVAL;
    const int base = ar->base; /* tree positions are ranks relative to it */
    size_t n = starpu_vector_get_nx(grad);
    double bytes = (double)(n * sizeof(float));
    ar->grads[index] = grad;
    size_t step = ar->steps - 1;
    if (dahl_light_mode()) /* what a light rank's accumulate of this gradient takes (its footprint: grad twice) */
        dahl_light_post_grad(step, index, n, dahl_accumulate_expected_s(grad, grad));
    /* Its callback also tells the light ranks when the gradient is ready: a data access of its own would
     * move StarPU's order, and the representatives would no longer be ranks of the full simulation. */
    DAHL_CHECK_STARPU(mark(ar, grad, index, false));
    long sent = 0, received = 0, tasks = 0;
    /* Reduce to rank 0. */
    int level = 0, s;
    for (s = 1; s < size; s <<= 1, level++) {
        if (rank & s) {
            DAHL_CHECK_STARPU(isend(grad, base + rank - s, tag_of(step, index, 0, level)));
            sent++;
            break;
        }
        if (rank + s < size) {
            if (ar->tmp[index][level] == NULL) {
                ar->tmp[index][level] = dahl_tensor_create(1, (const int[]){(int)n});
                if (ar->tmp[index][level] == NULL)
                    return -ENOMEM;
                dahl_light_post_tmp(index, level, dahl_tensor_handle(ar->tmp[index][level]));
            }
            starpu_data_handle_t tmp = dahl_tensor_handle(ar->tmp[index][level]);
            DAHL_CHECK_STARPU(irecv(tmp, base + rank + s, tag_of(step, index, 0, level)));
            received++;
            DAHL_CHECK_STARPU(dahl_insert_accumulate(grad, tmp));
            tasks++;
        }
    }
    /* Broadcast from rank 0 down the same tree: a rank receives from its parent (lowest set bit), then
     * sends to its children at the levels below. */
    int top = 1;
    while (top < size)
        top <<= 1;
    for (int t = top >> 1; t >= 1; t >>= 1) {
        level = __builtin_ctz((unsigned)t);
        if ((rank & (2 * t - 1)) == t) {
            DAHL_CHECK_STARPU(irecv(grad, base + rank - t, tag_of(step, index, 1, level)));
            received++;
        } else if ((rank & (2 * t - 1)) == 0 && rank + t < size) {
            DAHL_CHECK_STARPU(isend(grad, base + rank + t, tag_of(step, index, 1, level)));
            sent++;
        }
    }
    DAHL_CHECK_STARPU(mark(ar, grad, index, true));
    pthread_mutex_lock(&ar->lock);
    ar->stats.bytes_sent += (double)sent * bytes;
    ar->stats.bytes_received += (double)received * bytes;
    ar->stats.messages_sent += sent;
    ar->stats.messages_received += received;
    ar->stats.tasks += tasks;
    pthread_mutex_unlock(&ar->lock);
    return 0;
#else
    (void)index;
    (void)grad;
    return -ENOSYS;
#endif
}

size_t dahl_allreduce_step_times(struct dahl_allreduce *ar, const double **start_us, const double **end_us)
{
    wait_marks(ar);
    pthread_mutex_lock(&ar->lock);
    size_t n = ar->steps;
    *start_us = ar->start_us;
    *end_us = ar->end_us;
    pthread_mutex_unlock(&ar->lock);
    return n;
}

void dahl_allreduce_stats(struct dahl_allreduce *ar, struct dahl_allreduce_stats *out)
{
    wait_marks(ar);
    pthread_mutex_lock(&ar->lock);
    *out = ar->stats;
    out->comm_s = 0;
    for (size_t i = 0; i < ar->steps; i++)
        if (ar->end_us[i] > ar->start_us[i])
            out->comm_s += (ar->end_us[i] - ar->start_us[i]) / 1e6;
    pthread_mutex_unlock(&ar->lock);
}

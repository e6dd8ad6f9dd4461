/* dahl tensors on StarPU: see dahl_tensor.h. A tensor is one StarPU vector of floats; the batch split is
 * StarPU's vector block filter with one part per sample, so sample i covers elements
 * [i * sample_count, (i + 1) * sample_count). */
#include "dahl_tensor_starpu.h"

#include "dahl_profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct dahl_tensor {
    int ndim;
    int dims[DAHL_TENSOR_MAX_DIMS];
    size_t count;
    float *data; /* allocated with DAHL_MALLOC_FLAGS: folded (no real memory) in the SimGrid build */
    starpu_data_handle_t handle;
    bool split;
    int parts;          /* children while split: one per group of `grain` samples */
    int grain;
    uint32_t *lengths;  /* the children's element counts, when the last group is smaller */
};

struct dahl_tensor *dahl_tensor_create(int ndim, const int dims[])
{
    if (ndim < 1 || ndim > DAHL_TENSOR_MAX_DIMS)
        return NULL;
    struct dahl_tensor *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->ndim = ndim;
    t->count = 1;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 1) {
            free(t);
            return NULL;
        }
        t->dims[i] = dims[i];
        t->count *= (size_t)dims[i];
    }
    void *data = NULL;
    if (starpu_malloc_flags(&data, t->count * sizeof(float), DAHL_MALLOC_FLAGS) != 0 || data == NULL) {
        free(t);
        return NULL;
    }
    t->data = data;
    if (!DAHL_SIMULATED)
        memset(t->data, 0, t->count * sizeof(float));
    starpu_vector_data_register(&t->handle, STARPU_MAIN_RAM, (uintptr_t)t->data, (uint32_t)t->count,
                                sizeof(float));
    /* StarPU's memory manager does not count buffers the application registered: results report them. */
    dahl_profile_app_bytes_add((int64_t)(t->count * sizeof(float)));
    return t;
}

void dahl_tensor_destroy(struct dahl_tensor *t)
{
    if (t == NULL)
        return;
    dahl_tensor_unsplit(t);
    free(t->lengths);
    starpu_data_unregister(t->handle);
    starpu_free_flags(t->data, t->count * sizeof(float), DAHL_MALLOC_FLAGS);
    dahl_profile_app_bytes_add(-(int64_t)(t->count * sizeof(float)));
    free(t);
}

int dahl_tensor_ndim(const struct dahl_tensor *t)
{
    return t->ndim;
}

int dahl_tensor_dim(const struct dahl_tensor *t, int axis)
{
    return axis >= 0 && axis < t->ndim ? t->dims[axis] : 1;
}

size_t dahl_tensor_count(const struct dahl_tensor *t)
{
    return t->count;
}

size_t dahl_tensor_sample_count(const struct dahl_tensor *t)
{
    return t->count / (size_t)t->dims[0];
}

int dahl_tensor_split_batch(struct dahl_tensor *t)
{
    return dahl_tensor_split_groups(t, 1);
}

int dahl_tensor_split_groups(struct dahl_tensor *t, int grain)
{
    if (t->split)
        return -EALREADY;
    if (grain < 1 || grain > t->dims[0])
        return -EINVAL;
    int parts = (t->dims[0] + grain - 1) / grain;
    struct starpu_data_filter filter = {
        .filter_func = starpu_vector_filter_block,
        .nchildren = (unsigned)parts,
    };
    if (t->dims[0] % grain != 0) {
        /* the block filter would spread the remainder over every part: list the lengths instead */
        free(t->lengths);
        t->lengths = malloc((size_t)parts * sizeof(*t->lengths));
        if (t->lengths == NULL)
            return -ENOMEM;
        size_t per = dahl_tensor_sample_count(t);
        for (int g = 0; g < parts; g++)
            t->lengths[g] = (uint32_t)(per * (size_t)dahl_tensor_group_size(t->dims[0], grain, g));
        filter.filter_func = starpu_vector_filter_list;
        filter.filter_arg_ptr = t->lengths;
    }
    starpu_data_partition(t->handle, &filter);
    t->split = true;
    t->parts = parts;
    t->grain = grain;
    return 0;
}

int dahl_tensor_group_size(int samples, int grain, int g)
{
    int left = samples - g * grain;
    return left < grain ? left : grain;
}

void dahl_tensor_unsplit(struct dahl_tensor *t)
{
    if (!t->split)
        return;
    starpu_data_unpartition(t->handle, STARPU_MAIN_RAM);
    t->split = false;
}

bool dahl_tensor_is_split(const struct dahl_tensor *t)
{
    return t->split;
}

starpu_data_handle_t dahl_tensor_handle(const struct dahl_tensor *t)
{
    return t->split ? NULL : t->handle;
}

starpu_data_handle_t dahl_tensor_sample(const struct dahl_tensor *t, int i)
{
    if (!t->split || t->grain != 1 || i < 0 || i >= t->dims[0])
        return NULL;
    return starpu_data_get_sub_data(t->handle, 1, (unsigned)i);
}

int dahl_tensor_groups(const struct dahl_tensor *t)
{
    return t->split ? t->parts : 0;
}

starpu_data_handle_t dahl_tensor_group(const struct dahl_tensor *t, int i)
{
    if (!t->split || i < 0 || i >= t->parts)
        return NULL;
    return starpu_data_get_sub_data(t->handle, 1, (unsigned)i);
}

/* Copies between the tensor's home copy and the application, under StarPU's acquire protocol. */
static int tensor_copy(struct dahl_tensor *t, float *app, size_t count, bool to_app)
{
    if (DAHL_SIMULATED)
        return -ENODATA;
    if (t->split || count != t->count)
        return -EINVAL;
    DAHL_CHECK_STARPU(starpu_data_acquire(t->handle, to_app ? STARPU_R : STARPU_W));
    if (to_app)
        memcpy(app, t->data, count * sizeof(float));
    else
        memcpy(t->data, app, count * sizeof(float));
    starpu_data_release(t->handle);
    return 0;
}

int dahl_tensor_read(struct dahl_tensor *t, float *dst, size_t count)
{
    return tensor_copy(t, dst, count, true);
}

int dahl_tensor_write(struct dahl_tensor *t, const float *src, size_t count)
{
    return tensor_copy(t, (float *)src, count, false);
}

/* ---- chunks (asynchronous partitioning) ------------------------------------------------------------------ */

int dahl_chunks_plan(struct dahl_chunks *c, starpu_data_handle_t whole, int n)
{
    *c = (struct dahl_chunks){0};
    if (whole == NULL || n < 2 || (size_t)n > starpu_vector_get_nx(whole))
        return -EINVAL;
    c->parts = calloc((size_t)n, sizeof(*c->parts));
    if (c->parts == NULL)
        return -ENOMEM;
    struct starpu_data_filter filter = {
        .filter_func = starpu_vector_filter_block,
        .nchildren = (unsigned)n,
    };
    starpu_data_partition_plan(whole, &filter, c->parts);
    c->whole = whole;
    c->n = n;
    return 0;
}

void dahl_chunks_partition_submit(struct dahl_chunks *c)
{
    if (c->n == 0 || c->partitioned)
        return;
    starpu_data_partition_submit(c->whole, (unsigned)c->n, c->parts);
    c->partitioned = true;
}

void dahl_chunks_unpartition_submit(struct dahl_chunks *c)
{
    if (c->n == 0 || !c->partitioned)
        return;
    starpu_data_unpartition_submit(c->whole, (unsigned)c->n, c->parts, STARPU_MAIN_RAM);
    c->partitioned = false;
}

void dahl_chunks_fini(struct dahl_chunks *c)
{
    if (c->n == 0)
        return;
    dahl_chunks_unpartition_submit(c);
    starpu_data_partition_clean(c->whole, (unsigned)c->n, c->parts);
    free(c->parts);
    *c = (struct dahl_chunks){0};
}

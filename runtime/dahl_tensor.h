/* dahl tensors: float32, row-major, up to 4-D, registered as StarPU data (a vector of all elements).
 * Ownership: dahl_tensor_create() allocates the elements and registers them; the tensor owns both until
 * dahl_tensor_destroy(), which first waits for the tasks using it, brings the data home and unregisters.
 * A tensor can be split along its first (batch) axis so each sample's slice is its own StarPU handle; while
 * split, use only the sample handles. In the SimGrid build the elements are never really allocated
 * (StarPU's folded simulation memory): shapes are real, contents are not, so a simulated 64x3x512x512 batch
 * costs almost no memory. This header is StarPU-free; runtime code gets handles from dahl_tensor_starpu.h. */
#ifndef DAHL_TENSOR_H
#define DAHL_TENSOR_H

#include <stdbool.h>
#include <stddef.h>

#define DAHL_TENSOR_MAX_DIMS 4

struct dahl_tensor;

/* Creates a tensor of shape dims[0] x ... x dims[ndim-1] (1 <= ndim <= 4, every dim >= 1), zero-filled in
 * the native build. Returns NULL on a bad shape or when memory or StarPU registration fails. StarPU must be
 * running. */
struct dahl_tensor *dahl_tensor_create(int ndim, const int dims[]);

/* Waits for the tasks using t, undoes a batch split, unregisters and frees. NULL is a no-op. */
void dahl_tensor_destroy(struct dahl_tensor *t);

int dahl_tensor_ndim(const struct dahl_tensor *t);
int dahl_tensor_dim(const struct dahl_tensor *t, int axis);
/* Number of elements, and of elements in one sample (the product of every dim but the first). */
size_t dahl_tensor_count(const struct dahl_tensor *t);
size_t dahl_tensor_sample_count(const struct dahl_tensor *t);

/* Splits t along its first axis into dims[0] sample handles. Returns 0, or -EALREADY when already split. */
int dahl_tensor_split_batch(struct dahl_tensor *t);
/* Splits along the batch axis into groups of `grain` consecutive samples (the last one smaller when grain
 * does not divide dims[0]), each group its own StarPU handle; grain 1 is dahl_tensor_split_batch. Returns 0,
 * -EALREADY if already split, -EINVAL for grain outside [1, dims[0]], -ENOMEM. */
int dahl_tensor_split_groups(struct dahl_tensor *t, int grain);
/* Samples in group g of `samples` split by grain. */
int dahl_tensor_group_size(int samples, int grain, int g);
/* Groups of a split tensor (0 when not split). */
int dahl_tensor_groups(const struct dahl_tensor *t);
/* Gathers the samples back into the whole-tensor handle (waits for their tasks). No-op when not split. */
void dahl_tensor_unsplit(struct dahl_tensor *t);
bool dahl_tensor_is_split(const struct dahl_tensor *t);

/* Read-back and fill from the application (waits for pending tasks; the tensor must not be split).
 * In the SimGrid build there is no content: both return -ENODATA. */
int dahl_tensor_read(struct dahl_tensor *t, float *dst, size_t count);
int dahl_tensor_write(struct dahl_tensor *t, const float *src, size_t count);

#endif /* DAHL_TENSOR_H */

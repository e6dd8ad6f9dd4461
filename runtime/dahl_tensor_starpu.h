/* The StarPU side of dahl tensors, for runtime code only (codelets, layers): the handles to submit tasks on.
 * The handles stay owned by the tensor. */
#ifndef DAHL_TENSOR_STARPU_H
#define DAHL_TENSOR_STARPU_H

#include "dahl_starpu.h"
#include "dahl_tensor.h"

/* The whole-tensor handle; only valid while the tensor is not split. */
starpu_data_handle_t dahl_tensor_handle(const struct dahl_tensor *t);
/* Sample i's handle (0 <= i < dims[0]); only valid while the tensor is split per sample (grain 1). */
starpu_data_handle_t dahl_tensor_sample(const struct dahl_tensor *t, int i);
/* Group i's handle (0 <= i < dahl_tensor_groups(t)); only valid while the tensor is split. */
starpu_data_handle_t dahl_tensor_group(const struct dahl_tensor *t, int i);

/* A vector handle cut into contiguous chunks with StarPU's asynchronous partitioning (partition planning):
 * while partitioned, tasks use the chunk handles and the whole handle waits; StarPU orders partitioning
 * and unpartitioning with the tasks around them like any data access (partitioning a STARPU_REDUX handle
 * first reduces it). Caller-owned storage; the chunk handles belong to the plan. */
struct dahl_chunks {
    starpu_data_handle_t whole;  /* borrowed */
    int n;                       /* 0: no plan */
    starpu_data_handle_t *parts; /* n chunk handles, cut by starpu_vector_filter_block */
    bool partitioned;
};

/* Plans n >= 2 chunks of the vector handle whole. Returns 0, -EINVAL or -ENOMEM. */
int dahl_chunks_plan(struct dahl_chunks *c, starpu_data_handle_t whole, int n);
/* Submits the switch to the chunks (every chunk gets the whole handle's value), or back to the whole handle
 * (the chunks are gathered into it, in main memory: StarPU 1.3.10 gathers only on the home node). */
void dahl_chunks_partition_submit(struct dahl_chunks *c);
void dahl_chunks_unpartition_submit(struct dahl_chunks *c);
/* Unpartitions if needed and drops the plan (the chunk handles are unregistered once their tasks are
 * done). A zeroed struct is a no-op. Call before destroying the tensor that owns whole. */
void dahl_chunks_fini(struct dahl_chunks *c);

#endif /* DAHL_TENSOR_STARPU_H */

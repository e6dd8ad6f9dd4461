/* The StarPU side of dahl tensors, for runtime code only (codelets, layers): the handles to submit tasks on.
 * The handles stay owned by the tensor. */
#ifndef DAHL_TENSOR_STARPU_H
#define DAHL_TENSOR_STARPU_H

#include "dahl_starpu.h"
#include "dahl_tensor.h"

/* The whole-tensor handle; only valid while the tensor is not split. */
starpu_data_handle_t dahl_tensor_handle(const struct dahl_tensor *t);
/* Sample i's handle (0 <= i < dims[0]); only valid while the tensor is split. */
starpu_data_handle_t dahl_tensor_sample(const struct dahl_tensor *t, int i);

#endif /* DAHL_TENSOR_STARPU_H */

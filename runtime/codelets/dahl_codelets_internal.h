/* Shared by the codelet files of runtime/codelets/ only: the perf models the registry switches between
 * kinds, the submission mark that freezes that switch, and small checks used by the insert helpers. */
#ifndef DAHL_CODELETS_INTERNAL_H
#define DAHL_CODELETS_INTERNAL_H

#include "dahl_codelets_starpu.h"
#include "dahl_profile.h" /* dahl_profile_task_done: every codelet's callback_func (task records, memory peaks) */

#include <stdbool.h>

/* One perf model per symbol (registry.c lists them all); every model starts history-based. */
extern struct starpu_perfmodel dahl_conv2d_forward_model;
extern struct starpu_perfmodel dahl_conv2d_backward_input_model;
extern struct starpu_perfmodel dahl_conv2d_backward_weights_model;
extern struct starpu_perfmodel dahl_maxpool_forward_model;
extern struct starpu_perfmodel dahl_maxpool_backward_model;
extern struct starpu_perfmodel dahl_relu_forward_model;
extern struct starpu_perfmodel dahl_relu_backward_model;
extern struct starpu_perfmodel dahl_dense_forward_model;
extern struct starpu_perfmodel dahl_dense_backward_input_model;
extern struct starpu_perfmodel dahl_dense_backward_weights_model;
extern struct starpu_perfmodel dahl_softmax_xent_model;
extern struct starpu_perfmodel dahl_sgd_update_model;
extern struct starpu_perfmodel dahl_accumulate_model;
extern struct starpu_perfmodel dahl_zero_model;

/* The models above, in the order of dahl_codelet_symbols() (*n entries), for tests/test_model.c. */
struct starpu_perfmodel *const *dahl_codelets_models(size_t *n);

/* Called by every dahl_insert_*() before submitting: from then on the perf-model kind is fixed. */
void dahl_codelets_note_submit(void);

/* True when h is a registered vector of exactly n floats. */
static inline bool dahl_vector_is(starpu_data_handle_t h, size_t n)
{
    return h != NULL && (size_t)starpu_vector_get_nx(h) == n && starpu_vector_get_elemsize(h) == sizeof(float);
}

/* True when h is a registered vector of at least bytes bytes (a workspace). */
static inline bool dahl_vector_holds(starpu_data_handle_t h, size_t bytes)
{
    return h != NULL && (size_t)starpu_vector_get_nx(h) * starpu_vector_get_elemsize(h) >= bytes;
}

/* Whether a gradient access mode is one backward_weights accepts: STARPU_REDUX (per-worker copies reduced
 * by StarPU) or STARPU_RW (the caller's private buffer, e.g. one per sample). */
static inline bool dahl_grad_mode_valid(enum starpu_data_access_mode mode)
{
    return mode == STARPU_REDUX || mode == STARPU_RW;
}

#endif /* DAHL_CODELETS_INTERNAL_H */

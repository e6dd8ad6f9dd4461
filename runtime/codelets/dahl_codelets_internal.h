/* Shared by the codelet files of runtime/codelets/ only: the perf models the registry switches between
 * kinds, the submission mark that freezes that switch, and small checks used by the insert helpers. */
#ifndef DAHL_CODELETS_INTERNAL_H
#define DAHL_CODELETS_INTERNAL_H

#include "dahl_codelets_starpu.h"
#include "dahl_profile.h" /* dahl_profile_task_done: every codelet's callback_func (task records, memory peaks) */

#include <stdbool.h>

/* What a codelet file registers (registry.c lists one set per file, in the order of dahl_codelet_symbols()):
 * its codelets' perf models (every one starts history-based) and, for a layer's task (dahl_layer.h), how it
 * is inserted from the layer's tensors and what workspace it takes. */
typedef starpu_data_handle_t const dahl_layer_handles[DAHL_T_COUNT];
struct dahl_codelet_entry {
    struct starpu_perfmodel *model; /* its symbol is the codelet's */
    /* a layer task: dahl_insert_layer_task's call; NULL for the step's own codelets */
    int (*insert)(const struct dahl_layer_shape *l, int n, dahl_layer_handles h, enum starpu_data_access_mode gm);
    size_t (*workspace)(const struct dahl_layer_shape *l, int n, bool tree); /* NULL: takes none */
};
#define DAHL_CODELET_SET_MAX 8
struct dahl_codelet_set {
    int n;
    struct dahl_codelet_entry entries[DAHL_CODELET_SET_MAX];
};

/* Every dahl codelet's energy model (registry.c): the task's expected time on the arch times that arch's
 * loaded-minus-idle watts, 0 until dahl_codelets_set_energy_watts gives watts. */
extern struct starpu_perfmodel dahl_energy_model;

/* Every codelet's perf model, in the order of dahl_codelet_symbols() (*n entries), for tests/test_model.c. */
struct starpu_perfmodel *const *dahl_codelets_models(size_t *n);

/* Called by every dahl_insert_*() before submitting: from then on the perf-model kind is fixed. */
void dahl_codelets_note_submit(void);

/* The StarPU priority of the tasks the submitting thread inserts now (dahl_codelets_set_priority), and the
 * task-insert arguments every dahl layer codelet ends with: that priority, then STARPU_NAME's value. */
int dahl_codelets_priority(void);
#define DAHL_TASK_NAME STARPU_PRIORITY, dahl_codelets_priority(), STARPU_NAME

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

/* ---- tasks over n samples (the training's grain, issue 21; group.c) ---------------------------------------
 * A layer task over n consecutive samples runs the one-sample kernel on each in turn (its weights stay in
 * cache) with handles that hold the n samples back to back. Its weight gradients are summed by `one` calls
 * into dw/db: one after the other (REDUX: the order within a worker's contribution is StarPU's anyway), or,
 * with `tree` (manual reduction), by the binary tree the network's manual reduction runs over samples, so a
 * power-of-two grain sums every gradient in exactly the grain-1 order. The tree needs dw/db zero on entry
 * (the network zeroes them after each update) and dahl_group_scratch_bytes of scratch. */
struct dahl_group_ops {
    void (*zero)(size_t n, float *dst, void *ctx);
    void (*accumulate)(size_t n, float *dst, const float *src, void *ctx); /* dst += src */
};
extern const struct dahl_group_ops dahl_group_cpu_ops;
extern const struct dahl_group_ops dahl_group_cuda_ops; /* defined in CUDA builds only: the worker's stream */
struct dahl_group_grads {
    int n;
    bool tree;
    size_t nw, nb;
    float *dw, *db, *scratch;
    const struct dahl_group_ops *ops;
    /* ACCUMULATES sample i's gradients into dw [nw] and db [nb] */
    void (*one)(int i, float *dw, float *db, void *ctx);
    void *ctx;
};
void dahl_group_grads_run(const struct dahl_group_grads *g);
/* floor(log2(n)): the scratch levels of the tree over n samples. */
int dahl_group_levels(int n);
size_t dahl_group_scratch_bytes(int n, bool tree, size_t nw, size_t nb);

#endif /* DAHL_CODELETS_INTERNAL_H */

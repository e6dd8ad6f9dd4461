/* The names of dahl's perf models, without StarPU: the perf-model symbol of every dahl codelet and the
 * perf-model kinds they can be built as. Perf-model symbols are a contract with calibration/: renaming one
 * means recalibrating every machine. The codelets themselves (runtime/codelets/registry.c) carry the same
 * symbols; tests/test_model.c checks the two lists agree. */
#ifndef DAHL_PERFNAMES_H
#define DAHL_PERFNAMES_H

#include <stdbool.h>
#include <stddef.h>

/* How StarPU models the cost of every dahl codelet: a table of measured times per footprint (history, the
 * default), or a fit of time against work (the task's flops) that extrapolates to unmeasured shapes:
 * a * size^b (regression) or a * size^b + c (nl-regression). dahl_softmax_xent stays history-based under
 * every kind: all its tasks have one size, over which StarPU never calibrates a regression. */
enum dahl_perfmodel_kind {
    DAHL_PERFMODEL_HISTORY,
    DAHL_PERFMODEL_REGRESSION,
    DAHL_PERFMODEL_NL_REGRESSION,
};

/* Parses "history", "regression" or "nl-regression" into *out. Returns 0, or -EINVAL (out untouched). */
int dahl_perfmodel_kind_parse(const char *name, enum dahl_perfmodel_kind *out);
/* The name dahl_perfmodel_kind_parse() accepts for kind (static string), or NULL for an unknown kind. */
const char *dahl_perfmodel_kind_name(enum dahl_perfmodel_kind kind);

/* The perf-model symbols of every dahl codelet, e.g. "dahl_conv2d_forward" (static, *n entries): what a
 * calibration must measure and what a simulated machine's codelets/45/ directory must hold. The layer table's
 * codelets (dahl_layer.h), then the step's own (softmax + cross-entropy, SGD update, accumulate, zero). */
const char *const *dahl_codelet_symbols(size_t *n);

/* Whether a training step of network d runs the codelet of that symbol: the step's own always, a layer's when
 * one of d's layers submits it (an evaluation's own, batch norm's, run natively only). A calibration needs perf
 * models for those alone. */
struct dahl_network_desc;
bool dahl_network_desc_uses_codelet(const struct dahl_network_desc *d, const char *symbol);

/* The codelet of that symbol with its default roofline efficiencies (dahl_layer.h), or NULL. */
struct dahl_codelet_defaults;
const struct dahl_codelet_defaults *dahl_codelet_defaults_find(const char *symbol);

#endif /* DAHL_PERFNAMES_H */

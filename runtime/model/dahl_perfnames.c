/* dahl's perf-model names (see dahl_perfnames.h): one table of symbols, in the order of the models of
 * runtime/codelets/registry.c, and one of kinds, indexed by kind. */
#include "dahl_perfnames.h"

#include "dahl_names.h"

#include <errno.h>

static const char *const symbols[] = {
    "dahl_conv2d_forward",
    "dahl_conv2d_backward_input",
    "dahl_conv2d_backward_weights",
    "dahl_maxpool_forward",
    "dahl_maxpool_backward",
    "dahl_relu_forward",
    "dahl_relu_backward",
    "dahl_dense_forward",
    "dahl_dense_backward_input",
    "dahl_dense_backward_weights",
    "dahl_softmax_xent",
    "dahl_sgd_update",
    "dahl_accumulate",
    "dahl_zero",
};

static const char *const kind_names[] = {
    [DAHL_PERFMODEL_HISTORY] = "history",
    [DAHL_PERFMODEL_REGRESSION] = "regression",
    [DAHL_PERFMODEL_NL_REGRESSION] = "nl-regression",
};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

int dahl_perfmodel_kind_parse(const char *name, enum dahl_perfmodel_kind *out)
{
    int k = dahl_names_find(kind_names, NKINDS, name);
    if (k < 0)
        return -EINVAL;
    *out = (enum dahl_perfmodel_kind)k;
    return 0;
}

const char *dahl_perfmodel_kind_name(enum dahl_perfmodel_kind kind)
{
    return (unsigned)kind < NKINDS ? kind_names[kind] : NULL;
}

const char *const *dahl_codelet_symbols(size_t *n)
{
    *n = sizeof(symbols) / sizeof(symbols[0]);
    return symbols;
}

/* dahl's perf-model names (see dahl_perfnames.h): one table of symbols, in the order of the models of
 * runtime/codelets/registry.c, and one of kinds. */
#include "dahl_perfnames.h"

#include <errno.h>
#include <string.h>

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

static const struct {
    const char *name;
    enum dahl_perfmodel_kind kind;
} kinds[] = {
    {"history", DAHL_PERFMODEL_HISTORY},
    {"regression", DAHL_PERFMODEL_REGRESSION},
    {"nl-regression", DAHL_PERFMODEL_NL_REGRESSION},
};

int dahl_perfmodel_kind_parse(const char *name, enum dahl_perfmodel_kind *out)
{
    if (name == NULL)
        return -EINVAL;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(name, kinds[i].name) == 0) {
            *out = kinds[i].kind;
            return 0;
        }
    }
    return -EINVAL;
}

const char *dahl_perfmodel_kind_name(enum dahl_perfmodel_kind kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i].kind == kind)
            return kinds[i].name;
    return NULL;
}

const char *const *dahl_codelet_symbols(size_t *n)
{
    *n = sizeof(symbols) / sizeof(symbols[0]);
    return symbols;
}

/* dahl's perf-model names (see dahl_perfnames.h): the symbols of every codelet, the layer table's first (in
 * its order), then those of the training step's own tasks, in the order of the models of
 * runtime/codelets/registry.c; and the perf-model kinds' names, indexed by kind. */
#include "dahl_perfnames.h"

#include "dahl_layer.h"
#include "dahl_names.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

/* The codelets of a step that belong to no layer. */
static const struct dahl_codelet_defaults step_codelets[] = {
    /* K = 10 classes and exp(): nothing but latency on every architecture */
    {"dahl_softmax_xent", 0.005, 0.005, 0.01, 0.01},
    /* elementwise updates and gradient sums */
    {"dahl_sgd_update", 0.35, 0.35, 0.5, 0.7},
    {"dahl_accumulate", 0.76, 0.76, 0.5, 0.7},
    {"dahl_zero", 1.0, 1.0, 1.0, 0.8},
};
#define NSTEP (sizeof(step_codelets) / sizeof(step_codelets[0]))

#define MAX_CODELETS 64
static const struct dahl_codelet_defaults *all[MAX_CODELETS];
static const char *symbols[MAX_CODELETS];
static size_t nsymbols;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Adds c, unless a kind listed it already (kinds may share codelets: avgpool and globalavgpool). */
static void add(const struct dahl_codelet_defaults *c)
{
    for (size_t i = 0; i < nsymbols; i++)
        if (strcmp(symbols[i], c->symbol) == 0)
            return;
    if (nsymbols < MAX_CODELETS) {
        all[nsymbols] = c;
        symbols[nsymbols++] = c->symbol;
    }
}

static void collect(void)
{
    for (int k = 0; k < dahl_layer_type_count(); k++)
        for (const struct dahl_codelet_defaults *c = dahl_layer_type_at(k)->codelets; c->symbol != NULL; c++)
            add(c);
    for (size_t i = 0; i < NSTEP; i++)
        add(&step_codelets[i]);
}

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
    pthread_once(&once, collect);
    *n = nsymbols;
    return symbols;
}

const struct dahl_codelet_defaults *dahl_codelet_defaults_find(const char *symbol)
{
    pthread_once(&once, collect);
    for (size_t i = 0; i < nsymbols; i++)
        if (strcmp(symbols[i], symbol) == 0)
            return all[i];
    return NULL;
}

bool dahl_network_desc_uses_codelet(const struct dahl_network_desc *d, const char *symbol)
{
    for (size_t i = 0; i < NSTEP; i++)
        if (strcmp(step_codelets[i].symbol, symbol) == 0)
            return true;
    /* a training step's tasks (an evaluation's run natively only) */
    struct dahl_layer_shape ls[DAHL_NETWORK_MAX_LAYERS];
    char err[256];
    if (dahl_network_desc_shapes(d, ls, err, sizeof(err)) != 0)
        return false;
    const enum dahl_pass passes[] = {DAHL_PASS_FORWARD, DAHL_PASS_BACKWARD, DAHL_PASS_STEP};
    for (int i = 0; i < d->nlayers; i++)
        for (size_t p = 0; p < sizeof(passes) / sizeof(passes[0]); p++) {
            struct dahl_layer_task t[DAHL_LAYER_MAX_TASKS];
            int nt = dahl_layer_tasks(&ls[i], passes[p], 1, dahl_network_desc_input(d, i, 0) >= 0, t);
            for (int k = 0; k < nt; k++)
                if (strcmp(t[k].symbol, symbol) == 0)
                    return true;
        }
    return false;
}

/* The one table of dahl codelets' perf models: their symbols (what calibration measures and simulated
 * machines must provide) and the perf-model kind they are all built as, switchable until the first dahl task
 * is submitted (StarPU loads a model, and fixes its kind, when a task using it is submitted). */
#include "dahl_codelets_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define DAHL_NMODELS 14

static struct starpu_perfmodel *const models[DAHL_NMODELS] = {
    &dahl_conv2d_forward_model,
    &dahl_conv2d_backward_input_model,
    &dahl_conv2d_backward_weights_model,
    &dahl_maxpool_forward_model,
    &dahl_maxpool_backward_model,
    &dahl_relu_forward_model,
    &dahl_relu_backward_model,
    &dahl_dense_forward_model,
    &dahl_dense_backward_input_model,
    &dahl_dense_backward_weights_model,
    &dahl_softmax_xent_model,
    &dahl_sgd_update_model,
    &dahl_accumulate_model,
    &dahl_zero_model,
};

/* The symbols, read from models[] once (their one source is each model's .symbol). */
static const char *symbols[DAHL_NMODELS];
static pthread_once_t symbols_once = PTHREAD_ONCE_INIT;

static void symbols_fill(void)
{
    for (size_t i = 0; i < DAHL_NMODELS; i++)
        symbols[i] = models[i]->symbol;
}

static const struct {
    const char *name;
    enum dahl_perfmodel_kind kind;
    enum starpu_perfmodel_type type;
} kinds[] = {
    {"history", DAHL_PERFMODEL_HISTORY, STARPU_HISTORY_BASED},
    {"regression", DAHL_PERFMODEL_REGRESSION, STARPU_REGRESSION_BASED},
    {"nl-regression", DAHL_PERFMODEL_NL_REGRESSION, STARPU_NL_REGRESSION_BASED},
};

static atomic_bool submitted;
static enum dahl_perfmodel_kind current_kind = DAHL_PERFMODEL_HISTORY;

void dahl_codelets_note_submit(void)
{
    atomic_store_explicit(&submitted, true, memory_order_relaxed);
}

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

int dahl_codelets_set_perfmodel(enum dahl_perfmodel_kind kind)
{
    size_t k = 0;
    while (k < sizeof(kinds) / sizeof(kinds[0]) && kinds[k].kind != kind)
        k++;
    if (k == sizeof(kinds) / sizeof(kinds[0]))
        return -EINVAL;
    if (atomic_load_explicit(&submitted, memory_order_relaxed))
        return -EBUSY;
    for (size_t i = 0; i < DAHL_NMODELS; i++)
        if (models[i]->is_loaded)
            return -EBUSY;
    /* softmax_xent works on the class scores only: every task of a network has the same size, and StarPU
     * never calibrates a regression over a single size (it wants the smallest size below 0.9 x the largest).
     * It stays history-based under every kind. */
    for (size_t i = 0; i < DAHL_NMODELS; i++)
        models[i]->type = models[i] == &dahl_softmax_xent_model ? STARPU_HISTORY_BASED : kinds[k].type;
    current_kind = kind;
    return 0;
}

enum dahl_perfmodel_kind dahl_codelets_perfmodel(void)
{
    return current_kind;
}

#if DAHL_SIMULATED
void dahl_simulated_cuda_func(void *buffers[], void *cl_arg)
{
    (void)buffers, (void)cl_arg; /* see DAHL_CUDA_FUNCS in dahl_starpu.h */
}
#endif

const char *const *dahl_codelet_symbols(size_t *n)
{
    pthread_once(&symbols_once, symbols_fill);
    *n = DAHL_NMODELS;
    return symbols;
}

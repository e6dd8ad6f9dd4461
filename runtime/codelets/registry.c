/* The one table of dahl codelets: one set per codelet file, their perf models in the order of their symbols
 * (dahl_codelet_symbols(), runtime/model/dahl_perfnames.c; tests/test_model.c checks each model carries its
 * symbol), the layer tasks' inserts by symbol (dahl_insert_layer_task), and the
 * perf-model kind they are all built as, switchable until the first dahl task is submitted (StarPU loads a
 * model, and fixes its kind, when a task using it is submitted). */
#include "dahl_codelets_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* One line per codelet file, in the order of dahl_codelet_symbols(): the layer table's kinds, then the
 * step's own codelets. X(name) is the set dahl_name_codelets that runtime/codelets/NAME.c defines. */
#define DAHL_CODELET_SETS(X)                                                                                     \
    X(conv2d) X(maxpool) X(relu) X(dense) X(avgpool) X(add) X(bn) X(dropout)                                     \
    X(softmax_xent) X(sgd) X(reduce)

#define DECLARE(name) extern const struct dahl_codelet_set dahl_##name##_codelets;
DAHL_CODELET_SETS(DECLARE)
#undef DECLARE
#define ENTRY(name) &dahl_##name##_codelets,
static const struct dahl_codelet_set *const sets[] = {DAHL_CODELET_SETS(ENTRY)};
#undef ENTRY

#define MAX_CODELETS 64
static const struct dahl_codelet_entry *entries[MAX_CODELETS];
static struct starpu_perfmodel *models[MAX_CODELETS];
static size_t nmodels;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void collect(void)
{
    for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
        for (int i = 0; i < sets[s]->n && nmodels < MAX_CODELETS; i++) {
            entries[nmodels] = &sets[s]->entries[i];
            models[nmodels++] = sets[s]->entries[i].model;
        }
    }
}

static const struct dahl_codelet_entry *find(const char *symbol)
{
    pthread_once(&once, collect);
    for (size_t i = 0; i < nmodels; i++)
        if (strcmp(models[i]->symbol, symbol) == 0)
            return entries[i];
    return NULL;
}

int dahl_insert_layer_task(const struct dahl_layer_task *t, const struct dahl_layer_shape *l, int n,
                           starpu_data_handle_t const h[DAHL_T_COUNT], enum starpu_data_access_mode grad_mode)
{
    const struct dahl_codelet_entry *e = find(t->symbol);
    return e != NULL && e->insert != NULL ? e->insert(l, n, h, grad_mode) : -EINVAL;
}

size_t dahl_layer_workspace_bytes(const struct dahl_layer_shape *l, int n, bool tree)
{
    size_t bytes = 0;
    struct dahl_layer_task tasks[DAHL_LAYER_MAX_TASKS];
    for (int pass = DAHL_PASS_FORWARD; pass <= DAHL_PASS_BACKWARD; pass++) {
        int nt = dahl_layer_tasks(l, (enum dahl_pass)pass, n, true, tasks);
        for (int t = 0; t < nt; t++) {
            const struct dahl_codelet_entry *e = find(tasks[t].symbol);
            size_t b = e != NULL && e->workspace != NULL ? e->workspace(l, n, tree) : 0;
            bytes = b > bytes ? b : bytes;
        }
    }
    return bytes;
}

static double energy_watts[2]; /* CPU core, GPU: loaded minus idle; 0: no energy */

static double energy_cost(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
    double w = arch->devices[0].type == STARPU_CUDA_WORKER ? energy_watts[1] : energy_watts[0];
    if (w <= 0)
        return 0.0;
    double us = starpu_task_expected_length(task, arch, nimpl);
    return isnan(us) || us <= 0 ? 0.0 : us * 1e-6 * w;
}

struct starpu_perfmodel dahl_energy_model = {
    .type = STARPU_PER_ARCH,
    .symbol = "dahl_energy",
    .arch_cost_function = energy_cost,
};

void dahl_codelets_set_energy_watts(double cpu_w, double cuda_w)
{
    energy_watts[0] = cpu_w > 0 ? cpu_w : 0;
    energy_watts[1] = cuda_w > 0 ? cuda_w : 0;
}

/* StarPU's type for each kind. */
static const struct {
    enum dahl_perfmodel_kind kind;
    enum starpu_perfmodel_type type;
} kinds[] = {
    {DAHL_PERFMODEL_HISTORY, STARPU_HISTORY_BASED},
    {DAHL_PERFMODEL_REGRESSION, STARPU_REGRESSION_BASED},
    {DAHL_PERFMODEL_NL_REGRESSION, STARPU_NL_REGRESSION_BASED},
};

static atomic_bool submitted;
static _Thread_local int priority;
static _Thread_local struct dahl_task_context context;

void dahl_codelets_set_context(const struct dahl_task_context *c)
{
    context = *c;
}

const struct dahl_task_context *dahl_codelets_context(void)
{
    return &context;
}

void dahl_codelets_set_priority(int prio)
{
    priority = prio;
}

int dahl_codelets_priority(void)
{
    return priority;
}
static enum dahl_perfmodel_kind current_kind = DAHL_PERFMODEL_HISTORY;

void dahl_codelets_note_submit(void)
{
    atomic_store_explicit(&submitted, true, memory_order_relaxed);
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
    pthread_once(&once, collect);
    for (size_t i = 0; i < nmodels; i++)
        if (models[i]->is_loaded)
            return -EBUSY;
    /* softmax_xent works on the class scores only: every task of a network has the same size, and StarPU
     * never calibrates a regression over a single size (it wants the smallest size below 0.9 x the largest).
     * It stays history-based under every kind. */
    for (size_t i = 0; i < nmodels; i++)
        models[i]->type = strcmp(models[i]->symbol, "dahl_softmax_xent") == 0 ? STARPU_HISTORY_BASED : kinds[k].type;
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

struct starpu_perfmodel *const *dahl_codelets_models(size_t *n)
{
    pthread_once(&once, collect);
    *n = nmodels;
    return models;
}

/* The one table of dahl codelets' perf models, in the order of their symbols (dahl_codelet_symbols(),
 * runtime/model/dahl_perfnames.c; tests/test_model.c checks each model carries its symbol), and the
 * perf-model kind they are all built as, switchable until the first dahl task is submitted (StarPU loads a
 * model, and fixes its kind, when a task using it is submitted). */
#include "dahl_codelets_internal.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>

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

struct starpu_perfmodel *const *dahl_codelets_models(size_t *n)
{
    *n = DAHL_NMODELS;
    return models;
}

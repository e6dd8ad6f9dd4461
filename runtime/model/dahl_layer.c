/* The layer table (see dahl_layer.h): the kinds of DAHL_LAYER_KINDS (dahl_netdesc.h), each defined in its own
 * file under layers/. */
#include "dahl_layer.h"

#include "dahl_footprint.h"

#include <string.h>

#define DECLARE(e, name) extern const struct dahl_layer_type dahl_layer_##name;
DAHL_LAYER_KINDS(DECLARE)
#undef DECLARE

/* In this order (DAHL_LAYER_KINDS'), their codelets begin dahl_codelet_symbols() (dahl_perfnames.c). */
#define ENTRY(e, name) &dahl_layer_##name,
static const struct dahl_layer_type *const kinds[] = {DAHL_LAYER_KINDS(ENTRY)};
#undef ENTRY
#define NKINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))

const struct dahl_layer_type *dahl_layer_type_get(enum dahl_layer_kind kind)
{
    for (int i = 0; i < NKINDS; i++)
        if (kinds[i]->kind == kind)
            return kinds[i];
    return NULL;
}

const struct dahl_layer_type *dahl_layer_type_by_name(const char *name)
{
    for (int i = 0; i < NKINDS; i++)
        if (strcmp(kinds[i]->name, name) == 0)
            return kinds[i];
    return NULL;
}

int dahl_layer_type_count(void)
{
    return NKINDS;
}

const struct dahl_layer_type *dahl_layer_type_at(int i)
{
    return i >= 0 && i < NKINDS ? kinds[i] : NULL;
}

bool dahl_layer_desc_has_params(const struct dahl_layer_desc *d)
{
    const struct dahl_layer_type *k = dahl_layer_type_get(d->kind);
    return k != NULL && k->has_params;
}

int dahl_layer_tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                     struct dahl_layer_task *out)
{
    const struct dahl_layer_type *k = dahl_layer_type_get(l->desc.kind);
    if (k == NULL || (pass == DAHL_PASS_STEP && !k->stateful))
        return 0;
    return k->tasks(l, pass == DAHL_PASS_EVAL && !k->stateful ? DAHL_PASS_FORWARD : pass, n, has_dx, out);
}

struct dahl_layer_task dahl_layer_task_grouped(const char *symbol, uint32_t footprint, int n, double flops,
                                               size_t bytes, size_t params_bytes)
{
    double total = (double)n * flops;
    return (struct dahl_layer_task){.symbol = symbol,
                                    .footprint = dahl_grouped_footprint_of(footprint, n),
                                    .size = dahl_size_of_flops(total),
                                    .flops = total,
                                    .bytes = (double)n * (double)bytes - (double)(n - 1) * (double)params_bytes};
}

int dahl_layer_plan_same(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    (void)index, (void)err, (void)err_size;
    l->out_c = l->in_c;
    l->out_h = l->in_h;
    l->out_w = l->in_w;
    return 0;
}

size_t dahl_layer_input_values(const struct dahl_layer_shape *l, int n)
{
    return (size_t)n * (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
}

struct dahl_layer_task dahl_layer_task_elementwise(const char *symbol, size_t all, double flops, size_t bytes)
{
    return (struct dahl_layer_task){.symbol = symbol,
                                    .footprint = dahl_relu_footprint_of(all),
                                    .size = dahl_size_of_flops(flops > 0 ? flops : (double)all),
                                    .flops = flops,
                                    .bytes = (double)bytes};
}

struct dahl_layer_task dahl_layer_task_uses(struct dahl_layer_task t, const struct dahl_layer_use *uses, int n)
{
    t.naccesses = n < DAHL_LAYER_TASK_MAX_ACCESSES ? n : DAHL_LAYER_TASK_MAX_ACCESSES;
    for (int i = 0; i < t.naccesses; i++)
        t.access[i] = uses[i];
    return t;
}

int dahl_layer_phases(const struct dahl_layer_shape *l, enum dahl_pass pass)
{
    struct dahl_layer_task t[DAHL_LAYER_MAX_TASKS];
    int nt = dahl_layer_tasks(l, pass, 1, true, t), phases = 1;
    for (int i = 0; i < nt; i++)
        phases = t[i].phase + 1 > phases ? t[i].phase + 1 : phases;
    return phases;
}

bool dahl_layer_uses_tensor(const struct dahl_layer_shape *l, enum dahl_layer_tensor tensor)
{
    for (int pass = DAHL_PASS_FORWARD; pass <= DAHL_PASS_STEP; pass++) {
        struct dahl_layer_task t[DAHL_LAYER_MAX_TASKS];
        int nt = dahl_layer_tasks(l, (enum dahl_pass)pass, 1, true, t);
        for (int i = 0; i < nt; i++)
            for (int a = 0; a < t[i].naccesses; a++)
                if (t[i].access[a].tensor == tensor)
                    return true;
    }
    return false;
}

bool dahl_layer_sums_grads_early(const struct dahl_layer_shape *l)
{
    struct dahl_layer_task t[DAHL_LAYER_MAX_TASKS];
    int nt = dahl_layer_tasks(l, DAHL_PASS_BACKWARD, 1, true, t);
    for (int i = 0; i < nt; i++)
        for (int a = 0; a < t[i].naccesses; a++)
            if (t[i].phase > 0 && t[i].access[a].tensor == DAHL_T_DW && t[i].access[a].mode == DAHL_ACCESS_R)
                return true;
    return false;
}

bool dahl_network_desc_layer_major(const struct dahl_network_desc *d)
{
    struct dahl_layer_shape ls[DAHL_NETWORK_MAX_LAYERS];
    char err[256];
    if (dahl_network_desc_shapes(d, ls, err, sizeof(err)) != 0)
        return false;
    for (int i = 0; i < d->nlayers; i++)
        if (dahl_layer_phases(&ls[i], DAHL_PASS_FORWARD) > 1 || dahl_layer_phases(&ls[i], DAHL_PASS_BACKWARD) > 1)
            return true;
    return false;
}

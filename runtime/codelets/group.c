/* Weight gradients of a task over n samples (the training's grain, issue 21): see dahl_group_grads in
 * dahl_codelets_internal.h. */
#include "dahl_codelets_internal.h"

int dahl_group_levels(int n)
{
    int levels = 0;
    while (n > 1) {
        n /= 2;
        levels++;
    }
    return levels;
}

size_t dahl_group_scratch_bytes(int n, bool tree, size_t nw, size_t nb)
{
    return tree ? (size_t)dahl_group_levels(n) * (nw + nb) * sizeof(float) : 0;
}

/* dst += src over a stack level's dw then db (one contiguous nw + nb run in the scratch, two runs for out). */
static void level_add(const struct dahl_group_grads *g, float *dw, float *db, const float *sw, const float *sb)
{
    g->ops->accumulate(g->nw, dw, sw, g->ctx);
    if (g->nb > 0)
        g->ops->accumulate(g->nb, db, sb, g->ctx);
}

void dahl_group_grads_run(const struct dahl_group_grads *g)
{
    if (!g->tree) {
        for (int i = 0; i < g->n; i++)
            g->one(i, g->dw, g->db, g->ctx);
        return;
    }
    /* A binary counter: level 0 is the output (zero on entry), level k >= 1 the scratch's k-th dw + db run;
     * size[k] samples summed in level k. Two equal neighbours merge, lower index on the left. */
    enum { MAX_LEVELS = 33 };
    int size[MAX_LEVELS];
    int top = 0;
    const size_t run = g->nw + g->nb;
    for (int i = 0; i < g->n; i++) {
        float *dw = g->dw, *db = g->db;
        if (top > 0) {
            dw = g->scratch + (size_t)(top - 1) * run;
            db = dw + g->nw;
            g->ops->zero(run, dw, g->ctx);
        }
        g->one(i, dw, db, g->ctx);
        size[top++] = 1;
        while (top >= 2 && size[top - 1] == size[top - 2]) {
            float *lw = top == 2 ? g->dw : g->scratch + (size_t)(top - 3) * run;
            float *lb = top == 2 ? g->db : lw + g->nw;
            const float *hw = g->scratch + (size_t)(top - 2) * run;
            level_add(g, lw, lb, hw, hw + g->nw);
            size[top - 2] *= 2;
            top--;
        }
    }
    /* Unequal blocks left (n not a power of two): fold from the top, as the network's tree over the samples
     * does: the last block joins the one below it, and so on down to the output. */
    for (; top >= 2; top--) {
        float *lw = top == 2 ? g->dw : g->scratch + (size_t)(top - 3) * run;
        float *lb = top == 2 ? g->db : lw + g->nw;
        const float *hw = g->scratch + (size_t)(top - 2) * run;
        level_add(g, lw, lb, hw, hw + g->nw);
    }
}

static void cpu_zero(size_t n, float *dst, void *ctx)
{
    (void)ctx;
    dahl_zero(n, dst);
}

static void cpu_accumulate(size_t n, float *dst, const float *src, void *ctx)
{
    (void)ctx;
    dahl_accumulate(n, dst, src);
}

const struct dahl_group_ops dahl_group_cpu_ops = {cpu_zero, cpu_accumulate};

#if DAHL_CUDA
static void cuda_zero(size_t n, float *dst, void *ctx)
{
    (void)ctx;
    dahl_cuda_must(dahl_cuda_zero(n, dst, dahl_cuda_local_stream()));
}

static void cuda_accumulate(size_t n, float *dst, const float *src, void *ctx)
{
    (void)ctx;
    dahl_cuda_must(dahl_cuda_accumulate(n, dst, src, dahl_cuda_local_stream()));
}

const struct dahl_group_ops dahl_group_cuda_ops = {cuda_zero, cuda_accumulate};
#endif

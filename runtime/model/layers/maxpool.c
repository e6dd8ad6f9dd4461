/* maxpool: the maximum over square windows (kernel, stride, pad: rows and columns of -infinity around the image,
 * at most kernel / 2), per channel and sample. Forward:
 * dahl_maxpool_forward; backward (but for the first layer): dahl_maxpool_backward, which finds each
 * window's maximum again in the input. */
#include "dahl_layer_pool.h"

#include "dahl_footprint.h"
#include "dahl_kernels.h"

#include <stdio.h>

/* The window geometry of a pooling layer (maxpool, avgpool) from its kernel and stride (and max-pool's pad). */
int dahl_layer_window_plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    const struct dahl_layer_desc *d = &l->desc;
    l->pool = (struct dahl_maxpool_shape){.c = l->in_c, .h = l->in_h, .w = l->in_w, .k = d->kernel,
                                          .stride = d->stride, .pad = d->kind == DAHL_LAYER_MAXPOOL ? d->pad : 0};
    if (!dahl_maxpool_shape_valid(&l->pool)) {
        snprintf(err, err_size, "layer %d (%s %d stride %d pad %d) does not fit its %dx%dx%d input (or pad > %d / 2)",
                 index, dahl_layer_type_get(d->kind)->name, d->kernel, d->stride, l->pool.pad, l->in_c, l->in_h,
                 l->in_w, d->kernel);
        return -1;
    }
    l->out_c = l->in_c;
    l->out_h = dahl_maxpool_out_h(&l->pool);
    l->out_w = dahl_maxpool_out_w(&l->pool);
    return 0;
}

static int tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out)
{
    const struct dahl_maxpool_shape *s = &l->pool;
    uint32_t fp = dahl_maxpool_footprint_of(s);
    if (pass == DAHL_PASS_FORWARD) {
        out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_maxpool_forward", fp, n, dahl_maxpool_forward_flops(s),
                                                         dahl_maxpool_forward_bytes(s), 0),
                                 {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_Y, DAHL_ACCESS_W});
        return 1;
    }
    if (!has_dx)
        return 0;
    out[0] = DAHL_LAYER_USES(dahl_layer_task_grouped("dahl_maxpool_backward", fp, n, dahl_maxpool_backward_flops(s),
                                                     dahl_maxpool_backward_bytes(s), 0),
                             {DAHL_T_X, DAHL_ACCESS_R}, {DAHL_T_DY, DAHL_ACCESS_R}, {DAHL_T_DX, DAHL_ACCESS_W});
    return 1;
}

/* Average-pool's model-file keys (max-pool's add pad). */
const struct dahl_layer_key dahl_layer_window_keys[] = {
    {"kernel", offsetof(struct dahl_layer_desc, kernel), 1, DAHL_KEY_REQUIRED},
    {"stride", offsetof(struct dahl_layer_desc, stride), 1, DAHL_KEY_AS_KERNEL},
    {NULL, 0, 0, 0},
};

static const struct dahl_layer_key keys[] = {
    {"kernel", offsetof(struct dahl_layer_desc, kernel), 1, DAHL_KEY_REQUIRED},
    {"stride", offsetof(struct dahl_layer_desc, stride), 1, DAHL_KEY_AS_KERNEL},
    {"pad", offsetof(struct dahl_layer_desc, pad), 0, 0},
    {NULL, 0, 0, 0},
};

/* scalar window loops: compares, no FMA: far below streaming bandwidth */
static const struct dahl_codelet_defaults codelets[] = {
    {"dahl_maxpool_forward", 0.1, 0.1, 0.3, 0.6},
    {"dahl_maxpool_backward", 0.15, 0.15, 0.3, 0.6},
    {NULL, 0, 0, 0, 0},
};

const struct dahl_layer_type dahl_layer_maxpool = {
    .kind = DAHL_LAYER_MAXPOOL,
    .name = "maxpool",
    .trace_name = "pool",
    .keys = keys,
    .codelets = codelets,
    .plan = dahl_layer_window_plan,
    .tasks = tasks,
};

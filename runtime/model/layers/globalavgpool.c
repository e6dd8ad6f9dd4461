/* globalavgpool: the mean of each channel over the whole (square) image, C x H x H -> C x 1 x 1: an average
 * pool whose one window is the image (avgpool's tasks and codelets). */
#include "dahl_layer_pool.h"

#include "dahl_kernels.h"

#include <stdio.h>

static int plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size)
{
    if (l->in_h != l->in_w) {
        snprintf(err, err_size, "layer %d (globalavgpool): expected a square input, got %dx%dx%d", index, l->in_c,
                 l->in_h, l->in_w);
        return -1;
    }
    l->pool = (struct dahl_maxpool_shape){.c = l->in_c, .h = l->in_h, .w = l->in_w, .k = l->in_h, .stride = l->in_h};
    l->out_c = l->in_c;
    l->out_h = 1;
    l->out_w = 1;
    return 0;
}

static const struct dahl_layer_key keys[] = {{NULL, 0, 0, 0}};

const struct dahl_layer_type dahl_layer_globalavgpool = {
    .kind = DAHL_LAYER_GLOBALAVGPOOL,
    .name = "globalavgpool",
    .trace_name = "gap",
    .keys = keys,
    .codelets = dahl_avgpool_codelet_defaults,
    .plan = plan,
    .tasks = dahl_layer_avgpool_tasks,
};

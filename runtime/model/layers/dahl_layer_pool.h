/* What the pooling kinds share (layers/maxpool.c, avgpool.c, globalavgpool.c): the window geometry from a
 * layer's kernel and stride and their model-file keys (maxpool.c), and average pooling's tasks and codelets
 * (avgpool.c), which global average pooling runs too. */
#ifndef DAHL_LAYER_POOL_H
#define DAHL_LAYER_POOL_H

#include "dahl_layer.h"

int dahl_layer_window_plan(struct dahl_layer_shape *l, int index, char *err, size_t err_size);
extern const struct dahl_layer_key dahl_layer_window_keys[];

int dahl_layer_avgpool_tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                             struct dahl_layer_task *out);
extern const struct dahl_codelet_defaults dahl_avgpool_codelet_defaults[];

#endif /* DAHL_LAYER_POOL_H */

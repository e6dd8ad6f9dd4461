/* The task graph of training steps, without StarPU: every task dahl_network_train_step submits (perf-model
 * symbol and footprint, as the codelets compute them), in submission order, with the dependencies StarPU's
 * sequential data consistency gives them from their data accesses, plus StarPU's own REDUX reduction tasks.
 * It is what `dahlsim dag export` turns into a scheduler-lab graph. StarPU-free, like dahl_catalogue.h.
 * Ownership: the graph owns its arrays; symbols are static strings. */
#ifndef DAHL_STEPGRAPH_H
#define DAHL_STEPGRAPH_H

#include "dahl_catalogue.h"
#include "dahl_netdesc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dahl_stepgraph_task {
    const char *symbol; /* perf-model symbol (static) */
    uint32_t footprint; /* what the codelet's footprint callback returns for it */
    int layer;          /* the layer it works for, nlayers for the loss (softmax + cross-entropy) */
    int step;           /* 0-based training step */
    bool by_starpu;     /* one of StarPU's REDUX reduction tasks (not counted by dahl_network_task_count) */
};

struct dahl_stepgraph {
    int ntasks;
    struct dahl_stepgraph_task *tasks;
    /* predecessors of task t: pred[pred_start[t] .. pred_start[t + 1]), ascending, all < t */
    int *pred_start, *pred;
    long nedges;
};

/* Builds the graph of `steps` consecutive training steps of d under conf (its redux_copies is the number of
 * per-worker copies StarPU reduces per gradient tensor and step, at most one per REDUX task of that tensor).
 * Returns 0, -EINVAL with a reason in err, or -ENOMEM. */
int dahl_stepgraph_build(struct dahl_stepgraph *g, const struct dahl_network_desc *d,
                         const struct dahl_catalogue_conf *conf, int steps, char *err, size_t err_size);
void dahl_stepgraph_fini(struct dahl_stepgraph *g);

/* Tasks of symbol in the graph, only dahl's own submissions when dahl_only (dahl_network_task_count's count). */
long dahl_stepgraph_count(const struct dahl_stepgraph *g, const char *symbol, bool dahl_only);

#endif /* DAHL_STEPGRAPH_H */

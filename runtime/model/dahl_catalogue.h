/* The task catalogue of training: for a network description and a training configuration, every kind of
 * task one training step runs, as StarPU's perf models see it (symbol and footprint, exactly as the
 * codelets compute them), with the work it does (flops, compulsory bytes) and how many run per step.
 * Built from the same layer shapes as the network (dahl_network_desc_shapes), without StarPU running: it is
 * what perf models for machines nobody measured are written from (`dahlsim machine synth`). StarPU-free.
 * Ownership: the catalogue owns its entries; symbols are static strings. */
#ifndef DAHL_CATALOGUE_H
#define DAHL_CATALOGUE_H

#include "dahl_netdesc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dahl_catalogue_entry {
    const char *symbol;  /* perf-model symbol, e.g. "dahl_conv2d_forward" (static) */
    uint32_t footprint;  /* the value the codelet's footprint callback returns for these tasks */
    size_t size;         /* the perf model's size (the codelet's size_base) */
    double flops;        /* the kernel's flop count (STARPU_FLOPS of dahl's tasks; StarPU's own reduction
                            tasks carry none, so StarPU records 0 for those) */
    double bytes;        /* compulsory memory traffic (the kernel's _bytes()) */
    long count;          /* tasks per training step, summed over every step added */
    long starpu_count;   /* of those, the ones StarPU submits itself (REDUX reductions of gradients) */
};

struct dahl_catalogue {
    struct dahl_catalogue_entry *entries; /* one per distinct (symbol, footprint), in first-seen order */
    size_t n, cap;
};

/* What a training step's task list depends on besides the network. Not the batch's values, nor the learning
 * rate: every task is one group of samples or one parameter tensor. */
struct dahl_catalogue_conf {
    int batch;                     /* samples per step (>= 1) */
    enum dahl_reduction reduction;
    bool momentum;                 /* SGD with a velocity buffer (momentum != 0) */
    int redux_copies;              /* REDUX only: per-worker copies StarPU reduces for each gradient tensor at
                                      each step (>= 1): one dahl_accumulate task each (a tree that folds in the
                                      tensor's own value). How many workers touched a gradient depends on the
                                      schedule; with one worker it is exactly 1. */
    size_t update_chunk;           /* dahl_train_conf's update_chunk: 0 the default, SIZE_MAX never split */
    int grain;                     /* dahl_train_conf's grain: samples per layer task (0 or 1: one) */
    int pipeline_depth;            /* dahl_train_conf's pipeline_depth (> 1: a stash refresh per parameter
                                      tensor and step, one dahl_zero and one dahl_accumulate) */
};

/* An empty catalogue (caller-owned storage). */
void dahl_catalogue_init(struct dahl_catalogue *c);
/* Frees the entries; c is empty again. */
void dahl_catalogue_fini(struct dahl_catalogue *c);

/* Adds the tasks of one training step of network d under conf: entries already present (same symbol and
 * footprint) have their count increased, new ones are appended, so several networks and configurations can
 * share one catalogue. Not listed: StarPU's initialisation of REDUX per-worker copies (a direct call of
 * dahl_zero's function, not a task). Returns 0, -EINVAL with a reason in err for a bad description or conf,
 * or -ENOMEM. */
int dahl_catalogue_add_step(struct dahl_catalogue *c, const struct dahl_network_desc *d,
                            const struct dahl_catalogue_conf *conf, char *err, size_t err_size);

/* The entry for (symbol, footprint), or NULL. */
const struct dahl_catalogue_entry *dahl_catalogue_find(const struct dahl_catalogue *c, const char *symbol,
                                                       uint32_t footprint);

/* Tasks of symbol per step (all footprints), counting only dahl's own submissions when dahl_only: what
 * dahl_network_task_count() reports for one step. */
long dahl_catalogue_count(const struct dahl_catalogue *c, const char *symbol, bool dahl_only);

#endif /* DAHL_CATALOGUE_H */

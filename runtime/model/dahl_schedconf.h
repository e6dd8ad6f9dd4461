/* The scheduler of a run, by name, without StarPU: the scheduling policies StarPU 1.3.10 predefines, and
 * what configures dahl's heteroprio (buckets per task type, priority lists from a file or from
 * AutoHeteroprio, dahl_autoprio.h). What the names mean at run time is runtime/dahl_sched.c's and StarPU's;
 * tests/test_model.c checks the policy names against StarPU's own table. */
#ifndef DAHL_SCHEDCONF_H
#define DAHL_SCHEDCONF_H

#include "dahl_autoprio.h"

#include <stdbool.h>
#include <stddef.h>

/* StarPU 1.3.10's predefined scheduling policies ("eager", "lws", "dmda", ...), in StarPU's order (static,
 * *n entries). */
const char *const *dahl_sched_policies(size_t *n);
/* True when name is one of them. */
bool dahl_sched_policy_known(const char *name);
/* Their names, comma-separated, into buf (for error messages and --help). */
void dahl_sched_policy_list(char *buf, size_t size);

#define DAHL_HETEROPRIO_MAX_TYPES 64

struct dahl_heteroprio_conf {
    bool autoprio;                         /* AutoHeteroprio; else the manual lists below */
    enum dahl_autoprio_heuristic heuristic;
    int interval;                          /* auto: recompute every interval-th pushed task (default 32) */
    /* One bucket per perf-model symbol and footprint ("dahl_conv2d_forward:34788a98"): tasks of one codelet
     * but different shapes (the two convolutions of LeNet) get their own priority and slow factor. Manual
     * lists still name symbols: a symbol stands for all its buckets, in their order of appearance. */
    bool by_footprint;
    /* Manual lists: type names (perf-model symbols, e.g. "dahl_conv2d_forward"), most wanted first. A type
     * run by the program but on neither list is appended to the lists of the architectures that can run
     * it; a type on one list only never runs on the other architecture. */
    int n[DAHL_NARCH];
    char names[DAHL_NARCH][DAHL_HETEROPRIO_MAX_TYPES][64];
};

/* Parses "auto:<heuristic>" or "auto:<heuristic>/footprint" (by_footprint) into conf (interval 32); false
 * when text is not of that form. */
bool dahl_heteroprio_parse_auto(const char *text, struct dahl_heteroprio_conf *conf);

#endif /* DAHL_SCHEDCONF_H */

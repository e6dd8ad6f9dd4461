/* Shared by dahlsim_plan.c (the search) and dahlsim_plan_tables.c (the tables it searches over) only. */
#ifndef DAHLSIM_PLAN_INTERNAL_H
#define DAHLSIM_PLAN_INTERNAL_H

#include "dahlsim_plan.h"

#include "dahlsim_experiment.h"

#include <stddef.h>

/* One group's predictions over every share s in [0, batch]. */
struct table {
    const struct dahlsim_node_group *g;
    double *t;           /* t[s]: the step time of one node training s samples, made non-decreasing in s, as a
                            node of a multi-node run: its progression thread's turns charged (dahlsim_plan.h) */
    double *dyn_j;       /* dyn_j[s]: the node's joules per step above its idle watts x t[s] */
    double *alone_t;     /* the same of the node alone (no request, no turns): a group of one node, which a */
    double *alone_dyn_j; /* candidate may use alone; NULL: as t and dyn_j (no turns to charge, or a group of more) */
    double idle_w;       /* every host of the node idle; < 0: the machine has no power figures */
    double *frac;        /* frac[s]: how far into its compute the node has its dense layers' gradients */
};

/* qsort's comparison of doubles, ascending. */
int dahlsim_plan_cmp_double(const void *a, const void *b);
/* The group's machine as an experiment of x's network (what the lab's prediction reads). */
void dahlsim_plan_group_experiment(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g,
                                   struct dahlsim_experiment *out);
/* Fills group g's table for every share of x's batch, by conf's predictor. Returns 0, or a negative errno with
 * the reason in err. */
int dahlsim_plan_table_fill(const struct dahlsim_experiment *x, const struct dahlsim_plan_conf *conf,
                            const struct dahlsim_node_group *g, struct table *tb, char *err, size_t err_size);

#endif /* DAHLSIM_PLAN_INTERNAL_H */

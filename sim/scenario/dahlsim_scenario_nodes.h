/* The multi-node keys of a scenario, for dahlsim_scenario.c: "nodes" and "batch_per_node" (nodes of the
 * experiment's machine, an equal share each), or "node_groups" (nodes of several machines, each group with
 * its own share of every step: a data partition), and "network" between them. */
#ifndef DAHLSIM_SCENARIO_NODES_H
#define DAHLSIM_SCENARIO_NODES_H

#include "dahlsim_experiment.h"
#include "dahlsim_scenario_fields.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* The multi-node keys of o into x (nodes, groups, network), once batch and samples are known; x->nodes stays
 * 0 without them. False after an error line naming the file and the field. */
bool dahlsim_scenario_nodes_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x);

/* The fewest samples a node trains in a step: batch / nodes, the smallest group share, or the batch with
 * one node. */
long dahlsim_scenario_min_share(const struct dahlsim_experiment *x);

/* Defined in dahlsim_scenario.c: the checks of x's machine (x->machine, x->machine_dir) that the scenario's
 * "machine" gets: its platform bounds "cpus" and "gpus" of o (absent: all), every perf model is there, its
 * manifest covers x's setup, and its measured costs are valid (into x). False after an error line. */
bool dahlsim_scenario_machine_checks(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x);

#endif /* DAHLSIM_SCENARIO_NODES_H */

/* Scaling figures of a node-count sweep (`dahlsim sweep` on a scenario that sweeps "nodes"): speedup and
 * parallel efficiency against the node count, and what each simulation cost in wall time. */
#ifndef DAHLSIM_SCALING_H
#define DAHLSIM_SCALING_H

#include "dahlsim_scenario.h"

/* Reads dir/results.jsonl and writes dir/plots/scaling.csv and, with gnuplot, dir/plots/speedup-vs-nodes,
 * efficiency-vs-nodes and sim-wall-vs-nodes (.png, .svg). A series is the set of points that differ only in
 * "nodes" (named by their other swept keys); its baseline is its smallest node count n0, and
 *     speedup(n) = samples_per_s(n) / samples_per_s(n0),   efficiency(n) = speedup(n) * n0 / n
 * which is T(n0) / T(n) for strong scaling (a fixed global batch: the same samples) and the scaled speedup
 * for weak scaling (a fixed per-node batch). Returns 0, or 1 when a file or gnuplot failed. */
int dahlsim_scaling_write(const char *dir, const struct dahlsim_scenario *s);

#endif /* DAHLSIM_SCALING_H */

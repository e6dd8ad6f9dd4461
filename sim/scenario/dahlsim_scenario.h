/* Scenario files (JSON files in scenarios/): one simulated experiment each, plus an optional "sweep" block whose
 * lists form a grid of experiments. Parsing is strict: an unknown key, a wrong type or an impossible value
 * (more CPUs than the machine's platform has, a scheduler StarPU does not know, a shape the machine's
 * calibration does not cover) is an error naming the file and the field. The keys, their types and defaults
 * are documented in scenarios/README.md and at the top of dahlsim_scenario.c. */
#ifndef DAHLSIM_SCENARIO_H
#define DAHLSIM_SCENARIO_H

#include "dahlsim_experiment.h"
#include "dahlsim_grain.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_SCENARIO_MAX_SWEEP 8

struct dahlsim_scenario;

/* Loads path, applies the "key=value" overrides in sets (value: JSON, or a bare string), and checks the
 * base experiment and every sweep point. NULL after printing one error line (and a hint line) on stderr. */
struct dahlsim_scenario *dahlsim_scenario_load(const char *path, const char *const *sets, size_t nsets);
/* The same for a scenario made in memory: root (owned from now on, freed even on failure), named by `name` in
 * error lines (e.g. "train --grain auto"). */
struct dahlsim_scenario *dahlsim_scenario_from_json(const char *name, cJSON *root, const char *const *sets,
                                                    size_t nsets);
void dahlsim_scenario_destroy(struct dahlsim_scenario *s);

/* The scenario's "comment" (the question it answers), or "". */
const char *dahlsim_scenario_comment(const struct dahlsim_scenario *s);
const char *dahlsim_scenario_path(const struct dahlsim_scenario *s);

/* Points of the grid (1 without sweep), in a fixed order (the last sweep key varies fastest). */
size_t dahlsim_scenario_points(const struct dahlsim_scenario *s);
/* Point i, resolved. */
const struct dahlsim_experiment *dahlsim_scenario_point(const struct dahlsim_scenario *s, size_t i);
/* The swept keys (static strings owned by s), *n of them. */
const char *const *dahlsim_scenario_sweep_keys(const struct dahlsim_scenario *s, size_t *n);

/* The coverage key of a dataset name: dahl_dataset_name_shape (dahl_dataset_name.h). */

#endif /* DAHLSIM_SCENARIO_H */

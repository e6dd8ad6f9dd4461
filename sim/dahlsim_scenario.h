/* Scenario files (JSON files in scenarios/): one simulated experiment each, plus an optional "sweep" block whose
 * lists form a grid of experiments. Parsing is strict: an unknown key, a wrong type or an impossible value
 * (more CPUs than the machine's platform has, a scheduler StarPU does not know, a shape the machine's
 * calibration does not cover) is an error naming the file and the field. The keys, their types and defaults
 * are documented in scenarios/README.md and at the top of dahlsim_scenario.c. */
#ifndef DAHLSIM_SCENARIO_H
#define DAHLSIM_SCENARIO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_SCENARIO_MAX_SWEEP 8

/* One fully resolved experiment (a scenario without sweep, or one point of its grid). */
struct dahlsim_experiment {
    char machine[72];
    char machine_dir[PATH_MAX];  /* calibration/NAME */
    char model[PATH_MAX];        /* lenet, deep, deep:N, or a model file (resolved from the scenario's dir) */
    char dataset[64];            /* fashion-mnist or synthetic:HxWxC */
    long samples, batch, epochs;
    char scheduler[48];  /* a policy, or heteroprio:auto-HEURISTIC[/footprint] */
    long cpus, gpus;
    long gpu_memory_mib; /* 0: no limit */
    bool prefetch;
    bool trace;          /* traces of the run into <out>/trace (dahlsim_trace.h) */
    long trace_first, trace_last; /* traced training steps, 0-based inclusive; -1: all */
    char perfmodel[16];  /* history, regression, nl-regression */
    char reduction[8];   /* redux, manual */
    long seed;
    double lr, momentum;
    /* Multi-node ("nodes" present, even 1: StarPU-MPI over SMPI through starpu_smpirun; 0: absent) */
    long nodes;
    char network[160];           /* its description, as results.json records it */
    double network_bps;          /* per link, bits per second */
    double network_latency_s;    /* per link */
    char topology[16];           /* flat, fat-tree, torus */
    /* "measured": the costs below come from the machine's manifest; "starpu": they stay off (0, 0, 0, -1)
     * and StarPU-SimGrid charges its own fixed costs. */
    char runtime_costs[16];
    /* The machine's measured cost of the thread submitting the tasks, for this dataset's image shape (its
     * manifest's "submission", written by dahlsim calibrate); 0: none (roofline machines, older
     * calibrations: StarPU-SimGrid's own 1 us sleep per task then). */
    double submit_us_per_task, input_copy_bytes_per_s;
    /* The machine's measured cost per push of this scheduler with these workers (its manifest's
     * "scheduling"); 0: none measured (StarPU-SimGrid gives the policy's own work no time). */
    double sched_push_us;
    /* ... and the workers' measured cost per task that the simulation charges in place of StarPU-SimGrid's
     * per-input cost (its "scheduling.worker_us"); < 0: none measured. */
    double worker_us;
    char point[512];     /* "batch=4 scheduler=dmda" for a sweep point, "" otherwise */
};

struct dahlsim_scenario;

/* Loads path, applies the "key=value" overrides in sets (value: JSON, or a bare string), and checks the
 * base experiment and every sweep point. NULL after printing one error line (and a hint line) on stderr. */
struct dahlsim_scenario *dahlsim_scenario_load(const char *path, const char *const *sets, size_t nsets);
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

/* The image shape of a dataset name, "HxWxC" ("28x28x1" for fashion-mnist), into buf. */
void dahlsim_dataset_shape(const char *dataset, char *buf, size_t size);

#endif /* DAHLSIM_SCENARIO_H */

/* The GPU-sharing emulator of the scheduler lab (issue 20, item 3; its commands are `dahlsim dag share` and
 * `dahlsim dag share-export`, sim/cmd/dag_share.c): several training jobs take turns on ONE GPU whose memory
 * is smaller than their summed data, tensors move over a full-duplex PCIe link, and the order of the jobs'
 * steps decides how much of the transfers hide under compute. Deterministic, StarPU-free, no global state.
 * Ownership: a dahlsim_share owns its jobs' tensor arrays (dahlsim_share_fini), a result its order array. */
#ifndef DAHLSIM_SHARE_H
#define DAHLSIM_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

#define DAHLSIM_SHARE_MAX_JOBS 64

/* The model (docs/scheduler-lab.md, "GPU sharing emulator"):
 * - The GPU runs job-steps, one at a time: step k of job j needs every tensor of job j on the GPU, starts at
 *   the earliest when step k-1 of j ended plus host_s (j's CPU part; start_s for k = 0) and lasts compute_s.
 *   A job's tensors are its own.
 * - The link: one tensor per transfer, latency_s + bytes / bandwidth each, host->GPU and GPU->host two
 *   independent FIFO channels. A step writing a tensor makes it dirty on the GPU: evicting it queues a
 *   write-back on the GPU->host channel and its space is free when the write-back ends; a clean tensor's
 *   space is free at once. A tensor evicted dirty is loaded again only after its write-back.
 * - Loads of a step are issued in tensor order at one time: the time the GPU reaches the step (max(end of
 *   the previous step in the order, the step's ready time)); with prefetch, earlier: when the previous step
 *   starts computing (not before the job's start_s). A load that needs space evicts victims (the policy's
 *   choice) among tensors of neither the computing step's job nor the loading step's job; a prefetch that
 *   cannot make room stops and its remaining tensors load when the GPU reaches the step.
 * - The next job-step of a dynamic order is decided when the previous one starts computing.
 * - makespan_s is the end of the last compute (write-backs of dirty data after it are not counted). */

struct dahlsim_share_tensor {
    uint64_t bytes;
    bool written;   /* a step writes it (weights, gradients, activations): evicting it costs a write-back */
    char name[48];  /* optional, informational ("conv1.params") */
};

struct dahlsim_share_job {
    char name[64];
    int steps;           /* iterations */
    int batch;           /* samples per step, 0: unknown (informational) */
    int priority;        /* higher first where an order has a choice: round-robin's cycle, fifo's and
                            weight's ties */
    double start_s;      /* arrival */
    double compute_s;    /* GPU time of one step */
    double host_s;       /* time off the GPU between two of its steps */
    int ntensors;
    struct dahlsim_share_tensor *tensors;
};

struct dahlsim_share {
    uint64_t memory_bytes;
    double bandwidth_bytes_per_s, latency_s;
    int njobs;
    struct dahlsim_share_job jobs[DAHLSIM_SHARE_MAX_JOBS];
    char source[512];    /* where the file comes from ("" when unknown) */
};

void dahlsim_share_fini(struct dahlsim_share *s);
/* A job's tensor bytes (what one of its steps needs on the GPU). */
uint64_t dahlsim_share_job_bytes(const struct dahlsim_share_job *j);
/* Checks s for an emulation: jobs, steps, times, link, and a memory at least every job's data. memory_field
 * names where the memory came from in the message ("x.json: \"gpu_memory_bytes\"", "--memory-mib"). Returns 0
 * or -EINVAL with the reason in err. */
int dahlsim_share_check(const struct dahlsim_share *s, const char *memory_field, char *err, size_t err_size);

/* Files: {"format": "dahlsim-share-1", "gpu_memory_bytes": N (or "gpu_memory_mib": N), "link":
 * {"bandwidth_bytes_per_s": x, "latency_s": y}, "jobs": [{"name": "a", "steps": 8, "start_s": 0,
 * "priority": 0, "batch": 32, "compute_s": 0.01, "host_s": 0.002, "tensors": [{"bytes": 1000, "written":
 * true, "name": "w"}, ...]}], "source": "..."}; "start_s", "priority", "batch", "host_s", "name" of a tensor
 * and "source" are optional. Unknown keys are errors; errors name the file and the field. Load then checks
 * the file (dahlsim_share_check). */
int dahlsim_share_load(const char *path, struct dahlsim_share *s, char *err, size_t err_size);
int dahlsim_share_save(const struct dahlsim_share *s, const char *path, char *err, size_t err_size);

/* Eviction policies: which resident tensor makes room.
 * - LRU: the least recently used (by the start of a job-step, or its load); ties: lower tensor index.
 * - STARPU: StarPU 1.3.10's memalloc.c at job-step granularity: the mc_list order (a tensor goes to the back
 *   when it is allocated and when a step's fetch finds it loaded: _starpu_memchunk_recently_used on a cache
 *   hit; one still loading at the fetch stays where it is); a load first reuses the first tensor of the
 *   same size in that order (try_to_reuse_potentially_in_use_mc), else evicts from the head every evictable
 *   tensor until twice its size is freed (starpu_memstrategy_data_size_coefficient = 2,
 *   free_potentially_in_use_mc); a prefetch never evicts (it loads only into free memory).
 * - BELADY: Belady's MIN, the tensor whose next use is furthest (never: first); ties: clean first, then lower
 *   index. It needs the whole order: dynamic orders are run once under LRU and their realised order is
 *   replayed under MIN. */
enum dahlsim_share_policy { DAHLSIM_SHARE_LRU, DAHLSIM_SHARE_STARPU, DAHLSIM_SHARE_BELADY, DAHLSIM_SHARE_NPOLICIES };

/* Orders: which job-step the GPU runs next.
 * - FIFO (dynamic): the job whose next step is ready earliest (ties: higher priority, then lower job index).
 * - ROUND_ROBIN: one step of each unfinished job in turn, by decreasing priority, then job index.
 * - WEIGHT (dynamic): the study's heuristic; per job over its last `window` steps reward = compute / (compute
 *   + idle), idle being the time between the end of its previous step (its start_s for step 0) and the
 *   step's start; no step yet: reward 1; penalty = its missing bytes / bandwidth + latency per missing
 *   tensor (before its first step: its whole data); weight = reward / penalty (penalty 0: infinite). The
 *   unfinished jobs that have arrived (none: those arriving first) are sorted by weight, largest first (ties:
 *   smaller penalty, then higher priority, then lower index), and taken largest, smallest, next largest...:
 *   one step each, then the weights are recomputed.
 * - GA: the genetic search (dahlsim_share_ga).
 * - GIVEN: an explicit sequence of job indices; the k-th occurrence of job j is its step k.
 * Static orders (round-robin, GA, given) are strict: when the next job-step is not ready the GPU waits. */
enum dahlsim_share_order {
    DAHLSIM_SHARE_FIFO, DAHLSIM_SHARE_ROUND_ROBIN, DAHLSIM_SHARE_WEIGHT, DAHLSIM_SHARE_GA, DAHLSIM_SHARE_GIVEN,
    DAHLSIM_SHARE_NORDERS
};

const char *dahlsim_share_policy_name(enum dahlsim_share_policy p);
const char *dahlsim_share_order_name(enum dahlsim_share_order o);
/* Parses a name; false (and the valid names in err) when it is none. */
bool dahlsim_share_policy_parse(const char *text, enum dahlsim_share_policy *p, char *err, size_t err_size);
bool dahlsim_share_order_parse(const char *text, enum dahlsim_share_order *o, char *err, size_t err_size);

struct dahlsim_share_conf {
    enum dahlsim_share_policy policy;
    bool prefetch;
    int window;          /* WEIGHT's window in steps (default 4) */
};

struct dahlsim_share_job_result {
    double end_s, compute_s, wait_for_data_s;
    long steps, samples;
    uint64_t h2d_bytes, d2h_bytes;
    long h2d_count, d2h_count, evictions;
};

struct dahlsim_share_result {
    double makespan_s;
    double busy_fraction;    /* GPU compute / makespan */
    double wait_for_data_s;  /* GPU idle while the next step was ready but its data not yet loaded */
    struct dahlsim_share_job_result total;
    int njobs;
    struct dahlsim_share_job_result jobs[DAHLSIM_SHARE_MAX_JOBS];
    int norder;
    int *order;              /* the realised order: job indices, one per job-step (owned) */
};
void dahlsim_share_result_fini(struct dahlsim_share_result *r);

/* Emulates s under conf with order (not GA; GIVEN: given[0 .. ngiven-1]). Returns 0, or -EINVAL (a given
 * order with a job index out of range or the wrong count of a job, named in err) or -ENOMEM. */
int dahlsim_share_run(const struct dahlsim_share *s, const struct dahlsim_share_conf *conf,
                      enum dahlsim_share_order order, const int *given, int ngiven, struct dahlsim_share_result *r,
                      char *err, size_t err_size);

/* Checks that order[0 .. n-1] holds each job exactly its steps times. Returns 0 or -EINVAL naming the job. */
int dahlsim_share_order_check(const struct dahlsim_share *s, const int *order, int n, char *err, size_t err_size);
/* Reads a given order: a JSON array of job indices or names, or a `dahlsim dag share` result (its "order").
 * The order is malloc'ed into *order (the caller frees it), its length in *n, and checked. */
int dahlsim_share_order_load(const char *path, const struct dahlsim_share *s, int **order, int *n, char *err,
                             size_t err_size);

/* The genetic search over orders (the study's): a population of `population` orders (the fifo, round-robin
 * and weight realised orders, then seeded shuffles), each generation keeps the `select` fastest (ties: the
 * earlier) and fills the rest with children of two kept parents: a prefix of random length of parent 2, then
 * parent 1's remaining job-steps in parent 1's order (job-steps are (job, occurrence), so a child keeps each
 * job's step order), mutated with probability `mutation` by moving one element to a random position. Stops
 * after `generations` generations or `patience` generations without a faster order. */
struct dahlsim_share_ga_conf {
    int population;   /* >= 2 (default 32) */
    int select;       /* in [1, population] (default population / 4) */
    int generations;  /* default 50 */
    int patience;     /* default 10 */
    double mutation;  /* in [0, 1] (default 0.2) */
    uint64_t seed;
};
struct dahlsim_share_ga_stats {
    int generations;
    long evaluations;
};
/* Fills ga with the defaults above. */
void dahlsim_share_ga_defaults(struct dahlsim_share_ga_conf *ga);
/* Runs the search; best gets the best order's emulation. Returns 0, -EINVAL (a bad ga conf, in err) or
 * -ENOMEM. */
int dahlsim_share_ga(const struct dahlsim_share *s, const struct dahlsim_share_conf *conf,
                     const struct dahlsim_share_ga_conf *ga, struct dahlsim_share_result *best,
                     struct dahlsim_share_ga_stats *stats, char *err, size_t err_size);

/* The result as a JSON object ("format": "dahlsim-share-result-1", the settings, totals, per job, order);
 * ga_stats may be NULL. NULL when out of memory. cJSON_Delete it. */
struct cJSON *dahlsim_share_result_json(const struct dahlsim_share *s, const struct dahlsim_share_conf *conf,
                                        const char *order, const struct dahlsim_share_result *r,
                                        const struct dahlsim_share_ga_stats *ga_stats);

/* One job of share-export: a dahl network trained on a calibration (dahlsim_dag_export with 0 CPUs and 1
 * GPU): compute_s is the sum of one step's tasks' GPU costs, the tensors those runtime/dahl_network.c
 * registers, grouped per layer (see share_export.c). */
struct dahlsim_share_export_job {
    const char *name;
    const char *model;   /* lenet, deep, deep:N */
    int c, h, w;         /* image shape */
    int batch, steps, priority;
    double host_s, start_s;
};
struct dahlsim_share_export_conf {
    const char *machine_dir, *machine;
    bool momentum;
    int perfmodel;       /* enum dahl_perfmodel_kind */
};
/* Appends one job to s (njobs < DAHLSIM_SHARE_MAX_JOBS). Returns 0, -EINVAL or -ENOMEM with err. */
int dahlsim_share_export_job(const struct dahlsim_share_export_conf *conf, const struct dahlsim_share_export_job *job,
                             struct dahlsim_share *s, char *err, size_t err_size);
/* The RAM->CUDA0 link of calibration machine_dir's SimGrid platform (sampling/bus/MACHINE.platform.v4.xml).
 * Returns 0, -ENOENT or -EINVAL with the file and reason in err. */
int dahlsim_share_platform_link(const char *machine_dir, const char *machine, double *bandwidth_bytes_per_s,
                                double *latency_s, char *err, size_t err_size);

#endif /* DAHLSIM_SHARE_H */

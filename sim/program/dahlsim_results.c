/* Writing results.json, the one record of a training run, native or simulated. Keys come out in the order
 * below; numbers with full precision (cJSON writes the shortest form that reads back exactly).
 *
 *   schema            1 (bumped on any incompatible change)
 *   mode              "native" | "simulated"
 *   scenario          scenario file, or null (native runs)
 *   model             "lenet" | "deep" | "deep:BLOCKS" | model file
 *   dataset           "fashion-mnist" | "synthetic:HxWxC"
 *   scheduler         StarPU policy name, or heteroprio:auto-HEURISTIC[/footprint] (AutoHeteroprio, as
 *                     scenarios name it)
 *   sched_gamma       null, or the scenario's sched_gamma: the dm* policies weighed each task's joules
 *                     (the codelets' energy models) at this many microseconds a joule
 *   heteroprio        null, or with --sched heteroprio {"priorities": "auto:HEURISTIC[/footprint]" or the
 *                     lists file, "buckets": "symbol" | "footprint", "interval" (0: manual lists), "types",
 *                     "recomputes", "lists": {"cpu": [bucket...], "cuda": [...]}}: the priority lists in
 *                     force at the end, first wanted first
 *   batch             samples per training step
 *   grain             samples per layer task (1: one task per sample; the batch: one per layer and step;
 *                     0: each job's batch, with several jobs)
 *   grain_choice      how "grain": "auto" chose the grain (the candidates and predicted step times,
 *                     dahlsim_grain.h), or null
 *   pipeline          {"depth", "schedule", "staleness", "weight_versions"}: training steps in flight
 *                     (PipeDream-like, 1: synchronous SGD), fill or 1f1b, how many updates behind the
 *                     latest the weights a step's passes read are (depth - 1), and the copies of the
 *                     weights kept (the latest and one stash per step in flight)
 *   image             {"c", "h", "w"}
 *   workers           {"cpu": n, "cuda": n}
 *   reduction         "redux" | "manual"
 *   perfmodel         "history" | "regression" | "nl-regression"
 *   kernel_models     which of the calibration's perf models a simulation read, when not those measured
 *                     with every core a worker (dahlsim_kernels.h): one CPU worker's, or a blend; else null
 *   epochs, iterations (training steps, all epochs), samples (training samples per epoch)
 *   makespan_s        training time of all epochs, evaluation excluded, on StarPU's clock (simulated
 *                     time in simulated runs)
 *   iteration_times_s one per step: the time between the completion of its SGD updates and the previous
 *                     step's (the first step of an epoch: since the epoch's start)
 *   samples_per_s     iterations * batch / makespan_s
 *   energy            null, or (simulated on a platform with power figures) {"source" (where the watts come
 *                     from: "spec sheet" for `machine synth`'s), "model", "total_j", "per_sample_j", "hosts":
 *                     {"CPU0": joules, ...}}: SimGrid's host energy plugin over the training phases, the
 *                     same span as makespan_s; every host of the node counts, used or idle. Several nodes:
 *                     every node's hosts ("StarPU-MPI<rank>-CPU0", ...), "per_node_j" in rank order, and
 *                     null unless every node's machine has power figures
 *   steady_state      null, or (a scenario's "steady_state") {"warmup", "tolerance", "criterion", "epochs":
 *                     [{"epoch", "simulated_steps", "extrapolated_steps", "step_s"}], "extrapolated_steps",
 *                     "extrapolated_s", "what"}: each epoch's steps were simulated until the rest, counted at
 *                     the mean step, could change its time by at most the tolerance (95 %, by the standard
 *                     error of 8 blocks of steps after the first `warmup`) and the memory peak stopped
 *                     growing. makespan_s, iteration_times_s (the
 *                     extrapolated steps at that mean), samples_per_s and energy include them; tasks,
 *                     workers_detail, links and memory cover the simulated steps only
 *   epochs_detail     [{"epoch", "loss", "train_accuracy", "test_accuracy", "time_s", "eval_s"}], accuracies
 *                     as fractions in [0, 1]; simulated runs compute no loss or accuracy and evaluate
 *                     nothing: those are null there (cJSON writes a NaN as null)
 *   tasks             {"per_codelet": {symbol: n}, "per_arch": {"cpu": n, "cuda": n}}: training tasks only;
 *                     per_codelet counts dahl's tasks at submission, per_arch the tasks workers executed
 *                     (StarPU's own REDUX init/reduction tasks included)
 *   workers_detail    [{"id", "name", "arch", "tasks", "busy_s", "idle_s", "sleeping_s", "total_s"}] over
 *                     the training phases; idle_s = total_s - busy_s
 *   links             [{"src", "dst", "bytes", "transfers"}]: data moved over each bus link of StarPU's
 *                     (memory node names, e.g. "RAM" -> "CUDA 0") during training, from StarPU's bus
 *                     profiling; [] when the machine has one memory node
 *   memory_nodes      [{"id", "name", "kind", "peak_bytes", "starpu_peak_bytes", "app_bytes", "capacity_bytes"}]
 *                     per memory node: starpu_peak_bytes is the most StarPU's memory manager had allocated
 *                     there during training (replicas, REDUX copies, scratch buffers; sampled at every task
 *                     end), app_bytes what dahl registered itself (its tensors in main RAM), peak_bytes their
 *                     sum; capacity_bytes the node's memory as StarPU sees it (-1 unknown)
 *   nodes             (multi-node runs only, from here to network) number of nodes, one MPI rank each; the
 *                     figures above then cover all nodes: batch is the global batch (batch / nodes per
 *                     node), tasks.per_codelet and tasks.per_arch are summed over the nodes, makespan_s and
 *                     iteration_times_s follow the slowest node; workers_detail is rank 0's (every node's
 *                     is in nodes_detail)
 *   partition         (multi-node) {"kind": "data"}, each node its share of every step, or {"kind": "pipeline",
 *                     "cuts": [L, ...]}, every node a stage of layers from its cut (the first from layer 0),
 *                     all of every step's samples; its bytes and messages below are then the stages'
 *                     activations and gradients, not an allreduce's; or {"kind": "hybrid", "replicas": R,
 *                     "cuts"}: R nodes a stage (ranks stage by stage) splitting its samples, their stage's
 *                     gradients all-reduced among them (both kinds of traffic counted)
 *   mpi_progress_core (multi-node) "auto", "shared" or "dedicated": where each rank's StarPU-MPI progression
 *                     thread runs (runtime/dahl_progress.h); nodes_detail's mpi_progress says what it cost
 *   mpi_progress_phase (where the scenario sets it) the share of their period the turns were shifted by
 *   representative_ranks (with the scenario key) {"representatives", "light", "late_s", "late_gradients"}:
 *                     StarPU ran on the representatives only; the light ranks exchanged gradients at their
 *                     representative's ready times, shifted by their own start of each step; late_s sums how
 *                     much later than that they could start (0 where the symmetry holds); a light rank's
 *                     nodes_detail entry is its representative's, but for its step times
 *   nodes_detail      [{"rank", "machine", "share", "bytes_sent", "bytes_received", "messages_sent",
 *                     "messages_received", "comm_s", "allreduce_tasks", "tasks", "busy_s", "mpi_progress",
 *                     "workers_detail"}], in rank order: per node, its machine (null natively) and the samples
 *                     of every step it trains (its share of the batch), the gradient allreduce's traffic
 *                     (bytes counted at submission), comm_s its summed time (below), the accumulate tasks it
 *                     added, the tasks and busy time of the node's workers, its progression thread
 *                     {"charged", "share", "requests", "pending_s", "cpu_s", "turn_wait_s"} (the point-to-point
 *                     requests the node submitted; the time with one pending, null where not timed (a
 *                     simulated node not charged); the thread's CPU time, natively read from /proc for the
 *                     whole run, null where the thread was not found, simulated its turns on the workers'
 *                     cores while a request was pending (charged true; share: its part of each worker core,
 *                     1 / (cores + 1)); and turn_wait_s, its waits for a turn before handling requests, 0
 *                     natively), and those workers as workers_detail lists them (ids and names are the
 *                     node's own)
 *   network           {"allreduce": "tree", "description": the scenario's network or null, "bytes_sent" (all
 *                     nodes), "comm_s_mean" (mean of the nodes' comm_s), "allreduce_s_mean",
 *                     "allreduce_s_per_iteration"}: a step's allreduce time on a node runs from its first
 *                     gradient being ready to its last gradient holding the global sum; per iteration the
 *                     slowest node's
 *   submission        the thread that submits the tasks: native {"thread_cpu_s", "thread_wait_s", "tasks",
 *                     "input_copy_bytes", "input_copy_cpu_s", "us_per_task", "input_copy_bytes_per_s"}, its CPU
 *                     time over the training phases, its time runnable but waiting for a core in them (the
 *                     kernel's run_delay; null where /proc has no schedstat), us_per_task not counting the
 *                     image copies; simulated {"us_per_task",
 *                     "input_copy_bytes_per_s" (null: not charged), "charged_on": "own core" | "worker
 *                     cores" | "not charged", "core_share": on worker cores the most of a core it runs at,
 *                     the worker busy or idle (0.5: an idle native worker spins), else null}, the
 *                     calibration's measured cost and where it was charged
 *   scheduling        the policy's push_task calls over the whole run (evaluation included), from worker
 *                     threads (a task whose last dependency a worker released) and from others (the
 *                     submitting thread): native {"worker_pushes", "worker_push_us", "worker_slow_pushes",
 *                     "other_pushes", "other_push_us", "other_slow_pushes", "worker_us_per_task"}, the mean
 *                     wall time per call leaving out calls over 100 us (counted as slow); simulated
 *                     {"worker_pushes", "other_pushes", "push_us_charged" (null: not charged),
 *                     "worker_us_per_task", "worker_us_charged" (null: StarPU-SimGrid's own costs)}, the
 *                     calibration's figures slept after each worker push and each task popped; null when the
 *                     run used StarPU's default policy. worker_us_per_task: over the training phases, the
 *                     workers' time from popping a task to asking for the next one, less the tasks'
 *                     execution (busy) and the pushes they made, per task executed: the runtime's own cost
 *                     per task (input fetch, job start and termination, dependency release); null under
 *                     random and pheft, which have no pop_task
 *   seed
 *   versions          {"dahlsim", "starpu", "starpu_build" (the StarPU install, as scripts/setup-deps names it:
 *                     version, flavour and a key of its configure flags and patches), "simgrid" (SimGrid
 *                     builds only), "compiler", "commit", "openblas"}
 *   wall_s            the whole process; peak_rss_kib: getrusage's maximum resident set size
 *   maps_first_step, maps_peak  the process's memory mappings after the first training step and at their
 *                     peak (sampled every 0.5 s of wall time): a simulation whose mappings grow step after
 *                     step dies at vm.max_map_count. These three vary from run to run.
 *   jobs              (several jobs sharing the machine, "workloads", only) {"order", "window", "contexts", "prefetch",
 *                     "gpu_busy_fraction", "total": IO, "sequence": [job index of each job-step as it ran],
 *                     "detail": [{"name", "model", "dataset", "batch", "steps", "start_s", "first_s", "end_s",
 *                     "samples_per_s", "loss_first", "loss_last", IO...}]}, IO being "h2d_bytes", "d2h_bytes",
 *                     "h2d_transfers", "d2h_transfers", "evictions" (replicates dropped from a GPU to make
 *                     room), "gpu_tasks", "gpu_busy_s", "gpu_wait_s" (GPU workers waiting for the job's
 *                     input data); total also counts StarPU's own buffers (REDUX copies). Times since the
 *                     run's start; losses null in simulation. The top-level figures then cover all jobs:
 *                     iterations = job-steps, samples = their samples, batch the largest job's. */
#include "dahlsim_results.h"
#include "dahlsim_fs.h"

#include "dahl_kernels.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dahlsim_commit.h" /* DAHLSIM_COMMIT, stamped by every build */
#ifndef DAHLSIM_STARPU_BUILD
#define DAHLSIM_STARPU_BUILD "unknown"
#endif

/* Every cJSON_Add* returns NULL (or false) when memory runs out: CHK makes that a NULL document. */
#define CHK(call)                                                                                            \
    do {                                                                                                     \
        if (!(call))                                                                                         \
            goto nomem;                                                                                      \
    } while (0)

/* Adds the "submission" object to root; NULL when memory runs out. */
static cJSON *submission_json(cJSON *root, const struct dahlsim_results *r)
{
    const struct dahlsim_results_submission *s = &r->submission;
    cJSON *o = cJSON_AddObjectToObject(root, "submission");
    if (o == NULL)
        return NULL;
    bool ok;
    if (strcmp(r->mode, "native") == 0) {
        ok = cJSON_AddNumberToObject(o, "thread_cpu_s", s->thread_cpu_s) &&
             (s->thread_wait_s >= 0 ? cJSON_AddNumberToObject(o, "thread_wait_s", s->thread_wait_s)
                                    : cJSON_AddNullToObject(o, "thread_wait_s")) &&
             cJSON_AddNumberToObject(o, "tasks", (double)s->tasks) &&
             cJSON_AddNumberToObject(o, "input_copy_bytes", s->copy_bytes) &&
             cJSON_AddNumberToObject(o, "input_copy_cpu_s", s->copy_cpu_s) &&
             cJSON_AddNumberToObject(o, "us_per_task", s->us_per_task) &&
             cJSON_AddNumberToObject(o, "input_copy_bytes_per_s", s->copy_bytes_per_s);
    } else {
        ok = (s->us_per_task > 0 ? cJSON_AddNumberToObject(o, "us_per_task", s->us_per_task)
                                 : cJSON_AddNullToObject(o, "us_per_task")) &&
             (s->copy_bytes_per_s > 0 ? cJSON_AddNumberToObject(o, "input_copy_bytes_per_s", s->copy_bytes_per_s)
                                      : cJSON_AddNullToObject(o, "input_copy_bytes_per_s")) &&
             cJSON_AddStringToObject(o, "charged_on", s->charged_on != NULL ? s->charged_on : "not charged") &&
             (s->core_share > 0 ? cJSON_AddNumberToObject(o, "core_share", s->core_share)
                                : cJSON_AddNullToObject(o, "core_share"));
    }
    return ok ? o : NULL;
}

/* Adds the "scheduling" object (or null) to root; false when memory runs out. */
static bool scheduling_json(cJSON *root, const struct dahlsim_results *r)
{
    const struct dahlsim_results_scheduling *s = &r->scheduling;
    if (!s->counted)
        return cJSON_AddNullToObject(root, "scheduling") != NULL;
    cJSON *o = cJSON_AddObjectToObject(root, "scheduling");
    if (o == NULL || !cJSON_AddNumberToObject(o, "worker_pushes", (double)s->worker_pushes))
        return false;
    if (strcmp(r->mode, "native") == 0)
        return cJSON_AddNumberToObject(o, "worker_push_us", s->worker_push_us) &&
               cJSON_AddNumberToObject(o, "worker_slow_pushes", (double)s->worker_slow) &&
               cJSON_AddNumberToObject(o, "other_pushes", (double)s->other_pushes) &&
               cJSON_AddNumberToObject(o, "other_push_us", s->other_push_us) &&
               cJSON_AddNumberToObject(o, "other_slow_pushes", (double)s->other_slow) &&
               cJSON_AddNumberToObject(o, "worker_us_per_task", s->worker_us_per_task);
    return cJSON_AddNumberToObject(o, "other_pushes", (double)s->other_pushes) &&
           (s->charged_us > 0 ? cJSON_AddNumberToObject(o, "push_us_charged", s->charged_us)
                              : cJSON_AddNullToObject(o, "push_us_charged")) &&
           cJSON_AddNumberToObject(o, "worker_us_per_task", s->worker_us_per_task) &&
           (s->worker_charged_us >= 0 ? cJSON_AddNumberToObject(o, "worker_us_charged", s->worker_charged_us)
                                      : cJSON_AddNullToObject(o, "worker_us_charged"));
}

/* The "heteroprio" object; NULL when memory runs out. */
static cJSON *heteroprio_json(const struct dahlsim_results_heteroprio *hp)
{
    cJSON *o = cJSON_CreateObject(), *lists;
    if (o == NULL)
        return NULL;
    CHK(cJSON_AddStringToObject(o, "priorities", hp->priorities));
    CHK(cJSON_AddStringToObject(o, "buckets", hp->buckets));
    CHK(cJSON_AddNumberToObject(o, "interval", hp->interval));
    CHK(cJSON_AddNumberToObject(o, "types", hp->types));
    CHK(cJSON_AddNumberToObject(o, "recomputes", (double)hp->recomputes));
    CHK(lists = cJSON_AddObjectToObject(o, "lists"));
    static const char *const arch[2] = {"cpu", "cuda"};
    for (int a = 0; a < 2; a++) {
        cJSON *list;
        CHK(list = cJSON_AddArrayToObject(lists, arch[a]));
        for (const char *p = hp->lists[a]; p != NULL && *p != '\0';) {
            size_t len = strcspn(p, ",");
            char name[80];
            snprintf(name, sizeof(name), "%.*s", (int)len, p);
            CHK(cJSON_AddItemToArray(list, cJSON_CreateString(name)));
            p += len + (p[len] == ',');
        }
    }
    return o;
nomem:
    cJSON_Delete(o);
    return NULL;
}

/* A workers_detail array of n workers into parent under key; false when memory runs out. */
static bool workers_json(cJSON *parent, const char *key, const struct dahl_worker_stats *workers, size_t n)
{
    cJSON *wd = cJSON_AddArrayToObject(parent, key);
    if (wd == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        const struct dahl_worker_stats *w = &workers[i];
        cJSON *o = cJSON_CreateObject();
        CHK(cJSON_AddItemToArray(wd, o));
        CHK(cJSON_AddNumberToObject(o, "id", w->id));
        CHK(cJSON_AddStringToObject(o, "name", w->name));
        CHK(cJSON_AddStringToObject(o, "arch", w->arch));
        CHK(cJSON_AddNumberToObject(o, "tasks", (double)w->tasks));
        CHK(cJSON_AddNumberToObject(o, "busy_s", w->busy_s));
        CHK(cJSON_AddNumberToObject(o, "idle_s", w->total_s - w->busy_s));
        CHK(cJSON_AddNumberToObject(o, "sleeping_s", w->sleeping_s));
        CHK(cJSON_AddNumberToObject(o, "total_s", w->total_s));
    }
    return true;
nomem:
    return false;
}

/* "links": bytes and transfers per bus link. */
static bool links_json(cJSON *root, const struct dahlsim_results *r)
{
    cJSON *links;
    CHK(links = cJSON_AddArrayToObject(root, "links"));
    for (size_t i = 0; i < r->nlinks; i++) {
        cJSON *o = cJSON_CreateObject();
        CHK(cJSON_AddItemToArray(links, o));
        CHK(cJSON_AddStringToObject(o, "src", r->links[i].src));
        CHK(cJSON_AddStringToObject(o, "dst", r->links[i].dst));
        CHK(cJSON_AddNumberToObject(o, "bytes", (double)r->links[i].bytes));
        CHK(cJSON_AddNumberToObject(o, "transfers", (double)r->links[i].transfers));
    }
    return true;
nomem:
    return false;
}

/* "memory_nodes": each memory node's peak and capacity. */
static bool memory_json(cJSON *root, const struct dahlsim_results *r)
{
    cJSON *mem;
    CHK(mem = cJSON_AddArrayToObject(root, "memory_nodes"));
    for (size_t i = 0; i < r->nmemory; i++) {
        const struct dahl_profile_memnode *m = &r->memory[i];
        cJSON *o = cJSON_CreateObject();
        CHK(cJSON_AddItemToArray(mem, o));
        CHK(cJSON_AddNumberToObject(o, "id", m->id));
        CHK(cJSON_AddStringToObject(o, "name", m->name));
        CHK(cJSON_AddStringToObject(o, "kind", m->kind));
        CHK(cJSON_AddNumberToObject(o, "peak_bytes",
                                    (double)((m->starpu_peak_bytes > 0 ? m->starpu_peak_bytes : 0) + m->app_bytes)));
        CHK(cJSON_AddNumberToObject(o, "starpu_peak_bytes", (double)m->starpu_peak_bytes));
        CHK(cJSON_AddNumberToObject(o, "app_bytes", (double)m->app_bytes));
        CHK(cJSON_AddNumberToObject(o, "capacity_bytes", (double)m->capacity_bytes));
    }
    return true;
nomem:
    return false;
}

/* "nodes", "nodes_detail" and "network" of a multi-node run. */
static bool nodes_json(cJSON *root, const struct dahlsim_results *r)
{
    CHK(cJSON_AddNumberToObject(root, "nodes", r->nodes));
    CHK(cJSON_AddStringToObject(root, "mpi_progress_core", dahl_progress_core_name(r->mpi_progress_core)));
    if (r->mpi_progress_phase > 0)
        CHK(cJSON_AddNumberToObject(root, "mpi_progress_phase", r->mpi_progress_phase));
    if (r->light > 0) {
        cJSON *rep;
        CHK(rep = cJSON_AddObjectToObject(root, "representative_ranks"));
        CHK(cJSON_AddNumberToObject(rep, "representatives", r->representatives));
        CHK(cJSON_AddNumberToObject(rep, "light", r->light));
        CHK(cJSON_AddNumberToObject(rep, "late_s", r->light_late_s));
        CHK(cJSON_AddNumberToObject(rep, "late_gradients", (double)r->light_late_grads));
    }
    cJSON *part, *cuts;
    CHK(part = cJSON_AddObjectToObject(root, "partition"));
    CHK(cJSON_AddStringToObject(part, "kind", r->partition != NULL ? r->partition : "data"));
    if (r->nstages > 0) {
        if (r->replicas > 1)
            CHK(cJSON_AddNumberToObject(part, "replicas", r->replicas));
        CHK(cuts = cJSON_AddArrayToObject(part, "cuts"));
        for (long s = 0; s + 1 < r->nstages; s++)
            CHK(cJSON_AddItemToArray(cuts, cJSON_CreateNumber((double)r->stage_cuts[s])));
    }
    cJSON *nd;
    CHK(nd = cJSON_AddArrayToObject(root, "nodes_detail"));
    double bytes = 0, comm = 0;
    for (int i = 0; i < r->nodes; i++) {
        const struct dahlsim_results_node *n = &r->nodes_detail[i];
        cJSON *o = cJSON_CreateObject();
        CHK(cJSON_AddItemToArray(nd, o));
        CHK(cJSON_AddNumberToObject(o, "rank", n->rank));
        CHK(n->machine != NULL ? cJSON_AddStringToObject(o, "machine", n->machine) : cJSON_AddNullToObject(o, "machine"));
        CHK(cJSON_AddNumberToObject(o, "share", (double)n->share));
        CHK(cJSON_AddNumberToObject(o, "bytes_sent", n->bytes_sent));
        CHK(cJSON_AddNumberToObject(o, "bytes_received", n->bytes_received));
        CHK(cJSON_AddNumberToObject(o, "messages_sent", (double)n->messages_sent));
        CHK(cJSON_AddNumberToObject(o, "messages_received", (double)n->messages_received));
        CHK(cJSON_AddNumberToObject(o, "comm_s", n->comm_s));
        CHK(cJSON_AddNumberToObject(o, "allreduce_tasks", (double)n->allreduce_tasks));
        CHK(cJSON_AddNumberToObject(o, "tasks", (double)n->tasks));
        CHK(cJSON_AddNumberToObject(o, "busy_s", n->busy_s));
        cJSON *mp;
        CHK(mp = cJSON_AddObjectToObject(o, "mpi_progress"));
        CHK(cJSON_AddBoolToObject(mp, "charged", n->progress.charged));
        CHK(cJSON_AddNumberToObject(mp, "share", n->progress.share));
        CHK(cJSON_AddNumberToObject(mp, "requests", (double)n->progress.requests));
        CHK(n->progress.pending_s >= 0 ? cJSON_AddNumberToObject(mp, "pending_s", n->progress.pending_s)
                                       : cJSON_AddNullToObject(mp, "pending_s"));
        CHK(n->progress.cpu_s >= 0 ? cJSON_AddNumberToObject(mp, "cpu_s", n->progress.cpu_s)
                                   : cJSON_AddNullToObject(mp, "cpu_s"));
        CHK(cJSON_AddNumberToObject(mp, "turn_wait_s", n->progress.turn_wait_s));
        CHK(workers_json(o, "workers_detail", n->workers, n->nworkers));
        bytes += n->bytes_sent;
        comm += n->comm_s;
    }
    cJSON *net;
    CHK(net = cJSON_AddObjectToObject(root, "network"));
    CHK(cJSON_AddStringToObject(net, "allreduce", r->allreduce));
    if (r->network != NULL)
        CHK(cJSON_AddStringToObject(net, "description", r->network));
    else
        CHK(cJSON_AddNullToObject(net, "description"));
    CHK(cJSON_AddNumberToObject(net, "bytes_sent", bytes));
    CHK(cJSON_AddNumberToObject(net, "comm_s_mean", comm / r->nodes));
    double sum = 0;
    cJSON *per;
    CHK(per = cJSON_AddArrayToObject(net, "allreduce_s_per_iteration"));
    for (size_t i = 0; i < r->nallreduce_times; i++) {
        CHK(cJSON_AddItemToArray(per, cJSON_CreateNumber(r->allreduce_times_s[i])));
        sum += r->allreduce_times_s[i];
    }
    CHK(cJSON_AddNumberToObject(net, "allreduce_s_mean",
                                r->nallreduce_times > 0 ? sum / (double)r->nallreduce_times : 0.0));
    return true;
nomem:
    return false;
}

/* "versions": what made the file. */
static bool versions_json(cJSON *root)
{
    cJSON *versions;
    CHK(versions = cJSON_AddObjectToObject(root, "versions"));
    CHK(cJSON_AddStringToObject(versions, "dahlsim", DAHLSIM_VERSION));
    CHK(cJSON_AddStringToObject(versions, "starpu", dahl_engine_starpu_version()));
    CHK(cJSON_AddStringToObject(versions, "starpu_build", DAHLSIM_STARPU_BUILD));
    if (dahl_engine_simgrid_version() != NULL)
        CHK(cJSON_AddStringToObject(versions, "simgrid", dahl_engine_simgrid_version()));
#ifdef __VERSION__
    CHK(cJSON_AddStringToObject(versions, "compiler", __VERSION__));
#else
    CHK(cJSON_AddStringToObject(versions, "compiler", "unknown"));
#endif
    CHK(cJSON_AddStringToObject(versions, "commit", DAHLSIM_COMMIT));
    CHK(cJSON_AddStringToObject(versions, "openblas", dahl_kernels_blas_info()));
    return true;
nomem:
    return false;
}

/* A job's transfers, evictions and GPU time into o. */
static bool job_io_json(cJSON *o, const struct dahl_profile_job *io)
{
    return cJSON_AddNumberToObject(o, "h2d_bytes", (double)io->h2d_bytes) &&
           cJSON_AddNumberToObject(o, "d2h_bytes", (double)io->d2h_bytes) &&
           cJSON_AddNumberToObject(o, "h2d_transfers", (double)io->h2d) &&
           cJSON_AddNumberToObject(o, "d2h_transfers", (double)io->d2h) &&
           cJSON_AddNumberToObject(o, "evictions", (double)io->evictions) &&
           cJSON_AddNumberToObject(o, "gpu_tasks", (double)io->gpu_tasks) &&
           cJSON_AddNumberToObject(o, "gpu_busy_s", io->gpu_busy_us / 1e6) &&
           cJSON_AddNumberToObject(o, "gpu_wait_s", io->gpu_fetch_us / 1e6);
}

/* The "jobs" block of a run where several jobs share the machine. */
static bool jobs_json(cJSON *root, const struct dahlsim_results_jobs *js)
{
    cJSON *o, *total, *seq, *detail;
    CHK(o = cJSON_AddObjectToObject(root, "jobs"));
    CHK(cJSON_AddStringToObject(o, "order", js->order));
    CHK(cJSON_AddNumberToObject(o, "window", (double)js->window));
    CHK(cJSON_AddStringToObject(o, "contexts", js->contexts));
    CHK(cJSON_AddBoolToObject(o, "prefetch", js->prefetch));
    CHK(cJSON_AddNumberToObject(o, "gpu_busy_fraction", js->gpu_busy_fraction));
    CHK(total = cJSON_AddObjectToObject(o, "total"));
    CHK(job_io_json(total, &js->total));
    CHK(seq = cJSON_AddArrayToObject(o, "sequence"));
    for (size_t i = 0; i < js->nsequence; i++)
        CHK(cJSON_AddItemToArray(seq, cJSON_CreateNumber(js->sequence[i])));
    CHK(detail = cJSON_AddArrayToObject(o, "detail"));
    for (size_t i = 0; i < js->njobs; i++) {
        const struct dahlsim_results_job *j = &js->jobs[i];
        cJSON *d = cJSON_CreateObject();
        CHK(cJSON_AddItemToArray(detail, d));
        CHK(cJSON_AddStringToObject(d, "name", j->name));
        CHK(cJSON_AddStringToObject(d, "model", j->model));
        CHK(cJSON_AddStringToObject(d, "dataset", j->dataset));
        CHK(cJSON_AddNumberToObject(d, "batch", j->batch));
        CHK(cJSON_AddNumberToObject(d, "steps", (double)j->steps));
        CHK(cJSON_AddNumberToObject(d, "start_s", j->start_s));
        CHK(cJSON_AddNumberToObject(d, "first_s", j->first_s));
        CHK(cJSON_AddNumberToObject(d, "end_s", j->end_s));
        CHK(cJSON_AddNumberToObject(d, "samples_per_s", j->samples_per_s));
        CHK(cJSON_AddNumberToObject(d, "loss_first", j->loss_first));
        CHK(cJSON_AddNumberToObject(d, "loss_last", j->loss_last));
        CHK(job_io_json(d, &j->io));
    }
    return true;
nomem:
    return false;
}

/* "energy": null, or the hosts' joules (see the key list above). */
static bool add_energy(cJSON *root, const struct dahlsim_results *r)
{
    if (r->nenergy == 0)
        return cJSON_AddNullToObject(root, "energy") != NULL;
    cJSON *e, *hosts;
    double total = 0;
    for (size_t i = 0; i < r->nenergy; i++)
        total += r->energy[i].joules;
    CHK(e = cJSON_AddObjectToObject(root, "energy"));
    CHK(cJSON_AddStringToObject(e, "source", r->energy_source != NULL ? r->energy_source : "platform"));
    CHK(cJSON_AddStringToObject(e, "model", "SimGrid host energy plugin: each host draws its idle watts plus its "
                                            "load times (full - idle)"));
    CHK(cJSON_AddNumberToObject(e, "total_j", total));
    CHK(cJSON_AddNumberToObject(e, "per_sample_j", r->energy_samples > 0 ? total / r->energy_samples : 0.0));
    CHK(hosts = cJSON_AddObjectToObject(e, "hosts"));
    for (size_t i = 0; i < r->nenergy; i++)
        CHK(cJSON_AddNumberToObject(hosts, r->energy[i].host, r->energy[i].joules));
    if (r->nodes > 0) {
        /* Several nodes: rank r's hosts are StarPU-MPI<r>-NAME (StarPU-SimGrid's names under SMPI). */
        cJSON *per_node;
        CHK(per_node = cJSON_AddArrayToObject(e, "per_node_j"));
        for (int node = 0; node < r->nodes; node++) {
            char prefix[32];
            int len = snprintf(prefix, sizeof(prefix), "StarPU-MPI%d-", node);
            double j = 0;
            for (size_t i = 0; i < r->nenergy; i++)
                if (strncmp(r->energy[i].host, prefix, (size_t)len) == 0)
                    j += r->energy[i].joules;
            CHK(cJSON_AddItemToArray(per_node, cJSON_CreateNumber(j)));
        }
    }
    return true;
nomem:
    return false;
}

/* The "steady_state" block (null when the run simulated every step). */
static bool add_steady(cJSON *root, const struct dahlsim_results *r)
{
    if (!(r->steady_tolerance > 0))
        return cJSON_AddNullToObject(root, "steady_state") != NULL;
    cJSON *o = cJSON_AddObjectToObject(root, "steady_state"), *epochs;
    long extrapolated = 0;
    double extrapolated_s = 0;
    CHK(o != NULL && cJSON_AddNumberToObject(o, "warmup", (double)r->steady_warmup) &&
        cJSON_AddNumberToObject(o, "tolerance", r->steady_tolerance) &&
        cJSON_AddStringToObject(o, "criterion",
                                "after the epoch's first `warmup` steps, 8 equal blocks of at least 4 steps: the steps "
                                "left, counted at the blocks' mean step, err on the epoch's time by at most "
                                "`tolerance` (relative) at 95 % (Student's t over the block means); and no growth "
                                "of the memory peak over the last block") &&
        (epochs = cJSON_AddArrayToObject(o, "epochs")) != NULL);
    for (size_t i = 0; i < r->nepochs_detail; i++) {
        const struct dahlsim_results_epoch *e = &r->epochs_detail[i];
        cJSON *x = cJSON_CreateObject();
        CHK(cJSON_AddItemToArray(epochs, x) && cJSON_AddNumberToObject(x, "epoch", e->epoch) &&
            cJSON_AddNumberToObject(x, "simulated_steps", (double)e->simulated_steps) &&
            cJSON_AddNumberToObject(x, "extrapolated_steps", (double)e->extrapolated_steps) &&
            (e->extrapolated_steps > 0 ? cJSON_AddNumberToObject(x, "step_s", e->steady_step_s)
                                       : cJSON_AddNullToObject(x, "step_s")));
        extrapolated += e->extrapolated_steps;
        extrapolated_s += (double)e->extrapolated_steps * e->steady_step_s;
    }
    CHK(cJSON_AddNumberToObject(o, "extrapolated_steps", (double)extrapolated) &&
        cJSON_AddNumberToObject(o, "extrapolated_s", extrapolated_s) &&
        cJSON_AddStringToObject(o, "what",
                                extrapolated > 0
                                    ? "makespan_s, iteration_times_s, samples_per_s and energy count the extrapolated "
                                      "steps; tasks, workers_detail, links and memory the simulated ones only"
                                    : "no epoch reached a steady state: every step was simulated"));
    return true;
nomem:
    return false;
}

/* Builds the document; NULL when memory runs out. */
static cJSON *results_json(const struct dahlsim_results *r)
{
    cJSON *root = cJSON_CreateObject();
    if (root == NULL)
        return NULL;
    CHK(cJSON_AddNumberToObject(root, "schema", 1));
    CHK(cJSON_AddStringToObject(root, "mode", r->mode));
    if (r->scenario != NULL)
        CHK(cJSON_AddStringToObject(root, "scenario", r->scenario));
    else
        CHK(cJSON_AddNullToObject(root, "scenario"));
    CHK(cJSON_AddStringToObject(root, "model", r->model));
    CHK(cJSON_AddStringToObject(root, "dataset", r->dataset));
    CHK(cJSON_AddStringToObject(root, "scheduler", r->scheduler));
    CHK(r->sched_gamma > 0 ? cJSON_AddNumberToObject(root, "sched_gamma", r->sched_gamma)
                           : cJSON_AddNullToObject(root, "sched_gamma"));
    CHK(add_steady(root, r));
    if (r->heteroprio != NULL)
        CHK(cJSON_AddItemToObject(root, "heteroprio", heteroprio_json(r->heteroprio)));
    else
        CHK(cJSON_AddNullToObject(root, "heteroprio"));
    CHK(cJSON_AddNumberToObject(root, "batch", r->batch));
    CHK(cJSON_AddNumberToObject(root, "grain", r->grain));
    CHK(r->grain_choice != NULL ? cJSON_AddStringToObject(root, "grain_choice", r->grain_choice)
                                : cJSON_AddNullToObject(root, "grain_choice"));
    cJSON *pipeline;
    CHK(pipeline = cJSON_AddObjectToObject(root, "pipeline"));
    CHK(cJSON_AddNumberToObject(pipeline, "depth", r->pipeline_depth));
    CHK(cJSON_AddStringToObject(pipeline, "schedule", r->pipeline_schedule));
    /* a step's passes read the weights as they were this many updates before (weight stashing) */
    CHK(cJSON_AddNumberToObject(pipeline, "staleness", r->pipeline_depth - 1));
    CHK(cJSON_AddNumberToObject(pipeline, "weight_versions", r->pipeline_depth > 1 ? r->pipeline_depth + 1 : 1));
    cJSON *image;
    CHK(image = cJSON_AddObjectToObject(root, "image"));
    CHK(cJSON_AddNumberToObject(image, "c", r->c));
    CHK(cJSON_AddNumberToObject(image, "h", r->h));
    CHK(cJSON_AddNumberToObject(image, "w", r->w));
    cJSON *workers;
    CHK(workers = cJSON_AddObjectToObject(root, "workers"));
    CHK(cJSON_AddNumberToObject(workers, "cpu", r->ncpu));
    CHK(cJSON_AddNumberToObject(workers, "cuda", r->ncuda));
    CHK(cJSON_AddStringToObject(root, "reduction", r->reduction));
    CHK(cJSON_AddStringToObject(root, "perfmodel", r->perfmodel));
    CHK(r->kernel_models != NULL ? cJSON_AddStringToObject(root, "kernel_models", r->kernel_models)
                                 : cJSON_AddNullToObject(root, "kernel_models"));
    CHK(cJSON_AddNumberToObject(root, "epochs", r->epochs));
    CHK(cJSON_AddNumberToObject(root, "iterations", (double)r->iterations));
    CHK(cJSON_AddNumberToObject(root, "samples", (double)r->samples));
    CHK(cJSON_AddNumberToObject(root, "makespan_s", r->makespan_s));
    cJSON *times;
    CHK(times = cJSON_AddArrayToObject(root, "iteration_times_s"));
    for (size_t i = 0; i < r->niteration_times; i++)
        CHK(cJSON_AddItemToArray(times, cJSON_CreateNumber(r->iteration_times_s[i])));
    CHK(cJSON_AddNumberToObject(root, "samples_per_s", r->samples_per_s));
    CHK(add_energy(root, r));
    cJSON *epochs;
    CHK(epochs = cJSON_AddArrayToObject(root, "epochs_detail"));
    for (size_t i = 0; i < r->nepochs_detail; i++) {
        const struct dahlsim_results_epoch *e = &r->epochs_detail[i];
        cJSON *o = cJSON_CreateObject();
        CHK(cJSON_AddItemToArray(epochs, o));
        CHK(cJSON_AddNumberToObject(o, "epoch", e->epoch));
        CHK(cJSON_AddNumberToObject(o, "loss", e->loss));
        CHK(cJSON_AddNumberToObject(o, "train_accuracy", e->train_accuracy));
        CHK(cJSON_AddNumberToObject(o, "test_accuracy", e->test_accuracy));
        CHK(cJSON_AddNumberToObject(o, "time_s", e->time_s));
        CHK(cJSON_AddNumberToObject(o, "eval_s", e->eval_s));
    }
    cJSON *tasks;
    CHK(tasks = cJSON_AddObjectToObject(root, "tasks"));
    cJSON *per_codelet;
    CHK(per_codelet = cJSON_AddObjectToObject(tasks, "per_codelet"));
    for (size_t i = 0; i < r->ncodelets; i++)
        CHK(cJSON_AddNumberToObject(per_codelet, r->per_codelet[i].name, (double)r->per_codelet[i].tasks));
    cJSON *per_arch;
    CHK(per_arch = cJSON_AddObjectToObject(tasks, "per_arch"));
    CHK(cJSON_AddNumberToObject(per_arch, "cpu", (double)r->tasks_cpu));
    CHK(cJSON_AddNumberToObject(per_arch, "cuda", (double)r->tasks_cuda));
    CHK(workers_json(root, "workers_detail", r->workers, r->nworkers));
    CHK(links_json(root, r));
    CHK(memory_json(root, r));
    if (r->nodes > 0)
        CHK(nodes_json(root, r));
    CHK(submission_json(root, r));
    CHK(scheduling_json(root, r));
    CHK(cJSON_AddNumberToObject(root, "seed", (double)r->seed));
    CHK(versions_json(root));
    CHK(cJSON_AddNumberToObject(root, "wall_s", r->wall_s));
    CHK(cJSON_AddNumberToObject(root, "peak_rss_kib", (double)r->peak_rss_kib));
    CHK(cJSON_AddNumberToObject(root, "maps_first_step", (double)r->maps_first_step));
    CHK(cJSON_AddNumberToObject(root, "maps_peak", (double)r->maps_peak));
    if (r->jobs != NULL)
        CHK(jobs_json(root, r->jobs));
    return root;
nomem:
    cJSON_Delete(root);
    return NULL;
}

int dahlsim_results_save(const struct dahlsim_results *r, const char *dir, char *err, size_t err_size)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/results.json", dir) >= sizeof(path)) {
        snprintf(err, err_size, "%s: path too long", dir);
        return -ENAMETOOLONG;
    }
    cJSON *root = results_json(r);
    if (root == NULL) {
        snprintf(err, err_size, "%s: out of memory while writing the results", path);
        return -ENOMEM;
    }
    int ret = dahlsim_json_save(root, path, err, err_size);
    cJSON_Delete(root);
    return ret;
}

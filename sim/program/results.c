/* OUT/results.json of a training run (the schema of dahlsim_results.h): the run's state, its figures of
 * submission and scheduling, heteroprio's lists; several nodes' figures gathered on rank 0. */
#include "train.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_light.h"
#include "dahl_sched.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* results.json's "submission": natively the measured totals and their rates, simulated what was charged. */
static struct dahlsim_results_submission submission_figures(const struct run_state *st)
{
    struct dahlsim_results_submission s = st->submission;
    if (st->simulated) {
        enum dahl_submit_charge c = dahl_engine_submit_charge();
        s.charged_on = dahl_engine_submit_charge_name(c);
        s.us_per_task = c != DAHL_SUBMIT_NOT_CHARGED ? st->o->submit_us_per_task : 0;
        s.copy_bytes_per_s = c != DAHL_SUBMIT_NOT_CHARGED ? st->o->input_copy_bytes_per_s : 0;
        s.core_share = c == DAHL_SUBMIT_WORKER_CORES ? DAHL_SUBMIT_SHARED_SHARE : 0;
        return s;
    }
    s.us_per_task = s.tasks > 0 ? 1e6 * (s.thread_cpu_s - s.copy_cpu_s) / (double)s.tasks : 0;
    s.copy_bytes_per_s = s.copy_cpu_s > 0 ? s.copy_bytes / s.copy_cpu_s : 0;
    return s;
}

/* results.json's "scheduling": the policy's push_task calls, natively timed, simulated charged; the
 * workers' runtime cost per task over the training phases. */
static struct dahlsim_results_scheduling scheduling_figures(const struct run_state *st)
{
    struct dahl_sched_cost c;
    dahl_engine_sched_cost(&c);
    double worker_us = st->handled_tasks > 0
                           ? (st->handling_us - st->busy_us - st->worker_push_us) / (double)st->handled_tasks
                           : 0;
    return (struct dahlsim_results_scheduling){.counted = c.wrapped,
                                               .worker_us_per_task = c.pops_wrapped ? worker_us : NAN,
                                               .worker_charged_us = st->o->worker_us,
                                               .worker_pushes = c.worker_pushes,
                                               .other_pushes = c.other_pushes,
                                               .worker_slow = c.worker_slow,
                                               .other_slow = c.other_slow,
                                               .worker_push_us = c.worker_push_us,
                                               .other_push_us = c.other_push_us,
                                               .charged_us = c.charged_us};
}

/* Several nodes: one line on what their StarPU-MPI progression threads cost (runtime/dahl_progress.h), the
 * nodes' mean: natively their CPU time; simulated, where they took turns with the workers, the turns and the
 * waits for them. */
static void progress_line(const struct run_state *st)
{
    if (st->nodes.detail == NULL || st->nodes.size < 2)
        return;
    double cpu = 0, wait = 0, pending = 0;
    int charged = 0, timed = 0;
    for (int r = 0; r < st->nodes.size; r++) {
        const struct dahl_progress_stats *p = &st->nodes.detail[r].progress;
        charged += p->charged;
        cpu += p->cpu_s > 0 ? p->cpu_s : 0;
        wait += p->turn_wait_s;
        if (p->pending_s >= 0) {
            pending += p->pending_s;
            timed++;
        }
    }
    double n = st->nodes.size;
    const char *core = dahl_progress_core_name(st->o->mpi_progress);
    if (!dahl_engine_is_simulated())
        printf("MPI progression threads (%s): %.2f s of CPU per node, a request pending %.2f s\n", core, cpu / n,
               timed > 0 ? pending / timed : 0.0);
    else if (charged > 0)
        printf("MPI progression threads (%s): turns with the workers on %d of %d nodes, %.3f s of CPU and %.3f s "
               "of waiting for a turn per node\n",
               core, charged, st->nodes.size, cpu / n, wait / n);
    else
        printf("MPI progression threads (%s): on cores of their own, nothing charged\n", core);
    if (dahl_engine_is_simulated() && charged > 0 && dahl_light_count() > 0)
        fprintf(stderr, "dahlsim: warning: where the progression threads take turns with the workers, representative "
                "ranks match the full simulation over where the turns fall (within 9 %% on the mean of 4 phases or "
                "more, 4 to 64 nodes), not run by run (up to 30 %% apart, docs/multinode.md#representative-ranks); "
                "\"mpi_progress_core\": \"dedicated\" keeps them within 2 %% (equal shares)\n");
}

int train_results_write(struct run_state *st, double wall_start_s)
{
    const struct train_opts *o = st->o;
    long tasks_cpu = 0, tasks_cuda = 0;
    for (int w = 0; w < st->nworkers; w++) {
        if (strcmp(st->workers[w].arch, "cpu") == 0)
            tasks_cpu += st->workers[w].tasks;
        else if (strcmp(st->workers[w].arch, "cuda") == 0)
            tasks_cuda += st->workers[w].tasks;
    }
    /* Several nodes: counts summed and per-node figures gathered on rank 0, which alone writes the file. */
    if (st->nodes.pipeline)
        dahl_network_pipe_stats(st->net, &st->nodes.pipe);
    if (dahlsim_nodes_merge_results(&st->nodes, st->per_codelet, st->nsymbols, &tasks_cpu, &tasks_cuda, st->workers,
                                    (size_t)st->nworkers) != 0) {
        dahlsim_error("train: cannot gather the nodes' results on rank 0");
        return -EIO;
    }
    if (st->nodes.rank != 0)
        return 0;
    progress_line(st);
    /* Every node's machine (a point's node groups, else the point's machine; natively: this one) and share. */
    for (long r = 0, g = 0, k = 0; st->nodes.detail != NULL && r < st->nodes.size; r++) {
        struct dahlsim_results_node *n = &st->nodes.detail[r];
        n->share = st->nodes.pipeline ? st->nodes.local_batch : o->nshares > r ? o->shares[r] : o->batch / st->nodes.size;
        n->machine = o->x.ngroups > 0 ? o->x.groups[g].machine : o->x.machine[0] != '\0' ? o->x.machine : NULL;
        if (o->x.ngroups > 0 && ++k == o->x.groups[g].count) {
            g++;
            k = 0;
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* heteroprio: the policy as scenarios name it, and the lists the scheduler ended with. */
    static char lists[DAHL_NARCH][DAHL_HETEROPRIO_LIST_BYTES];
    char scheduler[64];
    struct dahl_heteroprio_conf hc = {0};
    struct dahlsim_results_heteroprio hp = {.priorities = o->priorities, .lists = {lists[0], lists[1]}};
    bool heteroprio = strcmp(o->sched, "heteroprio") == 0 && o->priorities != NULL;
    bool autoprio = heteroprio && dahl_heteroprio_parse_auto(o->priorities, &hc);
    snprintf(scheduler, sizeof(scheduler), "%s", o->sched);
    if (heteroprio) {
        hp.types = dahl_heteroprio_summary(&hp.recomputes, lists);
        hp.buckets = hc.by_footprint ? "footprint" : "symbol";
        hp.interval = autoprio ? (int)o->priority_interval : 0;
        if (autoprio)
            snprintf(scheduler, sizeof(scheduler), "heteroprio:auto-%s%s", dahl_autoprio_heuristic_name(hc.heuristic),
                     hc.by_footprint ? "/footprint" : "");
    }
    bool jobs = st->jobs != NULL;
    struct dahl_light_stats light;
    dahl_light_stats(&light);
    struct dahlsim_results r = {
        .mode = st->simulated ? "simulated" : "native",
        .scenario = o->scenario,
        .model = jobs ? "workloads" : o->model,
        .dataset = jobs ? "workloads" : o->dataset,
        .scheduler = scheduler,
        .sched_gamma = st->o->sched_gamma,
        .steady_warmup = st->o->steady_warmup,
        .steady_tolerance = st->simulated ? st->o->steady_tolerance : 0,
        .heteroprio = heteroprio ? &hp : NULL,
        .batch = jobs ? (int)st->jobs_batch : (int)o->batch,
        .grain = jobs ? (o->grain < 0 ? 0 : (int)o->grain) : st->grain,
        .grain_choice = o->x.grain_choice[0] != '\0' ? o->x.grain_choice : NULL,
        .pipeline_depth = jobs ? 1 : (int)o->pipeline_depth,
        .pipeline_schedule = o->pipeline_schedule == DAHL_PIPELINE_1F1B ? "1f1b" : "fill",
        .c = st->train.c,
        .h = st->train.h,
        .w = st->train.w,
        .ncpu = dahl_engine_ncpu(),
        .ncuda = dahl_engine_ngpu(),
        .reduction = o->reduction == DAHL_REDUCTION_MANUAL ? "manual" : "redux",
        .perfmodel = dahl_perfmodel_kind_name(o->perfmodel),
        .kernel_models = o->x.kernel_models[0] != '\0' ? o->x.kernel_models : NULL,
        .epochs = (int)o->epochs,
        .iterations = st->iterations,
        .samples = jobs ? st->jobs_samples : st->train.n,
        .makespan_s = st->makespan_s,
        .iteration_times_s = st->iteration_s,
        .niteration_times = (size_t)st->iterations,
        .energy = st->energy,
        .nenergy = (size_t)st->nenergy,
        .energy_source = st->energy_source,
        .energy_samples = jobs ? (double)st->jobs_samples_done : (double)(st->iterations * o->batch),
        .samples_per_s = st->makespan_s <= 0 ? 0.0
                         : jobs         ? (double)st->jobs_samples_done / st->makespan_s
                                        : (double)(st->iterations * o->batch) / st->makespan_s,
        .epochs_detail = st->epochs,
        .nepochs_detail = jobs ? 0 : (size_t)o->epochs,
        .per_codelet = st->per_codelet,
        .ncodelets = st->nsymbols,
        .tasks_cpu = tasks_cpu,
        .tasks_cuda = tasks_cuda,
        .workers = st->workers,
        .nworkers = (size_t)st->nworkers,
        .links = st->links,
        .nlinks = (size_t)st->nlinks,
        .memory = st->memory,
        .nmemory = (size_t)st->nmemory,
        .nodes = st->nodes.mpi ? st->nodes.size : 0,
        .allreduce = dahl_allreduce_algo_name(DAHL_ALLREDUCE_TREE),
        .network = st->nodes.network,
        .mpi_progress_core = o->mpi_progress,
        .mpi_progress_phase = o->mpi_progress_phase,
        .partition = !st->nodes.pipeline ? "data" : st->nodes.replicas > 1 ? "hybrid" : "pipeline",
        .replicas = st->nodes.replicas,
        .stage_cuts = st->o->stages,
        .nstages = st->nodes.pipeline ? st->o->nstages : 0,
        .nodes_detail = st->nodes.detail,
        .allreduce_times_s = st->nodes.allreduce_s,
        .nallreduce_times = st->nodes.nallreduce,
        .light = light.light,
        .representatives = light.representatives,
        .light_late_s = light.late_s,
        .light_late_grads = light.late_grads,
        .submission = submission_figures(st),
        .scheduling = scheduling_figures(st),
        .seed = (uint64_t)o->seed,
        .wall_s = dahlsim_mono_s() - wall_start_s,
        .peak_rss_kib = ru.ru_maxrss,
        .maps_first_step = st->maps.first,
        .maps_peak = st->maps.peak,
        .jobs = st->jobs,
    };
    char err[4200];
    if (dahlsim_results_save(&r, o->out, err, sizeof(err)) != 0) {
        dahlsim_error("--out: %s", err);
        return -EIO;
    }
    if (!o->quiet)
        fprintf(stderr, "dahlsim %s: wrote %s/results.json\n", st->simulated ? "sim-train" : "train", o->out);
    return 0;
}

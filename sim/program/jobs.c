/* Several training jobs sharing one machine (scenario key "workloads", issue 20): one StarPU program, one
 * network and dataset per job, their tensors registered apart (and labelled per job, so StarPU's transfers,
 * evictions and GPU time are counted per job: dahl_profile_jobs). The machine runs one job-step at a time,
 * in the order job_order gives: the submitting thread submits a step of a job, then waits for it, so no other
 * job's task runs meanwhile; with prefetch (and StarPU's STARPU_PREFETCH), it also starts copying the next
 * job's parameters to the GPU, so the copy overlaps the step where free memory allows. A GPU memory limit
 * below the jobs' footprint makes StarPU's memory manager evict and reload. The same program runs natively,
 * where every job still learns (its loss is reported). */
#include "train.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct job {
    const struct dahlsim_job *spec;
    struct dahl_dataset_name data; /* its dataset name parsed */
    struct dahl_network_desc desc;
    struct dahl_dataset all, train; /* all owns the arrays (synthetic, simulated); train views or owns them */
    bool owns_train;
    struct dahl_network *net;
    int context; /* job_contexts per-job: its StarPU scheduling context; -1: the shared one */
    long steps_per_epoch, steps, done;
    double first_us, end_us;
    double loss_sum, loss_first, loss_last; /* native: the epoch's summed loss, the first and last epochs' mean */
    /* the weight heuristic's window: per step of the job, its time, its GPU busy time, its bytes in */
    double *win_time_us, *win_busy_us, *win_h2d;
};

struct jobs_run {
    const struct train_opts *o;
    bool simulated;
    struct job jobs[DAHLSIM_MAX_JOBS];
    int njobs;
    int *sequence; /* the job of each job-step as it ran */
    long nsequence, total_steps;
    double *step_s; /* each job-step's time */
};

/* The job's image shape from its dataset name; false after printing an error. */
static bool job_shape(const char *path, int index, struct job *j)
{
    const char *d = j->spec->dataset;
    if (dahl_dataset_name_parse(d, &j->data))
        return true;
    dahlsim_error("%s: \"workloads\"[%d].dataset: expected " DAHL_DATASET_NAMES ", got \"%s\"", path, index, d);
    return false;
}

/* Job j's seed: the run's and its name's (FNV-1a), so a job draws the same data and weights alone or with
 * others. */
static uint64_t job_seed(const struct train_opts *o, const struct job *j)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = j->spec->name; *c != '\0'; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ULL;
    return (uint64_t)o->seed ^ h;
}

/* Job i's network description and training data. Returns 0, or -EINVAL/-ENOMEM after printing the error. */
static int job_prepare(struct jobs_run *run, int i)
{
    const struct train_opts *o = run->o;
    struct job *j = &run->jobs[i];
    const char *path = o->point != NULL ? o->point : "--point";
    if (!job_shape(path, i, j))
        return -EINVAL;
    int c = j->data.c, h = j->data.h, w = j->data.w;
    if (!train_model_desc(j->spec->model, c, h, w, &j->desc))
        return -EINVAL;
    j->steps_per_epoch = j->spec->samples / j->spec->batch;
    j->steps = j->steps_per_epoch * o->epochs;
    if (j->steps_per_epoch < 1) {
        dahlsim_error("%s: \"workloads\"[%d]: %ld samples make no step of batch %ld", path, i, j->spec->samples,
                      j->spec->batch);
        return -EINVAL;
    }
    int ret;
    if (j->data.source == DAHL_DATASET_SYNTHETIC || run->simulated) {
        ret = dahl_dataset_synthetic((int)j->spec->samples, c, h, w, NCLASSES, job_seed(o, j), run->simulated ? 0 : 1,
                                     &j->all);
        j->train = j->all;
    } else {
        ret = train_dataset_load(&j->data, 1, j->spec->samples, &j->train);
        j->owns_train = true;
        if (ret != 0)
            return -EINVAL;
    }
    if (ret != 0) {
        dahlsim_error("\"workloads\"[%d]: cannot make %ld samples: %s", i, j->spec->samples, strerror(-ret));
        return -ENOMEM;
    }
    size_t window = (size_t)(o->x.job_window > 0 ? o->x.job_window : 1);
    j->win_time_us = calloc(window, sizeof(double));
    j->win_busy_us = calloc(window, sizeof(double));
    j->win_h2d = calloc(window, sizeof(double));
    return j->win_time_us != NULL && j->win_busy_us != NULL && j->win_h2d != NULL ? 0 : -ENOMEM;
}

/* Job i's network, its tensors labelled as the job's. Returns 0, or -EIO after printing the error. */
static int job_create(struct jobs_run *run, int i)
{
    const struct train_opts *o = run->o;
    struct job *j = &run->jobs[i];
    int batch = (int)j->spec->batch;
    if (o->grain > batch) {
        dahlsim_error("train: job %s: grain: expected at most its batch of %d samples, got %ld", j->spec->name, batch,
                      o->grain);
        return -EIO;
    }
    struct dahl_train_conf conf = {.batch = batch, .lr = (float)o->lr, .momentum = (float)o->momentum,
                                   .reduction = o->reduction, .seed = job_seed(o, j), .global_batch = batch,
                                   .grain = o->grain < 0 ? batch : (int)o->grain};
    char err[512];
    dahl_profile_job_set(i);
    j->net = dahl_network_create(&j->desc, &conf, err, sizeof(err));
    dahl_profile_job_set(-1);
    if (j->net == NULL) {
        dahlsim_error("train: job %s: %s", j->spec->name, err);
        return -EIO;
    }
    j->context = -1;
    if (strcmp(o->x.job_contexts, "per-job") == 0 && (j->context = dahl_engine_context_create(j->spec->name)) < 0) {
        dahlsim_error("train: job %s: cannot create its scheduling context: %s", j->spec->name, strerror(-j->context));
        return -EIO;
    }
    return 0;
}

static void jobs_fini(struct jobs_run *run)
{
    for (int i = 0; i < run->njobs; i++) {
        struct job *j = &run->jobs[i];
        dahl_network_destroy(j->net);
        if (j->owns_train)
            dahl_dataset_fini(&j->train);
        dahl_dataset_fini(&j->all);
        free(j->win_time_us);
        free(j->win_busy_us);
        free(j->win_h2d);
    }
    free(run->sequence);
    free(run->step_s);
}

/* ---- orders ------------------------------------------------------------------------------------------------ */

/* The jobs by decreasing priority, ties by index (round-robin's cycle; the emulator's share_priority_cycle
 * does the same for its jobs). */
static void priority_cycle(const struct jobs_run *run, int *cycle)
{
    for (int i = 0; i < run->njobs; i++)
        cycle[i] = i;
    for (int a = 1; a < run->njobs; a++) /* insertion sort: stable, n <= 8 */
        for (int b = a; b > 0 && run->jobs[cycle[b]].spec->priority > run->jobs[cycle[b - 1]].spec->priority; b--) {
            int t = cycle[b];
            cycle[b] = cycle[b - 1];
            cycle[b - 1] = t;
        }
}

/* The static orders: round-robin (one step of each unfinished job in turn), given/ga (the point's sequence,
 * checked against the jobs' step counts). Returns 0, or -EINVAL after printing the error. */
static int static_order(struct jobs_run *run, int *seq)
{
    const struct dahlsim_experiment *x = &run->o->x;
    long n = 0;
    if (strcmp(x->job_order, "round-robin") == 0) {
        int cycle[DAHLSIM_MAX_JOBS];
        priority_cycle(run, cycle);
        for (long round = 0; n < run->total_steps; round++)
            for (int k = 0; k < run->njobs; k++)
                if (round < run->jobs[cycle[k]].steps)
                    seq[n++] = cycle[k];
        return 0;
    }
    long count[DAHLSIM_MAX_JOBS] = {0};
    for (long k = 0; k < x->nsequence; k++) {
        if (x->sequence[k] >= run->njobs) {
            dahlsim_error("%s: \"sequence\": job %d of %d jobs", run->o->point, x->sequence[k], run->njobs);
            return -EINVAL;
        }
        count[x->sequence[k]]++;
        seq[k] = x->sequence[k];
    }
    for (int i = 0; i < run->njobs; i++)
        if (count[i] != run->jobs[i].steps) {
            dahlsim_error("%s: \"sequence\": job %s (%d) appears %ld times, expected its %ld steps", run->o->point,
                          run->jobs[i].spec->name, i, count[i], run->jobs[i].steps);
            return -EINVAL;
        }
    return 0;
}

/* fifo: the job whose next step was ready first (its arrival, or the end of its previous step; ties: the
 * higher priority, then the lower index), leaving out job `skip` (-1: none); -1 when every job is done. */
static int fifo_pick(const struct jobs_run *run, double start_us, int skip)
{
    int best = -1;
    double best_us = 0;
    for (int i = 0; i < run->njobs; i++) {
        const struct job *j = &run->jobs[i];
        if (i == skip || j->done >= j->steps)
            continue;
        double ready_us = j->done == 0 ? start_us + 1e6 * j->spec->start_s : j->end_us;
        if (best < 0 || ready_us < best_us ||
            (ready_us == best_us && j->spec->priority > run->jobs[best].spec->priority)) {
            best = i;
            best_us = ready_us;
        }
    }
    return best;
}

/* The weight heuristic's weight of job j over its window: reward = computation / (computation + idle), the
 * GPU busy fraction of its recent steps (1 before it ran); penalty = the bytes it brought onto the GPU per
 * step (the time to bring them back is proportional: one link), weight = reward / penalty. */
static void job_weight(const struct job *j, long window, double *weight, double *penalty)
{
    long n = j->done < window ? j->done : window;
    double t = 0, busy = 0, bytes = 0;
    for (long k = 0; k < n; k++) {
        t += j->win_time_us[k];
        busy += j->win_busy_us[k];
        bytes += j->win_h2d[k];
    }
    double reward = t > 0 ? busy / t : 1.0;
    *penalty = n > 0 ? bytes / (double)n : 0.0;
    *weight = reward / (*penalty + 1.0); /* + 1 byte: a job that moved nothing weighs most, not infinitely */
}

/* The weight heuristic's next round: unfinished jobs sorted by weight (ties: smaller penalty, then higher
 * priority, then index), then the largest and the smallest remaining in turn. Returns how many entries it
 * wrote into round. */
static int weight_round(const struct jobs_run *run, int *round)
{
    int idx[DAHLSIM_MAX_JOBS], n = 0;
    double w[DAHLSIM_MAX_JOBS], p[DAHLSIM_MAX_JOBS];
    for (int i = 0; i < run->njobs; i++) {
        if (run->jobs[i].done >= run->jobs[i].steps)
            continue;
        job_weight(&run->jobs[i], run->o->x.job_window, &w[i], &p[i]);
        idx[n++] = i;
    }
    for (int a = 1; a < n; a++) /* insertion sort, heaviest first: n <= 8 */
        for (int b = a; b > 0; b--) {
            int x = idx[b - 1], y = idx[b];
            long py = run->jobs[y].spec->priority, px = run->jobs[x].spec->priority;
            bool swap = w[y] > w[x] ||
                        (w[y] == w[x] && (p[y] < p[x] || (p[y] == p[x] && (py > px || (py == px && y < x)))));
            if (!swap)
                break;
            idx[b - 1] = y;
            idx[b] = x;
        }
    for (int lo = 0, hi = n - 1, k = 0; lo <= hi; k++)
        round[k] = k % 2 == 0 ? idx[lo++] : idx[hi--];
    return n;
}

/* ---- running -------------------------------------------------------------------------------------------- */

/* Waits, on the runtime's clock, until the job has arrived (start_s after the run's start). */
static void wait_arrival(const struct job *j, double start_us)
{
    double now_us = dahl_engine_now_us(), at_us = start_us + 1e6 * j->spec->start_s;
    if (at_us > now_us)
        dahl_engine_sleep_us(at_us - now_us);
}

/* Runs one step of job i (the k-th job-step of the run), the next job-step being job `next` (-1: none).
 * Returns 0 or a negative errno. */
static int job_step(struct jobs_run *run, int i, int next, double start_us)
{
    struct job *j = &run->jobs[i];
    wait_arrival(j, start_us);
    struct dahl_profile_job before[DAHLSIM_MAX_JOBS], after[DAHLSIM_MAX_JOBS];
    dahl_profile_jobs(before, run->njobs, NULL);
    double t0 = dahl_engine_now_us();
    size_t per = (size_t)j->train.c * j->train.h * j->train.w;
    long s = j->done % j->steps_per_epoch;
    size_t first = (size_t)s * (size_t)j->spec->batch;
    const float *images = j->train.images != NULL ? j->train.images + first * per : NULL;
    dahl_engine_context_use(j->context);
    int ret = dahl_network_train_step(j->net, images, j->train.labels + first, !run->simulated);
    dahl_engine_context_use(-1);
    if (ret == 0 && run->o->x.prefetch && next >= 0 && next != i)
        ret = dahl_network_prefetch(run->jobs[next].net);
    if (ret != 0)
        return ret;
    dahl_network_wait(j->net);
    double t1 = dahl_engine_now_us();
    if (!run->simulated) { /* the step's loss, for the job's first and last epochs */
        double loss;
        long correct, samples;
        dahl_network_metrics(j->net, &loss, &correct, &samples);
        dahl_network_metrics_reset(j->net);
        j->loss_sum += loss;
    }
    dahl_profile_jobs(after, run->njobs, NULL);
    long w = run->o->x.job_window > 0 ? run->o->x.job_window : 1, slot = j->done % w;
    j->win_time_us[slot] = t1 - t0;
    j->win_busy_us[slot] = after[i].gpu_busy_us - before[i].gpu_busy_us;
    j->win_h2d[slot] = (double)(after[i].h2d_bytes - before[i].h2d_bytes);
    if (j->done == 0)
        j->first_us = t0;
    j->end_us = t1;
    j->done++;
    if (j->done % j->steps_per_epoch == 0 && !run->simulated) {
        double mean = j->loss_sum / (double)(j->steps_per_epoch * j->spec->batch);
        if (j->done == j->steps_per_epoch)
            j->loss_first = mean;
        j->loss_last = mean;
        j->loss_sum = 0;
    }
    run->step_s[run->nsequence] = (t1 - t0) / 1e6;
    run->sequence[run->nsequence++] = i;
    return 0;
}

/* Every job-step in the order. Returns 0 or a negative errno. */
static int jobs_train(struct jobs_run *run, double start_us)
{
    const struct dahlsim_experiment *x = &run->o->x;
    int ret = 0;
    if (strcmp(x->job_order, "fifo") == 0) {
        /* the next job-step, for the prefetch: the earliest ready of the others (this job is ready last) */
        for (int i = fifo_pick(run, start_us, -1); ret == 0 && i >= 0; i = fifo_pick(run, start_us, -1)) {
            int next = fifo_pick(run, start_us, i);
            ret = job_step(run, i, next >= 0 ? next : i, start_us);
        }
        return ret;
    }
    if (strcmp(x->job_order, "weight") == 0) {
        /* the next job-step, for the prefetch: the round's next; after a round's last, none (the next round
         * is decided from what this one measured) */
        int round[DAHLSIM_MAX_JOBS];
        for (int n = weight_round(run, round); ret == 0 && n > 0; n = weight_round(run, round))
            for (int k = 0; ret == 0 && k < n; k++)
                ret = job_step(run, round[k], k + 1 < n ? round[k + 1] : -1, start_us);
        return ret;
    }
    int *seq = calloc((size_t)run->total_steps, sizeof(int));
    if (seq == NULL)
        return -ENOMEM;
    ret = static_order(run, seq);
    for (long k = 0; ret == 0 && k < run->total_steps; k++)
        ret = job_step(run, seq[k], k + 1 < run->total_steps ? seq[k + 1] : -1, start_us);
    free(seq);
    return ret;
}

/* results.json: the jobs block, and the run's figures in the common schema. */
static int jobs_results(struct jobs_run *run, struct run_state *st, double start_us, double wall_start_s)
{
    struct dahlsim_results_job detail[DAHLSIM_MAX_JOBS];
    struct dahl_profile_job io[DAHLSIM_MAX_JOBS], other;
    dahl_profile_jobs(io, run->njobs, &other);
    struct dahlsim_results_jobs js = {.order = run->o->x.job_order, .window = run->o->x.job_window,
                                      .contexts = run->o->x.job_contexts,
                                      .prefetch = run->o->x.prefetch, .jobs = detail, .njobs = (size_t)run->njobs,
                                      .total = other, .sequence = run->sequence, .nsequence = (size_t)run->nsequence};
    double end_us = start_us;
    long samples = 0, batch = 0;
    for (int i = 0; i < run->njobs; i++) {
        const struct job *j = &run->jobs[i];
        double span_s = (j->end_us - j->first_us) / 1e6;
        detail[i] = (struct dahlsim_results_job){
            .name = j->spec->name, .model = j->spec->model, .dataset = j->spec->dataset, .batch = (int)j->spec->batch,
            .steps = j->steps, .start_s = j->spec->start_s, .first_s = (j->first_us - start_us) / 1e6,
            .end_s = (j->end_us - start_us) / 1e6,
            .samples_per_s = span_s > 0 ? (double)(j->steps * j->spec->batch) / span_s : 0.0,
            .loss_first = run->simulated ? NAN : j->loss_first, .loss_last = run->simulated ? NAN : j->loss_last,
            .io = io[i]};
        struct dahl_profile_job *t = &js.total;
        t->h2d_bytes += io[i].h2d_bytes, t->d2h_bytes += io[i].d2h_bytes, t->h2d += io[i].h2d, t->d2h += io[i].d2h;
        t->evictions += io[i].evictions, t->gpu_tasks += io[i].gpu_tasks;
        t->gpu_busy_us += io[i].gpu_busy_us, t->gpu_fetch_us += io[i].gpu_fetch_us;
        end_us = j->end_us > end_us ? j->end_us : end_us;
        samples += j->spec->samples;
        batch = j->spec->batch > batch ? j->spec->batch : batch;
    }
    st->makespan_s = (end_us - start_us) / 1e6;
    int ngpu = dahl_engine_ngpu();
    js.gpu_busy_fraction = ngpu > 0 && st->makespan_s > 0 ? js.total.gpu_busy_us / 1e6 / (st->makespan_s * ngpu) : 0;
    st->iterations = run->nsequence;
    st->iteration_s = run->step_s;
    st->jobs = &js;
    st->jobs_samples = samples;
    st->jobs_batch = batch;
    st->jobs_samples_done = 0;
    for (int i = 0; i < run->njobs; i++)
        st->jobs_samples_done += run->jobs[i].steps * run->jobs[i].spec->batch;
    int ret = train_results_write(st, wall_start_s);
    st->iteration_s = NULL; /* run's */
    st->jobs = NULL;
    return ret;
}

/* The workers', links' and memory figures over the whole run, and the tasks per codelet, into st. */
static int jobs_counters(struct jobs_run *run, struct run_state *st)
{
    st->symbols = dahl_codelet_symbols(&st->nsymbols);
    st->nworkers = dahl_engine_worker_count();
    st->per_codelet = calloc(st->nsymbols, sizeof(*st->per_codelet));
    st->workers = calloc((size_t)st->nworkers, sizeof(*st->workers));
    if (st->per_codelet == NULL || st->workers == NULL)
        return -ENOMEM;
    for (size_t k = 0; k < st->nsymbols; k++) {
        st->per_codelet[k].name = st->symbols[k];
        for (int i = 0; i < run->njobs; i++)
            st->per_codelet[k].tasks += dahl_network_task_count(run->jobs[i].net, st->symbols[k]);
    }
    if (dahl_engine_worker_stats(st->workers, st->nworkers) < 0)
        return -EIO;
    st->nlinks = dahl_profile_links_add(st->links, st->nlinks, RESULTS_MAX_LINKS);
    st->nmemory = dahl_profile_memory_merge(st->memory, st->nmemory, RESULTS_MAX_NODES);
    return 0;
}

int jobs_main(const struct train_opts *o, bool simulated, double wall_start_s)
{
    struct jobs_run run = {.o = o, .simulated = simulated, .njobs = (int)o->x.njobs};
    int ret = 0;
    for (int i = 0; ret == 0 && i < run.njobs; i++) {
        run.jobs[i].spec = &o->x.jobs[i];
        ret = job_prepare(&run, i);
        run.total_steps += run.jobs[i].steps;
    }
    if (ret == 0 && o->out != NULL && dahlsim_make_dirs(o->out) != 0) {
        dahlsim_error("--out: cannot create %s", o->out);
        ret = -EINVAL;
    }
    run.sequence = calloc((size_t)run.total_steps + 1, sizeof(int));
    run.step_s = calloc((size_t)run.total_steps + 1, sizeof(double));
    if (ret == 0 && (run.sequence == NULL || run.step_s == NULL))
        ret = -ENOMEM;
    struct dahl_profile_conf profile = {.first_step = -1, .last_step = -1};
    if (ret == 0)
        dahl_profile_setup(&profile);
    if (ret == 0)
        ret = train_engine_start(o);
    if (ret != 0) {
        jobs_fini(&run);
        return ret;
    }
    for (int i = 0; ret == 0 && i < run.njobs; i++)
        ret = job_create(&run, i);
    struct run_state st = {.o = o, .simulated = simulated};
    char err[512];
    if (ret == 0 && dahlsim_nodes_init(&st.nodes, o->batch, NULL, 0, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        ret = -EINVAL;
    }
    if (ret == 0) {
        if (!o->quiet)
            fprintf(stderr, "dahlsim train: %d jobs, %ld job-steps, order %s, prefetch %s, %d CPU + %d GPU workers\n",
                    run.njobs, run.total_steps, o->x.job_order, o->x.prefetch ? "on" : "off", dahl_engine_ncpu(),
                    dahl_engine_ngpu());
        dahl_engine_worker_stats_reset();
        dahl_profile_counters_reset();
        double start_us = dahl_engine_now_us();
        energy_mark(&st);
        ret = jobs_train(&run, start_us);
        energy_add(&st, 1.0);
        if (ret == 0)
            ret = jobs_counters(&run, &st);
        if (ret == 0 && o->out != NULL)
            ret = jobs_results(&run, &st, start_us, wall_start_s);
        else if (ret != 0)
            dahlsim_error("train: jobs: %s", strerror(-ret));
    }
    dahlsim_nodes_stop(&st.nodes);
    dahlsim_nodes_fini(&st.nodes);
    free(st.per_codelet);
    free(st.workers);
    jobs_fini(&run);
    dahl_engine_stop();
    dahl_profile_fini();
    return ret;
}

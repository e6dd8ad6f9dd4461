/* The training program, train natively and sim-train under StarPU-SimGrid (see train.h): read the options,
 * build the network, train it epoch by epoch (steps, then a report), write what the run leaves. */
#include "train.h"
#include "dahlsim_program.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_kernels.h"
#include "dahl_layer.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Evaluates the test set in batches (the last one partial); returns 0 and the accuracy. */
static int evaluate(struct run_state *st, double *accuracy)
{
    struct dahl_network *net = st->net;
    size_t per = (size_t)st->test.c * st->test.h * st->test.w;
    int batch = st->nodes.local_batch; /* every node evaluates the whole test set with the same weights */
    dahl_network_metrics_reset(net);
    for (int s = 0; s < st->test.n; s += batch) {
        int n = st->test.n - s < batch ? st->test.n - s : batch;
        int ret = dahl_network_eval_step(net, st->test.images + (size_t)s * per, st->test.labels + s, n);
        if (ret != 0)
            return ret;
    }
    double loss_sum;
    long correct, samples;
    dahl_network_metrics(net, &loss_sum, &correct, &samples);
    /* a pipeline: only the last stage computed them (data-parallel nodes each evaluated the whole set) */
    int ret = st->nodes.pipeline ? dahlsim_nodes_sum_metrics(&st->nodes, &loss_sum, &correct, &samples) : 0;
    *accuracy = samples > 0 ? (double)correct / (double)samples : 0.0;
    return ret;
}

/* One step: this node's shard of step s's samples (no pixels in a simulation), forward, backward, update. */
static int train_step(struct run_state *st, long s)
{
    size_t per = (size_t)st->train.c * st->train.h * st->train.w;
    size_t first = (size_t)s * st->o->batch + (size_t)st->nodes.first;
    const float *images = st->train.images != NULL ? st->train.images + first * per : NULL;
    return dahl_network_train_step(st->net, images, st->train.labels + first, !st->simulated);
}

/* The epoch's line on stdout, and its figures into st->epochs[e]; natively after evaluating the test set. */
static int report_epoch(struct run_state *st, int e, long steps, const struct epoch_meter *m)
{
    const struct train_opts *o = st->o;
    double train_s = m->train_s, rate = train_s > 0 ? (double)(steps * o->batch) / train_s : 0.0;
    struct dahlsim_results_epoch *ep = &st->epochs[e];
    if (st->simulated) {
        *ep = (struct dahlsim_results_epoch){.epoch = e + 1, .loss = NAN, .train_accuracy = NAN,
                                             .test_accuracy = NAN, .time_s = train_s, .eval_s = NAN};
        if (st->nodes.rank == 0)
            printf("epoch %d/%ld  simulated time %.6f s  (%.0f samples/s)\n", e + 1, o->epochs, train_s, rate);
        fflush(stdout);
        return 0;
    }
    double eval_start_us = dahl_engine_now_us();
    double test_accuracy;
    int ret = evaluate(st, &test_accuracy);
    if (ret != 0)
        return ret;
    *ep = (struct dahlsim_results_epoch){
        .epoch = e + 1,
        .loss = m->samples > 0 ? m->loss_sum / (double)m->samples : 0.0,
        .train_accuracy = m->samples > 0 ? (double)m->correct / (double)m->samples : 0.0,
        .test_accuracy = test_accuracy,
        .time_s = train_s,
        .eval_s = (dahl_engine_now_us() - eval_start_us) / 1e6,
    };
    if (st->nodes.rank == 0)
        printf("epoch %d/%ld  loss %.4f  train %.2f %%  test %.2f %%  time %.1f s  (%.0f samples/s)\n", e + 1,
               o->epochs, ep->loss, 100.0 * ep->train_accuracy, 100.0 * ep->test_accuracy, train_s, rate);
    fflush(stdout);
    return 0;
}

/* One epoch: its steps, then its report. Fills st->epochs[e] and the per-iteration times. */
static int train_epoch(struct run_state *st, int e, struct progress *progress)
{
    long steps = st->train.n / st->o->batch, simulated = steps;
    double step_s = 0;
    struct epoch_meter meter;
    /* "steady_state": the steps are simulated until steady (see steady_reached), the rest extrapolated */
    struct steady_watch watch = {0};
    bool watching = st->simulated && st->o->steady_tolerance > 0;
    int ret = watching ? steady_start(&watch, st->o, steps, (size_t)(st->iterations - st->extrapolated)) : 0;
    if (ret == 0)
        ret = meter_epoch_start(st, e, &meter);
    for (long s = 0; ret == 0 && s < steps; s++) {
        ret = train_step(st, s);
        if (ret == 0)
            meter_step(st, &meter, progress, e, steps);
        if (ret == 0 && watching && s + 1 < steps && steady_reached(&watch, st, s + 1, &step_s)) {
            simulated = s + 1;
            break;
        }
    }
    steady_stop(&watch);
    if (ret == 0)
        ret = meter_epoch_end(st, e, simulated, &meter);
    if (ret == 0 && simulated < steps)
        steady_extrapolate(st, &meter, steps - simulated, step_s);
    progress_clear(progress);
    if (ret == 0)
        ret = report_epoch(st, e, steps, &meter);
    if (ret == 0) {
        st->epochs[e].simulated_steps = simulated;
        st->epochs[e].extrapolated_steps = steps - simulated;
        st->epochs[e].steady_step_s = step_s;
        if (simulated < steps)
            printf("epoch %d/%ld  steady after %ld of %ld steps: the other %ld counted at %.6f s each\n", e + 1,
                   st->o->epochs, simulated, steps, steps - simulated, step_s);
    }
    return ret;
}

/* Loads the datasets: Fashion-MNIST's two splits, or one synthetic draw split into train and held-out
 * test samples (so both share the class prototypes). Returns 0, or -EINVAL or -ENOMEM after printing the
 * error. */
static int load_data(const struct train_opts *o, bool simulated, struct dahl_dataset *all,
                     struct dahl_dataset *train, struct dahl_dataset *test)
{
    if (o->data.source == DAHL_DATASET_SYNTHETIC || simulated) {
        /* Simulated: labels only, in the dataset's shape (Fashion-MNIST: 28x28x1), no file read. */
        const int c = o->data.c, h = o->data.h, w = o->data.w;
        int ret = dahl_dataset_synthetic((int)(o->samples + o->test_samples), c, h, w, NCLASSES, (uint64_t)o->seed,
                                         simulated ? 0 : 1, all);
        if (ret != 0) {
            dahlsim_error("--dataset %s: cannot make %ld samples: %s", o->dataset, o->samples + o->test_samples,
                          strerror(-ret));
            return ret == -ENOMEM ? ret : -EINVAL;
        }
        size_t per = (size_t)all->c * all->h * all->w;
        *train = *all;
        train->n = (int)o->samples;
        *test = *all;
        test->n = (int)o->test_samples;
        test->images = all->images != NULL ? all->images + (size_t)o->samples * per : NULL;
        test->labels = all->labels + o->samples;
        return 0;
    }
    int ret = train_dataset_load(&o->data, 1, o->samples, train);
    if (ret == 0)
        ret = train_dataset_load(&o->data, 0, o->test_samples, test);
    return ret == -ENOMEM ? ret : ret != 0 ? -EINVAL : 0;
}

int train_dataset_load(const struct dahl_dataset_name *name, int train, long max, struct dahl_dataset *out)
{
    char err[1024];
    int ret = name->source == DAHL_DATASET_CIFAR10
                  ? dahl_dataset_load_cifar10(name->dir, train, (int)max, out, err, sizeof(err))
                  : dahl_dataset_load_fashion_mnist(NULL, train, (int)max, out, err, sizeof(err));
    if (ret == 0 && (out->h != name->h || out->w != name->w)) /* fashion-mnist:SIZE */
        ret = dahl_dataset_pad(out, name->h, name->w);
    if (ret == -ENOMEM)
        dahlsim_error("--dataset: out of memory loading %ld samples", max);
    else if (ret != 0)
        dahlsim_error("%s", err);
    return ret;
}

static void run_state_fini(struct run_state *st)
{
    dahlsim_nodes_fini(&st->nodes);
    dahl_network_destroy(st->net);
    free(st->per_codelet);
    free(st->workers);
    free(st->epoch_workers);
    free(st->iteration_s);
    free(st->epochs);
    free(st->link_windows_us);
}

/* Everything after the engine started. Returns 0, or a negative errno after printing the error (-EINVAL:
 * the nodes' setup refused the options). */
static int train_run(struct run_state *st, const struct dahl_network_desc *desc, double wall_start_s)
{
    const struct train_opts *o = st->o;
    char err[512];
    if ((o->nstages > 0 ? dahlsim_nodes_init_pipeline(&st->nodes, o->batch, o->nstages, o->replicas, err, sizeof(err))
                        : dahlsim_nodes_init(&st->nodes, o->batch, o->shares, o->nshares, err, sizeof(err))) != 0) {
        dahlsim_error("%s", err);
        return -EINVAL;
    }
    int grain = o->grain < 0 ? st->nodes.local_batch : (int)o->grain;
    if (grain > st->nodes.local_batch) {
        dahlsim_error("--grain: expected a number of samples in [1, batch per node] or batch: at most %d, got %d",
                      st->nodes.local_batch, grain);
        return -EINVAL;
    }
    st->grain = grain;
    struct dahl_train_conf conf = {.batch = st->nodes.local_batch, .lr = (float)o->lr, .momentum = (float)o->momentum,
                                   .reduction = o->reduction, .seed = (uint64_t)o->seed,
                                   .allreduce = st->nodes.allreduce, .global_batch = (int)o->batch,
                                   .grain = grain, .pipeline_depth = (int)o->pipeline_depth,
                                   .pipeline_schedule = o->pipeline_schedule};
    if (o->nstages > 0) { /* this rank's stage: from its cut to the next one; its replica's neighbours */
        int R = st->nodes.replicas, s = st->nodes.rank / R;
        conf.stage_first = s == 0 ? 0 : (int)o->stages[s - 1];
        conf.stage_end = s + 1 < o->nstages ? (int)o->stages[s] : desc->nlayers;
        conf.stage_prev = s > 0 ? st->nodes.rank - R : -1;
        conf.stage_next = s + 1 < o->nstages ? st->nodes.rank + R : -1;
    }
    st->net = dahl_network_create(desc, &conf, err, sizeof(err));
    if (st->net == NULL) {
        dahlsim_error("train: %s", err);
        return -EIO;
    }
    if (o->onnx_weights && train_onnx_weights(st->net, o->model, desc) != 0)
        return -EINVAL;
    st->symbols = dahl_codelet_symbols(&st->nsymbols);
    st->nworkers = dahl_engine_worker_count();
    long steps = st->train.n / o->batch;
    st->per_codelet = calloc(st->nsymbols, sizeof(*st->per_codelet));
    st->workers = calloc((size_t)st->nworkers, sizeof(*st->workers));
    st->epoch_workers = calloc((size_t)st->nworkers, sizeof(*st->epoch_workers));
    st->iteration_s = calloc((size_t)(steps * o->epochs), sizeof(double));
    st->epochs = calloc((size_t)o->epochs, sizeof(*st->epochs));
    st->link_windows_us = calloc(2 * (size_t)o->epochs, sizeof(double));
    if (st->per_codelet == NULL || st->workers == NULL || st->epoch_workers == NULL || st->iteration_s == NULL ||
        st->epochs == NULL || st->link_windows_us == NULL) {
        dahlsim_error("train: out of memory");
        return -ENOMEM;
    }
    for (size_t k = 0; k < st->nsymbols; k++)
        st->per_codelet[k].name = st->symbols[k];
    if (dahl_engine_worker_stats(st->workers, st->nworkers) < 0) {
        dahlsim_error("train: StarPU profiling is not enabled");
        return -EIO;
    }
    for (int w = 0; w < st->nworkers; w++) { /* keep the names, start the counts from zero */
        st->workers[w].tasks = 0;
        st->workers[w].busy_s = st->workers[w].sleeping_s = st->workers[w].total_s = 0;
    }
    if (!o->quiet && st->nodes.rank == 0)
        fprintf(stderr,
                "dahlsim train: %s (%zu parameters) on %s (%dx%dx%d images), %d train / %d test samples, batch %ld, lr %g, "
                "momentum %g, %d CPU + %d GPU workers, scheduler %s\n",
                o->model, dahl_network_desc_params(desc), o->dataset, st->train.h, st->train.w, st->train.c,
                st->train.n, st->test.n, o->batch, o->lr, o->momentum, dahl_engine_ncpu(), dahl_engine_ngpu(),
                o->sched);
    dahlsim_proc_meter_init(&st->maps, 0.5);
    struct progress progress = {.enabled = !o->quiet && st->nodes.rank == 0, .tty = isatty(STDERR_FILENO) == 1, .last_s = dahlsim_mono_s()};
    for (int e = 0; e < o->epochs; e++) {
        int ret = train_epoch(st, e, &progress);
        if (ret != 0) {
            progress_clear(&progress);
            dahlsim_error("train: epoch %d: task submission failed: %s", e + 1, strerror(-ret));
            return -EIO;
        }
    }
    dahlsim_proc_meter_tick(&st->maps, true);
    int ret = o->out != NULL ? train_results_write(st, wall_start_s) : 0;
    dahlsim_nodes_stop(&st->nodes); /* before the network and StarPU go */
    return ret;
}

/* Checks what a user can get wrong before the data is loaded and StarPU starts: the model for the dataset's
 * image shape, the output directory. Returns 0, or -EINVAL after printing the error. */
static int train_check(const struct train_opts *o, struct dahl_network_desc *desc)
{
    if (!train_model_desc(o->model, o->data.c, o->data.h, o->data.w, desc))
        return -EINVAL;
    /* pipeline stages: inside the model, each with a layer that has weights (its update marks its steps) */
    for (long s = 0; s < o->nstages; s++) {
        int first = s == 0 ? 0 : (int)o->stages[s - 1], end = s + 1 < o->nstages ? (int)o->stages[s] : desc->nlayers;
        bool weights = false;
        for (int i = first; i < end; i++)
            weights |= dahl_layer_desc_has_params(&desc->layers[i]);
        if (first >= end || !weights) {
            dahlsim_error("--stages: expected stages of the model's %d layers each with a convolution or a dense "
                          "layer, got stage %ld on layers [%d, %d)", desc->nlayers, s, first, end);
            return -EINVAL;
        }
        if (s > 0 && first < desc->nlayers && !dahl_network_desc_cut_ok(desc, first)) {
            dahlsim_error("--stages: stage %ld begins at layer %d, which a skip connection crosses (a later layer "
                          "reads a layer before %d)\nhint: cut where only the previous layer's output goes on",
                          s, first, first - 1);
            return -EINVAL;
        }
    }
    if (o->out != NULL) {
        int ret = dahlsim_make_dirs(o->out);
        if (ret != 0) {
            dahlsim_error("--out: cannot create %s: %s", o->out, strerror(-ret));
            return -EINVAL;
        }
    }
    return 0;
}

/* A fresh OUT/trace (files of an earlier traced run must not pass for this one's) with StarPU's FxT trace
 * going to its starpu/ (fxt_dir), and dahl's task records on. Returns 0, or -EINVAL after printing the error. */
static int trace_setup(const struct train_opts *o, char *fxt_dir, size_t size)
{
    bool fxt = o->trace && !o->trace_per_node;
    if (fxt) {
        char trace_dir[PATH_MAX];
        snprintf(trace_dir, sizeof(trace_dir), "%s/trace", o->out);
        snprintf(fxt_dir, size, "%s/trace/starpu", o->out);
        int r = dahlsim_remove_tree(trace_dir);
        if (r == 0)
            r = dahlsim_make_dirs(fxt_dir);
        if (r != 0) {
            dahlsim_error("--trace: cannot create %s: %s", fxt_dir, strerror(-r));
            return -EINVAL;
        }
    }
    struct dahl_profile_conf profile = {.record_tasks = o->trace, .first_step = o->trace_first,
                                        .last_step = o->trace_last, .fxt_dir = fxt ? fxt_dir : NULL};
    dahl_profile_setup(&profile);
    return 0;
}

int train_engine_start(const struct train_opts *o)
{
    dahl_kernels_init();
    int ret = dahl_codelets_set_perfmodel(o->perfmodel);
    if (ret != 0) {
        dahlsim_error("--perfmodel: cannot switch to %s: %s", dahl_perfmodel_kind_name(o->perfmodel), strerror(-ret));
        return -EIO;
    }
    static struct dahl_heteroprio_conf heteroprio; /* StarPU reads it until it stops */
    ret = dahlsim_heteroprio_conf(o->sched, o->priorities, o->priority_interval, &heteroprio);
    if (ret != 0)
        return ret;
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = (int)o->ncpu;
    conf.ngpu = (int)o->ngpu;
    conf.sched = o->sched;
    conf.heteroprio = &heteroprio;
    conf.profiling = true;
    conf.submit_us_per_task = o->submit_us_per_task;
    conf.input_copy_bytes_per_s = o->input_copy_bytes_per_s;
    conf.sched_push_us = o->sched_push_us;
    conf.worker_us_per_task = o->worker_us;
    conf.sched_gamma = o->sched_gamma;
    conf.mpi_progress = o->mpi_progress;
    conf.ranks = o->nranks > 0 ? o->ranks : NULL;
    conf.nranks = (int)o->nranks;
    ret = dahl_engine_start(&conf);
    if (ret == -ENODEV) {
        dahlsim_error("train: StarPU found no worker to run on");
        return ret;
    }
    if (ret != 0) {
        dahlsim_error("train: starpu_init failed: %s", strerror(-ret));
        return -EIO;
    }
    return 0;
}

/* train and sim-train: the same program in either flavour. Returns 0 or a negative errno, the error printed. */
static int train_main(int argc, char **argv, bool simulated)
{
    double wall_start_s = dahlsim_mono_s();
    struct train_opts o;
    struct dahl_network_desc desc;
    int ret = train_parse_options(argc, argv, simulated, &o);
    if (ret != 0 || o.help)
        return ret;
    if (o.x.njobs > 0)
        return jobs_main(&o, simulated, wall_start_s);
    ret = train_check(&o, &desc);
    if (ret != 0)
        return ret;
    struct run_state st = {.o = &o, .simulated = simulated};
    struct dahl_dataset all = {0};
    ret = load_data(&o, simulated, &all, &st.train, &st.test);
    if (ret != 0)
        return ret;
    if (st.train.c != desc.c || st.train.h != desc.h || st.train.w != desc.w) {
        dahlsim_error("--dataset %s: images are %dx%dx%d, expected %dx%dx%d", o.dataset, st.train.h, st.train.w,
                      st.train.c, desc.h, desc.w, desc.c);
        ret = -EINVAL;
        goto out_data;
    }
    char fxt_dir[PATH_MAX];
    ret = trace_setup(&o, fxt_dir, sizeof(fxt_dir));
    if (ret == 0)
        ret = train_engine_start(&o);
    if (ret != 0)
        goto out_data;
    ret = train_run(&st, &desc, wall_start_s);
    dahl_network_destroy(st.net);
    st.net = NULL;
    dahl_engine_stop();
    if (ret == 0 && o.trace)
        ret = train_trace_write(&st, &desc);
    run_state_fini(&st);
    dahl_profile_fini();
out_data:
    if (o.data.source == DAHL_DATASET_SYNTHETIC || simulated) {
        dahl_dataset_fini(&all);
    } else {
        dahl_dataset_fini(&st.train);
        dahl_dataset_fini(&st.test);
    }
    return ret;
}

int dahlsim_cmd_train(int argc, char **argv)
{
    if (dahl_engine_is_simulated()) {
        dahlsim_error("train: this is the native training command; the SimGrid binary cannot run it "
                      "(simulate with `dahlsim run`)");
        return DAHLSIM_EXIT_USAGE;
    }
    return dahlsim_exit_of(train_main(argc, argv, false));
}

int dahlsim_cmd_sim_train(int argc, char **argv)
{
    if (!dahl_engine_is_simulated()) {
        dahlsim_error("sim-train: this is the simulated training program of the SimGrid binary "
                      "(build/dahlsim-sim); natively, use `dahlsim train`");
        return DAHLSIM_EXIT_USAGE;
    }
    return dahlsim_exit_of(train_main(argc, argv, true));
}

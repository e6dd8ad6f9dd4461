/* The CNN task graph on native StarPU: descriptions and their checks, the task count of one step (what
 * the model and batch imply), and learning: loss falls and accuracy rises on learnable synthetic images,
 * with REDUX and manual gradient reduction, and one worker gives bit-identical losses run after run. */
#include <criterion/criterion.h>

#include "dahl_dataset.h"
#include "dahl_engine.h"
#include "dahl_network.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[256];

static void start(int ncpu)
{
    char home[] = "/tmp/dahlsim-network-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    setenv("STARPU_HOME", home, 1);
    setenv("STARPU_SILENT", "1", 1);
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = ncpu;
    conf.ngpu = 0;
    conf.sched = "eager";
    cr_assert_eq(dahl_engine_start(&conf), 0);
}

Test(network, lenet_description_and_parameter_count)
{
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 28, 28, 10, &d), 0);
    cr_assert_eq(d.nlayers, 9);
    cr_assert_eq(dahl_network_desc_check(&d, err, sizeof(err)), 0, "%s", err);
    /* conv 6x1x5x5+6, conv 16x6x5x5+16, dense 400->120, dense 120->10 */
    cr_assert_eq(dahl_network_desc_params(&d), 156 + 2416 + 48120 + 1210);
    cr_assert_eq(dahl_network_desc_lenet(3, 512, 512, 10, &d), 0);
    cr_assert_eq(dahl_network_desc_check(&d, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahl_network_desc_deep(3, 32, 32, 10, 3, 8, &d), 0);
    cr_assert_eq(dahl_network_desc_check(&d, err, sizeof(err)), 0, "%s", err);
    cr_assert_neq(dahl_network_desc_lenet(1, 4, 4, 10, &d), 0, "4x4 is too small for LeNet");
}

Test(network, bad_descriptions_name_the_layer)
{
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 28, 28, 10, &d), 0);
    d.layers[d.nlayers - 1].units = 7;
    cr_assert_eq(dahl_network_desc_check(&d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "gives 7 outputs, expected 10 classes") != NULL, "%s", err);
    cr_assert_eq(dahl_network_desc_lenet(1, 28, 28, 10, &d), 0);
    d.layers[3].kernel = 40;
    cr_assert_eq(dahl_network_desc_check(&d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "layer 3 (conv") != NULL, "%s", err);
    /* the fuzzer's pad of 50895 (fuzz/regressions/model/pad-overflow-50895): 6x101814x101814 values, whose
     * count overflowed an int */
    cr_assert_eq(dahl_network_desc_lenet(1, 28, 28, 10, &d), 0);
    d.layers[0].pad = 50895;
    cr_assert_eq(dahl_network_desc_check(&d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "layer 0 gives 6x101814x101814 values per sample") != NULL, "%s", err);
    d.layers[0].pad = 65536;
    d.layers[0].filters = 65536;
    cr_assert_eq(dahl_network_desc_check(&d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "layer 0 gives 65536x") != NULL, "%s", err);
}

static struct dahl_network *lenet(int batch, enum dahl_reduction reduction)
{
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 4, &d), 0);
    struct dahl_train_conf conf = {.batch = batch, .lr = 0.05f, .momentum = 0.0f, .reduction = reduction, .seed = 3};
    struct dahl_network *net = dahl_network_create(&d, &conf, err, sizeof(err));
    cr_assert_not_null(net, "%s", err);
    return net;
}

/* LeNet on 12x12: conv(0) relu(1) pool(2) conv(3) relu(4) pool(5) dense(6) relu(7) dense(8). */
Test(network, one_step_submits_what_model_and_batch_imply)
{
    start(2);
    const int batch = 4;
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(batch, 1, 12, 12, 4, 1, 1, &data), 0);
    for (int m = 0; m < 2; m++) {
        enum dahl_reduction red = m == 0 ? DAHL_REDUCTION_REDUX : DAHL_REDUCTION_MANUAL;
        struct dahl_network *net = lenet(batch, red);
        cr_assert_eq(dahl_network_train_step(net, data.images, data.labels, false), 0);
        cr_assert_eq(dahl_network_task_count(net, "dahl_conv2d_forward"), 2 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_relu_forward"), 3 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_maxpool_forward"), 2 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_dense_forward"), 2 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_softmax_xent"), batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_conv2d_backward_weights"), 2 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_conv2d_backward_input"), batch, "not for the first layer");
        cr_assert_eq(dahl_network_task_count(net, "dahl_relu_backward"), 3 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_maxpool_backward"), 2 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_dense_backward_weights"), 2 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_dense_backward_input"), 2 * batch);
        cr_assert_eq(dahl_network_task_count(net, "dahl_sgd_update"), 8, "w and b of 4 layers");
        /* manual: a binary tree of batch - 1 additions per gradient, and every per-sample buffer re-zeroed */
        cr_assert_eq(dahl_network_task_count(net, "dahl_accumulate"), red == DAHL_REDUCTION_MANUAL ? 8 * (batch - 1) : 0);
        cr_assert_eq(dahl_network_task_count(net, "dahl_zero"), red == DAHL_REDUCTION_MANUAL ? 8 * batch : 8);
        dahl_network_destroy(net);
    }
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

/* Trains `epochs` epochs on data; returns the last epoch's mean loss and accuracy. */
static void train(struct dahl_network *net, const struct dahl_dataset *data, int batch, int epochs, double *loss,
                  double *acc)
{
    size_t per = (size_t)data->c * data->h * data->w;
    for (int e = 0; e < epochs; e++) {
        dahl_network_metrics_reset(net);
        for (int s = 0; s + batch <= data->n; s += batch)
            cr_assert_eq(dahl_network_train_step(net, data->images + (size_t)s * per, data->labels + s, true), 0);
        double loss_sum;
        long correct, samples;
        dahl_network_metrics(net, &loss_sum, &correct, &samples);
        cr_assert_eq(samples, (data->n / batch) * batch);
        *loss = loss_sum / (double)samples;
        *acc = (double)correct / (double)samples;
    }
}

static void learns(enum dahl_reduction reduction)
{
    start(2);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(256, 1, 12, 12, 4, 11, 1, &data), 0);
    struct dahl_network *net = lenet(8, reduction);
    double loss0, acc0, loss, acc;
    train(net, &data, 8, 1, &loss0, &acc0);
    train(net, &data, 8, 3, &loss, &acc);
    cr_assert_lt(loss, 0.5 * loss0, "loss %f after the first epoch, %f after four", loss0, loss);
    cr_assert_gt(acc, 0.9, "accuracy %f after four epochs (first: %f)", acc, acc0);
    dahl_network_destroy(net);
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

Test(network, learns_with_redux_reduction)
{
    learns(DAHL_REDUCTION_REDUX);
}

Test(network, learns_with_manual_reduction)
{
    learns(DAHL_REDUCTION_MANUAL);
}

/* With manual reduction the gradient sums have a fixed order (a binary tree over sample indices), so one
 * worker reproduces every bit. (With REDUX, StarPU adds the per-sample contributions in the order the tasks
 * run, which the race between submission and execution decides: results differ in the last float bits.) */
Test(network, one_worker_manual_reduction_is_bit_reproducible)
{
    start(1);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(64, 1, 12, 12, 4, 5, 1, &data), 0);
    double loss[2], acc[2];
    float params[2][156];
    for (int run = 0; run < 2; run++) {
        struct dahl_network *net = lenet(8, DAHL_REDUCTION_MANUAL);
        train(net, &data, 8, 2, &loss[run], &acc[run]);
        cr_assert_eq(dahl_network_read_params(net, 0, params[run], 156), 0);
        dahl_network_destroy(net);
    }
    cr_assert_eq(memcmp(params[0], params[1], sizeof(params[0])), 0, "first layer's parameters differ");
    cr_assert_eq(loss[0], loss[1], "%.17g vs %.17g", loss[0], loss[1]);
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

enum { LENET12_PARAMS = 156 + 2416 + 2040 + 484 };

/* Trains LeNet on 12x12 for 2 epochs of batch 8 with momentum, the given update chunk and grain; returns the
 * network, the last epoch's mean loss and every layer's parameters, concatenated, in params
 * (LENET12_PARAMS floats). */
static struct dahl_network *train_lenet12(enum dahl_reduction reduction, size_t update_chunk, int grain,
                                          const struct dahl_dataset *data, double *loss, float *params)
{
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 4, &d), 0);
    struct dahl_train_conf conf = {.batch = 8, .lr = 0.05f, .momentum = 0.9f, .reduction = reduction, .seed = 3,
                                   .update_chunk = update_chunk, .grain = grain};
    struct dahl_network *net = dahl_network_create(&d, &conf, err, sizeof(err));
    cr_assert_not_null(net, "%s", err);
    double acc;
    train(net, data, 8, 2, loss, &acc);
    /* LeNet on 12x12: conv 6x1x5x5 (0), conv 16x6x5x5 (3), dense 16 -> 120 (6), dense 120 -> 4 (8) */
    const int layers[] = {0, 3, 6, 8};
    const size_t counts[] = {150 + 6, 2400 + 16, 1920 + 120, 480 + 4};
    size_t at = 0;
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(dahl_network_read_params(net, layers[i], params + at, counts[i]), 0, "layer %d", layers[i]);
        at += counts[i];
    }
    return net;
}

/* Two trainings' parameters and losses: bit-identical when exact, else within float rounding. */
static void assert_same_training(bool exact, const char *what, const float *a, const float *b, double loss_a,
                                 double loss_b)
{
    for (int i = 0; i < LENET12_PARAMS; i++) {
        if (exact)
            cr_assert_eq(a[i], b[i], "%s, parameter %d: %.9g vs %.9g", what, i, a[i], b[i]);
        else
            cr_assert_float_eq(a[i], b[i], 1e-5f + 1e-4f * fabsf(a[i]), "%s, parameter %d: %.9g vs %.9g", what, i,
                               a[i], b[i]);
    }
    if (exact)
        cr_assert_eq(loss_a, loss_b, "%s: %.17g vs %.17g", what, loss_a, loss_b);
    else
        cr_assert_float_eq(loss_a, loss_b, 1e-4 * loss_a, "%s: %.17g vs %.17g", what, loss_a, loss_b);
}

/* train_lenet12 at grain 1 with the update chunk, and its SGD task count. */
static void train_chunked(enum dahl_reduction reduction, size_t update_chunk, const struct dahl_dataset *data,
                          double *loss, float *params)
{
    struct dahl_network *net = train_lenet12(reduction, update_chunk, 1, data, loss, params);
    long sgd = dahl_network_task_count(net, "dahl_sgd_update");
    long steps = 2 * (data->n / 8);
    if (update_chunk == SIZE_MAX)
        cr_assert_eq(sgd, 8 * steps, "one SGD task per parameter tensor");
    else /* update_chunk 100: conv1 w 2 chunks, b 1; conv2 24 + 1; dense1 20 + 2; dense2 5 + 1 */
        cr_assert_eq(sgd, 56 * steps, "one SGD task per chunk");
    dahl_network_destroy(net);
}

/* Splitting the updates into chunks changes which task updates which weights, not the arithmetic: every
 * weight gets the same operations in the same order, so with manual reduction on one worker (a fixed
 * gradient summation order) the parameters and losses are bit-identical with and without chunks. REDUX sums
 * per-sample gradients in execution order, which varies from run to run even on one worker, so there the
 * two agree to float rounding only; a chunk reading its gradient before StarPU reduced it (the update of a
 * step lost), or a chunk missed or not zeroed, is far outside that. */
/* Runs compare on 64 synthetic samples with manual reduction on 1 worker, and REDUX on 1 and 2 workers (manual
 * sums in a fixed order, REDUX in execution order). */
static void across_settings(void (*compare)(enum dahl_reduction red, int ncpu, const struct dahl_dataset *data))
{
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(64, 1, 12, 12, 4, 5, 1, &data), 0);
    for (int ncpu = 1; ncpu <= 2; ncpu++) {
        start(ncpu);
        compare(DAHL_REDUCTION_REDUX, ncpu, &data);
        if (ncpu == 1)
            compare(DAHL_REDUCTION_MANUAL, ncpu, &data);
        dahl_engine_stop();
    }
    dahl_dataset_fini(&data);
}

static void compare_chunked(enum dahl_reduction red, int ncpu, const struct dahl_dataset *data)
{
    static float whole[LENET12_PARAMS], chunked[LENET12_PARAMS];
    double loss_whole, loss_chunked;
    train_chunked(red, SIZE_MAX, data, &loss_whole, whole);
    train_chunked(red, 100, data, &loss_chunked, chunked);
    char what[64];
    snprintf(what, sizeof(what), "%s, %d workers, whole vs chunked",
             red == DAHL_REDUCTION_MANUAL ? "manual" : "redux", ncpu);
    assert_same_training(red == DAHL_REDUCTION_MANUAL, what, whole, chunked, loss_whole, loss_chunked);
}

Test(network, chunked_updates_train_the_same_weights)
{
    across_settings(compare_chunked);
}

/* Every training step's completion time is recorded without waiting: one per step, increasing. */
Test(network, step_end_times_are_recorded_per_step)
{
    start(2);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(32, 1, 12, 12, 4, 7, 1, &data), 0);
    struct dahl_network *net = lenet(8, DAHL_REDUCTION_REDUX);
    double before = dahl_engine_now_us();
    train(net, &data, 8, 2, &(double){0}, &(double){0});
    const double *end_us;
    size_t n = dahl_network_step_end_times(net, &end_us);
    cr_assert_eq(n, 8, "2 epochs of 4 steps");
    cr_assert_eq(dahl_network_steps_done(net), 8);
    for (size_t i = 0; i < n; i++)
        cr_assert_gt(end_us[i], i == 0 ? before : end_us[i - 1], "step %zu", i);
    cr_assert_leq(end_us[n - 1], dahl_engine_now_us());
    dahl_network_destroy(net);
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

/* train_lenet12 at the grain, and its tasks of one layer per step. */
static void train_grained(enum dahl_reduction reduction, int grain, const struct dahl_dataset *data, double *loss,
                          float *params)
{
    struct dahl_network *net = train_lenet12(reduction, 0, grain, data, loss, params);
    long steps = 2 * (data->n / 8), groups = (8 + grain - 1) / grain;
    cr_assert_eq(dahl_network_task_count(net, "dahl_conv2d_forward"), 2 * groups * steps, "grain %d", grain);
    cr_assert_eq(dahl_network_task_count(net, "dahl_softmax_xent"), groups * steps, "grain %d", grain);
    cr_assert_eq(dahl_network_task_count(net, "dahl_accumulate"),
                 reduction == DAHL_REDUCTION_MANUAL ? 8 * (groups - 1) * steps : 0, "grain %d", grain);
    dahl_network_destroy(net);
}

/* Tasks over several samples (the grain) change which task computes which sample, not the arithmetic: each
 * sample's kernels are the one-sample kernels, and with manual reduction a task sums its samples' gradients
 * by the network's own binary tree, so on one worker every power-of-two grain (and the whole batch) trains
 * bit-identical parameters and losses to grain 1. Grain 3 (8 = 3 + 3 + 2) groups the sums differently,
 * and REDUX sums in execution order: those agree to float rounding. A sample left out of a task, a gradient
 * summed twice or a label given to the wrong sample is far outside either. */
static void compare_grains(enum dahl_reduction red, int ncpu, const struct dahl_dataset *data)
{
    static float one[LENET12_PARAMS], grouped[LENET12_PARAMS];
    double loss_one, loss;
    train_grained(red, 1, data, &loss_one, one);
    const int grains[] = {2, 3, 4, 8};
    for (size_t k = 0; k < sizeof(grains) / sizeof(grains[0]); k++) {
        train_grained(red, grains[k], data, &loss, grouped);
        char what[64];
        snprintf(what, sizeof(what), "%s, %d workers, grain 1 vs %d", red == DAHL_REDUCTION_MANUAL ? "manual" : "redux",
                 ncpu, grains[k]);
        assert_same_training(red == DAHL_REDUCTION_MANUAL && grains[k] != 3, what, one, grouped, loss_one, loss);
    }
}

Test(network, grains_train_the_same_weights)
{
    across_settings(compare_grains);
}

/* The same holds for the residual layers: batch norm's statistics go through the manual tree like gradients,
 * a skip connection's two gradients are summed in one order, and dropout's mask is keyed by the sample's place
 * in the batch, not by its task; so grains 2, 4 and 8 train the bits of grain 1 on one worker. */
Test(network, residual_grains_train_the_same_weights)
{
    start(1);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(32, 1, 8, 8, 4, 5, 1, &data), 0);
    /* conv - bn - relu - conv - bn - add (layers 4 and 2) - relu - dropout - gap - dense */
    struct dahl_network_desc d = {
        .c = 1, .h = 8, .w = 8, .nclasses = 4, .nlayers = 10,
        .layers = {{.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1},
                   {.kind = DAHL_LAYER_BATCHNORM},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1},
                   {.kind = DAHL_LAYER_BATCHNORM},
                   {.kind = DAHL_LAYER_ADD, .back = {0, 2}},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_DROPOUT, .percent = 25},
                   {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                   {.kind = DAHL_LAYER_DENSE, .units = 4}}};
    /* conv 4x1x3x3 + 4, batch norm scale and shift of 4 channels, conv 4x4x3x3 + 4, dense 4 -> 4 */
    const int layers[] = {0, 1, 3, 4, 9};
    const size_t counts[] = {36 + 4, 4 + 4, 144 + 4, 4 + 4, 16 + 4};
    enum { NPARAMS = 40 + 8 + 148 + 8 + 20 };
    const int grains[] = {1, 2, 4, 8};
    float params[4][NPARAMS];
    double loss[4], acc;
    for (int g = 0; g < 4; g++) {
        struct dahl_train_conf conf = {.batch = 8, .lr = 0.05f, .momentum = 0.9f,
                                       .reduction = DAHL_REDUCTION_MANUAL, .seed = 3, .grain = grains[g]};
        struct dahl_network *net = dahl_network_create(&d, &conf, err, sizeof(err));
        cr_assert_not_null(net, "%s", err);
        train(net, &data, 8, 2, &loss[g], &acc);
        size_t at = 0;
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(dahl_network_read_params(net, layers[i], params[g] + at, counts[i]), 0, "layer %d",
                         layers[i]);
            at += counts[i];
        }
        dahl_network_destroy(net);
        cr_assert(isfinite(loss[g]), "grain %d: loss %g", grains[g], loss[g]);
        cr_assert_eq(memcmp(params[g], params[0], sizeof(params[0])), 0, "grain %d trains other parameters than 1",
                     grains[g]);
        cr_assert_eq(loss[g], loss[0], "grain %d vs 1: %.17g vs %.17g", grains[g], loss[g], loss[0]);
    }
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

/* An evaluation of fewer samples than the batch runs whole groups and counts only its samples; a grain
 * larger than the batch is refused. */
Test(network, grained_evaluation_counts_its_samples)
{
    start(2);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(16, 1, 12, 12, 4, 9, 1, &data), 0);
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 4, &d), 0);
    struct dahl_train_conf conf = {.batch = 8, .lr = 0.05f, .reduction = DAHL_REDUCTION_REDUX, .seed = 3, .grain = 9};
    cr_assert_null(dahl_network_create(&d, &conf, err, sizeof(err)));
    cr_assert(strstr(err, "grain") != NULL, "%s", err);
    double sums[2];
    long correct[2], samples[2];
    for (int k = 0; k < 2; k++) {
        conf.grain = k == 0 ? 1 : 3;
        struct dahl_network *net = dahl_network_create(&d, &conf, err, sizeof(err));
        cr_assert_not_null(net, "%s", err);
        cr_assert_eq(dahl_network_eval_step(net, data.images, data.labels, 5), 0); /* groups 3 + 2 of 3 */
        dahl_network_metrics(net, &sums[k], &correct[k], &samples[k]);
        cr_assert_eq(samples[k], 5, "grain %d", conf.grain);
        cr_assert_eq(dahl_network_task_count(net, "dahl_softmax_xent"), k == 0 ? 5 : 2);
        dahl_network_destroy(net);
    }
    cr_assert_float_eq(sums[0], sums[1], 1e-6 * sums[0], "%.17g vs %.17g", sums[0], sums[1]);
    cr_assert_eq(correct[0], correct[1]);
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

/* LeNet on 12x12 (4 classes), plain SGD (no momentum), manual reduction, at a pipeline depth. */
static struct dahl_network *pipelined(int depth, enum dahl_pipeline_schedule schedule)
{
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 4, &d), 0);
    struct dahl_train_conf conf = {.batch = 8, .lr = 0.05f, .momentum = 0.0f, .reduction = DAHL_REDUCTION_MANUAL,
                                   .seed = 3, .pipeline_depth = depth, .pipeline_schedule = schedule};
    struct dahl_network *net = dahl_network_create(&d, &conf, err, sizeof(err));
    cr_assert_not_null(net, "%s", err);
    return net;
}

/* Steps first .. first + n - 1 of data (batch 8), then the first layer's weights and bias into out. */
static void steps(struct dahl_network *net, const struct dahl_dataset *data, int first, int n, float *out)
{
    size_t per = (size_t)data->c * data->h * data->w;
    for (int s = first; s < first + n; s++)
        cr_assert_eq(dahl_network_train_step(net, data->images + (size_t)s * 8 * per, data->labels + s * 8, false), 0);
    cr_assert_eq(dahl_network_read_params(net, 0, out, 156), 0);
}

/* PipeDream's semantics at depth 2 (weight stashing, no momentum): steps 0 and 1 both compute their
 * gradients on the initial weights W0, and each update applies its gradient to the latest weights, so after
 * two steps the weights are W0 - lr g(W0, batch 0) - lr g(W0, batch 1): W1a + W1b - W0, where W1a and W1b
 * are one synchronous step on batch 0 and on batch 1 from W0 (to float rounding). Two synchronous steps
 * differ from that (the second gradient on W1a), which shows the stale weights are the ones used. Each step
 * at depth 2 also refreshes one stash per parameter tensor: one dahl_zero and one dahl_accumulate each. */
Test(network, pipelined_steps_use_the_stashed_weights)
{
    start(1);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(16, 1, 12, 12, 4, 5, 1, &data), 0);
    static float w0[156], w1a[156], w1b[156], sync2[156], piped[156];
    struct dahl_network *net = pipelined(1, DAHL_PIPELINE_FILL);
    cr_assert_eq(dahl_network_read_params(net, 0, w0, 156), 0);
    steps(net, &data, 0, 1, w1a);
    steps(net, &data, 1, 1, sync2);
    long sync_zero = dahl_network_task_count(net, "dahl_zero");
    dahl_network_destroy(net);
    net = pipelined(1, DAHL_PIPELINE_FILL);
    steps(net, &data, 1, 1, w1b);
    dahl_network_destroy(net);
    for (int k = 0; k < 2; k++) {
        net = pipelined(2, k == 0 ? DAHL_PIPELINE_FILL : DAHL_PIPELINE_1F1B);
        steps(net, &data, 0, 2, piped);
        cr_assert_eq(dahl_network_task_count(net, "dahl_zero"), sync_zero + 2 * 8, "a stash refresh per tensor");
        dahl_network_destroy(net);
        double off_sync = 0;
        for (int i = 0; i < 156; i++) {
            float want = w1a[i] + w1b[i] - w0[i];
            cr_assert_float_eq(piped[i], want, 1e-6f + 1e-5f * fabsf(want), "schedule %d, parameter %d: %.9g, expected %.9g",
                               k, i, piped[i], want);
            off_sync = fmax(off_sync, fabs((double)piped[i] - sync2[i]));
        }
        cr_assert_gt(off_sync, 1e-5, "depth 2 trained the synchronous weights");
    }
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

/* Depth 4 with REDUX on 2 workers keeps learning: the loss falls by half and accuracy passes 90 %, as at
 * depth 1 (network::learns_with_redux_reduction). */
Test(network, pipelined_training_learns)
{
    start(2);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(256, 1, 12, 12, 4, 11, 1, &data), 0);
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 4, &d), 0);
    struct dahl_train_conf conf = {.batch = 8, .lr = 0.05f, .reduction = DAHL_REDUCTION_REDUX, .seed = 3,
                                   .pipeline_depth = 4};
    struct dahl_network *net = dahl_network_create(&d, &conf, err, sizeof(err));
    cr_assert_not_null(net, "%s", err);
    double loss0, acc0, loss, acc;
    train(net, &data, 8, 1, &loss0, &acc0);
    train(net, &data, 8, 3, &loss, &acc);
    cr_assert_lt(loss, 0.5 * loss0, "loss %f after the first epoch, %f after four", loss0, loss);
    cr_assert_gt(acc, 0.9, "accuracy %f after four epochs (first: %f)", acc, acc0);
    dahl_network_destroy(net);
    conf.pipeline_depth = 65;
    cr_assert_null(dahl_network_create(&d, &conf, err, sizeof(err)));
    cr_assert(strstr(err, "pipeline_depth") != NULL, "%s", err);
    dahl_dataset_fini(&data);
    dahl_engine_stop();
}

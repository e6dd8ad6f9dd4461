/* The task graph of training steps (dahl_stepgraph.h): its task counts against what dahl_network.c submits in
 * a real (native) run and against the task catalogue, and its edges on networks small enough to draw by
 * hand, for both gradient reductions and across two steps. */
#include <criterion/criterion.h>

#include "dahl_catalogue.h"
#include "dahl_codelets.h"
#include "dahl_dataset.h"
#include "dahl_engine.h"
#include "dahl_kernels.h"
#include "dahl_network.h"
#include "dahl_stepgraph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[512];

/* The predecessors of task t, as "a,b,c". */
static const char *preds(const struct dahl_stepgraph *g, int t)
{
    static char buf[256];
    size_t used = 0;
    buf[0] = '\0';
    for (int k = g->pred_start[t]; k < g->pred_start[t + 1]; k++)
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%d", k > g->pred_start[t] ? "," : "", g->pred[k]);
    return buf;
}

static void expect_task(const struct dahl_stepgraph *g, int t, const char *symbol, bool by_starpu, const char *want)
{
    cr_assert_lt(t, g->ntasks);
    cr_expect_str_eq(g->tasks[t].symbol, symbol, "task %d", t);
    cr_expect_eq(g->tasks[t].by_starpu, by_starpu, "task %d (%s): by_starpu", t, symbol);
    cr_expect_str_eq(preds(g, t), want, "task %d (%s): predecessors", t, symbol);
}

/* One dense layer from 2 inputs to 2 classes, batch 2: small enough to draw. */
static void tiny(struct dahl_network_desc *d)
{
    *d = (struct dahl_network_desc){.c = 1, .h = 1, .w = 2, .nclasses = 2, .nlayers = 1,
                                    .layers = {{.kind = DAHL_LAYER_DENSE, .units = 2}}};
}

/* Manual reduction, plain SGD. Per sample: forward (reads w, b), loss (after forward), backward_weights
 * (after the loss; writes that sample's gradient buffers). Then per parameter: one accumulate of sample 1's
 * buffer into sample 0's, SGD (after every reader of the parameter and the sum), and the zeroing of both
 * buffers (sample 0's after SGD read it, sample 1's after the accumulate read it). */
Test(stepgraph, tiny_manual_by_hand)
{
    struct dahl_network_desc d;
    tiny(&d);
    struct dahl_stepgraph g;
    struct dahl_catalogue_conf conf = {.batch = 2, .reduction = DAHL_REDUCTION_MANUAL, .momentum = false};
    cr_assert_eq(dahl_stepgraph_build(&g, &d, &conf, 1, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(g.ntasks, 14);
    expect_task(&g, 0, "dahl_dense_forward", false, "");
    expect_task(&g, 1, "dahl_softmax_xent", false, "0");
    expect_task(&g, 2, "dahl_dense_backward_weights", false, "1");
    expect_task(&g, 3, "dahl_dense_forward", false, "");
    expect_task(&g, 4, "dahl_softmax_xent", false, "3");
    expect_task(&g, 5, "dahl_dense_backward_weights", false, "4");
    expect_task(&g, 6, "dahl_accumulate", false, "2,5");
    expect_task(&g, 7, "dahl_sgd_update", false, "0,3,6");
    expect_task(&g, 8, "dahl_zero", false, "7");
    expect_task(&g, 9, "dahl_zero", false, "6");
    expect_task(&g, 10, "dahl_accumulate", false, "2,5");
    expect_task(&g, 11, "dahl_sgd_update", false, "0,3,10");
    expect_task(&g, 12, "dahl_zero", false, "11");
    expect_task(&g, 13, "dahl_zero", false, "10");
    cr_expect_eq(g.nedges, 18);
    dahl_stepgraph_fini(&g);
}

/* REDUX with 2 per-worker copies, momentum, two steps. The backward tasks of both samples reduce into the
 * same tensor concurrently; SGD's read ends the reduction: StarPU's tree adds copy 1 into the tensor, then
 * copy 2 (both after every REDUX task). The second step's forward waits for the SGD updates (w, b) and
 * for the loss that read its output buffer; its loss for the first step's loss (metrics buffer) and
 * backward (which read the gradient buffer it writes); its backward for the zeroing of the gradients. */
Test(stepgraph, tiny_redux_two_steps_by_hand)
{
    struct dahl_network_desc d;
    tiny(&d);
    struct dahl_stepgraph g;
    struct dahl_catalogue_conf conf = {.batch = 2, .reduction = DAHL_REDUCTION_REDUX, .momentum = true,
                                       .redux_copies = 2};
    cr_assert_eq(dahl_stepgraph_build(&g, &d, &conf, 2, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(g.ntasks, 28);
    expect_task(&g, 0, "dahl_dense_forward", false, "");
    expect_task(&g, 1, "dahl_softmax_xent", false, "0");
    expect_task(&g, 2, "dahl_dense_backward_weights", false, "1");
    expect_task(&g, 3, "dahl_dense_forward", false, "");
    expect_task(&g, 4, "dahl_softmax_xent", false, "3");
    expect_task(&g, 5, "dahl_dense_backward_weights", false, "4");
    expect_task(&g, 6, "dahl_accumulate", true, "2,5");
    expect_task(&g, 7, "dahl_accumulate", true, "2,5,6");
    expect_task(&g, 8, "dahl_sgd_update", false, "0,3,7");
    expect_task(&g, 9, "dahl_zero", false, "8");
    expect_task(&g, 10, "dahl_accumulate", true, "2,5");
    expect_task(&g, 11, "dahl_accumulate", true, "2,5,10");
    expect_task(&g, 12, "dahl_sgd_update", false, "0,3,11");
    expect_task(&g, 13, "dahl_zero", false, "12");
    /* step 2 */
    expect_task(&g, 14, "dahl_dense_forward", false, "1,8,12");
    expect_task(&g, 15, "dahl_softmax_xent", false, "1,2,14");
    expect_task(&g, 18, "dahl_softmax_xent", false, "4,5,17");
    expect_task(&g, 16, "dahl_dense_backward_weights", false, "9,13,15");
    expect_task(&g, 17, "dahl_dense_forward", false, "4,8,12");
    expect_task(&g, 19, "dahl_dense_backward_weights", false, "9,13,18");
    expect_task(&g, 20, "dahl_accumulate", true, "16,19");
    expect_task(&g, 22, "dahl_sgd_update", false, "8,14,17,21");
    cr_expect_eq(g.tasks[14].step, 1);
    cr_expect_eq(dahl_stepgraph_count(&g, "dahl_accumulate", true), 0);
    cr_expect_eq(dahl_stepgraph_count(&g, "dahl_accumulate", false), 8);
    dahl_stepgraph_fini(&g);
}

/* The same network and steps with the weights' update split into 2 chunks (update_chunk 2: w has 4
 * elements, b 2 stays whole). Partitioning the REDUX gradient ends its reduction (6, 7); each chunk's SGD
 * waits for that and for every reader of the weights (the partitioning of w); each chunk of the gradient is
 * zeroed after its SGD read it. StarPU's partition and unpartition tasks are empty, so the next accessors of
 * the whole tensors (step 2's forward and backward) depend on what they depended on: the chunks' tasks, and
 * the earlier accessors of the whole tensor. */
Test(stepgraph, tiny_redux_chunked_update_by_hand)
{
    struct dahl_network_desc d;
    tiny(&d);
    struct dahl_stepgraph g;
    struct dahl_catalogue_conf conf = {.batch = 2, .reduction = DAHL_REDUCTION_REDUX, .momentum = true,
                                       .redux_copies = 2, .update_chunk = 2};
    cr_assert_eq(dahl_stepgraph_build(&g, &d, &conf, 2, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(g.ntasks, 32);
    expect_task(&g, 5, "dahl_dense_backward_weights", false, "4");
    expect_task(&g, 6, "dahl_accumulate", true, "2,5");
    expect_task(&g, 7, "dahl_accumulate", true, "2,5,6");
    expect_task(&g, 8, "dahl_sgd_update", false, "0,3,7");
    expect_task(&g, 9, "dahl_sgd_update", false, "0,3,7");
    expect_task(&g, 10, "dahl_zero", false, "8");
    expect_task(&g, 11, "dahl_zero", false, "9");
    expect_task(&g, 12, "dahl_accumulate", true, "2,5"); /* the bias: one task as before */
    expect_task(&g, 14, "dahl_sgd_update", false, "0,3,13");
    expect_task(&g, 15, "dahl_zero", false, "14");
    /* step 2: the forward reads w once both chunks are updated, the backward reduces into dw once both are
     * zeroed; the chunks' SGD also waits for step 1's chunk tasks (the velocity chunk 8 or 9) */
    expect_task(&g, 16, "dahl_dense_forward", false, "0,1,3,8,9,14");
    expect_task(&g, 18, "dahl_dense_backward_weights", false, "7,10,11,15,17");
    expect_task(&g, 22, "dahl_accumulate", true, "18,21");
    expect_task(&g, 24, "dahl_sgd_update", false, "0,3,7,8,9,10,11,16,19,23");
    expect_task(&g, 25, "dahl_sgd_update", false, "0,3,7,8,9,10,11,16,19,23");
    expect_task(&g, 27, "dahl_zero", false, "25");
    cr_expect_eq(g.tasks[8].footprint, dahl_sgd_update_footprint_of(2, true));
    cr_expect_eq(g.tasks[14].footprint, dahl_sgd_update_footprint_of(2, true));
    cr_expect_eq(g.tasks[6].footprint, dahl_reduce_footprint_of(4), "the reduction stays whole");
    cr_expect_eq(g.tasks[10].footprint, dahl_reduce_footprint_of(2));
    dahl_stepgraph_fini(&g);
}

/* One REDUX task per gradient: a single copy whatever redux_copies says (no worker touched another). */
Test(stepgraph, redux_copies_at_most_the_tasks)
{
    struct dahl_network_desc d;
    tiny(&d);
    struct dahl_stepgraph g;
    struct dahl_catalogue_conf conf = {.batch = 1, .reduction = DAHL_REDUCTION_REDUX, .redux_copies = 14};
    cr_assert_eq(dahl_stepgraph_build(&g, &d, &conf, 1, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(dahl_stepgraph_count(&g, "dahl_accumulate", false), 2);
    dahl_stepgraph_fini(&g);
    conf.redux_copies = 0;
    cr_expect_eq(dahl_stepgraph_build(&g, &d, &conf, 1, err, sizeof(err)), -EINVAL);
    cr_expect(strstr(err, "redux_copies") != NULL, "%s", err);
}

/* Every (symbol, footprint) count of the graph is the catalogue's, predecessors come first and are sorted
 * and unique. */
static void check_against_catalogue(const struct dahl_network_desc *d, const struct dahl_catalogue_conf *conf,
                                    int steps)
{
    struct dahl_stepgraph g;
    cr_assert_eq(dahl_stepgraph_build(&g, d, conf, steps, err, sizeof(err)), 0, "%s", err);
    struct dahl_catalogue c;
    dahl_catalogue_init(&c);
    for (int s = 0; s < steps; s++)
        cr_assert_eq(dahl_catalogue_add_step(&c, d, conf, err, sizeof(err)), 0, "%s", err);
    long total = 0;
    for (size_t i = 0; i < c.n; i++) {
        long n = 0, by_starpu = 0;
        for (int t = 0; t < g.ntasks; t++) {
            if (g.tasks[t].footprint == c.entries[i].footprint && strcmp(g.tasks[t].symbol, c.entries[i].symbol) == 0) {
                n++;
                by_starpu += g.tasks[t].by_starpu;
            }
        }
        cr_expect_eq(n, c.entries[i].count, "%s %08x: %ld in the graph, %ld catalogued", c.entries[i].symbol,
                     c.entries[i].footprint, n, c.entries[i].count);
        cr_expect_eq(by_starpu, c.entries[i].starpu_count, "%s %08x: StarPU's", c.entries[i].symbol,
                     c.entries[i].footprint);
        total += c.entries[i].count;
    }
    cr_expect_eq(total, g.ntasks, "every task of the graph is catalogued");
    for (int t = 0; t < g.ntasks; t++)
        for (int k = g.pred_start[t]; k < g.pred_start[t + 1]; k++) {
            cr_assert_lt(g.pred[k], t, "task %d: predecessor %d", t, g.pred[k]);
            if (k > g.pred_start[t])
                cr_assert_gt(g.pred[k], g.pred[k - 1], "task %d: predecessors sorted and unique", t);
        }
    dahl_catalogue_fini(&c);
    dahl_stepgraph_fini(&g);
}

Test(stepgraph, counts_are_the_catalogues)
{
    struct dahl_network_desc lenet, deep;
    cr_assert_eq(dahl_network_desc_lenet(3, 28, 28, 10, &lenet), 0);
    cr_assert_eq(dahl_network_desc_deep(1, 12, 12, 10, 2, 4, &deep), 0);
    check_against_catalogue(&lenet,
                            &(struct dahl_catalogue_conf){.batch = 32, .reduction = DAHL_REDUCTION_REDUX,
                                                          .momentum = true, .redux_copies = 14},
                            2);
    check_against_catalogue(&lenet,
                            &(struct dahl_catalogue_conf){.batch = 5, .reduction = DAHL_REDUCTION_MANUAL}, 1);
    check_against_catalogue(&deep,
                            &(struct dahl_catalogue_conf){.batch = 3, .reduction = DAHL_REDUCTION_REDUX,
                                                          .momentum = false, .redux_copies = 2},
                            3);
    /* split updates: LeNet's dense1 (48 000 weights) in 69 chunks of two sizes, and the deep net's too */
    check_against_catalogue(&lenet,
                            &(struct dahl_catalogue_conf){.batch = 4, .reduction = DAHL_REDUCTION_REDUX,
                                                          .momentum = true, .redux_copies = 3, .update_chunk = 700},
                            2);
    check_against_catalogue(&lenet,
                            &(struct dahl_catalogue_conf){.batch = 5, .reduction = DAHL_REDUCTION_MANUAL,
                                                          .update_chunk = 700},
                            2);
    check_against_catalogue(&deep,
                            &(struct dahl_catalogue_conf){.batch = 3, .reduction = DAHL_REDUCTION_MANUAL,
                                                          .momentum = true, .update_chunk = 100},
                            1);
}

/* A real run: dahl_network_task_count after `steps` native steps equals the graph's dahl-submitted tasks. */
static void run_and_compare(const struct dahl_network_desc *d, const struct dahl_train_conf *tc, int steps)
{
    struct dahl_catalogue_conf cc = {.batch = tc->batch, .reduction = tc->reduction,
                                     .momentum = tc->momentum != 0.0f, .redux_copies = 2,
                                     .update_chunk = tc->update_chunk, .grain = tc->grain};
    struct dahl_stepgraph g;
    cr_assert_eq(dahl_stepgraph_build(&g, d, &cc, steps, err, sizeof(err)), 0, "%s", err);
    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(tc->batch * steps, d->c, d->h, d->w, d->nclasses, 3, 1, &data), 0);
    struct dahl_network *net = dahl_network_create(d, tc, err, sizeof(err));
    cr_assert_not_null(net, "%s", err);
    size_t per = (size_t)d->c * d->h * d->w;
    for (int s = 0; s < steps; s++)
        cr_assert_eq(dahl_network_train_step(net, data.images + (size_t)s * tc->batch * per,
                                             data.labels + s * tc->batch, false),
                     0);
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    long total = 0;
    for (size_t k = 0; k < nsymbols; k++) {
        long ran = dahl_network_task_count(net, symbols[k]), graph = dahl_stepgraph_count(&g, symbols[k], true);
        cr_expect_eq(ran, graph, "%s: %ld submitted in %d steps, %ld in the graph", symbols[k], ran, steps, graph);
        total += ran;
    }
    cr_expect_gt(total, 0);
    dahl_network_destroy(net);
    dahl_dataset_fini(&data);
    dahl_stepgraph_fini(&g);
}

Test(stepgraph, counts_are_a_real_runs)
{
    setenv("STARPU_SILENT", "1", 1);
    setenv("STARPU_CALIBRATE", "0", 1);
    char dir[] = "/tmp/dahlsim-stepgraph-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    setenv("STARPU_HOME", dir, 1);
    setenv("STARPU_PERF_MODEL_DIR", dir, 1);
    dahl_kernels_init();
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = 2;
    conf.ngpu = 0;
    conf.sched = "eager";
    cr_assert_eq(dahl_engine_start(&conf), 0);
    struct dahl_network_desc lenet, deep;
    cr_assert_eq(dahl_network_desc_lenet(3, 16, 16, 10, &lenet), 0);
    cr_assert_eq(dahl_network_desc_deep(1, 12, 12, 10, 2, 4, &deep), 0);
    run_and_compare(&lenet,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2);
    run_and_compare(&deep,
                    &(struct dahl_train_conf){.batch = 4, .lr = 0.01f, .reduction = DAHL_REDUCTION_MANUAL, .seed = 1},
                    1);
    run_and_compare(&lenet,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1, .update_chunk = 700},
                    2);
    run_and_compare(&deep,
                    &(struct dahl_train_conf){.batch = 4, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .update_chunk = 100},
                    1);
    /* tasks over several samples: groups of 2, 2 and 1; one group of 4 */
    run_and_compare(&lenet,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1, .grain = 2},
                    2);
    run_and_compare(&deep,
                    &(struct dahl_train_conf){.batch = 4, .lr = 0.01f, .reduction = DAHL_REDUCTION_MANUAL, .seed = 1,
                                              .grain = 4},
                    1);
    /* every model of the zoo, by name, at one step of batch 2 */
    const char *zoo[] = {"lenet", "vgg-small", "deep", "deep:1", "resnet:8", "resnet:14", "resnet:20", "resnet:26",
                         "resnet:32"};
    for (size_t z = 0; z < sizeof(zoo) / sizeof(zoo[0]); z++) {
        struct dahl_network_desc d;
        cr_assert_eq(dahl_network_desc_named(zoo[z], 1, 12, 12, 10, &d, err, sizeof(err)), 0, "%s: %s", zoo[z], err);
        run_and_compare(&d,
                        &(struct dahl_train_conf){.batch = 2, .lr = 0.01f, .momentum = 0.9f,
                                                  .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                        1);
    }
    /* average and global average pooling, a stride-2 convolution */
    struct dahl_network_desc pooled = {
        .c = 1, .h = 12, .w = 12, .nclasses = 10, .nlayers = 6,
        .layers = {{.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 2, .pad = 1},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_AVGPOOL, .kernel = 3, .stride = 1},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                   {.kind = DAHL_LAYER_DENSE, .units = 10}}};
    run_and_compare(&pooled,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2);
    run_and_compare(&pooled,
                    &(struct dahl_train_conf){.batch = 4, .lr = 0.01f, .reduction = DAHL_REDUCTION_MANUAL, .seed = 1,
                                              .grain = 2},
                    1);
    /* a skip connection: layer 1's output read by layers 2 and 4 (its gradient summed from both), dropout */
    struct dahl_network_desc skip = {
        .c = 1, .h = 8, .w = 8, .nclasses = 10, .nlayers = 8,
        .layers = {{.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_ADD, .back = {0, 2}},
                   {.kind = DAHL_LAYER_DROPOUT, .percent = 25},
                   {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                   {.kind = DAHL_LAYER_DENSE, .units = 10}}};
    run_and_compare(&skip,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2);
    run_and_compare(&skip,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .reduction = DAHL_REDUCTION_MANUAL, .seed = 1,
                                              .grain = 2},
                    1);
    /* batch norm under the manual reduction, over groups of 2, 2 and 1 */
    struct dahl_network_desc resnet;
    cr_assert_eq(dahl_network_desc_resnet(1, 8, 8, 10, 8, &resnet), 0);
    run_and_compare(&resnet,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .grain = 2},
                    2);
    /* torchvision's idioms: convolutions without bias before batch norm, a padded max-pool (ResNet's stem) */
    struct dahl_network_desc stem = {
        .c = 3, .h = 9, .w = 9, .nclasses = 10, .nlayers = 7,
        .layers = {{.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1, .no_bias = 1},
                   {.kind = DAHL_LAYER_BATCHNORM},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_MAXPOOL, .kernel = 3, .stride = 2, .pad = 1},
                   {.kind = DAHL_LAYER_CONV, .filters = 8, .kernel = 3, .stride = 2, .pad = 1, .no_bias = 1},
                   {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                   {.kind = DAHL_LAYER_DENSE, .units = 10}}};
    run_and_compare(&stem,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2);
    run_and_compare(&stem,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .reduction = DAHL_REDUCTION_MANUAL, .seed = 1,
                                              .grain = 2},
                    1);
    dahl_engine_stop();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

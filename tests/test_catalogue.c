/* The task catalogue against StarPU itself: native training runs with STARPU_CALIBRATE=1 write StarPU's
 * history perf models, and every (symbol, footprint) StarPU recorded must be in the catalogue of those runs
 * with the same size (and flops, where dahl set them), and every catalogue entry must have been recorded.
 * dahl's own task counts per step must be the catalogue's. That is what lets `dahlsim machine synth` write
 * perf models for tasks that never ran. */
#include <criterion/criterion.h>

#include "dahl_catalogue.h"
#include "dahl_codelets.h"
#include "dahl_dataset.h"
#include "dahl_engine.h"
#include "dahl_kernels.h"
#include "dahl_network.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[512];

/* One history entry of a model file. */
struct recorded {
    char symbol[64];
    uint32_t footprint;
    unsigned long size;
    double flops;
    unsigned nsample;
};

/* Reads every history entry (lines starting with an 8-digit hex footprint) of dir/codelets/45/SYMBOL.host
 * for every dahl symbol into out (at most max); returns the count. */
static size_t read_models(const char *dir, const char *host, struct recorded *out, size_t max)
{
    size_t nsymbols, n = 0;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    for (size_t k = 0; k < nsymbols; k++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/codelets/45/%s.%s", dir, symbols[k], host);
        FILE *f = fopen(path, "r");
        if (f == NULL) /* a codelet no training step runs (an evaluation's): every catalogued one is checked below */
            continue;
        char line[1024];
        while (fgets(line, sizeof(line), f) != NULL) {
            size_t hex = strspn(line, "0123456789abcdef");
            if (hex != 8 || (line[8] != '\t' && line[8] != ' '))
                continue;
            cr_assert_lt(n, max);
            struct recorded *r = &out[n++];
            snprintf(r->symbol, sizeof(r->symbol), "%s", symbols[k]);
            double mean, dev, sum, sum2;
            cr_assert_eq(sscanf(line, "%" SCNx32 " %lu %le %le %le %le %le %u", &r->footprint, &r->size, &r->flops,
                                &mean, &dev, &sum, &sum2, &r->nsample),
                         8, "%s: %s", path, line);
        }
        fclose(f);
    }
    return n;
}

/* Trains `steps` steps of d under conf natively, checks dahl's task counts against the catalogue of one
 * step, and adds that step to all. */
static void train_and_count(const struct dahl_network_desc *d, const struct dahl_train_conf *conf, int steps,
                            struct dahl_catalogue *all)
{
    struct dahl_catalogue one;
    dahl_catalogue_init(&one);
    struct dahl_catalogue_conf cc = {.batch = conf->batch, .reduction = conf->reduction,
                                     .momentum = conf->momentum != 0.0f, .redux_copies = 1,
                                     .update_chunk = conf->update_chunk, .grain = conf->grain};
    cr_assert_eq(dahl_catalogue_add_step(&one, d, &cc, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahl_catalogue_add_step(all, d, &cc, err, sizeof(err)), 0, "%s", err);

    struct dahl_dataset data;
    cr_assert_eq(dahl_dataset_synthetic(conf->batch * steps, d->c, d->h, d->w, d->nclasses, 3, 1, &data), 0);
    struct dahl_network *net = dahl_network_create(d, conf, err, sizeof(err));
    cr_assert_not_null(net, "%s", err);
    size_t per = (size_t)d->c * d->h * d->w;
    for (int s = 0; s < steps; s++)
        cr_assert_eq(dahl_network_train_step(net, data.images + (size_t)s * conf->batch * per,
                                             data.labels + s * conf->batch, false),
                     0);
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    for (size_t k = 0; k < nsymbols; k++)
        cr_assert_eq(dahl_network_task_count(net, symbols[k]), steps * dahl_catalogue_count(&one, symbols[k], true),
                     "%s: %ld submitted in %d steps, the catalogue says %ld per step", symbols[k],
                     dahl_network_task_count(net, symbols[k]), steps, dahl_catalogue_count(&one, symbols[k], true));
    dahl_network_destroy(net);
    dahl_dataset_fini(&data);
    dahl_catalogue_fini(&one);
}

Test(catalogue, footprints_are_the_ones_starpu_records)
{
    char dir[] = "/tmp/dahlsim-catalogue-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    setenv("STARPU_HOME", dir, 1);
    setenv("STARPU_PERF_MODEL_DIR", dir, 1);
    setenv("STARPU_HOSTNAME", "dahlcat", 1);
    setenv("STARPU_CALIBRATE", "1", 1);
    setenv("STARPU_SILENT", "1", 1);
    dahl_kernels_init();
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = 2;
    conf.ngpu = 0;
    conf.sched = "eager";
    cr_assert_eq(dahl_engine_start(&conf), 0);

    /* LeNet with REDUX gradients and momentum; the deep variant with manual reduction and plain SGD: every
     * codelet, both SGD footprints, StarPU's own reduction tasks and dahl's accumulate tasks. Both again with
     * updates split into chunks of at most 700 elements: LeNet's dense1 (7680 weights) into 11 chunks of two
     * sizes (699 and 698), the deep net's tensors with and without momentum. */
    struct dahl_catalogue all;
    dahl_catalogue_init(&all);
    struct dahl_network_desc lenet, deep;
    cr_assert_eq(dahl_network_desc_lenet(3, 16, 16, 10, &lenet), 0);
    cr_assert_eq(dahl_network_desc_deep(1, 12, 12, 10, 2, 4, &deep), 0);
    train_and_count(&lenet,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2, &all);
    train_and_count(&deep,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.0f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1},
                    1, &all);
    train_and_count(&lenet,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1, .update_chunk = 700},
                    2, &all);
    train_and_count(&deep,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.0f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .update_chunk = 700},
                    1, &all);
    /* Tasks over several samples (grain): batch 5 in groups of 2, 2 and 1 (REDUX), and in one of 5 (manual,
     * the gradient tree's scratch) */
    train_and_count(&lenet,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1, .grain = 2},
                    1, &all);
    train_and_count(&deep,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .momentum = 0.0f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .grain = 5},
                    1, &all);
    /* Average pooling and global average pooling (a ResNet's head): REDUX at grain 1, manual over groups */
    struct dahl_network_desc pooled = {
        .c = 1, .h = 12, .w = 12, .nclasses = 10, .nlayers = 7,
        .layers = {{.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_AVGPOOL, .kernel = 2, .stride = 2},
                   {.kind = DAHL_LAYER_CONV, .filters = 8, .kernel = 3, .stride = 2, .pad = 1},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                   {.kind = DAHL_LAYER_DENSE, .units = 10}}};
    train_and_count(&pooled,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2, &all);
    train_and_count(&pooled,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .momentum = 0.0f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .grain = 2},
                    1, &all);
    /* A skip connection (an add of layers 1 and 3; layer 1's gradient summed from two readers), dropout */
    struct dahl_network_desc skip = {
        .c = 1, .h = 8, .w = 8, .nclasses = 10, .nlayers = 7,
        .layers = {{.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1},
                   {.kind = DAHL_LAYER_RELU},
                   {.kind = DAHL_LAYER_CONV, .filters = 4, .kernel = 3, .stride = 1, .pad = 1},
                   {.kind = DAHL_LAYER_ADD, .back = {0, 1}},
                   {.kind = DAHL_LAYER_DROPOUT, .percent = 25},
                   {.kind = DAHL_LAYER_GLOBALAVGPOOL},
                   {.kind = DAHL_LAYER_DENSE, .units = 10}}};
    train_and_count(&skip,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2, &all);
    train_and_count(&skip,
                    &(struct dahl_train_conf){.batch = 4, .lr = 0.01f, .momentum = 0.0f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .grain = 2},
                    1, &all);
    /* ResNet-8 (batch norm: its statistics and parameter gradients summed between two phases; projections) */
    struct dahl_network_desc resnet;
    cr_assert_eq(dahl_network_desc_resnet(1, 8, 8, 10, 8, &resnet), 0);
    train_and_count(&resnet,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2, &all);
    train_and_count(&resnet,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .momentum = 0.0f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .grain = 2},
                    1, &all);
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
    train_and_count(&stem,
                    &(struct dahl_train_conf){.batch = 3, .lr = 0.01f, .momentum = 0.9f,
                                              .reduction = DAHL_REDUCTION_REDUX, .seed = 1},
                    2, &all);
    train_and_count(&stem,
                    &(struct dahl_train_conf){.batch = 5, .lr = 0.01f, .momentum = 0.0f,
                                              .reduction = DAHL_REDUCTION_MANUAL, .seed = 1, .grain = 2},
                    1, &all);
    dahl_engine_stop(); /* StarPU writes the history files now */

    static struct recorded rec[1024];
    size_t n = read_models(dir, "dahlcat", rec, 1024);
    cr_assert_geq(n, 30, "only %zu entries recorded", n);
    for (size_t i = 0; i < n; i++) {
        const struct dahl_catalogue_entry *e = dahl_catalogue_find(&all, rec[i].symbol, rec[i].footprint);
        cr_assert_not_null(e, "StarPU recorded %s footprint %08" PRIx32 " (size %lu), not in the catalogue",
                           rec[i].symbol, rec[i].footprint, rec[i].size);
        cr_assert_eq(rec[i].size, e->size, "%s %08" PRIx32 ": size %lu recorded, %zu catalogued", rec[i].symbol,
                     rec[i].footprint, rec[i].size, e->size);
        /* StarPU keeps the flops of an entry's first task: 0 when StarPU's own reduction task came first. */
        if (rec[i].flops != 0.0 || e->starpu_count == 0)
            cr_assert_eq(rec[i].flops, e->flops, "%s %08" PRIx32 ": %g flops recorded, %g catalogued", rec[i].symbol,
                         rec[i].footprint, rec[i].flops, e->flops);
    }
    for (size_t k = 0; k < all.n; k++) {
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = rec[i].footprint == all.entries[k].footprint && strcmp(rec[i].symbol, all.entries[k].symbol) == 0;
        cr_assert(seen, "catalogued %s footprint %08" PRIx32 " (size %zu) never recorded by StarPU",
                  all.entries[k].symbol, all.entries[k].footprint, all.entries[k].size);
    }
    cr_assert_eq(n, all.n, "one recorded entry per catalogue entry (a single CPU architecture)");
    dahl_catalogue_fini(&all);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The counts of one step follow from the description alone: LeNet on 12x12, batch 4 (the numbers
 * test_network checks on the submitted graph), plus StarPU's REDUX reductions: one per gradient tensor and
 * per-worker copy. */
Test(catalogue, lenet_step_counts)
{
    struct dahl_network_desc d;
    cr_assert_eq(dahl_network_desc_lenet(1, 12, 12, 4, &d), 0);
    struct dahl_catalogue c;
    dahl_catalogue_init(&c);
    struct dahl_catalogue_conf conf = {.batch = 4, .reduction = DAHL_REDUCTION_REDUX, .momentum = true,
                                       .redux_copies = 2};
    cr_assert_eq(dahl_catalogue_add_step(&c, &d, &conf, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_conv2d_forward", true), 8);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_conv2d_backward_input", true), 4, "not for the first layer");
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_relu_backward", true), 12);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_sgd_update", true), 8);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_zero", true), 8);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_accumulate", true), 0);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_accumulate", false), 16, "8 gradients x 2 copies");
    /* The first conv layer: forward and backward_weights, same footprint, the shape's. */
    struct dahl_conv2d_shape s = {.c = 1, .h = 12, .w = 12, .f = 6, .kh = 5, .kw = 5, .stride = 1, .pad = 2};
    const struct dahl_catalogue_entry *e = dahl_catalogue_find(&c, "dahl_conv2d_forward", dahl_conv2d_footprint_of(&s));
    cr_assert_not_null(e);
    cr_assert_eq(e->flops, dahl_conv2d_forward_flops(&s));
    cr_assert_eq(e->bytes, (double)dahl_conv2d_forward_bytes(&s));
    cr_assert_eq(e->count, 4);
    cr_assert_not_null(dahl_catalogue_find(&c, "dahl_conv2d_backward_weights", dahl_conv2d_footprint_of(&s)));
    cr_assert_null(dahl_catalogue_find(&c, "dahl_conv2d_backward_input", dahl_conv2d_footprint_of(&s)));
    /* A bad description is refused with the layer named. */
    d.layers[d.nlayers - 1].units = 7;
    cr_assert_eq(dahl_catalogue_add_step(&c, &d, &conf, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "gives 7 outputs") != NULL, "%s", err);
    dahl_catalogue_fini(&c);
}

/* Split updates: at 512x512x3 LeNet's dense1 (120 x 16 x 125 x 125 = 30 481 920 weights) becomes 117 SGD
 * and zeroing tasks of 260 529 or 260 530 elements, REDUX's reduction stays whole; at 28x28x3 no tensor is
 * split (the largest, dense1, has 48 000 weights), so that task graph is the one before splitting. */
Test(catalogue, large_updates_are_split_small_ones_are_not)
{
    cr_assert_eq(dahl_update_chunks(48000, 0), 1);
    cr_assert_eq(dahl_update_chunks(DAHL_UPDATE_CHUNK_DEFAULT, 0), 1);
    cr_assert_eq(dahl_update_chunks(DAHL_UPDATE_CHUNK_DEFAULT + 1, 0), 2);
    cr_assert_eq(dahl_update_chunks(30481920, 0), 117);
    cr_assert_eq(dahl_update_chunks(30481920, SIZE_MAX), 1);
    size_t sum = 0;
    for (int i = 0; i < 117; i++) {
        size_t m = dahl_update_chunk_elems(30481920, 117, i);
        cr_assert(m == 260530 || m == 260529, "chunk %d: %zu", i, m);
        cr_assert_eq(m, i < 27 ? 260530u : 260529u, "chunk %d: the first n %% k chunks are one larger", i);
        sum += m;
    }
    cr_assert_eq(sum, 30481920u);

    struct dahl_network_desc big, small;
    cr_assert_eq(dahl_network_desc_lenet(3, 512, 512, 10, &big), 0);
    cr_assert_eq(dahl_network_desc_lenet(3, 28, 28, 10, &small), 0);
    struct dahl_catalogue_conf conf = {.batch = 14, .reduction = DAHL_REDUCTION_REDUX, .momentum = true,
                                       .redux_copies = 14};
    struct dahl_catalogue c, whole;
    dahl_catalogue_init(&c);
    dahl_catalogue_init(&whole);
    cr_assert_eq(dahl_catalogue_add_step(&c, &big, &conf, err, sizeof(err)), 0, "%s", err);
    /* 8 tensors, dense1's weights in 117 chunks */
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_sgd_update", true), 7 + 117);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_zero", true), 7 + 117);
    cr_assert_eq(dahl_catalogue_count(&c, "dahl_accumulate", false), 8 * 14, "reductions stay whole");
    const struct dahl_catalogue_entry *e =
        dahl_catalogue_find(&c, "dahl_sgd_update", dahl_sgd_update_footprint_of(260530, true));
    cr_assert_not_null(e);
    cr_assert_eq(e->count, 27);
    cr_assert_eq(e->bytes, (double)dahl_sgd_update_bytes(260530, true));
    e = dahl_catalogue_find(&c, "dahl_zero", dahl_reduce_footprint_of(260529));
    cr_assert_not_null(e);
    cr_assert_eq(e->count, 90);
    cr_assert_null(dahl_catalogue_find(&c, "dahl_sgd_update", dahl_sgd_update_footprint_of(30481920, true)));
    cr_assert_not_null(dahl_catalogue_find(&c, "dahl_accumulate", dahl_reduce_footprint_of(30481920)));
    dahl_catalogue_fini(&c);
    dahl_catalogue_init(&c);
    cr_assert_eq(dahl_catalogue_add_step(&c, &small, &conf, err, sizeof(err)), 0, "%s", err);
    conf.update_chunk = SIZE_MAX;
    cr_assert_eq(dahl_catalogue_add_step(&whole, &small, &conf, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(c.n, whole.n);
    for (size_t i = 0; i < c.n; i++) {
        cr_assert_str_eq(c.entries[i].symbol, whole.entries[i].symbol);
        cr_assert_eq(c.entries[i].footprint, whole.entries[i].footprint);
        cr_assert_eq(c.entries[i].count, whole.entries[i].count);
    }
    dahl_catalogue_fini(&c);
    dahl_catalogue_fini(&whole);
}

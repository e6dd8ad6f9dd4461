/* The training setups a synthesized machine covers (dahlsim_machine.h): `--cover DATASET[,model=M][,grains=N]` parsed
 * into the network it builds, the tasks of its training steps, and the time of one step on one worker. */
#include "dahlsim_machine.h"

#include "dahl_dataset_name.h"
#include "dahlsim_model.h"
#include "dahlsim_util.h"

#include <stdio.h>
#include <string.h>

#define SIM_TASK_OVERHEAD_US 1.0 /* StarPU-SimGrid 1.3.10 adds 1 us of polling to every task (test_flavours.c) */

static const char *const default_covers[] = {
    "fashion-mnist", "synthetic:28x28x3", "synthetic:128x128x3", "synthetic:512x512x3",
};

bool dahlsim_machine_covers_default(struct dahlsim_synth_opts *o)
{
    for (size_t i = 0; o->ncovers == 0 && i < sizeof(default_covers) / sizeof(default_covers[0]); i++)
        if (!dahlsim_machine_cover_parse(default_covers[i], &o->covers[i]))
            return false;
    if (o->ncovers == 0)
        o->ncovers = (int)(sizeof(default_covers) / sizeof(default_covers[0]));
    return true;
}

bool dahlsim_machine_cover_parse(const char *text, struct dahlsim_machine_cover *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->model, sizeof(c->model), "lenet");
    c->grains = 1;
    char buf[256];
    if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf)) {
        dahlsim_error("--cover: too long: \"%.40s...\"", text);
        return false;
    }
    char *rest = buf, *item = strsep(&rest, ",");
    struct dahl_dataset_name data;
    if (!dahl_dataset_name_parse(item, &data) || strlen(item) >= sizeof(c->dataset)) {
        dahlsim_error("--cover: expected DATASET[,model=M] with DATASET " DAHL_DATASET_NAMES ", got \"%s\"", text);
        return false;
    }
    int ch = data.c, h = data.h, w = data.w;
    snprintf(c->dataset, sizeof(c->dataset), "%s", item);
    while ((item = strsep(&rest, ",")) != NULL) {
        if (strncmp(item, "grains=", 7) == 0) {
            long grains;
            if (!dahlsim_parse_int("--cover grains=N", item + 7, 1, DAHLSIM_MACHINE_MAX_GRAINS, &grains))
                return false;
            c->grains = (int)grains;
            continue;
        }
        if (strncmp(item, "model=", 6) != 0 || strlen(item + 6) >= sizeof(c->model)) {
            dahlsim_error("--cover %s: \"%s\": expected model=lenet|vgg-small|resnet:DEPTH|deep|deep:BLOCKS|FILE.json|"
                          "FILE.onnx or grains=N",
                          text, item);
            return false;
        }
        snprintf(c->model, sizeof(c->model), "%s", item + 6);
    }
    char what[320], err[1024];
    snprintf(what, sizeof(what), "--cover %s: model", text);
    if (dahlsim_model_desc(what, c->model, ch, h, w, &c->desc, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        return false;
    }
    return true;
}

/* SGD's footprint depends on momentum: both are catalogued. With grains N, a step of one task per layer over
 * n samples for every n in [2, N] too. */
int dahlsim_machine_cover_catalogue(const struct dahlsim_machine_cover *c, struct dahl_catalogue *cat, char *err,
                                    size_t err_size)
{
    struct dahl_catalogue_conf confs[] = {
        {.batch = 2, .reduction = DAHL_REDUCTION_REDUX, .momentum = true, .redux_copies = 1},
        {.batch = 2, .reduction = DAHL_REDUCTION_MANUAL, .momentum = false},
    };
    for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]); i++) {
        int ret = dahl_catalogue_add_step(cat, &c->desc, &confs[i], err, err_size);
        if (ret != 0)
            return ret;
    }
    for (int n = 2; n <= c->grains; n++) {
        struct dahl_catalogue_conf conf = {.batch = n, .grain = n, .reduction = DAHL_REDUCTION_REDUX,
                                           .momentum = true, .redux_copies = 1};
        int ret = dahl_catalogue_add_step(cat, &c->desc, &conf, err, err_size);
        if (ret != 0)
            return ret;
    }
    return 0;
}

double dahlsim_machine_step_us(const struct dahlsim_machine_cover *c, const struct dahlsim_spec *spec,
                               enum dahlsim_arch arch)
{
    struct dahl_catalogue cat;
    dahl_catalogue_init(&cat);
    struct dahl_catalogue_conf conf = {
        .batch = DAHLSIM_MACHINE_STEP_BATCH, .reduction = DAHL_REDUCTION_REDUX, .momentum = true, .redux_copies = 1};
    char err[256];
    double us = 0;
    if (dahl_catalogue_add_step(&cat, &c->desc, &conf, err, sizeof(err)) == 0)
        for (size_t i = 0; i < cat.n; i++)
            us += (double)cat.entries[i].count *
                  (dahlsim_roofline_us(spec, arch, dahlsim_symbol_index(cat.entries[i].symbol), cat.entries[i].flops,
                                       cat.entries[i].bytes) +
                   SIM_TASK_OVERHEAD_US);
    dahl_catalogue_fini(&cat);
    return us;
}

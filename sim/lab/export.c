/* Training graphs as lab graphs (see dahlsim_dag.h): the task graph of dahl training steps
 * (dahl_stepgraph.h) with every task's cost read from a calibration's perf-model files (dahlsim_perfmodel.h). */
#include "dahlsim_dag.h"
#include "dahlsim_lab_internal.h"

#include "dahl_catalogue.h"
#include "dahl_perfnames.h"
#include "dahl_stepgraph.h"
#include "dahlsim_model.h"
#include "dahlsim_perfmodel.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dahlsim_dag_export_desc(const struct dahlsim_dag_export_conf *conf, struct dahl_network_desc *d, char *err,
                            size_t err_size)
{
    return dahlsim_model_desc("--model", conf->model, conf->c, conf->h, conf->w, d, err, err_size);
}

/* The types of the graph: first-seen order of symbols (or of symbol and footprint). */
static int export_type(char (*names)[64], int *ntypes, const struct dahl_stepgraph_task *t, bool by_footprint)
{
    char name[64];
    if (by_footprint)
        snprintf(name, sizeof(name), "%s:%08x", t->symbol, (unsigned)t->footprint);
    else
        snprintf(name, sizeof(name), "%s", t->symbol);
    for (int i = 0; i < *ntypes; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    if (*ntypes == DAHLSIM_DAG_MAX_TYPES)
        return -1;
    snprintf(names[*ntypes], sizeof(names[0]), "%s", name);
    return (*ntypes)++;
}

int dahlsim_dag_export(const struct dahlsim_dag_export_conf *conf, struct dahlsim_dag *g, char *err,
                       size_t err_size)
{
    memset(g, 0, sizeof(*g));
    struct dahl_network_desc d;
    int ret = dahlsim_dag_export_desc(conf, &d, err, err_size);
    if (ret != 0)
        return ret;
    struct dahl_catalogue_conf cc = {.batch = conf->batch,
                                     .reduction = conf->manual ? DAHL_REDUCTION_MANUAL : DAHL_REDUCTION_REDUX,
                                     .momentum = conf->momentum, .redux_copies = conf->redux_copies,
                                     .grain = conf->grain};
    struct dahl_stepgraph sg;
    ret = dahl_stepgraph_build(&sg, &d, &cc, conf->steps, err, err_size);
    if (ret != 0)
        return ret;
    /* Sizes for regression models: the catalogue of one step has every (symbol, footprint). */
    struct dahl_catalogue cat;
    dahl_catalogue_init(&cat);
    ret = dahl_catalogue_add_step(&cat, &d, &cc, err, err_size);
    size_t nsym = 0;
    const char *const *symbols = dahl_codelet_symbols(&nsym);
    const struct dahlsim_perfmodel **models = calloc(nsym + 1, sizeof(*models)); /* dahlsim_perfmodel_get's */
    char(*names)[64] = calloc(DAHLSIM_DAG_MAX_TYPES, sizeof(*names));
    const char *name_ptr[DAHLSIM_DAG_MAX_TYPES];
    double(*tcost)[DAHL_NARCH] = calloc((size_t)sg.ntasks + 1, sizeof(*tcost));
    double sum[DAHLSIM_DAG_MAX_TYPES][DAHL_NARCH] = {{0}}, count[DAHLSIM_DAG_MAX_TYPES] = {0};
    double mean[DAHLSIM_DAG_MAX_TYPES][DAHL_NARCH];
    int *type = calloc((size_t)sg.ntasks + 1, sizeof(int)), ntypes = 0;
    if (ret == 0 && (models == NULL || names == NULL || tcost == NULL || type == NULL)) {
        snprintf(err, err_size, "out of memory");
        ret = -ENOMEM;
    }
    static const char *const arch_name[DAHL_NARCH] = {"cpu0", "cuda0"};
    int workers[DAHL_NARCH] = {conf->cpus, conf->gpus};
    for (int t = 0; ret == 0 && t < sg.ntasks; t++) {
        const struct dahl_stepgraph_task *k = &sg.tasks[t];
        size_t m = 0;
        while (m < nsym && strcmp(symbols[m], k->symbol) != 0)
            m++;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/sampling/codelets/45/%s.%s", conf->machine_dir, k->symbol, conf->machine);
        if (m == nsym) {
            snprintf(err, err_size, "%s: not a dahl perf-model symbol", k->symbol);
            ret = -EINVAL;
            break;
        }
        if (models[m] == NULL && (models[m] = dahlsim_perfmodel_get(path, err, err_size)) == NULL) {
            ret = -EINVAL;
            break;
        }
        const struct dahl_catalogue_entry *e = dahl_catalogue_find(&cat, k->symbol, k->footprint);
        /* dahl_softmax_xent stays history-based under every kind (dahl_codelets.h). */
        enum dahl_perfmodel_kind kind = strcmp(k->symbol, "dahl_softmax_xent") == 0
                                            ? DAHL_PERFMODEL_HISTORY
                                            : (enum dahl_perfmodel_kind)conf->perfmodel;
        for (int a = 0; a < DAHL_NARCH; a++) {
            if (workers[a] == 0)
                continue;
            double us = dahlsim_perfmodel_us(models[m], arch_name[a], kind, k->footprint, e != NULL ? e->size : 0);
            if (!(us > 0.0)) {
                snprintf(err, err_size,
                         "%s: no %s estimate for %s footprint %08x (size %zu) on %s (expected a calibration covering "
                         "this setup)",
                         path, dahl_perfmodel_kind_name(kind), k->symbol, (unsigned)k->footprint,
                         e != NULL ? e->size : 0, arch_name[a]);
                ret = -EINVAL;
                break;
            }
            tcost[t][a] = us * 1e-6 + conf->per_task_s;
        }
        if (ret != 0)
            break;
        type[t] = export_type(names, &ntypes, k, conf->group_footprint);
        if (type[t] < 0) {
            snprintf(err, err_size, "more than %d task types (try without --group footprint)", DAHLSIM_DAG_MAX_TYPES);
            ret = -EINVAL;
            break;
        }
        count[type[t]] += 1.0;
        for (int a = 0; a < DAHL_NARCH; a++)
            sum[type[t]][a] += tcost[t][a];
    }
    if (ret == 0) {
        for (int i = 0; i < ntypes; i++) {
            name_ptr[i] = names[i];
            for (int a = 0; a < DAHL_NARCH; a++)
                mean[i][a] = sum[i][a] / count[i];
        }
        ret = dahlsim_dag_init(g, ntypes, name_ptr, (const double(*)[DAHL_NARCH])mean, sg.ntasks, type,
                               sg.pred_start, sg.pred, err, err_size);
    }
    if (ret == 0) {
        ret = dahlsim_dag_set_task_costs(g, (const double(*)[DAHL_NARCH])tcost, err, err_size);
        g->task_layer = ret == 0 ? malloc((size_t)sg.ntasks * sizeof(int) + 1) : NULL;
        for (int t = 0; g->task_layer != NULL && t < sg.ntasks; t++)
            g->task_layer[t] = sg.tasks[t].layer;
        g->cpus = conf->cpus;
        g->gpus = conf->gpus;
        char reduction[64], grain[32] = "";
        if (conf->grain > 1)
            snprintf(grain, sizeof(grain), " in tasks of %d samples", conf->grain);
        if (conf->manual)
            snprintf(reduction, sizeof(reduction), "manual reduction");
        else
            snprintf(reduction, sizeof(reduction), "REDUX reduction of up to %d per-worker copies", conf->redux_copies);
        snprintf(g->source, sizeof(g->source),
                 "dahlsim dag export: %s on %dx%dx%d images, batch %d%s, %s, momentum %s, %d step%s, %s perf models "
                 "of calibration %s, one type per %s",
                 conf->model, conf->h, conf->w, conf->c, conf->batch, grain, reduction, conf->momentum ? "on" : "off",
                 conf->steps, conf->steps > 1 ? "s" : "",
                 dahl_perfmodel_kind_name((enum dahl_perfmodel_kind)conf->perfmodel), conf->machine,
                 conf->group_footprint ? "symbol and footprint" : "perf-model symbol");
        if (ret != 0)
            dahlsim_dag_fini(g);
    }
    free(models);
    free(names);
    free(tcost);
    free(type);
    dahl_catalogue_fini(&cat);
    dahl_stepgraph_fini(&sg);
    return ret;
}

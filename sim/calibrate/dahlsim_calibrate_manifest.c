/* A measured calibration's manifest.json (dahlsim_calibrate.h): which machine, the versions, date and
 * command that made it, how it was measured, the setups it covers, the runtime's costs and every perf-model
 * entry with its spread. */
#include "dahlsim_calibrate.h"
#include "dahlsim_fs.h"
#include "dahlsim_grain.h"
#include "dahlsim_probe.h"

#include "dahl_engine.h"
#include "dahl_kernels.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dahlsim_commit.h" /* DAHLSIM_COMMIT, stamped by every build */
#ifndef DAHLSIM_SIMGRID_VERSION
#define DAHLSIM_SIMGRID_VERSION "unknown"
#endif

int dahlsim_calibrate_manifest_write(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_status *cs,
                                     const struct dahlsim_model_table *t, cJSON *submission, cJSON *scheduling,
                                     cJSON *one_worker, cJSON *spread, const char *path)
{
    cJSON *root = cJSON_CreateObject();
    char date[32];
    struct dahlsim_node here;
    dahlsim_node_here(&here, true); /* what validate and later calibrations compare with */
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(root, "machine", o->machine);
    cJSON_AddStringToObject(root, "source", "measured");
    cJSON *node = cJSON_AddObjectToObject(root, "node");
    cJSON_AddStringToObject(node, "cpu_model", here.cpu_model);
    cJSON_AddNumberToObject(node, "cores", (double)here.cores);
    cJSON_AddNumberToObject(node, "gpus", o->ngpu);
    cJSON_AddNumberToObject(node, "memory_bytes", here.memory_bytes);
    cJSON_AddNumberToObject(node, "probe_gflops", here.probe_gflops);
    /* the round trip the runs were judged against, where this calibration probed any (its runtime costs hold
     * with the cores that close) */
    double latency = dahlsim_calibrate_probe_latency();
    cJSON_AddNumberToObject(node, "core_latency_ns", latency > 0 ? latency : here.core_latency_ns);
    cJSON *v = cJSON_AddObjectToObject(root, "versions");
    cJSON_AddStringToObject(v, "dahlsim", DAHLSIM_VERSION);
    cJSON_AddStringToObject(v, "starpu", dahl_engine_starpu_version());
#ifdef DAHLSIM_STARPU_BUILD
    cJSON_AddStringToObject(v, "starpu_build", DAHLSIM_STARPU_BUILD); /* the native build that measured */
#endif
    cJSON_AddStringToObject(v, "simgrid", DAHLSIM_SIMGRID_VERSION);
#ifdef __VERSION__
    cJSON_AddStringToObject(v, "compiler", __VERSION__);
#endif
    cJSON_AddStringToObject(v, "openblas", dahl_kernels_blas_info());
    cJSON_AddStringToObject(v, "commit", DAHLSIM_COMMIT);
    cJSON_AddStringToObject(root, "date", date);
    cJSON_AddStringToObject(root, "command", o->command);
    cJSON *how = cJSON_AddObjectToObject(root, "method");
    cJSON_AddNumberToObject(how, "steps_per_run", (double)o->steps);
    cJSON_AddNumberToObject(how, "batch", (double)o->batch);
    cJSON_AddNumberToObject(how, "max_runs", (double)o->rounds);
    cJSON_AddStringToObject(how, "STARPU_CALIBRATE_MINIMUM", DAHLSIM_CALIBRATE_MINIMUM);
    char max_error[32];
    snprintf(max_error, sizeof(max_error), "%ld", o->history_max_error);
    cJSON_AddStringToObject(how, "STARPU_HISTORY_MAX_ERROR", max_error);
    cJSON_AddNumberToObject(how, "max_rsd", o->max_rsd);
    cJSON_AddStringToObject(how, "converged_when",
                            "a simulated run of the setup prints no 'not calibrated' warning");
    cJSON_AddNumberToObject(how, "disturbed_above", o->noisy);
    cJSON_AddStringToObject(how, "means",
                            "StarPU's running mean of an entry's samples (refusing those over "
                            "STARPU_HISTORY_MAX_ERROR % from it); an entry measured in 3 kept runs or more: the "
                            "median of its runs' own means instead");
    cJSON *covered = cJSON_AddArrayToObject(root, "covered");
    for (int i = 0; i < o->ncovers; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "dataset", o->covers[i].dataset);
        cJSON_AddStringToObject(c, "model", o->covers[i].model);
        cJSON_AddStringToObject(c, "perfmodel", o->covers[i].perfmodel);
        if (o->covers[i].grain > 1) {
            /* the task sizes the runs measured: what a scenario's grain needs (dahlsim_scenario.c) */
            long sizes[2];
            int n = dahlsim_grain_task_sizes(o->covers[i].grain, o->batch, sizes);
            cJSON_AddNumberToObject(c, "grain", (double)o->covers[i].grain);
            cJSON *grains = cJSON_AddArrayToObject(c, "grains");
            cJSON_AddItemToArray(grains, cJSON_CreateNumber(1));
            for (int k = n - 1; k >= 0; k--) /* ascending: the rest is below the grain */
                if (sizes[k] > 1)
                    cJSON_AddItemToArray(grains, cJSON_CreateNumber((double)sizes[k]));
        }
        cJSON_AddStringToObject(c, "status", cs[i].status);
        cJSON_AddNumberToObject(c, "runs", cs[i].rounds);
        cJSON_AddItemToArray(covered, c);
    }
    if (submission != NULL && !cJSON_IsNull(submission))
        cJSON_AddItemToObject(root, "submission", submission);
    else
        cJSON_Delete(submission);
    if (scheduling != NULL && !cJSON_IsNull(scheduling))
        cJSON_AddItemToObject(root, "scheduling", scheduling);
    else
        cJSON_Delete(scheduling);
    if (one_worker != NULL)
        cJSON_AddItemToObject(root, "one_worker", one_worker);
    if (spread != NULL && !cJSON_IsNull(spread))
        cJSON_AddItemToObject(root, "machine_spread", spread);
    else
        cJSON_Delete(spread);
    cJSON *models = cJSON_AddArrayToObject(root, "models");
    for (size_t i = 0; i < t->n; i++) {
        const struct dahlsim_model_entry *e = &t->v[i];
        cJSON *m = cJSON_CreateObject();
        char fp[16];
        snprintf(fp, sizeof(fp), "%08x", e->footprint);
        cJSON_AddStringToObject(m, "symbol", e->symbol);
        cJSON_AddStringToObject(m, "arch", e->arch);
        cJSON_AddStringToObject(m, "footprint", fp);
        cJSON_AddNumberToObject(m, "size", (double)e->size);
        cJSON_AddNumberToObject(m, "flops", e->flops);
        cJSON_AddNumberToObject(m, "samples", e->nsample);
        cJSON_AddNumberToObject(m, "mean_us", e->mean_us);
        cJSON_AddNumberToObject(m, "stddev_us", e->dev_us);
        cJSON_AddBoolToObject(m, "flagged", dahlsim_model_entry_flagged(e, o->max_rsd));
        cJSON_AddItemToArray(models, m);
    }
    char err[64]; /* the caller names the file and the cause from the code */
    int ret = dahlsim_json_save(root, path, err, sizeof(err));
    cJSON_Delete(root);
    return ret;
}

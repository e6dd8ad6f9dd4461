/* A synthesized machine's manifest.json (dahlsim_machine.h): what it was made from and how, so that a
 * reader can tell it from a measured calibration ("source": "roofline") and redo it. */
#include "dahlsim_machine.h"

#include "dahlsim_fs.h"
#include "dahlsim_outfile.h"

#include "dahl_codelets.h"
#include "dahl_engine.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dahlsim_commit.h" /* DAHLSIM_COMMIT, stamped by every build */
#ifndef DAHLSIM_SIMGRID_VERSION
#define DAHLSIM_SIMGRID_VERSION "unknown"
#endif

#define XPATH (PATH_MAX + 512) /* paths built from another path buffer */

/* In the builders below: an addition that fails (out of memory) ends the builder. */
#define CHK(call)                                                                                            \
    do {                                                                                                     \
        if (!(call))                                                                                         \
            goto nomem;                                                                                      \
    } while (0)

/* Efficiencies per symbol, each with where it came from: "default", "spec" or "fit". */
static cJSON *efficiency_json(const struct dahlsim_spec *spec, enum dahlsim_arch arch,
                              const struct dahlsim_machine_fit *fit)
{
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    cJSON *obj = cJSON_CreateObject();
    for (size_t k = 0; obj != NULL && k < nsymbols; k++) {
        cJSON *e = cJSON_AddObjectToObject(obj, symbols[k]);
        if (e == NULL || !cJSON_AddNumberToObject(e, "compute", spec->eff[arch][k].compute) ||
            !cJSON_AddNumberToObject(e, "memory", spec->eff[arch][k].memory) ||
            !cJSON_AddStringToObject(e, "from", arch == DAHLSIM_ARCH_CPU && fit->symbols[k].fitted ? "fit"
                                                : spec->eff_from_spec[arch][k]                    ? "spec"
                                                                                                  : "default")) {
            cJSON_Delete(obj);
            return NULL;
        }
    }
    return obj;
}

/* "fit": what --fit found, or null. False when memory runs out. */
static bool add_fit(cJSON *root, const struct dahlsim_synth_opts *o, const struct dahlsim_machine_fit *fit)
{
    if (o->fit == NULL)
        return cJSON_AddNullToObject(root, "fit") != NULL;
    cJSON *fj;
    CHK(fj = cJSON_AddObjectToObject(root, "fit"));
    CHK(cJSON_AddStringToObject(fj, "from", o->fit));
    CHK(cJSON_AddStringToObject(fj, "method", "cpu task_overhead_us: the median mean of the measured tasks whose "
                                              "roofline body is under 0.05 us; then per symbol the CPU efficiency "
                                              "(both roofs) minimising the squared log error against the "
                                              "measured means"));
    if (fit->overhead_fitted) {
        CHK(cJSON_AddNumberToObject(fj, "cpu_task_overhead_us", fit->overhead_us));
        CHK(cJSON_AddNumberToObject(fj, "overhead_entries", fit->overhead_entries));
    }
    cJSON *per;
    CHK(per = cJSON_AddObjectToObject(fj, "symbols"));
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    for (size_t k = 0; k < nsymbols; k++) {
        const struct dahlsim_machine_fit_result *f = &fit->symbols[k];
        if (f->entries == 0)
            continue;
        cJSON *r;
        CHK(r = cJSON_AddObjectToObject(per, symbols[k]));
        CHK(cJSON_AddNumberToObject(r, "entries", f->entries));
        CHK(cJSON_AddBoolToObject(r, "fitted", f->fitted));
        CHK(cJSON_AddNumberToObject(r, "median_rel_error_before", f->error_before));
        CHK(cJSON_AddNumberToObject(r, "median_rel_error_after", f->error_after));
    }
    return true;
nomem:
    return false;
}

/* "covered": the setups, with the time of one step on one worker. False when memory runs out. */
static bool add_covered(cJSON *root, const struct dahlsim_synth_opts *o, const struct dahlsim_spec *spec)
{
    cJSON *covered;
    CHK(covered = cJSON_AddArrayToObject(root, "covered"));
    for (int i = 0; i < o->ncovers; i++) {
        cJSON *c;
        CHK(c = cJSON_CreateObject());
        CHK(cJSON_AddItemToArray(covered, c));
        CHK(cJSON_AddStringToObject(c, "dataset", o->covers[i].dataset));
        CHK(cJSON_AddStringToObject(c, "model", o->covers[i].model));
        if (o->covers[i].grains > 1) {
            cJSON *grains;
            CHK(grains = cJSON_AddArrayToObject(c, "grains"));
            for (int n = 1; n <= o->covers[i].grains; n++)
                CHK(cJSON_AddItemToArray(grains, cJSON_CreateNumber(n)));
        }
        /* One training step of batch 32, its tasks alone one after the other on one worker. */
        CHK(cJSON_AddNumberToObject(c, "batch32_step_ms_one_core",
                                    dahlsim_machine_step_us(&o->covers[i], spec, DAHLSIM_ARCH_CPU) / 1e3));
        if (spec->gpu.count > 0)
            CHK(cJSON_AddNumberToObject(c, "batch32_step_ms_one_gpu",
                                        dahlsim_machine_step_us(&o->covers[i], spec, DAHLSIM_ARCH_CUDA) / 1e3));
    }
    return true;
nomem:
    return false;
}

/* "models": every modelled task and its times. False when memory runs out. */
static bool add_models(cJSON *root, const struct dahlsim_spec *spec, const struct dahl_catalogue *cat)
{
    cJSON *models;
    CHK(models = cJSON_AddArrayToObject(root, "models"));
    for (size_t i = 0; i < cat->n; i++) {
        const struct dahl_catalogue_entry *e = &cat->entries[i];
        int k = dahlsim_symbol_index(e->symbol);
        char fp[16];
        snprintf(fp, sizeof(fp), "%08" PRIx32, e->footprint);
        cJSON *m, *us;
        CHK(m = cJSON_CreateObject());
        CHK(cJSON_AddItemToArray(models, m));
        CHK(cJSON_AddStringToObject(m, "symbol", e->symbol));
        CHK(cJSON_AddStringToObject(m, "footprint", fp));
        CHK(cJSON_AddNumberToObject(m, "size", (double)e->size));
        CHK(cJSON_AddNumberToObject(m, "flops", e->flops));
        CHK(cJSON_AddNumberToObject(m, "bytes", e->bytes));
        CHK(us = cJSON_AddObjectToObject(m, "mean_us"));
        CHK(cJSON_AddNumberToObject(us, "cpu", dahlsim_roofline_us(spec, DAHLSIM_ARCH_CPU, k, e->flops, e->bytes)));
        if (spec->gpu.count > 0)
            CHK(cJSON_AddNumberToObject(us, "cuda",
                                        dahlsim_roofline_us(spec, DAHLSIM_ARCH_CUDA, k, e->flops, e->bytes)));
    }
    return true;
nomem:
    return false;
}

/* "versions", "date" and "command". False when memory runs out. */
static bool add_provenance(cJSON *root, const struct dahlsim_synth_opts *o)
{
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON *v;
    CHK(v = cJSON_AddObjectToObject(root, "versions"));
    CHK(cJSON_AddStringToObject(v, "dahlsim", DAHLSIM_VERSION));
    CHK(cJSON_AddStringToObject(v, "starpu", dahl_engine_starpu_version()));
    CHK(cJSON_AddStringToObject(v, "simgrid", DAHLSIM_SIMGRID_VERSION));
    CHK(cJSON_AddStringToObject(v, "perfmodel_format", "45"));
    CHK(cJSON_AddStringToObject(v, "commit", DAHLSIM_COMMIT));
    CHK(cJSON_AddStringToObject(root, "date", date));
    CHK(cJSON_AddStringToObject(root, "command", o->command));
    return true;
nomem:
    return false;
}

/* Builds manifest.json's document (NULL when memory runs out); takes over spec_json. */
static cJSON *manifest_json(const struct dahlsim_synth_opts *o, const struct dahlsim_spec *spec, cJSON *spec_json,
                            const struct dahl_catalogue *cat, const struct dahlsim_machine_fit *fit)
{
    cJSON *root = cJSON_CreateObject();
    if (root == NULL) {
        cJSON_Delete(spec_json);
        return NULL;
    }
    CHK(cJSON_AddStringToObject(root, "machine", o->machine));
    CHK(cJSON_AddStringToObject(root, "source", "roofline"));
    CHK(cJSON_AddStringToObject(root, "spec_file", o->spec_path));
    CHK(cJSON_AddItemToObject(root, "spec", spec_json));
    spec_json = NULL;
    if (o->pstate > 0) {
        cJSON *ps;
        CHK(ps = cJSON_AddObjectToObject(root, "pstate"));
        CHK(cJSON_AddNumberToObject(ps, "index", (double)o->pstate));
        CHK(cJSON_AddNumberToObject(ps, "ghz", spec->cpu.ghz));
        CHK(cJSON_AddNumberToObject(ps, "core_gflops", spec->cpu.core_gflops));
        CHK(cJSON_AddNumberToObject(ps, "idle_w", spec->cpu.idle_w));
        CHK(cJSON_AddNumberToObject(ps, "full_w", spec->cpu.full_w));
        CHK(cJSON_AddStringToObject(ps, "rule", "a scaling rule, not a measurement: core_gflops and 1 / "
                                                "task_overhead_us scale with the clock, core_mem_gbps does not "
                                                "(memory-bound tasks keep their time); the state's watts"));
    } else {
        CHK(cJSON_AddNullToObject(root, "pstate"));
    }
    cJSON *roof;
    CHK(roof = cJSON_AddObjectToObject(root, "roofline"));
    CHK(cJSON_AddStringToObject(roof, "time_us", "max(flops / (peak * compute), bytes / (bandwidth * memory)) * 1e6 "
                                                 "+ task_overhead_us; cpu: one core (core_gflops, core_mem_gbps), "
                                                 "cuda: one GPU (fp32_tflops, mem_gbps)"));
    CHK(cJSON_AddNumberToObject(roof, "samples_per_entry", DAHLSIM_SYNTH_NSAMPLE));
    CHK(cJSON_AddStringToObject(roof, "simulation_adds",
                                "StarPU-SimGrid 1.3.10 adds 1 us per task (datawizard polling) on top of these times"));
    cJSON *eff;
    CHK(eff = cJSON_AddObjectToObject(root, "efficiency"));
    CHK(cJSON_AddItemToObject(eff, "cpu", efficiency_json(spec, DAHLSIM_ARCH_CPU, fit)));
    if (spec->gpu.count > 0)
        CHK(cJSON_AddItemToObject(eff, "cuda", efficiency_json(spec, DAHLSIM_ARCH_CUDA, fit)));
    CHK(add_fit(root, o, fit) && add_covered(root, o, spec) && add_models(root, spec, cat) && add_provenance(root, o));
    return root;
nomem:
    cJSON_Delete(spec_json);
    cJSON_Delete(root);
    return NULL;
}

int dahlsim_machine_manifest_write(const char *dir, const struct dahlsim_synth_opts *o,
                                   const struct dahlsim_spec *spec, void *spec_json,
                                   const struct dahl_catalogue *cat, const struct dahlsim_machine_fit *fit,
                                   char *err, size_t err_size)
{
    cJSON *doc = manifest_json(o, spec, spec_json, cat, fit);
    char *text = doc != NULL ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (doc == NULL) {
        snprintf(err, err_size, "machine synth: out of memory");
        return -ENOMEM;
    }
    if (text == NULL) {
        snprintf(err, err_size, "%s/manifest.json: out of memory", dir);
        return -ENOMEM;
    }
    struct dahlsim_outfile f;
    int ret = dahlsim_outfile_open(&f, err, err_size, "%s/manifest.json", dir);
    if (ret == 0) {
        fputs(text, f.f);
        fputc('\n', f.f);
        ret = dahlsim_outfile_close(&f, err, err_size);
    }
    free(text);
    return ret;
}

void dahlsim_machine_existing_source(const char *final, char *buf, size_t size)
{
    buf[0] = '\0';
    char path[XPATH + 32];
    snprintf(path, sizeof(path), "%s/manifest.json", final);
    cJSON *doc = dahlsim_read_json(path);
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(doc, "source");
    if (cJSON_IsString(source))
        snprintf(buf, size, "%s", source->valuestring);
    cJSON_Delete(doc);
}

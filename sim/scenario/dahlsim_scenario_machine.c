/* A scenario's machine (see dahlsim_scenario.h): its workers, its calibration's manifest (read once per file),
 * whether the calibration covers the experiment, and the runtime costs it measured, copied into the
 * experiment. */
#include "dahlsim_scenario.h"
#include "dahlsim_scenario_fields.h"

#include "dahlsim_fs.h"
#include "dahlsim_manifest.h"
#include "dahlsim_platform.h"
#include "dahlsim_schedconf.h"
#include "dahlsim_util.h"

#include "dahl_dataset_name.h"
#include "dahl_netdesc.h"
#include "dahl_perfnames.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The machines under the calibration root, comma-separated, for hints. */
static void machine_list(char *buf, size_t size)
{
    buf[0] = '\0';
    DIR *d = opendir(dahlsim_calibration_root());
    if (d == NULL)
        return;
    size_t used = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && used < size) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", e->d_name);
    }
    closedir(d);
}

/* Whether the machine's manifest (root, parsed) lists a covered setup with this shape, model and perf-model
 * kind. A manifest without "covered" (a hand-made machine) is trusted. */
static bool covered(const cJSON *root, const struct dahlsim_experiment *x, char *covers, size_t size)
{
    covers[0] = '\0';
    if (root == NULL)
        return true;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "covered");
    bool ok = !cJSON_IsArray(list);
    char want[64];
    dahl_dataset_name_shape(x->dataset, want, sizeof(want));
    size_t used = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, list)
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "dataset");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "model");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "perfmodel");
        if (!cJSON_IsString(d) || !cJSON_IsString(m))
            continue;
        const char *kind = cJSON_IsString(k) ? k->valuestring : "history";
        char have[64];
        dahl_dataset_name_shape(d->valuestring, have, sizeof(have));
        if (used < size)
            used += (size_t)snprintf(covers + used, size - used, "%s%s/%s/%s", used ? ", " : "", d->valuestring,
                                     m->valuestring, kind);
        if (strcmp(have, want) == 0 && strcmp(m->valuestring, x->model) == 0 && strcmp(kind, x->perfmodel) == 0)
            ok = true;
    }
    return ok;
}

/* The machine's measured cost of the thread that submits the tasks (its manifest's "submission"; the entry
 * for the dataset's image shape when there is one): 1 with both values set, 0 when the manifest has none, -1
 * after an error line naming the manifest and the field, and a hint. */
static int machine_submit_cost(const cJSON *m, const char *path, const char *dataset, double *us_per_task,
                               double *copy_bytes_per_s)
{
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(m, "submission");
    char shape[64];
    dahl_dataset_name_shape(dataset, shape, sizeof(shape));
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sub, "per_shape"), shape);
    if (own != NULL)
        sub = own;
    int ret = 0;
    if (sub != NULL) {
        const cJSON *task = cJSON_GetObjectItemCaseSensitive(sub, "us_per_task");
        const cJSON *copy = cJSON_GetObjectItemCaseSensitive(sub, "input_copy_bytes_per_s");
        ret = -1;
        if (!cJSON_IsNumber(task) || !(task->valuedouble > 0 && task->valuedouble < 1e6)) {
            dahlsim_error("%s: \"submission%s%s.us_per_task\": expected a number of microseconds in (0, 1e6)", path,
                          own != NULL ? ".per_shape." : "", own != NULL ? shape : "");
        } else if (!cJSON_IsNumber(copy) || !(copy->valuedouble > 0 && copy->valuedouble < 1e15)) {
            dahlsim_error("%s: \"submission%s%s.input_copy_bytes_per_s\": expected a positive number of bytes per "
                          "second",
                          path, own != NULL ? ".per_shape." : "", own != NULL ? shape : "");
        } else {
            *us_per_task = task->valuedouble;
            *copy_bytes_per_s = copy->valuedouble;
            ret = 1;
        }
        if (ret < 0)
            fprintf(stderr, "hint: dahlsim calibrate writes it; recalibrate, or delete \"submission\" to simulate "
                            "with StarPU-SimGrid's own 1 us per task\n");
    }
    return ret;
}

/* per's entry for the scheduler: its own, or for heteroprio:auto-HEURISTIC without one, the first
 * heteroprio:auto-* entry timed (the heuristic orders the buckets; the policy's pushes and pops cost the
 * same whatever the order). NULL: none. */
static const cJSON *sched_entry(const cJSON *per, const char *scheduler)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(per, scheduler);
    static const char family[] = "heteroprio:auto-";
    if (e != NULL || strncmp(scheduler, family, sizeof(family) - 1) != 0)
        return e;
    cJSON_ArrayForEach(e, per)
    {
        if (e->string != NULL && strncmp(e->string, family, sizeof(family) - 1) == 0)
            return e;
    }
    return NULL;
}

/* The machine's measured costs of the experiment's scheduler with its workers (its manifest's "scheduling",
 * written by dahlsim calibrate): the cost per push ("push_us.<workers>.<scheduler>", 0 when absent) and the
 * workers' cost per task ("worker_us.<workers>.<scheduler>.charge", -1 when absent); see sched_entry for
 * heteroprio. 0, or -1 after an error line naming the manifest and the field, and a hint. */
static int machine_sched_costs(const cJSON *m, const char *path, const struct dahlsim_experiment *x,
                               double *push_us, double *worker_us)
{
    char key[48];
    dahlsim_sched_workers_key(x->cpus, x->gpus, key, sizeof(key));
    const cJSON *sched = cJSON_GetObjectItemCaseSensitive(m, "scheduling");
    const cJSON *push = sched_entry(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sched, "push_us"), key), x->scheduler);
    const cJSON *worker = sched_entry(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sched, "worker_us"), key), x->scheduler);
    const cJSON *charge = cJSON_GetObjectItemCaseSensitive(worker, "charge");
    *push_us = 0;
    *worker_us = -1;
    int ret = 0;
    const char *field = NULL;
    if (push != NULL && (!cJSON_IsNumber(push) || !(push->valuedouble >= 0 && push->valuedouble < 1e6)))
        field = "push_us";
    else if (worker != NULL && (!cJSON_IsNumber(charge) || !(charge->valuedouble >= 0 && charge->valuedouble < 1e6)))
        field = "worker_us";
    if (field != NULL) {
        dahlsim_error("%s: \"scheduling.%s.%s.%s%s\": expected a number of microseconds in [0, 1e6)", path, field,
                      key, field[0] == 'w' ? worker->string : push->string, field[0] == 'w' ? ".charge" : "");
        fprintf(stderr, "hint: dahlsim calibrate writes it; recalibrate, or delete it to simulate without that "
                        "cost\n");
        ret = -1;
    } else {
        if (push != NULL)
            *push_us = push->valuedouble;
        if (worker != NULL)
            *worker_us = charge->valuedouble;
    }
    return ret;
}

/* The machine-dependent checks of experiment_from: the setup is covered, and the manifest's measured costs
 * are valid (copied into x). */
static bool machine_checks(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x,
                           const cJSON *manifest, const char *manifest_path)
{
    char covers[2048];
    if (!covered(manifest, x, covers, sizeof(covers))) {
        char shape[64], expected[2300];
        dahl_dataset_name_shape(x->dataset, shape, sizeof(shape));
        snprintf(expected, sizeof(expected), "a setup calibration %s covers (%s)", x->machine, covers);
        dahlsim_field_error(w, "dataset", cJSON_GetObjectItemCaseSensitive(o, "dataset"), expected);
        fprintf(stderr, "hint: dahlsim calibrate --machine %s --cover %s,model=%s,perfmodel=%s\n", x->machine,
                x->dataset, x->model, x->perfmodel);
        return false;
    }
    x->sched_push_us = 0;
    x->worker_us = -1;
    if (strcmp(x->runtime_costs, "starpu") == 0)
        return true; /* submit_us_per_task and input_copy_bytes_per_s stay 0 */
    int has_cost = machine_submit_cost(manifest, manifest_path, x->dataset, &x->submit_us_per_task,
                                       &x->input_copy_bytes_per_s);
    if (has_cost < 0)
        return false;
    if (has_cost == 0)
        x->submit_us_per_task = x->input_copy_bytes_per_s = 0;
    return machine_sched_costs(manifest, manifest_path, x, &x->sched_push_us, &x->worker_us) == 0;
}

/* The machine's platform bounds the worker counts; every codelet's perf model must be in its calibration. */
static bool workers_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    char platform[PATH_MAX + 96];
    long ncpu, ngpu;
    if (!dahlsim_platform_counts(x->machine_dir, x->machine, &ncpu, &ngpu, platform, sizeof(platform))) {
        char list[1024], expected[1100];
        machine_list(list, sizeof(list));
        snprintf(expected, sizeof(expected), "a machine of %s (%s)", dahlsim_calibration_root(),
                 list[0] ? list : "none yet");
        dahlsim_field_error(w, "machine", cJSON_GetObjectItemCaseSensitive(o, "machine"), expected);
        fprintf(stderr, "hint: %s is missing; calibrate with dahlsim calibrate --machine %s, or describe it with "
                        "dahlsim machine synth\n",
                platform, x->machine);
        return false;
    }
    /* The network first: one that cannot be built is refused with its reason, which the missing model of a
     * codelet it may not even run must not hide. Then the perf model of every codelet it runs must be there:
     * StarPU-SimGrid would otherwise abort at its first task. */
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    struct dahl_network_desc desc;
    char why[512];
    if (dahlsim_grain_network_desc(x, &desc, why, sizeof(why)) != 0) {
        dahlsim_error("%s: \"model\": %s", w->path, why);
        return false;
    }
    for (size_t k = 0; k < nsymbols; k++) {
        if (!dahl_network_desc_uses_codelet(&desc, symbols[k]))
            continue;
        char model_file[PATH_MAX + 256];
        snprintf(model_file, sizeof(model_file), "%s/sampling/codelets/45/%s.%s", x->machine_dir, symbols[k],
                 x->machine);
        if (access(model_file, R_OK) != 0) {
            char expected[PATH_MAX + 320];
            snprintf(expected, sizeof(expected), "a calibration with every perf model the network runs (%s: %s)", model_file,
                     strerror(errno));
            dahlsim_field_error(w, "machine", cJSON_GetObjectItemCaseSensitive(o, "machine"), expected);
            fprintf(stderr, "hint: recalibrate with dahlsim calibrate --machine %s (or dahlsim machine synth)\n",
                    x->machine);
            return false;
        }
    }
    char bound[160];
    snprintf(bound, sizeof(bound), "at most the %ld CPUs of %s's platform", ncpu, x->machine);
    if (!dahlsim_field_int(w, o, "cpus", 0, 100000, ncpu, &x->cpus))
        return false;
    if (x->cpus > ncpu) {
        dahlsim_field_error(w, "cpus", cJSON_GetObjectItemCaseSensitive(o, "cpus"), bound);
        return false;
    }
    snprintf(bound, sizeof(bound), "at most the %ld GPUs of %s's platform", ngpu, x->machine);
    if (!dahlsim_field_int(w, o, "gpus", 0, 1000, ngpu, &x->gpus))
        return false;
    if (x->gpus > ngpu) {
        dahlsim_field_error(w, "gpus", cJSON_GetObjectItemCaseSensitive(o, "gpus"), bound);
        return false;
    }
    if (x->cpus + x->gpus == 0) {
        dahlsim_field_error(w, "cpus", cJSON_GetObjectItemCaseSensitive(o, "cpus"), "at least one worker (cpus + gpus >= 1)");
        return false;
    }
    return true;
}

/* The machine's manifest, parsed, or NULL when it is unreadable. The last one read is kept with its text: a
 * sweep's points read the same file, and a large one (372 KB for roofline-14cpu-1v100) is parsed again only
 * when its bytes change. Owned by the cache: callers must not free it. */
const cJSON *dahlsim_scenario_manifest(const char *path)
{
    static char *text;
    static cJSON *root;
    char *now = dahlsim_read_text(path, SIZE_MAX);
    if (now != NULL && text != NULL && strcmp(now, text) == 0) {
        free(now);
        return root;
    }
    cJSON_Delete(root);
    free(text);
    text = now;
    root = now != NULL ? cJSON_Parse(now) : NULL;
    return root;
}

bool dahlsim_scenario_machine_checks(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    if (!workers_from(w, o, x))
        return false;
    /* The machine's manifest, read once for the coverage check and the measured costs. */
    char manifest_path[PATH_MAX + 32];
    snprintf(manifest_path, sizeof(manifest_path), "%s/manifest.json", x->machine_dir);
    return machine_checks(w, o, x, dahlsim_scenario_manifest(manifest_path), manifest_path);
}

/* The runtime's own costs a calibration measures (dahlsim_calibrate.h), in plain native runs
 * (STARPU_CALIBRATE=0) after the perf models: the thread submitting the tasks, and each scheduling
 * policy's cost per push and the workers' cost per task, which simulations charge where StarPU-SimGrid
 * gives them no time. */
#include "dahlsim_calibrate.h"

#include "dahlsim_schedconf.h"
#include "dahlsim_fs.h"
#include "dahlsim_manifest.h"
#include "dahlsim_scenario.h"
#include "dahlsim_util.h"

#include "dahl_dataset_name.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define XPATH (PATH_MAX + 512) /* paths built from another path buffer */
#define SUBMIT_RUNS 3
#define SCHED_RUNS 3

/* The results.json of the run in p->run, parsed (NULL when missing or not JSON; the caller deletes it). */
static cJSON *run_results(const struct dahlsim_calibrate_paths *p)
{
    char path[XPATH];
    snprintf(path, sizeof(path), "%s/results.json", p->run);
    return dahlsim_read_json(path);
}

/* The submitting thread's figures of the plain native run in p->run: us per task (image copies apart) and
 * the copy rate; false when results.json lacks them. */
static bool read_submission(const struct dahlsim_calibrate_paths *p, double *us_per_task, double *copy_rate,
                            double *tasks)
{
    cJSON *r = run_results(p);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "submission");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(s, "us_per_task");
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(s, "input_copy_bytes_per_s");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "tasks");
    bool ok = cJSON_IsNumber(us) && cJSON_IsNumber(rate) && cJSON_IsNumber(n) && us->valuedouble > 0 &&
              rate->valuedouble > 0;
    if (ok) {
        *us_per_task = us->valuedouble;
        *copy_rate = rate->valuedouble;
        *tasks = n->valuedouble;
    }
    cJSON_Delete(r);
    return ok;
}

/* The values v[n] of n plain runs split by their cores' round trip lat[n] (dahlsim_calibrate_cores_apart):
 * {"close": {"median", "runs"}, "apart": {...}}, each spell only where a run fell in it. The runtime's costs
 * follow the cores' distance (a 2-vCPU VM: 1.8 against 4.3-6.8 us per submitted task), and a calibration
 * cannot choose the spell it runs in: it keeps both where it saw both. */
static cJSON *per_spell(const double *v, const double *lat, int n)
{
    cJSON *o = cJSON_CreateObject();
    for (int apart = 0; apart <= 1; apart++) {
        double in[SUBMIT_RUNS > SCHED_RUNS ? SUBMIT_RUNS : SCHED_RUNS];
        int k = 0;
        for (int r = 0; r < n; r++)
            if (dahlsim_calibrate_cores_apart(lat[r]) == (apart == 1))
                in[k++] = v[r];
        if (k == 0)
            continue;
        cJSON *spell = cJSON_AddObjectToObject(o, apart ? "apart" : "close");
        cJSON_AddNumberToObject(spell, "median", dahlsim_median(in, (size_t)k));
        cJSON_AddNumberToObject(spell, "runs", k);
    }
    return o;
}

/* Whether setups a and b of o have the same image shape. */
static bool same_shape(const struct dahlsim_calibrate_opts *o, int a, int b)
{
    char x[64], y[64];
    dahl_dataset_name_shape(o->covers[a].dataset, x, sizeof(x));
    dahl_dataset_name_shape(o->covers[b].dataset, y, sizeof(y));
    return strcmp(x, y) == 0;
}

/* The manifest's "submission": per image shape ("28x28x1" for fashion-mnist), the median over SUBMIT_RUNS
 * plain native runs (STARPU_CALIBRATE=0: under calibration StarPU's submission costs more, 2.9-3.2 against
 * 2.2-2.6 us per task at 28x28x3 here) of the shape's first covered setup, with the calibration's batch and
 * steps; at the top, over all shapes, weighted by their tasks (for a shape without its own entry). A shape
 * whose setups this calibration did not measure keeps the previous manifest's entry. The cost per task grows
 * with the image (build-2core-epyc: 2.2 us at 28x28x3, 3.0 at 128x128x3, 3.9 at 512x512x3). NULL after an
 * error line. */

static int smallest_cover(const struct dahlsim_calibrate_opts *o);

/* Samples of the runs timing the submitting thread per worker count: long enough that the first steps'
 * costs do not weigh (at batch 8: 5.4-5.7 us per task over 128 samples, 4.75 over 2048). */
#define PER_WORKERS_SAMPLES 1024

/* The submitting thread per CPU worker count k (1, 2, 4, ... and every core), on the covered setup with the
 * smallest images, SUBMIT_RUNS plain runs each of PER_WORKERS_SAMPLES samples: its CPU time per task, its time
 * runnable but waiting for a core per task (the kernel's run_delay), and the share of a core it had,
 * cpu / (cpu + waiting); medians. Where the workers fill the cores the thread competes with them: on the
 * 2-vCPU VM 0.53-0.60 of a core at 2 workers, all of one at 1. The simulation does not read it yet. NULL
 * after an error line (DAHLSIM_CALIBRATE_NOISY runs included). */
static cJSON *submission_per_workers(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p)
{
    const struct dahlsim_calibrate_cover *c = &o->covers[smallest_cover(o)];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cJSON *per = cJSON_CreateObject();
    for (long k = 1; k <= cores; k = k * 2 > cores && k < cores ? cores : k * 2) {
        if (!o->quiet)
            fprintf(stderr, "submitting thread: %s, %ld CPU worker(s), %d plain native runs...\n", c->dataset, k,
                    SUBMIT_RUNS);
        const struct dahlsim_calibrate_run run = {.ncpu = (int)k};
        double cpu[SUBMIT_RUNS], wait[SUBMIT_RUNS], share[SUBMIT_RUNS];
        for (int r = 0; r < SUBMIT_RUNS; r++) {
            int st = dahlsim_calibrate_native_train(o, c, p, r + 1, false, PER_WORKERS_SAMPLES, o->batch, &run);
            cJSON *res = st == 0 ? run_results(p) : NULL;
            const cJSON *sub = cJSON_GetObjectItemCaseSensitive(res, "submission");
            double t = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sub, "thread_cpu_s"));
            double w = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sub, "thread_wait_s"));
            double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sub, "tasks"));
            cJSON_Delete(res);
            if (st != 0 || !(t > 0) || !(n > 0)) {
                if (st != DAHLSIM_CALIBRATE_NOISY)
                    dahlsim_error("calibrate: %s: the plain native run timing the submitting thread with %ld "
                                  "worker(s) failed (exit %d)", c->dataset, k, st);
                cJSON_Delete(per);
                return NULL;
            }
            w = isfinite(w) && w > 0 ? w : 0; /* null: no schedstat in /proc */
            cpu[r] = 1e6 * t / n;
            wait[r] = 1e6 * w / n;
            share[r] = t / (t + w);
        }
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "cpu_us_per_task", dahlsim_median(cpu, SUBMIT_RUNS));
        cJSON_AddNumberToObject(e, "waiting_us_per_task", dahlsim_median(wait, SUBMIT_RUNS));
        cJSON_AddNumberToObject(e, "core_share", dahlsim_median(share, SUBMIT_RUNS));
        cJSON_AddNumberToObject(e, "runs", SUBMIT_RUNS);
        char key[32];
        snprintf(key, sizeof(key), "%ld", k);
        cJSON_AddItemToObject(per, key, e);
    }
    cJSON_AddStringToObject(per, "dataset", c->dataset);
    cJSON_AddNumberToObject(per, "samples", PER_WORKERS_SAMPLES);
    return per;
}

cJSON *dahlsim_calibrate_submission(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p,
                                    const struct dahlsim_calibrate_status *cs, const cJSON *prev_submission)
{
    cJSON *shapes = cJSON_CreateObject();
    const cJSON *prev_shapes = cJSON_GetObjectItemCaseSensitive(prev_submission, "per_shape");
    const cJSON *e;
    cJSON_ArrayForEach(e, prev_shapes) cJSON_AddItemToObject(shapes, e->string, cJSON_Duplicate(e, true));
    for (int i = 0; i < o->ncovers; i++) {
        bool seen = false; /* the shape's first setup decided for it */
        for (int j = 0; j < i && !seen; j++)
            seen = same_shape(o, i, j);
        bool measured = false; /* a setup of this shape had native runs in this calibration */
        for (int j = 0; j < o->ncovers && !measured; j++)
            measured = cs[j].rounds > 0 && same_shape(o, i, j);
        char shape[64];
        dahl_dataset_name_shape(o->covers[i].dataset, shape, sizeof(shape));
        if (seen || (!measured && cJSON_GetObjectItemCaseSensitive(shapes, shape) != NULL))
            continue;
        if (!o->quiet)
            fprintf(stderr, "submitting thread: %s, %d plain native runs...\n", shape, SUBMIT_RUNS);
        double us[SUBMIT_RUNS], rate[SUBMIT_RUNS], lat[SUBMIT_RUNS], tasks = 0;
        for (int r = 0; r < SUBMIT_RUNS; r++) {
            int st = dahlsim_calibrate_native_round(o, &o->covers[i], p, r + 1, false);
            lat[r] = dahlsim_calibrate_run_latency();
            if (st == DAHLSIM_CALIBRATE_NOISY) {
                cJSON_Delete(shapes);
                return NULL;
            }
            if (st != 0 || !read_submission(p, &us[r], &rate[r], &tasks)) {
                char line[512];
                dahlsim_calibrate_last_line(p->errlog, line, sizeof(line));
                dahlsim_error(
                    "calibrate: %s: the plain native run for the submitting thread's cost failed (exit %d): %s",
                    o->covers[i].dataset, st, line);
                cJSON_Delete(shapes);
                return NULL;
            }
        }
        cJSON *entry = cJSON_CreateObject();
        cJSON_AddItemToObject(entry, "us_per_task_spells", per_spell(us, lat, SUBMIT_RUNS)); /* before the sort */
        cJSON_AddNumberToObject(entry, "us_per_task", dahlsim_median(us, SUBMIT_RUNS));
        cJSON_AddNumberToObject(entry, "input_copy_bytes_per_s", dahlsim_median(rate, SUBMIT_RUNS));
        cJSON_AddNumberToObject(entry, "runs", SUBMIT_RUNS);
        cJSON_AddNumberToObject(entry, "tasks", tasks);
        cJSON_AddStringToObject(entry, "dataset", o->covers[i].dataset);
        if (!cJSON_ReplaceItemInObjectCaseSensitive(shapes, shape, entry))
            cJSON_AddItemToObject(shapes, shape, entry);
    }
    if (cJSON_GetArraySize(shapes) == 0) {
        cJSON_Delete(shapes);
        return cJSON_CreateNull();
    }
    bool measured = false; /* any setup had native runs in this calibration: the thread timed again */
    for (int j = 0; j < o->ncovers; j++)
        measured = measured || cs[j].rounds > 0;
    const cJSON *prev_workers = cJSON_GetObjectItemCaseSensitive(prev_submission, "per_workers");
    cJSON *workers = NULL;
    if (o->ngpu == 0 && (measured || prev_workers == NULL)) {
        if ((workers = submission_per_workers(o, p)) == NULL) {
            cJSON_Delete(shapes);
            return NULL;
        }
    } else if (prev_workers != NULL) {
        workers = cJSON_Duplicate(prev_workers, true);
    }
    /* over all shapes, weighted by their tasks: the mean cost per task, the harmonic mean rate */
    double tasks = 0, us = 0, per_rate = 0;
    cJSON_ArrayForEach(e, shapes)
    {
        double n = cJSON_GetObjectItemCaseSensitive(e, "tasks")->valuedouble;
        tasks += n;
        us += n * cJSON_GetObjectItemCaseSensitive(e, "us_per_task")->valuedouble;
        per_rate += n / cJSON_GetObjectItemCaseSensitive(e, "input_copy_bytes_per_s")->valuedouble;
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "us_per_task", us / tasks);
    cJSON_AddNumberToObject(s, "input_copy_bytes_per_s", tasks / per_rate);
    cJSON_AddItemToObject(s, "per_shape", shapes);
    if (workers != NULL)
        cJSON_AddItemToObject(s, "per_workers", workers);
    cJSON_AddStringToObject(s, "what",
                            "CPU time of the thread submitting the tasks (its CPU clock over the training phase, "
                            "image copies apart) per task submitted, and the rate of its image copies, per image "
                            "shape: median of plain native runs (STARPU_CALIBRATE=0) with the calibration's batch "
                            "and steps; simulations charge it, on the workers' cores when no core is left for that "
                            "thread, else on its own. us_per_task_spells: the runs split by the cores' distance (apart: a "
                            "round trip over 2 times the calibration's shortest), each spell's median. per_workers: per CPU "
                            "worker count, the thread's CPU and runnable-but-waiting time per task and the share "
                            "of a core it had, on the smallest covered images (not read by simulations yet)");
    return s;
}

/* From the results.json of the run in p->run: the worker threads' mean push time, the workers' runtime cost
 * per task and the CPU worker count; false when it lacks them. */
static bool read_scheduling(const struct dahlsim_calibrate_paths *p, double *push_us, double *worker_us, int *ncpu)
{
    cJSON *r = run_results(p);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "scheduling");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(s, "worker_push_us");
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(s, "worker_us_per_task");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "workers"), "cpu");
    bool ok = (cJSON_IsNumber(task) || cJSON_IsNull(task)) && cJSON_IsNumber(cpu) &&
              (push_us == NULL || cJSON_IsNumber(us));
    if (ok) {
        if (push_us != NULL)
            *push_us = us->valuedouble;
        *worker_us = cJSON_IsNumber(task) ? task->valuedouble : NAN; /* NaN: no pop_task to time */
        *ncpu = (int)cpu->valuedouble;
    }
    cJSON_Delete(r);
    return ok;
}

/* The covered setup with the smallest images: the policies' cost per push does not depend on the tasks'
 * sizes, and its runs are the shortest. */
static int smallest_cover(const struct dahlsim_calibrate_opts *o)
{
    int best = 0;
    long best_px = -1;
    for (int i = 0; i < o->ncovers; i++) {
        char shape[64];
        long h = 0, w = 0, c = 0;
        dahl_dataset_name_shape(o->covers[i].dataset, shape, sizeof(shape));
        if (sscanf(shape, "%ldx%ldx%ld", &h, &w, &c) == 3 && (best_px < 0 || h * w * c < best_px)) {
            best_px = h * w * c;
            best = i;
        }
    }
    return best;
}

/* Adds {key: {policy: value}} to obj. */
static void put(cJSON *obj, const char *key, const char *policy, cJSON *value)
{
    cJSON *per = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (per == NULL)
        per = cJSON_AddObjectToObject(obj, key);
    cJSON_DeleteItemFromObjectCaseSensitive(per, policy);
    cJSON_AddItemToObject(per, policy, value);
}

/* What measure_policy fills: per worker configuration and policy, the cost per push (and per spell of the
 * cores' distance) and the workers' cost per task. */
struct policy_costs {
    cJSON *push, *spells, *worker;
};

/* Measures one policy (a scenario scheduler value) with ncpu CPU workers (0: StarPU's default, all cores):
 * its cost per push into to->push (per spell into to->spells) and the workers' cost per task into to->worker
 * (measured natively, and what the simulation charges on its own once its per-input cost is off); *all_cpus
 * gets the CPU worker count the runs had. 0, or -1 after an error line. */
static int measure_policy(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p,
                          const struct dahlsim_calibrate_cover *c, const char *value, int ncpu,
                          const struct policy_costs *to, int *all_cpus)
{
    const struct dahlsim_calibrate_run run = {.scheduler = value, .ncpu = ncpu};
    double push_us[SCHED_RUNS], task_us[SCHED_RUNS], lat[SCHED_RUNS], rest_us = 0;
    int had = 0, had_sim = 0;
    for (int r = 0; r <= SCHED_RUNS; r++) {
        /* SCHED_RUNS native runs, then one simulated (deterministic) */
        int st =
            r < SCHED_RUNS
                ? dahlsim_calibrate_native_train(o, c, p, r + 1, false, o->sched_steps * DAHLSIM_CALIBRATE_SCHED_BATCH,
                                                 DAHLSIM_CALIBRATE_SCHED_BATCH, &run)
                : dahlsim_calibrate_sim_rest(o, c, p, value, had, dahlsim_median(push_us, SCHED_RUNS));
        if (r < SCHED_RUNS)
            lat[r] = dahlsim_calibrate_run_latency();
        bool ok = st == 0 && (r < SCHED_RUNS ? read_scheduling(p, &push_us[r], &task_us[r], &had)
                                             : read_scheduling(p, NULL, &rest_us, &had_sim));
        if (st == DAHLSIM_CALIBRATE_NOISY)
            return -1;
        if (!ok) {
            char line[512];
            dahlsim_calibrate_last_line(p->errlog, line, sizeof(line));
            dahlsim_error("calibrate: --schedulers %s: the %s run timing its pushes and tasks failed (exit %d): %s",
                          value, r < SCHED_RUNS ? "plain native" : "simulated", st, line);
            fprintf(stderr, "hint: leave that policy out of --schedulers\n");
            return -1;
        }
    }
    char key[32];
    dahlsim_sched_workers_key(had, o->ngpu, key, sizeof(key));
    put(to->spells, key, value, per_spell(push_us, lat, SCHED_RUNS)); /* before the medians sort */
    double native_us = dahlsim_median(task_us, SCHED_RUNS);
    put(to->push, key, value, cJSON_CreateNumber(dahlsim_median(push_us, SCHED_RUNS)));
    *all_cpus = had;
    if (isnan(native_us) || isnan(rest_us))
        return 0; /* random, pheft: the workers' cost per task stays StarPU-SimGrid's */
    cJSON *w = cJSON_CreateObject();
    cJSON_AddNumberToObject(w, "charge", native_us > rest_us ? native_us - rest_us : 0);
    cJSON_AddNumberToObject(w, "native", native_us);
    cJSON_AddNumberToObject(w, "simulated_rest", rest_us);
    put(to->worker, key, value, w);
    return 0;
}

/* The manifest's "scheduling", per worker configuration (all cores, and one CPU worker) and per policy of
 * --schedulers, at the covered setup with the smallest images, from the medians over SCHED_RUNS plain native
 * runs:
 * - push_us: the mean wall time of a push_task call made by a worker thread (calls over 100 us left out:
 *   preemptions). StarPU-SimGrid charges none of the policy's own work; simulations sleep this after each
 *   push a worker makes.
 * - worker_us: the workers' runtime cost per task ("native": results.json's worker_us_per_task), what a
 *   simulation of the same runs still charges per task with StarPU-SimGrid's 1 us per input fetched turned
 *   off ("simulated_rest": its driver loop's 1 us sleeps), and the difference ("charge", at least 0), which
 *   simulations charge after each task a worker pops (a CPU worker executes it on its core), in place of the
 *   per-input cost.
 * Policies the previous manifest has keep their figures unless --force. The previous object when nothing is
 * to measure, NULL after an error line. */
cJSON *dahlsim_calibrate_scheduling(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p,
                                    const cJSON *prev)
{
    const cJSON *prev_push = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "push_us");
    const cJSON *prev_worker = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "worker_us");
    cJSON *by_workers = prev_push != NULL ? cJSON_Duplicate(prev_push, true) : cJSON_CreateObject();
    cJSON *worker = prev_worker != NULL ? cJSON_Duplicate(prev_worker, true) : cJSON_CreateObject();
    const cJSON *prev_spells = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "push_us_spells");
    cJSON *spells = prev_spells != NULL ? cJSON_Duplicate(prev_spells, true) : cJSON_CreateObject();
    const struct policy_costs to = {by_workers, spells, worker};
    const struct dahlsim_calibrate_cover *c = &o->covers[smallest_cover(o)];
    char list[sizeof(o->schedulers)], *save = NULL;
    snprintf(list, sizeof(list), "%s", o->schedulers);
    int measured = 0;
    for (char *v = strtok_r(list, ",", &save); v != NULL; v = strtok_r(NULL, ",", &save)) {
        /* The all-cores run first: it says how many CPU workers that is. */
        int all = 0, one = 0;
        bool known = false;
        const cJSON *per;
        cJSON_ArrayForEach(per, by_workers) known = known || cJSON_GetObjectItemCaseSensitive(per, v) != NULL;
        /* A manifest from before the workers' cost was measured has push figures only: measure again. */
        bool in_worker = false;
        cJSON_ArrayForEach(per, worker) in_worker = in_worker || cJSON_GetObjectItemCaseSensitive(per, v) != NULL;
        known = known && (in_worker || prev_worker != NULL);
        if (known)
            continue;
        if (!o->quiet)
            fprintf(stderr, "scheduling policy %s: %d plain native runs per worker count...\n", v, SCHED_RUNS);
        if (measure_policy(o, p, c, v, 0, &to, &all) != 0 || (all > 1 && measure_policy(o, p, c, v, 1, &to, &one) != 0)) {
            cJSON_Delete(by_workers);
            cJSON_Delete(worker);
            cJSON_Delete(spells);
            return NULL;
        }
        measured++;
    }
    if ((measured == 0 && prev != NULL) || cJSON_GetArraySize(by_workers) == 0) {
        cJSON_Delete(by_workers);
        cJSON_Delete(worker);
        cJSON_Delete(spells);
        return measured == 0 && prev != NULL ? cJSON_Duplicate(prev, true) : cJSON_CreateNull();
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToObject(s, "push_us", by_workers);
    cJSON_AddItemToObject(s, "worker_us", worker);
    cJSON_AddItemToObject(s, "push_us_spells", spells);
    cJSON_AddStringToObject(s, "dataset", c->dataset);
    cJSON_AddNumberToObject(s, "batch", DAHLSIM_CALIBRATE_SCHED_BATCH);
    cJSON_AddNumberToObject(s, "steps", (double)o->sched_steps);
    cJSON_AddNumberToObject(s, "runs", SCHED_RUNS);
    cJSON_AddStringToObject(s, "what",
                            "per worker configuration and policy, medians of plain native runs (STARPU_CALIBRATE=0). "
                            "push_us: wall time of the policy's push_task per call from a worker thread (calls over "
                            "100 us left out); simulations with the same policy and workers sleep it after each push "
                            "a worker makes (StarPU-SimGrid gives the policy's work no time). worker_us: the "
                            "workers' time per task outside the task and its pushes, from popping it to asking for "
                            "the next (native), what a simulation still charges per task with StarPU-SimGrid's 1 us "
                            "per input fetched off (simulated_rest), and their difference (charge), which "
                            "simulations charge after each task a worker pops (a CPU worker executes it on its core, "
                            "sharing it with the submitting thread), in place of that per-input cost. push_us_spells: "
                            "push_us's runs split by the cores' distance during them (apart: a round trip over 2 "
                            "times the calibration's shortest), each spell's median");
    return s;
}

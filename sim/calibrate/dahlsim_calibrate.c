/* The steps of `dahlsim calibrate` (dahlsim_calibrate.h; the command is sim/cmd/calibrate.c): it measures, on
 * the machine it runs on, the StarPU perf models of every dahl codelet at every shape a set of training setups
 * ("covers") needs, plus StarPU's bus measurements and generated platform, and stores them as
 * calibration/NAME/ (sampling/ is what STARPU_PERF_MODEL_DIR points at in simulation, STARPU_HOSTNAME=NAME)
 * with a manifest.json.
 *
 * How: rounds of the native training program (this same binary's `train`, STARPU_CALIBRATE=1) until a short
 * simulated run of the same setup (build/dahlsim-sim sim-train against the new files) prints no "not
 * calibrated" warning: StarPU's own criterion (STARPU_CALIBRATE_MINIMUM samples per footprint and worker
 * architecture) checked by the program that will use the models. Outliers: StarPU's history update already
 * refuses samples more than STARPU_HISTORY_MAX_ERROR % away from the running mean; on top of that every entry
 * whose relative standard deviation exceeds --max-rsd is flagged in the report, and --recalibrate-flagged
 * measures the codelets of flagged entries again from scratch. Everything is written to a temporary
 * directory next to the destination and moved into place at the end, so an interrupted or failed
 * calibration leaves the previous one intact. */
#include "dahlsim_calibrate.h"
#include "dahl_dataset_name.h"

#include "dahlsim_fs.h"
#include "dahlsim_probe.h"
#include "dahlsim_util.h"

#include "dahl_dataset.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XPATH (PATH_MAX + 512) /* paths built from another path buffer */

bool dahlsim_calibrate_paths_init(struct dahlsim_calibrate_paths *p, const struct dahlsim_calibrate_opts *o)
{
    long pid = (long)getpid();
    return snprintf(p->final, sizeof(p->final), "%s/%s", o->dir, o->machine) < (int)sizeof(p->final) &&
           snprintf(p->tmp, sizeof(p->tmp), "%s/.%s.tmp-%ld", o->dir, o->machine, pid) < (int)sizeof(p->tmp) &&
           snprintf(p->old, sizeof(p->old), "%s/.%s.old-%ld", o->dir, o->machine, pid) < (int)sizeof(p->old) &&
           snprintf(p->sampling, sizeof(p->sampling), "%s/sampling", p->tmp) < (int)sizeof(p->sampling) &&
           snprintf(p->errlog, sizeof(p->errlog), "%s/stderr.log", p->tmp) < (int)sizeof(p->errlog) &&
           snprintf(p->run, sizeof(p->run), "%s/run", p->tmp) < (int)sizeof(p->run);
}

int dahlsim_calibrate_report(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p)
{
    if (!dahlsim_is_dir(p->final)) {
        dahlsim_error("calibrate --report: %s: no such calibration", p->final);
        fprintf(stderr, "hint: calibrate it first with dahlsim calibrate --machine %s\n", o->machine);
        return -EINVAL;
    }
    char sampling[XPATH];
    snprintf(sampling, sizeof(sampling), "%s/sampling", p->final);
    struct dahlsim_model_table t = {0};
    int ret = dahlsim_model_table_load(sampling, o->machine, &t);
    if (ret != 0) {
        dahlsim_error("calibrate --report: %s/codelets/45: %s", sampling, strerror(-ret));
        dahlsim_model_table_fini(&t);
        return -EINVAL;
    }
    dahlsim_model_table_print(&t, o->max_rsd, stdout);
    dahlsim_model_table_fini(&t);
    return 0;
}

/* Deletes, in sampling, the model files of every codelet with a flagged entry. */
static int drop_flagged(const struct dahlsim_calibrate_opts *o, const char *sampling)
{
    struct dahlsim_model_table t = {0};
    int ret = dahlsim_model_table_load(sampling, o->machine, &t);
    for (size_t i = 0; ret == 0 && i < t.n; i++) {
        if (!dahlsim_model_entry_flagged(&t.v[i], o->max_rsd) ||
            (i > 0 && strcmp(t.v[i].symbol, t.v[i - 1].symbol) == 0 &&
             dahlsim_model_entry_flagged(&t.v[i - 1], o->max_rsd)))
            continue;
        char path[XPATH + 256];
        snprintf(path, sizeof(path), "%s/codelets/45/%s.%s", sampling, t.v[i].symbol, o->machine);
        if (remove(path) != 0 && errno != ENOENT)
            ret = -errno;
        else if (!o->quiet)
            fprintf(stderr, "dropped %s (entry %08x: stddev %.2f x mean)\n", t.v[i].symbol, t.v[i].footprint,
                    dahlsim_model_entry_rsd(&t.v[i]));
    }
    dahlsim_model_table_fini(&t);
    return ret == -ENOENT ? 0 : ret;
}

/* ---- the setups: native rounds until the simulated check is clean ---------------------------------------- */

/* One native calibration run of setup i between two probes of the machine, into p->sampling. A run that other
 * work disturbed (o->noisy) leaves nothing: the perf models as they were before it are put back and it runs
 * again, up to o->reruns times, after which calibrate stops (-EBUSY) rather than store figures of a loaded
 * machine. A slow probe alone is a spell of the machine's own: kept, and recorded. Returns 0, or a negative
 * errno after the error line (-EINVAL: the run refused its options). */
static int measure(const struct dahlsim_calibrate_opts *o, int i, const struct dahlsim_calibrate_paths *p, int round,
                   const char *name)
{
    char before[XPATH + 16];
    snprintf(before, sizeof(before), "%s.before", p->sampling);
    int status = 0;
    for (long attempt = 0;; attempt++) {
        if (!o->quiet)
            fprintf(stderr, "[%d/%d] %s: measuring, run %d/%ld (%ld steps of %ld samples)%s...\n", i + 1,
                    o->ncovers, name, round, o->rounds, o->steps, o->batch, attempt > 0 ? ", again" : "");
        int ret = dahlsim_remove_tree(before);
        if (ret == 0 && dahlsim_is_dir(p->sampling))
            ret = dahlsim_copy_tree(p->sampling, before);
        if (ret == 0)
            ret = dahlsim_calibrate_probe(true);
        if (ret != 0) {
            dahlsim_error("calibrate: %s: cannot keep the perf models aside or probe the machine: %s", name,
                          strerror(-ret));
            return -EIO;
        }
        status = dahlsim_calibrate_native_round(o, &o->covers[i], p, round, true);
        if (status != 0 || dahlsim_calibrate_probe(false) != 0)
            break;
        char why[256];
        if (!dahlsim_calibrate_disturbed(o, why, sizeof(why))) {
            dahlsim_calibrate_spell_keep(true);
            ret = dahlsim_calibrate_robust_record(before, p->sampling, o->machine);
            dahlsim_remove_tree(before);
            if (ret != 0)
                dahlsim_error("calibrate: %s: cannot read the perf models in %s: %s", name, p->sampling,
                              strerror(-ret));
            return ret != 0 ? -EIO : 0;
        }
        /* noisy: its figures out, the models as they were */
        dahlsim_remove_tree(p->sampling);
        ret = dahlsim_is_dir(before) ? rename(before, p->sampling) == 0 ? 0 : -errno : 0;
        if (ret != 0) {
            dahlsim_error("calibrate: %s: cannot put the perf models back from %s: %s", name, before, strerror(-ret));
            return -EIO;
        }
        if (attempt == o->reruns) {
            dahlsim_calibrate_noisy_error(o, name, attempt + 1, why);
            return -EBUSY;
        }
        fprintf(stderr, "dahlsim calibrate: %s: run %d was disturbed (%s): its figures are dropped, measuring again\n",
                name, round, why);
    }
    dahlsim_remove_tree(before);
    if (status == 0)
        return 0;
    char line[512];
    dahlsim_calibrate_last_line(p->errlog, line, sizeof(line));
    if (dahlsim_fs_full(p->tmp))
        dahlsim_error("calibrate: %s: No space left on device in %s: the native training run failed (exit %d)", name,
                      p->tmp, status);
    else
        dahlsim_error("calibrate: %s: the native training run failed (exit %d): %s", name, status, line);
    return status == DAHLSIM_EXIT_USAGE ? -EINVAL : -EIO;
}

/* Setup i's name in progress and error lines; the one-worker pass says so. */
static void cover_label(const struct dahlsim_calibrate_opts *o, int i, char *buf, size_t size)
{
    dahlsim_calibrate_cover_name(&o->covers[i], buf, size);
    if (o->measure_ncpu == 1) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, ", one CPU worker");
    }
}

/* First pass over setup i: nothing to do if the simulated check already passes (and not --force), else one
 * native run. Every setup gets its first run before any is checked, because regression models need the
 * several sizes of several setups before StarPU considers them calibrated. Returns 0 or a negative errno;
 * cs->status stays NULL while the setup is pending. */
static int first_pass(const struct dahlsim_calibrate_opts *o, int i, const struct dahlsim_calibrate_paths *p,
                      struct dahlsim_calibrate_status *cs)
{
    char name[PATH_MAX + 128];
    cover_label(o, i, name, sizeof(name));
    *cs = (struct dahlsim_calibrate_status){NULL, 0, 0};
    double start = dahlsim_mono_s();
    if (!o->force && dahlsim_is_dir(p->sampling)) {
        struct dahlsim_calibrate_check r;
        if (dahlsim_calibrate_sim_check(o, &o->covers[i], p, &r) != 0)
            return -EIO;
        if (r.status == 0 && r.uncalibrated == 0) {
            *cs = (struct dahlsim_calibrate_status){"already calibrated", 0, dahlsim_mono_s() - start};
            if (!o->quiet)
                fprintf(stderr, "[%d/%d] %s: already calibrated\n", i + 1, o->ncovers, name);
            return 0;
        }
    }
    int code = measure(o, i, p, 1, name);
    cs->rounds = 1;
    cs->seconds = dahlsim_mono_s() - start;
    return code;
}

/* Second pass: more runs of setup i until the simulated check is clean. Returns 0 when it is, or a negative
 * errno after the error line. */
static int converge(const struct dahlsim_calibrate_opts *o, int i, const struct dahlsim_calibrate_paths *p,
                    struct dahlsim_calibrate_status *cs)
{
    /* Every setup is checked again here, "already calibrated" ones included: measuring an earlier setup may
     * have reset a regression fit (see kind_rank). */
    char name[PATH_MAX + 128];
    cover_label(o, i, name, sizeof(name));
    double start = dahlsim_mono_s() - cs->seconds;
    struct dahlsim_calibrate_check r;
    bool failed_before = false;  /* the last check failed on its own, */
    char failed[sizeof(r.first)]; /* saying this */
    for (;;) {
        if (dahlsim_calibrate_sim_check(o, &o->covers[i], p, &r) != 0)
            return -EIO;
        /* Failed, but not for a model short of measurements: the same failure twice is the simulator's own (a
         * library missing, a broken platform), which more native runs cannot mend. */
        bool own = r.status != 0 && r.uncalibrated == 0;
        if (own && failed_before && strcmp(failed, r.first) == 0) {
            dahlsim_error("calibrate: %s: the simulated check fails on its own (exit %d): %s", name, r.status,
                          r.first[0] ? r.first : "no message");
            fprintf(stderr, "hint: `dahlsim doctor` checks the simulator and its libraries\n");
            return -EIO;
        }
        if (own)
            snprintf(failed, sizeof(failed), "%s", r.first);
        failed_before = own;
        if (r.status == 0 && r.uncalibrated == 0) {
            if (cs->status != NULL && cs->rounds == 0)
                return 0; /* already calibrated, and still */
            cs->status = "calibrated";
            cs->seconds = dahlsim_mono_s() - start;
            if (!o->quiet)
                fprintf(stderr, "[%d/%d] %s: calibrated after %d run(s), %.1f s\n", i + 1, o->ncovers, name,
                        cs->rounds, cs->seconds);
            return 0;
        }
        if (!o->quiet && r.uncalibrated == 0)
            fprintf(stderr, "[%d/%d] %s: the simulated check failed (exit %d: %s)\n", i + 1, o->ncovers, name,
                    r.status, r.first[0] ? r.first : "no message");
        else if (!o->quiet)
            fprintf(stderr, "[%d/%d] %s: %d model entries not calibrated enough yet (%s)\n", i + 1, o->ncovers,
                    name, r.uncalibrated, r.first);
        if (cs->rounds >= o->rounds)
            break;
        int code = measure(o, i, p, ++cs->rounds, name);
        if (code != 0)
            return code;
    }
    dahlsim_error("calibrate: %s: still not calibrated after %ld runs: %s", name, o->rounds,
                  r.first[0] ? r.first : "the simulated check failed");
    fprintf(stderr, "hint: more --rounds or --steps; timing noise (another load on the machine) makes StarPU "
                    "reject samples (a larger --max-error keeps them); a regression perf model needs setups of "
                    "several sizes\n");
    return -EIO;
}

/* ---- the calibration: a temporary directory, swapped in at the end -------------------------------------- */

/* Every fashion-mnist setup needs the dataset installed. Returns 0, or -EINVAL after the error line. */
static int check_datasets(const struct dahlsim_calibrate_opts *o)
{
    for (int i = 0; i < o->ncovers; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/train-images-idx3-ubyte.gz", DAHL_FASHION_MNIST_DIR);
        if (dahl_dataset_name_is_fashion_mnist(o->covers[i].dataset) && access(path, R_OK) != 0) {
            dahlsim_error("calibrate: --cover %s: %s: %s", o->covers[i].dataset, path, strerror(errno));
            fprintf(stderr, "hint: apt-get install dataset-fashion-mnist, or cover synthetic:28x28x1 instead\n");
            return -EINVAL;
        }
    }
    return 0;
}

/* The previous calibration's manifest into *prev (NULL when there is none): a machine that is not a measured
 * calibration is refused, and so is one measured on another machine, unless --force measures it anew (a
 * calibration does not travel between CPUs: build-2core-epyc, an AMD EPYC's, validated on an Intel Xeon at
 * -16 to +20 %). Returns 0, or -EINVAL after the error line. */
static int load_previous(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p, cJSON **prev)
{
    char prev_path[XPATH];
    snprintf(prev_path, sizeof(prev_path), "%s/manifest.json", p->final);
    *prev = dahlsim_read_json(prev_path);
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(*prev, "source");
    if (cJSON_IsString(source) && strcmp(source->valuestring, "measured") != 0) {
        dahlsim_error("calibrate: %s is a \"%s\" machine, not a measured calibration: refusing to mix them",
                      p->final, source->valuestring);
        fprintf(stderr, "hint: pick another --machine name\n");
        cJSON_Delete(*prev);
        *prev = NULL;
        return -EINVAL;
    }
    struct dahlsim_node calibrated, here;
    char why[512], err[XPATH + 128];
    if (*prev != NULL && !o->force && dahlsim_node_of_manifest(prev_path, &calibrated, err, sizeof(err)) == 0) {
        dahlsim_node_here(&here, false);
        if (!dahlsim_node_matches(&calibrated, &here, why, sizeof(why))) {
            dahlsim_error("calibrate: %s was measured on another machine (%s): refusing to add to it", p->final, why);
            fprintf(stderr, "hint: --force measures it anew on this machine, or pick another --machine name\n");
            cJSON_Delete(*prev);
            *prev = NULL;
            return -EINVAL;
        }
    }
    return 0;
}

/* The temporary directory, its sampling/ a copy of the previous calibration's unless --force (less the
 * models of flagged codelets with --recalibrate-flagged). Returns 0, or -EINVAL when it cannot be created,
 * -EIO with it left for the caller to remove. */
static int start_tmp(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p)
{
    dahlsim_remove_tree(p->tmp);
    if (mkdir(p->tmp, 0777) != 0) {
        dahlsim_error("calibrate: cannot write in %s: %s", o->dir, strerror(errno));
        return -EINVAL;
    }
    char prev_sampling[XPATH];
    snprintf(prev_sampling, sizeof(prev_sampling), "%s/sampling", p->final);
    if (o->force || !dahlsim_is_dir(prev_sampling))
        return 0;
    int ret = dahlsim_copy_tree(prev_sampling, p->sampling);
    if (ret != 0) {
        dahlsim_error("calibrate: cannot copy %s: %s", prev_sampling, strerror(-ret));
        return -EIO;
    }
    if (o->recalibrate_flagged && (ret = drop_flagged(o, p->sampling)) != 0) {
        dahlsim_error("calibrate: %s: %s", p->sampling, strerror(-ret));
        return -EIO;
    }
    return 0;
}

/* Every setup's first run, then more runs of each until it is calibrated. Returns 0 when all are, or a
 * negative errno after the error line. */
static int measure_covers(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p,
                          struct dahlsim_calibrate_status *cs)
{
    for (int i = 0; i < o->ncovers; i++) {
        int code = first_pass(o, i, p, &cs[i]);
        if (code != 0)
            return code;
    }
    for (int i = 0; i < o->ncovers; i++) {
        int code = converge(o, i, p, &cs[i]);
        if (code != 0)
            return code;
    }
    int changed = 0, ret = dahlsim_calibrate_robust_apply(p->sampling, o->machine, &changed);
    if (ret != 0) {
        dahlsim_error("calibrate: cannot rewrite the perf models in %s: %s", p->sampling, strerror(-ret));
        return -EIO;
    }
    if (!o->quiet && changed > 0)
        fprintf(stderr, "dahlsim calibrate: %d entries measured in %d runs or more take their runs' median mean\n",
                changed, DAHLSIM_CALIBRATE_ROBUST_RUNS);
    return 0;
}

/* ---- the kernels again with one CPU worker ---------------------------------------------------------------- */

/* The manifest's "one_worker": where the models are, the runs, and how the one-worker means compare with the
 * all-cores ones over the CPU entries both have. NULL when a table cannot be read. */
static cJSON *one_worker_summary(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p,
                                 const char *one, const struct dahlsim_calibrate_status *cs, long cores)
{
    struct dahlsim_model_table all = {0}, t = {0};
    cJSON *s = NULL;
    double *ratio = NULL;
    if (dahlsim_model_table_load(p->sampling, o->machine, &all) != 0 ||
        dahlsim_model_table_load(one, o->machine, &t) != 0 || (ratio = calloc(t.n + 1, sizeof(*ratio))) == NULL)
        goto out;
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++) {
        const struct dahlsim_model_entry *e = &t.v[i];
        const struct dahlsim_model_entry *a = dahlsim_model_table_find(&all, e->symbol, e->arch, e->size, e->footprint);
        if (a != NULL && a->mean_us > 0 && strncmp(e->arch, "cpu", 3) == 0)
            ratio[n++] = e->mean_us / a->mean_us;
    }
    int runs = 0;
    for (int i = 0; i < o->ncovers; i++)
        runs += cs[i].rounds;
    s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "sampling", DAHLSIM_ONE_WORKER_SAMPLING);
    cJSON_AddNumberToObject(s, "all_cpus", (double)cores);
    cJSON_AddNumberToObject(s, "runs", runs);
    cJSON_AddNumberToObject(s, "entries", (double)n);
    if (n > 0) {
        double lo = ratio[0], hi = ratio[0];
        for (size_t i = 1; i < n; i++) {
            lo = ratio[i] < lo ? ratio[i] : lo;
            hi = ratio[i] > hi ? ratio[i] : hi;
        }
        double median = dahlsim_median(ratio, n);
        cJSON *r = cJSON_AddObjectToObject(s, "mean_ratio");
        cJSON_AddNumberToObject(r, "median", median);
        cJSON_AddNumberToObject(r, "min", lo);
        cJSON_AddNumberToObject(r, "max", hi);
        if (!o->quiet)
            fprintf(stderr, "one CPU worker: %zu entries, their means %.2f times the all-cores ones (median; %.2f to "
                            "%.2f)\n", n, median, lo, hi);
    }
    cJSON_AddStringToObject(s, "what",
                            "the kernels measured again with one CPU worker (the other cores idle), the same setups "
                            "and criterion as sampling/ (measured with every core a worker): simulations with fewer "
                            "CPU workers than all_cpus read these, interpolated between the two by worker count; "
                            "mean_ratio: one-worker mean over all-cores mean, per CPU entry both have");
out:
    free(ratio);
    dahlsim_model_table_fini(&all);
    dahlsim_model_table_fini(&t);
    return s;
}

/* With several cores and no GPU (unless --no-one-worker): every setup measured again with one CPU worker into
 * p->tmp/DAHLSIM_ONE_WORKER_SAMPLING, from the previous calibration's one-worker models (unless --force), else
 * from sampling/'s bus measurements. Kernels run faster or slower with the other cores idle (their share of
 * the caches and the memory bus, inputs written on another core): on the 2-vCPU EPYC VM, 128x128x3's
 * sgd_update 2.9 times slower with one worker, its conv2d kernels 6-14 % faster (docs/fidelity.md).
 * *summary: the manifest's "one_worker", NULL when not measured. 0, or a negative errno after the error line. */
static int measure_one_worker(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p,
                              cJSON **summary)
{
    *summary = NULL;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!o->one_worker || o->ngpu > 0 || cores < 2)
        return 0;
    struct dahlsim_calibrate_opts *o1 = malloc(sizeof(*o1)); /* its covers are large */
    struct dahlsim_calibrate_status cs[DAHLSIM_CALIBRATE_MAX_COVERS];
    struct dahlsim_calibrate_paths p1 = *p;
    char prev[XPATH], bus[XPATH], to[XPATH];
    bool fits = snprintf(p1.sampling, sizeof(p1.sampling), "%s/%s", p->tmp, DAHLSIM_ONE_WORKER_SAMPLING) <
                (int)sizeof(p1.sampling);
    snprintf(prev, sizeof(prev), "%s/%s", p->final, DAHLSIM_ONE_WORKER_SAMPLING);
    snprintf(bus, sizeof(bus), "%s/bus", p->sampling);
    snprintf(to, sizeof(to), "%s/bus", p1.sampling);
    int ret = o1 == NULL ? -ENOMEM : fits ? 0 : -ENAMETOOLONG;
    if (ret == 0 && !o->force && dahlsim_is_dir(prev))
        ret = dahlsim_copy_tree(prev, p1.sampling);
    else if (ret == 0)
        ret = mkdir(p1.sampling, 0777) == 0 ? dahlsim_copy_tree(bus, to) : -errno;
    if (ret == 0 && o->recalibrate_flagged)
        ret = drop_flagged(o, p1.sampling);
    if (ret != 0) {
        dahlsim_error("calibrate: cannot start %s: %s", p1.sampling, strerror(-ret));
        free(o1);
        return -EIO;
    }
    *o1 = *o;
    o1->measure_ncpu = 1;
    if (!o->quiet)
        fprintf(stderr, "dahlsim calibrate: the kernels again with one CPU worker (%s/; --no-one-worker skips "
                        "this)\n", DAHLSIM_ONE_WORKER_SAMPLING);
    int code = measure_covers(o1, &p1, cs);
    if (code == 0 && (*summary = one_worker_summary(o, p, p1.sampling, cs, cores)) == NULL) {
        dahlsim_error("calibrate: cannot read the perf models in %s", p1.sampling);
        code = -EIO;
    }
    free(o1);
    return code;
}

/* After the perf models: the runtime's costs and the manifest, into p->tmp (prev: the previous manifest,
 * whose figures are kept for what is not measured again), and the report unless --quiet. 0; 1 when the
 * runtime's costs stayed noisy (after their error line): the manifest keeps prev's (or none), and the perf
 * models, measured quietly, are still stored; or -1 after an error line. */
static int write_results(const struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p,
                         const struct dahlsim_calibrate_status *cs, const cJSON *prev, cJSON *one_worker)
{
    struct dahlsim_model_table t = {0};
    int ret = dahlsim_model_table_load(p->sampling, o->machine, &t);
    if (ret != 0) {
        dahlsim_error("calibrate: %s/codelets/45: %s", p->sampling, strerror(-ret));
        dahlsim_model_table_fini(&t);
        return -1;
    }
    char manifest[XPATH];
    snprintf(manifest, sizeof(manifest), "%s/manifest.json", p->tmp);
    cJSON *submission = dahlsim_calibrate_submission(o, p, cs, cJSON_GetObjectItemCaseSensitive(prev, "submission"));
    cJSON *scheduling = submission != NULL
                            ? dahlsim_calibrate_scheduling(o, p, cJSON_GetObjectItemCaseSensitive(prev, "scheduling"))
                            : NULL;
    bool partial = scheduling == NULL && dahlsim_calibrate_plain_runs_noisy();
    if (partial) { /* what the previous calibration had (not with --force), or nothing */
        const cJSON *prev_sub = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "submission");
        const cJSON *prev_sched = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "scheduling");
        if (submission == NULL) /* else measured before the policies' runs stayed noisy: kept */
            submission = prev_sub != NULL ? cJSON_Duplicate(prev_sub, true) : cJSON_CreateNull();
        scheduling = prev_sched != NULL ? cJSON_Duplicate(prev_sched, true) : cJSON_CreateNull();
    }
    if (scheduling == NULL || submission == NULL) {
        cJSON_Delete(submission);
        cJSON_Delete(scheduling);
        cJSON_Delete(one_worker);
        dahlsim_model_table_fini(&t);
        return -1;
    }
    dahlsim_remove_tree(p->run); /* the plain runs' results and the last stderr: not part of the calibration */
    remove(p->errlog);
    /* No run at all: the previous calibration's spread. No perf-model run (only the runtime's costs timed
     * again): the spell its perf models were measured in is still the previous one's. */
    cJSON *spread = dahlsim_calibrate_spread();
    const cJSON *prev_spread = o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "machine_spread");
    const cJSON *prev_in = cJSON_GetObjectItemCaseSensitive(prev_spread, "calibrated_in");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(spread, "calibrated_in");
    if (cJSON_IsNull(spread) && prev_spread != NULL) {
        cJSON_Delete(spread);
        spread = cJSON_Duplicate(prev_spread, true);
    } else if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(in, "runs")) == 0 && prev_in != NULL) {
        cJSON_ReplaceItemInObjectCaseSensitive(spread, "calibrated_in", cJSON_Duplicate(prev_in, true));
    }
    ret = dahlsim_calibrate_manifest_write(o, cs, &t, submission, scheduling, one_worker, spread, manifest);
    if (ret != 0)
        dahlsim_error("calibrate: %s: %s", manifest, strerror(-ret));
    else if (!o->quiet)
        dahlsim_model_table_print(&t, o->max_rsd, stderr);
    dahlsim_model_table_fini(&t);
    return ret != 0 ? -1 : partial ? 1 : 0;
}

/* The swap: the previous calibration stays complete until the new one is in place. 0, or -1 after an error
 * line. */
static int swap_in(const struct dahlsim_calibrate_paths *p)
{
    bool had_previous = dahlsim_is_dir(p->final);
    if (had_previous && rename(p->final, p->old) != 0) {
        dahlsim_error("calibrate: cannot move %s aside: %s", p->final, strerror(errno));
        return -1;
    }
    if (rename(p->tmp, p->final) != 0) {
        dahlsim_error("calibrate: cannot move %s to %s: %s", p->tmp, p->final, strerror(errno));
        if (had_previous)
            rename(p->old, p->final);
        return -1;
    }
    if (had_previous)
        dahlsim_remove_tree(p->old);
    return 0;
}

int dahlsim_calibrate(struct dahlsim_calibrate_opts *o, const struct dahlsim_calibrate_paths *p)
{
    int code = check_datasets(o);
    if (code != 0)
        return code;
    int ret = dahlsim_make_dirs(o->dir);
    if (ret != 0) {
        dahlsim_error("calibrate: cannot create the calibration directory %s: %s", o->dir, strerror(-ret));
        return -EINVAL;
    }
    cJSON *prev;
    code = load_previous(o, p, &prev);
    if (code != 0)
        return code;
    dahlsim_calibrate_covers_merge(o, o->force ? NULL : cJSON_GetObjectItemCaseSensitive(prev, "covered"));
    code = start_tmp(o, p);
    if (code == -EINVAL) {
        cJSON_Delete(prev);
        return code;
    }
    struct dahlsim_calibrate_status cs[DAHLSIM_CALIBRATE_MAX_COVERS];
    cJSON *one_worker = NULL;
    if (code == 0)
        code = measure_covers(o, p, cs);
    if (code == 0)
        code = measure_one_worker(o, p, &one_worker);
    int written = code == 0 ? write_results(o, p, cs, prev, one_worker) : -1;
    if (code == 0)
        code = written >= 0 && swap_in(p) == 0 ? 0 : -EIO;
    cJSON_Delete(prev);
    if (code == 0 && written == 1) {
        /* the perf models are kept; the run still fails, so that no script takes the calibration as whole */
        fprintf(stderr, "dahlsim calibrate: wrote %s with its perf models, but without the runtime's costs (the "
                        "previous calibration's where it had them, unless --force): simulations charge StarPU-SimGrid's own until "
                        "calibrate --machine %s runs again on a quieter machine\n", p->final, o->machine);
        return -EIO;
    }
    if (code == 0) {
        if (!o->quiet)
            fprintf(stderr, "dahlsim calibrate: wrote %s\n", p->final);
        return code;
    }
    dahlsim_remove_tree(p->tmp);
    if (!o->quiet && dahlsim_is_dir(p->final))
        fprintf(stderr, "dahlsim calibrate: %s is unchanged\n", p->final);
    return code;
}

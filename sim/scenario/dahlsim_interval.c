/* The interval a calibration's measured spread implies around a simulated makespan: see dahlsim_interval.h. */
#include "dahlsim_interval.h"

#include "dahlsim_fs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* obj.key as a positive finite number, else 0. */
static double positive(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0 ? v->valuedouble : 0;
}

bool dahlsim_interval_of(const cJSON *manifest, struct dahlsim_interval *iv)
{
    const cJSON *spread = cJSON_GetObjectItemCaseSensitive(manifest, "machine_spread");
    const cJSON *probe = cJSON_GetObjectItemCaseSensitive(spread, "probe_gflops");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(spread, "calibrated_in");
    const cJSON *apart = cJSON_GetObjectItemCaseSensitive(in, "cores_apart_share");
    *iv = (struct dahlsim_interval){.lo = 1, .hi = 1, .calibrated = positive(in, "probe_gflops"),
                                    .p10 = positive(probe, "p10"), .p90 = positive(probe, "p90"),
                                    .apart = cJSON_IsNumber(apart) ? apart->valuedouble : -1,
                                    .shortest_ns = positive(spread, "core_latency_shortest_ns")};
    if (iv->calibrated == 0 || iv->p10 == 0 || iv->p90 < iv->p10)
        return false;
    iv->lo = fmin(1, iv->calibrated / iv->p90);
    iv->hi = fmax(1, iv->calibrated / iv->p10);
    return true;
}

bool dahlsim_interval_of_machine(const char *machine_dir, struct dahlsim_interval *iv)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/manifest.json", machine_dir);
    cJSON *manifest = dahlsim_read_json(path);
    bool known = dahlsim_interval_of(manifest, iv);
    cJSON_Delete(manifest);
    return known;
}

/* [a * lo, a * hi] as a JSON array. */
static cJSON *range(double a, double lo, double hi)
{
    const double v[2] = {a * lo, a * hi};
    return cJSON_CreateDoubleArray(v, 2);
}

int dahlsim_interval_add(const char *machine_dir, const char *out_dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/results.json", out_dir);
    cJSON *r = dahlsim_read_json(path);
    const cJSON *makespan = cJSON_GetObjectItemCaseSensitive(r, "makespan_s");
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(r, "samples_per_s");
    if (!cJSON_IsNumber(makespan) || !cJSON_IsNumber(rate)) {
        snprintf(err, err_size, "%s: no makespan_s and samples_per_s to put an interval around", path);
        cJSON_Delete(r);
        return -EINVAL;
    }
    struct dahlsim_interval iv;
    cJSON *o = cJSON_CreateObject();
    if (!dahlsim_interval_of_machine(machine_dir, &iv)) {
        cJSON_AddStringToObject(o, "unknown", "the calibration has no measured spread of its machine "
                                              "(machine_spread: made before calibrate recorded it)");
    } else {
        cJSON_AddItemToObject(o, "makespan_s", range(makespan->valuedouble, iv.lo, iv.hi));
        cJSON_AddItemToObject(o, "samples_per_s", range(rate->valuedouble, 1 / iv.hi, 1 / iv.lo));
        cJSON_AddNumberToObject(o, "calibrated_probe_gflops", iv.calibrated);
        cJSON_AddNumberToObject(o, "probe_p10_gflops", iv.p10);
        cJSON_AddNumberToObject(o, "probe_p90_gflops", iv.p90);
        /* the placement of the cores the perf models and costs were measured in: runs in the other one are
         * outside what the calibration saw (the interval does not span it) */
        cJSON_AddStringToObject(o, "cores_calibrated",
                                iv.apart < 0      ? "not recorded"
                                : iv.apart <= 0.1 ? "close"
                                : iv.apart >= 0.9 ? "apart"
                                                  : "both");
        cJSON_AddStringToObject(o, "basis",
                                "the calibration's kernel probe, p10 to p90 over every run it kept, against the "
                                "spell its perf models were measured in: the makespan scaled by calibrated/p90 to "
                                "calibrated/p10 (kernels' speed spells; the runtime's costs per spell of the "
                                "cores' distance are recorded, not in it: cores_calibrated says which placement the "
                                "calibration measured, and a run in the other one can fall outside)");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(r, "prediction_interval");
    cJSON_AddItemToObject(r, "prediction_interval", o);
    int ret = dahlsim_json_save(r, path, err, err_size);
    cJSON_Delete(r);
    return ret;
}

/* The two ends of a [lo, hi] array into lo and hi; NAN where it is not one. */
static void ends(const cJSON *range, double *lo, double *hi)
{
    bool two = cJSON_GetArraySize(range) == 2;
    *lo = two ? cJSON_GetNumberValue(cJSON_GetArrayItem(range, 0)) : NAN;
    *hi = two ? cJSON_GetNumberValue(cJSON_GetArrayItem(range, 1)) : NAN;
}

bool dahlsim_prediction_read(const char *dir, struct dahlsim_prediction *p)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/results.json", dir);
    cJSON *r = dahlsim_read_json(path);
    bool ok = dahlsim_prediction_of(r, p);
    cJSON_Delete(r);
    return ok;
}

bool dahlsim_prediction_of(const cJSON *r, struct dahlsim_prediction *p)
{
    const cJSON *makespan = cJSON_GetObjectItemCaseSensitive(r, "makespan_s");
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(r, "samples_per_s");
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(r, "prediction_interval");
    *p = (struct dahlsim_prediction){.makespan_s = cJSON_IsNumber(makespan) ? makespan->valuedouble : NAN,
                                     .samples_per_s = cJSON_IsNumber(rate) ? rate->valuedouble : NAN};
    ends(cJSON_GetObjectItemCaseSensitive(iv, "makespan_s"), &p->makespan_lo, &p->makespan_hi);
    ends(cJSON_GetObjectItemCaseSensitive(iv, "samples_per_s"), &p->rate_lo, &p->rate_hi);
    const char *unknown = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(iv, "unknown"));
    const char *cores = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(iv, "cores_calibrated"));
    snprintf(p->unknown, sizeof(p->unknown), "%s", unknown != NULL ? unknown : "");
    snprintf(p->cores, sizeof(p->cores), "%s", cores != NULL ? cores : "");
    return isfinite(p->makespan_s) && isfinite(p->samples_per_s);
}

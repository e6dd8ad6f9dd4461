/* Which perf models a simulation reads (dahlsim_kernels.h): all cores', one worker's, or a blend. */
#include "dahlsim_kernels.h"

#include "dahlsim_fs.h"
#include "dahlsim_modeltable.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int dahlsim_kernel_models(const struct dahlsim_experiment *x, const char *work_dir, char *dir, size_t dir_size,
                          char *what, size_t what_size, char *err, size_t err_size)
{
    snprintf(dir, dir_size, "%s/sampling", x->machine_dir);
    what[0] = '\0';
    if (x->ngroups > 0 || x->gpus > 0 || x->cpus <= 0)
        return 0;
    char path[PATH_MAX + 32], one[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/manifest.json", x->machine_dir);
    cJSON *manifest = dahlsim_read_json(path);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(manifest, "one_worker");
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(w, "all_cpus");
    const cJSON *sampling = cJSON_GetObjectItemCaseSensitive(w, "sampling");
    long n = cJSON_IsNumber(all) ? (long)all->valuedouble : 0;
    int ret = 0;
    if (w == NULL)
        goto out;
    if (n < 2 || !cJSON_IsString(sampling) || strchr(sampling->valuestring, '/') != NULL) {
        snprintf(err, err_size, "%s: \"one_worker\": expected {\"sampling\": a directory name, \"all_cpus\": 2 or "
                                "more}", path);
        ret = -EINVAL;
        goto out;
    }
    if (x->cpus >= n)
        goto out;
    snprintf(one, sizeof(one), "%s/%s", x->machine_dir, sampling->valuestring);
    if (!dahlsim_is_dir(one)) {
        snprintf(err, err_size, "%s: \"one_worker\": expected its models in %s, which is missing", path, one);
        ret = -EINVAL;
        goto out;
    }
    if (x->cpus == 1) {
        snprintf(dir, dir_size, "%s", one);
        snprintf(what, what_size, "measured with one CPU worker (%s)", sampling->valuestring);
        goto out;
    }
    /* between the two ends: all cores' at w = 1 */
    double weight = (double)(x->cpus - 1) / (double)(n - 1);
    struct dahlsim_model_table t = {0};
    snprintf(path, sizeof(path), "%s/sampling", x->machine_dir);
    snprintf(dir, dir_size, "%s", work_dir);
    if ((ret = dahlsim_model_table_load(path, x->machine, &t)) != 0 || (ret = dahlsim_remove_tree(work_dir)) != 0 ||
        (ret = dahlsim_copy_tree(one, work_dir)) != 0 ||
        (ret = dahlsim_model_dir_blend(work_dir, x->machine, &t, weight)) != 0) {
        snprintf(err, err_size, "cannot blend %s and %s into %s: %s", path, one, work_dir, strerror(-ret));
        ret = -EIO;
    } else {
        snprintf(what, what_size, "interpolated at %ld of %ld CPU workers: %.3g x those measured with every core "
                 "a worker (sampling) + %.3g x with one (%s)", x->cpus, n, weight, 1 - weight, sampling->valuestring);
    }
    dahlsim_model_table_fini(&t);
out:
    cJSON_Delete(manifest);
    return ret;
}

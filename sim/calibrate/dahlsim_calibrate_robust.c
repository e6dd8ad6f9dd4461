/* Perf-model means robust to a spike (dahlsim_calibrate.h): StarPU keeps one running mean per entry over
 * every sample of every run (refusing only samples over STARPU_HISTORY_MAX_ERROR % from it), so a run made
 * in a slow moment moves it by its share of the samples. calibrate records, after each kept measuring run,
 * each entry's mean over that run's own samples (the entry's sums after the run less those before it), and
 * at the end an entry measured in DAHLSIM_CALIBRATE_ROBUST_RUNS runs or more takes the median of its runs'
 * means: one run in a spell of its own cannot pull it. */
#include "dahlsim_calibrate.h"

#include "dahl_array.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUN_MEANS 32 /* runs recorded per entry; later ones are not */

/* One entry of one sampling folder, and its runs' means. */
struct robust_entry {
    char sampling[PATH_MAX];
    struct dahlsim_model_entry key; /* symbol, arch, size, footprint */
    double means[MAX_RUN_MEANS];
    int runs;
};

static struct {
    struct robust_entry *v;
    size_t n, cap;
} robust;

static bool same_entry(const struct dahlsim_model_entry *a, const struct dahlsim_model_entry *b)
{
    return a->footprint == b->footprint && a->size == b->size && strcmp(a->symbol, b->symbol) == 0 &&
           strcmp(a->arch, b->arch) == 0;
}

static struct robust_entry *find(const char *sampling, const struct dahlsim_model_entry *e, bool add)
{
    for (size_t i = 0; i < robust.n; i++)
        if (same_entry(&robust.v[i].key, e) && strcmp(robust.v[i].sampling, sampling) == 0)
            return &robust.v[i];
    if (!add)
        return NULL;
    struct robust_entry *v = dahl_array_grow(robust.v, &robust.cap, robust.n + 1, sizeof(*v));
    if (v == NULL)
        return NULL;
    robust.v = v;
    struct robust_entry *r = &robust.v[robust.n++];
    memset(r, 0, sizeof(*r));
    snprintf(r->sampling, sizeof(r->sampling), "%s", sampling);
    r->key = *e;
    return r;
}

int dahlsim_calibrate_robust_record(const char *before, const char *sampling, const char *machine)
{
    struct dahlsim_model_table was = {0}, now = {0};
    int ret = dahlsim_model_table_load(sampling, machine, &now);
    if (ret == 0 && dahlsim_is_dir(before))
        ret = dahlsim_model_table_load(before, machine, &was);
    for (size_t i = 0; ret == 0 && i < now.n; i++) {
        const struct dahlsim_model_entry *e = &now.v[i];
        const struct dahlsim_model_entry *b =
            dahlsim_model_table_find(&was, e->symbol, e->arch, e->size, e->footprint);
        /* the run's own samples: the sums' difference; StarPU started the entry over (fewer samples than
         * before): all of its samples are the run's */
        double n = (double)e->nsample, sum = e->mean_us * n;
        if (b != NULL && b->nsample <= e->nsample) {
            n -= (double)b->nsample;
            sum -= b->mean_us * (double)b->nsample;
        }
        if (n < 1)
            continue;
        struct robust_entry *r = find(sampling, e, true);
        if (r == NULL)
            ret = -ENOMEM;
        else if (r->runs < MAX_RUN_MEANS)
            r->means[r->runs++] = sum / n;
    }
    dahlsim_model_table_fini(&was);
    dahlsim_model_table_fini(&now);
    return ret;
}

/* The entries of one sampling folder being rewritten, and how many were. */
struct apply {
    const char *sampling;
    int changed;
};

static bool robust_mean(const struct dahlsim_model_entry *e, double *mean, double *dev, void *arg)
{
    struct apply *a = arg;
    struct robust_entry *r = find(a->sampling, e, false);
    if (r == NULL || r->runs < DAHLSIM_CALIBRATE_ROBUST_RUNS)
        return false;
    double m[MAX_RUN_MEANS];
    memcpy(m, r->means, sizeof(double) * (size_t)r->runs);
    *mean = dahlsim_median(m, (size_t)r->runs);
    *dev = e->dev_us;
    a->changed++;
    return true;
}

int dahlsim_calibrate_robust_apply(const char *sampling, const char *machine, int *changed)
{
    struct apply a = {sampling, 0};
    int ret = dahlsim_model_dir_rewrite(sampling, machine, robust_mean, &a);
    *changed = a.changed;
    return ret;
}

/* The history entries of a calibration's perf-model files (dahlsim_modeltable.h). */
#include "dahlsim_modeltable.h"

#include "dahlsim_fs.h"

#include "dahl_array.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int table_add(struct dahlsim_model_table *t, const struct dahlsim_model_entry *e)
{
    struct dahlsim_model_entry *v = dahl_array_grow(t->v, &t->cap, t->n + 1, sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    t->v = v;
    t->v[t->n++] = *e;
    return 0;
}

/* Where a reader is in a perf-model file (format 45, as perfmodel_history.c writes it): the "# Model for
 * <arch>" comment names the architecture, the lines after "# hash ..." are the entries, up to the first line
 * that is not one. */
struct model_scan {
    char arch[48];
    bool in_entries;
};

/* Takes one line of the file; true when it is a history entry, read into *e (arch set, symbol left empty). */
static bool scan_line(struct model_scan *s, const char *line, struct dahlsim_model_entry *e)
{
    *e = (struct dahlsim_model_entry){0};
    double sum, sum2;
    if (strncmp(line, "# Model for ", 12) == 0) {
        sscanf(line + 12, "%47s", s->arch);
        s->in_entries = false;
    } else if (strncmp(line, "# hash", 6) == 0) {
        s->in_entries = true;
    } else if (s->in_entries) {
        if (sscanf(line, "%x %lu %le %le %le %le %le %u", &e->footprint, &e->size, &e->flops, &e->mean_us,
                   &e->dev_us, &sum, &sum2, &e->nsample) == 8) {
            snprintf(e->arch, sizeof(e->arch), "%s", s->arch);
            return true;
        }
        s->in_entries = false;
    }
    return false;
}

/* Reads the history entries of one perf-model file into t. */
static int load_model_file(const char *path, const char *symbol, struct dahlsim_model_table *t)
{
    char *text = dahlsim_read_text(path, SIZE_MAX);
    if (text == NULL)
        return -errno;
    struct model_scan scan = {"?", false};
    int ret = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL && ret == 0; line = strtok_r(NULL, "\n", &save)) {
        struct dahlsim_model_entry e;
        if (scan_line(&scan, line, &e)) {
            snprintf(e.symbol, sizeof(e.symbol), "%s", symbol);
            ret = table_add(t, &e);
        }
    }
    free(text);
    return ret;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct dahlsim_model_entry *x = a, *y = b;
    int c = strcmp(x->symbol, y->symbol);
    if (c == 0)
        c = strcmp(x->arch, y->arch);
    if (c == 0)
        c = x->size < y->size ? -1 : x->size > y->size;
    if (c == 0)
        c = x->footprint < y->footprint ? -1 : x->footprint > y->footprint;
    return c;
}

/* Calls fn(path, symbol, arg) for every "<symbol>.<machine>" file of sampling/codelets/45, until one fails.
 * Returns 0 or -errno (fn's). */
static int each_model_file(const char *sampling, const char *machine,
                           int (*fn)(const char *path, const char *symbol, void *arg), void *arg)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/codelets/45", sampling);
    DIR *d = opendir(dir);
    if (d == NULL)
        return -errno;
    size_t mlen = strlen(machine);
    int ret = 0;
    struct dirent *e;
    while (ret == 0 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= mlen + 1 || e->d_name[len - mlen - 1] != '.' || strcmp(e->d_name + len - mlen, machine) != 0)
            continue;
        char symbol[96], path[PATH_MAX + 512];
        snprintf(symbol, sizeof(symbol), "%.*s", (int)(len - mlen - 1), e->d_name);
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        ret = fn(path, symbol, arg);
    }
    closedir(d);
    return ret;
}

static int load_one(const char *path, const char *symbol, void *t)
{
    return load_model_file(path, symbol, t);
}

int dahlsim_model_table_load(const char *sampling, const char *machine, struct dahlsim_model_table *t)
{
    int ret = each_model_file(sampling, machine, load_one, t);
    if (ret == 0 && t->n > 0)
        qsort(t->v, t->n, sizeof(*t->v), entry_cmp);
    return ret;
}

const struct dahlsim_model_entry *dahlsim_model_table_find(const struct dahlsim_model_table *t, const char *symbol,
                                                           const char *arch, unsigned long size, unsigned footprint)
{
    struct dahlsim_model_entry key = {.size = size, .footprint = footprint};
    snprintf(key.symbol, sizeof(key.symbol), "%s", symbol);
    snprintf(key.arch, sizeof(key.arch), "%s", arch);
    return t->n > 0 ? bsearch(&key, t->v, t->n, sizeof(*t->v), entry_cmp) : NULL;
}

/* dahlsim_model_dir_rewrite's callback and its argument, for each file. */
struct rewrite {
    dahlsim_model_rewrite_fn fn;
    void *ctx;
};

/* One model file of dahlsim_model_dir_rewrite, rewritten through path.tmp. */
static int rewrite_file(const char *path, const char *symbol, void *arg)
{
    const struct rewrite *rw = arg;
    char *text = dahlsim_read_text(path, SIZE_MAX);
    if (text == NULL)
        return -errno;
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        int ret = -errno;
        free(text);
        return ret;
    }
    struct model_scan scan = {"?", false};
    for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
        char *end = strchr(line, '\n');
        next = end != NULL ? end + 1 : NULL;
        if (end != NULL)
            *end = '\0';
        struct dahlsim_model_entry e;
        double mean = 0, dev = 0;
        bool entry = scan_line(&scan, line, &e);
        if (entry)
            snprintf(e.symbol, sizeof(e.symbol), "%s", symbol);
        if (!entry || !rw->fn(&e, &mean, &dev, rw->ctx)) {
            fprintf(f, "%s\n", line);
            continue;
        }
        /* the format perfmodel_history.c writes its entries in */
        double n = (double)e.nsample;
        fprintf(f, "%08x\t%-15lu\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%u\n", e.footprint, e.size, e.flops, mean, dev,
                mean * n, n * (dev * dev + mean * mean), e.nsample);
    }
    free(text);
    int ret = ferror(f) ? -EIO : 0;
    if (fclose(f) != 0 && ret == 0)
        ret = -errno;
    if (ret == 0 && rename(tmp, path) != 0)
        ret = -errno;
    if (ret != 0)
        remove(tmp);
    return ret;
}

int dahlsim_model_dir_rewrite(const char *dir, const char *machine, dahlsim_model_rewrite_fn fn, void *ctx)
{
    struct rewrite rw = {fn, ctx};
    return each_model_file(dir, machine, rewrite_file, &rw);
}

struct blend {
    const struct dahlsim_model_table *other;
    double w;
};

/* A CPU entry that other has: (1 - w) times its own figures plus w times other's. */
static bool blend_entry(const struct dahlsim_model_entry *e, double *mean, double *dev, void *arg)
{
    const struct blend *b = arg;
    const struct dahlsim_model_entry *o =
        strncmp(e->arch, "cpu", 3) == 0 ? dahlsim_model_table_find(b->other, e->symbol, e->arch, e->size, e->footprint)
                                        : NULL;
    if (o == NULL)
        return false;
    *mean = (1 - b->w) * e->mean_us + b->w * o->mean_us;
    *dev = (1 - b->w) * e->dev_us + b->w * o->dev_us;
    return true;
}

int dahlsim_model_dir_blend(const char *dir, const char *machine, const struct dahlsim_model_table *other, double w)
{
    struct blend b = {other, w};
    return dahlsim_model_dir_rewrite(dir, machine, blend_entry, &b);
}

double dahlsim_model_entry_rsd(const struct dahlsim_model_entry *e)
{
    return e->mean_us > 0 ? e->dev_us / e->mean_us : 0.0;
}

bool dahlsim_model_entry_flagged(const struct dahlsim_model_entry *e, double max_rsd)
{
    return dahlsim_model_entry_rsd(e) > max_rsd;
}

void dahlsim_model_table_fini(struct dahlsim_model_table *t)
{
    free(t->v);
    *t = (struct dahlsim_model_table){0};
}

void dahlsim_model_table_print(const struct dahlsim_model_table *t, double max_rsd, FILE *f)
{
    fprintf(f, "%-32s %-12s %-8s %12s %8s %12s %12s %7s\n", "model", "arch", "footprint", "size", "samples",
            "mean_us", "stddev_us", "rsd");
    size_t flagged = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct dahlsim_model_entry *e = &t->v[i];
        bool flag = dahlsim_model_entry_flagged(e, max_rsd);
        flagged += flag;
        fprintf(f, "%-32s %-12s %08x %12lu %8u %12.2f %12.2f %7.3f%s\n", e->symbol, e->arch, e->footprint, e->size,
                e->nsample, e->mean_us, e->dev_us, dahlsim_model_entry_rsd(e), flag ? "  FLAGGED" : "");
    }
    fprintf(f, "%zu entries, %zu flagged (stddev > %.2g x mean)%s\n", t->n, flagged, max_rsd,
            flagged ? "; `dahlsim calibrate --machine NAME --recalibrate-flagged` measures them again" : "");
}

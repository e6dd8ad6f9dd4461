/* StarPU perf-model files (see dahlsim_perfmodel.h). The file is a sequence of blocks "# Model for
 * ARCH_implN", each with the regression line (sumlnx ... alpha beta n minx maxx), the nl-regression line
 * (a b c) and the history entries (hash size flops mean dev sum sum2 n). Validity follows StarPU 1.3.10's
 * loader: a regression needs 10 samples over sizes that differ by more than 10 %. */
#include "dahlsim_perfmodel.h"

#include "dahl_array.h"
#include "dahlsim_fs.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pm_entry {
    uint32_t footprint;
    double mean_us;
};

struct pm_arch {
    char name[32]; /* "cpu0", "cuda0" */
    double alpha, beta, a, b, c, minx, maxx;
    unsigned n;
    struct pm_entry *entries;
    size_t nentries, cap;
};

enum {
    PM_CACHE = 64,           /* models dahlsim_perfmodel_get keeps */
};
#define PM_MAX_BYTES (64u << 20) /* the largest perf-model file read */

struct dahlsim_perfmodel {
    struct pm_arch *arch;
    size_t narch, cap;
};

void dahlsim_perfmodel_destroy(struct dahlsim_perfmodel *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->narch; i++)
        free(m->arch[i].entries);
    free(m->arch);
    free(m);
}

static int add_entry(struct pm_arch *a, uint32_t footprint, double mean_us)
{
    struct pm_entry *e = dahl_array_grow(a->entries, &a->cap, a->nentries + 1, sizeof(*e));
    if (e == NULL)
        return -ENOMEM;
    a->entries = e;
    a->entries[a->nentries++] = (struct pm_entry){.footprint = footprint, .mean_us = mean_us};
    return 0;
}

/* The model in text (path's content, consumed), or NULL with the reason in err. */
static struct dahlsim_perfmodel *parse(const char *path, char *text, char *err, size_t err_size)
{
    struct dahlsim_perfmodel *m = calloc(1, sizeof(*m));
    enum { NONE, REG, NL, HIST } next = NONE;
    struct pm_arch *cur = NULL;
    bool oom = m == NULL;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL && !oom; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "# Model for ", 12) == 0) {
            struct pm_arch *grown = dahl_array_grow(m->arch, &m->cap, m->narch + 1, sizeof(*grown));
            if (grown == NULL) {
                oom = true;
                break;
            }
            m->arch = grown;
            cur = &m->arch[m->narch++];
            memset(cur, 0, sizeof(*cur));
            cur->alpha = cur->beta = cur->a = cur->b = cur->c = NAN;
            size_t len = strcspn(line + 12, " \t");
            const char *impl = strstr(line + 12, "_impl");
            if (impl != NULL && (size_t)(impl - (line + 12)) < len)
                len = (size_t)(impl - (line + 12));
            snprintf(cur->name, sizeof(cur->name), "%.*s", (int)len, line + 12);
            next = NONE;
        } else if (cur == NULL) {
            continue;
        } else if (strncmp(line, "# sumlnx", 8) == 0) {
            next = REG;
        } else if (strncmp(line, "# a", 3) == 0 && (line[3] == '\t' || line[3] == ' ')) {
            next = NL;
        } else if (strncmp(line, "# hash", 6) == 0) {
            next = HIST;
        } else if (line[0] == '#') {
            if (next != HIST)
                next = NONE;
        } else if (next == REG) {
            double s1, s2, s3, s4, minx, maxx;
            if (sscanf(line, "%le %le %le %le %le %le %u %le %le", &s1, &s2, &s3, &s4, &cur->alpha, &cur->beta,
                       &cur->n, &minx, &maxx) == 9) {
                cur->minx = minx;
                cur->maxx = maxx;
            }
            next = NONE;
        } else if (next == NL) {
            if (sscanf(line, "%le %le %le", &cur->a, &cur->b, &cur->c) != 3)
                cur->a = cur->b = cur->c = NAN;
            next = NONE;
        } else if (next == HIST) {
            unsigned fp, n;
            unsigned long size;
            double flops, mean, dev, sum, sum2;
            if (sscanf(line, "%x %lu %le %le %le %le %le %u", &fp, &size, &flops, &mean, &dev, &sum, &sum2, &n) == 8)
                oom = add_entry(cur, (uint32_t)fp, mean) != 0;
            else
                next = NONE;
        }
    }
    free(text);
    if (oom) {
        snprintf(err, err_size, "%s: out of memory", path);
        dahlsim_perfmodel_destroy(m);
        return NULL;
    }
    if (m->narch == 0) {
        snprintf(err, err_size, "%s: no \"# Model for ARCH\" block (expected a StarPU perf-model file, format 45)",
                 path);
        dahlsim_perfmodel_destroy(m);
        return NULL;
    }
    return m;
}

struct dahlsim_perfmodel *dahlsim_perfmodel_load(const char *path, char *err, size_t err_size)
{
    char *text = dahlsim_read_text(path, PM_MAX_BYTES);
    if (text == NULL) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    return parse(path, text, err, err_size);
}

/* The models dahlsim_perfmodel_get parsed, with the file text each came from. */
static struct {
    char *path, *text;
    struct dahlsim_perfmodel *m;
} cache[PM_CACHE];
static size_t ncache, evict_next;

const struct dahlsim_perfmodel *dahlsim_perfmodel_get(const char *path, char *err, size_t err_size)
{
    char *text = dahlsim_read_text(path, PM_MAX_BYTES);
    if (text == NULL) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t slot = 0;
    while (slot < ncache && strcmp(cache[slot].path, path) != 0)
        slot++;
    if (slot < ncache && strcmp(cache[slot].text, text) == 0) {
        free(text);
        return cache[slot].m;
    }
    char *copy = strdup(text), *name = strdup(path);
    struct dahlsim_perfmodel *m = copy != NULL && name != NULL ? parse(path, text, err, err_size) : NULL;
    if (copy == NULL || name == NULL) {
        free(text);
        snprintf(err, err_size, "%s: out of memory", path);
    }
    if (m == NULL) {
        free(copy), free(name);
        return NULL;
    }
    if (slot == ncache) { /* a new path: a free slot, or the oldest one in turn */
        if (ncache < PM_CACHE)
            ncache++;
        else
            slot = evict_next++ % PM_CACHE;
    }
    free(cache[slot].path), free(cache[slot].text);
    dahlsim_perfmodel_destroy(cache[slot].m);
    cache[slot].path = name, cache[slot].text = copy, cache[slot].m = m;
    return m;
}

static bool in_range(const struct pm_arch *a, size_t size)
{
    return a->n >= 10 && a->minx < 0.9 * a->maxx && (double)size >= 0.9 * a->minx && (double)size <= 1.1 * a->maxx;
}

double dahlsim_perfmodel_us(const struct dahlsim_perfmodel *m, const char *arch, enum dahl_perfmodel_kind kind,
                            uint32_t footprint, size_t size)
{
    const struct pm_arch *a = NULL;
    for (size_t i = 0; i < m->narch && a == NULL; i++)
        if (strcmp(m->arch[i].name, arch) == 0)
            a = &m->arch[i];
    if (a == NULL)
        return -1.0;
    if (kind == DAHL_PERFMODEL_REGRESSION)
        return in_range(a, size) && isfinite(a->alpha) && isfinite(a->beta) ? a->alpha * pow((double)size, a->beta)
                                                                            : -1.0;
    if (kind == DAHL_PERFMODEL_NL_REGRESSION && in_range(a, size) && isfinite(a->a) && isfinite(a->b) &&
        isfinite(a->c))
        return a->a * pow((double)size, a->b) + a->c;
    for (size_t i = 0; i < a->nentries; i++)
        if (a->entries[i].footprint == footprint)
            return a->entries[i].mean_us;
    return -1.0;
}

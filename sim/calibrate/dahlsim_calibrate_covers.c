/* The training setups a calibration covers (dahlsim_calibrate.h): --cover and --scenario on the command
 * line, the defaults, the setups the previous calibration covered, and the order they are measured in. */
#include "dahlsim_calibrate.h"

#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_codelets.h"
#include "dahl_dataset_name.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const default_covers[] = {
    "fashion-mnist", "synthetic:28x28x3", "synthetic:128x128x3", "synthetic:512x512x3",
};

bool dahlsim_calibrate_cover_parse(const char *text, struct dahlsim_calibrate_cover *c)
{
    *c = (struct dahlsim_calibrate_cover){.model = "lenet", .perfmodel = "history", .grain = 1};
    char buf[PATH_MAX + 128];
    if (strlen(text) >= sizeof(buf)) {
        dahlsim_error("--cover: too long: \"%.40s...\"", text);
        return false;
    }
    strcpy(buf, text);
    char *save = NULL;
    char *part = strtok_r(buf, ",", &save);
    struct dahl_dataset_name data;
    if (part == NULL || !dahl_dataset_name_parse(part, &data) || strlen(part) >= sizeof(c->dataset)) {
        dahlsim_error("--cover %s: expected a dataset first (" DAHL_DATASET_NAMES "), then optional ,model=M, "
                      ",perfmodel=K and ,grain=N",
                      text);
        return false;
    }
    strcpy(c->dataset, part);
    while ((part = strtok_r(NULL, ",", &save)) != NULL) {
        if (strncmp(part, "model=", 6) == 0 && part[6] != '\0' && strlen(part + 6) < sizeof(c->model)) {
            strcpy(c->model, part + 6);
        } else if (strncmp(part, "perfmodel=", 10) == 0) {
            enum dahl_perfmodel_kind kind;
            if (dahl_perfmodel_kind_parse(part + 10, &kind) != 0) {
                dahlsim_error("--cover %s: perfmodel: expected history, regression or nl-regression, got \"%s\"",
                              text, part + 10);
                return false;
            }
            strcpy(c->perfmodel, part + 10);
        } else if (strncmp(part, "grain=", 6) == 0) {
            if (!dahlsim_parse_int("--cover grain=N", part + 6, 1, 65536, &c->grain))
                return false;
        } else {
            dahlsim_error("--cover %s: unknown part \"%s\" (expected model=M, perfmodel=K or grain=N)", text, part);
            return false;
        }
    }
    return true;
}

bool dahlsim_calibrate_covers_add(struct dahlsim_calibrate_opts *o, const char *text)
{
    if (o->ncovers == DAHLSIM_CALIBRATE_MAX_COVERS) {
        dahlsim_error("--cover: at most %d setups", DAHLSIM_CALIBRATE_MAX_COVERS);
        return false;
    }
    return dahlsim_calibrate_cover_parse(text, &o->covers[o->ncovers++]);
}

void dahlsim_calibrate_covers_default(struct dahlsim_calibrate_opts *o)
{
    if (o->ncovers == 0) {
        for (size_t i = 0; i < sizeof(default_covers) / sizeof(default_covers[0]); i++)
            dahlsim_calibrate_cover_parse(default_covers[i], &o->covers[o->ncovers++]);
    }
}

/* Whether o already has the setup. */
static bool cover_known(const struct dahlsim_calibrate_opts *o, const char *dataset, const char *model,
                        const char *perfmodel, long grain)
{
    for (int i = 0; i < o->ncovers; i++)
        if (strcmp(o->covers[i].dataset, dataset) == 0 && strcmp(o->covers[i].model, model) == 0 &&
            strcmp(o->covers[i].perfmodel, perfmodel) == 0 && o->covers[i].grain == grain)
            return true;
    return false;
}

/* The values a scenario gives `key`: its "sweep" list if the key is swept, else its value, else dflt. Strings
 * only; writes at most max pointers into out (owned by root) and returns their count, or -1 after an error
 * naming the file and the field. */
static int scenario_strings(const char *path, const cJSON *root, const char *key, const char *dflt,
                            const char **out, int max)
{
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(root, "sweep");
    const cJSON *swept = cJSON_IsObject(sweep) ? cJSON_GetObjectItemCaseSensitive(sweep, key) : NULL;
    const cJSON *v = swept != NULL ? swept : cJSON_GetObjectItemCaseSensitive(root, key);
    if (v == NULL) {
        out[0] = dflt;
        return 1;
    }
    if (cJSON_IsString(v)) {
        out[0] = v->valuestring;
        return 1;
    }
    int n = 0;
    const cJSON *list = cJSON_IsArray(v) ? v : NULL, *item;
    cJSON_ArrayForEach(item, list)
    {
        if (!cJSON_IsString(item) || n == max)
            break;
        out[n++] = item->valuestring;
    }
    if (!cJSON_IsArray(v) || n == 0 || n != cJSON_GetArraySize(v)) {
        dahlsim_error("calibrate: --scenario %s: \"%s%s\": expected %s (at most %d)", path, swept ? "sweep." : "",
                      key, swept ? "a non-empty list of strings" : "a string", max);
        return -1;
    }
    return n;
}

/* The grains a scenario trains with: its "grain" values that are numbers (the sweep's, or the key's), into
 * out (at most max, 1 first); "batch" and "auto" get a line saying which --cover to add. Returns the count. */
static int scenario_grains(const char *path, const cJSON *root, long *out, int max)
{
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(root, "sweep");
    const cJSON *swept = cJSON_IsObject(sweep) ? cJSON_GetObjectItemCaseSensitive(sweep, "grain") : NULL;
    const cJSON *v = swept != NULL ? swept : cJSON_GetObjectItemCaseSensitive(root, "grain"), *item;
    const cJSON *list = cJSON_IsArray(v) ? v : NULL;
    int n = 0;
    out[n++] = 1;
    cJSON_ArrayForEach(item, list)
    {
        if (cJSON_IsNumber(item) && item->valuedouble > 1 && item->valuedouble <= 65536 && n < max)
            out[n++] = (long)item->valuedouble;
        else if (cJSON_IsString(item))
            fprintf(stderr, "calibrate: --scenario %s: grain \"%s\" needs the grains it comes to: add --cover "
                            "DATASET,grain=N for them\n", path, item->valuestring);
    }
    if (cJSON_IsNumber(v) && v->valuedouble > 1 && v->valuedouble <= 65536)
        out[n++] = (long)v->valuedouble;
    else if (cJSON_IsString(v))
        fprintf(stderr, "calibrate: --scenario %s: grain \"%s\" needs the grains it comes to: add --cover "
                        "DATASET,grain=N for them\n", path, v->valuestring);
    return n;
}

bool dahlsim_calibrate_covers_from_scenario(const char *path, struct dahlsim_calibrate_opts *o)
{
    errno = 0;
    cJSON *root = dahlsim_read_json(path);
    if (root == NULL) {
        dahlsim_error("calibrate: --scenario %s: %s", path, errno ? strerror(errno) : "not valid JSON");
        return false;
    }
    bool ok = cJSON_IsObject(root);
    if (!ok)
        dahlsim_error("calibrate: --scenario %s: expected a JSON object (see scenarios/README.md)", path);
    const char *datasets[64], *models[16], *kinds[4];
    int nd = ok ? scenario_strings(path, root, "dataset", "fashion-mnist", datasets, 64) : -1;
    int nm = nd > 0 ? scenario_strings(path, root, "model", "lenet", models, 16) : -1;
    int nk = nm > 0 ? scenario_strings(path, root, "perfmodel", "history", kinds, 4) : -1;
    ok = nk > 0;
    long grains[16];
    int ng = ok ? scenario_grains(path, root, grains, 16) : 0;
    for (int d = 0; ok && d < nd; d++)
        for (int m = 0; ok && m < nm; m++)
            for (int k = 0; ok && k < nk * ng; k++) {
                char model[PATH_MAX], spec[PATH_MAX + 160];
                const char *slash = strrchr(path, '/');
                bool file = strcmp(models[m], "lenet") != 0 && strncmp(models[m], "deep", 4) != 0;
                if (file && models[m][0] != '/' && slash != NULL)
                    snprintf(model, sizeof(model), "%.*s/%s", (int)(slash - path), path, models[m]);
                else
                    snprintf(model, sizeof(model), "%s", models[m]);
                snprintf(spec, sizeof(spec), "%s,model=%s,perfmodel=%s,grain=%ld", datasets[d], model, kinds[k / ng],
                         grains[k % ng]);
                struct dahlsim_calibrate_cover c;
                if (!dahlsim_calibrate_cover_parse(spec, &c)) {
                    fprintf(stderr, "hint: in --scenario %s\n", path);
                    ok = false;
                    break;
                }
                if (cover_known(o, c.dataset, c.model, c.perfmodel, c.grain))
                    continue;
                if (o->ncovers == DAHLSIM_CALIBRATE_MAX_COVERS) {
                    dahlsim_error("calibrate: --scenario %s: more than %d setups in all", path,
                                  DAHLSIM_CALIBRATE_MAX_COVERS);
                    ok = false;
                    break;
                }
                o->covers[o->ncovers++] = c;
            }
    cJSON_Delete(root);
    return ok;
}

/* Rank of a perf-model kind in the measuring order. Two StarPU 1.3.10 behaviours decide it: a run with
 * STARPU_CALIBRATE=1 and history-based models writes the regression fit (alpha, beta) back as nan, keeping
 * only its sums; and a model built as plain regression does not load the history entries, so its run
 * rewrites the file without them. So history setups are measured first, and regression setups after them,
 * measured with the models built as nl-regression (which keeps the history entries and updates the same
 * log-log sums and fit). */
static int kind_rank(const struct dahlsim_calibrate_cover *c)
{
    return strcmp(c->perfmodel, "history") == 0 ? 0 : strcmp(c->perfmodel, "nl-regression") == 0 ? 1 : 2;
}

static int cover_cmp(const void *a, const void *b)
{
    const struct dahlsim_calibrate_cover *x = a, *y = b;
    return kind_rank(x) - kind_rank(y);
}

/* Orders the setups by kind_rank (stable: insertion sort). */
void dahlsim_calibrate_covers_merge(struct dahlsim_calibrate_opts *o, const cJSON *prev_covered)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, prev_covered)
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "dataset");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "model");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "perfmodel");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(c, "grain");
        long grain = cJSON_IsNumber(g) && g->valuedouble >= 1 && g->valuedouble <= 65536 ? (long)g->valuedouble : 1;
        if (!cJSON_IsString(d) || !cJSON_IsString(m) || !cJSON_IsString(k) ||
            o->ncovers == DAHLSIM_CALIBRATE_MAX_COVERS || strlen(d->valuestring) >= sizeof(o->covers[0].dataset) ||
            strlen(m->valuestring) >= sizeof(o->covers[0].model) ||
            strlen(k->valuestring) >= sizeof(o->covers[0].perfmodel))
            continue;
        if (cover_known(o, d->valuestring, m->valuestring, k->valuestring, grain))
            continue;
        struct dahlsim_calibrate_cover *n = &o->covers[o->ncovers++];
        n->grain = grain;
        snprintf(n->dataset, sizeof(n->dataset), "%s", d->valuestring);
        snprintf(n->model, sizeof(n->model), "%s", m->valuestring);
        snprintf(n->perfmodel, sizeof(n->perfmodel), "%s", k->valuestring);
    }
    for (int i = 1; i < o->ncovers; i++)
        for (int j = i; j > 0 && cover_cmp(&o->covers[j - 1], &o->covers[j]) > 0; j--) {
            struct dahlsim_calibrate_cover tmp = o->covers[j];
            o->covers[j] = o->covers[j - 1];
            o->covers[j - 1] = tmp;
        }
}

void dahlsim_calibrate_cover_name(const struct dahlsim_calibrate_cover *c, char *buf, size_t size)
{
    if (c->grain > 1)
        snprintf(buf, size, "%s model=%s perfmodel=%s grain=%ld", c->dataset, c->model, c->perfmodel, c->grain);
    else
        snprintf(buf, size, "%s model=%s perfmodel=%s", c->dataset, c->model, c->perfmodel);
}

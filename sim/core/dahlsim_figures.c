/* The registry of published figures: its checks, values read from JSON outputs, quotes found in pages
 * (dahlsim_figures.h). */
#include "dahlsim_figures.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A quote's format: one conversion among %f %e %g, with flags, width and precision, and no other '%'. */
static bool format_ok(const char *f)
{
    const char *p = strchr(f, '%');
    if (p == NULL)
        return false;
    p++;
    while (*p != '\0' && strchr("+- 0#", *p) != NULL)
        p++;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == '\0' || strchr("feg", *p) == NULL)
        return false;
    return strchr(p + 1, '%') == NULL;
}

static const cJSON *field(const cJSON *o, const char *key, int type, const char *where, char *err, size_t err_size)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v == NULL || (v->type & 0xff) != type || (type == cJSON_String && v->valuestring[0] == '\0')) {
        const char *what = type == cJSON_String ? "a non-empty string"
                           : type == cJSON_Number ? "a number"
                           : type == cJSON_Array  ? "an array"
                                                  : "a boolean";
        snprintf(err, err_size, "%s.\"%s\": expected %s", where, key, what);
        return NULL;
    }
    return v;
}

/* Unknown keys are errors: a misspelt "quotes" would otherwise pin nothing. */
static bool known_keys(const cJSON *o, const char *const *keys, const char *where, char *err, size_t err_size)
{
    for (const cJSON *k = o->child; k != NULL; k = k->next) {
        bool found = false;
        for (size_t i = 0; keys[i] != NULL && !found; i++)
            found = strcmp(k->string, keys[i]) == 0;
        if (!found) {
            snprintf(err, err_size, "%s: unknown key \"%s\"", where, k->string);
            return false;
        }
    }
    return true;
}

static bool unique_id(const cJSON *list, const cJSON *item, const char *id)
{
    for (const cJSON *o = list->child; o != item; o = o->next)
        if (strcmp(cJSON_GetObjectItemCaseSensitive(o, "id")->valuestring, id) == 0)
            return false;
    return true;
}

static int check_runs(const cJSON *runs, char *err, size_t err_size)
{
    static const char *const keys[] = {"id", "command", "fast", NULL};
    int i = 0;
    for (const cJSON *r = runs->child; r != NULL; r = r->next, i++) {
        char where[64];
        snprintf(where, sizeof(where), "runs[%d]", i);
        const cJSON *id = NULL;
        if (!cJSON_IsObject(r) || !known_keys(r, keys, where, err, err_size) ||
            (id = field(r, "id", cJSON_String, where, err, err_size)) == NULL ||
            field(r, "command", cJSON_String, where, err, err_size) == NULL)
            return cJSON_IsObject(r) ? -EINVAL : (snprintf(err, err_size, "%s: expected an object", where), -EINVAL);
        const cJSON *fast = cJSON_GetObjectItemCaseSensitive(r, "fast");
        if (fast != NULL && !cJSON_IsBool(fast)) {
            snprintf(err, err_size, "%s.\"fast\": expected true or false", where);
            return -EINVAL;
        }
        if (!unique_id(runs, r, id->valuestring)) {
            snprintf(err, err_size, "%s.\"id\": \"%s\" is already a run's id", where, id->valuestring);
            return -EINVAL;
        }
    }
    return 0;
}

static bool run_known(const cJSON *runs, const char *id)
{
    for (const cJSON *r = runs->child; r != NULL; r = r->next)
        if (strcmp(cJSON_GetObjectItemCaseSensitive(r, "id")->valuestring, id) == 0)
            return true;
    return false;
}

/* A quote's "format" or "scale": one for every slot, or one each (an array of nslots). */
static int check_per_slot(const cJSON *q, const char *key, int type, int nslots, bool required, const char *at,
                          char *err, size_t err_size)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(q, key);
    const char *what = type == cJSON_String ? "a format" : "a number";
    if (v == NULL && !required)
        return 0;
    if (v != NULL && cJSON_IsArray(v) && cJSON_GetArraySize(v) != nslots) {
        snprintf(err, err_size, "%s.\"%s\": expected %d items, one a \"{}\", got %d", at, key, nslots,
                 cJSON_GetArraySize(v));
        return -EINVAL;
    }
    const cJSON *one = v;
    int k = 0;
    do {
        const cJSON *item = v != NULL && cJSON_IsArray(v) ? cJSON_GetArrayItem(v, k) : one;
        bool ok = item != NULL && (item->type & 0xff) == type &&
                  (type != cJSON_String || format_ok(item->valuestring));
        if (!ok) {
            snprintf(err, err_size, "%s.\"%s\": expected %s%s (or an array of them, one a \"{}\")", at, key, what,
                     type == cJSON_String ? " with one %f, %e or %g conversion" : "");
            return -EINVAL;
        }
    } while (v != NULL && cJSON_IsArray(v) && ++k < nslots);
    return 0;
}

static int check_quotes(const cJSON *quotes, int nvalues, const char *where, char *err, size_t err_size)
{
    static const char *const keys[] = {"file", "text", "format", "scale", "values", NULL};
    int j = 0;
    for (const cJSON *q = quotes->child; q != NULL; q = q->next, j++) {
        char at[96];
        snprintf(at, sizeof(at), "%s.quotes[%d]", where, j);
        if (!cJSON_IsObject(q)) {
            snprintf(err, err_size, "%s: expected an object", at);
            return -EINVAL;
        }
        const cJSON *text;
        if (!known_keys(q, keys, at, err, err_size) || field(q, "file", cJSON_String, at, err, err_size) == NULL ||
            (text = field(q, "text", cJSON_String, at, err, err_size)) == NULL)
            return -EINVAL;
        int nslots = dahlsim_figures_slots(text->valuestring);
        const cJSON *pick = cJSON_GetObjectItemCaseSensitive(q, "values");
        int want = pick != NULL ? cJSON_GetArraySize(pick) : nvalues;
        if (nslots < 1 || nslots > DAHLSIM_FIGURES_SLOTS || strncmp(text->valuestring, "{}", 2) == 0 ||
            nslots != want) {
            snprintf(err, err_size, "%s.\"text\": expected %d \"{}\" after some text (one a value), got \"%s\"", at,
                     want, text->valuestring);
            return -EINVAL;
        }
        if (pick != NULL) {
            const cJSON *k;
            cJSON_ArrayForEach(k, pick)
            {
                if (!cJSON_IsNumber(k) || k->valuedouble < 0 || k->valuedouble >= nvalues ||
                    k->valuedouble != (int)k->valuedouble) {
                    snprintf(err, err_size, "%s.\"values\": expected indices of the figure's %d values", at, nvalues);
                    return -EINVAL;
                }
            }
        }
        int ret = check_per_slot(q, "format", cJSON_String, nslots, true, at, err, err_size);
        if (ret == 0)
            ret = check_per_slot(q, "scale", cJSON_Number, nslots, false, at, err, err_size);
        if (ret != 0)
            return ret;
    }
    return 0;
}

/* One value of a figure at index k (the figure itself in the one-value form): "value", and either "path"
 * (with "over", "file", "scale"), "ratio"/"change" of two earlier values or "mean" of several. */
static int check_value(const cJSON *v, int k, const char *at, char *err, size_t err_size)
{
    const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(v, "ratio");
    if (ratio == NULL)
        ratio = cJSON_GetObjectItemCaseSensitive(v, "change");
    if (field(v, "value", cJSON_Number, at, err, err_size) == NULL)
        return -EINVAL;
    const cJSON *mean = cJSON_GetObjectItemCaseSensitive(v, "mean");
    if (mean != NULL) { /* the mean of earlier values of the figure */
        bool ok = cJSON_IsArray(mean) && cJSON_GetArraySize(mean) >= 1 && ratio == NULL &&
                  cJSON_GetObjectItemCaseSensitive(v, "path") == NULL;
        for (const cJSON *i = ok ? mean->child : NULL; i != NULL; i = i->next)
            ok = ok && cJSON_IsNumber(i) && i->valuedouble >= 0 && i->valuedouble < k &&
                 i->valuedouble == (int)i->valuedouble;
        if (!ok) {
            snprintf(err, err_size, "%s: expected \"mean\" to be [I, J, ...], indices of earlier values, and no "
                     "\"path\", \"ratio\" or \"change\"", at);
            return -EINVAL;
        }
        return 0;
    }
    if (ratio != NULL) { /* derived from two earlier values of the figure */
        const cJSON *a = cJSON_GetArrayItem(ratio, 0), *b = cJSON_GetArrayItem(ratio, 1);
        if (cJSON_GetArraySize(ratio) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || a->valuedouble < 0 ||
            a->valuedouble >= k || b->valuedouble < 0 || b->valuedouble >= k ||
            cJSON_GetObjectItemCaseSensitive(v, "path") != NULL) {
            snprintf(err, err_size, "%s: expected \"ratio\" or \"change\" to be [I, J], indices of earlier values, "
                     "and no \"path\"", at);
            return -EINVAL;
        }
        return 0;
    }
    if (field(v, "path", cJSON_String, at, err, err_size) == NULL)
        return -EINVAL;
    const cJSON *scale = cJSON_GetObjectItemCaseSensitive(v, "scale");
    if (scale != NULL && !cJSON_IsNumber(scale)) {
        snprintf(err, err_size, "%s.\"scale\": expected a number", at);
        return -EINVAL;
    }
    const cJSON *over = cJSON_GetObjectItemCaseSensitive(v, "over"), *file = cJSON_GetObjectItemCaseSensitive(v, "file");
    if ((over != NULL && (!cJSON_IsString(over) || over->valuestring[0] == '\0')) ||
        (file != NULL && (!cJSON_IsString(file) || file->valuestring[0] == '\0'))) {
        snprintf(err, err_size, "%s: expected \"over\" and \"file\" to be non-empty strings", at);
        return -EINVAL;
    }
    return 0;
}

/* A figure's numbers: one ("path", "value", maybe "over") or several ("values", at most
 * DAHLSIM_FIGURES_VALUES). Returns their count, or -EINVAL with the reason in err. */
static int check_values(const cJSON *f, const char *where, char *err, size_t err_size)
{
    static const char *const keys[] = {"path", "over", "file", "scale", "value", "ratio", "change", "mean", NULL};
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(f, "values");
    bool one = cJSON_GetObjectItemCaseSensitive(f, "path") != NULL;
    if (one == (values != NULL)) {
        snprintf(err, err_size, "%s: expected \"path\" and \"value\", or \"values\" (not both)", where);
        return -EINVAL;
    }
    if (one)
        return check_value(f, 0, where, err, err_size) == 0 ? 1 : -EINVAL;
    int n = cJSON_GetArraySize(values);
    if (!cJSON_IsArray(values) || n < 1 || n > DAHLSIM_FIGURES_VALUES) {
        snprintf(err, err_size, "%s.\"values\": expected an array of 1 to %d values", where, DAHLSIM_FIGURES_VALUES);
        return -EINVAL;
    }
    int k = 0;
    for (const cJSON *v = values->child; v != NULL; v = v->next, k++) {
        char at[96];
        snprintf(at, sizeof(at), "%s.values[%d]", where, k);
        if (!cJSON_IsObject(v)) {
            snprintf(err, err_size, "%s: expected an object", at);
            return -EINVAL;
        }
        if (!known_keys(v, keys, at, err, err_size) || check_value(v, k, at, err, err_size) != 0)
            return -EINVAL;
    }
    return k;
}

int dahlsim_figures_check_registry(const cJSON *reg, char *err, size_t err_size)
{
    static const char *const top[] = {"about", "runs", "figures", NULL};
    static const char *const keys[] = {"id", "run", "file", "path", "over", "value", "values", "quotes", NULL};
    if (!cJSON_IsObject(reg)) {
        snprintf(err, err_size, "expected an object with \"runs\" and \"figures\"");
        return -EINVAL;
    }
    const cJSON *runs, *figures;
    if (!known_keys(reg, top, "the registry", err, err_size) ||
        (runs = field(reg, "runs", cJSON_Array, "the registry", err, err_size)) == NULL ||
        (figures = field(reg, "figures", cJSON_Array, "the registry", err, err_size)) == NULL)
        return -EINVAL;
    int ret = check_runs(runs, err, err_size);
    if (ret != 0)
        return ret;
    int i = 0;
    for (const cJSON *f = figures->child; f != NULL; f = f->next, i++) {
        char where[64];
        snprintf(where, sizeof(where), "figures[%d]", i);
        if (!cJSON_IsObject(f)) {
            snprintf(err, err_size, "%s: expected an object", where);
            return -EINVAL;
        }
        const cJSON *id, *run, *quotes;
        if (!known_keys(f, keys, where, err, err_size) || (id = field(f, "id", cJSON_String, where, err, err_size)) == NULL ||
            (run = field(f, "run", cJSON_String, where, err, err_size)) == NULL ||
            field(f, "file", cJSON_String, where, err, err_size) == NULL ||
            (quotes = field(f, "quotes", cJSON_Array, where, err, err_size)) == NULL)
            return -EINVAL;
        int nvalues = check_values(f, where, err, err_size);
        if (nvalues < 0)
            return nvalues;
        if (!unique_id(figures, f, id->valuestring)) {
            snprintf(err, err_size, "%s.\"id\": \"%s\" is already a figure's id", where, id->valuestring);
            return -EINVAL;
        }
        if (!run_known(runs, run->valuestring)) {
            snprintf(err, err_size, "%s.\"run\": expected the id of one of \"runs\", got \"%s\"", where,
                     run->valuestring);
            return -EINVAL;
        }
        snprintf(where, sizeof(where), "figures[%d] (%s)", i, id->valuestring);
        if ((ret = check_quotes(quotes, nvalues, where, err, err_size)) != 0)
            return ret;
    }
    return 0;
}

/* The k-th number (from 0) printed in text, as strtod reads it; false when there are fewer. */
static bool nth_number(const char *text, long k, double *out)
{
    for (const char *p = text; *p != '\0';) {
        if (isdigit((unsigned char)*p) || ((*p == '-' || *p == '.') && isdigit((unsigned char)p[1]))) {
            char *end;
            double v = strtod(p, &end);
            if (k-- == 0) {
                *out = v;
                return true;
            }
            p = end;
        } else {
            p++;
        }
    }
    return false;
}

int dahlsim_json_path_number(const cJSON *doc, const char *path, double *out, char *err, size_t err_size)
{
    const cJSON *at = doc;
    const char *p = path;
    const char *hash = strchr(path, '#');
    while (*p != '\0' && p != hash && at != NULL) {
        if (*p == '[') {
            char *end;
            long k = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end != ']' || k < 0) {
                snprintf(err, err_size, "\"%s\": expected [N] at \"%s\"", path, p);
                return -EINVAL;
            }
            at = cJSON_IsArray(at) ? cJSON_GetArrayItem(at, (int)k) : NULL;
            p = end + 1;
        } else {
            if (*p == '.')
                p++;
            size_t n = strcspn(p, ".[#");
            char key[128];
            if (n == 0 || n >= sizeof(key)) {
                snprintf(err, err_size, "\"%s\": expected a key at \"%s\"", path, p);
                return -EINVAL;
            }
            memcpy(key, p, n);
            key[n] = '\0';
            at = cJSON_IsObject(at) ? cJSON_GetObjectItemCaseSensitive(at, key) : NULL;
            p += n;
        }
    }
    if (at == NULL) {
        snprintf(err, err_size, "\"%s\": no such item", path);
        return -ENOENT;
    }
    if (hash != NULL) { /* "#K": the K-th number of a text ("grain_choice#7") */
        char *end;
        long k = strtol(hash + 1, &end, 10);
        if (end == hash + 1 || *end != '\0' || k < 0) {
            snprintf(err, err_size, "\"%s\": expected #K, K a number's index, at the end", path);
            return -EINVAL;
        }
        if (!cJSON_IsString(at) || !nth_number(at->valuestring, k, out)) {
            snprintf(err, err_size, "\"%s\": expected a text with at least %ld numbers", path, k + 1);
            return -EINVAL;
        }
        return 0;
    }
    if (cJSON_IsBool(at)) { /* a verdict ("ranking_holds"): 1 or 0 */
        *out = cJSON_IsTrue(at) ? 1 : 0;
        return 0;
    }
    if (!cJSON_IsNumber(at)) {
        snprintf(err, err_size, "\"%s\": expected a number or a boolean", path);
        return -EINVAL;
    }
    *out = at->valuedouble;
    return 0;
}

void dahlsim_figures_render(double value, double scale, const char *format, char *buf, size_t size)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(buf, size, format, value * scale); /* one conversion, checked by format_ok */
#pragma GCC diagnostic pop
}

/* The length of a printed number at p (digits, signs, '.', an exponent), 0 when none. */
static size_t number_len(const char *p)
{
    size_t n = 0;
    bool digit = false;
    for (;; n++) {
        char c = p[n];
        if (isdigit((unsigned char)c))
            digit = true;
        else if (c == 'e' && digit && (isdigit((unsigned char)p[n + 1]) || p[n + 1] == '-' || p[n + 1] == '+'))
            continue;
        else if (!(c == '.' || ((c == '-' || c == '+') && (n == 0 || p[n - 1] == 'e'))))
            break;
    }
    return digit ? n : 0;
}

int dahlsim_figures_slots(const char *quote)
{
    int n = 0;
    for (const char *p = quote; (p = strstr(p, "{}")) != NULL; p += 2)
        n++;
    return n;
}

/* Whether quote matches page at p, its slots' numbers into at[] and len[] (offsets from page). */
static bool match_at(const char *page, const char *p, const char *quote, size_t *at, size_t *len)
{
    int slot = 0;
    for (const char *q = quote;;) {
        const char *next = strstr(q, "{}");
        size_t lit = next != NULL ? (size_t)(next - q) : strlen(q);
        if (strncmp(p, q, lit) != 0)
            return false;
        p += lit;
        if (next == NULL)
            return true;
        size_t n = number_len(p);
        if (n == 0)
            return false;
        at[slot] = (size_t)(p - page);
        len[slot++] = n;
        p += n;
        q = next + 2;
    }
}

int dahlsim_figures_find_quote(const char *page, const char *quote, size_t *at, size_t *len, int *line)
{
    int found = 0;
    size_t a[DAHLSIM_FIGURES_SLOTS], l[DAHLSIM_FIGURES_SLOTS];
    if (dahlsim_figures_slots(quote) > DAHLSIM_FIGURES_SLOTS)
        return 0;
    for (const char *p = page; (p = strchr(p, quote[0])) != NULL; p++) {
        if (!match_at(page, p, quote, a, l))
            continue;
        if (found++ == 0) {
            int n = dahlsim_figures_slots(quote);
            memcpy(at, a, (size_t)n * sizeof(*at));
            memcpy(len, l, (size_t)n * sizeof(*len));
            *line = 1;
            for (const char *c = page; c < p; c++)
                *line += *c == '\n';
        }
    }
    return found;
}

/* `dahlsim figures`: the published figures regenerated from their commands and compared with the registry
 * (docs/figures.json, dahlsim_figures.h) to the bit, their quotes in README.md and docs/ checked against the
 * pinned values; --write pins today's values and rewrites the quotes instead. */
#include "dahl_array.h"
#include "dahlsim_cli.h"
#include "dahlsim_figures.h"
#include "dahlsim_fs.h"
#include "dahlsim_spawn.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: dahlsim figures [--check | --write | --quotes] [--fast] [--only RUN] [--root DIR] [--registry FILE]\n"
    "                       [--work DIR]\n";

enum mode { CHECK, WRITE, QUOTES };

struct figures_opts {
    enum mode mode;
    bool fast;
    const char *only, *root, *registry, *work;
};

static void figures_print_help(void)
{
    fputs(usage, stdout);
    fputs("\nThe simulated figures that README.md and docs/ quote are listed in one registry (docs/figures.json):\n"
          "the command that makes each, where its value is in the command's output, the value pinned, and every\n"
          "place it is quoted. A simulation repeats to the bit, so a figure that moved is a model change.\n\n"
          "options:\n"
          "  --check          run the commands, compare every figure with its pinned value exactly, and every quote\n"
          "                   with its figure (the default); exit 1 listing what moved, with file:line\n"
          "  --write          run the commands, pin today's values and rewrite the quotes\n"
          "  --quotes         run nothing: check the quotes against the pinned values only\n"
          "  --fast           only the runs marked fast (seconds each: what the test suite checks)\n"
          "  --only RUN       only the run of that id\n"
          "  --root DIR       the source tree the commands run in (default: .)\n"
          "  --registry FILE  the registry (default: ROOT/docs/figures.json)\n"
          "  --work DIR       keep the commands' outputs under DIR (default: a temporary directory, removed)\n",
          stdout);
}

enum { O_CHECK = 256, O_WRITE, O_QUOTES, O_FAST, O_ONLY, O_ROOT, O_REGISTRY, O_WORK, O_HELP };
static const struct option options[] = {
    {"check", no_argument, NULL, O_CHECK},       {"write", no_argument, NULL, O_WRITE},
    {"quotes", no_argument, NULL, O_QUOTES},     {"fast", no_argument, NULL, O_FAST},
    {"only", required_argument, NULL, O_ONLY},   {"root", required_argument, NULL, O_ROOT},
    {"registry", required_argument, NULL, O_REGISTRY}, {"work", required_argument, NULL, O_WORK},
    {"help", no_argument, NULL, O_HELP},         {NULL, 0, NULL, 0},
};

static bool figures_set_option(int opt, const char *arg, void *ctx)
{
    struct figures_opts *o = ctx;
    switch (opt) {
    case O_CHECK: o->mode = CHECK; break;
    case O_WRITE: o->mode = WRITE; break;
    case O_QUOTES: o->mode = QUOTES; break;
    case O_FAST: o->fast = true; break;
    case O_ONLY: o->only = arg; break;
    case O_ROOT: o->root = arg; break;
    case O_REGISTRY: o->registry = arg; break;
    case O_WORK: o->work = arg; break;
    default: return false;
    }
    return true;
}

static const struct dahlsim_options figures_options = {"figures", usage, options, O_HELP, figures_print_help,
                                                       figures_set_option};

static const char *str(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key)->valuestring;
}

static bool run_selected(const cJSON *run, const struct figures_opts *o)
{
    if (o->only != NULL && strcmp(o->only, str(run, "id")) != 0)
        return false;
    return !o->fast || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "fast"));
}

/* Runs the run's command from the root with OUT=dir, this dahlsim first on PATH and DAHLSIM_BUILD its build
 * directory (for its bench/ programs), its output into dir.log. Returns its exit status (-1: not started). */
static int run_command(const cJSON *run, const struct figures_opts *o, const char *dir)
{
    char exe[PATH_MAX], path[PATH_MAX * 2 + 16];
    if (dahlsim_self_exe(exe, sizeof(exe)) != 0)
        return -1;
    const char *oldpath = getenv("PATH");
    const char *build = dirname(exe);
    snprintf(path, sizeof(path), "%s:%s", build, oldpath != NULL ? oldpath : "/usr/bin:/bin");
    if (dahlsim_make_dirs(dir) != 0)
        return -1;
    const struct dahlsim_env_var vars[] = {
        {"OUT", dir}, {"PATH", path}, {"DAHLSIM_BUILD", build}, {"DAHLSIM_FIGURES_ROOT", o->root}};
    char script[8192];
    snprintf(script, sizeof(script), "cd \"$DAHLSIM_FIGURES_ROOT\" && exec >\"$OUT.log\" 2>&1 && %s",
             str(run, "command"));
    char *const argv[] = {"/bin/sh", "-c", script, NULL};
    return dahlsim_spawn(argv, vars, 4, NULL, 0);
}

/* A figure's values: "values", or the figure itself as its one value. */
static cJSON *values_of(const cJSON *fig, int *n)
{
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(fig, "values");
    *n = values != NULL ? cJSON_GetArraySize(values) : 1;
    return (cJSON *)(values != NULL ? values->child : fig); /* --write pins through it */
}

/* The JSON outputs of one run, each parsed once however many values read it. */
struct output {
    char *file;
    cJSON *doc;
};
struct outputs {
    struct output *items;
    size_t n, cap;
};

static void outputs_fini(struct outputs *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->items[i].file);
        cJSON_Delete(c->items[i].doc);
    }
    free(c->items);
    *c = (struct outputs){0};
}

/* dir/file's document, parsed at its first use. Returns 0, or an error with the reason in err. */
static int output_doc(struct outputs *c, const char *dir, const char *file, const cJSON **doc, char *err,
                      size_t err_size)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].file, file) == 0) {
            *doc = c->items[i].doc;
            return 0;
        }
    char path[PATH_MAX + 256], why[PATH_MAX + 96];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    cJSON *d;
    int ret = dahlsim_json_load(path, SIZE_MAX, &d, why, sizeof(why));
    if (ret != 0) {
        snprintf(err, err_size, "%s: %s", path, why);
        return ret;
    }
    struct output *grown = dahl_array_grow(c->items, &c->cap, c->n + 1, sizeof(*c->items));
    char *name = grown != NULL ? strdup(file) : NULL;
    if (name == NULL) {
        if (grown != NULL)
            c->items = grown;
        cJSON_Delete(d);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    c->items = grown;
    c->items[c->n++] = (struct output){name, d};
    *doc = d;
    return 0;
}

/* Value v of figure fig from its run's output under dir. Returns 0, or an error with the reason in err. */
static int read_value(const cJSON *fig, const cJSON *v, const char *dir, struct outputs *c, double *value,
                      char *err, size_t err_size)
{
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(v, "file");
    const char *name = file != NULL ? file->valuestring : str(fig, "file");
    const cJSON *doc;
    int ret = output_doc(c, dir, name, &doc, err, err_size);
    if (ret != 0)
        return ret;
    char why[256];
    double over = 1;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(v, "over");
    ret = dahlsim_json_path_number(doc, str(v, "path"), value, why, sizeof(why));
    if (ret == 0 && o != NULL)
        ret = dahlsim_json_path_number(doc, o->valuestring, &over, why, sizeof(why));
    const cJSON *scale = cJSON_GetObjectItemCaseSensitive(v, "scale");
    if (ret != 0)
        snprintf(err, err_size, "%s/%s: %s", dir, name, why);
    else
        *value = *value / over * (cJSON_IsNumber(scale) ? scale->valuedouble : 1);
    return ret;
}

/* Every pinned value as its 17 significant digits, for the registry's saving: cJSON prints a number with 15
 * when those read back within an epsilon, which can drop its last bit. */
static void pin_digits(cJSON *reg)
{
    cJSON *fig;
    cJSON_ArrayForEach(fig, cJSON_GetObjectItemCaseSensitive(reg, "figures"))
    {
        int n;
        cJSON *v = values_of(fig, &n);
        for (int k = 0; k < n; k++, v = v->next) {
            const cJSON *value = cJSON_GetObjectItemCaseSensitive(v, "value");
            if (!cJSON_IsNumber(value))
                continue;
            char digits[32];
            snprintf(digits, sizeof(digits), "%.17g", value->valuedouble);
            cJSON *raw = cJSON_CreateRaw(digits);
            if (raw != NULL)
                cJSON_ReplaceItemInObjectCaseSensitive(v, "value", raw);
        }
    }
}

/* Regenerates the selected runs' figures under work: compares them with the pinned values (CHECK) or pins
 * them (WRITE). Returns the count of figures that moved or could not be read. */
static int regenerate(cJSON *reg, const struct figures_opts *o, const char *work, int *checked)
{
    int bad = 0;
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(reg, "runs");
    cJSON *figures = cJSON_GetObjectItemCaseSensitive(reg, "figures");
    for (const cJSON *run = runs->child; run != NULL; run = run->next) {
        if (!run_selected(run, o))
            continue;
        char dir[PATH_MAX + 128], log[PATH_MAX + 160];
        snprintf(dir, sizeof(dir), "%s/%s", work, str(run, "id"));
        snprintf(log, sizeof(log), "%s.log", dir);
        double t0 = dahlsim_mono_s();
        fprintf(stderr, "figures: run %s: %s\n", str(run, "id"), str(run, "command"));
        int status = run_command(run, o, dir);
        if (status != 0) {
            printf("run %s: failed (exit %d), its output in %s\n", str(run, "id"), status, log);
            bad++;
            continue;
        }
        fprintf(stderr, "figures: run %s: %.1f s\n", str(run, "id"), dahlsim_mono_s() - t0);
        struct outputs outputs = {0};
        for (cJSON *fig = figures->child; fig != NULL; fig = fig->next) {
            if (strcmp(str(fig, "run"), str(run, "id")) != 0)
                continue;
            int n;
            cJSON *v = values_of(fig, &n);
            double got[DAHLSIM_FIGURES_VALUES]; /* the registry check bounds n */
            for (int k = 0; k < n; k++, v = v->next) {
                char err[3 * PATH_MAX];
                (*checked)++;
                got[k] = NAN; /* a value that cannot be read leaves what derives from it NAN */
                const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(v, "ratio");
                const cJSON *change = cJSON_GetObjectItemCaseSensitive(v, "change");
                const cJSON *mean = cJSON_GetObjectItemCaseSensitive(v, "mean");
                if (mean != NULL) {
                    double sum = 0;
                    for (const cJSON *i = mean->child; i != NULL; i = i->next)
                        sum += got[(int)i->valuedouble];
                    got[k] = sum / cJSON_GetArraySize(mean);
                } else if (ratio != NULL || change != NULL) {
                    const cJSON *ij = ratio != NULL ? ratio : change;
                    got[k] = got[(int)cJSON_GetArrayItem(ij, 0)->valuedouble] /
                             got[(int)cJSON_GetArrayItem(ij, 1)->valuedouble] - (change != NULL ? 1 : 0);
                } else if (read_value(fig, v, dir, &outputs, &got[k], err, sizeof(err)) != 0) {
                    got[k] = NAN;
                    printf("figure %s[%d]: %s\n", str(fig, "id"), k, err);
                    bad++;
                    continue;
                }
                double now = got[k];
                cJSON *pinned = cJSON_GetObjectItemCaseSensitive(v, "value");
                if (now == pinned->valuedouble)
                    continue;
                if (o->mode == WRITE) {
                    printf("figure %s[%d]: %.17g, was %.17g\n", str(fig, "id"), k, now, pinned->valuedouble);
                    cJSON_SetNumberValue(pinned, now);
                } else {
                    printf("figure %s[%d]: stale: pinned %.17g, now %.17g (%+.3g %%)\n", str(fig, "id"), k,
                           pinned->valuedouble, now, (now / pinned->valuedouble - 1) * 100);
                    bad++;
                }
            }
        }
        outputs_fini(&outputs);
    }
    return bad;
}

/* Slot k of quote q: its value among the figure's (from first), times its scale, by its format. */
static void quote_render(const cJSON *q, int k, const cJSON *first, char *buf, size_t size)
{
    const cJSON *pick = cJSON_GetObjectItemCaseSensitive(q, "values");
    int index = pick != NULL ? (int)cJSON_GetArrayItem(pick, k)->valuedouble : k;
    const cJSON *v = first;
    for (int i = 0; i < index; i++)
        v = v->next;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(q, "format"), *scale = cJSON_GetObjectItemCaseSensitive(q, "scale");
    if (cJSON_IsArray(format))
        format = cJSON_GetArrayItem(format, k);
    if (cJSON_IsArray(scale))
        scale = cJSON_GetArrayItem(scale, k);
    dahlsim_figures_render(cJSON_GetObjectItemCaseSensitive(v, "value")->valuedouble,
                           scale != NULL ? scale->valuedouble : 1, format->valuestring, buf, size);
}

/* *text with len bytes at at replaced by with. Returns 0 or -ENOMEM. */
static int replace(char **text, size_t at, size_t len, const char *with)
{
    size_t total = strlen(*text), nw = strlen(with);
    char *next = malloc(total - len + nw + 1);
    if (next == NULL)
        return -ENOMEM;
    memcpy(next, *text, at);
    memcpy(next + at, with, nw);
    memcpy(next + at + nw, *text + at + len, total - at - len + 1);
    free(*text);
    *text = next;
    return 0;
}

/* One page's quotes against the pinned values: each found exactly once; stale ones listed (CHECK, QUOTES)
 * or rewritten (WRITE). Returns the count of quotes wrong, or -1 when the page cannot be read or written. */
static int page_quotes(const cJSON *reg, const char *root, const char *page, enum mode mode)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof(path), "%s/%s", root, page);
    char *text = dahlsim_read_text(path, SIZE_MAX);
    if (text == NULL) {
        printf("%s: cannot be read (%s)\n", page, strerror(errno));
        return 1;
    }
    int wrong = 0;
    bool changed = false;
    const cJSON *figures = cJSON_GetObjectItemCaseSensitive(reg, "figures");
    for (const cJSON *fig = figures->child; fig != NULL; fig = fig->next) {
        int nvalues;
        cJSON *first = values_of(fig, &nvalues);
        const cJSON *q;
        cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(fig, "quotes"))
        {
            if (strcmp(str(q, "file"), page) != 0)
                continue;
            size_t at[DAHLSIM_FIGURES_SLOTS], len[DAHLSIM_FIGURES_SLOTS];
            int line, n = dahlsim_figures_find_quote(text, str(q, "text"), at, len, &line);
            if (n != 1) {
                printf("%s: figure %s's quote \"%s\" %s\n", page, str(fig, "id"), str(q, "text"),
                       n == 0 ? "is not there" : "is there more than once");
                wrong++;
                continue;
            }
            /* the slots from the last, so that a rewrite leaves the earlier offsets as they are */
            int nslots = dahlsim_figures_slots(str(q, "text"));
            for (int k = nslots - 1; k >= 0; k--) {
                char want[64];
                quote_render(q, k, first, want, sizeof(want));
                if (len[k] == strlen(want) && strncmp(text + at[k], want, len[k]) == 0)
                    continue;
                if (mode != WRITE) {
                    printf("%s:%d: figure %s quoted %.*s, its value gives %s\n", page, line, str(fig, "id"),
                           (int)len[k], text + at[k], want);
                    wrong++;
                    continue;
                }
                if (replace(&text, at[k], len[k], want) != 0) {
                    free(text);
                    return -1;
                }
                changed = true;
                printf("%s:%d: figure %s now quoted %s\n", page, line, str(fig, "id"), want);
            }
        }
    }
    int ret = wrong;
    if (changed) {
        char tmp[PATH_MAX + 272];
        snprintf(tmp, sizeof(tmp), "%s.figures.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0 || rename(tmp, path) != 0) {
            printf("%s: cannot be rewritten (%s)\n", page, strerror(errno));
            ret = -1;
        }
    }
    free(text);
    return ret;
}

/* Every page the registry quotes in, each once, through page_quotes. Returns the count of quotes wrong. */
static int check_quotes(const cJSON *reg, const char *root, enum mode mode, int *nquotes)
{
    const char *pages[256];
    int npages = 0, wrong = 0;
    const cJSON *fig, *q;
    cJSON_ArrayForEach(fig, cJSON_GetObjectItemCaseSensitive(reg, "figures"))
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(fig, "quotes"))
    {
        (*nquotes)++;
        int k = 0;
        while (k < npages && strcmp(pages[k], str(q, "file")) != 0)
            k++;
        if (k == npages && npages < 256)
            pages[npages++] = str(q, "file");
    }
    for (int k = 0; k < npages; k++) {
        int n = page_quotes(reg, root, pages[k], mode);
        wrong += n < 0 ? 1 : n;
    }
    return wrong;
}

int dahlsim_cmd_figures(int argc, char **argv)
{
    struct figures_opts o = {.mode = CHECK, .root = "."};
    bool help;
    int ret = dahlsim_options_parse(&figures_options, argc, argv, &o, &help);
    if (ret != 0 || help)
        return dahlsim_exit_of(ret);
    if (optind < argc)
        return dahlsim_unexpected_argument("figures", argv[optind], usage);
    char registry[PATH_MAX + 32], why[PATH_MAX + 96];
    if (o.registry != NULL)
        snprintf(registry, sizeof(registry), "%s", o.registry);
    else
        snprintf(registry, sizeof(registry), "%s/docs/figures.json", o.root);
    cJSON *reg;
    ret = dahlsim_json_load(registry, SIZE_MAX, &reg, why, sizeof(why));
    if (ret == 0 && dahlsim_figures_check_registry(reg, why, sizeof(why)) != 0) {
        cJSON_Delete(reg);
        ret = -EINVAL;
    }
    if (ret != 0) {
        dahlsim_error("%s: %s", registry, why);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o.only != NULL) {
        const cJSON *run;
        bool found = false;
        cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(reg, "runs"))
            found |= strcmp(str(run, "id"), o.only) == 0;
        if (!found) {
            dahlsim_error("--only: expected the id of one of %s's runs, got \"%s\"", registry, o.only);
            cJSON_Delete(reg);
            return DAHLSIM_EXIT_USAGE;
        }
    }
    char work[PATH_MAX] = "";
    int bad = 0, checked = 0, nquotes = 0;
    if (o.mode != QUOTES) {
        if (o.work != NULL) {
            snprintf(work, sizeof(work), "%s", o.work);
            ret = dahlsim_make_dirs(work);
        } else {
            snprintf(work, sizeof(work), "%s/dahlsim-figures-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
            ret = mkdtemp(work) == NULL ? -errno : 0;
        }
        char abs[PATH_MAX];
        if (ret != 0 || realpath(work, abs) == NULL) {
            dahlsim_error("--work: %s: cannot be created (%s)", work, strerror(ret != 0 ? -ret : errno));
            cJSON_Delete(reg);
            return DAHLSIM_EXIT_USAGE;
        }
        snprintf(work, sizeof(work), "%s", abs);
        bad = regenerate(reg, &o, work, &checked);
    }
    int stale = check_quotes(reg, o.root, o.mode, &nquotes);
    if (o.mode == WRITE) {
        pin_digits(reg);
        if (dahlsim_json_save(reg, registry, why, sizeof(why)) != 0) {
            dahlsim_error("%s", why);
            bad++;
        }
    }
    printf("figures: %d checked from their runs, %d quotes; %d moved or failed, %d quotes wrong%s\n", checked,
           nquotes, bad, stale, o.mode == WRITE ? " (rewritten where found)" : "");
    if (o.work == NULL && work[0] != '\0' && bad == 0)
        dahlsim_remove_tree(work);
    else if (work[0] != '\0')
        printf("figures: the runs' outputs are in %s\n", work);
    cJSON_Delete(reg);
    return bad > 0 || stale > 0 ? DAHLSIM_EXIT_FAILURE : DAHLSIM_EXIT_OK;
}

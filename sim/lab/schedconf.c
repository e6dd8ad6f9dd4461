/* The scheduler of real runs (see dahlsim_schedconf.h): --sched/--priorities into a heteroprio
 * configuration (a priorities file read here, auto:HEURISTIC by dahl_schedconf.h), scenario "scheduler"
 * values, and the hint for a refused one. */
#include "dahlsim_schedconf.h"

#include "dahl_names.h"
#include "dahl_perfnames.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int load_manual_lists(const char *path, struct dahl_heteroprio_conf *out)
{
    static const char *const keys[DAHL_NARCH] = {"cpu", "gpu"};
    cJSON *doc = dahlsim_read_json(path);
    if (doc == NULL || !cJSON_IsObject(doc)) {
        dahlsim_error("--priorities %s: cannot read or parse (expected {\"cpu\": [types...], \"gpu\": [types...]} "
                      "or auto:HEURISTIC)",
                      path);
        cJSON_Delete(doc);
        return -EINVAL;
    }
    size_t nsym;
    const char *const *symbols = dahl_codelet_symbols(&nsym);
    const cJSON *item;
    cJSON_ArrayForEach(item, doc)
    {
        int a = strcmp(item->string, "cpu") == 0 ? 0 : strcmp(item->string, "gpu") == 0 ? 1 : -1;
        if (a < 0) {
            dahlsim_error("%s: unknown key \"%s\" (expected \"cpu\" and \"gpu\")", path, item->string);
            cJSON_Delete(doc);
            return -EINVAL;
        }
        const cJSON *v;
        if (!cJSON_IsArray(item)) {
            dahlsim_error("%s: \"%s\": expected an array of dahl perf-model symbols", path, keys[a]);
            cJSON_Delete(doc);
            return -EINVAL;
        }
        cJSON_ArrayForEach(v, item)
        {
            bool known = cJSON_IsString(v) && dahl_names_find(symbols, nsym, v->valuestring) >= 0;
            if (!known || out->n[a] == DAHL_HETEROPRIO_MAX_TYPES) {
                char list[1024];
                dahl_names_join(symbols, nsym, list, sizeof(list));
                dahlsim_error("%s: \"%s\": expected dahl perf-model symbols (%s), got %s%s%s", path, keys[a], list,
                              cJSON_IsString(v) ? "\"" : "", cJSON_IsString(v) ? v->valuestring : "a non-string",
                              cJSON_IsString(v) ? "\"" : "");
                cJSON_Delete(doc);
                return -EINVAL;
            }
            snprintf(out->names[a][out->n[a]++], sizeof(out->names[a][0]), "%s", v->valuestring);
        }
    }
    cJSON_Delete(doc);
    return 0;
}

int dahlsim_heteroprio_conf(const char *sched, const char *priorities, long interval,
                            struct dahl_heteroprio_conf *out)
{
    memset(out, 0, sizeof(*out));
    bool heteroprio = sched != NULL && strcmp(sched, "heteroprio") == 0;
    if (!heteroprio) {
        if (priorities != NULL) {
            dahlsim_error("--priorities: only with --sched heteroprio (the policy is %s)", sched ? sched : "the default");
            return -EINVAL;
        }
        return 0;
    }
    char list[128];
    dahl_autoprio_heuristic_list(list, sizeof(list));
    if (priorities == NULL) {
        dahlsim_error("--sched heteroprio: expected --priorities FILE or --priorities auto:HEURISTIC (%s)", list);
        return -EINVAL;
    }
    if (strncmp(priorities, "auto:", 5) == 0) {
        if (!dahl_heteroprio_parse_auto(priorities, out)) {
            dahlsim_error("--priorities: expected auto:HEURISTIC or auto:HEURISTIC/footprint with HEURISTIC one of %s, "
                          "got \"%s\"",
                          list, priorities);
            return -EINVAL;
        }
        out->interval = (int)interval;
        return 0;
    }
    return load_manual_lists(priorities, out);
}

bool dahlsim_scheduler_value(const char *value, char *policy, size_t policy_size, char *priorities,
                             size_t priorities_size, char *expected, size_t expected_size)
{
    static const char prefix[] = "heteroprio:auto-";
    bool ok;
    if (strncmp(value, prefix, sizeof(prefix) - 1) == 0) {
        char spec[64];
        struct dahl_heteroprio_conf hc;
        snprintf(spec, sizeof(spec), "auto:%s", value + sizeof(prefix) - 1);
        ok = strlen(value) < sizeof(spec) && dahl_heteroprio_parse_auto(spec, &hc);
        if (ok && policy != NULL)
            snprintf(policy, policy_size, "heteroprio");
        if (ok && priorities != NULL)
            snprintf(priorities, priorities_size, "auto:%s%s", dahl_autoprio_heuristic_name(hc.heuristic),
                     hc.by_footprint ? "/footprint" : "");
    } else {
        ok = strcmp(value, "heteroprio") != 0 && dahl_sched_policy_known(value);
        if (ok && policy != NULL)
            snprintf(policy, policy_size, "%s", value);
        if (ok && priorities != NULL && priorities_size > 0)
            priorities[0] = '\0';
    }
    if (!ok && expected != NULL)
        snprintf(expected, expected_size, "a StarPU scheduling policy (lws, dmda, eager, ...) or "
                                          "heteroprio:auto-HEURISTIC");
    return ok;
}

/* Edit distance between a and b (both short names), for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t nb = strlen(b), row[64];
    if (nb >= sizeof(row) / sizeof(row[0]))
        return SIZE_MAX;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; a[i - 1] != '\0'; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

void dahlsim_scheduler_hint(const char *value)
{
    if (strncmp(value, "heteroprio", strlen("heteroprio")) == 0) {
        char heuristics[128];
        dahl_autoprio_heuristic_list(heuristics, sizeof(heuristics));
        fprintf(stderr,
                "hint: heteroprio needs priorities: heteroprio:auto-HEURISTIC[/footprint], HEURISTIC one of %s\n",
                heuristics);
        return;
    }
    char best[48] = "";
    size_t best_d = SIZE_MAX, npolicies;
    const char *const *policies = dahl_sched_policies(&npolicies);
    for (size_t i = 0; i < npolicies; i++) {
        const char *name = policies[i];
        size_t d = edit_distance(value, name);
        if (strcmp(name, "heteroprio") != 0 && d < best_d && strlen(name) < sizeof(best)) {
            best_d = d;
            snprintf(best, sizeof(best), "%.47s", name);
        }
    }
    if (best_d <= 2)
        fprintf(stderr, "hint: did you mean \"%s\"? `dahlsim train --help` lists every policy\n", best);
    else
        fprintf(stderr, "hint: common policies: lws, ws, eager, prio, dm, dmda, dmdas; `dahlsim train --help` lists "
                        "every one\n");
}

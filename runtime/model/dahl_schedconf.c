/* Scheduler names (see dahl_schedconf.h). The policy table is StarPU 1.3.10's predefined_policies
 * (src/core/sched_policy.c), by policy_name, in its order. */
#include "dahl_schedconf.h"

#include "dahl_names.h"

#include <stdio.h>
#include <string.h>

static const char *const policies[] = {
    "modular-eager", "modular-eager-prefetching", "modular-eager-prio", "modular-gemm", "modular-prio",
    "modular-prio-prefetching", "modular-random", "modular-random-prio", "modular-random-prefetching",
    "modular-random-prio-prefetching", "modular-prandom", "modular-prandom-prio", "modular-ws", "modular-heft",
    "modular-heft-prio", "modular-heft2", "modular-heteroprio", "modular-heteroprio-heft", "modular-pheft", "eager",
    "prio", "random", "lws", "ws", "dm", "dmda", "dmdap", "dmdar", "dmdas", "dmdasd", "pheft", "peager",
    "heteroprio", "graph_test",
};

const char *const *dahl_sched_policies(size_t *n)
{
    *n = sizeof(policies) / sizeof(policies[0]);
    return policies;
}

bool dahl_sched_policy_known(const char *name)
{
    return dahl_names_find(policies, sizeof(policies) / sizeof(policies[0]), name) >= 0;
}

void dahl_sched_policy_list(char *buf, size_t size)
{
    dahl_names_join(policies, sizeof(policies) / sizeof(policies[0]), buf, size);
}

bool dahl_heteroprio_parse_auto(const char *text, struct dahl_heteroprio_conf *conf)
{
    if (text == NULL || strncmp(text, "auto:", 5) != 0)
        return false;
    memset(conf, 0, sizeof(*conf));
    conf->autoprio = true;
    conf->interval = 32;
    char name[32];
    const char *slash = strchr(text + 5, '/');
    size_t len = slash != NULL ? (size_t)(slash - (text + 5)) : strlen(text + 5);
    if (len >= sizeof(name) || (slash != NULL && strcmp(slash, "/footprint") != 0))
        return false;
    conf->by_footprint = slash != NULL;
    snprintf(name, sizeof(name), "%.*s", (int)len, text + 5);
    return dahl_autoprio_heuristic_parse(name, &conf->heuristic);
}

/* The multi-node keys of a scenario: "nodes" (nodes of the one machine) or "node_groups" (nodes of several
 * machines, each group with its share of every step), then "network". See dahlsim_scenario_nodes.h. */
#include "dahlsim_scenario_nodes.h"
#include "dahl_dataset_name.h"
#include "dahlsim_manifest.h"
#include "dahlsim_platform.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_layer.h"
#include "dahl_progress_core.h"
#include "dahlsim_grain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "nodes" and "batch_per_node": nodes of the experiment's one machine, batch / nodes samples each. */
static bool nodes_count_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x,
                             bool pipeline)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(o, "nodes");
    const cJSON *network = cJSON_GetObjectItemCaseSensitive(o, "network");
    const cJSON *per_node = cJSON_GetObjectItemCaseSensitive(o, "batch_per_node");
    x->nodes = 0;
    if (nodes == NULL) {
        if (per_node != NULL) {
            dahlsim_field_error(w, "batch_per_node", per_node, "no batch_per_node without \"nodes\"");
            return false;
        }
        if (network != NULL) {
            dahlsim_field_error(w, "network", network, "no network without \"nodes\" (set \"nodes\" for a multi-node run)");
            return false;
        }
        return true;
    }
    if (!dahlsim_field_int(w, o, "nodes", 1, 1024, 0, &x->nodes))
        return false;
    if (per_node != NULL) {
        /* Weak scaling: a fixed per-node batch, so the global batch (and with "iterations", the samples)
         * grows with the node count. */
        long b;
        if (cJSON_GetObjectItemCaseSensitive(o, "batch") != NULL) {
            dahlsim_field_error(w, "batch_per_node", per_node, "either \"batch\" or \"batch_per_node\", not both");
            return false;
        }
        if (!dahlsim_field_int(w, o, "batch_per_node", 1, 65536, 0, &b))
            return false;
        x->batch = b * x->nodes;
        long iterations = 0;
        if (!dahlsim_field_int(w, o, "iterations", 1, 100000000, 0, &iterations))
            return false;
        if (iterations > 0)
            x->samples = iterations * x->batch;
        if (x->batch > x->samples || (dahl_dataset_name_is_fashion_mnist(x->dataset) && x->samples > 60000)) {
            char expected[160];
            snprintf(expected, sizeof(expected), "a global batch (%ld x %ld nodes) and samples (%ld) the dataset allows",
                     b, x->nodes, x->samples);
            dahlsim_field_error(w, "batch_per_node", per_node, expected);
            return false;
        }
    }
    if (!pipeline && x->batch % x->nodes != 0) {
        char expected[160];
        snprintf(expected, sizeof(expected), "a multiple of the %ld nodes (each trains batch / nodes samples of every "
                                             "step)", x->nodes);
        dahlsim_field_error(w, "batch", cJSON_GetObjectItemCaseSensitive(o, "batch"), expected);
        return false;
    }
    return true;
}

/* A node group's machine (its "machine"), checked as a scenario's own machine is, in a copy of x: its platform
 * and perf models, that it covers x's setup, and its measured runtime costs. */
static bool group_machine(const struct dahlsim_where *w, const cJSON *group, const struct dahlsim_experiment *x,
                          struct dahlsim_node_group *g)
{
    if (!dahlsim_field_string(w, group, "machine", NULL, g->machine, sizeof(g->machine),
                              "a calibrated machine's name") ||
        !dahlsim_machine_name_valid(g->machine)) {
        if (dahlsim_machine_name_valid(g->machine) || g->machine[0] == '\0')
            return false;
        dahlsim_field_error(w, "machine", cJSON_GetObjectItemCaseSensitive(group, "machine"),
                            "a machine name (letters, digits, '.', '_', '-')");
        return false;
    }
    struct dahlsim_experiment *copy = malloc(sizeof(*copy));
    if (copy == NULL) {
        dahlsim_error("%s: out of memory", w->path);
        return false;
    }
    *copy = *x;
    snprintf(copy->machine, sizeof(copy->machine), "%s", g->machine);
    bool ok = dahlsim_node_group_dir(x, g, copy->machine_dir, sizeof(copy->machine_dir)) == 0;
    if (!ok)
        dahlsim_error("%s: DAHLSIM_HOME is too long", w->path);
    ok = ok && dahlsim_scenario_machine_checks(w, group, copy);
    if (ok)
        dahlsim_node_group_take_experiment(g, copy);
    free(copy);
    return ok;
}

/* A group's "pstates": [NAME, ...], 1 to DAHLSIM_MAX_PSTATES other machines its nodes could be (its CPU
 * frequency states), each checked as the group's machine is; into g->pstates, comma-separated. Only `dahlsim
 * plan` uses them. */
static bool group_pstates(const struct dahlsim_where *w, const cJSON *group, const struct dahlsim_experiment *x,
                          struct dahlsim_node_group *g)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(group, "pstates");
    g->pstates[0] = '\0';
    if (list == NULL)
        return true;
    char expected[128];
    snprintf(expected, sizeof(expected), "an array of 1 to %d machine names (the group's frequency states)",
             DAHLSIM_MAX_PSTATES);
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    if (n < 1 || n > DAHLSIM_MAX_PSTATES) {
        dahlsim_field_error(w, "pstates", list, expected);
        return false;
    }
    size_t used = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, list)
    {
        /* checked as a group of its own: {"machine": NAME} */
        cJSON *as_group = cJSON_CreateObject();
        struct dahlsim_node_group other = {0};
        bool ok = as_group != NULL && cJSON_IsString(item) &&
                  cJSON_AddStringToObject(as_group, "machine", item->valuestring) != NULL &&
                  group_machine(w, as_group, x, &other);
        cJSON_Delete(as_group);
        if (!ok) {
            if (!cJSON_IsString(item))
                dahlsim_field_error(w, "pstates", item, expected);
            return false;
        }
        int len = snprintf(g->pstates + used, sizeof(g->pstates) - used, "%s%s", used ? "," : "", other.machine);
        if (len < 0 || (size_t)len >= sizeof(g->pstates) - used) {
            dahlsim_field_error(w, "pstates", list, "machine names of at most 255 characters in all");
            return false;
        }
        used += (size_t)len;
    }
    return true;
}

/* The keys a scenario with "node_groups" must not have: each group says its machine and node count, and
 * uses every worker of its machine. */
static bool groups_exclusive(const struct dahlsim_where *w, const cJSON *o)
{
    static const char *const not_with[] = {"machine", "nodes", "batch_per_node", "cpus", "gpus"};
    for (size_t i = 0; i < sizeof(not_with) / sizeof(not_with[0]); i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, not_with[i]);
        if (item != NULL) {
            dahlsim_field_error(w, not_with[i], item,
                                "no such key with \"node_groups\" (each group names its machine and node count, and "
                                "uses every worker of its machine)");
            return false;
        }
    }
    return true;
}

/* Runtime costs: every rank must charge the same kinds (dahl_engine_conf's rank_costs). A cluster mixing
 * machines with and without a measured cost simulates every node with StarPU-SimGrid's own costs. */
static void groups_costs(struct dahlsim_experiment *x)
{
    bool mixed = false;
    for (long g = 1; g < x->ngroups; g++)
        mixed |= (x->groups[g].submit_us_per_task > 0) != (x->groups[0].submit_us_per_task > 0) ||
                 (x->groups[g].worker_us >= 0) != (x->groups[0].worker_us >= 0);
    if (!mixed)
        return;
    snprintf(x->runtime_costs, sizeof(x->runtime_costs), "starpu");
    for (long g = 0; g < x->ngroups; g++) {
        struct dahlsim_node_group *grp = &x->groups[g];
        grp->submit_us_per_task = grp->input_copy_bytes_per_s = grp->sched_push_us = 0;
        grp->worker_us = -1;
    }
}

/* "node_groups": [{"machine": NAME, "count": N, "share": S}, ...]: x->groups and x->nodes, the shares
 * checked against the batch (or made equal), every group's machine checked. */
static bool groups_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x, bool pipeline)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(o, "node_groups");
    char expected[256];
    snprintf(expected, sizeof(expected), "an array of 1 to %d node groups {\"machine\": NAME, \"count\": N, "
             "\"share\": SAMPLES}", DAHLSIM_MAX_NODE_GROUPS);
    int n = cJSON_IsArray(groups) ? cJSON_GetArraySize(groups) : 0;
    if (n < 1 || n > DAHLSIM_MAX_NODE_GROUPS) {
        dahlsim_field_error(w, "node_groups", groups, expected);
        return false;
    }
    if (!groups_exclusive(w, o))
        return false;
    x->ngroups = n;
    x->nodes = 0;
    long shared = 0, given = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *group = cJSON_GetArrayItem(groups, i);
        struct dahlsim_node_group *g = &x->groups[i];
        char where_path[PATH_MAX + 32];
        snprintf(where_path, sizeof(where_path), "%s: node_groups[%d]", w->path, i);
        const struct dahlsim_where wg = {.path = where_path, .point = w->point};
        if (!cJSON_IsObject(group)) {
            dahlsim_field_error(w, "node_groups", group, expected);
            return false;
        }
        const cJSON *item;
        cJSON_ArrayForEach(item, group)
        {
            if (strcmp(item->string, "machine") != 0 && strcmp(item->string, "count") != 0 &&
                strcmp(item->string, "share") != 0 && strcmp(item->string, "pstates") != 0) {
                dahlsim_field_error(&wg, item->string, item, "only the keys machine, count, share and pstates");
                return false;
            }
        }
        if (!dahlsim_field_int(&wg, group, "count", 1, 1024, 1, &g->count) ||
            !dahlsim_field_int(&wg, group, "share", 1, 65536, 0, &g->share) || !group_machine(&wg, group, x, g) ||
            !group_pstates(&wg, group, x, g))
            return false;
        x->nodes += g->count;
        shared += g->count * g->share;
        given += g->share > 0;
    }
    if (x->nodes > 1024) {
        dahlsim_field_error(w, "node_groups", groups, "at most 1024 nodes in all");
        return false;
    }
    if (pipeline && given > 0) {
        dahlsim_field_error(w, "node_groups", groups, "no \"share\" with a pipeline or hybrid partition (each stage "
                                                      "trains all of each step's samples)");
        return false;
    }
    if (given > 0 && given < n) {
        dahlsim_field_error(w, "node_groups", groups, "a \"share\" in every group or in none (none: equal shares)");
        return false;
    }
    if (given > 0 && shared != x->batch) {
        snprintf(expected, sizeof(expected), "shares whose sum over the nodes (count x share) is the batch, %ld: it is "
                 "%ld", x->batch, shared);
        dahlsim_field_error(w, "node_groups", groups, expected);
        return false;
    }
    if (given == 0 && pipeline) {
        for (int i = 0; i < n; i++)
            x->groups[i].share = x->batch;
    } else if (given == 0) {
        if (x->batch % x->nodes != 0) {
            snprintf(expected, sizeof(expected), "a multiple of the %ld nodes (equal shares; or give each group "
                     "its \"share\")", x->nodes);
            dahlsim_field_error(w, "batch", cJSON_GetObjectItemCaseSensitive(o, "batch"), expected);
            return false;
        }
        for (int i = 0; i < n; i++)
            x->groups[i].share = x->batch / x->nodes;
    }
    groups_costs(x);
    /* group 0 is the experiment's machine (what_from took its name): the same costs */
    dahlsim_experiment_take_group(x, &x->groups[0]);
    return true;
}

/* "network", for x->nodes nodes. */
static bool network_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    const cJSON *network = cJSON_GetObjectItemCaseSensitive(o, "network");
    const char *name = "10gbe";
    const char *bw = "10Gbps", *lat = "10us", *topo = "flat";
    const char *const expected = "\"10gbe\", \"ib-100g\" or {\"bandwidth\": \"10Gbps\", \"latency\": \"10us\", "
                                 "\"topology\": \"flat|fat-tree|torus\"}";
    if (cJSON_IsString(network) && strcmp(network->valuestring, "ib-100g") == 0) {
        name = "ib-100g"; /* 100 Gb/s InfiniBand EDR; about 1 us per link */
        bw = "100Gbps";
        lat = "1us";
    } else if (cJSON_IsObject(network)) {
        name = "custom";
        const cJSON *item;
        cJSON_ArrayForEach(item, network)
        {
            bool known = strcmp(item->string, "bandwidth") == 0 || strcmp(item->string, "latency") == 0 ||
                         strcmp(item->string, "topology") == 0;
            if (!known || !cJSON_IsString(item)) {
                char key[80];
                snprintf(key, sizeof(key), "network.%s", item->string);
                dahlsim_field_error(w, key, item, known ? "a string" : "only the keys bandwidth, latency and topology");
                return false;
            }
        }
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(network, "bandwidth");
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(network, "latency");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(network, "topology");
        if (b == NULL || l == NULL) {
            dahlsim_field_error(w, "network", network, "an object with \"bandwidth\" and \"latency\" (and \"topology\")");
            return false;
        }
        bw = b->valuestring;
        lat = l->valuestring;
        topo = t != NULL ? t->valuestring : "flat";
    } else if (network != NULL && !(cJSON_IsString(network) && strcmp(network->valuestring, "10gbe") == 0)) {
        dahlsim_field_error(w, "network", network, expected);
        return false;
    }
    enum dahlsim_topology topology;
    if (!dahlsim_parse_bandwidth(bw, &x->network_bps)) {
        dahlsim_field_error(w, "network.bandwidth", cJSON_GetObjectItemCaseSensitive(network, "bandwidth"),
                    "a bandwidth with its unit: 10Gbps, 100Gbps, 12.5GBps (bps bits, Bps bytes)");
        return false;
    }
    if (!dahlsim_parse_latency(lat, &x->network_latency_s)) {
        dahlsim_field_error(w, "network.latency", cJSON_GetObjectItemCaseSensitive(network, "latency"),
                    "a latency with its unit: 10us, 1us, 0.5ms");
        return false;
    }
    if (!dahlsim_topology_parse(topo, &topology) || (topology == DAHLSIM_TOPOLOGY_TORUS && x->nodes < 2)) {
        dahlsim_field_error(w, "network.topology", cJSON_GetObjectItemCaseSensitive(network, "topology"),
                    topology == DAHLSIM_TOPOLOGY_TORUS ? "flat or fat-tree for one node" : "flat, fat-tree or torus");
        return false;
    }
    snprintf(x->topology, sizeof(x->topology), "%s", dahlsim_topology_name(topology));
    snprintf(x->network, sizeof(x->network), "%s: %s, %s per link, %s", name, bw, lat, x->topology);
    return true;
}


/* The model's layers for x's dataset, into d; false after the error line. */
static bool model_layers(const struct dahlsim_where *w, const struct dahlsim_experiment *x, struct dahl_network_desc *d)
{
    char err[512];
    if (dahlsim_grain_network_desc(x, d, err, sizeof(err)) != 0) {
        dahlsim_error("%s: \"model\": %s", w->path, err);
        return false;
    }
    return true;
}

/* "partition": "data" or {"kind": "data"} (the default), {"kind": "pipeline", "cuts": [L, ...]} or {"kind":
 * "hybrid", "cuts": [...], "replicas": R}: the kind into x->partition, and a hybrid's replicas (read first: a
 * pipeline's nodes need not divide the batch). The cuts: stages_from. */
static bool partition_kind(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "partition");
    const cJSON *kind = cJSON_IsObject(p) ? cJSON_GetObjectItemCaseSensitive(p, "kind") : p;
    const char *expected = "\"data\", {\"kind\": \"data\"}, {\"kind\": \"pipeline\", \"cuts\": [LAYER, ...]} or "
                           "{\"kind\": \"hybrid\", \"cuts\": [LAYER, ...], \"replicas\": N}";
    snprintf(x->partition, sizeof(x->partition), "data");
    x->stage_replicas = 1;
    if (p == NULL)
        return true;
    static const char *const kinds[] = {"data", "pipeline", "hybrid"};
    int k = 0;
    while (k < 3 && !(cJSON_IsString(kind) && strcmp(kind->valuestring, kinds[k]) == 0))
        k++;
    if (k == 3) {
        dahlsim_field_error(w, "partition", p, expected);
        return false;
    }
    const cJSON *item, *obj = cJSON_IsObject(p) ? p : NULL;
    cJSON_ArrayForEach(item, obj)
    {
        bool known = strcmp(item->string, "kind") == 0 || (strcmp(item->string, "cuts") == 0 && k > 0) ||
                     (strcmp(item->string, "replicas") == 0 && k == 2);
        if (!known) {
            static const char *const keys[] = {"only kind", "only kind and cuts", "only kind, cuts and replicas"};
            char key[80];
            snprintf(key, sizeof(key), "partition.%s", item->string);
            dahlsim_field_error(w, key, item, keys[k]);
            return false;
        }
    }
    if (k == 2) {
        char where_path[PATH_MAX + 32];
        snprintf(where_path, sizeof(where_path), "%s: partition", w->path);
        const struct dahlsim_where wp = {.path = where_path, .point = w->point};
        if (!dahlsim_field_int(&wp, p, "replicas", 2, 1024, 0, &x->stage_replicas))
            return false;
        if (x->stage_replicas == 0) {
            dahlsim_field_error(&wp, "replicas", NULL, "an integer in [2, 1024]: the nodes of each stage");
            return false;
        }
    }
    snprintf(x->partition, sizeof(x->partition), "%s", kinds[k]);
    return true;
}

static bool stages_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "partition");
    const cJSON *cuts = cJSON_GetObjectItemCaseSensitive(p, "cuts");
    struct dahl_network_desc d;
    long R = x->stage_replicas > 1 ? x->stage_replicas : 1, stages = x->nodes / R;
    if (x->nodes < 2 || x->nodes % R != 0 || x->batch % R != 0 || stages < 2) {
        char why[200];
        snprintf(why, sizeof(why), "a pipeline of at least 2 stages of %ld node%s each (\"nodes\" or \"node_groups\": "
                 "%ld nodes), and a batch the replicas split evenly (%ld)", R, R > 1 ? "s" : "", x->nodes, x->batch);
        dahlsim_field_error(w, "partition", p, why);
        return false;
    }
    if (!model_layers(w, x, &d))
        return false;
    char expected[256];
    snprintf(expected, sizeof(expected), "%ld increasing layers in [1, %d), each stage with a convolution or dense "
             "layer: stage cuts that cover the model's %d layers over the %ld stages", stages - 1, d.nlayers,
             d.nlayers, stages);
    bool ok = cJSON_IsArray(cuts) && cJSON_GetArraySize(cuts) == stages - 1;
    int first = 0;
    size_t used = 0;
    x->stage_cuts[0] = '\0';
    for (int s = 0; ok && s < stages; s++) {
        const cJSON *c = s + 1 < stages ? cJSON_GetArrayItem(cuts, s) : NULL;
        double v = c != NULL && cJSON_IsNumber(c) ? c->valuedouble : (c == NULL ? d.nlayers : NAN);
        ok = v == floor(v) && v > first && v <= d.nlayers && (c == NULL || v < d.nlayers);
        bool weights = false;
        for (int i = first; ok && i < (int)v; i++)
            weights |= dahl_layer_desc_has_params(&d.layers[i]);
        ok = ok && weights;
        if (ok && c != NULL && used < sizeof(x->stage_cuts))
            used += (size_t)snprintf(x->stage_cuts + used, sizeof(x->stage_cuts) - used, "%s%d", used ? "," : "", (int)v);
        if (ok)
            first = (int)v;
    }
    if (!ok) {
        dahlsim_field_error(w, "partition.cuts", cuts, expected);
        return false;
    }
    return true;
}

/* "mpi_progress_core": where each rank's StarPU-MPI progression thread runs (runtime/dahl_progress.h). */
static bool progress_core_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "mpi_progress_core");
    const char *expected = "\"auto\", \"shared\", \"dedicated\" or \"busy\" (where each rank's MPI progression thread runs)";
    if (item != NULL && x->nodes == 0) {
        dahlsim_field_error(w, "mpi_progress_core", item, "no mpi_progress_core without \"nodes\" or \"node_groups\"");
        return false;
    }
    if (!dahlsim_field_string(w, o, "mpi_progress_core", "auto", x->mpi_progress_core, sizeof(x->mpi_progress_core),
                              expected))
        return false;
    enum dahl_progress_core c;
    if (!dahl_progress_core_parse(x->mpi_progress_core, &c)) {
        dahlsim_field_error(w, "mpi_progress_core", item, expected);
        return false;
    }
    /* "mpi_progress_phase": where the turns fall is arbitrary (a native thread's drift), and a run where they
     * are charged can depend on it: a sweep over this share of their period shows how much. */
    const cJSON *phase = cJSON_GetObjectItemCaseSensitive(o, "mpi_progress_phase");
    if (phase != NULL && x->nodes == 0) {
        dahlsim_field_error(w, "mpi_progress_phase", phase, "no mpi_progress_phase without \"nodes\" or \"node_groups\"");
        return false;
    }
    x->mpi_progress_phase = phase != NULL && cJSON_IsNumber(phase) ? phase->valuedouble : 0.0;
    if (phase != NULL && (!cJSON_IsNumber(phase) || !(x->mpi_progress_phase >= 0 && x->mpi_progress_phase < 1))) {
        dahlsim_field_error(w, "mpi_progress_phase", phase, "a share of the turns' period, a number in [0, 1)");
        return false;
    }
    return true;
}

/* "representative_ranks": StarPU on one rank per node group, the other ranks light (runtime/dahl_light.h).
 * Only where the ranks of a group are alike: a data partition (a pipeline's or hybrid's stages differ), and
 * no trace (a light rank has no StarPU to trace). */
static bool representatives_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x,
                                 bool pipeline)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "representative_ranks");
    x->representative_ranks = false;
    if (item == NULL)
        return true;
    if (!cJSON_IsBool(item)) {
        dahlsim_field_error(w, "representative_ranks", item, "true or false");
        return false;
    }
    x->representative_ranks = cJSON_IsTrue(item);
    const char *why = NULL;
    if (x->representative_ranks && x->nodes == 0)
        why = "no representative_ranks without \"nodes\" or \"node_groups\"";
    else if (x->representative_ranks && pipeline)
        why = "a data partition (the stages of a pipeline or hybrid partition are not alike: no representative "
              "stands for another)";
    else if (x->representative_ranks && x->trace)
        why = "no trace with it (a light rank runs no StarPU to trace: simulate without representative_ranks to "
              "trace every node)";
    if (why != NULL) {
        dahlsim_field_error(w, "representative_ranks", item, why);
        return false;
    }
    return true;
}

bool dahlsim_scenario_nodes_from(const struct dahlsim_where *w, const cJSON *o, struct dahlsim_experiment *x)
{
    x->ngroups = 0;
    x->stage_cuts[0] = '\0';
    if (!partition_kind(w, o, x))
        return false;
    bool pipeline = strcmp(x->partition, "data") != 0;
    if (cJSON_GetObjectItemCaseSensitive(o, "node_groups") != NULL ? !groups_from(w, o, x, pipeline)
                                                                    : !nodes_count_from(w, o, x, pipeline))
        return false;
    if (x->nodes == 0 && cJSON_GetObjectItemCaseSensitive(o, "partition") != NULL) {
        dahlsim_field_error(w, "partition", cJSON_GetObjectItemCaseSensitive(o, "partition"),
                            "no partition without \"nodes\" or \"node_groups\"");
        return false;
    }
    if (x->nodes == 0)
        x->partition[0] = '\0';
    if (!progress_core_from(w, o, x) || !representatives_from(w, o, x, pipeline))
        return false;
    return x->nodes == 0 || (network_from(w, o, x) && (!pipeline || stages_from(w, o, x)));
}

long dahlsim_scenario_min_share(const struct dahlsim_experiment *x)
{
    if (x->stage_cuts[0] != '\0')
        return x->batch / (x->stage_replicas > 1 ? x->stage_replicas : 1);
    if (x->ngroups == 0)
        return x->nodes > 0 ? x->batch / x->nodes : x->batch;
    long least = x->groups[0].share;
    for (long g = 1; g < x->ngroups; g++)
        if (x->groups[g].share < least)
            least = x->groups[g].share;
    return least;
}

/* `dahlsim plan FILE`: the best data partitions of a heterogeneous cluster for time or energy
 * (dahlsim_plan.h), each written as a scenario; with --check, each simulated in StarPU-SimGrid and the
 * prediction set against the simulation. */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_plan.h"
#include "dahlsim_run.h"
#include "dahlsim_scenario.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: dahlsim plan FILE [--objective time|energy] [--time-bound SECONDS] [--top N] [--out DIR] [--check]\n"
    "                         [--predictor sim|lab] [--quiet]\n"
    "Plans a data partition of the scenario's node_groups (a heterogeneous cluster: the shares it gives, if any,\n"
    "are ignored): how many samples of every step each node trains, and which groups take part, for the least\n"
    "step time (--objective time, the default) or the least energy per step (--objective energy, optionally\n"
    "with --time-bound, the step time not to exceed). Predictions: each machine's step time and energy for a\n"
    "share from one-node StarPU-SimGrid runs at a few shares (DIR/one-node/; --predictor lab: the scheduler lab's\n"
    "emulation from the perf models, no simulation, less faithful), the gradient allreduce's binomial tree on\n"
    "the scenario's network, and the machines' power figures (sim/scenario/dahlsim_plan.h). Prints the --top N\n"
    "best (default 3) and the equal split, and writes each\n"
    "as a scenario, DIR/candidate-K.json, with DIR/plan.json (default DIR: results/plan-<scenario name>).\n"
    "--check then simulates every candidate (DIR/candidate-K/results.json) and adds the simulated step time\n"
    "and energy, the prediction's error, and whether the simulation ranks them as the plan does.\n";

struct plan_opts {
    const char *file, *out;
    struct dahlsim_plan_conf conf;
    bool check, quiet, help;
};

static int parse(int argc, char **argv, struct plan_opts *o)
{
    enum { O_OBJECTIVE = 256, O_BOUND, O_TOP, O_OUT, O_CHECK, O_QUIET, O_HELP, O_PREDICTOR };
    static const struct option options[] = {
        {"objective", required_argument, NULL, O_OBJECTIVE}, {"time-bound", required_argument, NULL, O_BOUND},
        {"top", required_argument, NULL, O_TOP},             {"out", required_argument, NULL, O_OUT},
        {"check", no_argument, NULL, O_CHECK},               {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},                 {"predictor", required_argument, NULL, O_PREDICTOR},
        {NULL, 0, NULL, 0},
    };
    *o = (struct plan_opts){.conf = {.objective = DAHLSIM_PLAN_TIME, .top = 3}};
    optind = 1;
    opterr = 0;
    int opt;
    long top = 3;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case O_OBJECTIVE:
            if (strcmp(optarg, "time") != 0 && strcmp(optarg, "energy") != 0) {
                dahlsim_error("--objective: expected time or energy, got \"%s\"", optarg);
                return -EINVAL;
            }
            o->conf.objective = optarg[0] == 't' ? DAHLSIM_PLAN_TIME : DAHLSIM_PLAN_ENERGY;
            break;
        case O_BOUND:
            if (!dahlsim_parse_double("--time-bound", optarg, 1e-9, 1e6, &o->conf.time_bound_s))
                return -EINVAL;
            break;
        case O_TOP:
            if (!dahlsim_parse_int("--top", optarg, 1, 20, &top))
                return -EINVAL;
            break;
        case O_OUT:
            o->out = optarg;
            if (!dahlsim_parse_dir("--out", optarg))
                return -EINVAL;
            break;
        case O_PREDICTOR:
            if (strcmp(optarg, "sim") != 0 && strcmp(optarg, "lab") != 0) {
                dahlsim_error("--predictor: expected sim or lab, got \"%s\"", optarg);
                return -EINVAL;
            }
            o->conf.predictor = optarg[0] == 's' ? DAHLSIM_PLAN_SIM : DAHLSIM_PLAN_LAB;
            break;
        case O_CHECK:
            o->check = true;
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_HELP:
            fputs(usage, stdout);
            o->help = true;
            return 0;
        default:
            dahlsim_option_misuse("plan", opt, argv, usage);
            return -EINVAL;
        }
    }
    o->conf.top = (int)top;
    if (o->conf.time_bound_s > 0 && o->conf.objective != DAHLSIM_PLAN_ENERGY) {
        dahlsim_error("--time-bound: expected it with --objective energy (the step time the least energy must keep)");
        return -EINVAL;
    }
    if (optind != argc - 1) {
        dahlsim_error("plan: expected one scenario file%s", optind < argc - 1 ? ", got several" : "");
        fputs(usage, stderr);
        return -EINVAL;
    }
    o->file = argv[optind];
    return 0;
}

/* The candidate as a scenario: the planned file's keys, its node groups replaced by the candidate's. */
static cJSON *candidate_scenario(const cJSON *planned, const struct dahlsim_plan_candidate *c, int k,
                                 const struct plan_opts *o)
{
    cJSON *s = cJSON_Duplicate(planned, 1);
    if (s == NULL)
        return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(s, "comment");
    cJSON_DeleteItemFromObjectCaseSensitive(s, "node_groups");
    cJSON_DeleteItemFromObjectCaseSensitive(s, "partition");
    if (c->ncuts > 0) { /* a pipeline (replicas 1) or a hybrid: the groups are its stages, in order */
        cJSON *part = cJSON_AddObjectToObject(s, "partition"), *cuts = cJSON_CreateArray();
        if (part == NULL || cuts == NULL ||
            cJSON_AddStringToObject(part, "kind", c->replicas > 1 ? "hybrid" : "pipeline") == NULL ||
            !cJSON_AddItemToObject(part, "cuts", cuts) ||
            (c->replicas > 1 && cJSON_AddNumberToObject(part, "replicas", (double)c->replicas) == NULL)) {
            cJSON_Delete(cuts);
            cJSON_Delete(s);
            return NULL;
        }
        for (long k = 0; k < c->ncuts; k++)
            cJSON_AddItemToArray(cuts, cJSON_CreateNumber((double)c->cuts[k]));
    }
    char comment[PATH_MAX + 256], energy[64] = "unknown";
    if (c->energy_j >= 0)
        snprintf(energy, sizeof(energy), "%.6g J", c->energy_j);
    snprintf(comment, sizeof(comment), "dahlsim plan %s, candidate %d%s (--objective %s): predicted step %.6g ms, "
             "energy %s per step", o->file, k, c->equal ? " (the equal split)" : "",
             dahlsim_plan_objective_name(o->conf.objective), c->step_s * 1e3, energy);
    cJSON *groups = cJSON_CreateArray();
    bool ok = cJSON_AddItemToObject(s, "comment", cJSON_CreateString(comment)) && groups != NULL &&
              cJSON_AddItemToObject(s, "node_groups", groups);
    for (long g = 0; ok && g < c->ngroups; g++) {
        cJSON *e = cJSON_CreateObject();
        ok = e != NULL && cJSON_AddItemToArray(groups, e) &&
             cJSON_AddStringToObject(e, "machine", c->groups[g].machine) &&
             cJSON_AddNumberToObject(e, "count", (double)c->groups[g].count) &&
             (c->ncuts > 0 || cJSON_AddNumberToObject(e, "share", (double)c->groups[g].share));
    }
    if (!ok) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

/* Simulates DIR/candidate-K.json into DIR/candidate-K/: its step time and energy per step (< 0: none). */
static int simulate(const char *scenario, const char *dir, double *step_s, double *energy_j)
{
    struct dahlsim_scenario *s = dahlsim_scenario_load(scenario, NULL, 0);
    if (s == NULL)
        return DAHLSIM_EXIT_USAGE;
    int status = dahlsim_run_experiment(dahlsim_scenario_point(s, 0), scenario, dir, NULL, true);
    dahlsim_scenario_destroy(s);
    if (status != 0)
        return status;
    char path[PATH_MAX + 64], why[PATH_MAX + 96];
    snprintf(path, sizeof(path), "%s/results.json", dir);
    cJSON *r;
    if (dahlsim_json_load(path, SIZE_MAX, &r, why, sizeof(why)) != 0) {
        dahlsim_error("%s: %s", path, why);
        return DAHLSIM_EXIT_FAILURE;
    }
    dahlsim_plan_results(r, step_s, energy_j);
    cJSON_Delete(r);
    return 0;
}

/* Whether the simulated values rank the candidates as the predicted ones do: no pair the prediction orders
 * by more than RANK_TIE the simulation orders the other way by more than RANK_TIE (a GPU node's simulated
 * steps under dmda vary by more than that from one run of a partition to a neighbouring one; two candidates
 * predicted within it are a tie the plan does not decide). */
#define RANK_TIE 0.02
static bool same_ranking(const double *pred, const double *sim, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (pred[i] * (1 + RANK_TIE) < pred[j] && sim[i] > sim[j] * (1 + RANK_TIE))
                return false;
    return true;
}

/* The plan's table on stdout, one candidate a line. */
static void print_candidate(const struct dahlsim_plan_candidate *c, int k, const double *sim_step,
                            const double *sim_energy)
{
    char groups[512];
    size_t used = 0;
    groups[0] = '\0';
    for (long g = 0; g < c->ngroups && used < sizeof(groups); g++) {
        if (c->ncuts > 0) /* a pipeline's stages: the layers they start at */
            used += (size_t)snprintf(groups + used, sizeof(groups) - used, "%sstage from layer %ld: %ld x %s",
                                     g ? ", " : "pipeline: ", g == 0 ? 0 : c->cuts[g - 1], c->groups[g].count,
                                     c->groups[g].machine);
        else
            used += (size_t)snprintf(groups + used, sizeof(groups) - used, "%s%ld x %s @ %ld", g ? ", " : "",
                                     c->groups[g].count, c->groups[g].machine, c->groups[g].share);
    }
    printf("%2d%s  step %9.4f ms (compute %.4f + allreduce %.4f)", k, c->equal ? "=" : " ", c->step_s * 1e3,
           c->compute_s * 1e3, c->allreduce_s * 1e3);
    if (c->energy_j >= 0)
        printf("  energy %8.4f J", c->energy_j);
    if (sim_step != NULL) {
        printf("  | simulated %9.4f ms (%+.1f %%)", *sim_step * 1e3, 100.0 * (c->step_s - *sim_step) / *sim_step);
        if (*sim_energy >= 0 && c->energy_j >= 0)
            printf(" %8.4f J (%+.1f %%)", *sim_energy, 100.0 * (c->energy_j - *sim_energy) / *sim_energy);
    }
    printf("  %s\n", groups);
}

static int plan_write(const struct plan_opts *o, const cJSON *planned, const struct dahlsim_plan *p,
                      const char *out)
{
    size_t n = p->nbest;
    double *pred = calloc(n, sizeof(double)), *sim = calloc(n, sizeof(double)), *sim_step = calloc(n, sizeof(double)),
           *sim_energy = calloc(n, sizeof(double));
    cJSON *root = cJSON_CreateObject(), *list = cJSON_CreateArray();
    int ret = pred == NULL || sim == NULL || sim_step == NULL || sim_energy == NULL || root == NULL || list == NULL
                  ? DAHLSIM_EXIT_FAILURE
                  : 0;
    if (ret == 0) {
        cJSON_AddStringToObject(root, "scenario", o->file);
        cJSON_AddStringToObject(root, "objective", dahlsim_plan_objective_name(o->conf.objective));
        cJSON_AddNumberToObject(root, "time_bound_s", o->conf.time_bound_s);
        cJSON_AddStringToObject(root, "predicted_by",
                                o->conf.predictor == DAHLSIM_PLAN_SIM
                                    ? "one-node StarPU-SimGrid runs of each machine at a few shares (interpolated), "
                                      "binomial-tree allreduce model, the runs' SimGrid host energy"
                                    : "scheduler lab emulation of each machine's step graph from its perf models, "
                                      "binomial-tree allreduce model, host energy model on the machines' power figures");
        cJSON_AddNumberToObject(root, "gradient_bytes", p->grad_bytes);
        cJSON_AddNumberToObject(root, "searched", (double)p->searched);
        cJSON_AddItemToObject(root, "candidates", list);
    }
    for (size_t k = 0; ret == 0 && k < n; k++) {
        const struct dahlsim_plan_candidate *c = &p->best[k];
        char file[PATH_MAX + 48], dir[PATH_MAX + 48], why[PATH_MAX + 96];
        snprintf(file, sizeof(file), "%s/candidate-%zu.json", out, k + 1);
        snprintf(dir, sizeof(dir), "%s/candidate-%zu", out, k + 1);
        cJSON *s = candidate_scenario(planned, c, (int)k + 1, o);
        if (s == NULL || dahlsim_json_save(s, file, why, sizeof(why)) != 0) {
            dahlsim_error("%s", s == NULL ? "plan: out of memory" : why);
            cJSON_Delete(s);
            ret = DAHLSIM_EXIT_FAILURE;
            break;
        }
        cJSON_Delete(s);
        pred[k] = o->conf.objective == DAHLSIM_PLAN_TIME ? c->step_s : c->energy_j;
        cJSON *e = cJSON_CreateObject(), *pr;
        cJSON_AddItemToArray(list, e);
        cJSON_AddNumberToObject(e, "rank", (double)k + 1);
        cJSON_AddStringToObject(e, "file", file);
        cJSON_AddBoolToObject(e, "equal_split", c->equal);
        cJSON_AddNumberToObject(e, "nodes", (double)c->nodes);
        cJSON_AddStringToObject(e, "partition", c->ncuts == 0 ? "data" : c->replicas > 1 ? "hybrid" : "pipeline");
        if (c->ncuts > 0) {
            cJSON *cuts = cJSON_AddArrayToObject(e, "cuts");
            for (long k = 0; k < c->ncuts; k++)
                cJSON_AddItemToArray(cuts, cJSON_CreateNumber((double)c->cuts[k]));
        }
        cJSON *groups = cJSON_AddArrayToObject(e, "node_groups");
        for (long g = 0; g < c->ngroups; g++) {
            cJSON *ge = cJSON_CreateObject();
            cJSON_AddItemToArray(groups, ge);
            cJSON_AddStringToObject(ge, "machine", c->groups[g].machine);
            cJSON_AddNumberToObject(ge, "count", (double)c->groups[g].count);
            cJSON_AddNumberToObject(ge, "share", (double)c->groups[g].share);
        }
        pr = cJSON_AddObjectToObject(e, "predicted");
        cJSON_AddNumberToObject(pr, "step_s", c->step_s);
        cJSON_AddNumberToObject(pr, "compute_s", c->compute_s);
        cJSON_AddNumberToObject(pr, "allreduce_s", c->allreduce_s);
        if (c->energy_j >= 0)
            cJSON_AddNumberToObject(pr, "energy_j", c->energy_j);
        else
            cJSON_AddNullToObject(pr, "energy_j");
        if (!o->check) {
            cJSON_AddNullToObject(e, "simulated");
            print_candidate(c, (int)k + 1, NULL, NULL);
            continue;
        }
        if (!o->quiet)
            fprintf(stderr, "dahlsim plan: simulating candidate %zu of %zu ...\n", k + 1, n);
        int status = simulate(file, dir, &sim_step[k], &sim_energy[k]);
        if (status != 0) {
            dahlsim_error("plan: %s: the simulation failed (exit %d)", file, status);
            ret = status == DAHLSIM_EXIT_USAGE ? DAHLSIM_EXIT_USAGE : DAHLSIM_EXIT_FAILURE;
            break;
        }
        sim[k] = o->conf.objective == DAHLSIM_PLAN_TIME ? sim_step[k] : sim_energy[k];
        cJSON *si = cJSON_AddObjectToObject(e, "simulated");
        cJSON_AddStringToObject(si, "results", dir);
        cJSON_AddNumberToObject(si, "step_s", sim_step[k]);
        cJSON_AddNumberToObject(si, "step_error", (c->step_s - sim_step[k]) / sim_step[k]);
        if (sim_energy[k] >= 0) {
            cJSON_AddNumberToObject(si, "energy_j", sim_energy[k]);
            if (c->energy_j >= 0)
                cJSON_AddNumberToObject(si, "energy_error", (c->energy_j - sim_energy[k]) / sim_energy[k]);
        } else {
            cJSON_AddNullToObject(si, "energy_j");
        }
        print_candidate(c, (int)k + 1, &sim_step[k], &sim_energy[k]);
    }
    if (ret == 0) {
        if (o->check) {
            bool holds = same_ranking(pred, sim, n);
            cJSON_AddBoolToObject(root, "ranking_holds", holds);
            cJSON_AddNumberToObject(root, "ranking_tie", RANK_TIE);
            printf("the simulation %s the plan's ranking (pairs within %.0f %% of each other count as ties)\n",
                   holds ? "keeps" : "does not keep", 100 * RANK_TIE);
        } else {
            cJSON_AddNullToObject(root, "ranking_holds");
        }
        char path[PATH_MAX + 16], why[PATH_MAX + 64];
        snprintf(path, sizeof(path), "%s/plan.json", out);
        if (dahlsim_json_save(root, path, why, sizeof(why)) != 0) {
            dahlsim_error("%s", why);
            ret = DAHLSIM_EXIT_FAILURE;
        } else if (!o->quiet) {
            fprintf(stderr, "dahlsim plan: wrote %s and %zu candidate scenarios\n", path, n);
        }
    }
    cJSON_Delete(root);
    free(pred);
    free(sim);
    free(sim_step);
    free(sim_energy);
    return ret;
}

int dahlsim_cmd_plan(int argc, char **argv)
{
    struct plan_opts o;
    int ret = parse(argc, argv, &o);
    if (ret != 0 || o.help)
        return dahlsim_exit_of(ret);
    struct dahlsim_scenario *s = dahlsim_scenario_load(o.file, NULL, 0);
    if (s == NULL)
        return DAHLSIM_EXIT_USAGE;
    const struct dahlsim_experiment *x = dahlsim_scenario_point(s, 0);
    cJSON *planned = NULL;
    char why[PATH_MAX + 64], out[PATH_MAX];
    int status = DAHLSIM_EXIT_USAGE;
    if (dahlsim_scenario_points(s) > 1) {
        dahlsim_error("plan: %s has a sweep: expected one experiment (the cluster to partition)", o.file);
        goto done;
    }
    if (x->ngroups == 0) {
        dahlsim_error("plan: %s: \"node_groups\": expected the cluster to partition, got nothing", o.file);
        fprintf(stderr, "hint: [{\"machine\": \"roofline-14cpu-1v100\", \"count\": 1}, {\"machine\": "
                        "\"roofline-build-2core\", \"count\": 4}] (scenarios/README.md)\n");
        goto done;
    }
    if (x->stage_cuts[0] != '\0') {
        dahlsim_error("plan: %s: \"partition\": expected a data partition (the planner does not search pipeline "
                      "stages yet), got a pipeline", o.file);
        goto done;
    }
    if (dahlsim_json_load(o.file, SIZE_MAX, &planned, why, sizeof(why)) != 0) {
        dahlsim_error("%s: %s", o.file, why);
        goto done;
    }
    if (o.out != NULL) {
        snprintf(out, sizeof(out), "%s", o.out);
    } else {
        const char *base = strrchr(o.file, '/');
        base = base != NULL ? base + 1 : o.file;
        size_t len = strlen(base);
        snprintf(out, sizeof(out), "results/plan-%.*s", (int)(len > 5 && strcmp(base + len - 5, ".json") == 0 ? len - 5 : len),
                 base);
    }
    char work[PATH_MAX + 16];
    snprintf(work, sizeof(work), "%s/one-node", out);
    ret = dahlsim_make_dirs(work);
    if (ret != 0) {
        dahlsim_error("--out: cannot create %s: %s", work, strerror(-ret));
        goto done;
    }
    o.conf.work_dir = work;
    struct dahlsim_plan p;
    char err[PATH_MAX + 512];
    double t0 = dahlsim_mono_s();
    if (!o.quiet && o.conf.predictor == DAHLSIM_PLAN_SIM)
        fprintf(stderr, "dahlsim plan: simulating one node of each machine at a few shares (%s) ...\n", work);
    ret = dahlsim_plan_make(x, &o.conf, &p, err, sizeof(err));
    if (ret != 0) {
        dahlsim_error("plan: %s: %s", o.file, err);
        status = ret == -EINVAL ? DAHLSIM_EXIT_USAGE : DAHLSIM_EXIT_FAILURE;
        goto done;
    }
    if (!o.quiet)
        fprintf(stderr, "dahlsim plan: %s: %zu partitions predicted in %.2f s (--objective %s%s, --predictor %s)\n",
                o.file, p.searched, dahlsim_mono_s() - t0, dahlsim_plan_objective_name(o.conf.objective),
                o.conf.time_bound_s > 0 ? ", bounded" : "", o.conf.predictor == DAHLSIM_PLAN_SIM ? "sim" : "lab");
    status = plan_write(&o, planned, &p, out);
    dahlsim_plan_fini(&p);
done:
    cJSON_Delete(planned);
    dahlsim_scenario_destroy(s);
    return status;
}

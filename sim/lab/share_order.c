/* The GPU-sharing emulator's orders (see dahlsim_share.h): names, the fifo, round-robin and weight choosers
 * the step loop calls, and given orders (their check and their files). */
#include "share_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[DAHLSIM_SHARE_NPOLICIES] = {"lru", "starpu", "belady"};
static const char *const order_names[DAHLSIM_SHARE_NORDERS] = {"fifo", "round-robin", "weight", "ga", "given"};

const char *dahlsim_share_policy_name(enum dahlsim_share_policy p)
{
    return p < DAHLSIM_SHARE_NPOLICIES ? policy_names[p] : "?";
}

const char *dahlsim_share_order_name(enum dahlsim_share_order o)
{
    return o < DAHLSIM_SHARE_NORDERS ? order_names[o] : "?";
}

/* Index of text in names[0 .. n-1], or -1 with "expected one of ..." in err. */
static int parse_name(const char *text, const char *const *names, int n, char *err, size_t err_size)
{
    for (int i = 0; i < n; i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    size_t used = (size_t)snprintf(err, err_size, "expected one of");
    for (int i = 0; i < n && used < err_size; i++)
        used += (size_t)snprintf(err + used, err_size - used, "%s %s", i > 0 ? "," : "", names[i]);
    if (used < err_size)
        snprintf(err + used, err_size - used, ", got \"%s\"", text);
    return -1;
}

bool dahlsim_share_policy_parse(const char *text, enum dahlsim_share_policy *p, char *err, size_t err_size)
{
    int i = parse_name(text, policy_names, DAHLSIM_SHARE_NPOLICIES, err, err_size);
    if (i >= 0)
        *p = (enum dahlsim_share_policy)i;
    return i >= 0;
}

bool dahlsim_share_order_parse(const char *text, enum dahlsim_share_order *o, char *err, size_t err_size)
{
    int i = parse_name(text, order_names, DAHLSIM_SHARE_NORDERS, err, err_size);
    if (i >= 0)
        *o = (enum dahlsim_share_order)i;
    return i >= 0;
}

static bool unfinished(const struct share_emu *e, int j)
{
    return e->next_step[j] < e->s->jobs[j].steps;
}

int share_pick_fifo(struct share_emu *e)
{
    int best = -1;
    double best_ready = INFINITY;
    for (int j = 0; j < e->s->njobs; j++) {
        if (!unfinished(e, j))
            continue;
        const struct dahlsim_share_job *job = &e->s->jobs[j];
        double ready = e->next_step[j] == 0 ? job->start_s : e->last_end[j] + job->host_s;
        /* ties: the higher priority, then the lower index */
        if (best < 0 || ready < best_ready || (ready == best_ready && job->priority > e->s->jobs[best].priority)) {
            best = j;
            best_ready = ready;
        }
    }
    return best;
}

/* Round-robin visits the jobs by decreasing priority, ties by index: e->rr_last is a position in that
 * cycle. */
int share_pick_round_robin(struct share_emu *e)
{
    int n = e->s->njobs, cycle[DAHLSIM_SHARE_MAX_JOBS];
    share_priority_cycle(e->s, cycle);
    for (int d = 1; d <= n; d++) {
        int k = (e->rr_last + d) % n;
        if (unfinished(e, cycle[k])) {
            e->rr_last = k;
            return cycle[k];
        }
    }
    return -1;
}

void share_priority_cycle(const struct dahlsim_share *s, int *cycle)
{
    for (int j = 0; j < s->njobs; j++)
        cycle[j] = j;
    for (int a = 1; a < s->njobs; a++) /* insertion sort: stable */
        for (int b = a; b > 0 && s->jobs[cycle[b]].priority > s->jobs[cycle[b - 1]].priority; b--) {
            int x = cycle[b];
            cycle[b] = cycle[b - 1];
            cycle[b - 1] = x;
        }
}

void share_window_add(struct share_emu *e, int j, double compute_s, double idle_s)
{
    int slot = j * SHARE_WINDOW_MAX + e->win_len[j] % e->conf.window;
    e->win_compute[slot] = compute_s;
    e->win_idle[slot] = idle_s;
    e->win_len[j]++;
}

struct weighted {
    int job, priority;
    double weight, penalty;
};

/* a before b: larger weight, then smaller penalty, then higher priority, then lower index. */
static bool weighted_before(const struct weighted *a, const struct weighted *b)
{
    if (a->weight != b->weight)
        return a->weight > b->weight;
    if (a->penalty != b->penalty)
        return a->penalty < b->penalty;
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->job < b->job;
}

static struct weighted job_weight(const struct share_emu *e, int j)
{
    const struct dahlsim_share *s = e->s;
    int n = e->win_len[j] < e->conf.window ? e->win_len[j] : e->conf.window;
    double compute = 0.0, idle = 0.0;
    for (int k = 0; k < n; k++) {
        compute += e->win_compute[j * SHARE_WINDOW_MAX + k];
        idle += e->win_idle[j * SHARE_WINDOW_MAX + k];
    }
    double reward = compute + idle > 0.0 ? compute / (compute + idle) : 1.0;
    uint64_t missing = 0;
    int count = 0;
    for (int i = e->tbase[j]; i < e->tbase[j + 1]; i++)
        if (e->next_step[j] == 0 || !e->t[i].present) {
            missing += e->t[i].bytes;
            count++;
        }
    double penalty = (double)missing / s->bandwidth_bytes_per_s + s->latency_s * count;
    return (struct weighted){.job = j, .priority = s->jobs[j].priority, .penalty = penalty,
                             .weight = penalty > 0.0 ? reward / penalty : INFINITY};
}

int share_pick_weight(struct share_emu *e, double now)
{
    if (e->round_pos < e->round_len)
        return e->round[e->round_pos++];
    const struct dahlsim_share *s = e->s;
    struct weighted cand[DAHLSIM_SHARE_MAX_JOBS];
    int n = 0;
    double first = INFINITY;
    for (int j = 0; j < s->njobs; j++)
        if (unfinished(e, j) && s->jobs[j].start_s < first)
            first = s->jobs[j].start_s;
    for (int j = 0; j < s->njobs; j++)
        if (unfinished(e, j) && (s->jobs[j].start_s <= now || s->jobs[j].start_s == first))
            cand[n++] = job_weight(e, j);
    for (int a = 1; a < n; a++) /* insertion sort: stable and n <= 64 */
        for (int b = a; b > 0 && weighted_before(&cand[b], &cand[b - 1]); b--) {
            struct weighted x = cand[b];
            cand[b] = cand[b - 1];
            cand[b - 1] = x;
        }
    e->round_len = 0;
    for (int lo = 0, hi = n - 1; lo <= hi;) {
        e->round[e->round_len++] = cand[lo++].job;
        if (lo <= hi)
            e->round[e->round_len++] = cand[hi--].job;
    }
    e->round_pos = 0;
    return e->round_len > 0 ? e->round[e->round_pos++] : -1;
}

int dahlsim_share_order_check(const struct dahlsim_share *s, const int *order, int n, char *err, size_t err_size)
{
    int count[DAHLSIM_SHARE_MAX_JOBS] = {0};
    for (int p = 0; p < n; p++) {
        if (order[p] < 0 || order[p] >= s->njobs) {
            snprintf(err, err_size, "given order: element %d: %d is not a job index (expected 0 to %d)", p, order[p],
                     s->njobs - 1);
            return -EINVAL;
        }
        count[order[p]]++;
    }
    for (int j = 0; j < s->njobs; j++)
        if (count[j] != s->jobs[j].steps) {
            snprintf(err, err_size, "given order: job %d (\"%s\") appears %d times, expected %d (its steps)", j,
                     s->jobs[j].name, count[j], s->jobs[j].steps);
            return -EINVAL;
        }
    return 0;
}

/* The job an order element names: an index or a job name; -1 when none. */
static int order_element(const struct dahlsim_share *s, const cJSON *v)
{
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 0 &&
        v->valuedouble < s->njobs)
        return (int)v->valuedouble;
    for (int j = 0; cJSON_IsString(v) && j < s->njobs; j++)
        if (strcmp(v->valuestring, s->jobs[j].name) == 0)
            return j;
    return -1;
}

int dahlsim_share_order_load(const char *path, const struct dahlsim_share *s, int **order, int *n, char *err,
                             size_t err_size)
{
    *order = NULL;
    *n = 0;
    cJSON *doc = NULL;
    char why[256];
    int ret = share_json_read(path, &doc, err, err_size);
    if (ret != 0)
        return ret;
    const cJSON *list = doc;
    if (cJSON_IsObject(doc)) {
        const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
        list = cJSON_GetObjectItemCaseSensitive(doc, "order");
        if (!cJSON_IsString(format) || strcmp(format->valuestring, "dahlsim-share-result-1") != 0)
            list = NULL;
    }
    int len = cJSON_GetArraySize(list);
    if (!cJSON_IsArray(list) || len < 1) {
        snprintf(err, err_size, "%s: expected a JSON array of job indices or names, or a dahlsim dag share result "
                                "(\"format\": \"dahlsim-share-result-1\") with its \"order\"", path);
        cJSON_Delete(doc);
        return -EINVAL;
    }
    int *o = malloc((size_t)len * sizeof(int));
    if (o == NULL) {
        cJSON_Delete(doc);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    int p = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, list)
    {
        if ((o[p] = order_element(s, v)) < 0) {
            snprintf(err, err_size, "%s: element %d: expected a job index in [0, %d] or a job's name", path, p,
                     s->njobs - 1);
            ret = -EINVAL;
            break;
        }
        p++;
    }
    cJSON_Delete(doc);
    if (ret == 0 && (ret = dahlsim_share_order_check(s, o, p, why, sizeof(why))) != 0)
        snprintf(err, err_size, "%s: %s", path, why);
    if (ret != 0) {
        free(o);
        return ret;
    }
    *order = o;
    *n = p;
    return 0;
}

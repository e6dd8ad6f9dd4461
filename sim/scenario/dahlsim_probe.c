/* The machine probe and identity (dahlsim_probe.h). */
#include "dahlsim_probe.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_kernels.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct probe_thread {
    int core;
    double seconds, gflops;
    atomic_int *go; /* 0: wait (every thread is not started yet), 1: probe, -1: give up */
    int err;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *probe_core(void *arg)
{
    struct probe_thread *p = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(p->core, &set);
    p->err = sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : -errno;
    struct dahl_conv2d_shape s = {.c = 3, .h = 28, .w = 28, .f = 6, .kh = 5, .kw = 5, .stride = 1, .pad = 0};
    size_t nx = 3 * 28 * 28, nw = 6 * 3 * 5 * 5, ny = (size_t)6 * dahl_conv2d_out_h(&s) * dahl_conv2d_out_w(&s);
    float *x = calloc(nx, sizeof(float)), *w = calloc(nw, sizeof(float)), *b = calloc(6, sizeof(float));
    float *y = calloc(ny, sizeof(float)), *ws = malloc(dahl_conv2d_workspace_bytes(&s) + 1);
    if (x == NULL || w == NULL || b == NULL || y == NULL || ws == NULL)
        p->err = -ENOMEM;
    for (size_t i = 0; p->err == 0 && i < nx; i++)
        x[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; p->err == 0 && i < nw; i++)
        w[i] = (float)(i % 5) * 0.01f;
    while (atomic_load(p->go) == 0)
        sched_yield();
    if (p->err == 0 && atomic_load(p->go) > 0) {
        /* a warm-up first, unmeasured: a core that was idle runs its first tens of ms at another clock
         * (measured on the 2-core Intel VM: a probe right after a run 11-16 % slower than one before it,
         * nothing else running) */
        for (double w0 = now_s(); now_s() - w0 < DAHLSIM_PROBE_WARMUP_S;)
            dahl_conv2d_forward(&s, x, w, b, y, ws);
        double flops = dahl_conv2d_forward_flops(&s), done = 0, t0 = now_s(), t = t0;
        do {
            dahl_conv2d_forward(&s, x, w, b, y, ws);
            done += flops;
            t = now_s();
        } while (t - t0 < p->seconds);
        p->gflops = done / (t - t0) / 1e9;
    }
    free(x);
    free(w);
    free(b);
    free(y);
    free(ws);
    return NULL;
}

int dahlsim_probe_cores(int n, double seconds, double *gflops)
{
    if (n < 1 || n > DAHLSIM_PROBE_MAX_CORES)
        return -EINVAL;
    struct probe_thread *p = calloc((size_t)n, sizeof(*p));
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    atomic_int go = 0;
    int ret = p != NULL && th != NULL ? 0 : -ENOMEM, started = 0;
    for (; ret == 0 && started < n; started++) {
        p[started] = (struct probe_thread){.core = started, .seconds = seconds, .go = &go};
        if (pthread_create(&th[started], NULL, probe_core, &p[started]) != 0) {
            ret = -EAGAIN;
            break;
        }
    }
    atomic_store(&go, ret == 0 ? 1 : -1); /* every core at once */
    /* Fault injection for the tests: DAHLSIM_FAULT=slow-probe halves every probe after this process's first
     * (a machine loaded after it was first probed). */
    static int calls;
    const char *fault = getenv("DAHLSIM_FAULT");
    bool slow = calls++ > 0 && fault != NULL && strcmp(fault, "slow-probe") == 0;
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        gflops[i] = slow ? p[i].gflops / 2 : p[i].gflops;
        ret = ret != 0 ? ret : p[i].err;
    }
    free(p);
    free(th);
    return ret;
}

/* ---- the cores' round trip ------------------------------------------------------------------------------ */

#define PINGPONG_ROUNDS 1000  /* round trips per burst */
#define PINGPONG_BURSTS 7     /* bursts per pair: their median */
#define PINGPONG_LIMIT_S 1.0  /* per pair: a partner that never runs (an overloaded core) stops the pair here */

struct pingpong {
    _Alignas(64) atomic_long ball; /* odd: core 0's turn is over, the partner's to answer; even: answered */
    _Alignas(64) atomic_int stop;
    int core[2];
    double ns; /* the pair's round trip (ping thread) */
    int err[2];
};

static int pin(int core)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : -errno;
}

/* Waits until the ball reads want, or the pair is stopped. false: stopped. */
static bool wait_ball(struct pingpong *pp, long want)
{
    for (unsigned spins = 1; atomic_load_explicit(&pp->ball, memory_order_acquire) != want; spins++)
        if ((spins & 1023) == 0 && atomic_load_explicit(&pp->stop, memory_order_relaxed))
            return false;
    return true;
}

static void *pong(void *arg)
{
    struct pingpong *pp = arg;
    pp->err[1] = pin(pp->core[1]);
    for (long i = 0; wait_ball(pp, 2 * i + 1); i++)
        atomic_store_explicit(&pp->ball, 2 * i + 2, memory_order_release);
    return NULL;
}

static void *ping(void *arg)
{
    struct pingpong *pp = arg;
    pp->err[0] = pin(pp->core[0]);
    double bursts[PINGPONG_BURSTS], start = now_s();
    long i = 0;
    int done = 0;
    for (int b = -1; b < PINGPONG_BURSTS; b++) { /* burst -1: a warm-up */
        double t0 = now_s();
        long first = i;
        bool late = false;
        for (; i < first + PINGPONG_ROUNDS && !late; i++) {
            atomic_store_explicit(&pp->ball, 2 * i + 1, memory_order_release);
            for (unsigned spins = 1; atomic_load_explicit(&pp->ball, memory_order_acquire) != 2 * i + 2; spins++)
                if ((spins & 1023) == 0 && now_s() - start > PINGPONG_LIMIT_S) {
                    late = true; /* counted as the burst's rounds so far: a long round trip, not an error */
                    break;
                }
        }
        if (b >= 0 && i > first)
            bursts[done++] = (now_s() - t0) / (double)(i - first) * 1e9;
        if (late)
            break;
    }
    atomic_store(&pp->stop, 1);
    pp->ns = done > 0 ? dahlsim_median(bursts, (size_t)done) : PINGPONG_LIMIT_S * 1e9;
    return NULL;
}

/* One pair's round trip into *ns. 0 or a negative errno. */
static int pingpong_pair(int a, int b, double *ns)
{
    struct pingpong *pp = aligned_alloc(64, sizeof(*pp));
    if (pp == NULL)
        return -ENOMEM;
    memset(pp, 0, sizeof(*pp));
    atomic_init(&pp->ball, 0);
    atomic_init(&pp->stop, 0);
    pp->core[0] = a;
    pp->core[1] = b;
    pthread_t th[2];
    int ret = 0;
    if (pthread_create(&th[1], NULL, pong, pp) != 0) {
        free(pp);
        return -EAGAIN;
    }
    if (pthread_create(&th[0], NULL, ping, pp) != 0) {
        atomic_store(&pp->stop, 1);
        ret = -EAGAIN;
    } else {
        pthread_join(th[0], NULL);
    }
    pthread_join(th[1], NULL);
    ret = ret != 0 ? ret : pp->err[0] != 0 ? pp->err[0] : pp->err[1];
    *ns = pp->ns;
    free(pp);
    return ret;
}

int dahlsim_probe_latency(int n, double *ns)
{
    if (n < 1 || n > DAHLSIM_PROBE_MAX_CORES)
        return -EINVAL;
    *ns = 0;
    if (n == 1)
        return 0;
    double pairs[DAHLSIM_PROBE_MAX_CORES];
    for (int c = 1; c < n; c++) {
        int ret = pingpong_pair(0, c, &pairs[c - 1]);
        if (ret != 0)
            return ret;
    }
    *ns = dahlsim_median(pairs, (size_t)(n - 1));
    /* Fault injection for the tests: DAHLSIM_FAULT=far-cores makes every round trip after this process's
     * first ten times as long (cores placed apart after the machine was first probed). */
    static int calls;
    const char *fault = getenv("DAHLSIM_FAULT");
    if (calls++ > 0 && fault != NULL && strcmp(fault, "far-cores") == 0)
        *ns *= 10;
    return 0;
}

/* ---- a run's probe against the session's best ------------------------------------------------------------ */

int dahlsim_probe_around(int n, struct dahlsim_probe *slowest, struct dahlsim_probe *best)
{
    struct dahlsim_probe p = {0};
    int ret = dahlsim_probe_cores(n, DAHLSIM_PROBE_S, p.gflops);
    if (ret == 0)
        ret = dahlsim_probe_latency(n, &p.latency_ns);
    for (int c = 0; ret == 0 && c < n; c++)
        slowest->gflops[c] = slowest->gflops[c] > 0 && slowest->gflops[c] < p.gflops[c] ? slowest->gflops[c]
                                                                                         : p.gflops[c];
    if (ret == 0 && p.latency_ns > slowest->latency_ns)
        slowest->latency_ns = p.latency_ns;
    if (ret == 0 && best != NULL)
        dahlsim_probe_raise(n, &p, best);
    return ret;
}

void dahlsim_probe_raise(int n, const struct dahlsim_probe *probe, struct dahlsim_probe *best)
{
    for (int c = 0; c < n; c++)
        best->gflops[c] = probe->gflops[c] > best->gflops[c] ? probe->gflops[c] : best->gflops[c];
    if (probe->latency_ns > 0 && (best->latency_ns <= 0 || probe->latency_ns < best->latency_ns))
        best->latency_ns = probe->latency_ns;
}

double dahlsim_probe_slowness(int n, const struct dahlsim_probe *probe, const struct dahlsim_probe *best)
{
    double slow = 0;
    for (int c = 0; c < n; c++) {
        double s = best->gflops[c] > 0 ? 1 - probe->gflops[c] / best->gflops[c] : 0;
        slow = s > slow ? s : slow;
    }
    return slow;
}

double dahlsim_probe_latency_ratio(const struct dahlsim_probe *probe, const struct dahlsim_probe *best)
{
    return probe->latency_ns > 0 && best->latency_ns > 0 ? probe->latency_ns / best->latency_ns : 1;
}

double dahlsim_probe_latency_limit(double threshold)
{
    return threshold < 1 ? DAHLSIM_PROBE_LATENCY_SLACK / (1 - threshold) : INFINITY;
}

bool dahlsim_probe_noisy_at(double slowness, double latency_ratio, double threshold)
{
    return slowness > threshold || latency_ratio > dahlsim_probe_latency_limit(threshold);
}

bool dahlsim_probe_noisy(int n, const struct dahlsim_probe *probe, const struct dahlsim_probe *best,
                         double threshold)
{
    return dahlsim_probe_noisy_at(dahlsim_probe_slowness(n, probe, best), dahlsim_probe_latency_ratio(probe, best),
                                  threshold);
}

void dahlsim_node_here(struct dahlsim_node *n, bool probe)
{
    *n = (struct dahlsim_node){.cores = sysconf(_SC_NPROCESSORS_ONLN),
                               .memory_bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE)};
    snprintf(n->cpu_model, sizeof(n->cpu_model), "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(n->cpu_model, sizeof(n->cpu_model), "%s", colon);
            break;
        }
    }
    if (f != NULL)
        fclose(f);
    int cores = n->cores > 0 && n->cores <= DAHLSIM_PROBE_MAX_CORES ? (int)n->cores : 1;
    struct dahlsim_probe g, best = {0};
    for (int round = 0; probe && round < 3; round++) {
        if (dahlsim_probe_cores(cores, DAHLSIM_PROBE_S, g.gflops) != 0 || dahlsim_probe_latency(cores, &g.latency_ns) != 0)
            return;
        dahlsim_probe_raise(cores, &g, &best);
    }
    if (probe) {
        n->probe_gflops = dahlsim_median(best.gflops, (size_t)cores);
        n->core_latency_ns = best.latency_ns;
    }
}

int dahlsim_node_of_manifest(const char *manifest_path, struct dahlsim_node *n, char *err, size_t err_size)
{
    cJSON *doc = NULL;
    int ret = dahlsim_json_load(manifest_path, 1 << 26, &doc, err, err_size);
    if (ret != 0)
        return ret;
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(doc, "node");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(node, "cpu_model");
    const cJSON *cores = cJSON_GetObjectItemCaseSensitive(node, "cores");
    const cJSON *memory = cJSON_GetObjectItemCaseSensitive(node, "memory_bytes");
    const cJSON *probe = cJSON_GetObjectItemCaseSensitive(node, "probe_gflops");
    const cJSON *latency = cJSON_GetObjectItemCaseSensitive(node, "core_latency_ns");
    if (!cJSON_IsString(model) || !cJSON_IsNumber(cores) || !cJSON_IsNumber(memory) ||
        (probe != NULL && !cJSON_IsNumber(probe)) || (latency != NULL && !cJSON_IsNumber(latency))) {
        snprintf(err, err_size, "%s: \"node\": expected {\"cpu_model\": string, \"cores\": number, "
                 "\"memory_bytes\": number[, \"probe_gflops\": number][, \"core_latency_ns\": number]}",
                 manifest_path);
        cJSON_Delete(doc);
        return -EINVAL;
    }
    *n = (struct dahlsim_node){.cores = (long)cores->valuedouble, .memory_bytes = memory->valuedouble,
                               .probe_gflops = probe != NULL ? probe->valuedouble : 0,
                               .core_latency_ns = latency != NULL ? latency->valuedouble : 0};
    snprintf(n->cpu_model, sizeof(n->cpu_model), "%s", model->valuestring);
    cJSON_Delete(doc);
    return 0;
}

bool dahlsim_node_matches(const struct dahlsim_node *calibrated, const struct dahlsim_node *here, char *why,
                          size_t why_size)
{
    const struct dahlsim_node *c = calibrated, *h = here;
    if (strcmp(c->cpu_model, h->cpu_model) != 0)
        snprintf(why, why_size, "cpu_model: calibrated \"%s\", here \"%s\"", c->cpu_model, h->cpu_model);
    else if (c->cores != h->cores)
        snprintf(why, why_size, "cores: calibrated %ld, here %ld", c->cores, h->cores);
    else if (fabs(h->memory_bytes - c->memory_bytes) > 0.10 * c->memory_bytes)
        snprintf(why, why_size, "memory_bytes: calibrated %.0f, here %.0f", c->memory_bytes, h->memory_bytes);
    else
        return true;
    return false;
}

bool dahlsim_node_probe_differs(const struct dahlsim_node *calibrated, const struct dahlsim_node *here, char *why,
                                size_t why_size)
{
    const struct dahlsim_node *c = calibrated, *h = here;
    if (!(c->probe_gflops > 0 && h->probe_gflops > 0) ||
        fabs(h->probe_gflops - c->probe_gflops) <= 0.15 * c->probe_gflops)
        return false;
    snprintf(why, why_size, "the conv2d probe runs at %.2f GFLOP/s here (median over the cores), %.2f when it was "
             "calibrated: %+.0f %%", h->probe_gflops, c->probe_gflops, 100 * (h->probe_gflops / c->probe_gflops - 1));
    return true;
}

bool dahlsim_node_latency_differs(const struct dahlsim_node *calibrated, const struct dahlsim_node *here, char *why,
                                  size_t why_size)
{
    double c = calibrated->core_latency_ns, h = here->core_latency_ns;
    if (!(c > 0 && h > 0) || (h <= DAHLSIM_PROBE_LATENCY_SLACK * c && c <= DAHLSIM_PROBE_LATENCY_SLACK * h))
        return false;
    snprintf(why, why_size, "a cache line takes %.0f ns between the cores and back here, %.0f ns when it was "
             "calibrated: the runtime's costs per task (submission, scheduling) measured then do not hold now",
             h, c);
    return true;
}

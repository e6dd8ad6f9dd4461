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

int dahlsim_probe_around(int n, double *slowest, double *best)
{
    double g[DAHLSIM_PROBE_MAX_CORES];
    int ret = dahlsim_probe_cores(n, DAHLSIM_PROBE_S, g);
    for (int c = 0; ret == 0 && c < n; c++)
        slowest[c] = slowest[c] > 0 && slowest[c] < g[c] ? slowest[c] : g[c];
    if (ret == 0 && best != NULL)
        dahlsim_probe_raise(n, g, best);
    return ret;
}

void dahlsim_probe_raise(int n, const double *probe, double *best)
{
    for (int c = 0; c < n; c++)
        best[c] = probe[c] > best[c] ? probe[c] : best[c];
}

double dahlsim_probe_slowness(int n, const double *probe, const double *best)
{
    double slow = 0;
    for (int c = 0; c < n; c++) {
        double s = best[c] > 0 ? 1 - probe[c] / best[c] : 0;
        slow = s > slow ? s : slow;
    }
    return slow;
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
    double g[DAHLSIM_PROBE_MAX_CORES], best[DAHLSIM_PROBE_MAX_CORES] = {0};
    for (int round = 0; probe && round < 3; round++) {
        if (dahlsim_probe_cores(cores, DAHLSIM_PROBE_S, g) != 0)
            return;
        for (int c = 0; c < cores; c++)
            best[c] = g[c] > best[c] ? g[c] : best[c];
    }
    if (probe)
        n->probe_gflops = dahlsim_median(best, (size_t)cores);
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
    if (!cJSON_IsString(model) || !cJSON_IsNumber(cores) || !cJSON_IsNumber(memory) ||
        (probe != NULL && !cJSON_IsNumber(probe))) {
        snprintf(err, err_size, "%s: \"node\": expected {\"cpu_model\": string, \"cores\": number, "
                 "\"memory_bytes\": number[, \"probe_gflops\": number]}", manifest_path);
        cJSON_Delete(doc);
        return -EINVAL;
    }
    *n = (struct dahlsim_node){.cores = (long)cores->valuedouble, .memory_bytes = memory->valuedouble,
                               .probe_gflops = probe != NULL ? probe->valuedouble : 0};
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

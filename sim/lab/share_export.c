/* GPU-sharing jobs from the real program (see dahlsim_share.h): one step's GPU time from the lab's export of
 * dahl's training graph (the calibration's CUDA perf models), the tensors runtime/dahl_network.c registers
 * (sizes from the network description), and the PCIe link of the machine's SimGrid platform. */
#include "dahlsim_dag.h"
#include "dahlsim_lab_internal.h"
#include "dahlsim_share.h"

#include "dahl_layer.h"

#include "dahlsim_fs.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOAT_BYTES 4 /* dahl tensors hold floats */

/* The tensors of dahl_network_create for d, batch and momentum, grouped per layer (REDUX gradients: one
 * summed dw and db per layer, as by default):
 * - "input": act[0], batch x c x h x w, read-only on the GPU (the host writes the images; a new batch per
 *   step is not modelled);
 * - "L<i>.<kind>.act": act[i + 1] and grad[i + 1], 2 x batch x the layer's output, written;
 * - "L<i>.<kind>.edx": the gradients of its inputs it writes into buffers of its own (a skip connection's
 *   fan-out), batch x the input per such input, written;
 * - "L<i>.<kind>.params": w and b, dw and db and, with momentum, vw and vb: (2 or 3) x (nw + nb), written;
 * - "loss.metrics": batch x 2 (loss, correct), written.
 * Convolution workspaces (StarPU scratch buffers, never transferred) are left out. */
static int share_tensors(const struct dahl_network_desc *d, int batch, bool momentum, struct dahlsim_share_job *job,
                         char *err, size_t err_size)
{
    struct dahl_layer_shape shapes[DAHL_NETWORK_MAX_LAYERS];
    int ret = dahl_network_desc_shapes(d, shapes, err, err_size);
    if (ret != 0)
        return ret;
    job->tensors = calloc((size_t)3 * d->nlayers + 2, sizeof(*job->tensors));
    if (job->tensors == NULL) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    struct dahlsim_share_tensor *t = job->tensors;
    uint64_t b = (uint64_t)batch * FLOAT_BYTES;
    t[job->ntensors++] = (struct dahlsim_share_tensor){.bytes = b * (uint64_t)d->c * d->h * d->w, .name = "input"};
    for (int i = 0; i < d->nlayers; i++) {
        const struct dahl_layer_shape *l = &shapes[i];
        const char *kind = dahl_layer_type_get(l->desc.kind)->name; /* shapes were planned: a known kind */
        struct dahlsim_share_tensor *x = &t[job->ntensors++];
        *x = (struct dahlsim_share_tensor){.bytes = 2 * b * (uint64_t)l->out_c * l->out_h * l->out_w, .written = true};
        snprintf(x->name, sizeof(x->name), "L%d.%s.act", i, kind);
        uint64_t edx = 0;
        for (int k = 0; k < dahl_network_desc_ninputs(d, i); k++)
            if (dahl_network_desc_input(d, i, k) >= 0 && !dahl_network_desc_input_direct(d, i, k))
                edx += b * (uint64_t)l->in_c * l->in_h * l->in_w;
        if (edx > 0) {
            x = &t[job->ntensors++];
            *x = (struct dahlsim_share_tensor){.bytes = edx, .written = true};
            snprintf(x->name, sizeof(x->name), "L%d.%s.edx", i, kind);
        }
        if (l->nw == 0)
            continue;
        x = &t[job->ntensors++];
        *x = (struct dahlsim_share_tensor){.bytes = (momentum ? 3u : 2u) * (uint64_t)(l->nw + l->nb) * FLOAT_BYTES,
                                           .written = true};
        snprintf(x->name, sizeof(x->name), "L%d.%s.params", i, kind);
    }
    t[job->ntensors++] = (struct dahlsim_share_tensor){.bytes = b * 2, .written = true, .name = "loss.metrics"};
    return 0;
}

/* Seconds of one step's tasks on the GPU (the export of one step for 0 CPUs and 1 GPU). */
static int step_gpu_s(const struct dahlsim_share_export_conf *conf, const struct dahlsim_share_export_job *job,
                      double *out, char *err, size_t err_size)
{
    struct dahlsim_dag_export_conf ec = {.machine_dir = conf->machine_dir, .machine = conf->machine, .c = job->c,
                                         .h = job->h, .w = job->w, .model = job->model, .batch = job->batch,
                                         .steps = 1, .redux_copies = 1, .momentum = conf->momentum,
                                         .perfmodel = conf->perfmodel, .cpus = 0, .gpus = 1};
    struct dahlsim_dag g;
    int ret = dahlsim_dag_export(&ec, &g, err, err_size);
    if (ret != 0)
        return ret;
    double sum = 0.0;
    for (int t = 0; t < g.ntasks; t++)
        sum += dahlsim_dag_task_cost(&g, t, DAHL_ARCH_GPU);
    dahlsim_dag_fini(&g);
    *out = sum;
    return 0;
}

int dahlsim_share_export_job(const struct dahlsim_share_export_conf *conf, const struct dahlsim_share_export_job *job,
                             struct dahlsim_share *s, char *err, size_t err_size)
{
    if (s->njobs >= DAHLSIM_SHARE_MAX_JOBS) {
        snprintf(err, err_size, "at most %d jobs", DAHLSIM_SHARE_MAX_JOBS);
        return -EINVAL;
    }
    struct dahlsim_dag_export_conf ec = {.model = job->model, .c = job->c, .h = job->h, .w = job->w};
    struct dahl_network_desc d;
    int ret = dahlsim_dag_export_desc(&ec, &d, err, err_size);
    struct dahlsim_share_job *out = &s->jobs[s->njobs];
    memset(out, 0, sizeof(*out));
    if (ret == 0)
        ret = step_gpu_s(conf, job, &out->compute_s, err, err_size);
    if (ret == 0)
        ret = share_tensors(&d, job->batch, conf->momentum, out, err, err_size);
    if (ret != 0) {
        free(out->tensors);
        memset(out, 0, sizeof(*out));
        return ret;
    }
    snprintf(out->name, sizeof(out->name), "%s", job->name);
    out->steps = job->steps;
    out->batch = job->batch;
    out->start_s = job->start_s;
    out->priority = job->priority;
    out->host_s = job->host_s;
    s->njobs++;
    return 0;
}

/* The value of attr="..." in the element starting at el, in base units (GBps/MBps/kBps/Bps, s/ms/us/ns). */
static bool xml_unit(const char *el, const char *attr, double *out)
{
    char key[32];
    snprintf(key, sizeof(key), " %s=\"", attr);
    const char *end = strchr(el, '>'), *p = strstr(el, key);
    if (p == NULL || end == NULL || p > end)
        return false;
    char *unit;
    double v = strtod(p + strlen(key), &unit);
    static const struct { const char *name; double scale; } units[] = {
        {"GBps\"", 1e9}, {"MBps\"", 1e6}, {"kBps\"", 1e3}, {"Bps\"", 1.0},
        {"us\"", 1e-6}, {"ms\"", 1e-3}, {"ns\"", 1e-9}, {"s\"", 1.0},
    };
    for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++)
        if (strncmp(unit, units[k].name, strlen(units[k].name)) == 0) {
            *out = v * units[k].scale;
            return isfinite(*out);
        }
    return false;
}

int dahlsim_share_platform_link(const char *machine_dir, const char *machine, double *bandwidth_bytes_per_s,
                                double *latency_s, char *err, size_t err_size)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/sampling/bus/%s.platform.v4.xml", machine_dir, machine);
    char *text = dahlsim_read_text(path, 16u << 20);
    if (text == NULL) {
        snprintf(err, err_size, "%s: cannot read the platform: %s", path, strerror(errno));
        return -ENOENT;
    }
    const char *el = strstr(text, "<link id=\"RAM-CUDA0\"");
    bool ok = el != NULL && xml_unit(el, "bandwidth", bandwidth_bytes_per_s) && xml_unit(el, "latency", latency_s) &&
              *bandwidth_bytes_per_s > 0.0 && *latency_s >= 0.0;
    free(text);
    if (!ok) {
        snprintf(err, err_size, "%s: expected a <link id=\"RAM-CUDA0\" bandwidth=\"..GBps\" latency=\"..us\"/> (give "
                                "--bandwidth and --latency)", path);
        return -EINVAL;
    }
    return 0;
}

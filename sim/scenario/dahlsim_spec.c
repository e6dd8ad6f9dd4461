/* Machine specs (JSON) and the roofline model: see dahlsim_spec.h; the file format is documented in
 * platforms/specs/README.md. Parsing is strict: every error names the file and the field, unknown keys
 * included, and nothing is defaulted silently except the documented optional fields. */
#include "dahlsim_spec.h"
#include "dahlsim_fs.h"

#include "dahl_layer.h"
#include "dahl_perfnames.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CPU_OVERHEAD_US 1.5 /* a near-empty dahl task, measured on the build machine (--fit) */
#define DEFAULT_GPU_OVERHEAD_US 5.0 /* kernel launch and completion through StarPU's CUDA worker */

const char *dahlsim_arch_name(enum dahlsim_arch arch)
{
    return arch == DAHLSIM_ARCH_CUDA ? "cuda" : "cpu";
}

/* ---- default efficiencies --------------------------------------------------------------------------------
 * Fractions of peak each kernel reaches, per architecture: each codelet's are in the layer file of its kind
 * (runtime/model/layers/) or, for the step's own codelets, in dahl_perfnames.c.
 * CPU: fitted with `dahlsim machine synth --fit` to perf models measured on the project's build machine (AMD
 * EPYC, 2 vCPU; one core: 90 GFLOP/s single-precision SGEMM, 34 GB/s streaming; both cores busy, as in
 * training) at the default covered shapes (LeNet, 28x28 to 512x512 images), rounded; one factor per kernel,
 * applied to both roofs (dense: to the memory roof, the one that binds). The per-sample tasks are small, so
 * these sit well below what the same kernels reach on big matrices, and one factor per kernel leaves a median
 * error of 4-38 % per kernel over 28x28..512x512 (platforms/specs/README.md).
 * CUDA: nobody measured dahl's CUDA kernels on a spec'd machine: typical fractions for small single-sample
 * cuDNN/cuBLAS-like kernels (convolutions near half the FP32 peak, elementwise ones at 60-70 % of the memory
 * bandwidth); at per-sample sizes the per-task overhead dominates anyway. */
bool dahlsim_efficiency_default(const char *symbol, enum dahlsim_arch arch, struct dahlsim_efficiency *out)
{
    const struct dahl_codelet_defaults *c = dahl_codelet_defaults_find(symbol);
    if (c == NULL)
        return false;
    *out = arch == DAHLSIM_ARCH_CUDA ? (struct dahlsim_efficiency){c->cuda_compute, c->cuda_memory}
                                     : (struct dahlsim_efficiency){c->cpu_compute, c->cpu_memory};
    return true;
}

int dahlsim_symbol_index(const char *symbol)
{
    size_t n;
    const char *const *symbols = dahl_codelet_symbols(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(symbols[i], symbol) == 0)
            return (int)i;
    return -1;
}

double dahlsim_roofline_body_us(const struct dahlsim_spec *spec, enum dahlsim_arch arch,
                                struct dahlsim_efficiency eff, double flops, double bytes)
{
    double peak_flops = arch == DAHLSIM_ARCH_CUDA ? spec->gpu.fp32_tflops * 1e12 : spec->cpu.core_gflops * 1e9;
    double bandwidth = arch == DAHLSIM_ARCH_CUDA ? spec->gpu.mem_gbps * 1e9 : spec->cpu.core_mem_gbps * 1e9;
    double compute_s = flops / (peak_flops * eff.compute);
    double memory_s = bytes / (bandwidth * eff.memory);
    return 1e6 * (compute_s > memory_s ? compute_s : memory_s);
}

double dahlsim_roofline_us(const struct dahlsim_spec *spec, enum dahlsim_arch arch, int symbol_index, double flops,
                           double bytes)
{
    double overhead = arch == DAHLSIM_ARCH_CUDA ? spec->gpu.task_overhead_us : spec->cpu.task_overhead_us;
    double t = dahlsim_roofline_body_us(spec, arch, spec->eff[arch][symbol_index], flops, bytes) + overhead;
    return t > 1e-3 ? t : 1e-3; /* StarPU-SimGrid refuses a zero duration */
}

/* ---- strict JSON reading ---------------------------------------------------------------------------------- */

struct reader {
    const char *path;
    char *err;
    size_t err_size;
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct reader *r, const char *fmt, ...)
{
    int used = snprintf(r->err, r->err_size, "%s: ", r->path);
    va_list ap;
    va_start(ap, fmt);
    if (used >= 0 && (size_t)used < r->err_size)
        vsnprintf(r->err + used, r->err_size - (size_t)used, fmt, ap);
    va_end(ap);
    return -1;
}

/* The item as compact JSON text for messages ("?" when it cannot be printed), in buf. */
static const char *shown(const cJSON *item, char *buf, size_t size)
{
    char *text = cJSON_PrintUnformatted(item);
    snprintf(buf, size, "%s", text != NULL ? text : "?");
    free(text);
    return buf;
}

/* Fails on any key of obj not in allowed (NULL-terminated); field is obj's own name ("" for the root). */
static int only_keys(struct reader *r, const cJSON *obj, const char *field, const char *const *allowed)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, obj)
    {
        bool known = false;
        for (size_t k = 0; allowed[k] != NULL && !known; k++)
            known = strcmp(item->string, allowed[k]) == 0;
        if (!known) {
            char expected[512] = "";
            for (size_t k = 0; allowed[k] != NULL; k++) {
                size_t used = strlen(expected);
                snprintf(expected + used, sizeof(expected) - used, "%s\"%s\"", k > 0 ? ", " : "", allowed[k]);
            }
            return fail(r, "\"%s%s%s\": unknown key (expected %s)", field, field[0] != '\0' ? "." : "",
                        item->string, expected);
        }
    }
    return 0;
}

/* obj.key as a number in [min, max] (min excluded when open_min); absent: *out = dflt, or an error when
 * required. */
static int number(struct reader *r, const cJSON *obj, const char *field, const char *key, double min, bool open_min,
                  double max, bool required, double dflt, double *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (item == NULL) {
        if (required)
            return fail(r, "\"%s.%s\": missing (expected a number)", field, key);
        *out = dflt;
        return 0;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!isfinite(v) || v > max || (open_min ? v <= min : v < min)) {
        char buf[128];
        if (open_min && min == 0)
            return fail(r, "\"%s.%s\": expected a positive number (at most %g), got %s", field, key, max,
                        shown(item, buf, sizeof(buf)));
        return fail(r, "\"%s.%s\": expected a number in %c%g, %g], got %s", field, key, open_min ? '(' : '[', min,
                    max, shown(item, buf, sizeof(buf)));
    }
    *out = v;
    return 0;
}

static int integer(struct reader *r, const cJSON *obj, const char *field, const char *key, int min, int max, int *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (item == NULL)
        return fail(r, "\"%s.%s\": missing (expected an integer in [%d, %d])", field, key, min, max);
    if (!isfinite(v) || v != floor(v) || v < min || v > max) {
        char buf[128];
        return fail(r, "\"%s.%s\": expected an integer in [%d, %d], got %s", field, key, min, max,
                    shown(item, buf, sizeof(buf)));
    }
    *out = (int)v;
    return 0;
}

static int string(struct reader *r, const cJSON *obj, const char *field, const char *key, char *out, size_t size)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (item == NULL)
        return fail(r, "\"%s%s%s\": missing (expected a string)", field, field[0] != '\0' ? "." : "", key);
    if (!cJSON_IsString(item) || item->valuestring[0] == '\0' || strlen(item->valuestring) >= size) {
        char buf[128];
        return fail(r, "\"%s%s%s\": expected a non-empty string of at most %zu characters, got %s", field,
                    field[0] != '\0' ? "." : "", key, size - 1, shown(item, buf, sizeof(buf)));
    }
    snprintf(out, size, "%s", item->valuestring);
    return 0;
}

/* obj.key as an object (NULL when absent and optional). */
static int object(struct reader *r, const cJSON *obj, const char *key, bool required, const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (*out == NULL && !required)
        return 0;
    if (*out == NULL)
        return fail(r, "\"%s\": missing (expected an object)", key);
    if (!cJSON_IsObject(*out)) {
        char buf[128];
        return fail(r, "\"%s\": expected an object, got %s", key, shown(*out, buf, sizeof(buf)));
    }
    return 0;
}

/* A device's "idle_w" and "full_w" (watts): both or neither, 0 <= idle <= full (SimGrid's host energy
 * plugin, linear between them with the load). */
static int power(struct reader *r, const cJSON *obj, const char *field, double *idle, double *full)
{
    bool has_idle = cJSON_GetObjectItemCaseSensitive(obj, "idle_w") != NULL;
    bool has_full = cJSON_GetObjectItemCaseSensitive(obj, "full_w") != NULL;
    if (number(r, obj, field, "idle_w", 0, false, 1e5, has_full, 0, idle) ||
        number(r, obj, field, "full_w", 0, true, 1e5, has_idle, 0, full))
        return -1;
    if (*full < *idle)
        return fail(r, "\"%s.full_w\": expected at least %s.idle_w (%g W), got %g", field, field, *idle, *full);
    return 0;
}

/* ---- the sections ------------------------------------------------------------------------------------------ */

/* "cpu.pstates": [{"ghz", "idle_w", "full_w"}, ...], given with "cpu.ghz" and the nominal watts. */
static int read_pstates(struct reader *r, const cJSON *cpu, struct dahlsim_spec *s)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cpu, "pstates");
    if (list == NULL)
        return 0;
    char buf[128];
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > DAHLSIM_SPEC_MAX_PSTATES)
        return fail(r, "\"cpu.pstates\": expected an array of 1 to %d states {\"ghz\", \"idle_w\", \"full_w\"}, got %s",
                    DAHLSIM_SPEC_MAX_PSTATES, shown(list, buf, sizeof(buf)));
    if (s->cpu.ghz <= 0 || s->cpu.full_w <= 0)
        return fail(r, "\"cpu.pstates\": given without \"cpu.ghz\" and \"cpu.idle_w\"/\"cpu.full_w\" (expected the "
                       "nominal clock and watts the other states are set against)");
    static const char *const keys[] = {"ghz", "idle_w", "full_w", NULL};
    const cJSON *item;
    cJSON_ArrayForEach(item, list)
    {
        char field[32];
        snprintf(field, sizeof(field), "cpu.pstates[%d]", s->cpu.npstates);
        if (!cJSON_IsObject(item))
            return fail(r, "\"%s\": expected an object {\"ghz\", \"idle_w\", \"full_w\"}, got %s", field,
                        shown(item, buf, sizeof(buf)));
        double *ghz = &s->cpu.pstates[s->cpu.npstates].ghz;
        if (only_keys(r, item, field, keys) != 0 || number(r, item, field, "ghz", 0, true, 10, true, 0, ghz) ||
            power(r, item, field, &s->cpu.pstates[s->cpu.npstates].idle_w, &s->cpu.pstates[s->cpu.npstates].full_w))
            return -1;
        if (s->cpu.pstates[s->cpu.npstates].full_w <= 0)
            return fail(r, "\"%s.full_w\": missing (expected the state's watts)", field);
        s->cpu.npstates++;
    }
    return 0;
}

int dahlsim_spec_at_pstate(struct dahlsim_spec *spec, int k)
{
    if (k == 0)
        return 0;
    if (k < 0 || k > spec->cpu.npstates)
        return -EINVAL;
    double f = spec->cpu.pstates[k - 1].ghz / spec->cpu.ghz;
    spec->cpu.core_gflops *= f;
    spec->cpu.task_overhead_us /= f;
    spec->cpu.idle_w = spec->cpu.pstates[k - 1].idle_w;
    spec->cpu.full_w = spec->cpu.pstates[k - 1].full_w;
    spec->cpu.ghz = spec->cpu.pstates[k - 1].ghz;
    return 0;
}

static int read_cpu(struct reader *r, const cJSON *cpu, struct dahlsim_spec *s)
{
    static const char *const keys[] = {"model",  "cores",  "core_gflops", "core_mem_gbps", "task_overhead_us",
                                       "idle_w", "full_w", "ghz", "pstates", NULL};
    if (only_keys(r, cpu, "cpu", keys) != 0 || string(r, cpu, "cpu", "model", s->cpu.model, sizeof(s->cpu.model)) ||
        integer(r, cpu, "cpu", "cores", 1, DAHLSIM_SPEC_MAX_CORES, &s->cpu.cores) ||
        number(r, cpu, "cpu", "core_gflops", 0, true, 1e5, true, 0, &s->cpu.core_gflops) ||
        number(r, cpu, "cpu", "core_mem_gbps", 0, true, 1e5, true, 0, &s->cpu.core_mem_gbps) ||
        number(r, cpu, "cpu", "task_overhead_us", 0, false, 1e6, false, DEFAULT_CPU_OVERHEAD_US,
               &s->cpu.task_overhead_us) ||
        power(r, cpu, "cpu", &s->cpu.idle_w, &s->cpu.full_w) ||
        number(r, cpu, "cpu", "ghz", 0, true, 10, false, 0, &s->cpu.ghz) || read_pstates(r, cpu, s))
        return -1;
    return 0;
}

static int read_gpu(struct reader *r, const cJSON *gpu, struct dahlsim_spec *s)
{
    static const char *const keys[] = {"model", "count", "fp32_tflops", "mem_gib", "mem_gbps", "task_overhead_us",
                                       "idle_w", "full_w", NULL};
    if (only_keys(r, gpu, "gpu", keys) != 0 || string(r, gpu, "gpu", "model", s->gpu.model, sizeof(s->gpu.model)) ||
        integer(r, gpu, "gpu", "count", 1, DAHLSIM_SPEC_MAX_GPUS, &s->gpu.count) ||
        number(r, gpu, "gpu", "fp32_tflops", 0, true, 1e4, true, 0, &s->gpu.fp32_tflops) ||
        number(r, gpu, "gpu", "mem_gib", 0, true, 1e5, true, 0, &s->gpu.mem_gib) ||
        number(r, gpu, "gpu", "mem_gbps", 0, true, 1e6, true, 0, &s->gpu.mem_gbps) ||
        number(r, gpu, "gpu", "task_overhead_us", 0, false, 1e6, false, DEFAULT_GPU_OVERHEAD_US,
               &s->gpu.task_overhead_us) ||
        power(r, gpu, "gpu", &s->gpu.idle_w, &s->gpu.full_w))
        return -1;
    return 0;
}

static int read_links(struct reader *r, const cJSON *links, struct dahlsim_spec *s)
{
    static const char *const keys[] = {"host_gpu_gbps", "host_gpu_latency_us", "gpu_gpu_gbps", "gpu_gpu_latency_us",
                                       NULL};
    if (only_keys(r, links, "links", keys) != 0 ||
        number(r, links, "links", "host_gpu_gbps", 0, true, 1e5, true, 0, &s->links.host_gpu_gbps) ||
        number(r, links, "links", "host_gpu_latency_us", 0, false, 1e6, true, 0, &s->links.host_gpu_latency_us))
        return -1;
    s->links.gpu_gpu_direct = cJSON_GetObjectItemCaseSensitive(links, "gpu_gpu_gbps") != NULL;
    if (!s->links.gpu_gpu_direct && cJSON_GetObjectItemCaseSensitive(links, "gpu_gpu_latency_us") != NULL)
        return fail(r, "\"links.gpu_gpu_latency_us\": given without \"links.gpu_gpu_gbps\" (expected both for "
                       "direct GPU-GPU links, or neither for copies through the host)");
    /* Without peer links a GPU-GPU copy crosses two host links. */
    return number(r, links, "links", "gpu_gpu_gbps", 0, true, 1e5, false, s->links.host_gpu_gbps / 2,
                  &s->links.gpu_gpu_gbps) ||
                   number(r, links, "links", "gpu_gpu_latency_us", 0, false, 1e6, false,
                          2 * s->links.host_gpu_latency_us, &s->links.gpu_gpu_latency_us)
               ? -1
               : 0;
}

/* "efficiency": {"cpu"|"cuda": {SYMBOL: {"compute": x, "memory": y}}}, either factor optional. */
static int read_efficiency(struct reader *r, const cJSON *eff, struct dahlsim_spec *s)
{
    static const char *const archs[] = {"cpu", "cuda", NULL};
    if (only_keys(r, eff, "efficiency", archs) != 0)
        return -1;
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    for (int a = 0; a < DAHLSIM_NARCHS; a++) {
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(eff, archs[a]);
        if (per == NULL)
            continue;
        char field[64];
        snprintf(field, sizeof(field), "efficiency.%s", archs[a]);
        if (!cJSON_IsObject(per)) {
            char buf[128];
            return fail(r, "\"%s\": expected an object {SYMBOL: {\"compute\": x, \"memory\": y}}, got %s", field,
                        shown(per, buf, sizeof(buf)));
        }
        const cJSON *item;
        cJSON_ArrayForEach(item, per)
        {
            int k = dahlsim_symbol_index(item->string);
            if (k < 0)
                return fail(r, "\"%s.%s\": unknown perf-model symbol (expected one of %s, ..., %s)", field,
                            item->string, symbols[0], symbols[nsymbols - 1]);
            char sub[160];
            snprintf(sub, sizeof(sub), "%s.%s", field, item->string);
            static const char *const factors[] = {"compute", "memory", NULL};
            if (!cJSON_IsObject(item)) {
                char buf[128];
                return fail(r, "\"%s\": expected an object {\"compute\": x, \"memory\": y}, got %s", sub,
                            shown(item, buf, sizeof(buf)));
            }
            struct dahlsim_efficiency *e = &s->eff[a][k];
            if (only_keys(r, item, sub, factors) != 0 ||
                number(r, item, sub, "compute", 0, true, 10, false, e->compute, &e->compute) ||
                number(r, item, sub, "memory", 0, true, 10, false, e->memory, &e->memory))
                return -1;
            s->eff_from_spec[a][k] = true;
        }
    }
    return 0;
}

int dahlsim_spec_load(const char *path, struct dahlsim_spec *spec, void **json, char *err, size_t err_size)
{
    struct reader r = {.path = path, .err = err, .err_size = err_size};
    memset(spec, 0, sizeof(*spec));
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    if (nsymbols > DAHLSIM_SPEC_MAX_SYMBOLS)
        return fail(&r, "internal: %zu perf-model symbols, at most %d expected", nsymbols, DAHLSIM_SPEC_MAX_SYMBOLS);
    for (int a = 0; a < DAHLSIM_NARCHS; a++)
        for (size_t k = 0; k < nsymbols; k++)
            if (!dahlsim_efficiency_default(symbols[k], (enum dahlsim_arch)a, &spec->eff[a][k]))
                return fail(&r, "internal: no default efficiency for %s", symbols[k]);

    cJSON *root;
    char why[160];
    int loaded = dahlsim_json_load(path, (size_t)16 << 20, &root, why, sizeof(why));
    if (loaded != 0)
        return loaded == -EINVAL ? fail(&r, "%s", why) : fail(&r, "cannot read: %s", why);
    static const char *const keys[] = {"description", "sources", "cpu", "gpu", "links", "efficiency", NULL};
    const cJSON *cpu, *gpu, *links, *eff;
    int ret = -1;
    if (!cJSON_IsObject(root)) {
        fail(&r, "expected an object {\"description\", \"cpu\", ...}");
        goto out;
    }
    if (only_keys(&r, root, "", keys) != 0 ||
        string(&r, root, "", "description", spec->description, sizeof(spec->description)) != 0 ||
        object(&r, root, "cpu", true, &cpu) != 0 || read_cpu(&r, cpu, spec) != 0 ||
        object(&r, root, "gpu", false, &gpu) != 0 || (gpu != NULL && read_gpu(&r, gpu, spec) != 0) ||
        object(&r, root, "links", false, &links) != 0 || object(&r, root, "efficiency", false, &eff) != 0)
        goto out;
    const cJSON *sources = cJSON_GetObjectItemCaseSensitive(root, "sources");
    if (sources != NULL) {
        const cJSON *item;
        bool ok = cJSON_IsArray(sources);
        cJSON_ArrayForEach(item, sources) ok = ok && cJSON_IsString(item);
        if (!ok) {
            char buf[128];
            fail(&r, "\"sources\": expected an array of strings, got %s", shown(sources, buf, sizeof(buf)));
            goto out;
        }
    }
    if (gpu != NULL && links == NULL) {
        fail(&r, "\"links\": missing (expected an object with \"host_gpu_gbps\" and \"host_gpu_latency_us\": the "
                 "spec has GPUs)");
        goto out;
    }
    if (gpu == NULL && links != NULL) {
        fail(&r, "\"links\": given without \"gpu\" (expected no links for a CPU-only machine)");
        goto out;
    }
    if ((links != NULL && read_links(&r, links, spec) != 0) || (eff != NULL && read_efficiency(&r, eff, spec) != 0))
        goto out;
    /* Energy counts every device or none: a GPU without watts would count as free. */
    if (gpu != NULL && (spec->cpu.full_w > 0) != (spec->gpu.full_w > 0)) {
        fail(&r, "\"%s.idle_w\", \"%s.full_w\": missing (expected power figures for the %s too, as the %s has "
                 "them)",
             spec->cpu.full_w > 0 ? "gpu" : "cpu", spec->cpu.full_w > 0 ? "gpu" : "cpu",
             spec->cpu.full_w > 0 ? "GPU" : "CPU", spec->cpu.full_w > 0 ? "CPU" : "GPU");
        goto out;
    }
    ret = 0;
out:
    if (ret == 0 && json != NULL)
        *json = root;
    else
        cJSON_Delete(root);
    return ret;
}

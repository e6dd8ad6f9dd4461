/* Machine specs: a node described by its datasheet numbers (CPU cores and their GFLOP/s and memory GB/s,
 * GPUs, host-GPU and GPU-GPU links) in a JSON file (platforms/specs/, format in platforms/specs/README.md),
 * and the roofline model that turns a task's flops and bytes into a duration on it:
 *
 *   time_us = max(flops / (peak * eff_compute), bytes / (bandwidth * eff_memory)) * 1e6 + task_overhead_us
 *
 * per worker architecture (a CPU core: core_gflops, core_mem_gbps; a GPU: fp32_tflops, mem_gbps), with one
 * efficiency pair per perf-model symbol and architecture (documented defaults, overridable in the spec). */
#ifndef DAHLSIM_SPEC_H
#define DAHLSIM_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_SPEC_MAX_GPUS 8     /* the SimGrid StarPU is built with --enable-maxcudadev=8 */
#define DAHLSIM_SPEC_MAX_CORES 128  /* ... and --enable-maxcpus=128 */
#define DAHLSIM_SPEC_MAX_SYMBOLS 32
#define DAHLSIM_SPEC_MAX_PSTATES 8

enum dahlsim_arch {
    DAHLSIM_ARCH_CPU,  /* one CPU core */
    DAHLSIM_ARCH_CUDA, /* one GPU */
    DAHLSIM_NARCHS,
};

/* "cpu" or "cuda" (static). */
const char *dahlsim_arch_name(enum dahlsim_arch arch);

/* Fractions of the peak a kernel reaches: of the arithmetic peak, and of the memory bandwidth. Above 1
 * (memory) means faster than main memory allows: the data came from cache. */
struct dahlsim_efficiency {
    double compute, memory;
};

struct dahlsim_spec {
    char description[512];
    struct {
        char model[128];
        int cores;
        double core_gflops;      /* one core, fp32 */
        double core_mem_gbps;    /* one core streaming from main memory, 1e9 bytes/s */
        double task_overhead_us; /* added to every task's roofline time */
        double idle_w, full_w;   /* one core's power idle and fully loaded (0, 0: not given) */
        double ghz;              /* the clock core_gflops and the watts are at (0: not given) */
        int npstates;            /* other frequency states ("pstates"), each with its watts */
        struct {
            double ghz, idle_w, full_w;
        } pstates[DAHLSIM_SPEC_MAX_PSTATES];
    } cpu;
    struct {
        char model[128];
        int count;               /* 0: no GPU */
        double fp32_tflops;
        double mem_gib;          /* device memory, 2^30 bytes */
        double mem_gbps;
        double task_overhead_us;
        double idle_w, full_w;   /* one GPU's power idle and fully loaded (0, 0: not given) */
    } gpu;
    struct {
        double host_gpu_gbps;      /* each GPU's link to main memory, each direction */
        double host_gpu_latency_us;
        bool gpu_gpu_direct;       /* peer links (NVLink, ...) given; otherwise copies go through the host */
        double gpu_gpu_gbps;
        double gpu_gpu_latency_us;
    } links;
    /* Indexed by architecture and by the position of the symbol in dahl_codelet_symbols(). */
    struct dahlsim_efficiency eff[DAHLSIM_NARCHS][DAHLSIM_SPEC_MAX_SYMBOLS];
    bool eff_from_spec[DAHLSIM_NARCHS][DAHLSIM_SPEC_MAX_SYMBOLS]; /* overridden by the spec file */
};

/* Loads and checks path into *spec; unknown keys, missing required keys and out-of-range values are
 * errors. On success returns 0 and, when json is non-NULL, the parsed document in *json (the caller frees
 * it with cJSON_Delete; typed void * so this header stays cJSON-free). On failure returns -1 with one line in
 * err naming the file, the field and what was expected, e.g.
 *   platforms/specs/x.json: "cpu.core_gflops": expected a positive number, got -3 */
/* The spec at CPU frequency state k (1-based, of spec->cpu.pstates; 0: as it is), in place. The rule, a
 * roofline's: a core's compute peak and its per-task overhead scale with the clock, its memory bandwidth
 * does not (memory-bound tasks keep their time); the watts are the state's. Returns 0, or -EINVAL when k
 * names no state. */
int dahlsim_spec_at_pstate(struct dahlsim_spec *spec, int k);

int dahlsim_spec_load(const char *path, struct dahlsim_spec *spec, void **json, char *err, size_t err_size);

/* The default efficiency of symbol on arch (the table in dahlsim_spec.c says why each value); false for a
 * symbol that is not a dahl perf-model symbol. */
bool dahlsim_efficiency_default(const char *symbol, enum dahlsim_arch arch, struct dahlsim_efficiency *out);

/* Position of symbol in dahl_codelet_symbols(), or -1. */
int dahlsim_symbol_index(const char *symbol);

/* The roofline body of a task (no overhead), in microseconds, with efficiency eff on arch. */
double dahlsim_roofline_body_us(const struct dahlsim_spec *spec, enum dahlsim_arch arch,
                                struct dahlsim_efficiency eff, double flops, double bytes);

/* A task's modelled duration in microseconds on arch: the roofline body with the symbol's efficiency, plus
 * the architecture's per-task overhead. Always > 0. */
double dahlsim_roofline_us(const struct dahlsim_spec *spec, enum dahlsim_arch arch, int symbol_index, double flops,
                           double bytes);

#endif /* DAHLSIM_SPEC_H */

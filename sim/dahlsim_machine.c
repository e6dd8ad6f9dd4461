/* `dahlsim machine synth SPEC.json --machine NAME`: a simulated machine for hardware nobody measured. The
 * spec's datasheet numbers and the roofline model (dahlsim_spec.h) give every task of the covered training
 * setups (the task catalogue, dahl_catalogue.h) a duration on each worker architecture; those become StarPU
 * history perf models, next to a SimGrid platform and bus files for the spec's node, under DIR/NAME/ in the
 * layout `dahlsim calibrate` gives measured machines (see dahlsim_machine.h). Everything is written to a
 * temporary directory beside DIR/NAME and renamed into place, so a failure never leaves half a machine, and
 * a measured calibration is never overwritten. With --fit, the CPU efficiencies are first fitted to a
 * measured calibration's perf models. Native binary only. */
#include "dahlsim_machine.h"

#include "dahlsim_manifest.h"
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"

#include "dahl_codelets.h"
#include "dahl_engine.h"
#include "dahl_network.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dahlsim_commit.h" /* DAHLSIM_COMMIT, stamped by every build */
#ifndef DAHLSIM_SIMGRID_VERSION
#define DAHLSIM_SIMGRID_VERSION "unknown"
#endif

#define XPATH (PATH_MAX + 512) /* paths built from another path buffer */
#define MAX_COVERS 64
#define NCLASSES 10    /* as `dahlsim train`: every dataset has 10 classes */
#define DEEP_BLOCKS 3  /* as `dahlsim train --model deep` */
#define DEEP_WIDTH 8
#define SIM_TASK_OVERHEAD_US 1.0 /* StarPU-SimGrid 1.3.10 adds 1 us of polling to every task (test_flavours.c) */
#define REPORT_BATCH 32          /* `dahlsim train`'s default batch, for the per-step estimates printed */

/* ---- files ---------------------------------------------------------------------------------------------- */

/* An output file being written: every write is checked once, at close. */
struct out {
    FILE *f;
    char path[XPATH];
};

static int out_open(struct out *o, char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int out_open(struct out *o, char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->path, sizeof(o->path), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(o->path)) {
        snprintf(err, err_size, "%.200s...: path too long", o->path);
        return -ENAMETOOLONG;
    }
    o->f = fopen(o->path, "w");
    if (o->f == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", o->path, strerror(e));
        return -e;
    }
    return 0;
}

static int out_close(struct out *o, char *err, size_t err_size)
{
    bool bad = ferror(o->f) != 0;
    if (fclose(o->f) != 0)
        bad = true;
    o->f = NULL;
    if (bad) {
        snprintf(err, err_size, "%s: write failed: %s", o->path, strerror(errno != 0 ? errno : EIO));
        return -EIO;
    }
    return 0;
}

/* ---- perf models ---------------------------------------------------------------------------------------
 * StarPU 1.3.10's history model format, version 45, as src/core/perfmodel/perfmodel_history.c writes it
 * (dump_model_file): combinations of devices, each with its implementations, each with a regression block and
 * the history entries. CPU workers share one combination (device type 0, id 0, 1 core); each GPU is its own
 * (device type 1, id i). */

static void write_double(FILE *f, double v)
{
    if (isnan(v))
        fprintf(f, "%-15s", "nan");
    else
        fprintf(f, "%-15e", v);
}

/* One architecture's model of one symbol: the log-log regression StarPU would have fitted to the same
 * samples (valid for --perfmodel regression; a, b, c = alpha, beta, 0 for nl-regression), then the
 * entries. */
static void write_arch_model(FILE *f, const struct dahlsim_spec *spec, enum dahlsim_arch arch, int k,
                             const char *symbol, const struct dahl_catalogue *cat, const char *archname, int comb)
{
    const double n = DAHLSIM_SYNTH_NSAMPLE;
    double sumlnx = 0, sumlnx2 = 0, sumlny = 0, sumlnxlny = 0;
    unsigned nentries = 0, nsample = 0;
    unsigned long minx = 0, maxx = 0;
    for (size_t i = 0; i < cat->n; i++) {
        const struct dahl_catalogue_entry *e = &cat->entries[i];
        if (strcmp(e->symbol, symbol) != 0)
            continue;
        double lx = log((double)e->size), ly = log(dahlsim_roofline_us(spec, arch, k, e->flops, e->bytes));
        sumlnx += n * lx;
        sumlnx2 += n * lx * lx;
        sumlny += n * ly;
        sumlnxlny += n * lx * ly;
        nsample += DAHLSIM_SYNTH_NSAMPLE;
        if (nentries == 0 || e->size < minx)
            minx = e->size;
        if (nentries == 0 || e->size > maxx)
            maxx = e->size;
        nentries++;
    }
    double alpha = NAN, beta = NAN, denom = nsample * sumlnx2 - sumlnx * sumlnx;
    if (nentries > 1 && minx < maxx && denom > 0) {
        beta = (nsample * sumlnxlny - sumlnx * sumlny) / denom;
        alpha = exp((sumlny - beta * sumlnx) / nsample);
    }
    fprintf(f, "#####\n# Model for %s_impl0 (Comb%d)\n# number of entries\n%u\n", archname, comb, nentries);
    fprintf(f, "# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n");
    fprintf(f, "%-15e\t%-15e\t%-15e\t%-15e\t", sumlnx, sumlnx2, sumlny, sumlnxlny);
    write_double(f, alpha);
    fputc('\t', f);
    write_double(f, beta);
    fprintf(f, "\t%u\t%-15lu\t%-15lu\n", nsample, minx, maxx);
    fprintf(f, "# a\t\tb\t\tc\n");
    write_double(f, alpha);
    fputc('\t', f);
    write_double(f, beta);
    fputc('\t', f);
    write_double(f, isnan(alpha) ? NAN : 0.0);
    fprintf(f, "\n# not multiple-regression-base\n0\n");
    fprintf(f, "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n");
    for (size_t i = 0; i < cat->n; i++) {
        const struct dahl_catalogue_entry *e = &cat->entries[i];
        if (strcmp(e->symbol, symbol) != 0)
            continue;
        double t = dahlsim_roofline_us(spec, arch, k, e->flops, e->bytes);
        fprintf(f, "%08" PRIx32 "\t%-15lu\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%u\n", e->footprint,
                (unsigned long)e->size, e->flops, t, 0.0, t * n, t * t * n, DAHLSIM_SYNTH_NSAMPLE);
    }
    fputc('\n', f);
}

static void write_comb_header(FILE *f, int comb, int type, int devid)
{
    fprintf(f, "####################\n# COMB_%d\n# number of types devices\n1\n", comb);
    fprintf(f, "####################\n# DEV_0\n"
               "# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3, MPI_MS - 5)\n%d\n",
            type);
    fprintf(f, "####################\n# DEV_0\n# device id \n%d\n", devid);
    fprintf(f, "####################\n# DEV_0\n# number of cores \n1\n");
    fprintf(f, "##########\n# number of implementations\n1\n");
}

static int write_models(const char *sampling, const char *name, const struct dahlsim_spec *spec,
                        const struct dahl_catalogue *cat, char *err, size_t err_size)
{
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    for (size_t k = 0; k < nsymbols; k++) {
        struct out o;
        int ret = out_open(&o, err, err_size, "%s/codelets/45/%s.%s", sampling, symbols[k], name);
        if (ret != 0)
            return ret;
        fprintf(o.f, "##################\n# Performance Model Version\n45\n\n");
        fprintf(o.f, "####################\n# COMBs\n# number of combinations\n%d\n", 1 + spec->gpu.count);
        write_comb_header(o.f, 0, 0, 0);
        write_arch_model(o.f, spec, DAHLSIM_ARCH_CPU, (int)k, symbols[k], cat, "cpu0", 0);
        for (int g = 0; g < spec->gpu.count; g++) {
            char archname[32];
            snprintf(archname, sizeof(archname), "cuda%d", g);
            write_comb_header(o.f, 1 + g, 1, g);
            write_arch_model(o.f, spec, DAHLSIM_ARCH_CUDA, (int)k, symbols[k], cat, archname, 1 + g);
        }
        ret = out_close(&o, err, err_size);
        if (ret != 0)
            return ret;
    }
    return 0;
}

/* ---- bus and platform -----------------------------------------------------------------------------------
 * Memory nodes in StarPU's order: RAM (0), then CUDA0.. (1..). */

/* Bandwidth (MB/s, 1e6 bytes/s) and latency (us) from node i to node j. */
static void bus_link(const struct dahlsim_spec *s, int i, int j, double *mbps, double *latency_us)
{
    if (i == j) {
        *mbps = 0.0;
        *latency_us = 0.0;
    } else if (i == 0 || j == 0) {
        *mbps = s->links.host_gpu_gbps * 1e3;
        *latency_us = s->links.host_gpu_latency_us;
    } else {
        *mbps = s->links.gpu_gpu_gbps * 1e3;
        *latency_us = s->links.gpu_gpu_latency_us;
    }
}

/* One matrix file: a row per node, each padded with a trailing nan column (StarPU 1.3.10's reader drops
 * the last value of a row that ends without a tab). */
static int write_bus_matrix(const char *sampling, const char *name, const struct dahlsim_spec *s, bool latency,
                            char *err, size_t err_size)
{
    struct out o;
    int ret = out_open(&o, err, err_size, "%s/bus/%s.%s", sampling, name, latency ? "latency" : "bandwidth");
    if (ret != 0)
        return ret;
    int nodes = 1 + s->gpu.count;
    fprintf(o.f, "# ");
    for (int j = 0; j <= nodes; j++)
        fprintf(o.f, "to %d\t\t", j);
    fputc('\n', o.f);
    for (int i = 0; i < nodes; i++) {
        for (int j = 0; j < nodes; j++) {
            double mbps, us;
            bus_link(s, i, j, &mbps, &us);
            fprintf(o.f, "%e\t", latency ? us : mbps);
        }
        fprintf(o.f, "nan\n");
    }
    return out_close(&o, err, err_size);
}

static int write_bus_config(const char *sampling, const char *name, const struct dahlsim_spec *s, char *err,
                            size_t err_size)
{
    struct out o;
    int ret = out_open(&o, err, err_size, "%s/bus/%s.config", sampling, name);
    if (ret != 0)
        return ret;
    fprintf(o.f, "# Current configuration\n%d # Number of CPUs\n1 # Number of NUMA nodes\n%d # Number of CUDA devices\n"
                 "0 # Number of OpenCL devices\n0 # Number of MIC devices\n0 # Number of MPI devices\n",
            s->cpu.cores, s->gpu.count);
    return out_close(&o, err, err_size);
}

/* text for an XML comment: "--" is not allowed there. */
static void xml_comment_text(FILE *f, const char *text)
{
    for (const char *p = text; *p != '\0'; p++)
        fputc(*p == '-' && p[1] == '-' ? '=' : *p, f);
}

static int write_platform(const char *sampling, const char *name, const char *spec_path, const struct dahlsim_spec *s,
                          char *err, size_t err_size)
{
    struct out o;
    int ret = out_open(&o, err, err_size, "%s/bus/%s.platform.v4.xml", sampling, name);
    if (ret != 0)
        return ret;
    FILE *f = o.f;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM 'https://simgrid.org/simgrid.dtd'>\n");
    fprintf(f, "<!-- Synthesized machine \"%s\" for StarPU-SimGrid (STARPU_HOSTNAME=%s), written by `dahlsim machine "
               "synth` from\n     ", name, name);
    xml_comment_text(f, spec_path);
    fprintf(f, ": ");
    xml_comment_text(f, s->description);
    fprintf(f, "\n     %d CPU workers (", s->cpu.cores);
    xml_comment_text(f, s->cpu.model);
    fprintf(f, ")");
    if (s->gpu.count > 0) {
        fprintf(f, ", %d GPU%s (", s->gpu.count, s->gpu.count > 1 ? "s" : "");
        xml_comment_text(f, s->gpu.model);
        fprintf(f, ", %.6g GiB each)", s->gpu.mem_gib);
    }
    fprintf(f, ". Host speeds are nominal: StarPU turns each task's perf-model duration into\n"
               "     flops on its host, so task times come from codelets/45/. MAIN runs the submitting thread, RAM "
               "is main memory.\n");
    if (s->gpu.count > 0)
        fprintf(f, "     Each GPU has its own link to RAM per direction; they share \"Host\" (their sum).%s\n",
                s->gpu.count < 2              ? ""
                : s->links.gpu_gpu_direct ? " GPU-GPU copies use direct peer links."
                                          : " GPU-GPU copies go through Host.");
    fprintf(f, "     Units: speed in flop/s (f), bandwidth in 1e9 bytes/s (GBps), latency in microseconds (us). -->\n");
    fprintf(f, "<platform version=\"4.1\">\n  <config id=\"General\">\n"
               "    <prop id=\"network/TCP-gamma\" value=\"-1\"></prop>\n"
               "    <prop id=\"network/latency-factor\" value=\"1\"></prop>\n"
               "    <prop id=\"network/bandwidth-factor\" value=\"1\"></prop>\n"
               "    <prop id=\"network/crosstraffic\" value=\"0\"></prop>\n"
               "    <prop id=\"network/weight-S\" value=\"0.0\"></prop>\n  </config>\n");
    fprintf(f, "  <AS id=\"AS0\" routing=\"Full\">\n    <host id=\"MAIN\" speed=\"1f\"/>\n");
    for (int i = 0; i < s->cpu.cores; i++)
        fprintf(f, "    <host id=\"CPU%d\" speed=\"1Gf\"/>\n", i);
    unsigned long long memsize = (unsigned long long)llround(s->gpu.mem_gib * 1073741824.0);
    for (int g = 0; g < s->gpu.count; g++)
        fprintf(f, "    <host id=\"CUDA%d\" speed=\"1Gf\">\n      <prop id=\"memsize\" value=\"%llu\"/>\n"
                   "      <prop id=\"memcpy_peer\" value=\"1\"/>\n    </host>\n",
                g, memsize);
    fprintf(f, "    <host id=\"RAM\" speed=\"1f\"/>\n");
    double host_gbps = s->gpu.count > 0 ? s->links.host_gpu_gbps * s->gpu.count : 10.0;
    fprintf(f, "    <link id=\"Host\" bandwidth=\"%.6gGBps\" latency=\"0us\"/>\n", host_gbps);
    for (int g = 0; g < s->gpu.count; g++) {
        fprintf(f, "    <link id=\"RAM-CUDA%d\" bandwidth=\"%.6gGBps\" latency=\"%.6gus\"/>\n", g,
                s->links.host_gpu_gbps, s->links.host_gpu_latency_us);
        fprintf(f, "    <link id=\"CUDA%d-RAM\" bandwidth=\"%.6gGBps\" latency=\"%.6gus\"/>\n", g,
                s->links.host_gpu_gbps, s->links.host_gpu_latency_us);
    }
    for (int g = 0; g < s->gpu.count; g++)
        for (int h = 0; h < s->gpu.count; h++)
            if (g != h)
                fprintf(f, "    <link id=\"CUDA%d-CUDA%d\" bandwidth=\"%.6gGBps\" latency=\"%.6gus\"/>\n", g, h,
                        s->links.gpu_gpu_gbps, s->links.gpu_gpu_latency_us);
    for (int g = 0; g < s->gpu.count; g++) {
        fprintf(f, "    <route src=\"RAM\" dst=\"CUDA%d\" symmetrical=\"NO\"><link_ctn id=\"RAM-CUDA%d\"/>"
                   "<link_ctn id=\"Host\"/></route>\n", g, g);
        fprintf(f, "    <route src=\"CUDA%d\" dst=\"RAM\" symmetrical=\"NO\"><link_ctn id=\"CUDA%d-RAM\"/>"
                   "<link_ctn id=\"Host\"/></route>\n", g, g);
    }
    for (int g = 0; g < s->gpu.count; g++)
        for (int h = 0; h < s->gpu.count; h++)
            if (g != h)
                fprintf(f, "    <route src=\"CUDA%d\" dst=\"CUDA%d\" symmetrical=\"NO\">"
                           "<link_ctn id=\"CUDA%d-CUDA%d\"/>%s</route>\n",
                        g, h, g, h, s->links.gpu_gpu_direct ? "" : "<link_ctn id=\"Host\"/>");
    fprintf(f, "  </AS>\n</platform>\n");
    return out_close(&o, err, err_size);
}

int dahlsim_machine_write_sampling(const char *sampling, const char *name, const struct dahlsim_spec *spec,
                                   const char *spec_path, const struct dahl_catalogue *cat, char *err,
                                   size_t err_size)
{
    char dir[XPATH];
    const char *const subdirs[] = {"codelets/45", "bus"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(dir, sizeof(dir), "%s/%s", sampling, subdirs[i]);
        int ret = dahlsim_make_dirs(dir);
        if (ret != 0) {
            snprintf(err, err_size, "%s: cannot create: %s", dir, strerror(-ret));
            return ret;
        }
    }
    int ret = write_models(sampling, name, spec, cat, err, err_size);
    if (ret == 0)
        ret = write_bus_matrix(sampling, name, spec, false, err, err_size);
    if (ret == 0)
        ret = write_bus_matrix(sampling, name, spec, true, err, err_size);
    if (ret == 0)
        ret = write_bus_config(sampling, name, spec, err, err_size);
    if (ret == 0)
        ret = write_platform(sampling, name, spec_path, spec, err, err_size);
    return ret;
}

/* ---- covered training setups ------------------------------------------------------------------------------ */

/* A training setup whose tasks the machine must model: its tasks' shapes follow from the image shape and
 * the model (not the batch size, nor the reduction: every task is one sample or one parameter tensor). */
struct cover {
    char dataset[64];
    char model[32];
    struct dahl_network_desc desc;
};

static const char *const default_covers[] = {
    "fashion-mnist", "synthetic:28x28x3", "synthetic:128x128x3", "synthetic:512x512x3",
};

/* Parses "DATASET[,model=M]" (M: lenet, deep or deep:BLOCKS, as `dahlsim train --model`) into c. */
static bool parse_cover(const char *text, struct cover *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->model, sizeof(c->model), "lenet");
    char buf[256];
    if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf)) {
        dahlsim_error("--cover: too long: \"%.40s...\"", text);
        return false;
    }
    char *rest = buf, *item = strsep(&rest, ",");
    int ch = 1, h = 28, w = 28;
    long v[3];
    char tail;
    if (strcmp(item, "fashion-mnist") != 0 &&
        (strncmp(item, "synthetic:", 10) != 0 || strspn(item + 10, "0123456789x") != strlen(item + 10) ||
         sscanf(item, "synthetic:%ldx%ldx%ld%c", &v[0], &v[1], &v[2], &tail) != 3 || v[0] < 1 || v[0] > 4096 ||
         v[1] < 1 || v[1] > 4096 || v[2] < 1 || v[2] > 64)) {
        dahlsim_error("--cover: expected DATASET[,model=M] with DATASET fashion-mnist or synthetic:HxWxC (sizes in "
                      "[1, 4096], C <= 64), got \"%s\"",
                      text);
        return false;
    }
    if (strcmp(item, "fashion-mnist") != 0) {
        h = (int)v[0];
        w = (int)v[1];
        ch = (int)v[2];
    }
    snprintf(c->dataset, sizeof(c->dataset), "%s", item);
    while ((item = strsep(&rest, ",")) != NULL) {
        if (strncmp(item, "model=", 6) != 0 || strlen(item + 6) >= sizeof(c->model)) {
            dahlsim_error("--cover %s: \"%s\": expected model=lenet|deep|deep:BLOCKS", text, item);
            return false;
        }
        snprintf(c->model, sizeof(c->model), "%s", item + 6);
    }
    int ret;
    if (strcmp(c->model, "lenet") == 0) {
        ret = dahl_network_desc_lenet(ch, h, w, NCLASSES, &c->desc);
    } else if (strcmp(c->model, "deep") == 0 || strncmp(c->model, "deep:", 5) == 0) {
        long blocks = DEEP_BLOCKS;
        if (c->model[4] == ':' && !dahlsim_parse_int("--cover model=deep:BLOCKS", c->model + 5, 1, 9, &blocks))
            return false;
        ret = dahl_network_desc_deep(ch, h, w, NCLASSES, (int)blocks, DEEP_WIDTH, &c->desc);
    } else {
        dahlsim_error("--cover %s: model \"%s\": expected lenet, deep or deep:BLOCKS", text, c->model);
        fprintf(stderr, "hint: --cover takes the built-in models; JSON model files are not supported yet\n");
        return false;
    }
    char err[512];
    if (ret != 0 || dahl_network_desc_check(&c->desc, err, sizeof(err)) != 0) {
        dahlsim_error("--cover %s: cannot build %s for a %dx%dx%d image", text, c->model, h, w, ch);
        return false;
    }
    return true;
}

/* The tasks of one step of c in both reductions and with and without momentum: every footprint the setup
 * can run (SGD's footprint depends on momentum). */
static int cover_catalogue(const struct cover *c, struct dahl_catalogue *cat, char *err, size_t err_size)
{
    struct dahl_catalogue_conf confs[] = {
        {.batch = 2, .reduction = DAHL_REDUCTION_REDUX, .momentum = true, .redux_copies = 1},
        {.batch = 2, .reduction = DAHL_REDUCTION_MANUAL, .momentum = false},
    };
    for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]); i++) {
        int ret = dahl_catalogue_add_step(cat, &c->desc, &confs[i], err, err_size);
        if (ret != 0)
            return ret;
    }
    return 0;
}

/* Task time of one default training step (batch 32, REDUX, momentum) of c on one worker of arch, StarPU-SimGrid's
 * per-task microsecond included: what one core or one GPU would take alone, transfers excluded. */
static double step_us(const struct cover *c, const struct dahlsim_spec *spec, enum dahlsim_arch arch)
{
    struct dahl_catalogue cat;
    dahl_catalogue_init(&cat);
    struct dahl_catalogue_conf conf = {.batch = REPORT_BATCH, .reduction = DAHL_REDUCTION_REDUX, .momentum = true,
                                       .redux_copies = 1};
    char err[256];
    double us = 0;
    if (dahl_catalogue_add_step(&cat, &c->desc, &conf, err, sizeof(err)) == 0)
        for (size_t i = 0; i < cat.n; i++)
            us += (double)cat.entries[i].count *
                  (dahlsim_roofline_us(spec, arch, dahlsim_symbol_index(cat.entries[i].symbol), cat.entries[i].flops,
                                       cat.entries[i].bytes) +
                   SIM_TASK_OVERHEAD_US);
    dahl_catalogue_fini(&cat);
    return us;
}

/* ---- --fit: CPU efficiencies from a measured calibration ---------------------------------------------------- */

struct measured {
    uint32_t footprint;
    double mean_us;
};

/* The CPU (device type 0) history entries of a StarPU model file; returns the count, or -errno. */
static int read_cpu_history(const char *path, struct measured *out, int max)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -errno;
    char line[1024];
    int type = -1, n = 0;
    bool type_next = false;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (line[0] == '#') {
            type_next = strncmp(line, "# device type", 13) == 0;
            continue;
        }
        if (type_next) {
            type = atoi(line);
            type_next = false;
            continue;
        }
        size_t hex = strspn(line, "0123456789abcdef");
        unsigned long size;
        double flops, mean;
        uint32_t fp;
        if (type == 0 && hex == 8 && (line[8] == '\t' || line[8] == ' ') && n < max &&
            sscanf(line, "%" SCNx32 " %lu %le %le", &fp, &size, &flops, &mean) == 4 && mean > 0)
            out[n++] = (struct measured){.footprint = fp, .mean_us = mean};
    }
    fclose(f);
    return n;
}

struct fit_result {
    bool fitted;
    int entries;
    double error_before, error_after; /* median relative error of the modelled times */
};

/* What --fit found, for the manifest and the summary. */
struct fit {
    struct fit_result symbols[DAHLSIM_SPEC_MAX_SYMBOLS];
    bool overhead_fitted;
    int overhead_entries;
    double overhead_us;
};

/* One measured entry matched to the catalogue. */
struct fit_point {
    int symbol;
    double mean_us, body_us; /* measured mean; roofline body at efficiency 1 */
    const struct dahl_catalogue_entry *e;
};

/* Median relative error of the modelled times of symbol k's points. */
static double fit_error(const struct dahlsim_spec *spec, int k, const struct fit_point *p, int n)
{
    static double errors[4096];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (p[i].symbol == k)
            errors[m++] = fabs(dahlsim_roofline_us(spec, DAHLSIM_ARCH_CPU, k, p[i].e->flops, p[i].e->bytes) /
                                   p[i].mean_us - 1);
    return dahlsim_median(errors, (size_t)m);
}

/* Sum of squared log errors of symbol k's points at efficiency eff (both roofs). */
static double fit_cost(const struct dahlsim_spec *spec, int k, const struct fit_point *p, int n, double eff)
{
    double cost = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].symbol != k)
            continue;
        double d = log((p[i].body_us / eff + spec->cpu.task_overhead_us) / p[i].mean_us);
        cost += d * d;
    }
    return cost;
}

/* Fits spec's CPU side to the measured calibration dir (calibration/OTHER: sampling/codelets/45/SYMBOL.OTHER),
 * at the footprints the catalogue has: first the per-task overhead, the median measured time of the tasks
 * that do next to no work (roofline body under 0.05 us); then, per symbol, the efficiency e (applied to both
 * roofs) that minimises the squared log error of max(flops/peak, bytes/bandwidth)/e + overhead against the
 * measured means. Returns 0, or -1 after printing an error. */
static int fit_cpu(const char *dir, struct dahlsim_spec *spec, const struct dahl_catalogue *cat, struct fit *fit)
{
    char name[256];
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    const char *base = dir + len;
    while (base > dir && base[-1] != '/')
        base--;
    snprintf(name, sizeof(name), "%.*s", (int)(dir + len - base), base);
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    static struct fit_point points[4096];
    static struct measured m[1024];
    int npoints = 0, files = 0;
    memset(fit, 0, sizeof(*fit));
    for (size_t k = 0; k < nsymbols; k++) {
        char path[XPATH];
        snprintf(path, sizeof(path), "%.*s/sampling/codelets/45/%s.%s", (int)len, dir, symbols[k], name);
        int n = read_cpu_history(path, m, 1024);
        if (n == -ENOENT)
            continue;
        if (n < 0) {
            dahlsim_error("--fit: %s: %s", path, strerror(-n));
            return -1;
        }
        files++;
        for (int i = 0; i < n && npoints < 4096; i++) {
            const struct dahl_catalogue_entry *e = dahl_catalogue_find(cat, symbols[k], m[i].footprint);
            if (e == NULL)
                continue;
            points[npoints++] = (struct fit_point){
                .symbol = (int)k, .mean_us = m[i].mean_us, .e = e,
                .body_us = dahlsim_roofline_body_us(spec, DAHLSIM_ARCH_CPU, (struct dahlsim_efficiency){1, 1},
                                                    e->flops, e->bytes)};
            fit->symbols[k].entries++;
        }
    }
    if (files == 0) {
        dahlsim_error("--fit: %s: no perf model found (expected %.*s/sampling/codelets/45/SYMBOL.%s)", dir, (int)len,
                      dir, name);
        return -1;
    }
    for (size_t k = 0; k < nsymbols; k++)
        fit->symbols[k].error_before = fit_error(spec, (int)k, points, npoints);

    static double idle[4096];
    int nidle = 0;
    for (int i = 0; i < npoints; i++)
        if (points[i].body_us < 0.05)
            idle[nidle++] = points[i].mean_us;
    if (nidle > 0) {
        fit->overhead_fitted = true;
        fit->overhead_entries = nidle;
        fit->overhead_us = dahlsim_median(idle, (size_t)nidle);
        spec->cpu.task_overhead_us = fit->overhead_us;
    }
    for (size_t k = 0; k < nsymbols; k++) {
        bool useful = false; /* a point whose time is more than the overhead says something about e */
        for (int i = 0; i < npoints; i++)
            useful = useful || (points[i].symbol == (int)k && points[i].mean_us > 1.2 * spec->cpu.task_overhead_us);
        if (useful) {
            /* The cost is smooth in log(e): a grid over [1e-4, 10], then golden-section refinement. */
            double best = -4, best_cost = INFINITY;
            for (double x = -4; x <= 1.0001; x += 0.025) {
                double c = fit_cost(spec, (int)k, points, npoints, pow(10, x));
                if (c < best_cost) {
                    best_cost = c;
                    best = x;
                }
            }
            double lo = best - 0.025, hi = best + 0.025, g = (sqrt(5) - 1) / 2;
            for (int it = 0; it < 40; it++) {
                double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
                if (fit_cost(spec, (int)k, points, npoints, pow(10, a)) <
                    fit_cost(spec, (int)k, points, npoints, pow(10, b)))
                    hi = b;
                else
                    lo = a;
            }
            double eff = pow(10, 0.5 * (lo + hi));
            spec->eff[DAHLSIM_ARCH_CPU][k] = (struct dahlsim_efficiency){eff, eff};
            fit->symbols[k].fitted = true;
        }
        fit->symbols[k].error_after = fit_error(spec, (int)k, points, npoints);
    }
    return 0;
}

/* ---- the manifest --------------------------------------------------------------------------------------------- */

#define CHK(call)                                                                                            \
    do {                                                                                                     \
        if (!(call))                                                                                         \
            goto nomem;                                                                                      \
    } while (0)

struct synth_opts {
    char command[4096]; /* the command line as typed (getopt_long reorders argv) */
    const char *spec_path;
    const char *machine;
    const char *out;
    const char *fit;
    struct cover covers[MAX_COVERS];
    int ncovers;
    bool quiet;
};

/* Efficiencies per symbol, each with where it came from: "default", "spec" or "fit". */
static cJSON *efficiency_json(const struct dahlsim_spec *spec, enum dahlsim_arch arch, const struct fit *fit)
{
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    cJSON *obj = cJSON_CreateObject();
    for (size_t k = 0; obj != NULL && k < nsymbols; k++) {
        cJSON *e = cJSON_AddObjectToObject(obj, symbols[k]);
        if (e == NULL || !cJSON_AddNumberToObject(e, "compute", spec->eff[arch][k].compute) ||
            !cJSON_AddNumberToObject(e, "memory", spec->eff[arch][k].memory) ||
            !cJSON_AddStringToObject(e, "from", arch == DAHLSIM_ARCH_CPU && fit->symbols[k].fitted ? "fit"
                                                : spec->eff_from_spec[arch][k]                    ? "spec"
                                                                                                  : "default")) {
            cJSON_Delete(obj);
            return NULL;
        }
    }
    return obj;
}

/* Builds manifest.json's document (NULL when memory runs out); takes over spec_json. */
static cJSON *manifest_json(const struct synth_opts *o, const struct dahlsim_spec *spec, cJSON *spec_json,
                            const struct dahl_catalogue *cat, const struct fit *fit)
{
    cJSON *root = cJSON_CreateObject();
    if (root == NULL) {
        cJSON_Delete(spec_json);
        return NULL;
    }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    CHK(cJSON_AddStringToObject(root, "machine", o->machine));
    CHK(cJSON_AddStringToObject(root, "source", "roofline"));
    CHK(cJSON_AddStringToObject(root, "spec_file", o->spec_path));
    CHK(cJSON_AddItemToObject(root, "spec", spec_json));
    spec_json = NULL;
    cJSON *roof;
    CHK(roof = cJSON_AddObjectToObject(root, "roofline"));
    CHK(cJSON_AddStringToObject(roof, "time_us", "max(flops / (peak * compute), bytes / (bandwidth * memory)) * 1e6 "
                                                 "+ task_overhead_us; cpu: one core (core_gflops, core_mem_gbps), "
                                                 "cuda: one GPU (fp32_tflops, mem_gbps)"));
    CHK(cJSON_AddNumberToObject(roof, "samples_per_entry", DAHLSIM_SYNTH_NSAMPLE));
    CHK(cJSON_AddStringToObject(roof, "simulation_adds",
                                "StarPU-SimGrid 1.3.10 adds 1 us per task (datawizard polling) on top of these times"));
    cJSON *eff;
    CHK(eff = cJSON_AddObjectToObject(root, "efficiency"));
    CHK(cJSON_AddItemToObject(eff, "cpu", efficiency_json(spec, DAHLSIM_ARCH_CPU, fit)));
    if (spec->gpu.count > 0)
        CHK(cJSON_AddItemToObject(eff, "cuda", efficiency_json(spec, DAHLSIM_ARCH_CUDA, fit)));
    if (o->fit != NULL) {
        cJSON *fj;
        CHK(fj = cJSON_AddObjectToObject(root, "fit"));
        CHK(cJSON_AddStringToObject(fj, "from", o->fit));
        CHK(cJSON_AddStringToObject(fj, "method", "cpu task_overhead_us: the median mean of the measured tasks whose "
                                                  "roofline body is under 0.05 us; then per symbol the CPU efficiency "
                                                  "(both roofs) minimising the squared log error against the "
                                                  "measured means"));
        if (fit->overhead_fitted) {
            CHK(cJSON_AddNumberToObject(fj, "cpu_task_overhead_us", fit->overhead_us));
            CHK(cJSON_AddNumberToObject(fj, "overhead_entries", fit->overhead_entries));
        }
        cJSON *per;
        CHK(per = cJSON_AddObjectToObject(fj, "symbols"));
        size_t nsymbols;
        const char *const *symbols = dahl_codelet_symbols(&nsymbols);
        for (size_t k = 0; k < nsymbols; k++) {
            const struct fit_result *f = &fit->symbols[k];
            if (f->entries == 0)
                continue;
            cJSON *r;
            CHK(r = cJSON_AddObjectToObject(per, symbols[k]));
            CHK(cJSON_AddNumberToObject(r, "entries", f->entries));
            CHK(cJSON_AddBoolToObject(r, "fitted", f->fitted));
            CHK(cJSON_AddNumberToObject(r, "median_rel_error_before", f->error_before));
            CHK(cJSON_AddNumberToObject(r, "median_rel_error_after", f->error_after));
        }
    } else {
        CHK(cJSON_AddNullToObject(root, "fit"));
    }
    cJSON *covered;
    CHK(covered = cJSON_AddArrayToObject(root, "covered"));
    for (int i = 0; i < o->ncovers; i++) {
        cJSON *c;
        CHK(c = cJSON_CreateObject());
        CHK(cJSON_AddItemToArray(covered, c));
        CHK(cJSON_AddStringToObject(c, "dataset", o->covers[i].dataset));
        CHK(cJSON_AddStringToObject(c, "model", o->covers[i].model));
        /* One training step of batch 32, its tasks alone one after the other on one worker. */
        CHK(cJSON_AddNumberToObject(c, "batch32_step_ms_one_core",
                                    step_us(&o->covers[i], spec, DAHLSIM_ARCH_CPU) / 1e3));
        if (spec->gpu.count > 0)
            CHK(cJSON_AddNumberToObject(c, "batch32_step_ms_one_gpu",
                                        step_us(&o->covers[i], spec, DAHLSIM_ARCH_CUDA) / 1e3));
    }
    cJSON *models;
    CHK(models = cJSON_AddArrayToObject(root, "models"));
    for (size_t i = 0; i < cat->n; i++) {
        const struct dahl_catalogue_entry *e = &cat->entries[i];
        int k = dahlsim_symbol_index(e->symbol);
        char fp[16];
        snprintf(fp, sizeof(fp), "%08" PRIx32, e->footprint);
        cJSON *m, *us;
        CHK(m = cJSON_CreateObject());
        CHK(cJSON_AddItemToArray(models, m));
        CHK(cJSON_AddStringToObject(m, "symbol", e->symbol));
        CHK(cJSON_AddStringToObject(m, "footprint", fp));
        CHK(cJSON_AddNumberToObject(m, "size", (double)e->size));
        CHK(cJSON_AddNumberToObject(m, "flops", e->flops));
        CHK(cJSON_AddNumberToObject(m, "bytes", e->bytes));
        CHK(us = cJSON_AddObjectToObject(m, "mean_us"));
        CHK(cJSON_AddNumberToObject(us, "cpu", dahlsim_roofline_us(spec, DAHLSIM_ARCH_CPU, k, e->flops, e->bytes)));
        if (spec->gpu.count > 0)
            CHK(cJSON_AddNumberToObject(us, "cuda",
                                        dahlsim_roofline_us(spec, DAHLSIM_ARCH_CUDA, k, e->flops, e->bytes)));
    }
    cJSON *v;
    CHK(v = cJSON_AddObjectToObject(root, "versions"));
    CHK(cJSON_AddStringToObject(v, "dahlsim", DAHLSIM_VERSION));
    CHK(cJSON_AddStringToObject(v, "starpu", dahl_engine_starpu_version()));
    CHK(cJSON_AddStringToObject(v, "simgrid", DAHLSIM_SIMGRID_VERSION));
    CHK(cJSON_AddStringToObject(v, "perfmodel_format", "45"));
    CHK(cJSON_AddStringToObject(v, "commit", DAHLSIM_COMMIT));
    CHK(cJSON_AddStringToObject(root, "date", date));
    CHK(cJSON_AddStringToObject(root, "command", o->command));
    return root;
nomem:
    cJSON_Delete(spec_json);
    cJSON_Delete(root);
    return NULL;
}

static int write_manifest(const char *dir, cJSON *doc, char *err, size_t err_size)
{
    char *text = cJSON_Print(doc);
    if (text == NULL) {
        snprintf(err, err_size, "%s/manifest.json: out of memory", dir);
        return -ENOMEM;
    }
    struct out o;
    int ret = out_open(&o, err, err_size, "%s/manifest.json", dir);
    if (ret == 0) {
        fputs(text, o.f);
        fputc('\n', o.f);
        ret = out_close(&o, err, err_size);
    }
    free(text);
    return ret;
}

/* DIR/NAME's manifest "source" ("measured", "roofline", ...) into buf; "" when there is no readable one. */
static void existing_source(const char *final, char *buf, size_t size)
{
    buf[0] = '\0';
    char path[XPATH + 32];
    snprintf(path, sizeof(path), "%s/manifest.json", final);
    cJSON *doc = dahlsim_read_json(path);
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(doc, "source");
    if (cJSON_IsString(source))
        snprintf(buf, size, "%s", source->valuestring);
    cJSON_Delete(doc);
}

/* ---- the command ------------------------------------------------------------------------------------------- */

static const char usage_line[] =
    "usage: dahlsim machine synth SPEC.json --machine NAME [--out DIR] [--cover DATASET[,model=M]]...\n"
    "                             [--fit DIR] [--quiet]\n";

static void synth_help(void)
{
    fputs(usage_line, stdout);
    printf("\nDescribes a machine nobody measured from its spec (platforms/specs/*.json, format in\n"
           "platforms/specs/README.md): StarPU perf models from a roofline model of every task the covered\n"
           "training setups run, and the SimGrid platform and bus files of its node, under DIR/NAME/ as a\n"
           "calibration (manifest.json says \"source\": \"roofline\"). Simulate on it with\n"
           "STARPU_PERF_MODEL_DIR=DIR/NAME/sampling STARPU_HOSTNAME=NAME.\n\n"
           "options:\n"
           "  --machine NAME   the machine's name (letters, digits, '.', '_', '-'): DIR/NAME/ and STARPU_HOSTNAME\n"
           "  --out DIR        where NAME/ goes (default: the calibration root scenarios read, %s)\n"
           "  --cover SETUP    a training setup to model, repeatable: DATASET (fashion-mnist or synthetic:HxWxC)\n"
           "                   with optional ,model=lenet|deep|deep:N. Default: fashion-mnist, synthetic:28x28x3,\n"
           "                   synthetic:128x128x3 and synthetic:512x512x3, LeNet\n"
           "  --fit DIR        fit the CPU task overhead and efficiencies to the measured calibration DIR\n"
           "                   (calibration/OTHER) at the footprints both have, then write with them\n"
           "  --quiet          no summary on stderr\n"
           "\nAn existing DIR/NAME/ is replaced only when it is itself a roofline machine; a measured calibration\n"
           "is never overwritten.\n",
           dahlsim_calibration_root());
}

static void machine_help(FILE *to)
{
    fprintf(to, "usage: dahlsim machine synth SPEC.json --machine NAME [options]\n"
                "       dahlsim machine synth --help\n\n"
                "Simulated machines.\n\nverbs:\n"
                "  synth   describe a machine from its spec (roofline perf models, platform, bus)\n");
}

/* Parses argv (argv[0] = "synth") into o; returns -1 to go on, or an exit code. */
static int synth_options(int argc, char **argv, struct synth_opts *o)
{
    enum { O_MACHINE = 256, O_OUT, O_COVER, O_FIT, O_QUIET, O_HELP };
    static const struct option options[] = {
        {"machine", required_argument, NULL, O_MACHINE}, {"out", required_argument, NULL, O_OUT},
        {"cover", required_argument, NULL, O_COVER},     {"fit", required_argument, NULL, O_FIT},
        {"quiet", no_argument, NULL, O_QUIET},           {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    snprintf(o->command, sizeof(o->command), "dahlsim machine");
    for (int i = 0; i < argc; i++) {
        size_t used = strlen(o->command);
        snprintf(o->command + used, sizeof(o->command) - used, " %s", argv[i]);
    }
    o->out = dahlsim_calibration_root();
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case O_MACHINE:
            o->machine = optarg;
            if (!dahlsim_machine_name_valid(optarg)) {
                dahlsim_error("--machine: expected a name of 1 to 64 letters, digits, '.', '_' or '-' (not starting "
                              "with '.' or '-'), got \"%s\"",
                              optarg);
                return DAHLSIM_EXIT_USAGE;
            }
            break;
        case O_OUT:
            o->out = optarg;
            if (!dahlsim_parse_dir("--out", optarg))
                return DAHLSIM_EXIT_USAGE;
            break;
        case O_COVER:
            if (o->ncovers == MAX_COVERS) {
                dahlsim_error("--cover: at most %d setups", MAX_COVERS);
                return DAHLSIM_EXIT_USAGE;
            }
            if (!parse_cover(optarg, &o->covers[o->ncovers++]))
                return DAHLSIM_EXIT_USAGE;
            break;
        case O_FIT:
            o->fit = optarg;
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_HELP:
            synth_help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("machine synth", opt, argv, usage_line);
        }
    }
    if (optind != argc - 1) {
        dahlsim_error(optind == argc ? "machine synth: expected a spec file (SPEC.json)"
                                     : "machine synth: expected one spec file, got \"%s\" too",
                      optind < argc - 1 ? argv[optind + 1] : "");
        fputs(usage_line, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    o->spec_path = argv[optind];
    if (o->machine == NULL) {
        dahlsim_error("machine synth: --machine NAME is required");
        fputs(usage_line, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    for (size_t i = 0; o->ncovers == 0 && i < sizeof(default_covers) / sizeof(default_covers[0]); i++)
        if (!parse_cover(default_covers[i], &o->covers[i]))
            return DAHLSIM_EXIT_FAILURE;
    if (o->ncovers == 0)
        o->ncovers = (int)(sizeof(default_covers) / sizeof(default_covers[0]));
    return -1;
}

static void print_summary(const struct synth_opts *o, const struct dahlsim_spec *spec, const struct dahl_catalogue *cat,
                          const struct fit *fit, const char *final)
{
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    if (o->fit != NULL) {
        fprintf(stderr, "dahlsim machine synth: CPU fitted to %s: task overhead %.3g us", o->fit,
                spec->cpu.task_overhead_us);
        if (fit->overhead_fitted)
            fprintf(stderr, " (median of %d near-empty tasks)", fit->overhead_entries);
        fputc('\n', stderr);
        for (size_t k = 0; k < nsymbols; k++) {
            const struct fit_result *f = &fit->symbols[k];
            if (f->entries > 0)
                fprintf(stderr, "  %-30s %3d entries  efficiency %-8.3g median error %3.0f %% -> %3.0f %%\n",
                        symbols[k], f->entries, spec->eff[DAHLSIM_ARCH_CPU][k].compute, 100 * f->error_before,
                        100 * f->error_after);
        }
    }
    fprintf(stderr, "dahlsim machine synth: wrote %s: %zu task shapes x %d architecture%s, %d CPU core%s%s\n", final,
            cat->n, 1 + (spec->gpu.count > 0), spec->gpu.count > 0 ? "s" : "", spec->cpu.cores,
            spec->cpu.cores > 1 ? "s" : "", spec->gpu.count > 0 ? " + GPUs" : "");
    for (int i = 0; i < o->ncovers; i++) {
        fprintf(stderr, "  %s %s: one batch-%d step, tasks alone: %.3f ms on one core", o->covers[i].dataset,
                o->covers[i].model, REPORT_BATCH, step_us(&o->covers[i], spec, DAHLSIM_ARCH_CPU) / 1e3);
        if (spec->gpu.count > 0)
            fprintf(stderr, ", %.3f ms on one GPU", step_us(&o->covers[i], spec, DAHLSIM_ARCH_CUDA) / 1e3);
        fputc('\n', stderr);
    }
}

/* Everything after the options: returns an exit code. */
static int synth(const struct synth_opts *o)
{
    char err[2 * XPATH];
    struct dahlsim_spec spec;
    void *spec_json = NULL;
    if (dahlsim_spec_load(o->spec_path, &spec, &spec_json, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        fprintf(stderr, "hint: the spec format is documented in platforms/specs/README.md\n");
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahl_catalogue cat;
    dahl_catalogue_init(&cat);
    int code = DAHLSIM_EXIT_FAILURE;
    char final[XPATH], tmp[XPATH], old[XPATH], sampling[XPATH + 16];
    tmp[0] = '\0';
    static struct fit fit;
    for (int i = 0; i < o->ncovers; i++) {
        if (cover_catalogue(&o->covers[i], &cat, err, sizeof(err)) != 0) {
            dahlsim_error("--cover %s: %s", o->covers[i].dataset, err);
            goto out;
        }
    }
    if (o->fit != NULL && fit_cpu(o->fit, &spec, &cat, &fit) != 0) {
        code = DAHLSIM_EXIT_USAGE;
        goto out;
    }

    int ret = dahlsim_make_dirs(o->out);
    if (ret != 0) {
        dahlsim_error("--out: cannot create %s: %s", o->out, strerror(-ret));
        code = DAHLSIM_EXIT_USAGE;
        goto out;
    }
    snprintf(final, sizeof(final), "%s/%s", o->out, o->machine);
    char source[64];
    existing_source(final, source, sizeof(source));
    struct stat st;
    if (lstat(final, &st) == 0 && strcmp(source, "roofline") != 0) {
        dahlsim_error("%s exists and is not a roofline machine (its manifest.json says \"source\": \"%s\"): "
                      "refusing to overwrite it",
                      final, source[0] != '\0' ? source : "<none>");
        fprintf(stderr, "hint: pick another --machine NAME, or remove %s yourself\n", final);
        code = DAHLSIM_EXIT_USAGE;
        goto out;
    }
    snprintf(tmp, sizeof(tmp), "%s/.%s.synth-XXXXXX", o->out, o->machine);
    if (mkdtemp(tmp) == NULL) {
        dahlsim_error("%s: cannot create a temporary directory: %s", o->out, strerror(errno));
        tmp[0] = '\0';
        goto out;
    }
    snprintf(sampling, sizeof(sampling), "%s/sampling", tmp);
    if (dahlsim_machine_write_sampling(sampling, o->machine, &spec, o->spec_path, &cat, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        goto out;
    }
    cJSON *manifest = manifest_json(o, &spec, spec_json, &cat, &fit);
    spec_json = NULL; /* taken over */
    if (manifest == NULL) {
        dahlsim_error("machine synth: out of memory");
        goto out;
    }
    ret = write_manifest(tmp, manifest, err, sizeof(err));
    cJSON_Delete(manifest);
    if (ret != 0) {
        dahlsim_error("%s", err);
        goto out;
    }
    /* Into place: the previous roofline machine aside, the new one in, the old one removed. */
    old[0] = '\0';
    if (lstat(final, &st) == 0) {
        snprintf(old, sizeof(old), "%s/.%s.old-%ld", o->out, o->machine, (long)getpid());
        if (rename(final, old) != 0) {
            dahlsim_error("cannot move %s aside: %s", final, strerror(errno));
            goto out;
        }
    }
    if (rename(tmp, final) != 0) {
        dahlsim_error("cannot rename %s to %s: %s", tmp, final, strerror(errno));
        if (old[0] != '\0' && rename(old, final) != 0)
            fprintf(stderr, "dahlsim: the previous machine is in %s\n", old);
        goto out;
    }
    tmp[0] = '\0';
    if (old[0] != '\0')
        dahlsim_remove_tree(old);
    if (!o->quiet)
        print_summary(o, &spec, &cat, &fit, final);
    code = DAHLSIM_EXIT_OK;
out:
    if (tmp[0] != '\0')
        dahlsim_remove_tree(tmp);
    cJSON_Delete(spec_json);
    dahl_catalogue_fini(&cat);
    return code;
}

int dahlsim_cmd_machine(int argc, char **argv)
{
    if (argc < 2) {
        dahlsim_error("machine: expected a verb (synth)");
        machine_help(stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        machine_help(stdout);
        return DAHLSIM_EXIT_OK;
    }
    if (strcmp(argv[1], "synth") != 0) {
        dahlsim_error("machine: unknown verb \"%s\" (expected synth)", argv[1]);
        machine_help(stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    if (dahl_engine_is_simulated()) {
        dahlsim_error("machine synth: the SimGrid binary cannot write machines; run build/dahlsim machine synth");
        return DAHLSIM_EXIT_USAGE;
    }
    struct synth_opts *o = malloc(sizeof(*o));
    if (o == NULL) {
        dahlsim_error("out of memory");
        return DAHLSIM_EXIT_FAILURE;
    }
    int code = synth_options(argc - 1, argv + 1, o);
    if (code < 0)
        code = synth(o);
    free(o);
    return code;
}

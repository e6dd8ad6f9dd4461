/* A synthesized machine's perf models (dahlsim_machine.h): StarPU 1.3.10's history model format, version
 * 45, as src/core/perfmodel/perfmodel_history.c writes it (dump_model_file): combinations of devices, each
 * with its implementations, each with a regression block and the history entries. CPU workers share one
 * combination (device type 0, id 0, 1 core); each GPU is its own (device type 1, id i). */
#include "dahlsim_machine.h"

#include "dahlsim_outfile.h"

#include "dahl_codelets.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

int dahlsim_machine_write_models(const char *sampling, const char *name, const struct dahlsim_spec *spec,
                                 const struct dahl_catalogue *cat, char *err, size_t err_size)
{
    size_t nsymbols;
    const char *const *symbols = dahl_codelet_symbols(&nsymbols);
    for (size_t k = 0; k < nsymbols; k++) {
        struct dahlsim_outfile o;
        int ret = dahlsim_outfile_open(&o, err, err_size, "%s/codelets/45/%s.%s", sampling, symbols[k], name);
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
        ret = dahlsim_outfile_close(&o, err, err_size);
        if (ret != 0)
            return ret;
    }
    return 0;
}

/* `machine synth --fit DIR` (dahlsim_machine.h): the CPU side of a spec fitted to a measured calibration's
 * perf models, read at the footprints the synthesized machine's catalogue has. */
#include "dahlsim_machine.h"

#include "dahlsim_util.h"

#include "dahl_codelets.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XPATH (PATH_MAX + 512) /* paths built from another path buffer */

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

/* The efficiency of symbol k minimising fit_cost. The cost is smooth in log(e): a grid over [1e-4, 10], then
 * golden-section refinement. */
static double fit_efficiency(const struct dahlsim_spec *spec, int k, const struct fit_point *points, int npoints)
{
    double best = -4, best_cost = INFINITY;
    for (double x = -4; x <= 1.0001; x += 0.025) {
        double c = fit_cost(spec, k, points, npoints, pow(10, x));
        if (c < best_cost) {
            best_cost = c;
            best = x;
        }
    }
    double lo = best - 0.025, hi = best + 0.025, g = (sqrt(5) - 1) / 2;
    for (int it = 0; it < 40; it++) {
        double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
        if (fit_cost(spec, k, points, npoints, pow(10, a)) < fit_cost(spec, k, points, npoints, pow(10, b)))
            hi = b;
        else
            lo = a;
    }
    return pow(10, 0.5 * (lo + hi));
}

int dahlsim_machine_fit_cpu(const char *dir, struct dahlsim_spec *spec, const struct dahl_catalogue *cat,
                            struct dahlsim_machine_fit *fit)
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
            double eff = fit_efficiency(spec, (int)k, points, npoints);
            spec->eff[DAHLSIM_ARCH_CPU][k] = (struct dahlsim_efficiency){eff, eff};
            fit->symbols[k].fitted = true;
        }
        fit->symbols[k].error_after = fit_error(spec, (int)k, points, npoints);
    }
    return 0;
}

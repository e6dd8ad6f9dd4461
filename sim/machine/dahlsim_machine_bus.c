/* A synthesized machine's bus and platform files (dahlsim_machine.h): StarPU's bandwidth and latency
 * matrices and its configuration file, and the SimGrid platform of the spec's node. Memory nodes in
 * StarPU's order: RAM (0), then CUDA0.. (1..). */
#include "dahlsim_machine.h"

#include "dahlsim_outfile.h"

#include <math.h>
#include <stdio.h>

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
    struct dahlsim_outfile o;
    int ret = dahlsim_outfile_open(&o, err, err_size, "%s/bus/%s.%s", sampling, name, latency ? "latency" : "bandwidth");
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
    return dahlsim_outfile_close(&o, err, err_size);
}

static int write_bus_config(const char *sampling, const char *name, const struct dahlsim_spec *s, char *err,
                            size_t err_size)
{
    struct dahlsim_outfile o;
    int ret = dahlsim_outfile_open(&o, err, err_size, "%s/bus/%s.config", sampling, name);
    if (ret != 0)
        return ret;
    fprintf(o.f, "# Current configuration\n%d # Number of CPUs\n1 # Number of NUMA nodes\n%d # Number of CUDA devices\n"
                 "0 # Number of OpenCL devices\n0 # Number of MIC devices\n0 # Number of MPI devices\n",
            s->cpu.cores, s->gpu.count);
    return dahlsim_outfile_close(&o, err, err_size);
}

/* A CPU or GPU host's power properties: its watts idle and at full load (SimGrid's "wattage_per_state",
 * linear in between), 0 W when off, and where the figures come from (read back into results.json). */
static void watt_props(FILE *f, double idle_w, double full_w)
{
    fprintf(f, "      <prop id=\"wattage_per_state\" value=\"%.6g:%.6g\"/>\n      <prop id=\"wattage_off\" value=\"0\"/>\n"
               "      <prop id=\"dahl_power\" value=\"spec sheet\"/>\n",
            idle_w, full_w);
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
    struct dahlsim_outfile o;
    int ret = dahlsim_outfile_open(&o, err, err_size, "%s/bus/%s.platform.v4.xml", sampling, name);
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
               "    <prop id=\"network/weight-S\" value=\"0.0\"></prop>\n");
    /* Power figures given: SimGrid's host energy plugin, on from the platform's own configuration (it must
     * be on before the hosts are made), with each CPU and GPU host's idle and full-load watts. */
    const bool energy = s->cpu.full_w > 0 || s->gpu.full_w > 0;
    if (energy)
        fprintf(f, "    <prop id=\"plugin\" value=\"host_energy\"></prop>\n");
    fprintf(f, "  </config>\n");
    /* MAIN and RAM (StarPU's submitting thread's and main memory's hosts) draw nothing of their own. */
    fprintf(f, "  <AS id=\"AS0\" routing=\"Full\">\n    <host id=\"MAIN\" speed=\"1f\"%s\n",
            energy ? ">\n      <prop id=\"wattage_per_state\" value=\"0:0\"/>\n    </host>" : "/>");
    for (int i = 0; i < s->cpu.cores; i++) {
        fprintf(f, "    <host id=\"CPU%d\" speed=\"1Gf\"%s\n", i, energy ? ">" : "/>");
        if (energy) {
            watt_props(f, s->cpu.idle_w, s->cpu.full_w);
            fprintf(f, "    </host>\n");
        }
    }
    unsigned long long memsize = (unsigned long long)llround(s->gpu.mem_gib * 1073741824.0);
    for (int g = 0; g < s->gpu.count; g++) {
        fprintf(f, "    <host id=\"CUDA%d\" speed=\"1Gf\">\n      <prop id=\"memsize\" value=\"%llu\"/>\n"
                   "      <prop id=\"memcpy_peer\" value=\"1\"/>\n",
                g, memsize);
        if (energy)
            watt_props(f, s->gpu.idle_w, s->gpu.full_w);
        fprintf(f, "    </host>\n");
    }
    fprintf(f, "    <host id=\"RAM\" speed=\"1f\"%s\n",
            energy ? ">\n      <prop id=\"wattage_per_state\" value=\"0:0\"/>\n    </host>" : "/>");
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
    return dahlsim_outfile_close(&o, err, err_size);
}

int dahlsim_machine_write_bus(const char *sampling, const char *name, const char *spec_path,
                              const struct dahlsim_spec *spec, char *err, size_t err_size)
{
    int ret = write_bus_matrix(sampling, name, spec, false, err, err_size);
    if (ret == 0)
        ret = write_bus_matrix(sampling, name, spec, true, err, err_size);
    if (ret == 0)
        ret = write_bus_config(sampling, name, spec, err, err_size);
    if (ret == 0)
        ret = write_platform(sampling, name, spec_path, spec, err, err_size);
    return ret;
}

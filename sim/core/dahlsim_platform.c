/* The SimGrid cluster platform (the network between nodes) of multi-node simulations, and its hostfile.
 * Each node's own machine (CPUs, GPUs, bus) is not in this file: starpu_smpirun adds one copy of
 * calibration/NAME's platform per MPI rank (STARPU_HOSTNAME). See dahlsim_platform.h. */
#include "dahlsim_platform.h"

#include "dahlsim_util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *dahlsim_topology_name(enum dahlsim_topology t)
{
    switch (t) {
    case DAHLSIM_TOPOLOGY_FLAT:
        return "flat";
    case DAHLSIM_TOPOLOGY_FAT_TREE:
        return "fat-tree";
    case DAHLSIM_TOPOLOGY_TORUS:
        return "torus";
    }
    return "?";
}

bool dahlsim_topology_parse(const char *text, enum dahlsim_topology *out)
{
    for (int t = DAHLSIM_TOPOLOGY_FLAT; t <= DAHLSIM_TOPOLOGY_TORUS; t++) {
        if (strcmp(text, dahlsim_topology_name((enum dahlsim_topology)t)) == 0) {
            *out = (enum dahlsim_topology)t;
            return true;
        }
    }
    return false;
}

/* A positive finite number followed by exactly one of the suffixes; *scale gets the suffix's factor. */
static bool parse_with_unit(const char *text, const char *const *units, const double *scales, size_t nunits,
                            double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(v) || v < 0 || text[0] == '+' || text[0] == '-')
        return false;
    for (size_t i = 0; i < nunits; i++) {
        if (strcmp(end, units[i]) == 0) {
            *out = v * scales[i];
            return true;
        }
    }
    return false;
}

bool dahlsim_parse_bandwidth(const char *text, double *bps)
{
    static const char *const units[] = {"bps", "kbps", "Mbps", "Gbps", "Tbps", "Bps", "kBps", "MBps", "GBps", "TBps"};
    static const double scales[] = {1, 1e3, 1e6, 1e9, 1e12, 8, 8e3, 8e6, 8e9, 8e12};
    return parse_with_unit(text, units, scales, 10, bps) && *bps > 0;
}

bool dahlsim_parse_latency(const char *text, double *s)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    static const double scales[] = {1, 1e-3, 1e-6, 1e-9};
    return parse_with_unit(text, units, scales, 4, s);
}

/* The largest divisor of n that is at most limit. */
static long divisor_below(long n, long limit)
{
    for (long d = limit; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

void dahlsim_cluster_topo_parameters(const struct dahlsim_cluster *c, char *buf, size_t size)
{
    long n = c->nodes;
    buf[0] = '\0';
    if (c->topology == DAHLSIM_TOPOLOGY_FAT_TREE) {
        /* SimGrid's "levels;children per switch;parents per node;parallel links". Up to 8 nodes one switch;
         * beyond, leaf switches of k nodes and k top switches each linked to every leaf: full bisection. */
        long k = divisor_below(n, (long)ceil(sqrt((double)n)));
        if (n <= 8 || k == 1)
            snprintf(buf, size, "1;%ld;1;1", n);
        else
            snprintf(buf, size, "2;%ld,%ld;1,%ld;1,1", k, n / k, k);
    } else if (c->topology == DAHLSIM_TOPOLOGY_TORUS) {
        /* Up to three dimensions as equal as n's divisors allow, largest last; dimensions of 1 dropped. */
        long x = divisor_below(n, (long)floor(cbrt((double)n) + 1e-9));
        long rest = n / x;
        long y = divisor_below(rest, (long)floor(sqrt((double)rest) + 1e-9));
        long z = rest / y;
        long dims[3] = {x, y, z};
        size_t used = 0;
        for (int i = 0; i < 3; i++)
            if (dims[i] > 1 && used < size)
                used += (size_t)snprintf(buf + used, size - used, "%s%ld", used ? "," : "", dims[i]);
        if (used == 0)
            snprintf(buf, size, "%ld", n);
    }
}

int dahlsim_cluster_write(const struct dahlsim_cluster *c, const char *path, const char *hostfile)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
        dahlsim_error("%s: path too long", path);
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        dahlsim_error("%s: %s", tmp, strerror(errno));
        return -1;
    }
    char topo[128];
    dahlsim_cluster_topo_parameters(c, topo, sizeof(topo));
    const char *kind = c->topology == DAHLSIM_TOPOLOGY_FAT_TREE ? "FAT_TREE"
                       : c->topology == DAHLSIM_TOPOLOGY_TORUS ? "TORUS"
                                                                 : "FLAT";
    /* Units are SimGrid's: bandwidth in Gbps (gigabits per second), latency in us; written with %.17g so
     * the file reads back to the very numbers the simulation used. */
    char machines[600];
    if (c->groups != NULL)
        snprintf(machines, sizeof(machines), "node groups %s (calibration/NAME each)", c->groups);
    else
        snprintf(machines, sizeof(machines), "machine %s (calibration/%s)", c->machine, c->machine);
    fprintf(f, "<?xml version='1.0'?>\n"
               "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n"
               "  <!-- dahlsim cluster: %ld nodes of %s, %s network,\n"
               "       %.17g Gbps and %.17g us per link.\n"
               "       Generated by dahlsim platform cluster. The first two lines must stay the XML declaration\n"
               "       and the DOCTYPE: starpu_smpirun drops them and puts what follows into its own platform,\n"
               "       next to one copy of a node machine's platform per MPI rank (STARPU_HOSTNAME, or with node\n"
               "       groups STARPU_MPI_HOSTNAMES: scripts/patches/starpu-simgrid-rank-hostname.patch).\n"
               "       Hosts %s0 .. %s%ld are where the MPI ranks run; their speed is unused (SMPI does not\n"
               "       simulate computation here: StarPU's workers on the node platforms do).\n",
            c->nodes, machines, dahlsim_topology_name(c->topology), c->bandwidth_bps / 1e9,
            c->latency_s * 1e6, DAHLSIM_CLUSTER_HOST_PREFIX, DAHLSIM_CLUSTER_HOST_PREFIX, c->nodes - 1);
    switch (c->topology) {
    case DAHLSIM_TOPOLOGY_FLAT:
        fprintf(f, "       flat: every node has one private full-duplex link to an ideal non-blocking switch\n"
                   "       (no backbone), so only a node's own link is shared between its transfers. -->\n");
        break;
    case DAHLSIM_TOPOLOGY_FAT_TREE:
        fprintf(f, "       fat-tree: SimGrid FAT_TREE \"%s\" (levels; children per switch; parents per\n"
                   "       node; parallel links): full bisection, every link at the bandwidth above. -->\n",
                topo);
        break;
    case DAHLSIM_TOPOLOGY_TORUS:
        fprintf(f, "       torus: SimGrid TORUS \"%s\" (dimensions), each node linked to its neighbours\n"
                   "       in every dimension, transfers routed hop by hop. -->\n",
                topo);
        break;
    }
    fprintf(f, "  <cluster id=\"dahlsim_cluster\" prefix=\"%s\" suffix=\"\" radical=\"0-%ld\" speed=\"1Gf\"\n"
               "           bw=\"%.17gGbps\" lat=\"%.17gus\" sharing_policy=\"SPLITDUPLEX\"",
            DAHLSIM_CLUSTER_HOST_PREFIX, c->nodes - 1, c->bandwidth_bps / 1e9, c->latency_s * 1e6);
    if (c->topology != DAHLSIM_TOPOLOGY_FLAT)
        fprintf(f, "\n           topology=\"%s\" topo_parameters=\"%s\"", kind, topo);
    fprintf(f, "/>\n</platform>\n");
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
        dahlsim_error("%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (hostfile == NULL)
        return 0;
    f = fopen(hostfile, "w");
    if (f == NULL) {
        dahlsim_error("%s: %s", hostfile, strerror(errno));
        return -1;
    }
    for (long i = 0; i < c->nodes; i++)
        fprintf(f, "%s%ld\n", DAHLSIM_CLUSTER_HOST_PREFIX, i);
    if (fclose(f) != 0) {
        dahlsim_error("%s: %s", hostfile, strerror(errno));
        return -1;
    }
    return 0;
}

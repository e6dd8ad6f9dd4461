/* `dahlsim platform cluster`: writes the SimGrid cluster platform (the network between nodes) for
 * multi-node simulations, and its hostfile. Each node's own machine (CPUs, GPUs, bus) is not in this file:
 * starpu_smpirun adds one copy of calibration/NAME's platform per MPI rank (STARPU_HOSTNAME). See
 * dahlsim_platform.h. */
#include "dahlsim_platform.h"

#include "dahlsim_calibrate.h"
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NODES 4096

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
    fprintf(f, "<?xml version='1.0'?>\n"
               "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n"
               "  <!-- dahlsim cluster: %ld nodes of machine %s (calibration/%s), %s network,\n"
               "       %.17g Gbps and %.17g us per link.\n"
               "       Generated by dahlsim platform cluster. The first two lines must stay the XML declaration\n"
               "       and the DOCTYPE: starpu_smpirun drops them and puts what follows into its own platform,\n"
               "       next to one copy of the node machine's platform per MPI rank (STARPU_HOSTNAME).\n"
               "       Hosts %s0 .. %s%ld are where the MPI ranks run; their speed is unused (SMPI does not\n"
               "       simulate computation here: StarPU's workers on the node platforms do).\n",
            c->nodes, c->machine, c->machine, dahlsim_topology_name(c->topology), c->bandwidth_bps / 1e9,
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

/* ---- the command -------------------------------------------------------------------------------------- */

static const char usage[] =
    "usage: dahlsim platform cluster --nodes N --machine NAME --bw BANDWIDTH --lat LATENCY\n"
    "                                [--topology flat|fat-tree|torus] [--out FILE] [--hostfile FILE]\n";

static void help(void)
{
    fputs(usage, stdout);
    fputs("\nWrites the SimGrid cluster platform of N nodes of machine NAME (a calibrated or described machine\n"
          "of calibration/) for multi-node simulation with starpu_smpirun, with comments and explicit units.\n\n"
          "options:\n"
          "  --nodes N       nodes, 1 to 4096 (one MPI rank each)\n"
          "  --machine NAME  the node's machine, calibration/NAME (its platform is what each node runs on)\n"
          "  --bw B          per-link bandwidth with SimGrid's unit: 10Gbps (10 GbE), 100Gbps (IB EDR),\n"
          "                  12.5GBps; bps = bits, Bps = bytes\n"
          "  --lat L         per-link latency: 10us, 1us, 0.5ms\n"
          "  --topology T    flat (default: private links into a non-blocking switch), fat-tree (full\n"
          "                  bisection, two levels beyond 8 nodes) or torus (up to 3-D)\n"
          "  --out FILE      the XML file (default: stdout is not used; FILE is required)\n"
          "  --hostfile FILE also write the hostfile, one host per rank (node-0, node-1, ...)\n",
          stdout);
}

static int cmd_cluster(int argc, char **argv)
{
    enum { O_NODES = 256, O_MACHINE, O_BW, O_LAT, O_TOPOLOGY, O_OUT, O_HOSTFILE, O_HELP };
    static const struct option options[] = {
        {"nodes", required_argument, NULL, O_NODES},       {"machine", required_argument, NULL, O_MACHINE},
        {"bw", required_argument, NULL, O_BW},             {"lat", required_argument, NULL, O_LAT},
        {"topology", required_argument, NULL, O_TOPOLOGY}, {"out", required_argument, NULL, O_OUT},
        {"hostfile", required_argument, NULL, O_HOSTFILE}, {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    struct dahlsim_cluster c = {.nodes = 0, .bandwidth_bps = 0, .latency_s = -1, .topology = DAHLSIM_TOPOLOGY_FLAT};
    const char *out = NULL, *hostfile = NULL;
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_NODES:
            ok = dahlsim_parse_int("--nodes", optarg, 1, MAX_NODES, &c.nodes);
            break;
        case O_MACHINE:
            if (!dahlsim_machine_name_valid(optarg) || strlen(optarg) >= sizeof(c.machine)) {
                dahlsim_error("--machine: expected a machine name (letters, digits, '.', '_', '-'), got \"%s\"", optarg);
                ok = false;
            } else {
                snprintf(c.machine, sizeof(c.machine), "%s", optarg);
            }
            break;
        case O_BW:
            ok = dahlsim_parse_bandwidth(optarg, &c.bandwidth_bps);
            if (!ok)
                dahlsim_error("--bw: expected a positive bandwidth with a unit (bps, kbps, Mbps, Gbps, Tbps, or "
                              "Bps, kBps, MBps, GBps, TBps for bytes), e.g. 10Gbps, got \"%s\"",
                              optarg);
            break;
        case O_LAT:
            ok = dahlsim_parse_latency(optarg, &c.latency_s);
            if (!ok)
                dahlsim_error("--lat: expected a latency >= 0 with a unit (s, ms, us, ns), e.g. 10us, got \"%s\"",
                              optarg);
            break;
        case O_TOPOLOGY:
            ok = dahlsim_topology_parse(optarg, &c.topology);
            if (!ok)
                dahlsim_error("--topology: expected flat, fat-tree or torus, got \"%s\"", optarg);
            break;
        case O_OUT:
            out = optarg;
            break;
        case O_HOSTFILE:
            hostfile = optarg;
            break;
        case O_HELP:
            help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("platform cluster", opt, argv, usage);
        }
        if (!ok)
            return DAHLSIM_EXIT_USAGE;
    }
    if (optind < argc)
        return dahlsim_unexpected_argument("platform cluster", argv[optind], usage);
    const char *missing = c.nodes == 0             ? "--nodes"
                          : c.machine[0] == '\0'   ? "--machine"
                          : c.bandwidth_bps == 0   ? "--bw"
                          : c.latency_s < 0        ? "--lat"
                          : out == NULL            ? "--out"
                                                   : NULL;
    if (missing != NULL) {
        dahlsim_error("platform cluster: %s is required", missing);
        fputs(usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    char node_platform[PATH_MAX + 200];
    snprintf(node_platform, sizeof(node_platform), "%s/%s/sampling/bus/%s.platform.v4.xml",
             dahlsim_calibration_root(), c.machine, c.machine);
    if (access(node_platform, R_OK) != 0) {
        dahlsim_error("--machine: expected a machine of %s, got \"%s\" (%s: %s)", dahlsim_calibration_root(),
                      c.machine, node_platform, strerror(errno));
        fprintf(stderr, "hint: calibrate it with dahlsim calibrate --machine %s, or describe it with dahlsim "
                        "machine synth\n",
                c.machine);
        return DAHLSIM_EXIT_USAGE;
    }
    if (c.topology == DAHLSIM_TOPOLOGY_TORUS && c.nodes < 2) {
        dahlsim_error("--topology: a torus needs at least 2 nodes, got --nodes %ld", c.nodes);
        return DAHLSIM_EXIT_USAGE;
    }
    if (dahlsim_cluster_write(&c, out, hostfile) != 0)
        return DAHLSIM_EXIT_FAILURE;
    return DAHLSIM_EXIT_OK;
}

int dahlsim_cmd_platform(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "cluster") == 0)
        return cmd_cluster(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs("usage: dahlsim platform cluster [options]   (dahlsim platform cluster --help)\n\n"
              "Writes SimGrid platforms: `cluster` for the network between the nodes of a multi-node run.\n",
              stdout);
        return DAHLSIM_EXIT_OK;
    }
    dahlsim_error("platform: expected the subcommand cluster, got %s%s%s", argc >= 2 ? "\"" : "",
                  argc >= 2 ? argv[1] : "nothing", argc >= 2 ? "\"" : "");
    fputs("usage: dahlsim platform cluster [options]\n", stderr);
    return DAHLSIM_EXIT_USAGE;
}

/* `dahlsim platform cluster`: writes the SimGrid cluster platform (the network between nodes) of a
 * multi-node simulation, and its hostfile (dahlsim_platform.h). */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_manifest.h"
#include "dahlsim_platform.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_NODES 4096

static const char usage[] =
    "usage: dahlsim platform cluster --nodes N --machine NAME --bw BANDWIDTH --lat LATENCY\n"
    "                                [--topology flat|fat-tree|torus] [--out FILE] [--hostfile FILE]\n";

static void platform_cluster_print_help(void)
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

enum { O_NODES = 256, O_MACHINE, O_BW, O_LAT, O_TOPOLOGY, O_OUT, O_HOSTFILE, O_HELP };
static const struct option options[] = {
    {"nodes", required_argument, NULL, O_NODES},       {"machine", required_argument, NULL, O_MACHINE},
    {"bw", required_argument, NULL, O_BW},             {"lat", required_argument, NULL, O_LAT},
    {"topology", required_argument, NULL, O_TOPOLOGY}, {"out", required_argument, NULL, O_OUT},
    {"hostfile", required_argument, NULL, O_HOSTFILE}, {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

/* What `platform cluster` is told: the cluster and where its files go. */
struct cluster_opts {
    struct dahlsim_cluster c;
    const char *out, *hostfile;
};

static bool platform_cluster_set_option(int opt, const char *arg, void *ctx)
{
    struct cluster_opts *o = ctx;
    struct dahlsim_cluster *c = &o->c;
    switch (opt) {
    case O_NODES:
        return dahlsim_parse_int("--nodes", arg, 1, MAX_NODES, &c->nodes);
    case O_MACHINE:
        if (!dahlsim_machine_name_valid(arg) || strlen(arg) >= sizeof(c->machine)) {
            dahlsim_error("--machine: expected a machine name (letters, digits, '.', '_', '-'), got \"%s\"", arg);
            return false;
        }
        snprintf(c->machine, sizeof(c->machine), "%s", arg);
        return true;
    case O_BW:
        if (dahlsim_parse_bandwidth(arg, &c->bandwidth_bps))
            return true;
        dahlsim_error("--bw: expected a positive bandwidth with a unit (bps, kbps, Mbps, Gbps, Tbps, or "
                      "Bps, kBps, MBps, GBps, TBps for bytes), e.g. 10Gbps, got \"%s\"",
                      arg);
        return false;
    case O_LAT:
        if (dahlsim_parse_latency(arg, &c->latency_s))
            return true;
        dahlsim_error("--lat: expected a latency >= 0 with a unit (s, ms, us, ns), e.g. 10us, got \"%s\"", arg);
        return false;
    case O_TOPOLOGY:
        if (dahlsim_topology_parse(arg, &c->topology))
            return true;
        dahlsim_error("--topology: expected flat, fat-tree or torus, got \"%s\"", arg);
        return false;
    case O_OUT:
        o->out = arg;
        return true;
    case O_HOSTFILE:
        o->hostfile = arg;
        return true;
    }
    return false;
}

static const struct dahlsim_options platform_cluster_options = {
    "platform cluster", usage, options, O_HELP, platform_cluster_print_help, platform_cluster_set_option};

static int platform_cluster(int argc, char **argv)
{
    struct cluster_opts o = {.c = {.nodes = 0, .bandwidth_bps = 0, .latency_s = -1, .topology = DAHLSIM_TOPOLOGY_FLAT}};
    bool help;
    int ret = dahlsim_options_parse(&platform_cluster_options, argc, argv, &o, &help);
    if (ret != 0 || help)
        return dahlsim_exit_of(ret);
    if (optind < argc)
        return dahlsim_unexpected_argument("platform cluster", argv[optind], usage);
    struct dahlsim_cluster c = o.c;
    const char *out = o.out, *hostfile = o.hostfile;
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
        return platform_cluster(argc - 1, argv + 1);
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

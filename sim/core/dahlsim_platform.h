/* Cluster platforms for multi-node simulation: the SimGrid cluster description (the network between nodes)
 * that starpu_smpirun combines with one copy of the node machine's own platform per MPI rank, and its
 * hostfile. Written by `dahlsim platform cluster` and by `dahlsim run` for scenarios with "nodes". */
#ifndef DAHLSIM_PLATFORM_H
#define DAHLSIM_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

enum dahlsim_topology {
    DAHLSIM_TOPOLOGY_FLAT,     /* one private link per node into an ideal (non-blocking) switch */
    DAHLSIM_TOPOLOGY_FAT_TREE, /* two-level full-bisection fat tree (one level up to 8 nodes) */
    DAHLSIM_TOPOLOGY_TORUS,    /* 1-, 2- or 3-D torus, dimensions as equal as the node count allows */
};

struct dahlsim_cluster {
    char machine[72];            /* the node's machine (calibration/NAME), recorded in the XML's comment */
    long nodes;                  /* >= 1 */
    double bandwidth_bps;        /* per link, bits per second */
    double latency_s;            /* per link */
    enum dahlsim_topology topology;
    const char *groups;          /* node groups ("1 x NAME, 4 x NAME2", ranks in that order), in the comment
                                    in place of machine; NULL: every node is machine */
};

/* "flat", "fat-tree", "torus" (static); parse returns false on anything else. */
const char *dahlsim_topology_name(enum dahlsim_topology t);
bool dahlsim_topology_parse(const char *text, enum dahlsim_topology *out);

/* "10Gbps", "12.5GBps", "100Mbps"... (SimGrid's units: bps = bits, Bps = bytes, with k/M/G/T) -> bits per
 * second > 0. False when malformed. */
bool dahlsim_parse_bandwidth(const char *text, double *bps);
/* "10us", "1.5ms", "0.2s", "500ns" -> seconds >= 0. False when malformed. */
bool dahlsim_parse_latency(const char *text, double *s);

/* The hosts MPI ranks run on: "node-0" ... */
#define DAHLSIM_CLUSTER_HOST_PREFIX "node-"

/* Writes the cluster XML to path (its first two lines are the <?xml?> declaration and the DOCTYPE, which
 * starpu_smpirun drops) and, when hostfile is not NULL, the hostfile (one host per rank). Returns 0, or -1
 * after printing an error naming the file. */
int dahlsim_cluster_write(const struct dahlsim_cluster *c, const char *path, const char *hostfile);

/* The SimGrid topo_parameters the generator uses for c (for tests and the XML comment). */
void dahlsim_cluster_topo_parameters(const struct dahlsim_cluster *c, char *buf, size_t size);

#endif /* DAHLSIM_PLATFORM_H */

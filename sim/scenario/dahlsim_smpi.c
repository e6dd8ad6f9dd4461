/* Multi-node experiments through starpu_smpirun: see dahlsim_smpi.h. */
#include "dahlsim_smpi.h"

#include "dahlsim_util.h"
#include "dahlsim_fs.h"
#include "dahlsim_platform.h"
#include "dahlsim_simfail.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool dahlsim_smpi_noise(const char *line)
{
    return (strstr(line, "ker_lmm") != NULL && strstr(line, "Probable bug") != NULL) ||
           strstr(line, "_starpu_mpi_print_thread_level_support") != NULL;
}

/* Copies raw to `to` without the noise lines. */
static void filter(const char *raw, FILE *to)
{
    FILE *f = fopen(raw, "r");
    if (f == NULL)
        return;
    char line[8192];
    while (fgets(line, sizeof(line), f) != NULL)
        if (!dahlsim_smpi_noise(line))
            fputs(line, to);
    fclose(f);
}

int dahlsim_spawn_nodes(const struct dahlsim_experiment *x, const char *out_dir, char *const args[],
                        const struct dahlsim_env_var *vars, size_t nvars, char *out, size_t out_size,
                        const char *stderr_path)
{
    if (DAHLSIM_SMPIRUN[0] == '\0') {
        /* Checked here, not when the scenario is read: validating one needs no simulator. */
        dahlsim_error("\"nodes\": %ld nodes need the sim-mpi StarPU flavour, and this dahlsim was built without it",
                      x->nodes);
        fprintf(stderr, "hint: scripts/setup-deps --flavours sim-mpi, then reconfigure and rebuild dahlsim\n");
        return -1;
    }
    char dir[PATH_MAX], tmpdir[] = "/tmp/dahlsim-nodes-XXXXXX";
    if (out_dir != NULL) {
        snprintf(dir, sizeof(dir), "%s", out_dir);
        int ret = dahlsim_make_dirs(dir);
        if (ret != 0) {
            dahlsim_error("%s: %s", dir, strerror(-ret));
            return -1;
        }
    } else if (mkdtemp(tmpdir) != NULL) {
        snprintf(dir, sizeof(dir), "%s", tmpdir);
    } else {
        dahlsim_error("%s: %s", tmpdir, strerror(errno));
        return -1;
    }
    char platform[PATH_MAX + 16], hosts[PATH_MAX + 16], raw[PATH_MAX + 32], exe[PATH_MAX];
    snprintf(platform, sizeof(platform), "%s/cluster.xml", dir);
    snprintf(hosts, sizeof(hosts), "%s/hosts", dir);
    snprintf(raw, sizeof(raw), "%s/.smpi-stderr.log", dir);
    struct dahlsim_cluster c = {.nodes = x->nodes, .bandwidth_bps = x->network_bps,
                                .latency_s = x->network_latency_s};
    snprintf(c.machine, sizeof(c.machine), "%s", x->machine);
    dahlsim_topology_parse(x->topology, &c.topology);
    if (dahlsim_cluster_write(&c, platform, hosts) != 0 || dahlsim_sibling_path("dahlsim-sim-mpi", exe, sizeof(exe)) != 0)
        return -1;
    /* SimGrid's options: quiet logs, and ker_lmm's "Probable bug" warnings at exit (harmless) off. */
    const char *prefix[] = {DAHLSIM_SMPIRUN, "-platform", platform, "-hostfile", hosts, exe,
                            "--log=root.thres:warning", "--log=ker_lmm.thres:error", NULL};
    const struct dahlsim_env_var network = {"DAHLSIM_NETWORK", x->network};
    int status = dahlsim_spawn_prefixed(prefix, args, vars, nvars, &network, 1, out, out_size, raw);
    FILE *to = stderr_path != NULL ? fopen(stderr_path, "w") : stderr;
    if (to != NULL) {
        filter(raw, to);
        if (to != stderr)
            fclose(to);
    }
    if (status != 0)
        dahlsim_simfail_report(status, raw);
    unlink(raw);
    if (out_dir == NULL) {
        unlink(platform);
        unlink(hosts);
        rmdir(dir);
    }
    return status;
}

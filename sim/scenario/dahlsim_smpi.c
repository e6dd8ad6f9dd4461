/* Multi-node experiments through starpu_smpirun: see dahlsim_smpi.h. */
#include "dahlsim_smpi.h"

#include "dahlsim_util.h"
#include "dahlsim_fs.h"
#include "dahlsim_platform.h"
#include "dahlsim_simfail.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool dahlsim_smpi_noise(const char *line)
{
    return (strstr(line, "ker_lmm") != NULL && strstr(line, "Probable bug") != NULL) ||
           strstr(line, "_starpu_mpi_print_thread_level_support") != NULL ||
           /* the host energy plugin, on for every run, on a machine without power figures (no energy then) */
           strstr(line, "No energetic profiles (wattage_per_state) given for host") != NULL;
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

/* Node groups of several machines: one perf-model directory holding every machine's bus files and perf
 * models (links into each calibration: the files are named after their machine, so none collide), at
 * dir/sampling, and the machine of every rank, space-separated, into hostnames. Returns 0, or -1 after an
 * error line. */
static int groups_sampling(const struct dahlsim_experiment *x, const char *dir, char *sampling, size_t size,
                           char *hostnames, size_t hostnames_size)
{
    size_t used = 0;
    hostnames[0] = '\0';
    for (long g = 0; g < x->ngroups; g++)
        for (long k = 0; k < x->groups[g].count; k++) {
            used += (size_t)snprintf(hostnames + used, used < hostnames_size ? hostnames_size - used : 0, "%s%s",
                                     used ? " " : "", x->groups[g].machine);
            if (used >= hostnames_size) {
                dahlsim_error("\"node_groups\": too many nodes to name in STARPU_MPI_HOSTNAMES");
                return -1;
            }
        }
    snprintf(sampling, size, "%s/sampling", dir);
    int ret = dahlsim_remove_tree(sampling);
    static const char *const subdirs[] = {"bus", "codelets/45"};
    for (size_t d = 0; ret == 0 && d < 2; d++) {
        char to[PATH_MAX + 32];
        snprintf(to, sizeof(to), "%s/%s", sampling, subdirs[d]);
        ret = dahlsim_make_dirs(to);
        for (long g = 0; ret == 0 && g < x->ngroups; g++) {
            char from[PATH_MAX + 32], dir_g[PATH_MAX];
            if (dahlsim_node_group_dir(x, &x->groups[g], dir_g, sizeof(dir_g)) != 0) {
                ret = -ENAMETOOLONG;
                break;
            }
            snprintf(from, sizeof(from), "%s/sampling/%s", dir_g, subdirs[d]);
            DIR *dh = opendir(from);
            if (dh == NULL) {
                ret = -errno;
                break;
            }
            struct dirent *e;
            while (ret == 0 && (e = readdir(dh)) != NULL) {
                /* bus/NAME.kind and codelets/45/symbol.NAME: only this machine's own files (a NAME may hold
                 * dots: roofline-build-2core-2.2ghz) */
                const char *m = x->groups[g].machine;
                size_t len = strlen(e->d_name), mlen = strlen(m);
                bool own = d == 0 ? strncmp(e->d_name, m, mlen) == 0 && e->d_name[mlen] == '.'
                                  : len > mlen + 1 && e->d_name[len - mlen - 1] == '.' && strcmp(e->d_name + len - mlen, m) == 0;
                if (!own)
                    continue;
                char src[2 * PATH_MAX], dst[2 * PATH_MAX];
                snprintf(src, sizeof(src), "%s/%s", from, e->d_name);
                snprintf(dst, sizeof(dst), "%s/%s", to, e->d_name);
                char abs[PATH_MAX];
                if (realpath(src, abs) == NULL || (symlink(abs, dst) != 0 && errno != EEXIST))
                    ret = -errno;
            }
            closedir(dh);
        }
    }
    if (ret != 0) {
        dahlsim_error("%s: cannot gather the node groups' calibrations: %s", sampling, strerror(-ret));
        return -1;
    }
    return 0;
}

/* $DAHLSIM_REPRESENTATIVES (runtime/dahl_light.h): the node groups' ranks, "FIRST-LAST,...". The runtime
 * picks each group's representatives (one per role in the allreduce's tree). */
static void representatives(const struct dahlsim_experiment *x, char *out, size_t size)
{
    size_t used = 0;
    long ngroups = x->ngroups > 0 ? x->ngroups : 1, base = 0;
    out[0] = '\0';
    for (long g = 0; g < ngroups && used < size; g++) {
        long count = x->ngroups > 0 ? x->groups[g].count : x->nodes;
        used += (size_t)snprintf(out + used, size - used, "%s%ld-%ld", g ? "," : "", base, base + count - 1);
        base += count;
    }
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
    /* Node groups: every rank's machine (STARPU_MPI_HOSTNAMES) and their calibrations side by side. */
    char groups[512] = "", sampling[PATH_MAX + 16], hostnames[16384];
    struct dahlsim_env_var env[16];
    size_t nenv = 0;
    for (size_t i = 0; i < nvars && nenv < 13; i++)
        env[nenv++] = vars[i];
    if (x->ngroups > 0) {
        size_t used = 0;
        for (long g = 0; g < x->ngroups && used < sizeof(groups); g++)
            used += (size_t)snprintf(groups + used, sizeof(groups) - used, "%s%ld x %s", g ? ", " : "",
                                     x->groups[g].count, x->groups[g].machine);
        c.groups = groups;
        if (groups_sampling(x, dir, sampling, sizeof(sampling), hostnames, sizeof(hostnames)) != 0)
            return -1;
        for (size_t i = 0; i < nenv; i++)
            if (strcmp(env[i].name, "STARPU_PERF_MODEL_DIR") == 0)
                env[i].value = sampling;
        env[nenv++] = (struct dahlsim_env_var){"STARPU_MPI_HOSTNAMES", hostnames};
    }
    char reps[1024], phase[32];
    if (x->representative_ranks) {
        representatives(x, reps, sizeof(reps));
        env[nenv++] = (struct dahlsim_env_var){"DAHLSIM_REPRESENTATIVES", reps};
    }
    if (x->mpi_progress_phase > 0) { /* every rank's, light ones too: runtime/dahl_progress.c reads it */
        snprintf(phase, sizeof(phase), "%.17g", x->mpi_progress_phase);
        env[nenv++] = (struct dahlsim_env_var){"DAHLSIM_PROGRESS_PHASE", phase};
    }
    snprintf(c.machine, sizeof(c.machine), "%s", x->machine);
    dahlsim_topology_parse(x->topology, &c.topology);
    if (dahlsim_cluster_write(&c, platform, hosts) != 0 || dahlsim_sibling_path("dahlsim-sim-mpi", exe, sizeof(exe)) != 0)
        return -1;
    /* SimGrid's options: quiet logs, and ker_lmm's "Probable bug" warnings at exit (harmless) off. */
    /* The host energy plugin: a node machine's platform turns it on in its own <config>, which the rank's copy
     * loses (scripts/patches/starpu-smpi-platform-config.patch). */
    const char *prefix[] = {DAHLSIM_SMPIRUN, "-platform", platform, "-hostfile", hosts, exe,
                            "--log=root.thres:warning", "--log=ker_lmm.thres:error", "--cfg=plugin:host_energy", NULL};
    const struct dahlsim_env_var network = {"DAHLSIM_NETWORK", x->network};
    int status = dahlsim_spawn_prefixed(prefix, args, env, nenv, &network, 1, out, out_size, raw);
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
        if (x->ngroups > 0)
            dahlsim_remove_tree(sampling);
        unlink(platform);
        unlink(hosts);
        rmdir(dir);
    }
    return status;
}

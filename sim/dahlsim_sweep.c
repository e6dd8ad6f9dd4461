/* `dahlsim sweep FILE --out DIR`: simulates every point of a scenario's sweep grid. Each point runs as its
 * own dahlsim-sim process (up to --jobs at once), writes DIR/points/NNNN/results.json, and once it has
 * finished, one JSON line is appended to DIR/results.jsonl by this (single) process with one write() and
 * an fsync, so an interruption loses no finished point and never leaves half a line that counts. Re-running
 * the same command skips the points already in results.jsonl. At the end DIR/results.csv and gnuplot plots
 * (DIR/plots/, PNG and SVG: makespan and samples/s against each numeric swept key, one line per scheduler)
 * are rebuilt from results.jsonl. --emit-slurm writes DIR/sweep.slurm, a job array of one point per task. */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_run.h"
#include "dahlsim_scenario.h"
#include "dahlsim_scaling.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SETS 64
#define MAX_JOBS 256

struct sweep_opts {
    const char *file, *out;
    const char *sets[MAX_SETS];
    size_t nsets;
    long jobs, only;
    bool emit_slurm, quiet;
};

static const char usage[] =
    "usage: dahlsim sweep FILE --out DIR [--jobs N] [--set KEY=VALUE]... [--emit-slurm] [--only I] [--quiet]\n";

static void help(void)
{
    fputs(usage, stdout);
    fputs("\nSimulates every point of the scenario's \"sweep\" grid (the last key varies fastest). Appends one\n"
          "JSON line per finished point to DIR/results.jsonl; re-running the same command resumes, skipping\n"
          "finished points. Then writes DIR/results.csv and DIR/plots/ (gnuplot, PNG and SVG).\n\n"
          "options:\n"
          "  --out DIR      the sweep directory (required)\n"
          "  --jobs N       simulations at once (default 1; each is one process, one core)\n"
          "  --set K=V      override a scenario key for every point\n"
          "  --emit-slurm   write DIR/sweep.slurm (a Slurm job array, one point per task) and stop\n"
          "  --only I       run point I only (what the Slurm tasks do)\n"
          "  --quiet        no progress bar\n",
          stdout);
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int parse(int argc, char **argv, struct sweep_opts *o)
{
    enum { O_OUT = 256, O_JOBS, O_SET, O_SLURM, O_ONLY, O_QUIET, O_HELP };
    static const struct option options[] = {
        {"out", required_argument, NULL, O_OUT},   {"jobs", required_argument, NULL, O_JOBS},
        {"set", required_argument, NULL, O_SET},   {"emit-slurm", no_argument, NULL, O_SLURM},
        {"only", required_argument, NULL, O_ONLY}, {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},       {NULL, 0, NULL, 0},
    };
    *o = (struct sweep_opts){.jobs = 1, .only = -1};
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_OUT:
            o->out = optarg;
            break;
        case O_JOBS:
            ok = dahlsim_parse_int("--jobs", optarg, 1, MAX_JOBS, &o->jobs);
            break;
        case O_SET:
            if (o->nsets == MAX_SETS) {
                dahlsim_error("sweep: at most %d --set", MAX_SETS);
                ok = false;
            } else {
                o->sets[o->nsets++] = optarg;
            }
            break;
        case O_SLURM:
            o->emit_slurm = true;
            break;
        case O_ONLY:
            ok = dahlsim_parse_int("--only", optarg, 0, 1000000, &o->only);
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_HELP:
            help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("sweep", opt, argv, usage);
        }
        if (!ok)
            return DAHLSIM_EXIT_USAGE;
    }
    if (optind != argc - 1) {
        dahlsim_error("sweep: expected one scenario file");
        fputs(usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    o->file = argv[optind];
    if (o->out == NULL || o->out[0] == '\0') {
        dahlsim_error("sweep: --out DIR is required");
        fputs(usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    return -1;
}

/* ---- results.jsonl ------------------------------------------------------------------------------------ */

/* Reads the finished points of DIR/results.jsonl into done[] (by index, checking the label matches the
 * scenario's point), dropping a trailing partial line (an interrupted write) from the file. Returns the
 * number done, or -1 after an error message. */
static long load_done(const char *path, const struct dahlsim_scenario *s, bool *done)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return errno == ENOENT ? 0 : -1;
    long n = 0, good_bytes = 0, bytes = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        bytes += len;
        if (line[len - 1] != '\n')
            break; /* partial last line: dropped below */
        cJSON *o = cJSON_Parse(line);
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(o, "point");
        const cJSON *label = cJSON_GetObjectItemCaseSensitive(o, "label");
        bool ok = cJSON_IsNumber(idx) && cJSON_IsString(label) && idx->valuedouble >= 0 &&
                  (size_t)idx->valuedouble < dahlsim_scenario_points(s) &&
                  strcmp(dahlsim_scenario_point(s, (size_t)idx->valuedouble)->point, label->valuestring) == 0;
        if (!ok) {
            dahlsim_error("%s: line %d: not a point of %s (a different scenario's sweep?)", path, lineno,
                          dahlsim_scenario_path(s));
            fprintf(stderr, "hint: use another --out directory for a changed scenario\n");
            cJSON_Delete(o);
            free(line);
            fclose(f);
            return -1;
        }
        if (!done[(size_t)idx->valuedouble])
            n++;
        done[(size_t)idx->valuedouble] = true;
        cJSON_Delete(o);
        good_bytes = bytes;
    }
    free(line);
    fclose(f);
    if (good_bytes != bytes && truncate(path, good_bytes) != 0) {
        dahlsim_error("%s: cannot drop its partial last line: %s", path, strerror(errno));
        return -1;
    }
    return n;
}

/* The record of one finished point, read from its results.json: one line, no newline inside. */
static char *point_record(const struct dahlsim_scenario *s, size_t i, const char *point_dir)
{
    char path[PATH_MAX + 64];
    if (snprintf(path, sizeof(path), "%s/results.json", point_dir) >= (int)sizeof(path))
        return NULL;
    cJSON *r = dahlsim_read_json(path);
    if (r == NULL)
        return NULL;
    const struct dahlsim_experiment *x = dahlsim_scenario_point(s, i);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "point", (double)i);
    cJSON_AddStringToObject(o, "label", x->point);
    cJSON *params = cJSON_AddObjectToObject(o, "params");
    cJSON_AddStringToObject(params, "machine", x->machine);
    cJSON_AddStringToObject(params, "dataset", x->dataset);
    cJSON_AddStringToObject(params, "model", x->model);
    cJSON_AddStringToObject(params, "scheduler", x->scheduler);
    cJSON_AddNumberToObject(params, "batch", (double)x->batch);
    cJSON_AddNumberToObject(params, "samples", (double)x->samples);
    cJSON_AddNumberToObject(params, "epochs", (double)x->epochs);
    cJSON_AddNumberToObject(params, "cpus", (double)x->cpus);
    cJSON_AddNumberToObject(params, "gpus", (double)x->gpus);
    cJSON_AddNumberToObject(params, "gpu_memory_mib", (double)x->gpu_memory_mib);
    cJSON_AddBoolToObject(params, "prefetch", x->prefetch);
    cJSON_AddStringToObject(params, "perfmodel", x->perfmodel);
    cJSON_AddStringToObject(params, "reduction", x->reduction);
    cJSON_AddStringToObject(params, "runtime_costs", x->runtime_costs);
    cJSON_AddNumberToObject(params, "seed", (double)x->seed);
    cJSON_AddNumberToObject(params, "nodes", (double)x->nodes);
    /* multi-node figures, and the simulation's own cost (wall_s), for scaling plots (dahlsim_scaling.h) */
    const cJSON *network = cJSON_GetObjectItemCaseSensitive(r, "network");
    const cJSON *allreduce = cJSON_GetObjectItemCaseSensitive(network, "allreduce_s_mean");
    if (cJSON_IsNumber(allreduce))
        cJSON_AddNumberToObject(o, "allreduce_s_mean", allreduce->valuedouble);
    const char *copy[] = {"makespan_s", "samples_per_s", "iterations", "wall_s"};
    for (size_t k = 0; k < sizeof(copy) / sizeof(copy[0]); k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, copy[k]);
        if (v != NULL)
            cJSON_AddItemToObject(o, copy[k], cJSON_Duplicate(v, true));
    }
    cJSON_AddStringToObject(o, "results", path);
    cJSON_Delete(r);
    char *line = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return line;
}

/* Appends line + '\n' with one write, then fsync. */
static int append_line(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0666);
    if (fd < 0)
        return -errno;
    size_t len = strlen(line);
    char *buf = malloc(len + 2);
    if (buf == NULL) {
        close(fd);
        return -ENOMEM;
    }
    memcpy(buf, line, len);
    buf[len] = '\n';
    ssize_t w = write(fd, buf, len + 1);
    int ret = w == (ssize_t)(len + 1) ? 0 : -EIO;
    free(buf);
    if (fsync(fd) != 0 && ret == 0)
        ret = -errno;
    close(fd);
    return ret;
}

/* ---- CSV and plots -------------------------------------------------------------------------------------- */

static int write_csv(const char *dir, const struct dahlsim_scenario *s)
{
    char jsonl[PATH_MAX + 32], csv[PATH_MAX + 32], tmp[PATH_MAX + 40];
    snprintf(jsonl, sizeof(jsonl), "%s/results.jsonl", dir);
    snprintf(csv, sizeof(csv), "%s/results.csv", dir);
    snprintf(tmp, sizeof(tmp), "%s/.results.csv.tmp", dir);
    size_t n = dahlsim_scenario_points(s);
    char **lines = calloc(n, sizeof(*lines));
    FILE *in = fopen(jsonl, "r");
    if (lines == NULL || in == NULL) {
        free(lines);
        if (in != NULL)
            fclose(in);
        return in == NULL ? 0 : -ENOMEM;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(o, "point");
        if (cJSON_IsNumber(idx) && (size_t)idx->valuedouble < n) {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "params");
            char buf[2048];
            size_t used = (size_t)snprintf(buf, sizeof(buf), "%zu", (size_t)idx->valuedouble);
            const char *cols[] = {"machine", "dataset", "model", "scheduler", "batch", "samples", "epochs",
                                  "cpus", "gpus", "gpu_memory_mib", "prefetch", "perfmodel", "reduction", "seed"};
            for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, cols[k]);
                if (cJSON_IsString(v))
                    used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%s", v->valuestring);
                else if (cJSON_IsBool(v))
                    used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%s", cJSON_IsTrue(v) ? "true" : "false");
                else
                    used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g", v ? v->valuedouble : NAN);
            }
            const char *vals[] = {"makespan_s", "samples_per_s", "iterations", "params.nodes", "wall_s",
                                  "allreduce_s_mean"};
            for (size_t k = 0; k < 6 && used < sizeof(buf); k++) {
                const cJSON *v = strncmp(vals[k], "params.", 7) == 0
                                     ? cJSON_GetObjectItemCaseSensitive(p, vals[k] + 7)
                                     : cJSON_GetObjectItemCaseSensitive(o, vals[k]);
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g", v ? v->valuedouble : NAN);
            }
            /* last, so that the plots' column numbers stay those of older sweeps */
            const cJSON *costs = cJSON_GetObjectItemCaseSensitive(p, "runtime_costs");
            if (used < sizeof(buf))
                snprintf(buf + used, sizeof(buf) - used, ",%s", cJSON_IsString(costs) ? costs->valuestring : "measured");
            free(lines[(size_t)idx->valuedouble]);
            lines[(size_t)idx->valuedouble] = strdup(buf);
        }
        cJSON_Delete(o);
    }
    free(line);
    fclose(in);
    FILE *out = fopen(tmp, "w");
    int ret = out == NULL ? -errno : 0;
    if (out != NULL) {
        fputs("point,machine,dataset,model,scheduler,batch,samples,epochs,cpus,gpus,gpu_memory_mib,prefetch,"
              "perfmodel,reduction,seed,makespan_s,samples_per_s,iterations,nodes,wall_s,allreduce_s_mean,runtime_costs\n",
              out);
        for (size_t i = 0; i < n; i++)
            if (lines[i] != NULL)
                fprintf(out, "%s\n", lines[i]);
        if (fclose(out) != 0)
            ret = -errno;
        if (ret == 0 && rename(tmp, csv) != 0)
            ret = -errno;
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    return ret;
}

/* CSV column (1-based) of a scenario key, or 0 when it is not a numeric column. */
static int numeric_column(const char *key)
{
    const char *cols[] = {"batch", "samples", "epochs", "cpus", "gpus", "gpu_memory_mib", "seed"};
    const int idx[] = {6, 7, 8, 9, 10, 11, 15};
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
        if (strcmp(cols[k], key) == 0)
            return idx[k];
    if (strcmp(key, "iterations") == 0)
        return 7; /* iterations are shown as samples */
    if (strcmp(key, "nodes") == 0)
        return 19;
    return 0;
}

/* One gnuplot script per numeric swept key and metric, run for PNG and SVG. Returns 0, or 1 when gnuplot is
 * missing or fails (the sweep's results stand; only the plots are missing). */
static int write_plots(const char *dir, const struct dahlsim_scenario *s)
{
    size_t nkeys;
    const char *const *keys = dahlsim_scenario_sweep_keys(s, &nkeys);
    char plots[PATH_MAX + 16];
    snprintf(plots, sizeof(plots), "%s/plots", dir);
    if (dahlsim_make_dirs(plots) != 0)
        return 1;
    int failures = 0;
    for (size_t k = 0; k < nkeys; k++) {
        int col = numeric_column(keys[k]);
        if (col == 0)
            continue;
        const char *metrics[] = {"makespan_s", "samples_per_s"};
        const int mcol[] = {16, 17};
        for (int m = 0; m < 2; m++) {
            char script[PATH_MAX + 64];
            snprintf(script, sizeof(script), "%s/%s-vs-%s.gp", plots, metrics[m], keys[k]);
            FILE *f = fopen(script, "w");
            if (f == NULL)
                return 1;
            /* One line per scheduler: gnuplot filters rows by the scheduler column (5). */
            fprintf(f,
                    "# %s against %s, one line per scheduler (from ../results.csv)\n"
                    "set datafile separator ','\n"
                    "set key outside right\n"
                    "set grid\n"
                    "set xlabel '%s'\n"
                    "set ylabel '%s'\n"
                    "set title '%s'\n"
                    "scheds = system(\"tail -n +2 '%s/results.csv' | cut -d, -f5 | sort -u | tr '\\\\n' ' '\")\n"
                    "do for [fmt in 'pngcairo svg'] {\n"
                    "  set terminal fmt size 900,540 noenhanced\n"
                    "  set output sprintf('%s/%s-vs-%s.%%s', fmt eq 'svg' ? 'svg' : 'png')\n"
                    "  plot for [sch in scheds] sprintf(\"< grep ',%%s,' '%s/results.csv' | sort -t, -k%d -g\", sch) "
                    "using %d:%d with linespoints title sch\n"
                    "}\n",
                    metrics[m], keys[k], keys[k], metrics[m], dahlsim_scenario_comment(s), dir, plots, metrics[m],
                    keys[k], dir, col, col, mcol[m]);
            fclose(f);
            char cmd[2 * PATH_MAX];
            snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>/dev/null", script);
            if (system(cmd) != 0)
                failures++;
        }
    }
    /* A node-count sweep: speedup, efficiency and the simulation's cost against nodes. */
    for (size_t k = 0; k < nkeys; k++)
        if (strcmp(keys[k], "nodes") == 0 && dahlsim_scaling_write(dir, s) != 0)
            failures++;
    return failures ? 1 : 0;
}

/* ---- running -------------------------------------------------------------------------------------------- */

static void progress(const struct sweep_opts *o, size_t done, size_t total, size_t running, double start)
{
    if (o->quiet)
        return;
    double el = dahlsim_mono_s() - start;
    int width = 30, filled = total ? (int)(width * done / total) : width;
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    char eta[32] = "--";
    if (done > 0 && done < total)
        snprintf(eta, sizeof(eta), "%.0f s", el / (double)done * (double)(total - done));
    fprintf(stderr, "%s[%s] %zu/%zu points, %zu running, %.0f s, ETA %s%s", isatty(STDERR_FILENO) ? "\r" : "",
            bar, done, total, running, el, eta, isatty(STDERR_FILENO) ? "\033[K" : "\n");
}

static int write_slurm(const struct sweep_opts *o, size_t n)
{
    char path[PATH_MAX + 32], self[PATH_MAX];
    snprintf(path, sizeof(path), "%s/sweep.slurm", o->out);
    if (dahlsim_self_exe(self, sizeof(self)) != 0)
        self[0] = '\0';
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        dahlsim_error("sweep: %s: %s", path, strerror(errno));
        return DAHLSIM_EXIT_FAILURE;
    }
    fprintf(f,
            "#!/bin/sh\n"
            "# Slurm job array for dahlsim sweep %s: one point per array task, each on one core.\n"
            "# Submit with: sbatch %s ; afterwards `dahlsim sweep %s --out %s` (same command, no --only)\n"
            "# adds nothing new and writes the CSV and plots. results.jsonl needs a file system where O_APPEND\n"
            "# writes are atomic (local or Lustre; not NFS).\n"
            "#SBATCH --job-name=dahlsim-sweep\n"
            "#SBATCH --array=0-%zu\n"
            "#SBATCH --cpus-per-task=1\n"
            "#SBATCH --output=%s/slurm-%%A_%%a.log\n"
            "exec '%s' sweep '%s' --out '%s' --only \"$SLURM_ARRAY_TASK_ID\" --quiet",
            o->file, path, o->file, o->out, n - 1, o->out, self, o->file, o->out);
    for (size_t i = 0; i < o->nsets; i++)
        fprintf(f, " --set '%s'", o->sets[i]);
    fputc('\n', f);
    fclose(f);
    chmod(path, 0755);
    printf("%s\n", path);
    return DAHLSIM_EXIT_OK;
}

int dahlsim_cmd_sweep(int argc, char **argv)
{
    struct sweep_opts o;
    int code = parse(argc, argv, &o);
    if (code >= 0)
        return code;
    struct dahlsim_scenario *s = dahlsim_scenario_load(o.file, o.sets, o.nsets);
    if (s == NULL)
        return DAHLSIM_EXIT_USAGE;
    size_t n = dahlsim_scenario_points(s);
    if (o.only >= 0 && (size_t)o.only >= n) {
        dahlsim_error("sweep: --only %ld: %s has %zu points (0 to %zu)", o.only, o.file, n, n - 1);
        dahlsim_scenario_destroy(s);
        return DAHLSIM_EXIT_USAGE;
    }
    int ret = dahlsim_make_dirs(o.out);
    if (ret != 0) {
        dahlsim_error("sweep: --out: cannot create %s: %s", o.out, strerror(-ret));
        dahlsim_scenario_destroy(s);
        return DAHLSIM_EXIT_USAGE;
    }
    if (o.emit_slurm) {
        code = write_slurm(&o, n);
        dahlsim_scenario_destroy(s);
        return code;
    }
    char jsonl[PATH_MAX + 32];
    snprintf(jsonl, sizeof(jsonl), "%s/results.jsonl", o.out);
    bool *done = calloc(n, sizeof(bool));
    pid_t *pids = calloc((size_t)o.jobs, sizeof(pid_t));
    size_t *slot_point = calloc((size_t)o.jobs, sizeof(size_t));
    if (done == NULL || pids == NULL || slot_point == NULL) {
        dahlsim_error("out of memory");
        code = DAHLSIM_EXIT_FAILURE;
        goto out;
    }
    long ndone = load_done(jsonl, s, done);
    if (ndone < 0) {
        code = DAHLSIM_EXIT_USAGE;
        goto out;
    }
    if (!o.quiet)
        fprintf(stderr, "dahlsim sweep: %s: %zu points, %ld already done, %ld job(s)%s%s\n", o.file, n, ndone, o.jobs,
                dahlsim_scenario_comment(s)[0] ? " — " : "", dahlsim_scenario_comment(s));
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    size_t next = 0, running = 0, finished = (size_t)ndone, failed = 0;
    size_t todo_total = o.only >= 0 ? (done[o.only] ? 0 : 1) : n - (size_t)ndone;
    size_t todo_done = 0;
    double start = dahlsim_mono_s();
    code = DAHLSIM_EXIT_OK;
    for (;;) {
        /* launch */
        while (!interrupted && running < (size_t)o.jobs && next < n) {
            size_t i = next++;
            if (done[i] || (o.only >= 0 && i != (size_t)o.only))
                continue;
            size_t slot = 0;
            while (pids[slot] != 0)
                slot++;
            char dir[PATH_MAX + 32];
            snprintf(dir, sizeof(dir), "%s/points/%04zu", o.out, i);
            pid_t pid = fork();
            if (pid < 0) {
                dahlsim_error("sweep: fork: %s", strerror(errno));
                interrupted = 1;
                code = DAHLSIM_EXIT_FAILURE;
                break;
            }
            if (pid == 0) {
                sigaction(SIGINT, &old_int, NULL);
                sigaction(SIGTERM, &old_term, NULL);
                char err[PATH_MAX + 48];
                if (dahlsim_make_dirs(dir) != 0)
                    _exit(DAHLSIM_EXIT_FAILURE);
                snprintf(err, sizeof(err), "%s/stderr.log", dir);
                int st = dahlsim_run_experiment(dahlsim_scenario_point(s, i), o.file, dir, err, true);
                _exit(st < 0 ? DAHLSIM_EXIT_FAILURE : st);
            }
            pids[slot] = pid;
            slot_point[slot] = i;
            running++;
        }
        progress(&o, todo_done, todo_total, running, start);
        if (running == 0)
            break;
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        size_t slot = 0;
        while (slot < (size_t)o.jobs && pids[slot] != pid)
            slot++;
        if (slot == (size_t)o.jobs)
            continue;
        pids[slot] = 0;
        running--;
        size_t i = slot_point[slot];
        char dir[PATH_MAX + 32];
        snprintf(dir, sizeof(dir), "%s/points/%04zu", o.out, i);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            char *line = point_record(s, i, dir);
            int w = line != NULL ? append_line(jsonl, line) : -EPROTO;
            free(line);
            if (w != 0) {
                dahlsim_error("sweep: %s: cannot record point %zu: %s", jsonl, i, strerror(-w));
                interrupted = 1;
                code = DAHLSIM_EXIT_FAILURE;
            } else {
                done[i] = true;
                finished++;
                todo_done++;
            }
        } else if (!interrupted) {
            failed++;
            todo_done++;
            if (!o.quiet && isatty(STDERR_FILENO))
                fputs("\r\033[K", stderr);
            dahlsim_error("sweep: point %zu (%s) failed (exit %d); see %s/stderr.log", i,
                          dahlsim_scenario_point(s, i)->point, WIFEXITED(status) ? WEXITSTATUS(status) : 128,
                          dir);
        }
    }
    if (!o.quiet && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (interrupted && code == DAHLSIM_EXIT_OK) {
        dahlsim_error("sweep: interrupted: %zu of %zu points recorded in %s; the same command resumes", finished, n,
                      jsonl);
        code = DAHLSIM_EXIT_FAILURE;
        goto out;
    }
    if (write_csv(o.out, s) != 0)
        dahlsim_error("sweep: cannot write %s/results.csv", o.out);
    else if (o.only < 0 && write_plots(o.out, s) != 0)
        fprintf(stderr, "dahlsim sweep: note: gnuplot is missing or failed; no plots in %s/plots\n", o.out);
    if (failed > 0) {
        dahlsim_error("sweep: %zu point(s) failed; the others are in %s", failed, jsonl);
        code = DAHLSIM_EXIT_FAILURE;
    } else if (!o.quiet && code == DAHLSIM_EXIT_OK) {
        fprintf(stderr, "dahlsim sweep: %zu/%zu points in %s, results.csv, plots/\n", finished, n, o.out);
    }
out:
    free(done);
    free(pids);
    free(slot_point);
    dahlsim_scenario_destroy(s);
    return code;
}

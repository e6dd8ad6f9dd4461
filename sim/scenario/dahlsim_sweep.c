/* Running a sweep (dahlsim_sweep.h, the command in sim/cmd/sweep.c). Each point of the grid runs as its
 * own dahlsim-sim process (up to --jobs at once), writes DIR/points/NNNN/results.json, and once it has
 * finished, one JSON line is appended to DIR/results.jsonl by this (single) process with one write() and
 * an fsync, so an interruption loses no finished point and never leaves half a line that counts. Re-running
 * the same command skips the points already in results.jsonl. At the end DIR/results.csv and gnuplot plots
 * (DIR/plots/, PNG and SVG: makespan and samples/s against each numeric swept key, one line per scheduler)
 * are rebuilt from results.jsonl. DIR/.sweep.lock keeps two sweeps from writing one directory at once
 * (dahlsim_sweep.h). Slurm job arrays (--emit-slurm, --slurm) are dahlsim_sweep_slurm.c's. */
#include "dahlsim_sweep.h"

#include "dahlsim_fs.h"
#include "dahlsim_proc.h"
#include "dahlsim_run.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* ---- results.jsonl ------------------------------------------------------------------------------------ */

/* Reads path's '\n'-terminated lines into done[] (dahlsim_sweep_load_done), stopping at a partial last line;
 * *good_bytes: where the complete lines end, *bytes: the bytes read. Returns the number done, or -1. */
static long scan_done(const char *path, const struct dahlsim_scenario *s, bool *done, long *good_bytes, long *bytes)
{
    *good_bytes = *bytes = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return errno == ENOENT ? 0 : -1;
    long n = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        *bytes += len;
        if (line[len - 1] != '\n')
            break; /* partial last line */
        cJSON *o = cJSON_Parse(line);
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(o, "point");
        const cJSON *label = cJSON_GetObjectItemCaseSensitive(o, "label");
        /* compared as doubles first: converting 1e300 to size_t is undefined */
        bool ok = cJSON_IsNumber(idx) && cJSON_IsString(label) && idx->valuedouble >= 0 &&
                  idx->valuedouble < (double)dahlsim_scenario_points(s) &&
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
        *good_bytes = *bytes;
    }
    free(line);
    fclose(f);
    return n;
}

long dahlsim_sweep_count_done(const char *path, const struct dahlsim_scenario *s, bool *done)
{
    long good_bytes, bytes;
    return scan_done(path, s, done, &good_bytes, &bytes);
}

long dahlsim_sweep_load_done(const char *path, const struct dahlsim_scenario *s, bool *done)
{
    long good_bytes, bytes;
    long n = scan_done(path, s, done, &good_bytes, &bytes);
    if (n >= 0 && good_bytes != bytes && truncate(path, good_bytes) != 0) {
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
    cJSON_AddNumberToObject(params, "grain", (double)x->grain);
    cJSON_AddNumberToObject(params, "pipeline_depth", (double)(x->pipeline_depth > 1 ? x->pipeline_depth : 1));
    cJSON_AddStringToObject(params, "pipeline_schedule", x->pipeline_schedule[0] ? x->pipeline_schedule : "fill");
    const cJSON *grain = cJSON_GetObjectItemCaseSensitive(r, "grain");
    if (cJSON_IsNumber(grain))
        cJSON_AddNumberToObject(o, "grain", grain->valuedouble);
    /* multi-node figures, and the simulation's own cost (wall_s), for scaling plots (dahlsim_scaling.h) */
    const cJSON *network = cJSON_GetObjectItemCaseSensitive(r, "network");
    const cJSON *allreduce = cJSON_GetObjectItemCaseSensitive(network, "allreduce_s_mean");
    if (cJSON_IsNumber(allreduce))
        cJSON_AddNumberToObject(o, "allreduce_s_mean", allreduce->valuedouble);
    /* several jobs: the order, and what moved between the host and the GPU */
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
    if (x->njobs > 0 && jobs != NULL) {
        cJSON_AddStringToObject(params, "job_order", x->job_order);
        cJSON_AddNumberToObject(params, "jobs", (double)x->njobs);
        cJSON_AddStringToObject(params, "job_contexts", x->job_contexts);
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(jobs, "total");
        const char *io[] = {"h2d_bytes", "d2h_bytes", "evictions", "gpu_wait_s"};
        for (size_t k = 0; k < sizeof(io) / sizeof(io[0]); k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(total, io[k]);
            if (cJSON_IsNumber(v))
                cJSON_AddNumberToObject(o, io[k], v->valuedouble);
        }
        const cJSON *busy = cJSON_GetObjectItemCaseSensitive(jobs, "gpu_busy_fraction");
        if (cJSON_IsNumber(busy))
            cJSON_AddNumberToObject(o, "gpu_busy_fraction", busy->valuedouble);
        /* StarPU's peak use of the GPU: without a limit, the jobs' footprint */
        double peak = 0;
        const cJSON *node;
        cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(r, "memory_nodes")) {
            const cJSON *kind = cJSON_GetObjectItemCaseSensitive(node, "kind");
            const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(node, "peak_bytes");
            if (cJSON_IsString(kind) && strcmp(kind->valuestring, "cuda") == 0 && cJSON_IsNumber(bytes))
                peak = bytes->valuedouble > peak ? bytes->valuedouble : peak;
        }
        cJSON_AddNumberToObject(o, "gpu_peak_bytes", peak);
    }
    const char *copy[] = {"makespan_s", "samples_per_s", "iterations", "wall_s"};
    for (size_t k = 0; k < sizeof(copy) / sizeof(copy[0]); k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, copy[k]);
        if (v != NULL)
            cJSON_AddItemToObject(o, copy[k], cJSON_Duplicate(v, true));
    }
    /* the interval the calibration's measured spread implies (dahlsim_interval.h); absent where unknown */
    const cJSON *interval = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "prediction_interval"),
                                                             "makespan_s");
    if (cJSON_GetArraySize(interval) == 2) {
        cJSON_AddNumberToObject(o, "makespan_lo_s", cJSON_GetArrayItem(interval, 0)->valuedouble);
        cJSON_AddNumberToObject(o, "makespan_hi_s", cJSON_GetArrayItem(interval, 1)->valuedouble);
    }
    /* The node's joules, simulated on a machine with power figures (docs/energy.md) */
    const cJSON *energy = cJSON_GetObjectItemCaseSensitive(r, "energy");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(energy, "total_j");
    const cJSON *per_sample = cJSON_GetObjectItemCaseSensitive(energy, "per_sample_j");
    if (cJSON_IsNumber(total) && cJSON_IsNumber(per_sample)) {
        cJSON_AddNumberToObject(o, "energy_j", total->valuedouble);
        cJSON_AddNumberToObject(o, "energy_per_sample_j", per_sample->valuedouble);
    }
    cJSON_AddStringToObject(o, "results", path);
    cJSON_Delete(r);
    char *line = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return line;
}

/* Fault injection for tests/test_faults.c: DAHLSIM_FAULT=torn-record:K kills this process (SIGKILL) after
 * writing half of its K-th record (1-based), as a kill -9 in the middle of that write would leave the file. */
static void fault_torn_record(int fd, const char *buf, size_t len)
{
    static long records;
    const char *f = getenv("DAHLSIM_FAULT");
    long k;
    records++;
    if (f != NULL && sscanf(f, "torn-record:%ld", &k) == 1 && k == records) {
        ssize_t w = write(fd, buf, len / 2);
        (void)w;
        fsync(fd);
        raise(SIGKILL);
    }
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
    fault_torn_record(fd, buf, len + 1);
    ssize_t w = write(fd, buf, len + 1);
    int ret = w == (ssize_t)(len + 1) ? 0 : -EIO;
    free(buf);
    if (fsync(fd) != 0 && ret == 0)
        ret = -errno;
    close(fd);
    return ret;
}

/* ---- running -------------------------------------------------------------------------------------------- */

static void progress(const struct dahlsim_sweep_opts *o, size_t done, size_t total, size_t running, double start)
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

/* A sweep under way: the points done, the processes running (pids[slot], 0 for a free slot, running
 * point slot_point[slot]) and the counts for the progress bar and the final lines. */
struct sweep_run {
    const struct dahlsim_sweep_opts *o;
    const struct dahlsim_scenario *s;
    char jsonl[PATH_MAX + 32];
    size_t n; /* points in the grid */
    bool *done;
    pid_t *pids;
    size_t *slot_point;
    size_t next, running, finished, failed, todo_total, todo_done;
    struct sigaction old_int, old_term;
    int code;
};

/* In the child of the sweep (pid parent): simulates point i into dir and exits with the simulation's
 * status. It dies with the sweep, and the simulation with it (dahlsim_proc.h): a sweep killed with kill -9
 * leaves nothing writing into its directory, and no lock held. */
static void __attribute__((noreturn)) run_point(const struct sweep_run *r, size_t i, const char *dir, pid_t parent)
{
    dahlsim_proc_die_with((long)parent);
    sigaction(SIGINT, &r->old_int, NULL);
    sigaction(SIGTERM, &r->old_term, NULL);
    char err[PATH_MAX + 48];
    if (dahlsim_make_dirs(dir) != 0)
        _exit(DAHLSIM_EXIT_FAILURE);
    snprintf(err, sizeof(err), "%s/stderr.log", dir);
    int st = dahlsim_run_experiment(dahlsim_scenario_point(r->s, i), r->o->file, dir, err, true);
    _exit(st < 0 ? DAHLSIM_EXIT_FAILURE : st);
}

/* Starts the next points to run until --jobs run at once or none is left. */
static void launch(struct sweep_run *r)
{
    while (!interrupted && r->running < (size_t)r->o->jobs && r->next < r->n) {
        size_t i = r->next++;
        if (r->done[i] || (r->o->only >= 0 && i != (size_t)r->o->only))
            continue;
        size_t slot = 0;
        while (r->pids[slot] != 0)
            slot++;
        char dir[PATH_MAX + 32];
        snprintf(dir, sizeof(dir), "%s/points/%04zu", r->o->out, i);
        pid_t self = getpid(), pid = fork();
        if (pid < 0) {
            dahlsim_error("sweep: fork: %s", strerror(errno));
            interrupted = 1;
            r->code = -EIO;
            break;
        }
        if (pid == 0)
            run_point(r, i, dir, self);
        r->pids[slot] = pid;
        r->slot_point[slot] = i;
        r->running++;
    }
}

/* Waits for a point to finish and records it (or its failure). False when there is nothing to wait for. */
static bool reap(struct sweep_run *r)
{
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0)
        return errno == EINTR;
    size_t slot = 0;
    while (slot < (size_t)r->o->jobs && r->pids[slot] != pid)
        slot++;
    if (slot == (size_t)r->o->jobs)
        return true;
    r->pids[slot] = 0;
    r->running--;
    size_t i = r->slot_point[slot];
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/points/%04zu", r->o->out, i);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        char *line = point_record(r->s, i, dir);
        int w = line != NULL ? append_line(r->jsonl, line) : -EPROTO;
        free(line);
        if (w != 0) {
            dahlsim_error("sweep: %s: cannot record point %zu: %s", r->jsonl, i, strerror(-w));
            interrupted = 1;
            r->code = -EIO;
        } else {
            r->done[i] = true;
            r->finished++;
            r->todo_done++;
        }
    } else if (!interrupted) {
        r->failed++;
        r->todo_done++;
        if (!r->o->quiet && isatty(STDERR_FILENO))
            fputs("\r\033[K", stderr);
        dahlsim_error("sweep: point %zu (%s) failed (exit %d); see %s/stderr.log", i,
                      dahlsim_scenario_point(r->s, i)->point, WIFEXITED(status) ? WEXITSTATUS(status) : 128, dir);
    }
    return true;
}

int dahlsim_sweep_write_outputs(const char *dir, const struct dahlsim_scenario *s, bool plots)
{
    int csv = dahlsim_sweep_write_csv(dir, s);
    if (csv != 0)
        dahlsim_error("sweep: cannot write %s/results.csv: %s", dir, strerror(-csv));
    else if (plots && dahlsim_sweep_write_plots(dir, s) != 0)
        fprintf(stderr, "dahlsim sweep: note: gnuplot is missing or failed; no plots in %s/plots\n", dir);
    return csv;
}

/* After the last point: the CSV, the plots and the closing lines. Returns 0, or -EIO when a point failed
 * or the sweep was interrupted. */
static int finish(const struct sweep_run *r)
{
    const struct dahlsim_sweep_opts *o = r->o;
    if (interrupted && r->code == 0) {
        dahlsim_error("sweep: interrupted: %zu of %zu points recorded in %s; the same command resumes", r->finished,
                      r->n, r->jsonl);
        return -EIO;
    }
    int csv = dahlsim_sweep_write_outputs(o->out, r->s, o->only < 0);
    if (r->failed > 0) {
        dahlsim_error("sweep: %zu point(s) failed; the others are in %s", r->failed, r->jsonl);
        return -EIO;
    }
    if (!o->quiet && r->code == 0 && csv == 0)
        fprintf(stderr, "dahlsim sweep: %zu/%zu points in %s, results.csv, plots/\n", r->finished, r->n, o->out);
    return r->code != 0 ? r->code : csv != 0 ? -EIO : 0;
}

/* Runs the points r->done does not have yet, with SIGINT and SIGTERM caught: they stop the launching. */
static int run_points(struct sweep_run *r)
{
    const struct dahlsim_sweep_opts *o = r->o;
    long ndone = dahlsim_sweep_load_done(r->jsonl, r->s, r->done);
    if (ndone < 0)
        return -EINVAL;
    if (!o->quiet)
        fprintf(stderr, "dahlsim sweep: %s: %zu points, %ld already done, %ld job(s)%s%s\n", o->file, r->n, ndone,
                o->jobs, dahlsim_scenario_comment(r->s)[0] ? " — " : "", dahlsim_scenario_comment(r->s));
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &r->old_int);
    sigaction(SIGTERM, &sa, &r->old_term);
    r->finished = (size_t)ndone;
    r->todo_total = o->only >= 0 ? (r->done[o->only] ? 0 : 1) : r->n - (size_t)ndone;
    double start = dahlsim_mono_s();
    r->code = 0;
    for (;;) {
        launch(r);
        progress(o, r->todo_done, r->todo_total, r->running, start);
        if (r->running == 0 || !reap(r))
            break;
    }
    if (!o->quiet && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    sigaction(SIGINT, &r->old_int, NULL);
    sigaction(SIGTERM, &r->old_term, NULL);
    return finish(r);
}

/* ---- one writer per directory --------------------------------------------------------------------------- */

int dahlsim_sweep_lock_file(const char *path, int how)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return -errno;
    if (flock(fd, how | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        return e == EWOULDBLOCK ? -EWOULDBLOCK : -e;
    }
    return fd;
}

int dahlsim_sweep_lock(const struct dahlsim_sweep_opts *o, int fds[2])
{
    char path[PATH_MAX + 48];
    fds[0] = fds[1] = -1;
    snprintf(path, sizeof(path), "%s/.sweep.lock", o->out);
    int ret = dahlsim_sweep_lock_file(path, o->only >= 0 ? LOCK_SH : LOCK_EX);
    if (ret >= 0) {
        fds[0] = ret;
        ret = 0;
    }
    if (ret == 0 && o->only >= 0) {
        snprintf(path, sizeof(path), "%s/points", o->out);
        ret = dahlsim_make_dirs(path);
        snprintf(path, sizeof(path), "%s/points/%04ld.lock", o->out, o->only);
        if (ret == 0 && (ret = dahlsim_sweep_lock_file(path, LOCK_EX)) >= 0) {
            fds[1] = ret;
            ret = 0;
        }
    }
    if (ret == -EWOULDBLOCK) {
        dahlsim_error("sweep: another dahlsim sweep is writing %s (it holds %s)", o->out, path);
        fprintf(stderr, "hint: wait for it to end, or give this one another --out\n");
        ret = -EBUSY;
    } else if (ret != 0) {
        dahlsim_error("sweep: cannot lock %s: %s", path, strerror(-ret));
    }
    if (ret != 0 && fds[0] >= 0) {
        close(fds[0]);
        fds[0] = -1;
    }
    return ret;
}

void dahlsim_sweep_unlock(int fds[2])
{
    for (int k = 0; k < 2; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    fds[0] = fds[1] = -1;
}

int dahlsim_sweep_run(const struct dahlsim_sweep_opts *o, const struct dahlsim_scenario *s)
{
    int locks[2];
    int ret = dahlsim_sweep_lock(o, locks);
    if (ret != 0)
        return ret;
    struct sweep_run r = {.o = o, .s = s, .n = dahlsim_scenario_points(s)};
    snprintf(r.jsonl, sizeof(r.jsonl), "%s/results.jsonl", o->out);
    r.done = calloc(r.n, sizeof(bool));
    r.pids = calloc((size_t)o->jobs, sizeof(pid_t));
    r.slot_point = calloc((size_t)o->jobs, sizeof(size_t));
    int code;
    if (r.done == NULL || r.pids == NULL || r.slot_point == NULL) {
        dahlsim_error("out of memory");
        code = -ENOMEM;
    } else {
        code = run_points(&r);
    }
    free(r.done);
    free(r.pids);
    free(r.slot_point);
    dahlsim_sweep_unlock(locks);
    return code;
}

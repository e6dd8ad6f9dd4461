/* Sweeps on a Slurm cluster (dahlsim_sweep.h): DIR/sweep.slurm, a job array of one point per task, each task
 * `dahlsim sweep FILE --out DIR --only I` appending its record to DIR/results.jsonl as a local sweep does.
 * --emit-slurm writes it for every point; --slurm writes it for the points results.jsonl lacks, submits it
 * with sbatch, polls squeue until no task is left, then writes results.csv and the plots with the local
 * sweep's functions. The job id stays in DIR/slurm-job: a re-run after an interrupted wait waits for that job
 * instead of submitting it twice, and a re-run after a cancelled or failed job submits the missing points. */
#include "dahlsim_sweep.h"

#include "dahlsim_fs.h"
#include "dahlsim_spawn.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The job script's paths, absolute so that it runs from any submission directory. */
struct slurm_paths {
    char dir[PATH_MAX], file[PATH_MAX], self[PATH_MAX];
    char script[PATH_MAX + 16];
};

/* A --slurm sweep under way. */
struct slurm_sweep {
    const struct dahlsim_sweep_opts *o;
    const struct dahlsim_scenario *s;
    size_t n; /* points in the grid */
    struct slurm_paths p;
    char jobfile[PATH_MAX + 16], jsonl[PATH_MAX + 16], poll_err[PATH_MAX + 32];
    char sbatch[PATH_MAX], squeue[PATH_MAX];
    char job[32]; /* the job id, "" for none */
    bool *done;
};

/* ---- the job script ------------------------------------------------------------------------------------- */

long dahlsim_sweep_array_spec(const bool *done, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    long count = 0;
    if (size == 0)
        return -1;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        size_t j = i;
        while (j + 1 < n && !done[j + 1])
            j++;
        int w = j == i ? snprintf(buf + used, size - used, "%s%zu", used ? "," : "", i)
                       : snprintf(buf + used, size - used, "%s%zu-%zu", used ? "," : "", i, j);
        if (w < 0 || (size_t)w >= size - used)
            return -1;
        used += (size_t)w;
        count += (long)(j - i + 1);
        i = j;
    }
    return count;
}

/* s as one shell word: in single quotes, each ' written '\''. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s != '\0'; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* The absolute paths of o->out (which exists), o->file and this executable. Returns 0, or -EIO after the
 * error line. */
static int paths_init(const struct dahlsim_sweep_opts *o, struct slurm_paths *p)
{
    if (realpath(o->out, p->dir) == NULL || realpath(o->file, p->file) == NULL) {
        dahlsim_error("sweep: cannot resolve %s or %s: %s", o->out, o->file, strerror(errno));
        return -EIO;
    }
    int ret = dahlsim_self_exe(p->self, sizeof(p->self));
    if (ret != 0) {
        dahlsim_error("sweep: cannot tell where this dahlsim is (/proc/self/exe): %s", strerror(-ret));
        return -EIO;
    }
    snprintf(p->script, sizeof(p->script), "%s/sweep.slurm", p->dir);
    return 0;
}

/* p->script: a job array of the points in array (a Slurm array spec), one per task. Returns 0, or -EIO
 * after the error line. */
static int write_script(const struct dahlsim_sweep_opts *o, const struct slurm_paths *p, const char *array)
{
    FILE *f = fopen(p->script, "w");
    if (f == NULL) {
        dahlsim_error("sweep: %s: %s", p->script, strerror(errno));
        return -EIO;
    }
    fprintf(f,
            "#!/bin/sh\n"
            "# Slurm job array of a dahlsim sweep, one point per array task, each on one core.\n"
            "#   scenario: %s\n"
            "#   records:  %s/results.jsonl, appended by each task (a file system where O_APPEND writes\n"
            "#             are atomic: local or Lustre, not NFS)\n"
            "# `dahlsim sweep FILE --out DIR --slurm` submits it, waits for it and collects its points; after a\n"
            "# plain sbatch of it, the same sweep command without --slurm adds nothing and writes the CSV and plots.\n"
            "#SBATCH --job-name=dahlsim-sweep\n"
            "#SBATCH --array=%s\n"
            "#SBATCH --cpus-per-task=1\n"
            "#SBATCH --output=",
            p->file, p->dir, array);
    for (const char *c = p->dir; *c != '\0'; c++) {
        if (*c == '%') /* a literal % in Slurm's file name pattern */
            fputc('%', f);
        fputc(*c, f);
    }
    fputs("/slurm-%A_%a.log\nexec ", f);
    put_quoted(f, p->self);
    fputs(" sweep ", f);
    put_quoted(f, p->file);
    fputs(" --out ", f);
    put_quoted(f, p->dir);
    fputs(" --only \"$SLURM_ARRAY_TASK_ID\" --quiet", f);
    for (size_t i = 0; i < o->nsets; i++) {
        fputs(" --set ", f);
        put_quoted(f, o->sets[i]);
    }
    fputc('\n', f);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        dahlsim_error("sweep: cannot write %s", p->script);
        return -EIO;
    }
    chmod(p->script, 0755);
    return 0;
}

int dahlsim_sweep_write_slurm(const struct dahlsim_sweep_opts *o, size_t n)
{
    struct slurm_paths p;
    int ret = paths_init(o, &p);
    if (ret != 0)
        return ret;
    char array[64];
    snprintf(array, sizeof(array), n > 1 ? "0-%zu" : "0", n - 1);
    if ((ret = write_script(o, &p, array)) != 0)
        return ret;
    printf("%s\n", p.script);
    return 0;
}

/* ---- DIR/slurm-job -------------------------------------------------------------------------------------- */

/* r->job from DIR/slurm-job ("" without the file). Returns 0, or -EINVAL / -EIO after the error line. */
static int job_load(struct slurm_sweep *r)
{
    r->job[0] = '\0';
    char *text = dahlsim_read_text(r->jobfile, 256);
    if (text == NULL) {
        if (errno == ENOENT)
            return 0;
        dahlsim_error("sweep: %s: %s", r->jobfile, strerror(errno));
        return -EIO;
    }
    size_t len = strspn(text, "0123456789");
    bool ok = len > 0 && len < sizeof(r->job) && text[len + strspn(text + len, " \n")] == '\0';
    if (ok) {
        memcpy(r->job, text, len);
        r->job[len] = '\0';
    } else {
        dahlsim_error("sweep: %s: expected a Slurm job id, got \"%.*s\"", r->jobfile, (int)strcspn(text, "\n"),
                      text);
        fprintf(stderr, "hint: remove it if no job of this sweep is queued; the command then submits anew\n");
    }
    free(text);
    return ok ? 0 : -EINVAL;
}

/* r->job into DIR/slurm-job (a temporary file renamed over it). Returns 0, or -EIO after the error line. */
static int job_save(const struct slurm_sweep *r)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s/.slurm-job.tmp", r->p.dir);
    FILE *f = fopen(tmp, "w");
    bool ok = f != NULL && fprintf(f, "%s\n", r->job) > 0;
    if (f != NULL && fclose(f) != 0)
        ok = false;
    if (!ok || rename(tmp, r->jobfile) != 0) {
        dahlsim_error("sweep: cannot record job %s in %s: %s", r->job, r->jobfile, strerror(errno));
        unlink(tmp);
        return -EIO;
    }
    return 0;
}

/* ---- the queue ------------------------------------------------------------------------------------------ */

/* r->job's array tasks still in the queue. */
struct queue_state {
    size_t pending, running; /* running: any state but pending (running, completing, ...) */
};

/* Asks squeue about r->job: *q counts its tasks in the queue; with mine, only those whose command is r's
 * script (for the id DIR/slurm-job names: a job of that id running something else is not this sweep's, the
 * controller's ids restart with its state). Returns 0; 1 when squeue does not know the job (long finished);
 * -1 when squeue failed (its first line of error in err). */
static int queue_poll(const struct slurm_sweep *r, bool mine, struct queue_state *q, char *err, size_t err_size)
{
    *q = (struct queue_state){0, 0};
    err[0] = '\0';
    char jobs[64];
    snprintf(jobs, sizeof(jobs), "--jobs=%s", r->job);
    char *argv[] = {(char *)r->squeue, "-h", "-r", jobs, "-o", "%i %t %o", NULL};
    size_t cap = (size_t)1 << 20;
    char *out = malloc(cap);
    if (out == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    int st = dahlsim_spawn_err(argv, NULL, 0, out, cap, r->poll_err);
    if (st != 0) {
        char *text = dahlsim_read_text(r->poll_err, 4096);
        snprintf(err, err_size, "%.*s", text ? (int)strcspn(text, "\n") : 0, text ? text : "");
        bool unknown = text != NULL && strstr(text, "Invalid job id") != NULL;
        if (err[0] == '\0')
            snprintf(err, err_size, "squeue exited with status %d", st);
        free(text);
        free(out);
        return unknown ? 1 : -1;
    }
    for (char *line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char *state = strchr(line, ' ');
        char *command = state != NULL ? strchr(state + 1, ' ') : NULL;
        if (command == NULL || (mine && strcmp(command + 1, r->p.script) != 0))
            continue;
        if (strncmp(state + 1, "PD ", 3) == 0)
            q->pending++;
        else
            q->running++;
    }
    free(out);
    return 0;
}

/* One progress line on stderr: rewritten in place on a terminal, else printed when something changed. */
static void progress(const struct slurm_sweep *r, const struct queue_state *q, long recorded, double start,
                     struct queue_state *last, long *last_recorded)
{
    bool tty = isatty(STDERR_FILENO);
    if (r->o->quiet || (!tty && q->pending == last->pending && q->running == last->running &&
                        recorded == *last_recorded))
        return;
    *last = *q;
    *last_recorded = recorded;
    int width = 30, filled = r->n ? (int)(width * (size_t)recorded / r->n) : width;
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "%s[%s] %ld/%zu points, job %s: %zu running, %zu pending, %.0f s%s", tty ? "\r" : "", bar,
            recorded, r->n, r->job, q->running, q->pending, dahlsim_mono_s() - start, tty ? "\033[K" : "\n");
}

/* Sleeps s seconds, or less when a signal comes. */
static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Polls squeue every --poll seconds until no task of r->job is left in the queue. Returns 0, or -EIO after
 * the message (SIGINT or SIGTERM, now or since submitting: the job goes on; squeue failing for a minute). */
static int wait_job(struct slurm_sweep *r)
{
    double start = dahlsim_mono_s(), failing_since = -1;
    struct queue_state q, last = {SIZE_MAX, SIZE_MAX};
    long last_recorded = -1;
    bool counting = true;
    int ret = 0;
    while (!interrupted) {
        char err[512];
        int st = queue_poll(r, false, &q, err, sizeof(err));
        if (interrupted || st == 1 || (st == 0 && q.pending + q.running == 0))
            break;
        if (st < 0 && failing_since < 0) {
            failing_since = dahlsim_mono_s();
            fprintf(stderr, "dahlsim sweep: note: squeue failed (%s); trying again for a minute\n", err);
        } else if (st < 0 && dahlsim_mono_s() - failing_since > 60) {
            dahlsim_error("sweep: squeue has failed for a minute (%s); Slurm job %s goes on, and the same "
                          "command waits for it again",
                          err, r->job);
            ret = -EIO;
            break;
        } else if (st == 0) {
            failing_since = -1;
            memset(r->done, 0, r->n * sizeof(bool));
            long recorded = counting ? dahlsim_sweep_count_done(r->jsonl, r->s, r->done) : -1;
            counting = recorded >= 0;
            progress(r, &q, recorded > 0 ? recorded : 0, start, &last, &last_recorded);
        }
        sleep_s(r->o->poll_s);
    }
    if (!r->o->quiet && isatty(STDERR_FILENO) && last_recorded >= 0)
        fputc('\n', stderr);
    if (interrupted) {
        dahlsim_error("sweep: stopped waiting; Slurm job %s goes on (scancel %s stops it); the same command "
                      "waits for it again and collects its points",
                      r->job, r->job);
        ret = -EIO;
    }
    return ret;
}

/* ---- submitting and collecting -------------------------------------------------------------------------- */

/* sbatch --parsable [--sbatch-arg...] SCRIPT: r->job from its output. Returns 0, or -EIO after the error. */
static int sbatch(struct slurm_sweep *r)
{
    const struct dahlsim_sweep_opts *o = r->o;
    char *argv[DAHLSIM_SWEEP_MAX_SBATCH_ARGS + 4];
    size_t k = 0;
    argv[k++] = r->sbatch;
    argv[k++] = "--parsable";
    for (size_t i = 0; i < o->nsbatch_args; i++)
        argv[k++] = (char *)o->sbatch_args[i];
    argv[k++] = r->p.script;
    argv[k] = NULL;
    char out[256];
    int st = dahlsim_spawn(argv, NULL, 0, out, sizeof(out));
    size_t len = st == 0 ? strspn(out, "0123456789") : 0; /* "JOBID" or "JOBID;CLUSTER" */
    if (len == 0 || len >= sizeof(r->job)) {
        dahlsim_error("sweep: sbatch %s failed (exit %d)%s%.*s", r->p.script, st, st == 0 ? "; it printed: " : "",
                      st == 0 ? (int)strcspn(out, "\n") : 0, out);
        if (r->n > 1001)
            fprintf(stderr, "hint: Slurm's MaxArraySize (1001 by default) caps array indices at 1000\n");
        return -EIO;
    }
    memcpy(r->job, out, len);
    r->job[len] = '\0';
    return 0;
}

/* Takes the sweep's lock and reads which points results.jsonl holds into r->done (*ndone: how many, or -1
 * after an error message). Returns 0 with the lock held (dahlsim_sweep_unlock), or a negative errno. */
static int reload_locked(struct slurm_sweep *r, int locks[2], long *ndone)
{
    int ret = dahlsim_sweep_lock(r->o, locks);
    if (ret != 0)
        return ret;
    memset(r->done, 0, r->n * sizeof(bool));
    *ndone = dahlsim_sweep_load_done(r->jsonl, r->s, r->done);
    return 0;
}

/* Submits the points results.jsonl lacks (read under the sweep's lock, released before submitting: the
 * tasks share it). Returns 0 with r->job set, 1 when no point is missing, or a negative errno after the
 * message. */
static int submit(struct slurm_sweep *r)
{
    const struct dahlsim_sweep_opts *o = r->o;
    int locks[2];
    long ndone;
    int ret = reload_locked(r, locks, &ndone);
    if (ret != 0)
        return ret;
    dahlsim_sweep_unlock(locks);
    if (ndone < 0)
        return -EINVAL;
    if (!o->quiet)
        fprintf(stderr, "dahlsim sweep: %s: %zu points, %ld already done%s%s\n", o->file, r->n, ndone,
                dahlsim_scenario_comment(r->s)[0] ? " — " : "", dahlsim_scenario_comment(r->s));
    if ((size_t)ndone == r->n)
        return 1;
    size_t cap = r->n * 24 + 16;
    char *array = malloc(cap);
    if (array == NULL) {
        dahlsim_error("out of memory");
        return -ENOMEM;
    }
    long missing = dahlsim_sweep_array_spec(r->done, r->n, array, cap);
    ret = write_script(o, &r->p, array);
    if (ret == 0 && interrupted) {
        dahlsim_error("sweep: interrupted before submitting; nothing submitted");
        ret = -EIO;
    }
    if (ret == 0)
        ret = sbatch(r);
    if (ret == 0)
        ret = job_save(r);
    if (ret == 0) {
        printf("%s\n", r->job);
        fflush(stdout);
        if (!o->quiet)
            fprintf(stderr, "dahlsim sweep: submitted Slurm job %s: %ld point(s) (array %s), logs %s/slurm-%s_*.log\n",
                    r->job, missing, array, r->p.dir, r->job);
    }
    free(array);
    return ret;
}

/* After the job: results.csv from results.jsonl (under the sweep's lock) and, when every point is there,
 * the plots. Returns 0, or -EIO when points are missing (after saying which and what to do). */
static int collect(struct slurm_sweep *r)
{
    const struct dahlsim_sweep_opts *o = r->o;
    int locks[2];
    long ndone;
    int ret = reload_locked(r, locks, &ndone);
    if (ret != 0)
        return ret;
    int csv = ndone < 0 ? 0 : dahlsim_sweep_write_outputs(o->out, r->s, (size_t)ndone == r->n);
    dahlsim_sweep_unlock(locks);
    if (ndone < 0)
        return -EINVAL;
    if ((size_t)ndone < r->n) {
        size_t cap = r->n * 24 + 16;
        char *array = malloc(cap);
        if (array != NULL)
            dahlsim_sweep_array_spec(r->done, r->n, array, cap);
        dahlsim_error("sweep: %zu of %zu points missing after Slurm job %s (%s: cancelled, failed or lost; logs "
                      "%s/slurm-%s_<point>.log); the same command submits only the missing ones",
                      r->n - (size_t)ndone, r->n, r->job, array != NULL ? array : "?", r->p.dir, r->job);
        free(array);
        return -EIO;
    }
    if (csv != 0)
        return -EIO;
    if (!o->quiet)
        fprintf(stderr, "dahlsim sweep: %zu/%zu points in %s, results.csv, plots/\n", r->n, r->n, o->out);
    return 0;
}

/* sbatch and squeue on PATH. Returns 0, or -ENOENT after the error and hint. */
static int find_tools(struct slurm_sweep *r)
{
    const char *missing = !dahlsim_find_on_path("sbatch", r->sbatch, sizeof(r->sbatch))   ? "sbatch"
                          : !dahlsim_find_on_path("squeue", r->squeue, sizeof(r->squeue)) ? "squeue"
                                                                                          : NULL;
    if (missing == NULL)
        return 0;
    dahlsim_error("sweep: --slurm: %s is not on PATH", missing);
    fprintf(stderr, "hint: install Slurm's client commands (Debian: slurm-client), or write the job array with "
                    "--emit-slurm and submit it where sbatch is\n");
    return -ENOENT;
}

/* Takes DIR/.slurm.lock for the driver's life: one --slurm command per sweep directory at a time. Returns
 * the descriptor, or a negative errno after the error line. */
static int lock_driver(const struct slurm_sweep *r)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/.slurm.lock", r->p.dir);
    int fd = dahlsim_sweep_lock_file(path, LOCK_EX);
    if (fd == -EWOULDBLOCK) {
        dahlsim_error("sweep: another dahlsim sweep --slurm is driving %s (it holds %s)", r->o->out, path);
        fprintf(stderr, "hint: wait for it to end, or give this one another --out\n");
        return -EBUSY;
    }
    if (fd < 0)
        dahlsim_error("sweep: cannot lock %s: %s", path, strerror(-fd));
    return fd;
}

/* The job of DIR/slurm-job still queued (r->job kept), or a new one submitted; then waited for. Returns 0
 * once no task is queued, 1 when nothing was missing, or a negative errno after the message. */
static int submit_or_rejoin(struct slurm_sweep *r)
{
    int ret = job_load(r);
    if (ret != 0)
        return ret;
    if (r->job[0] != '\0') {
        struct queue_state q;
        char err[512];
        int st = queue_poll(r, true, &q, err, sizeof(err));
        if (st < 0) {
            dahlsim_error("sweep: cannot tell whether Slurm job %s (%s) is still queued: %s", r->job, r->jobfile,
                          err);
            return -EIO;
        }
        if (st == 0 && q.pending + q.running > 0) {
            if (!r->o->quiet)
                fprintf(stderr, "dahlsim sweep: Slurm job %s (%s) is still queued: waiting for it\n", r->job,
                        r->jobfile);
            return wait_job(r);
        }
    }
    ret = submit(r);
    return ret == 0 ? wait_job(r) : ret;
}

int dahlsim_sweep_slurm(const struct dahlsim_sweep_opts *o, const struct dahlsim_scenario *s)
{
    struct slurm_sweep *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        dahlsim_error("out of memory");
        return -ENOMEM;
    }
    r->o = o;
    r->s = s;
    r->n = dahlsim_scenario_points(s);
    int ret = find_tools(r);
    if (ret == 0)
        ret = paths_init(o, &r->p);
    int lock = ret == 0 ? lock_driver(r) : -1;
    if (ret == 0 && lock < 0)
        ret = lock;
    r->done = ret == 0 ? calloc(r->n, sizeof(bool)) : NULL;
    if (ret == 0 && r->done == NULL) {
        dahlsim_error("out of memory");
        ret = -ENOMEM;
    }
    if (ret == 0) {
        snprintf(r->jobfile, sizeof(r->jobfile), "%s/slurm-job", r->p.dir);
        snprintf(r->jsonl, sizeof(r->jsonl), "%s/results.jsonl", r->p.dir);
        snprintf(r->poll_err, sizeof(r->poll_err), "%s/.squeue.err", r->p.dir);
        /* caught from before sbatch on: a job submitted is recorded and named whenever the signal comes */
        struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        ret = submit_or_rejoin(r);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        if (ret == 0 || ret == 1)
            ret = collect(r);
    }
    if (lock >= 0)
        close(lock);
    free(r->done);
    free(r);
    return ret;
}

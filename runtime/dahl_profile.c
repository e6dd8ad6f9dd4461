/* Task records, bus counters and memory peaks from StarPU's profiling (see dahl_profile.h). The codelet
 * callback runs on the worker that executed the task, right after it: it samples every memory node's use
 * and, when traces are asked for, copies the task's profiling info into a record. Which training step a task
 * belongs to comes from StarPU's job ids, which grow in creation order: the submitting thread notes the next
 * job id at the start of every step, so a task's step is found by bisection (StarPU's own REDUX tasks, created
 * while the graph runs, go to the step in progress when they ran). */
#include "dahl_profile_starpu.h"

#include "dahl_array.h"
#include "dahl_light.h"
#include "dahl_starpu.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define MAX_NODES STARPU_MAXNODES

struct step_mark {
    uint64_t first_job; /* jobs created from here on belong to step */
    long step;          /* -1: not training */
};

struct label {
    starpu_data_handle_t handle; /* NULL: free slot */
    int layer;
    int job;
};

static struct {
    pthread_mutex_t lock; /* guards everything below except the atomics */
    struct dahl_profile_conf conf;
    char fxt_dir[4096];
    bool fxt_recording;
    struct dahl_profile_task *tasks;
    size_t ntasks, tasks_cap;
    struct step_mark *marks;
    size_t nmarks, marks_cap;
    long steps_ended;     /* training steps completed so far (dahl_profile_step_end) */
    struct label *labels; /* open addressing, power-of-two capacity */
    size_t nlabels, labels_cap;
    int64_t starpu_peak[MAX_NODES];
    int64_t app_peak;
    int current_job;                                    /* labels made now belong to it */
    struct dahl_profile_job jobs[DAHL_PROFILE_MAX_JOBS + 1]; /* the last: no job */
} prof = {.lock = PTHREAD_MUTEX_INITIALIZER};

static atomic_llong app_bytes;

int dahl_profile_setup(const struct dahl_profile_conf *conf)
{
    if (conf->first_step >= 0 && conf->last_step >= 0 && conf->last_step < conf->first_step)
        return -EINVAL;
    pthread_mutex_lock(&prof.lock);
    prof.conf = *conf;
    prof.fxt_dir[0] = '\0';
    if (conf->fxt_dir != NULL) {
        snprintf(prof.fxt_dir, sizeof(prof.fxt_dir), "%s", conf->fxt_dir);
        prof.conf.fxt_dir = prof.fxt_dir;
    }
    pthread_mutex_unlock(&prof.lock);
    /* StarPU-SimGrid gives main RAM no size, and then reports no use for it (starpu_memory_get_available says
     * -1): a limit far above any simulated run makes its memory manager's count readable, changing nothing. */
    if (DAHL_SIMULATED && getenv("STARPU_LIMIT_CPU_MEM") == NULL && getenv("STARPU_LIMIT_CPU_NUMA_MEM") == NULL)
        setenv("STARPU_LIMIT_CPU_MEM", "1048576", 1); /* MiB: 1 TiB */
    if (conf->fxt_dir != NULL) {
        char prefix[4200];
        snprintf(prefix, sizeof(prefix), "%s/", conf->fxt_dir);
        /* dahl_engine_start turns FxT off only when the environment says nothing: say "on" here. */
        setenv("STARPU_FXT_TRACE", "1", 1);
        setenv("STARPU_FXT_PREFIX", prefix, 1);
        setenv("STARPU_FXT_SUFFIX", "starpu.fxt", 1);
        /* StarPU's own conversion at shutdown would write into the current directory: we convert ourselves. */
        unsetenv("STARPU_GENERATE_TRACE");
        /* With a window, recording starts when the step before it has completed (dahl_profile_step_end). */
        starpu_fxt_autostart_profiling(conf->first_step <= 0);
        prof.fxt_recording = conf->first_step <= 0;
    }
    return 0;
}

/* ---- labels ------------------------------------------------------------------------------------------- */

static size_t label_slot(const struct label *labels, size_t cap, starpu_data_handle_t h)
{
    uintptr_t x = (uintptr_t)h;
    x ^= x >> 17;
    x *= 0x9e3779b97f4a7c15ULL;
    size_t i = (size_t)(x >> 7) & (cap - 1);
    while (labels[i].handle != NULL && labels[i].handle != h)
        i = (i + 1) & (cap - 1);
    return i;
}

int dahl_profile_label(starpu_data_handle_t h, int layer)
{
    if (h == NULL)
        return 0;
    pthread_mutex_lock(&prof.lock);
    if (2 * (prof.nlabels + 1) > prof.labels_cap) {
        size_t cap = prof.labels_cap > 0 ? 2 * prof.labels_cap : 1024;
        struct label *grown = calloc(cap, sizeof(*grown));
        if (grown == NULL) {
            pthread_mutex_unlock(&prof.lock);
            return -ENOMEM;
        }
        for (size_t i = 0; i < prof.labels_cap; i++)
            if (prof.labels[i].handle != NULL)
                grown[label_slot(grown, cap, prof.labels[i].handle)] = prof.labels[i];
        free(prof.labels);
        prof.labels = grown;
        prof.labels_cap = cap;
    }
    size_t i = label_slot(prof.labels, prof.labels_cap, h);
    if (prof.labels[i].handle == NULL)
        prof.nlabels++;
    prof.labels[i] = (struct label){.handle = h, .layer = layer, .job = prof.current_job};
    pthread_mutex_unlock(&prof.lock);
    return 0;
}

/* The label of the first labelled buffer the task writes, else of any labelled buffer; NULL if none (StarPU's
 * REDUX reductions between per-worker copies work on temporary handles). Lock held. */
static const struct label *task_label(struct starpu_task *task)
{
    if (prof.labels_cap == 0 || task->cl == NULL)
        return NULL;
    const struct label *any = NULL;
    unsigned n = STARPU_TASK_GET_NBUFFERS(task);
    for (unsigned b = 0; b < n; b++) {
        starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, b);
        size_t i = label_slot(prof.labels, prof.labels_cap, h);
        if (prof.labels[i].handle != h)
            continue;
        enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, b);
        if (mode & (STARPU_W | STARPU_REDUX))
            return &prof.labels[i];
        if (any == NULL)
            any = &prof.labels[i];
    }
    return any;
}

static double ts_us(const struct timespec *t);

/* The job a handle (a root handle) belongs to, DAHL_PROFILE_MAX_JOBS for none. Lock held. */
static int handle_job(starpu_data_handle_t h)
{
    if (prof.labels_cap == 0)
        return DAHL_PROFILE_MAX_JOBS;
    size_t i = label_slot(prof.labels, prof.labels_cap, h);
    return prof.labels[i].handle == h ? prof.labels[i].job : DAHL_PROFILE_MAX_JOBS;
}

/* A task of a job has run: its GPU time and input wait. Lock held. */
static void job_task_done(struct starpu_task *task, const struct label *label)
{
    const struct starpu_profiling_task_info *info = task->profiling_info;
    if (info == NULL || info->workerid < 0 || starpu_worker_get_type(info->workerid) != STARPU_CUDA_WORKER)
        return;
    struct dahl_profile_job *j = &prof.jobs[label != NULL ? label->job : DAHL_PROFILE_MAX_JOBS];
    double fetch = ts_us(&info->acquire_data_end_time) - ts_us(&info->acquire_data_start_time);
    j->gpu_tasks++;
    j->gpu_busy_us += ts_us(&info->end_time) - ts_us(&info->start_time);
    j->gpu_fetch_us += fetch > 0 ? fetch : 0.0;
}

/* StarPU's data hooks (scripts/patches/starpu-data-hooks.patch): called in StarPU's threads. */
static void on_transfer(starpu_data_handle_t h, unsigned src, unsigned dst, size_t size, int prefetch)
{
    (void)prefetch;
    enum starpu_node_kind from = starpu_node_get_kind(src), to = starpu_node_get_kind(dst);
    pthread_mutex_lock(&prof.lock);
    struct dahl_profile_job *j = &prof.jobs[handle_job(h)];
    if (from == STARPU_CPU_RAM && to == STARPU_CUDA_RAM) {
        j->h2d_bytes += (int64_t)size;
        j->h2d++;
    } else if (from == STARPU_CUDA_RAM && to == STARPU_CPU_RAM) {
        j->d2h_bytes += (int64_t)size;
        j->d2h++;
    }
    pthread_mutex_unlock(&prof.lock);
}

static void on_evict(starpu_data_handle_t h, unsigned node, size_t size)
{
    (void)size;
    if (starpu_node_get_kind(node) != STARPU_CUDA_RAM)
        return;
    pthread_mutex_lock(&prof.lock);
    prof.jobs[handle_job(h)].evictions++;
    pthread_mutex_unlock(&prof.lock);
}

void dahl_profile_hooks_install(void)
{
    starpu_data_set_hooks(&(struct starpu_data_hooks){.transfer = on_transfer, .evict = on_evict});
}

void dahl_profile_job_set(int job)
{
    pthread_mutex_lock(&prof.lock);
    prof.current_job = job >= 0 && job < DAHL_PROFILE_MAX_JOBS ? job : DAHL_PROFILE_MAX_JOBS;
    pthread_mutex_unlock(&prof.lock);
}

void dahl_profile_jobs(struct dahl_profile_job *out, int max, struct dahl_profile_job *other)
{
    pthread_mutex_lock(&prof.lock);
    for (int j = 0; j < max && j < DAHL_PROFILE_MAX_JOBS; j++)
        out[j] = prof.jobs[j];
    if (other != NULL)
        *other = prof.jobs[DAHL_PROFILE_MAX_JOBS];
    pthread_mutex_unlock(&prof.lock);
}

/* ---- steps ---------------------------------------------------------------------------------------------- */

/* The next job id StarPU will hand out: ids are given at job creation, so creating (and dropping) an empty
 * task reads the counter. */
static uint64_t next_job_id(void)
{
    struct starpu_task *t = starpu_task_create();
    if (t == NULL)
        return 0;
    uint64_t id = starpu_task_get_job_id(t);
    t->destroy = 0;
    starpu_task_destroy(t);
    return id;
}

void dahl_profile_step_begin(long step)
{
    if (!prof.conf.record_tasks)
        return;
    uint64_t id = next_job_id();
    pthread_mutex_lock(&prof.lock);
    if (prof.nmarks > 0 && prof.marks[prof.nmarks - 1].step == step) {
        pthread_mutex_unlock(&prof.lock);
        return;
    }
    struct step_mark *marks = dahl_array_grow(prof.marks, &prof.marks_cap, prof.nmarks + 1, sizeof(*marks));
    if (marks == NULL) {
        pthread_mutex_unlock(&prof.lock);
        return; /* the step's tasks count as the previous step's */
    }
    prof.marks = marks;
    prof.marks[prof.nmarks++] = (struct step_mark){.first_job = id, .step = step};
    pthread_mutex_unlock(&prof.lock);
}

/* The step of job id `job` (lock held); -1 before the first mark. */
static long step_of(uint64_t job)
{
    size_t lo = 0, hi = prof.nmarks; /* the answer is the last mark with first_job <= job */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (prof.marks[mid].first_job <= job)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? -1 : prof.marks[lo - 1].step;
}

void dahl_profile_step_end(long step)
{
    pthread_mutex_lock(&prof.lock);
    prof.steps_ended = step + 1;
    pthread_mutex_unlock(&prof.lock);
    if (prof.conf.fxt_dir == NULL)
        return;
    /* Runs in a StarPU callback, one step at a time in step order (each step's updates wait for the last). */
    if (!prof.fxt_recording && prof.conf.first_step > 0 && step == prof.conf.first_step - 1) {
        starpu_fxt_start_profiling();
        prof.fxt_recording = true;
    } else if (prof.fxt_recording && prof.conf.last_step >= 0 && step == prof.conf.last_step) {
        starpu_fxt_stop_profiling();
        prof.fxt_recording = false;
    }
}

/* ---- the callback ------------------------------------------------------------------------------------- */

static double ts_us(const struct timespec *t)
{
    return (double)t->tv_sec * 1e6 + (double)t->tv_nsec * 1e-3;
}

/* Memory in use on every node, lock held. */
static void sample_memory(void)
{
    unsigned n = starpu_memory_nodes_get_count();
    for (unsigned node = 0; node < n && node < MAX_NODES; node++) {
        starpu_ssize_t total = starpu_memory_get_total(node);
        if (total < 0)
            continue;
        int64_t used = (int64_t)(total - starpu_memory_get_available(node));
        if (used > prof.starpu_peak[node])
            prof.starpu_peak[node] = used;
    }
    int64_t app = (int64_t)atomic_load_explicit(&app_bytes, memory_order_relaxed);
    if (app > prof.app_peak)
        prof.app_peak = app;
}

/* Representative ranks (dahl_light.h): when each task was pushed, started and ended, and on which core;
 * how long an accumulate waited for a worker. Posted without the lock: the board's is a simulated one,
 * whose wait lets other actors run. */
static void post_to_light_ranks(struct starpu_task *task, int layer)
{
    if (task == NULL || task->profiling_info == NULL || task->name == NULL || !dahl_light_mode())
        return;
    const struct starpu_profiling_task_info *info = task->profiling_info;
    int worker = info->workerid;
    int core = worker >= 0 && starpu_worker_get_type(worker) == STARPU_CPU_WORKER ? worker : -1;
    double start_s = ts_us(&info->start_time) * 1e-6, push_s = ts_us(&info->push_end_time) * 1e-6;
    if (strcmp(task->name, "dahl_accumulate") == 0) {
        dahl_light_post_accumulate(STARPU_TASK_GET_HANDLE(task, 1), core, start_s,
                                   (ts_us(&info->start_time) - ts_us(&info->push_end_time)) * 1e-6);
        return;
    }
    if (strcmp(task->name, "dahl_sgd_update") == 0 || strcmp(task->name, "dahl_zero") == 0)
        layer = -1;
    dahl_light_post_task(layer, core, push_s, start_s, ts_us(&info->end_time) * 1e-6);
}

/* The task's bookkeeping (prof.lock held); returns the layer it works for, -1 if none. */
static int task_done_locked(struct starpu_task *task)
{
    sample_memory();
    const struct label *label = task != NULL ? task_label(task) : NULL;
    if (task != NULL)
        job_task_done(task, label);
    int layer = label != NULL ? label->layer : -1;
    if (!prof.conf.record_tasks || task == NULL || task->profiling_info == NULL || task->cl == NULL)
        return layer;
    uint64_t job = starpu_task_get_job_id(task);
    /* StarPU creates its REDUX reduction tasks itself, while the graph runs, long after dahl submitted the
     * step: their job ids say nothing about their step, so they belong to the step running when they start
     * (the first step not completed yet). dahl names every task it submits after its perf model. */
    bool from_dahl = task->name != NULL && strncmp(task->name, "dahl_", 5) == 0;
    long step = from_dahl ? step_of(job) : prof.steps_ended;
    if (step < 0 || (prof.conf.first_step >= 0 && step < prof.conf.first_step) ||
        (prof.conf.last_step >= 0 && step > prof.conf.last_step))
        return layer;
    struct dahl_profile_task *tasks = dahl_array_grow(prof.tasks, &prof.tasks_cap, prof.ntasks + 1, sizeof(*tasks));
    if (tasks == NULL)
        return layer;
    prof.tasks = tasks;
    const struct starpu_profiling_task_info *info = task->profiling_info;
    double fetch_start = ts_us(&info->acquire_data_start_time), fetch_end = ts_us(&info->acquire_data_end_time);
    double pop_start = ts_us(&info->pop_start_time), pop_end = ts_us(&info->pop_end_time);
    prof.tasks[prof.ntasks++] = (struct dahl_profile_task){
        .job = job,
        .codelet = task->cl->model != NULL && task->cl->model->symbol != NULL ? task->cl->model->symbol
                   : task->cl->name != NULL                                     ? task->cl->name
                                                                                : "unknown",
        .worker = info->workerid,
        .layer = layer,
        .step = step,
        .start_us = ts_us(&info->start_time),
        .end_us = ts_us(&info->end_time),
        .fetch_us = fetch_end > fetch_start ? fetch_end - fetch_start : 0.0,
        .pop_us = pop_end > pop_start ? pop_end - pop_start : 0.0,
    };
    return layer;
}

void dahl_profile_task_done(void *arg)
{
    (void)arg;
    struct starpu_task *task = starpu_task_get_current();
    pthread_mutex_lock(&prof.lock);
    int layer = task_done_locked(task);
    pthread_mutex_unlock(&prof.lock);
    post_to_light_ranks(task, layer); /* after the lock: a simulated mutex there lets other actors run */
}

size_t dahl_profile_tasks(struct dahl_profile_task **tasks)
{
    pthread_mutex_lock(&prof.lock);
    *tasks = prof.tasks;
    size_t n = prof.ntasks;
    pthread_mutex_unlock(&prof.lock);
    return n;
}

/* ---- links and memory --------------------------------------------------------------------------------- */

void dahl_profile_counters_reset(void)
{
    int nbus = starpu_bus_get_count();
    for (int b = 0; b < nbus; b++) {
        struct starpu_profiling_bus_info info;
        starpu_bus_get_profiling_info(b, &info); /* reading restarts the counters */
    }
    pthread_mutex_lock(&prof.lock);
    for (int i = 0; i < MAX_NODES; i++)
        prof.starpu_peak[i] = 0;
    prof.app_peak = 0;
    memset(prof.jobs, 0, sizeof(prof.jobs));
    sample_memory();
    pthread_mutex_unlock(&prof.lock);
}

int dahl_profile_links_add(struct dahl_profile_link *links, int n, int max)
{
    int nbus = starpu_bus_get_count();
    for (int b = 0; b < nbus; b++) {
        struct starpu_profiling_bus_info info;
        if (starpu_bus_get_profiling_info(b, &info) != 0)
            continue;
        char src[32], dst[32];
        starpu_memory_node_get_name((unsigned)starpu_bus_get_src(b), src, sizeof(src));
        starpu_memory_node_get_name((unsigned)starpu_bus_get_dst(b), dst, sizeof(dst));
        int i = 0;
        while (i < n && !(strcmp(links[i].src, src) == 0 && strcmp(links[i].dst, dst) == 0))
            i++;
        if (i == n) {
            if (n == max)
                continue;
            links[n] = (struct dahl_profile_link){0};
            snprintf(links[n].src, sizeof(links[n].src), "%s", src);
            snprintf(links[n].dst, sizeof(links[n].dst), "%s", dst);
            n++;
        }
        links[i].bytes += info.transferred_bytes;
        links[i].transfers += info.transfer_count;
    }
    return n;
}

int64_t dahl_profile_memory_peak_total(void)
{
    /* the peaks as the tasks' ends sampled them: sampling here would call StarPU, whose locks are simcalls
     * under SimGrid, from a check a full run does not make (measured: no simulation changed with it, but
     * nothing guarantees that) */
    pthread_mutex_lock(&prof.lock);
    int64_t total = prof.app_peak;
    for (unsigned node = 0; node < MAX_NODES; node++)
        total += prof.starpu_peak[node];
    pthread_mutex_unlock(&prof.lock);
    return total;
}

int dahl_profile_memory_merge(struct dahl_profile_memnode *nodes, int n, int max)
{
    unsigned count = starpu_memory_nodes_get_count();
    pthread_mutex_lock(&prof.lock);
    sample_memory();
    for (unsigned node = 0; node < count && node < MAX_NODES; node++) {
        int i = 0;
        while (i < n && nodes[i].id != (int)node)
            i++;
        if (i == n) {
            if (n == max)
                continue;
            struct dahl_profile_memnode *m = &nodes[n++];
            *m = (struct dahl_profile_memnode){.id = (int)node, .starpu_peak_bytes = -1};
            starpu_memory_node_get_name(node, m->name, sizeof(m->name));
            switch (starpu_node_get_kind(node)) {
            case STARPU_CPU_RAM:
                m->kind = "ram";
                break;
            case STARPU_CUDA_RAM:
                m->kind = "cuda";
                break;
            default:
                m->kind = "other";
                break;
            }
            starpu_ssize_t total = starpu_memory_get_total(node);
            m->capacity_bytes = total >= 0 ? (int64_t)total : -1;
        }
        struct dahl_profile_memnode *m = &nodes[i];
        if (m->capacity_bytes >= 0 && prof.starpu_peak[node] > m->starpu_peak_bytes)
            m->starpu_peak_bytes = prof.starpu_peak[node];
        if (node == STARPU_MAIN_RAM && prof.app_peak > m->app_bytes)
            m->app_bytes = prof.app_peak;
    }
    pthread_mutex_unlock(&prof.lock);
    return n;
}

void dahl_profile_app_bytes_add(int64_t delta)
{
    atomic_fetch_add_explicit(&app_bytes, (long long)delta, memory_order_relaxed);
}

/* ---- FxT -------------------------------------------------------------------------------------------------- */

int dahl_profile_fxt_convert(char *err, size_t err_size)
{
    if (prof.conf.fxt_dir == NULL) {
        snprintf(err, err_size, "no FxT trace was asked for");
        return -ENOENT;
    }
    char in[4200], paje[4200], tasks[4200];
    snprintf(in, sizeof(in), "%s/starpu.fxt_0", prof.fxt_dir);
    snprintf(paje, sizeof(paje), "%s/paje.trace", prof.fxt_dir);
    snprintf(tasks, sizeof(tasks), "%s/tasks.rec", prof.fxt_dir);
    FILE *f = fopen(in, "rb");
    if (f == NULL) {
        snprintf(err, err_size, "%s: StarPU wrote no FxT trace: %s", in, strerror(errno));
        return -ENOENT;
    }
    fclose(f);
    struct starpu_fxt_options options;
    /* Zeroed first: StarPU 1.3.10's options_init leaves fields unset unless scripts/patches fixed it. */
    memset(&options, 0, sizeof(options));
    starpu_fxt_options_init(&options);
    options.ninputfiles = 1;
    options.filenames[0] = in;
    options.file_prefix = "";
    options.file_rank = -1;
    /* The Paje trace and the task list only: StarPU's DAG, animation, states and histograms of a 100k-task
     * run are gigabytes nobody asked for. */
    options.out_paje_path = paje;
    options.tasks_path = tasks;
    options.dag_path = options.data_path = options.anim_path = NULL;
    options.distrib_time_path = options.activity_path = NULL;
    /* StarPU 1.3.10's converter spins forever without a states file (as with its options uninitialised): it
     * gets one that keeps nothing. */
    options.states_path = "/dev/null";
    starpu_fxt_generate_trace(&options);
    /* Neither FxT nor StarPU's converter reports a failed write (FxT prints "write buffer: No space left on
     * device" and goes on): a file system left without a free block means the recording or its conversion
     * was cut short. */
    struct statvfs fs;
    bool full = statvfs(prof.fxt_dir, &fs) == 0 && (geteuid() == 0 ? fs.f_bfree : fs.f_bavail) == 0;
    unlink(in); /* the raw recording (hundreds of MB for 100k tasks): its content is in the two files now */
    if (full) {
        snprintf(err, err_size, "%s: No space left on device: StarPU's FxT trace may be cut short", prof.fxt_dir);
        return -ENOSPC;
    }
    return 0;
}

void dahl_profile_fini(void)
{
    pthread_mutex_lock(&prof.lock);
    free(prof.tasks);
    free(prof.marks);
    free(prof.labels);
    prof.tasks = NULL;
    prof.marks = NULL;
    prof.labels = NULL;
    prof.ntasks = prof.tasks_cap = prof.nmarks = prof.marks_cap = prof.nlabels = prof.labels_cap = 0;
    prof.steps_ended = 0;
    prof.conf = (struct dahl_profile_conf){.first_step = -1, .last_step = -1};
    pthread_mutex_unlock(&prof.lock);
}

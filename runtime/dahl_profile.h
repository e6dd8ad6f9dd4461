/* What a run did, task by task and byte by byte, collected from StarPU's own profiling: per-task records
 * (worker, start and end, time fetching input, time in the scheduler's pop, training step and layer) for
 * traces, bytes moved per bus link, and the peak memory used per memory node. Optionally StarPU's FxT trace
 * of the same run, converted by StarPU's own converter (a Paje file and tasks.rec) at the end.
 * Every dahl codelet calls dahl_profile_task_done when one of its tasks completes (codelet callback), StarPU's
 * internal REDUX tasks included. This header is StarPU-free; the module keeps the records until
 * dahl_profile_fini. */
#ifndef DAHL_PROFILE_H
#define DAHL_PROFILE_H

#include "dahl_records.h" /* the records this module fills: struct dahl_profile_task, _link, _memnode */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dahl_profile_conf {
    bool record_tasks;      /* keep one record per training task (traces); memory and links are always kept */
    long first_step;        /* training steps (0-based, inclusive) whose tasks are recorded; -1: from the first */
    long last_step;         /* -1: to the last */
    const char *fxt_dir;    /* non-NULL: StarPU's FxT trace into this directory (created by the caller) */
};

/* Configures the module; call before dahl_engine_start (the FxT trace is set up through StarPU's
 * environment, read by starpu_init). Returns 0, or -EINVAL (a window with last < first). */
int dahl_profile_setup(const struct dahl_profile_conf *conf);

/* The codelet callback (StarPU calls it when a task of a dahl codelet completes, from the worker). */
void dahl_profile_task_done(void *arg);

/* Marks the start of the submission of training step `step` (0-based, counted over all epochs); step -1 marks
 * work that is not training (evaluation), whose tasks are not recorded. Called by the submitting thread. */
void dahl_profile_step_begin(long step);
/* Training step `step` has completed (every SGD update ran): starts or stops StarPU's FxT recording at the
 * edges of the trace window. */
void dahl_profile_step_end(long step);

/* The records so far, in no particular order (the caller may reorder them); valid until dahl_profile_fini.
 * Waits for nothing: call once every task has completed. */
size_t dahl_profile_tasks(struct dahl_profile_task **tasks);

/* Restarts the link counters and memory peaks (engine running). */
void dahl_profile_counters_reset(void);
/* Adds the bytes and transfers per link since the last reset into links (n entries kept by the caller,
 * matched by src/dst; new links appended up to max) and restarts the counters. Returns the new count. */
int dahl_profile_links_add(struct dahl_profile_link *links, int n, int max);
/* Merges the memory peaks since the last reset into nodes (by id, keeping the larger peak), up to max
 * entries. Returns the new count. */
int dahl_profile_memory_merge(struct dahl_profile_memnode *nodes, int n, int max);
/* The memory peaks since the last reset, summed over the nodes (StarPU's and dahl's own), as sampled at the
 * last task's end: a high-water mark that only grows, for telling whether a phase still allocates. Calls no
 * StarPU function. */
int64_t dahl_profile_memory_peak_total(void);

/* Jobs (several networks in one run): tensors labelled while job `job` is current (from 0, below
 * DAHL_PROFILE_MAX_JOBS) belong to it; tasks belong to the job of the first labelled buffer they write. Call
 * before creating the job's network. StarPU's own temporary buffers (REDUX copies) belong to no job. */
#define DAHL_PROFILE_MAX_JOBS 8
void dahl_profile_job_set(int job);
/* The jobs' figures since the last dahl_profile_counters_reset: out[0..max) for jobs 0..max-1; and what
 * belongs to no job into *other (may be NULL). Counted whatever record_tasks says. */
void dahl_profile_jobs(struct dahl_profile_job *out, int max, struct dahl_profile_job *other);

/* Bytes dahl registered in main RAM (tensors), now; maintained by dahl_tensor. */
void dahl_profile_app_bytes_add(int64_t delta);

/* After dahl_engine_stop: converts the FxT trace recorded into conf.fxt_dir with StarPU's converter, writing
 * paje.trace and tasks.rec there (its other outputs are not written). Returns 0, -ENOENT when no FxT trace was
 * asked for or written, with a message in err. */
int dahl_profile_fxt_convert(char *err, size_t err_size);

/* Frees the records. */
void dahl_profile_fini(void);

#endif /* DAHL_PROFILE_H */

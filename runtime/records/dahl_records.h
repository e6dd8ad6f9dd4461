/* The plain records a run hands out: one per task, per bus link, per memory node and per worker. The runtime
 * fills them (dahl_profile.h, dahl_engine.h), sim/ reads and writes them (results, traces, multi-node
 * merges). StarPU-free and below both, so what only reads records needs no runtime; the caller owns every
 * record, strings marked static excepted. */
#ifndef DAHL_RECORDS_H
#define DAHL_RECORDS_H

#include <stdint.h>

/* The share of a worker's core a simulated submitting thread runs at when every core runs a worker, busy
 * worker or idle (an idle native worker spins: dahl_engine_charge_submission in dahl_engine.c). Here, below
 * the runtime, because the front end's predictions charge the thread the same way (dahlsim_grain.c) and
 * results.json records it (submission.core_share). */
#define DAHL_SUBMIT_SHARED_SHARE 0.5

/* One task as StarPU profiled it. Times in microseconds on StarPU's clock (simulated time under SimGrid). */
struct dahl_profile_task {
    uint64_t job;           /* StarPU job id (what FxT's tasks.rec calls JobId) */
    const char *codelet;    /* perf-model symbol, e.g. "dahl_conv2d_forward" (static string) */
    int worker;             /* StarPU worker id */
    int layer;              /* network layer that writes the task's output (nlayers: the loss), -1 unknown */
    long step;              /* training step, 0-based */
    double start_us, end_us;
    double fetch_us;        /* waiting for input data on the worker (acquire data start to end) */
    double pop_us;          /* the scheduler's pop call that handed out the task */
};

/* One bus link (src -> dst memory node) and what crossed it since the last reset. */
struct dahl_profile_link {
    char src[32], dst[32];  /* StarPU's memory node names, e.g. "RAM", "CUDA 0" */
    int64_t bytes;
    long transfers;
};

/* One memory node and the most memory in use on it since the last reset, sampled at every task end. */
struct dahl_profile_memnode {
    int id;
    char name[32];          /* "RAM", "CUDA 0", ... */
    const char *kind;       /* "ram", "cuda" or "other" (static) */
    int64_t starpu_peak_bytes; /* StarPU's memory manager: what StarPU allocated there (replicas, REDUX
                                  copies, scratch buffers), -1 when StarPU does not track the node */
    int64_t app_bytes;      /* buffers dahl registered there itself (tensors in main RAM), 0 elsewhere */
    int64_t capacity_bytes; /* the node's memory as StarPU sees it, -1 when unknown */
};

/* One job's share of a run where several jobs share the machine (dahl_profile_job_set): what crossed
 * between main memory and the GPUs for its tensors, how often the memory manager dropped one of them from a
 * GPU to make room, and its tasks on GPUs. Times in microseconds on StarPU's clock. */
struct dahl_profile_job {
    int64_t h2d_bytes, d2h_bytes; /* main RAM -> GPU, GPU -> main RAM */
    long h2d, d2h;                /* transfers */
    long evictions;               /* replicates dropped from a GPU */
    long gpu_tasks;
    double gpu_busy_us;           /* its tasks executing on GPUs */
    double gpu_fetch_us;          /* GPU workers waiting for its tasks' input data */
};

/* One worker's activity since the last reset (engine started with conf.profiling). */
struct dahl_worker_stats {
    int id;            /* StarPU worker id */
    char name[64];     /* e.g. "CPU 0" */
    const char *arch;  /* "cpu", "cuda" or "other" (static string) */
    long tasks;        /* tasks executed, StarPU's own (REDUX init/reduction) included */
    double busy_s;     /* executing tasks */
    double sleeping_s; /* asleep, waiting for work */
    double total_s;    /* since the last reset; total_s - busy_s is the idle time */
};

#endif /* DAHL_RECORDS_H */

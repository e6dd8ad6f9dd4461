/* The probe codelets. dahl_probe: an independent task that keeps one CPU busy for a requested time. It touches no data,
 * so its cost is set by its argument alone; its footprint is that duration in whole microseconds, which
 * makes hand-written perf models for it easy to read ("dahl_probe" entries, footprint 2000 = 2 ms).
 * dahl_empty: a task that does nothing on two buffers (one read, one updated), shaped like dahl's smallest
 * tasks, to measure what the runtime itself costs per task. It runs for real under SimGrid too and takes no
 * simulated time there (STARPU_CODELET_SIMGRID_EXECUTE, no perf model): what remains is what StarPU-SimGrid
 * charges per task. */
#include "dahl_codelets.h"

#include "dahl_kernels.h"
#include "dahl_starpu.h"
#include "dahl_tensor_starpu.h"

#include <math.h>

struct probe_args {
    double duration_us;
};

static void probe_cpu(void *buffers[], void *cl_arg)
{
    (void)buffers;
    struct probe_args args;
    starpu_codelet_unpack_args(cl_arg, &args);
    dahl_spin_us(args.duration_us);
}

static uint32_t probe_footprint(struct starpu_task *task)
{
    struct probe_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return (uint32_t)llround(args.duration_us);
}

static struct starpu_perfmodel probe_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_probe",
    .footprint = probe_footprint,
};

static struct starpu_codelet probe_cl = {
    .cpu_funcs = {probe_cpu},
    .cpu_funcs_name = {"probe_cpu"},
    .nbuffers = 0,
    .model = &probe_model,
    .name = "dahl_probe",
};

int dahl_insert_probe(double duration_us)
{
    struct probe_args args = {.duration_us = duration_us};
    return starpu_task_insert(&probe_cl, STARPU_VALUE, &args, sizeof(args), STARPU_NAME, "dahl_probe",
                              STARPU_FLOPS, 0.0, 0);
}

static void empty_cpu(void *buffers[], void *cl_arg)
{
    (void)buffers;
    (void)cl_arg;
}

static struct starpu_codelet empty_cl = {
    .cpu_funcs = {empty_cpu},
    .cpu_funcs_name = {"empty_cpu"},
    .flags = STARPU_CODELET_SIMGRID_EXECUTE,
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_RW},
    .name = "dahl_empty",
};

int dahl_insert_empty(struct dahl_tensor *in, struct dahl_tensor *inout)
{
    return starpu_task_insert(&empty_cl, STARPU_R, dahl_tensor_handle(in), STARPU_RW, dahl_tensor_handle(inout),
                              STARPU_NAME, "dahl_empty", 0);
}

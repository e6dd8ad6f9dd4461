/* Gradient reduction codelets (kernels/cpu/reduce.c): dahl_accumulate (dst += src) and dahl_zero (dst = 0).
 * They serve twice: as StarPU's reduction methods for STARPU_REDUX gradient handles (StarPU then runs them
 * with no cl_arg, and calls zero's CPU function directly to initialise per-worker copies), and as ordinary
 * tasks for the manual reduction of per-sample gradients. So they take n from the buffers, never from an
 * argument, and their perf models are keyed by the handle's element count. */
#include "dahl_codelets_internal.h"

#include <errno.h>
#include <math.h>

static size_t reduce_task_n(struct starpu_task *task)
{
    return starpu_vector_get_nx(STARPU_TASK_GET_HANDLE(task, 0));
}

static uint32_t reduce_footprint(struct starpu_task *task)
{
    return dahl_reduce_footprint_of(reduce_task_n(task));
}

static size_t accumulate_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops(dahl_accumulate_flops(reduce_task_n(task)));
}

/* zero does no arithmetic: its size is the element count it writes. */
static size_t zero_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops((double)reduce_task_n(task));
}

/* buffers: dst (RW), src (R) */
static void accumulate_cpu(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    dahl_accumulate(STARPU_VECTOR_GET_NX(buffers[0]), (float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                    (const float *)STARPU_VECTOR_GET_PTR(buffers[1]));
}

/* buffers: dst (W). Under StarPU-SimGrid no codelet runs, except this one: StarPU calls it inline on every
 * worker's copy of a REDUX gradient. Those copies are folded memory whose values are never read, so the
 * simulation skips the write: zeroing 120 MB of 512x512x3 gradient per worker and step into the folded file's
 * mapping was 18 % of a simulation's CPU time (memset and the kernel's file-page writes). */
static void zero_cpu(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
#if DAHL_SIMULATED
    (void)buffers;
#else
    dahl_zero(STARPU_VECTOR_GET_NX(buffers[0]), (float *)STARPU_VECTOR_GET_PTR(buffers[0]));
#endif
}

/* CUDA wrappers (see DAHL_CUDA_WRAPPER). StarPU calls zero's directly, on the CUDA worker's thread, to
 * initialise a REDUX gradient's GPU copy: the memset goes on the worker's stream, ahead of the task that
 * then accumulates into that copy on the same stream. */
DAHL_CUDA_WRAPPER accumulate_cuda(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    dahl_cuda_must(dahl_cuda_accumulate(STARPU_VECTOR_GET_NX(buffers[0]), (float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                        (const float *)STARPU_VECTOR_GET_PTR(buffers[1]), dahl_cuda_local_stream()));
}

DAHL_CUDA_WRAPPER zero_cuda(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    dahl_cuda_must(dahl_cuda_zero(STARPU_VECTOR_GET_NX(buffers[0]), (float *)STARPU_VECTOR_GET_PTR(buffers[0]),
                                  dahl_cuda_local_stream()));
}

static struct starpu_perfmodel dahl_accumulate_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_accumulate",
    .footprint = reduce_footprint,
    .size_base = accumulate_size,
};

static struct starpu_perfmodel dahl_zero_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_zero",
    .footprint = reduce_footprint,
    .size_base = zero_size,
};

/* NOPLANS: StarPU's reduction of a REDUX gradient runs these tasks on the gradient handle itself while the
 * access that triggered the reduction waits; when that access is the partitioning of a split update
 * (dahl_network.c), the handle is already marked partitioned, and without this flag StarPU would see a task
 * on a partitioned handle and unpartition it again behind dahl's back. dahl never submits them on a handle
 * whose chunks are in use, so StarPU's automatic partitioning has nothing to do for them. */
static struct starpu_codelet accumulate_cl = {
    .flags = STARPU_CODELET_NOPLANS,
    .cpu_funcs = {accumulate_cpu},
    .cpu_funcs_name = {"accumulate_cpu"},
    DAHL_CUDA_FUNCS(accumulate_cuda),
    .nbuffers = 2,
    .modes = {STARPU_RW, STARPU_R},
    .model = &dahl_accumulate_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_accumulate",
};

static struct starpu_codelet zero_cl = {
    .cpu_funcs = {zero_cpu},
    .cpu_funcs_name = {"zero_cpu"},
    DAHL_CUDA_FUNCS(zero_cuda),
    .nbuffers = 1,
    .modes = {STARPU_W},
    .model = &dahl_zero_model,
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_zero",
};

int dahl_insert_accumulate(starpu_data_handle_t dst, starpu_data_handle_t src)
{
    if (dst == NULL || dst == src)
        return -EINVAL;
    const size_t n = starpu_vector_get_nx(dst);
    if (!dahl_vector_is(dst, n) || !dahl_vector_is(src, n))
        return -EINVAL;
    dahl_codelets_note_submit();
    return starpu_task_insert(&accumulate_cl, STARPU_RW, dst, STARPU_R, src, STARPU_FLOPS, dahl_accumulate_flops(n),
                              DAHL_TASK_NAME, "dahl_accumulate", 0);
}

double dahl_accumulate_expected_s(starpu_data_handle_t dst, starpu_data_handle_t src)
{
    struct starpu_task *t = starpu_task_create();
    if (t == NULL)
        return 0.0;
    t->cl = &accumulate_cl;
    t->handles[0] = dst;
    t->handles[1] = src;
    t->destroy = 0;
    struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, STARPU_NMAX_SCHED_CTXS);
    double us = arch != NULL ? starpu_task_expected_length(t, arch, 0) : 0.0;
    t->cl = NULL; /* never submitted: no handle to release */
    starpu_task_destroy(t);
    return isnan(us) || us < 0 ? 0.0 : us * 1e-6;
}

int dahl_insert_zero(starpu_data_handle_t dst)
{
    if (dst == NULL)
        return -EINVAL;
    const size_t n = starpu_vector_get_nx(dst);
    if (!dahl_vector_is(dst, n))
        return -EINVAL;
    dahl_codelets_note_submit();
    return starpu_task_insert(&zero_cl, STARPU_W, dst, STARPU_FLOPS, dahl_zero_flops(n), DAHL_TASK_NAME, "dahl_zero", 0);
}

void dahl_gradient_enable_redux(starpu_data_handle_t h)
{
    starpu_data_set_reduction_methods(h, &accumulate_cl, &zero_cl);
}

const struct dahl_codelet_set dahl_reduce_codelets = {
    .n = 2,
    .entries = {{&dahl_accumulate_model, NULL, NULL}, {&dahl_zero_model, NULL, NULL}},
};

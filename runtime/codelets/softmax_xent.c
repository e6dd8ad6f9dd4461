/* Fused softmax + cross-entropy codelet for one sample (kernels/cpu/softmax_xent.c): logits and a label
 * give dlogits and a two-float metrics vector {loss, correct}, so a batch's loss and accuracy can be read
 * back (or reduced) from per-sample handles. Perf model keyed by K only: the label changes no cost. */
#include "dahl_codelets_internal.h"

#include <errno.h>

struct softmax_xent_args {
    int k, label;
};

static struct softmax_xent_args softmax_xent_task_args(struct starpu_task *task)
{
    struct softmax_xent_args args;
    starpu_codelet_unpack_args(task->cl_arg, &args);
    return args;
}

static uint32_t softmax_xent_footprint(struct starpu_task *task)
{
    return dahl_softmax_xent_footprint_of(softmax_xent_task_args(task).k);
}

static size_t softmax_xent_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    return dahl_size_of_flops(dahl_softmax_xent_flops(softmax_xent_task_args(task).k));
}

/* buffers: logits (R), dlogits (W), metrics (W, 2 floats) */
static void softmax_xent_cpu(void *buffers[], void *cl_arg)
{
    struct softmax_xent_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    float *metrics = (float *)STARPU_VECTOR_GET_PTR(buffers[2]);
    int correct = 0;
    dahl_softmax_xent(a.k, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]), a.label, &metrics[0],
                      (float *)STARPU_VECTOR_GET_PTR(buffers[1]), &correct);
    metrics[1] = (float)correct;
}

/* CUDA wrapper (see DAHL_CUDA_WRAPPER): the kernel writes the metrics vector's two floats itself. */
DAHL_CUDA_WRAPPER softmax_xent_cuda(void *buffers[], void *cl_arg)
{
    struct softmax_xent_args a;
    starpu_codelet_unpack_args(cl_arg, &a);
    float *metrics = (float *)STARPU_VECTOR_GET_PTR(buffers[2]);
    dahl_cuda_must(dahl_cuda_softmax_xent(a.k, (const float *)STARPU_VECTOR_GET_PTR(buffers[0]), a.label, &metrics[0],
                                          (float *)STARPU_VECTOR_GET_PTR(buffers[1]), &metrics[1],
                                          dahl_cuda_local_stream()));
}

struct starpu_perfmodel dahl_softmax_xent_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dahl_softmax_xent",
    .footprint = softmax_xent_footprint,
    .size_base = softmax_xent_size,
};

static struct starpu_codelet softmax_xent_cl = {
    .cpu_funcs = {softmax_xent_cpu},
    .cpu_funcs_name = {"softmax_xent_cpu"},
    DAHL_CUDA_FUNCS(softmax_xent_cuda),
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_W, STARPU_W},
    .model = &dahl_softmax_xent_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_softmax_xent",
};

int dahl_insert_softmax_xent(int k, int label, starpu_data_handle_t logits, starpu_data_handle_t dlogits,
                             starpu_data_handle_t metrics)
{
    if (k < 1 || label < 0 || label >= k || !dahl_vector_is(logits, (size_t)k) ||
        !dahl_vector_is(dlogits, (size_t)k) || !dahl_vector_is(metrics, 2) || logits == dlogits)
        return -EINVAL;
    struct softmax_xent_args args = {.k = k, .label = label};
    dahl_codelets_note_submit();
    return starpu_task_insert(&softmax_xent_cl, STARPU_VALUE, &args, sizeof(args), STARPU_R, logits, STARPU_W,
                              dlogits, STARPU_W, metrics, STARPU_FLOPS, dahl_softmax_xent_flops(k), STARPU_NAME,
                              "dahl_softmax_xent", 0);
}

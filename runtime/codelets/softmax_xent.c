/* Fused softmax + cross-entropy codelet for n samples (kernels/cpu/softmax_xent.c, once per sample): logits
 * and a label give dlogits and a two-float metrics vector {loss, correct} per sample, so a batch's loss and
 * accuracy can be read back from the tasks' handles. Perf model keyed by K and n: the labels change no cost. */
#include "dahl_codelets_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The task's cl_arg (STARPU_CL_ARGS: StarPU frees it): n samples' labels. */
struct softmax_xent_args {
    int k, n;
    uint8_t labels[];
};

static uint32_t softmax_xent_footprint(struct starpu_task *task)
{
    const struct softmax_xent_args *a = task->cl_arg;
    return dahl_grouped_footprint_of(dahl_softmax_xent_footprint_of(a->k), a->n);
}

static size_t softmax_xent_size(struct starpu_task *task, unsigned nimpl)
{
    (void)nimpl;
    const struct softmax_xent_args *a = task->cl_arg;
    return dahl_size_of_flops(a->n * dahl_softmax_xent_flops(a->k));
}

/* buffers: logits (R), dlogits (W), metrics (W, 2 floats per sample) */
static void softmax_xent_cpu(void *buffers[], void *cl_arg)
{
    const struct softmax_xent_args *a = cl_arg;
    const float *logits = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *dlogits = (float *)STARPU_VECTOR_GET_PTR(buffers[1]);
    float *metrics = (float *)STARPU_VECTOR_GET_PTR(buffers[2]);
    for (int i = 0; i < a->n; i++) {
        int correct = 0;
        size_t at = (size_t)i * (size_t)a->k;
        dahl_softmax_xent(a->k, logits + at, a->labels[i], &metrics[2 * i], dlogits + at, &correct);
        metrics[2 * i + 1] = (float)correct;
    }
}

/* CUDA wrapper (see DAHL_CUDA_WRAPPER): the kernel writes the metrics vector's two floats itself. */
DAHL_CUDA_WRAPPER softmax_xent_cuda(void *buffers[], void *cl_arg)
{
    const struct softmax_xent_args *a = cl_arg;
    const float *logits = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *dlogits = (float *)STARPU_VECTOR_GET_PTR(buffers[1]);
    float *metrics = (float *)STARPU_VECTOR_GET_PTR(buffers[2]);
    for (int i = 0; i < a->n; i++) {
        size_t at = (size_t)i * (size_t)a->k;
        dahl_cuda_must(dahl_cuda_softmax_xent(a->k, logits + at, a->labels[i], &metrics[2 * i], dlogits + at,
                                              &metrics[2 * i + 1], dahl_cuda_local_stream()));
    }
}

static struct starpu_perfmodel dahl_softmax_xent_model = {
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
    .energy_model = &dahl_energy_model,
    .callback_func = dahl_profile_task_done,
    .name = "dahl_softmax_xent",
};

int dahl_insert_softmax_xent_n(int k, int n, const uint8_t *labels, starpu_data_handle_t logits,
                               starpu_data_handle_t dlogits, starpu_data_handle_t metrics)
{
    if (k < 1 || n < 1 || labels == NULL || !dahl_vector_is(logits, (size_t)n * (size_t)k) ||
        !dahl_vector_is(dlogits, (size_t)n * (size_t)k) || !dahl_vector_is(metrics, 2 * (size_t)n) ||
        logits == dlogits)
        return -EINVAL;
    for (int i = 0; i < n; i++)
        if (labels[i] >= k)
            return -EINVAL;
    size_t size = sizeof(struct softmax_xent_args) + (size_t)n;
    struct softmax_xent_args *args = malloc(size);
    if (args == NULL)
        return -ENOMEM;
    args->k = k;
    args->n = n;
    memcpy(args->labels, labels, (size_t)n);
    dahl_codelets_note_submit();
    return starpu_task_insert(&softmax_xent_cl, STARPU_CL_ARGS, args, size, STARPU_R, logits, STARPU_W, dlogits,
                              STARPU_W, metrics, STARPU_FLOPS, n * dahl_softmax_xent_flops(k), DAHL_TASK_NAME,
                              "dahl_softmax_xent", 0);
}

int dahl_insert_softmax_xent(int k, int label, starpu_data_handle_t logits, starpu_data_handle_t dlogits,
                             starpu_data_handle_t metrics)
{
    if (label < 0 || label > UINT8_MAX)
        return -EINVAL;
    uint8_t l = (uint8_t)label;
    return dahl_insert_softmax_xent_n(k, 1, &l, logits, dlogits, metrics);
}

const struct dahl_codelet_set dahl_softmax_xent_codelets = {.n = 1, .entries = {{&dahl_softmax_xent_model, NULL, NULL}}};

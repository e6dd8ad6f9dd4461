/* The layer table: what each kind of layer is, in one place, without StarPU. A kind is one file under
 * runtime/model/layers/ and one line of DAHL_LAYER_KINDS (dahl_netdesc.h); it says
 * - its name in model files and the lab's exports, and in traces, and the model-file keys it takes;
 * - the shapes it gives from its input (output, weights and bias counts, its kernels' shapes);
 * - its codelets' perf-model symbols, with their roofline defaults;
 * - the tasks it submits over one group of n samples, forward and backward, in submission order: each
 *   task's perf-model symbol and footprint (as the codelets compute them), its size, flops and compulsory
 *   bytes, and the tensors it accesses in which mode.
 * The program (dahl_network.c), the task catalogue (dahl_catalogue.c) and the task graph of training steps
 * (dahl_stepgraph.c) all walk a step through these task lists, so they cannot disagree on what a layer
 * submits; traces, the lab's exports and model files name layers through the table too. The kernels a task
 * runs are the codelet of its symbol (runtime/codelets/, where each codelet also says how its task is
 * inserted from the tensors below). */
#ifndef DAHL_LAYER_H
#define DAHL_LAYER_H

#include "dahl_netdesc.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The tensors a layer task may access, for one group of samples: the layer's input x (and x2, the second
 * input of a layer with two) and output y, their gradients dx (absent where x is the network's input), dx2 and
 * dy, its parameters w and b (the weights the step's passes read), their gradients dw and db (the step's sums)
 * and the layer's scratch workspace. */
enum dahl_layer_tensor {
    DAHL_T_X,
    DAHL_T_X2,
    DAHL_T_DX2,
    DAHL_T_Y,
    DAHL_T_DX,
    DAHL_T_DY,
    DAHL_T_W,
    DAHL_T_B,
    DAHL_T_DW,
    DAHL_T_DB,
    DAHL_T_WORKSPACE,
    DAHL_T_STATS,   /* a step's sums over its samples that a later phase reads (batch norm's statistics) */
    DAHL_T_RUNNING, /* state kept across steps, read by evaluations (batch norm's running statistics) */
    DAHL_T_COUNT
};

enum dahl_layer_access {
    DAHL_ACCESS_R,
    DAHL_ACCESS_W,       /* written whole (StarPU's W) */
    DAHL_ACCESS_GRAD,    /* accumulated into: STARPU_REDUX, or STARPU_RW under the manual reduction */
    DAHL_ACCESS_SCRATCH, /* per-worker scratch (STARPU_SCRATCH): no dependency */
    DAHL_ACCESS_RW,      /* read and updated (STARPU_RW) */
};

#define DAHL_LAYER_TASK_MAX_ACCESSES 8
#define DAHL_LAYER_MAX_TASKS 4 /* per layer, group and direction */

/* One access of a task: which tensor, in which mode. */
struct dahl_layer_use {
    enum dahl_layer_tensor tensor;
    enum dahl_layer_access mode;
};

/* One task of a layer over a group of n samples. */
struct dahl_layer_task {
    const char *symbol; /* perf-model symbol (a static string of dahl_codelet_symbols()) */
    uint32_t footprint; /* what the codelet's footprint callback returns for it */
    size_t size;        /* the perf model's size */
    int phase;          /* 0, or 1 for a task that needs every group's phase-0 tasks of the layer done first */
    double flops;       /* the kernel's flops over the n samples (the task's STARPU_FLOPS) */
    double bytes;       /* compulsory traffic over the n samples (parameters counted once) */
    int naccesses;
    struct dahl_layer_use access[DAHL_LAYER_TASK_MAX_ACCESSES]; /* in the codelet's buffer order */
};

/* A training step's forward and backward passes; an evaluation's forward pass (the same tasks but for layers
 * that behave differently there); and the tasks a layer runs once per step, after its passes (n: the batch). */
enum dahl_pass { DAHL_PASS_FORWARD, DAHL_PASS_BACKWARD, DAHL_PASS_EVAL, DAHL_PASS_STEP };

/* An integer key of a layer in model files, stored at `offset` in struct dahl_layer_desc. */
struct dahl_layer_key {
    const char *key;
    size_t offset;
    int min;  /* at least this, at most 65536 */
    int dflt; /* when absent: this value, DAHL_KEY_REQUIRED or DAHL_KEY_AS_KERNEL (the layer's kernel) */
};
#define DAHL_KEY_REQUIRED INT_MIN
#define DAHL_KEY_AS_KERNEL (INT_MIN + 1)

/* A codelet a kind's tasks run, and the fractions of a machine's peak its kernels reach by default on each
 * architecture (what `machine synth` writes roofline perf models from; a machine spec may override them). */
struct dahl_codelet_defaults {
    const char *symbol;
    double cpu_compute, cpu_memory;
    double cuda_compute, cuda_memory;
};

struct dahl_layer_type {
    enum dahl_layer_kind kind;
    const char *name;       /* model files and the lab's exports: "conv" */
    const char *trace_name; /* traces number layers of a kind from 1: "conv1", "pool2" */
    bool has_params;        /* weights and bias, updated by every step */
    int ninputs;            /* inputs it reads (DAHL_T_X, DAHL_T_X2 ...); 0 means 1 */
    bool weights_one;       /* its weights start at 1 (a scale), not He-normal */
    /* Whether its `tasks` gets DAHL_PASS_EVAL and DAHL_PASS_STEP: an evaluation runs other tasks than training
     * and it runs tasks once per step. Without, an evaluation runs its forward tasks and a step none. */
    bool stateful;
    const struct dahl_layer_key *keys; /* its model-file keys, ended by a NULL key */
    const struct dahl_codelet_defaults *codelets; /* the codelets of its tasks, ended by a NULL symbol */
    /* From l->desc and l->in_c/h/w (set), fills l->out_c/h/w, l->nw, l->nb and the kernels' shapes. Returns 0,
     * or -EINVAL with the reason, naming layer `index`, in err. */
    int (*plan)(struct dahl_layer_shape *l, int index, char *err, size_t err_size);
    /* Writes into out (DAHL_LAYER_MAX_TASKS entries) the tasks of one group of n samples in the pass, in
     * submission order; has_dx is false for the network's first layer (no input gradient). Returns how many. */
    int (*tasks)(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                 struct dahl_layer_task *out);
};

/* The kind's entry, or NULL for a value outside the table. */
const struct dahl_layer_type *dahl_layer_type_get(enum dahl_layer_kind kind);
/* The kind named `name` in model files, or NULL. */
const struct dahl_layer_type *dahl_layer_type_by_name(const char *name);
/* Entry i of the table (0 <= i < dahl_layer_type_count()), for listing every kind. */
int dahl_layer_type_count(void);
const struct dahl_layer_type *dahl_layer_type_at(int i);

/* Whether a layer so described has parameters (false for an unknown kind). */
bool dahl_layer_desc_has_params(const struct dahl_layer_desc *d);

/* Phases of the layer's tasks in the pass: 2 when some of them need the whole step's sums of the others
 * (batch norm's), else 1. A network with a layer of 2 phases submits its passes layer by layer: a layer's phase 0
 * over every group, the sums (the manual reduction's tree; StarPU reduces a REDUX one on its first read), then
 * its phase 1 over every group. */
int dahl_layer_phases(const struct dahl_layer_shape *l, enum dahl_pass pass);
/* Whether any task of the layer accesses tensor t (whether the network allocates it). */
bool dahl_layer_uses_tensor(const struct dahl_layer_shape *l, enum dahl_layer_tensor t);
/* Whether the backward pass itself needs the step's sum of the weight gradients (a phase-1 task reads them):
 * they are summed between its phases, not again before the update. */
bool dahl_layer_sums_grads_early(const struct dahl_layer_shape *l);
/* Whether a network has a layer of 2 phases (its passes go layer by layer, see dahl_layer_phases). */
bool dahl_network_desc_layer_major(const struct dahl_network_desc *d);

/* The tasks of layer l over a group of n samples (the kind's `tasks`). */
int dahl_layer_tasks(const struct dahl_layer_shape *l, enum dahl_pass pass, int n, bool has_dx,
                     struct dahl_layer_task *out);

/* For the layer files: a task over n samples of a per-sample kernel whose one-sample footprint, flops and
 * bytes are given: n times the work, the footprint grouped (dahl_footprint.h), the parameters (params_bytes,
 * read or written once per task) counted once. The accesses are set by the caller. */
struct dahl_layer_task dahl_layer_task_grouped(const char *symbol, uint32_t footprint, int n, double flops,
                                               size_t bytes, size_t params_bytes);

/* For the layer files of shape-preserving kinds: the output is the input's shape. Returns 0 (a plan). */
int dahl_layer_plan_same(struct dahl_layer_shape *l, int index, char *err, size_t err_size);
/* The values a group of n samples of l's input holds. */
size_t dahl_layer_input_values(const struct dahl_layer_shape *l, int n);
/* A task of an element-wise kernel over `all` values: keyed by the element count (dahl_relu_footprint_of), its
 * size its flops, or the count for a copy without arithmetic. The accesses are set by the caller. */
struct dahl_layer_task dahl_layer_task_elementwise(const char *symbol, size_t all, double flops, size_t bytes);

/* t with its accesses: DAHL_LAYER_USES(t, {DAHL_T_X, DAHL_ACCESS_R}, ...), at most
 * DAHL_LAYER_TASK_MAX_ACCESSES of them. */
struct dahl_layer_task dahl_layer_task_uses(struct dahl_layer_task t, const struct dahl_layer_use *uses, int n);
#define DAHL_LAYER_USES(t, ...)                                                                                  \
    dahl_layer_task_uses((t), (const struct dahl_layer_use[]){__VA_ARGS__},                                      \
                         (int)(sizeof((const struct dahl_layer_use[]){__VA_ARGS__}) / sizeof(struct dahl_layer_use)))

#endif /* DAHL_LAYER_H */

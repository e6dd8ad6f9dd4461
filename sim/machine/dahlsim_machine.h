/* Machines synthesized from their specs (`dahlsim machine synth`, sim/cmd/machine.c): StarPU perf models
 * computed by the roofline model of dahlsim_spec.h for every task the covered training setups run
 * (dahl_catalogue.h), and the StarPU-SimGrid platform and bus files of the spec's node, laid out as a
 * measured calibration is:
 *   DIR/NAME/manifest.json                          "source": "roofline", the spec, the efficiencies used
 *   DIR/NAME/sampling/codelets/45/SYMBOL.NAME       StarPU history models (cpu; cuda0..n-1)
 *   DIR/NAME/sampling/bus/NAME.{platform.v4.xml,bandwidth,latency,config}
 * so that STARPU_PERF_MODEL_DIR=DIR/NAME/sampling STARPU_HOSTNAME=NAME simulates on it. One header for the
 * files of the synthesis: dahlsim_machine.c (the steps, sampling/), dahlsim_machine_covers.c (the covered
 * setups), dahlsim_machine_fit.c (--fit), dahlsim_machine_models.c (perf-model files), dahlsim_machine_bus.c
 * (bus and platform files), dahlsim_machine_manifest.c. */
#ifndef DAHLSIM_MACHINE_H
#define DAHLSIM_MACHINE_H

#include "dahlsim_spec.h"

#include "dahl_catalogue.h"
#include "dahl_network.h"

#include <stdbool.h>
#include <stddef.h>

/* Samples claimed by every synthesized history entry: StarPU's calibration minimum (10), so that both the
 * native and the simulated StarPU take the entries as calibrated. */
#define DAHLSIM_SYNTH_NSAMPLE 10

#define DAHLSIM_MACHINE_MAX_COVERS 64

/* ---- the synthesis ---------------------------------------------------------------------------------------- */

/* A training setup whose tasks the machine must model: its tasks' shapes follow from the image shape and
 * the model (not the batch size, nor the reduction: every task is one sample or one parameter tensor). */
#define DAHLSIM_MACHINE_MAX_GRAINS 1024 /* --cover grains=N */

struct dahlsim_machine_cover {
    char dataset[256];
    char model[256];
    int grains; /* tasks over every number of samples in [1, grains] (the training's grain) are catalogued */
    struct dahl_network_desc desc;
};

/* What `machine synth` is asked; the strings are argv's. */
struct dahlsim_synth_opts {
    char command[4096]; /* the command line as typed (getopt_long reorders argv) */
    const char *spec_path;
    const char *machine;
    const char *out; /* where NAME/ goes */
    const char *fit; /* a measured calibration to fit the CPU side to, or NULL */
    long pstate;     /* the spec's CPU frequency state (1-based, of cpu.pstates); 0: the nominal one */
    struct dahlsim_machine_cover covers[DAHLSIM_MACHINE_MAX_COVERS];
    int ncovers;
    bool quiet;
};

/* Writes machine o->machine into o->out (which exists) from the spec o->spec_path, through a temporary
 * directory renamed into place; refuses to replace anything but a roofline machine. Prints a summary on
 * stderr unless o->quiet. Returns 0, or a negative errno after the error lines (-EINVAL: bad input). */
int dahlsim_machine_synth(const struct dahlsim_synth_opts *o);

/* Writes the perf models of every catalogue entry on every architecture of spec (one file per dahl
 * perf-model symbol, entries listed in catalogue order) into sampling/codelets/45/, and the bus and platform
 * files into sampling/bus/ (the platform's comment names spec_path); the directories are created. Returns 0,
 * or -errno with a one-line message naming the file in err. */
int dahlsim_machine_write_sampling(const char *sampling, const char *name, const struct dahlsim_spec *spec,
                                   const char *spec_path, const struct dahl_catalogue *cat, char *err,
                                   size_t err_size);

/* ---- covered setups (dahlsim_machine_covers.c) ------------------------------------------------------------ */

/* Parses "DATASET[,model=M]" (M: lenet, vgg-small, resnet:DEPTH, deep, deep:BLOCKS, a JSON model file or an
 * ONNX file, as `dahlsim train --model`) into c; false after an error line naming --cover. */
bool dahlsim_machine_cover_parse(const char *text, struct dahlsim_machine_cover *c);

/* The default covers (fashion-mnist, synthetic:28x28x3, 128x128x3 and 512x512x3, LeNet) into o->covers when
 * it has none. False when one fails to build. */
bool dahlsim_machine_covers_default(struct dahlsim_synth_opts *o);

/* Adds to cat the tasks of one step of c in both reductions and with and without momentum: every footprint
 * the setup can run. Returns 0, or an error with its reason in err. */
int dahlsim_machine_cover_catalogue(const struct dahlsim_machine_cover *c, struct dahl_catalogue *cat, char *err,
                                    size_t err_size);

/* Task time of one batch-32 training step (REDUX, momentum) of c on one worker of arch, StarPU-SimGrid's
 * per-task microsecond included: what one core or one GPU would take alone, transfers excluded. */
double dahlsim_machine_step_us(const struct dahlsim_machine_cover *c, const struct dahlsim_spec *spec,
                               enum dahlsim_arch arch);

/* The batch of the step dahlsim_machine_step_us times: `dahlsim train`'s default. */
#define DAHLSIM_MACHINE_STEP_BATCH 32

/* ---- --fit (dahlsim_machine_fit.c) ------------------------------------------------------------------------ */

struct dahlsim_machine_fit_result {
    bool fitted;
    int entries;
    double error_before, error_after; /* median relative error of the modelled times */
};

/* What --fit found, for the manifest and the summary. */
struct dahlsim_machine_fit {
    struct dahlsim_machine_fit_result symbols[DAHLSIM_SPEC_MAX_SYMBOLS];
    bool overhead_fitted;
    int overhead_entries;
    double overhead_us;
};

/* Fits spec's CPU side to the measured calibration dir (calibration/OTHER: sampling/codelets/45/SYMBOL.OTHER)
 * at the footprints cat has: first the per-task overhead, the median measured time of the tasks that do
 * next to no work (roofline body under 0.05 us); then, per symbol, the efficiency e (applied to both roofs)
 * that minimises the squared log error of max(flops/peak, bytes/bandwidth)/e + overhead against the measured
 * means. Returns 0, or -1 after printing an error. */
int dahlsim_machine_fit_cpu(const char *dir, struct dahlsim_spec *spec, const struct dahl_catalogue *cat,
                            struct dahlsim_machine_fit *fit);

/* ---- sampling/ files (dahlsim_machine_models.c, dahlsim_machine_bus.c) ------------------------------------ */

/* sampling/codelets/45/SYMBOL.NAME for every dahl perf-model symbol. Returns 0 or -errno, err as above. */
int dahlsim_machine_write_models(const char *sampling, const char *name, const struct dahlsim_spec *spec,
                                 const struct dahl_catalogue *cat, char *err, size_t err_size);

/* sampling/bus/NAME.{bandwidth,latency,config,platform.v4.xml}. Returns 0 or -errno, err as above. */
int dahlsim_machine_write_bus(const char *sampling, const char *name, const char *spec_path,
                              const struct dahlsim_spec *spec, char *err, size_t err_size);

/* ---- manifest.json (dahlsim_machine_manifest.c) ----------------------------------------------------------- */

/* Writes dir/manifest.json: the spec (spec_json, the parsed spec file, taken over), the efficiencies and
 * where each came from, the fit, the covered setups, every modelled task and the versions. Returns 0 or
 * -errno with the reason in err. */
int dahlsim_machine_manifest_write(const char *dir, const struct dahlsim_synth_opts *o,
                                   const struct dahlsim_spec *spec, void *spec_json,
                                   const struct dahl_catalogue *cat, const struct dahlsim_machine_fit *fit,
                                   char *err, size_t err_size);

/* ---- measured power figures (dahlsim_machine_power.c) ---------------------------------------------------- */

struct dahlsim_power_opts {
    const char *machine, *dir;  /* DIR/NAME, an existing calibration */
    const char *source;         /* where the watts come from: the energy results' "source" */
    double cpu_idle_w, cpu_full_w;
    bool gpu;                   /* the GPUs' figures given (required when the platform has GPUs) */
    double gpu_idle_w, gpu_full_w;
};

/* Gives DIR/NAME's platform the figures (every CPU and GPU host's wattage_per_state, MAIN and RAM 0 W, the
 * host energy plugin on; earlier figures replaced) and records them in its manifest's "power". Returns 0, or
 * a negative errno after the error line (-EINVAL: bad input). */
int dahlsim_machine_power(const struct dahlsim_power_opts *o);

/* The "source" of DIR/NAME's manifest ("measured", "roofline", ...) into buf; "" when there is none. */
void dahlsim_machine_existing_source(const char *final, char *buf, size_t size);

#endif /* DAHLSIM_MACHINE_H */

/* Machines synthesized from their specs (`dahlsim machine synth`): StarPU perf models computed by the
 * roofline model of dahlsim_spec.h for every task the covered training setups run (dahl_catalogue.h), and
 * the StarPU-SimGrid platform and bus files of the spec's node, laid out as a measured calibration is:
 *   DIR/NAME/manifest.json                          "source": "roofline", the spec, the efficiencies used
 *   DIR/NAME/sampling/codelets/45/SYMBOL.NAME       StarPU history models (cpu; cuda0..n-1)
 *   DIR/NAME/sampling/bus/NAME.{platform.v4.xml,bandwidth,latency,config}
 * so that STARPU_PERF_MODEL_DIR=DIR/NAME/sampling STARPU_HOSTNAME=NAME simulates on it. */
#ifndef DAHLSIM_MACHINE_H
#define DAHLSIM_MACHINE_H

#include "dahlsim_spec.h"

#include "dahl_catalogue.h"

#include <stddef.h>

/* Samples claimed by every synthesized history entry: StarPU's calibration minimum (10), so that both the
 * native and the simulated StarPU take the entries as calibrated. */
#define DAHLSIM_SYNTH_NSAMPLE 10

/* Writes the perf models of every catalogue entry on every architecture of spec (one file per dahl
 * perf-model symbol, entries listed in catalogue order) into sampling/codelets/45/, and the bus and platform
 * files into sampling/bus/ (the platform's comment names spec_path); the directories are created. Returns 0,
 * or -errno with a one-line message naming the file in err. */
int dahlsim_machine_write_sampling(const char *sampling, const char *name, const struct dahlsim_spec *spec,
                                   const char *spec_path, const struct dahl_catalogue *cat, char *err,
                                   size_t err_size);

#endif /* DAHLSIM_MACHINE_H */

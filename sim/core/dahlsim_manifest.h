/* Calibrated machines: calibration/NAME/ as `dahlsim calibrate` writes it (sampling/ for StarPU, a
 * manifest.json). What every reader of a machine directory shares, StarPU-free. */
#ifndef DAHLSIM_MANIFEST_H
#define DAHLSIM_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

/* True for a usable machine name (also STARPU_HOSTNAME and a directory name): 1 to 64 of [A-Za-z0-9._-],
 * not starting with '.' or '-'. */
bool dahlsim_machine_name_valid(const char *name);

/* An option's machine name: false, after printing the error naming option, when text is not a usable name. */
bool dahlsim_parse_machine_name(const char *option, const char *text);

/* The key of a worker configuration in a manifest's "scheduling.push_us" (the policies' measured cost per
 * push): "2cpu", or "13cpu+1gpu" with GPUs. */
void dahlsim_sched_workers_key(long cpus, long gpus, char *buf, size_t size);

#endif /* DAHLSIM_MANIFEST_H */

/* Calibrated machines: calibration/NAME/ as `dahlsim calibrate` writes it (sampling/ for StarPU, a
 * manifest.json). Helpers shared by the commands that read or write machine directories. */
#ifndef DAHLSIM_CALIBRATE_H
#define DAHLSIM_CALIBRATE_H

#include <stdbool.h>

/* True for a usable machine name (also STARPU_HOSTNAME and a directory name): 1 to 64 of [A-Za-z0-9._-],
 * not starting with '.' or '-'. */
bool dahlsim_machine_name_valid(const char *name);

#endif /* DAHLSIM_CALIBRATE_H */

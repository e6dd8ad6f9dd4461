/* Reading one StarPU perf-model file (format 45, as StarPU 1.3.10's perfmodel_history.c writes it) of a
 * calibration: the expected time of a task of given footprint and size on an architecture, the way StarPU
 * computes it for each perf-model kind. Used by `dahlsim dag export` to give exported graphs their costs.
 * Ownership: a dahlsim_perfmodel owns its entries. */
#ifndef DAHLSIM_PERFMODEL_H
#define DAHLSIM_PERFMODEL_H

#include "dahl_perfnames.h"

#include <stddef.h>
#include <stdint.h>

struct dahlsim_perfmodel;

/* Loads path. NULL with a reason naming the file in err when it cannot be read or holds no model. */
struct dahlsim_perfmodel *dahlsim_perfmodel_load(const char *path, char *err, size_t err_size);
void dahlsim_perfmodel_destroy(struct dahlsim_perfmodel *m);
/* The same, kept for the next call: a file is read at every call but parsed again only when its bytes
 * changed (an export per job, grain candidate and sweep point reads the same files). The model belongs to
 * the cache (up to 64 files; the oldest goes first): do not destroy it. Not thread-safe. */
const struct dahlsim_perfmodel *dahlsim_perfmodel_get(const char *path, char *err, size_t err_size);

/* The expected microseconds of a task of (footprint, size) on arch ("cpu0", "cuda0": the architecture's
 * name in the file's "# Model for ARCH_implN" lines, implementation 0), under kind: history, the entry's
 * mean; regression, alpha size^beta where the fit is valid and size within [0.9 min, 1.1 max] of the
 * measured sizes; nl-regression, a size^b + c likewise, else the history entry (StarPU's fallback).
 * Negative when the file has no such architecture or no usable model for the task. */
double dahlsim_perfmodel_us(const struct dahlsim_perfmodel *m, const char *arch, enum dahl_perfmodel_kind kind,
                            uint32_t footprint, size_t size);

#endif /* DAHLSIM_PERFMODEL_H */

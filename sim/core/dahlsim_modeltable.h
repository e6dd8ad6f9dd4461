/* The history entries of a calibration's StarPU perf-model files (format 45, as StarPU 1.3.10's
 * perfmodel_history.c writes them): every entry of every sampling/codelets/45/SYMBOL.MACHINE, how spread
 * its samples are, and the per-model report `dahlsim calibrate` prints. StarPU-free: it reads files.
 * Ownership: a table owns its entries (dahlsim_model_table_fini). */
#ifndef DAHLSIM_MODELTABLE_H
#define DAHLSIM_MODELTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One history entry of a StarPU perf-model file. */
struct dahlsim_model_entry {
    char symbol[96];
    char arch[48];
    unsigned footprint;
    unsigned long size;
    double flops, mean_us, dev_us;
    unsigned nsample;
};

struct dahlsim_model_table {
    struct dahlsim_model_entry *v;
    size_t n, cap;
};

/* Adds every entry of every "<symbol>.<machine>" file in sampling/codelets/45 to t (zeroed before the first
 * call), sorted by symbol, architecture, size and footprint. Returns 0 or -errno. */
int dahlsim_model_table_load(const char *sampling, const char *machine, struct dahlsim_model_table *t);
void dahlsim_model_table_fini(struct dahlsim_model_table *t);

/* An entry's relative standard deviation (0 for a zero mean), and whether it exceeds max_rsd. */
double dahlsim_model_entry_rsd(const struct dahlsim_model_entry *e);
bool dahlsim_model_entry_flagged(const struct dahlsim_model_entry *e, double max_rsd);

/* The entry of symbol, arch and footprint in t (loaded, hence sorted), or NULL. */
const struct dahlsim_model_entry *dahlsim_model_table_find(const struct dahlsim_model_table *t, const char *symbol,
                                                           const char *arch, unsigned long size, unsigned footprint);

/* A calibration's perf models measured again with one CPU worker (`dahlsim calibrate`, beside sampling/):
 * simulations with fewer CPU workers than the calibration's cores read them (dahlsim_kernels.h). */
#define DAHLSIM_ONE_WORKER_SAMPLING "sampling-1cpu"

/* Rewrites every "<symbol>.<machine>" file in dir/codelets/45 in place: each CPU entry's mean and deviation
 * become (1 - w) times its own plus w times those of the same entry in other (other's CPU entries are
 * left out where dir has none; an entry other lacks stays as it is), its sum and sum of squares follow.
 * Returns 0 or -errno. */
int dahlsim_model_dir_blend(const char *dir, const char *machine, const struct dahlsim_model_table *other, double w);

/* For dahlsim_model_dir_rewrite: the new mean and deviation of entry e (its symbol set) into *mean and *dev,
 * or false to leave it as it is. */
typedef bool (*dahlsim_model_rewrite_fn)(const struct dahlsim_model_entry *e, double *mean, double *dev, void *ctx);

/* Rewrites every "<symbol>.<machine>" file in dir/codelets/45 in place, each history entry's mean and deviation
 * as fn says (its sample count kept, its sum and sum of squares following). Returns 0 or -errno. */
int dahlsim_model_dir_rewrite(const char *dir, const char *machine, dahlsim_model_rewrite_fn fn, void *ctx);

/* One line per entry (FLAGGED above max_rsd) and a closing count, to f. */
void dahlsim_model_table_print(const struct dahlsim_model_table *t, double max_rsd, FILE *f);

#endif /* DAHLSIM_MODELTABLE_H */

/* The interval around a simulated makespan that the calibration's measured spread of the machine implies
 * (manifest.json's "machine_spread", written by calibrate): its perf models were measured in one spell of
 * the machine (calibrated_in: the kernel probe's median over the measuring runs), and the same machine ran
 * the probe anywhere between its p10 and p90 over every run calibrate kept. A native run in a spell whose
 * kernels run g times as fast as the calibrated one takes about 1/g of the time where kernels bound it, so
 * the interval is the makespan times calibrated/p90 to calibrated/p10 (never excluding the makespan itself).
 * What the interval leaves out, and says: the runtime's costs per spell of the cores' distance (recorded by
 * calibrate, not charged here), and spells calibrate never saw. Front end only. */
#ifndef DAHLSIM_INTERVAL_H
#define DAHLSIM_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* The factors a makespan is multiplied by for the interval's ends, and the spell they come from, from a
 * manifest's "machine_spread". */
struct dahlsim_interval {
    double lo, hi;                /* factors: lo <= 1 <= hi */
    double calibrated, p10, p90;  /* the probe's GFLOP/s they come from (0: not recorded) */
    double apart;                 /* calibrated_in's share of runs with the cores apart (-1: not recorded) */
    double shortest_ns;           /* the calibration's shortest round trip between the cores (0: not recorded) */
};

/* The interval factors and spell of manifest m (its parsed JSON; NULL reads as none). false when it has no
 * usable machine_spread (a calibration made before calibrate recorded it: the interval is unknown); the
 * spell's figures are filled where recorded all the same. */
bool dahlsim_interval_of(const struct cJSON *manifest, struct dahlsim_interval *iv);
/* The same from machine_dir/manifest.json. */
bool dahlsim_interval_of_machine(const char *machine_dir, struct dahlsim_interval *iv);

/* Adds "prediction_interval" to the results.json in out_dir of a simulation on the calibration in machine_dir:
 * {"makespan_s": [lo, hi], "samples_per_s": [lo, hi], "basis", "calibrated_probe_gflops", "probe_p10_gflops",
 * "probe_p90_gflops"}, or {"unknown": why} when the calibration has no measured spread. 0, or a negative errno
 * with the reason in err. */
int dahlsim_interval_add(const char *machine_dir, const char *out_dir, char *err, size_t err_size);

/* What a run's results.json says of its prediction: makespan and samples/s, their interval's ends (NAN where
 * unknown), why it is unknown ("" when known, or not said) and the cores' placement calibrated ("" unknown). */
struct dahlsim_prediction {
    double makespan_s, samples_per_s;
    double makespan_lo, makespan_hi, rate_lo, rate_hi;
    char unknown[256], cores[32];
};

/* Reads results (a parsed results.json; NULL reads as none) into p. false when it has no makespan_s and
 * samples_per_s. */
bool dahlsim_prediction_of(const struct cJSON *results, struct dahlsim_prediction *p);
/* The same from dir/results.json. */
bool dahlsim_prediction_read(const char *dir, struct dahlsim_prediction *p);

#endif /* DAHLSIM_INTERVAL_H */

/* Helpers shared by the tests that run dahlsim's binaries as a user (or dahlsim itself) would. */
#ifndef DAHL_TEST_UTIL_H
#define DAHL_TEST_UTIL_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* The output of one run of a dahlsim binary. */
struct dahl_test_run {
    int status;       /* exit status, 128 + signal when killed */
    char out[65536];  /* stdout, NUL-terminated */
    char err[65536];  /* stderr, NUL-terminated */
};

/* Runs argv (argv[0]: an executable path) with the environment variables given as "NAME=VALUE" strings in
 * env (NULL-terminated; may be NULL) added, capturing stdout and stderr into *run. Aborts the test when the
 * process cannot be started. */
void dahl_test_run(struct dahl_test_run *run, char *const argv[], char *const env[]);
/* dahl_test_run of bin with the arguments args (NULL-terminated, at most 62). */
void dahl_test_run_args(struct dahl_test_run *run, const char *bin, const char *const args[], char *const env[]);
/* Removes path and everything under it (rm -rf), which must be a test's own, under /tmp/; fails the test
 * when it cannot. */
void dahl_test_remove_tree(const char *path);
/* Writes text to path (a test's scenario, model or spec file); fails the test when it cannot. */
void dahl_test_write_file(const char *path, const char *text);

/* Asserts that run was an input error: exit 2, and a first stderr line "dahlsim: error: ..." that contains
 * want1 and, unless NULL, want2. what names the case in failure messages. */
void dahl_test_assert_input_error(const struct dahl_test_run *run, const char *what, const char *want1,
                                  const char *want2);

/* dir/results.json without its "wall_s", "peak_rss_kib", "maps_first_step" and "maps_peak" lines, the only
 * fields that may differ between two simulations of one scenario (the caller frees it). Aborts the test when
 * the file is missing. */
char *dahl_test_results_without_wall(const char *dir);

/* Copies the fixture machine calibration_root/name into home/calibration/name (creating home/calibration),
 * for a test that changes its copy and runs with DAHLSIM_HOME=home. Aborts the test on failure. */
void dahl_test_machine_copy(const char *calibration_root, const char *name, const char *home);

/* Adds "key": json as the first member of machine_dir/manifest.json (the keys dahlsim calibrate writes, for a
 * test). Aborts the test on failure. */
void dahl_test_manifest_add(const char *machine_dir, const char *key, const char *json);

/* The whole file at path, NUL-terminated (1 MiB at most), in a buffer the next call overwrites. Aborts the test
 * when the file cannot be opened. */
const char *dahl_test_read_file(const char *path);

/* The number after "key": in a one-line JSON object, or NAN when absent. */
double dahl_test_json_number(const char *json, const char *key);

/* dir/name, parsed (the caller deletes it). Aborts the test when it is missing or not JSON. */
cJSON *dahl_test_json_in(const char *dir, const char *name);
/* dir/results.json, parsed (the caller deletes it). Aborts the test when it is missing or not JSON. */
cJSON *dahl_test_results_json(const char *dir);
/* o's member key, which must be a number (the test fails otherwise). */
double dahl_test_number(const cJSON *o, const char *key);

#endif /* DAHL_TEST_UTIL_H */

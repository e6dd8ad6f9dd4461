/* Reading a scenario's fields, shared by the files of sim/scenario that parse one experiment: where an error
 * is (the file and the sweep point), the one-line error naming the field, and typed getters that print it. */
#ifndef DAHLSIM_SCENARIO_FIELDS_H
#define DAHLSIM_SCENARIO_FIELDS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The context of error messages: "FILE: " or "FILE: sweep point 3 (batch=4): ". */
struct dahlsim_where {
    const char *path;
    const char *point; /* "" for the base experiment */
};

/* `FILE: [sweep point (P): ]"key": expected EXPECTED, got GOT` on stderr. */
void dahlsim_field_error(const struct dahlsim_where *w, const char *key, const cJSON *got, const char *expected);
/* Integer key in [min, max]; absent: dflt. False after the error line. */
bool dahlsim_field_int(const struct dahlsim_where *w, const cJSON *o, const char *key, long min, long max, long dflt,
                       long *out);
/* Number key in [min, max]; absent: dflt. */
bool dahlsim_field_number(const struct dahlsim_where *w, const cJSON *o, const char *key, double min, double max,
                          double dflt, double *out);
/* Non-empty string key that fits size; absent: dflt, or an error when dflt is NULL (a required key). */
bool dahlsim_field_string(const struct dahlsim_where *w, const cJSON *o, const char *key, const char *dflt, char *out,
                          size_t size, const char *expected);

/* The machine's manifest at path, parsed, or NULL when it is unreadable (dahlsim_scenario_machine.c). The last
 * one read is kept with its text: a sweep's points read the same file, and a large one (372 KB for
 * roofline-14cpu-1v100) is parsed again only when its bytes change. Owned by the cache: callers must not free
 * it. */
const cJSON *dahlsim_scenario_manifest(const char *path);

#endif /* DAHLSIM_SCENARIO_FIELDS_H */

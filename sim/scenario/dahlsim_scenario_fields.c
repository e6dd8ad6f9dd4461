/* A scenario's fields read with one-line errors: see dahlsim_scenario_fields.h. */
#include "dahlsim_scenario_fields.h"
#include "dahlsim_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dahlsim_field_error(const struct dahlsim_where *w, const char *key, const cJSON *got, const char *expected)
{
    char *text = got != NULL ? cJSON_PrintUnformatted(got) : NULL;
    if (w->point[0] != '\0')
        dahlsim_error("%s: sweep point (%s): \"%s\": expected %s, got %s", w->path, w->point, key, expected,
                      text != NULL ? text : "nothing");
    else
        dahlsim_error("%s: \"%s\": expected %s, got %s", w->path, key, expected, text != NULL ? text : "nothing");
    free(text);
}

/* Integer key in [min, max]; absent: dflt. */
bool dahlsim_field_int(const struct dahlsim_where *w, const cJSON *o, const char *key, long min, long max, long dflt, long *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    if (item == NULL) {
        *out = dflt;
        return true;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!cJSON_IsNumber(item) || v != floor(v) || v < (double)min || v > (double)max) {
        char expected[96];
        snprintf(expected, sizeof(expected), "an integer in [%ld, %ld]", min, max);
        dahlsim_field_error(w, key, item, expected);
        return false;
    }
    *out = (long)v;
    return true;
}

bool dahlsim_field_number(const struct dahlsim_where *w, const cJSON *o, const char *key, double min, double max, double dflt,
                       double *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    if (item == NULL) {
        *out = dflt;
        return true;
    }
    if (!cJSON_IsNumber(item) || !(item->valuedouble >= min && item->valuedouble <= max)) {
        char expected[96];
        snprintf(expected, sizeof(expected), "a number in [%g, %g]", min, max);
        dahlsim_field_error(w, key, item, expected);
        return false;
    }
    *out = item->valuedouble;
    return true;
}

bool dahlsim_field_string(const struct dahlsim_where *w, const cJSON *o, const char *key, const char *dflt, char *out,
                       size_t size, const char *expected)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    if (item == NULL) {
        if (dflt == NULL) {
            dahlsim_field_error(w, key, NULL, expected);
            return false;
        }
        snprintf(out, size, "%s", dflt);
        return true;
    }
    if (!cJSON_IsString(item) || item->valuestring[0] == '\0' || strlen(item->valuestring) >= size) {
        dahlsim_field_error(w, key, item, expected);
        return false;
    }
    snprintf(out, size, "%s", item->valuestring);
    return true;
}

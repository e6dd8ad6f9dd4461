/* Calibrated machines' names and manifest keys: see dahlsim_manifest.h. */
#include "dahlsim_manifest.h"

#include "dahlsim_util.h"

#include <stdio.h>
#include <string.h>

bool dahlsim_machine_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return false;
    }
    return true;
}

bool dahlsim_parse_machine_name(const char *option, const char *text)
{
    if (dahlsim_machine_name_valid(text))
        return true;
    dahlsim_error("%s: expected a name of 1 to 64 letters, digits, '.', '_' or '-' (not starting with '.' or '-'), "
                  "got \"%s\"",
                  option, text);
    return false;
}

/* The key of a worker configuration in the manifest's "scheduling.push_us": "2cpu", "13cpu+1gpu". */
void dahlsim_sched_workers_key(long cpus, long gpus, char *buf, size_t size)
{
    if (gpus > 0)
        snprintf(buf, size, "%ldcpu+%ldgpu", cpus, gpus);
    else
        snprintf(buf, size, "%ldcpu", cpus);
}

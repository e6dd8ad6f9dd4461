/* Calibrated machines' names and manifest keys: see dahlsim_manifest.h. */
#include "dahlsim_manifest.h"

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

/* The key of a worker configuration in the manifest's "scheduling.push_us": "2cpu", "13cpu+1gpu". */
void dahlsim_sched_workers_key(long cpus, long gpus, char *buf, size_t size)
{
    if (gpus > 0)
        snprintf(buf, size, "%ldcpu+%ldgpu", cpus, gpus);
    else
        snprintf(buf, size, "%ldcpu", cpus);
}

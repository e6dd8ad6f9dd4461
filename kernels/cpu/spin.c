/* Busy-wait kernel: keeps one core busy for a given wall time. The probe codelet uses it to give native
 * runs a known task duration that simulated runs can be compared with. */
#include "dahl_kernels.h"

#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void dahl_spin_us(double duration_us)
{
    const double end = now_us() + duration_us;
    while (now_us() < end) {
        /* spin */
    }
}

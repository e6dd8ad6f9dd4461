/* Shared by the files of sim/lab/ only: the seeded draws of the generator, the control search and the
 * GPU-sharing GA (the same splitmix64 stream as ever, so seeds keep their graphs and lists), the int
 * comparison for qsort, and the network description of an export (export.c, share_export.c). */
#ifndef DAHLSIM_LAB_INTERNAL_H
#define DAHLSIM_LAB_INTERNAL_H

#include "dahl_random.h"

#include <stddef.h>
#include <stdint.h>

/* Uniform in [0, n) (0 when n is 0). */
static inline uint64_t rng_below(uint64_t *state, uint64_t n)
{
    return n > 0 ? dahl_splitmix64(state) % n : 0;
}

/* Uniform in [0, 1), 53 bits. */
static inline double rng_unit(uint64_t *state)
{
    return (double)(dahl_splitmix64(state) >> 11) * 0x1.0p-53;
}

static inline int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

struct dahlsim_dag_export_conf;
#endif /* DAHLSIM_LAB_INTERNAL_H */

/* The one pseudo-random generator of dahl (splitmix64, Steele, Lea & Flood, OOPSLA 2014): small and well
 * mixed, so datasets and initial weights depend only on the seed, on every machine. Header-only. */
#ifndef DAHL_RANDOM_H
#define DAHL_RANDOM_H

#include <stdint.h>

/* Advances *state and returns the next 64 random bits. */
static inline uint64_t dahl_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif /* DAHL_RANDOM_H */

/* The one way dahl grows a heap array: doubling, with the overflow and out-of-memory checks written once.
 * Header only and StarPU-free, for every folder (common/ is below kernels/); tests/test_array.c checks it. */
#ifndef DAHL_ARRAY_H
#define DAHL_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The capacity an array gets when it first grows: small, since capacities only cost memory, and doubling
 * reaches any size in a few steps. */
enum { DAHL_ARRAY_MIN_CAP = 16 };

/* Makes items, an array of *cap elements of elem_size bytes (malloc'ed, or NULL with *cap 0), hold at least
 * need elements. Returns items itself when it already does (and is not NULL: NULL always means a failure).
 * Else returns the block realloc'ed to the capacity doubled from *cap (from DAHL_ARRAY_MIN_CAP at least)
 * until need fits, its contents kept, and sets *cap to it; items is then invalid. Returns NULL when memory
 * runs out or the size in bytes would overflow (elem_size 0 included): items is then untouched, still
 * valid and still the caller's to free, and *cap unchanged. Doubling keeps n appends at O(n) copies in all.
 *
 *     struct x *g = dahl_array_grow(xs, &cap, n + 1, sizeof(*xs));
 *     if (g == NULL)
 *         return -ENOMEM;
 *     xs = g;
 *     xs[n++] = x;
 *
 * The block is returned rather than stored through a void ** so that one helper serves every element type
 * in strictly conforming C (a struct x ** is not a void **). */
static inline void *dahl_array_grow(void *items, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap && items != NULL)
        return items;
    size_t grown = *cap > DAHL_ARRAY_MIN_CAP ? *cap : DAHL_ARRAY_MIN_CAP;
    while (grown < need)
        grown = grown <= SIZE_MAX / 2 ? 2 * grown : need;
    if (elem_size == 0 || grown > SIZE_MAX / elem_size)
        return NULL;
    void *block = realloc(items, grown * elem_size);
    if (block == NULL)
        return NULL;
    *cap = grown;
    return block;
}

#endif

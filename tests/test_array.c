/* common/dahl_array.h: dahl_array_grow from an empty array, by doubling, keeping what the array holds, and
 * refusing a size that would overflow with NULL while the array and its capacity stay as they were. */
#include <criterion/criterion.h>

#include "dahl_array.h"

#include <stdint.h>
#include <stdlib.h>

Test(array, grows_from_empty_to_the_minimum)
{
    size_t cap = 0;
    int *v = dahl_array_grow(NULL, &cap, 1, sizeof(*v));
    cr_assert_not_null(v);
    cr_assert_eq(cap, DAHL_ARRAY_MIN_CAP);
    v[0] = 7;
    cr_assert_eq(dahl_array_grow(v, &cap, DAHL_ARRAY_MIN_CAP, sizeof(*v)), v, "room enough: the same block");
    cr_assert_eq(cap, DAHL_ARRAY_MIN_CAP);
    free(v);
}

Test(array, an_empty_array_is_allocated_even_for_nothing)
{
    /* NULL always means a failure, so a NULL array gets a block even when it is asked for 0 elements. */
    size_t cap = 0;
    double *v = dahl_array_grow(NULL, &cap, 0, sizeof(*v));
    cr_assert_not_null(v);
    cr_assert_eq(cap, DAHL_ARRAY_MIN_CAP);
    free(v);
}

Test(array, doubles_and_keeps_the_contents)
{
    size_t cap = 0, n = 0;
    long *v = NULL;
    for (long i = 0; i < 1000; i++) {
        long *g = dahl_array_grow(v, &cap, n + 1, sizeof(*v));
        cr_assert_not_null(g, "element %ld", i);
        v = g;
        v[n++] = 3 * i;
        cr_assert_geq(cap, n);
    }
    cr_assert_eq(cap, 1024, "16 doubled 6 times");
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(v[i], 3 * (long)i, "element %zu", i);
    /* A jump past several doublings lands on the first doubling that holds it. */
    long *g = dahl_array_grow(v, &cap, 5000, sizeof(*v));
    cr_assert_not_null(g);
    v = g;
    cr_assert_eq(cap, 8192);
    cr_assert_eq(v[999], 2997);
    free(v);
}

Test(array, refuses_an_overflowing_size_and_leaves_the_array)
{
    size_t cap = 0;
    uint64_t *v = dahl_array_grow(NULL, &cap, 3, sizeof(*v));
    cr_assert_not_null(v);
    v[0] = 1, v[1] = 2, v[2] = 3;
    /* Elements a size_t counts but whose bytes it cannot: refused before any realloc (which, asked for
     * that much, the sanitizers would report instead of returning NULL). */
    const size_t needs[] = {SIZE_MAX / sizeof(*v) + 1, SIZE_MAX / 2, SIZE_MAX};
    for (size_t k = 0; k < sizeof(needs) / sizeof(needs[0]); k++) {
        cr_assert_null(dahl_array_grow(v, &cap, needs[k], sizeof(*v)), "need %zu", needs[k]);
        cr_assert_eq(cap, DAHL_ARRAY_MIN_CAP, "need %zu: the capacity is unchanged", needs[k]);
    }
    cr_assert_null(dahl_array_grow(v, &cap, DAHL_ARRAY_MIN_CAP + 1, 0), "elements of 0 bytes");
    cr_assert_eq(cap, DAHL_ARRAY_MIN_CAP);
    /* Still the caller's array, contents intact (AddressSanitizer would catch a freed one). */
    cr_assert(v[0] == 1 && v[1] == 2 && v[2] == 3);
    free(v);
}

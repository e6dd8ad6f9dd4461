/* dahl tensors on native StarPU: shapes, the batch split into per-sample handles, and read/write back.
 * Each test starts its own StarPU (Criterion runs every test in its own process). */
#include <criterion/criterion.h>

#include "dahl_engine.h"
#include "dahl_tensor.h"
#include "dahl_tensor_starpu.h"

#include <errno.h>
#include <stdlib.h>

static void start(void)
{
    char home[] = "/tmp/dahlsim-tensor-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    setenv("STARPU_HOME", home, 1);
    setenv("STARPU_SILENT", "1", 1);
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = 1;
    conf.ngpu = 0;
    cr_assert_eq(dahl_engine_start(&conf), 0);
}

TestSuite(tensor, .init = start, .fini = dahl_engine_stop);

Test(tensor, shape_and_counts)
{
    struct dahl_tensor *t = dahl_tensor_create(4, (int[]){5, 3, 4, 2});
    cr_assert_not_null(t);
    cr_assert_eq(dahl_tensor_ndim(t), 4);
    cr_assert_eq(dahl_tensor_dim(t, 0), 5);
    cr_assert_eq(dahl_tensor_dim(t, 3), 2);
    cr_assert_eq(dahl_tensor_count(t), 120);
    cr_assert_eq(dahl_tensor_sample_count(t), 24);
    cr_assert_eq(starpu_vector_get_nx(dahl_tensor_handle(t)), 120);
    dahl_tensor_destroy(t);
}

Test(tensor, bad_shapes_are_refused)
{
    cr_assert_null(dahl_tensor_create(0, (int[]){1}));
    cr_assert_null(dahl_tensor_create(5, (int[]){1, 1, 1, 1, 1}));
    cr_assert_null(dahl_tensor_create(2, (int[]){3, 0}));
    cr_assert_null(dahl_tensor_create(2, (int[]){-1, 4}));
    dahl_tensor_destroy(NULL);
}

Test(tensor, batch_split_gives_one_handle_per_sample_over_its_slice)
{
    struct dahl_tensor *t = dahl_tensor_create(3, (int[]){4, 2, 3});
    float values[24];
    for (int i = 0; i < 24; i++)
        values[i] = (float)i;
    cr_assert_eq(dahl_tensor_write(t, values, 24), 0);
    cr_assert_eq(dahl_tensor_split_batch(t), 0);
    cr_assert(dahl_tensor_is_split(t));
    cr_assert_eq(dahl_tensor_split_batch(t), -EALREADY);
    cr_assert_null(dahl_tensor_handle(t));
    cr_assert_null(dahl_tensor_sample(t, 4));
    cr_assert_eq(dahl_tensor_read(t, values, 24), -EINVAL, "read while split must be refused");
    for (int i = 0; i < 4; i++) {
        starpu_data_handle_t s = dahl_tensor_sample(t, i);
        cr_assert_not_null(s);
        cr_assert_eq(starpu_vector_get_nx(s), 6);
        cr_assert_eq(starpu_data_acquire(s, STARPU_RW), 0);
        float *p = (float *)starpu_vector_get_local_ptr(s);
        cr_assert_eq(p[0], (float)(6 * i), "sample %d starts at element %d", i, 6 * i);
        p[5] = -1.0f - (float)i; /* written through the sample handle */
        starpu_data_release(s);
    }
    dahl_tensor_unsplit(t);
    cr_assert_not(dahl_tensor_is_split(t));
    float back[24];
    cr_assert_eq(dahl_tensor_read(t, back, 24), 0);
    for (int i = 0; i < 24; i++) {
        float expected = i % 6 == 5 ? -1.0f - (float)(i / 6) : (float)i;
        cr_assert_eq(back[i], expected, "element %d", i);
    }
    dahl_tensor_destroy(t);
}

Test(tensor, new_tensors_are_zero_and_sizes_must_match)
{
    struct dahl_tensor *t = dahl_tensor_create(1, (int[]){7});
    float back[7] = {1, 1, 1, 1, 1, 1, 1};
    cr_assert_eq(dahl_tensor_read(t, back, 7), 0);
    for (int i = 0; i < 7; i++)
        cr_assert_eq(back[i], 0.0f);
    cr_assert_eq(dahl_tensor_read(t, back, 6), -EINVAL);
    dahl_tensor_destroy(t);
}

/* Datasets: the IDX/gzip reader on small files written here (good, truncated, wrong magic, missing), the
 * real Fashion-MNIST when Debian's package is installed, and the synthetic generator's determinism. */
#include <criterion/criterion.h>

#include "dahl_dataset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];
static char err[512];

static void be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Writes dir/name as gzip: a header of nwords big-endian words, then nbytes of payload. */
static void write_gz(const char *name, const uint32_t *words, int nwords, const uint8_t *payload, size_t nbytes)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    gzFile f = gzopen(path, "wb");
    cr_assert_not_null(f);
    for (int i = 0; i < nwords; i++) {
        uint8_t b[4];
        be32(b, words[i]);
        cr_assert_eq(gzwrite(f, b, 4), 4);
    }
    if (nbytes > 0)
        cr_assert_eq(gzwrite(f, payload, (unsigned)nbytes), (int)nbytes);
    gzclose(f);
}

/* A 3-sample, 2x2 "train" split with labels 7, 0, 9. */
static void write_tiny_split(void)
{
    const uint8_t pixels[12] = {0, 255, 51, 102, 1, 2, 3, 4, 255, 255, 0, 0};
    const uint8_t labels[3] = {7, 0, 9};
    write_gz("train-images-idx3-ubyte.gz", (uint32_t[]){0x803, 3, 2, 2}, 4, pixels, sizeof(pixels));
    write_gz("train-labels-idx1-ubyte.gz", (uint32_t[]){0x801, 3}, 2, labels, sizeof(labels));
}

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/dahlsim-dataset-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

TestSuite(dataset, .init = make_dir);

Test(dataset, idx_files_are_read_and_scaled)
{
    write_tiny_split();
    struct dahl_dataset d;
    cr_assert_eq(dahl_dataset_load_fashion_mnist(dir, 1, 0, &d, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(d.n, 3);
    cr_assert_eq(d.c, 1);
    cr_assert_eq(d.h, 2);
    cr_assert_eq(d.w, 2);
    cr_assert_eq(d.nclasses, 10);
    cr_assert_float_eq(d.images[1], 1.0f, 1e-7);
    cr_assert_float_eq(d.images[2], 0.2f, 1e-7);
    cr_assert_eq(d.labels[0], 7);
    cr_assert_eq(d.labels[2], 9);
    dahl_dataset_fini(&d);
    cr_assert_eq(dahl_dataset_load_fashion_mnist(dir, 1, 2, &d, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(d.n, 2, "max_samples keeps the first samples");
    cr_assert_eq(d.labels[1], 0);
    dahl_dataset_fini(&d);
    dahl_dataset_fini(&d); /* a zeroed dataset is safe to free again */
}

Test(dataset, missing_file_names_the_file)
{
    struct dahl_dataset d;
    cr_assert_eq(dahl_dataset_load_fashion_mnist(dir, 0, 0, &d, err, sizeof(err)), -ENOENT);
    cr_assert(strstr(err, "t10k-images-idx3-ubyte.gz") != NULL, "%s", err);
    cr_assert(strstr(err, dir) != NULL, "%s", err);
}

Test(dataset, wrong_magic_and_truncation_are_refused)
{
    const uint8_t pixels[8] = {0};
    struct dahl_dataset d;
    write_gz("train-images-idx3-ubyte.gz", (uint32_t[]){0x801, 2, 2, 2}, 4, pixels, sizeof(pixels));
    cr_assert_eq(dahl_dataset_load_fashion_mnist(dir, 1, 0, &d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "magic 0x00000801, expected 0x00000803") != NULL, "%s", err);
    write_gz("train-images-idx3-ubyte.gz", (uint32_t[]){0x803, 3, 2, 2}, 4, pixels, sizeof(pixels));
    cr_assert_eq(dahl_dataset_load_fashion_mnist(dir, 1, 0, &d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "truncated: 8 of 12 data bytes") != NULL, "%s", err);
}

Test(dataset, labels_out_of_range_are_refused)
{
    write_tiny_split();
    write_gz("train-labels-idx1-ubyte.gz", (uint32_t[]){0x801, 3}, 2, (const uint8_t[]){1, 12, 3}, 3);
    struct dahl_dataset d;
    cr_assert_eq(dahl_dataset_load_fashion_mnist(dir, 1, 0, &d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "label 12 of sample 1") != NULL, "%s", err);
}

Test(dataset, debian_fashion_mnist_when_installed)
{
    struct stat st;
    if (stat(DAHL_FASHION_MNIST_DIR "/t10k-images-idx3-ubyte.gz", &st) != 0)
        cr_skip_test("dataset-fashion-mnist is not installed");
    struct dahl_dataset d;
    cr_assert_eq(dahl_dataset_load_fashion_mnist(NULL, 0, 0, &d, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(d.n, 10000);
    cr_assert_eq(d.h, 28);
    cr_assert_eq(d.w, 28);
    int per_class[10] = {0};
    for (int i = 0; i < d.n; i++)
        per_class[d.labels[i]]++;
    for (int k = 0; k < 10; k++)
        cr_assert_eq(per_class[k], 1000, "class %d has %d test images", k, per_class[k]);
    dahl_dataset_fini(&d);
}

Test(dataset, synthetic_is_deterministic_and_shaped)
{
    struct dahl_dataset a, b, c;
    cr_assert_eq(dahl_dataset_synthetic(20, 3, 8, 6, 4, 42, 1, &a), 0);
    cr_assert_eq(dahl_dataset_synthetic(20, 3, 8, 6, 4, 42, 1, &b), 0);
    cr_assert_eq(dahl_dataset_synthetic(20, 3, 8, 6, 4, 43, 1, &c), 0);
    size_t count = 20 * 3 * 8 * 6;
    cr_assert_eq(memcmp(a.images, b.images, count * sizeof(float)), 0);
    cr_assert_eq(memcmp(a.labels, b.labels, 20), 0);
    cr_assert_neq(memcmp(a.images, c.images, count * sizeof(float)), 0, "the seed must matter");
    for (size_t i = 0; i < count; i++)
        cr_assert(a.images[i] >= 0.0f && a.images[i] <= 1.0f);
    for (int i = 0; i < 20; i++)
        cr_assert_lt(a.labels[i], 4);
    dahl_dataset_fini(&a);
    dahl_dataset_fini(&b);
    dahl_dataset_fini(&c);
}

Test(dataset, synthetic_classes_differ_more_than_samples_within_a_class)
{
    /* Learnable labels: two samples of one class are closer than samples of different classes, on average. */
    struct dahl_dataset d;
    cr_assert_eq(dahl_dataset_synthetic(200, 3, 16, 16, 5, 7, 1, &d), 0);
    size_t per = 3 * 16 * 16;
    double same = 0, diff = 0;
    int nsame = 0, ndiff = 0;
    for (int i = 0; i < 60; i++) {
        for (int j = i + 1; j < 60; j++) {
            double dist = 0;
            for (size_t k = 0; k < per; k++) {
                double t = d.images[i * per + k] - d.images[j * per + k];
                dist += t * t;
            }
            if (d.labels[i] == d.labels[j]) {
                same += dist;
                nsame++;
            } else {
                diff += dist;
                ndiff++;
            }
        }
    }
    cr_assert(nsame > 0 && ndiff > 0);
    cr_assert_lt(same / nsame, 0.8 * diff / ndiff, "same-class %.2f vs other-class %.2f", same / nsame,
                 diff / ndiff);
    dahl_dataset_fini(&d);
}

Test(dataset, shape_only_and_bad_arguments)
{
    struct dahl_dataset d;
    cr_assert_eq(dahl_dataset_synthetic(64, 3, 512, 512, 10, 1, 0, &d), 0);
    cr_assert_null(d.images, "shape-only datasets hold no pixels");
    cr_assert_eq(d.h, 512);
    dahl_dataset_fini(&d);
    cr_assert_eq(dahl_dataset_synthetic(0, 3, 8, 8, 10, 1, 1, &d), -EINVAL);
    cr_assert_eq(dahl_dataset_synthetic(4, 3, 8, 8, 1, 1, 1, &d), -EINVAL);
}

/* ---- CIFAR-10's binary version ------------------------------------------------------------------------- */

/* Writes dir/name with n records of CIFAR-10's format: record r has label (r + seed) % 10 (or `label` for
 * every record when >= 0) and pixel i = (r * 7 + i + seed) % 256. */
static void write_cifar(const char *dir, const char *name, int n, int seed, int label)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    for (int r = 0; r < n; r++) {
        fputc(label >= 0 ? label : (r + seed) % 10, f);
        for (int i = 0; i < 3072; i++)
            fputc((r * 7 + i + seed) % 256, f);
    }
    fclose(f);
}

Test(dataset, cifar10_batches_are_read_in_order_and_scaled)
{
    write_cifar(dir, "data_batch_1.bin", 12, 0, -1);
    write_cifar(dir, "data_batch_2.bin", 8, 100, -1);
    write_cifar(dir, "test_batch.bin", 5, 3, -1);
    struct dahl_dataset d;
    char err[512];
    /* 12 records of the first batch, then 3 of the second */
    cr_assert_eq(dahl_dataset_load_cifar10(dir, 1, 15, &d, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(d.n, 15);
    cr_assert(d.c == 3 && d.h == 32 && d.w == 32 && d.nclasses == 10);
    cr_assert_eq(d.labels[11], 1);
    cr_assert_eq(d.labels[12], 0, "record 0 of data_batch_2 ((0 + 100) %% 10)");
    cr_assert_float_eq(d.images[0], 0.0f, 1e-9);
    cr_assert_float_eq(d.images[1024], 1024 % 256 / 255.0f, 1e-9, "the G plane follows the R plane");
    cr_assert_float_eq(d.images[(size_t)13 * 3072 + 5], (7 + 5 + 100) % 256 / 255.0f, 1e-9);
    dahl_dataset_fini(&d);
    cr_assert_eq(dahl_dataset_load_cifar10(dir, 0, 5, &d, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(d.n, 5);
    cr_assert_eq(d.labels[0], 3);
    dahl_dataset_fini(&d);
    /* more than the files hold: the third batch is missing, named */
    cr_assert_eq(dahl_dataset_load_cifar10(dir, 1, 25, &d, err, sizeof(err)), -ENOENT);
    cr_assert(strstr(err, "data_batch_3.bin") != NULL, "%s", err);
    cr_assert_eq(dahl_dataset_load_cifar10(dir, 0, 6, &d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "test_batch.bin: 5 samples, 6 asked for") != NULL, "%s", err);
    /* not the format: a size that is no multiple of a record, a label outside [0, 9] */
    char path[256];
    snprintf(path, sizeof(path), "%s/test_batch.bin", dir);
    FILE *f = fopen(path, "ab");
    fputc(0, f);
    fclose(f);
    cr_assert_eq(dahl_dataset_load_cifar10(dir, 0, 2, &d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "not CIFAR-10's binary format") != NULL, "%s", err);
    write_cifar(dir, "test_batch.bin", 2, 0, 10);
    cr_assert_eq(dahl_dataset_load_cifar10(dir, 0, 2, &d, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "label 10 of record 0") != NULL, "%s", err);
    cr_assert_null(d.images, "nothing kept after a failure");
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

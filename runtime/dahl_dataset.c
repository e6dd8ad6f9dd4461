/* Fashion-MNIST (IDX over gzip, via zlib) and synthetic datasets: see dahl_dataset.h.
 * IDX: a big-endian header, magic 0x00000803 (unsigned bytes, 3 dims) for images and 0x00000801 (1 dim) for
 * labels, then the dims as big-endian uint32, then the bytes. */
#include "dahl_dataset.h"

#include "dahl_random.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define IDX_UBYTE_1D 0x00000801u
#define IDX_UBYTE_3D 0x00000803u

/* Reads one IDX file of unsigned bytes: its dims (ndim expected) and, if data != NULL, up to max_items
 * items into a newly allocated *data. */
static int idx_read(const char *path, unsigned magic, int ndim, uint32_t dims[3], int max_items, uint8_t **data,
                    char *err, size_t err_size)
{
    gzFile f = gzopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_size, "%s: cannot open (%s)", path, strerror(errno != 0 ? errno : ENOENT));
        return -ENOENT;
    }
    uint8_t head[16];
    int want = 4 + 4 * ndim;
    if (gzread(f, head, (unsigned)want) != want) {
        snprintf(err, err_size, "%s: truncated IDX header", path);
        gzclose(f);
        return -EINVAL;
    }
    uint32_t be[4];
    for (int i = 0; i <= ndim; i++)
        be[i] = (uint32_t)head[4 * i] << 24 | (uint32_t)head[4 * i + 1] << 16 | (uint32_t)head[4 * i + 2] << 8 |
                (uint32_t)head[4 * i + 3];
    if (be[0] != magic) {
        snprintf(err, err_size, "%s: IDX magic 0x%08x, expected 0x%08x", path, be[0], magic);
        gzclose(f);
        return -EINVAL;
    }
    size_t item = 1;
    for (int i = 0; i < ndim; i++) {
        dims[i] = be[i + 1];
        if (i > 0)
            item *= dims[i];
    }
    if (dims[0] == 0 || item == 0 || item > (1u << 24)) {
        snprintf(err, err_size, "%s: implausible IDX dims", path);
        gzclose(f);
        return -EINVAL;
    }
    if (max_items > 0 && (uint32_t)max_items < dims[0])
        dims[0] = (uint32_t)max_items;
    size_t bytes = item * dims[0];
    *data = malloc(bytes);
    if (*data == NULL) {
        gzclose(f);
        return -ENOMEM;
    }
    size_t got = 0;
    while (got < bytes) {
        unsigned chunk = bytes - got > (1u << 30) ? (1u << 30) : (unsigned)(bytes - got);
        int n = gzread(f, *data + got, chunk);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    gzclose(f);
    if (got != bytes) {
        snprintf(err, err_size, "%s: truncated: %zu of %zu data bytes", path, got, bytes);
        free(*data);
        *data = NULL;
        return -EINVAL;
    }
    return 0;
}

int dahl_dataset_load_fashion_mnist(const char *dir, int train, int max_samples, struct dahl_dataset *out,
                                    char *err, size_t err_size)
{
    memset(out, 0, sizeof(*out));
    if (dir == NULL)
        dir = DAHL_FASHION_MNIST_DIR;
    const char *prefix = train ? "train" : "t10k";
    char path[4096];
    uint32_t dims[3];
    uint8_t *pixels = NULL, *labels = NULL;

    snprintf(path, sizeof(path), "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    int ret = idx_read(path, IDX_UBYTE_3D, 3, dims, max_samples, &pixels, err, err_size);
    if (ret == -ENOENT && strcmp(dir, DAHL_FASHION_MNIST_DIR) == 0) {
        size_t len = strlen(err);
        snprintf(err + len, err_size - len, "; hint: apt-get install dataset-fashion-mnist");
    }
    if (ret != 0)
        return ret;
    uint32_t ldims[3];
    snprintf(path, sizeof(path), "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    ret = idx_read(path, IDX_UBYTE_1D, 1, ldims, max_samples, &labels, err, err_size);
    if (ret != 0) {
        free(pixels);
        return ret;
    }
    if (ldims[0] != dims[0]) {
        snprintf(err, err_size, "%s: %u labels for %u images", path, ldims[0], dims[0]);
        free(pixels);
        free(labels);
        return -EINVAL;
    }
    for (uint32_t i = 0; i < ldims[0]; i++) {
        if (labels[i] > 9) {
            snprintf(err, err_size, "%s: label %u of sample %u is not in [0, 9]", path, labels[i], i);
            free(pixels);
            free(labels);
            return -EINVAL;
        }
    }
    size_t count = (size_t)dims[0] * dims[1] * dims[2];
    out->images = malloc(count * sizeof(float));
    if (out->images == NULL) {
        free(pixels);
        free(labels);
        return -ENOMEM;
    }
    for (size_t i = 0; i < count; i++)
        out->images[i] = (float)pixels[i] / 255.0f;
    free(pixels);
    out->labels = labels;
    out->n = (int)dims[0];
    out->c = 1;
    out->h = (int)dims[1];
    out->w = (int)dims[2];
    out->nclasses = 10;
    return 0;
}

#define CIFAR10_SIDE 32
#define CIFAR10_PIXELS (3 * CIFAR10_SIDE * CIFAR10_SIDE)
#define CIFAR10_RECORD (1 + CIFAR10_PIXELS) /* label byte, then the R, G and B planes */

/* Appends the records of one CIFAR-10 batch file to out (capacity cap samples), at most want - out->n.
 * Returns 0, or a negative errno with the message in err. */
static int cifar10_read(const char *path, int want, int cap, struct dahl_dataset *out, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", path, strerror(e));
        return -e;
    }
    int ret = 0;
    if (fseek(f, 0, SEEK_END) != 0) {
        ret = -errno;
        snprintf(err, err_size, "%s: cannot seek: %s", path, strerror(-ret));
        goto out;
    }
    long size = ftell(f);
    rewind(f);
    if (size <= 0 || size % CIFAR10_RECORD != 0) {
        snprintf(err, err_size, "%s: %ld bytes, not CIFAR-10's binary format (records of %d bytes: a label, then "
                 "3x32x32 pixels)", path, size, CIFAR10_RECORD);
        ret = -EINVAL;
        goto out;
    }
    uint8_t record[CIFAR10_RECORD];
    for (long r = 0; r < size / CIFAR10_RECORD && out->n < want && out->n < cap; r++) {
        if (fread(record, 1, sizeof(record), f) != sizeof(record)) {
            snprintf(err, err_size, "%s: short read at record %ld", path, r);
            ret = -EIO;
            goto out;
        }
        if (record[0] > 9) {
            snprintf(err, err_size, "%s: label %u of record %ld is not in [0, 9]", path, record[0], r);
            ret = -EINVAL;
            goto out;
        }
        out->labels[out->n] = record[0];
        float *img = out->images + (size_t)out->n * CIFAR10_PIXELS;
        for (int i = 0; i < CIFAR10_PIXELS; i++)
            img[i] = (float)record[1 + i] / 255.0f;
        out->n++;
    }
out:
    fclose(f);
    return ret;
}

int dahl_dataset_load_cifar10(const char *dir, int train, int max_samples, struct dahl_dataset *out, char *err,
                              size_t err_size)
{
    memset(out, 0, sizeof(*out));
    int cap = train ? 50000 : 10000;
    int want = max_samples > 0 && max_samples < cap ? max_samples : cap;
    out->images = malloc((size_t)want * CIFAR10_PIXELS * sizeof(float));
    out->labels = malloc((size_t)want);
    if (out->images == NULL || out->labels == NULL) {
        dahl_dataset_fini(out);
        return -ENOMEM;
    }
    out->c = 3;
    out->h = out->w = CIFAR10_SIDE;
    out->nclasses = 10;
    char path[4096];
    int ret = 0;
    for (int b = 1; ret == 0 && out->n < want && b <= (train ? 5 : 1); b++) {
        if (train)
            snprintf(path, sizeof(path), "%s/data_batch_%d.bin", dir, b);
        else
            snprintf(path, sizeof(path), "%s/test_batch.bin", dir);
        ret = cifar10_read(path, want, want, out, err, err_size);
    }
    if (ret == 0 && max_samples > 0 && out->n < max_samples) {
        snprintf(err, err_size, "%s/%s: %d samples, %d asked for", dir, train ? "data_batch_*.bin" : "test_batch.bin",
                 out->n, max_samples);
        ret = -EINVAL;
    }
    if (ret != 0)
        dahl_dataset_fini(out);
    return ret;
}

static float uniform01(uint64_t *state)
{
    return (float)(dahl_splitmix64(state) >> 40) / (float)(1u << 24);
}

int dahl_dataset_synthetic(int n, int c, int h, int w, int nclasses, uint64_t seed, int pixels,
                           struct dahl_dataset *out)
{
    memset(out, 0, sizeof(*out));
    if (n < 1 || c < 1 || h < 1 || w < 1 || nclasses < 2 || nclasses > 256)
        return -EINVAL;
    size_t per_sample = (size_t)c * h * w;
    out->labels = malloc((size_t)n);
    float *protos = NULL;
    if (out->labels == NULL)
        goto nomem;
    uint64_t state = seed;
    for (int i = 0; i < n; i++)
        out->labels[i] = (uint8_t)(dahl_splitmix64(&state) % (uint64_t)nclasses);
    if (pixels) {
        /* Class prototypes: a few bright blocks at class-specific places, so a small CNN can tell them apart. */
        protos = calloc((size_t)nclasses * per_sample, sizeof(float));
        out->images = malloc((size_t)n * per_sample * sizeof(float));
        if (protos == NULL || out->images == NULL)
            goto nomem;
        for (int k = 0; k < nclasses; k++) {
            float *p = protos + (size_t)k * per_sample;
            for (int b = 0; b < 3; b++) {
                int bh = h / 4 > 0 ? h / 4 : 1, bw = w / 4 > 0 ? w / 4 : 1;
                int y0 = (int)(dahl_splitmix64(&state) % (uint64_t)(h - bh + 1));
                int x0 = (int)(dahl_splitmix64(&state) % (uint64_t)(w - bw + 1));
                int ch = (int)(dahl_splitmix64(&state) % (uint64_t)c);
                for (int y = y0; y < y0 + bh; y++)
                    for (int x = x0; x < x0 + bw; x++)
                        p[((size_t)ch * h + y) * w + x] = 1.0f;
            }
        }
        for (int i = 0; i < n; i++) {
            const float *p = protos + (size_t)out->labels[i] * per_sample;
            float *img = out->images + (size_t)i * per_sample;
            for (size_t j = 0; j < per_sample; j++)
                img[j] = 0.6f * p[j] + 0.4f * uniform01(&state);
        }
        free(protos);
    }
    out->n = n;
    out->c = c;
    out->h = h;
    out->w = w;
    out->nclasses = nclasses;
    return 0;
nomem:
    free(protos);
    dahl_dataset_fini(out);
    return -ENOMEM;
}

int dahl_dataset_pad(struct dahl_dataset *d, int h, int w)
{
    if (h < d->h || w < d->w)
        return -EINVAL;
    if (d->images == NULL || (h == d->h && w == d->w)) {
        d->h = h;
        d->w = w;
        return 0;
    }
    float *v = calloc((size_t)d->n * (size_t)d->c * (size_t)h * (size_t)w, sizeof(float));
    if (v == NULL)
        return -ENOMEM;
    int top = (h - d->h) / 2, left = (w - d->w) / 2;
    for (size_t p = 0; p < (size_t)d->n * (size_t)d->c; p++)
        for (int y = 0; y < d->h; y++)
            memcpy(v + (p * (size_t)h + (size_t)(top + y)) * (size_t)w + (size_t)left,
                   d->images + (p * (size_t)d->h + (size_t)y) * (size_t)d->w, (size_t)d->w * sizeof(float));
    free(d->images);
    d->images = v;
    d->h = h;
    d->w = w;
    return 0;
}

void dahl_dataset_fini(struct dahl_dataset *d)
{
    free(d->images);
    free(d->labels);
    memset(d, 0, sizeof(*d));
}

/* Training data for the dahl runtime: Fashion-MNIST read from Debian's dataset-fashion-mnist package (IDX
 * files, gzip), CIFAR-10's binary batches from a directory the user gives, and synthetic images of any size
 * H x W x C, deterministic from a seed, with labels a CNN can learn (each class has its own prototype image; samples are noisy copies). No StarPU here.
 * Images are float32 in [0, 1], laid out [N][C][H][W] row-major; labels are in [0, nclasses).
 * Ownership: a dataset owns its arrays; dahl_dataset_fini() frees them. */
#ifndef DAHL_DATASET_H
#define DAHL_DATASET_H

#include <stddef.h>
#include <stdint.h>

/* Where Debian's dataset-fashion-mnist package puts the files. */
#define DAHL_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

struct dahl_dataset {
    int n;           /* samples */
    int c, h, w;     /* channels, height, width */
    int nclasses;
    float *images;   /* n * c * h * w values; NULL for a shape-only dataset (simulation needs no pixels) */
    uint8_t *labels; /* n labels */
};

/* Loads the train (60000) or test (10000) split from dir (DAHL_FASHION_MNIST_DIR when NULL), keeping the
 * first max_samples (all when max_samples <= 0). Returns 0, or a negative errno with a one-line message in
 * err naming the file (and a hint when the package is missing): -ENOENT missing file, -EINVAL bad file. */
int dahl_dataset_load_fashion_mnist(const char *dir, int train, int max_samples, struct dahl_dataset *out,
                                    char *err, size_t err_size);

/* Loads CIFAR-10's binary version from dir: the train split from data_batch_1.bin .. data_batch_5.bin (50000
 * samples, read in that order), the test split from test_batch.bin (10000); each record a label byte then the
 * 32x32 R, G and B planes, scaled to [0, 1]. Keeps the first max_samples (all when <= 0; more than the files
 * hold is an error). Returns 0, or a negative errno with a one-line message in err naming the file: -ENOENT
 * missing file, -EINVAL a file that is not in that format, -ENOMEM. */
int dahl_dataset_load_cifar10(const char *dir, int train, int max_samples, struct dahl_dataset *out, char *err,
                              size_t err_size);

/* Makes n synthetic samples of c x h x w with nclasses classes, deterministic from seed (same arguments,
 * same bytes). With pixels == 0 only labels are made (images stays NULL), for simulated runs.
 * Returns 0, -EINVAL for a non-positive size or nclasses outside [2, 256], or -ENOMEM. */
int dahl_dataset_synthetic(int n, int c, int h, int w, int nclasses, uint64_t seed, int pixels,
                           struct dahl_dataset *out);

/* Frees the arrays and zeroes *d. Safe on a zeroed dataset. */
/* Pads every image with zeros to h x w (at least its size), centred (the extra odd pixel at the bottom and
 * right): Fashion-MNIST's 28x28 to a CIFAR network's 32x32. Returns 0 or -ENOMEM (d unchanged). */
int dahl_dataset_pad(struct dahl_dataset *d, int h, int w);

void dahl_dataset_fini(struct dahl_dataset *d);

#endif /* DAHL_DATASET_H */

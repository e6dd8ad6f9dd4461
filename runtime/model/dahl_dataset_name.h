/* Dataset names as users write them (`--dataset`, a scenario's "dataset", covers, jobs, the lab's export):
 * "fashion-mnist" (Debian's package, 28x28x1; "fashion-mnist:SIZE" zero-padded to SIZExSIZE), "cifar10:DIR" (CIFAR-10's binary batches in DIR, 32x32x3) and
 * "synthetic:HxWxC" (images made from a seed). The one parser of those names; StarPU-free. */
#ifndef DAHL_DATASET_NAME_H
#define DAHL_DATASET_NAME_H

#include <stdbool.h>
#include <stddef.h>

enum dahl_dataset_source {
    DAHL_DATASET_FASHION_MNIST,
    DAHL_DATASET_CIFAR10,
    DAHL_DATASET_SYNTHETIC,
};

struct dahl_dataset_name {
    enum dahl_dataset_source source;
    int c, h, w;     /* the images' shape */
    const char *dir; /* cifar10: the directory, pointing into the parsed text; NULL otherwise */
};

/* What dahl_dataset_name_parse accepts, for messages ("expected " DAHL_DATASET_NAMES ", got ..."). */
#define DAHL_DATASET_NAMES                                                                                       \
    "fashion-mnist, fashion-mnist:SIZE (padded, 28 to 512), cifar10:DIR or synthetic:HxWxC (sizes in [1, 4096], C <= 64)"

/* Parses text into *out (out->dir points into text). False, out zeroed, when text names no dataset. */
bool dahl_dataset_name_parse(const char *text, struct dahl_dataset_name *out);

/* Whether text names Fashion-MNIST (padded or not): 60000 training samples at most. */
bool dahl_dataset_name_is_fashion_mnist(const char *text);

/* The image shape of a dataset name as "HxWxC" into buf (fashion-mnist: "28x28x1"), or "" when text names no
 * dataset: what calibrations' coverage compares. */
void dahl_dataset_name_shape(const char *text, char *buf, size_t size);

#endif /* DAHL_DATASET_NAME_H */

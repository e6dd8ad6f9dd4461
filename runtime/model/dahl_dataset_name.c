/* Dataset names (see dahl_dataset_name.h). */
#include "dahl_dataset_name.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses "HxWxC" strictly: three decimal sizes in [1, 4096], C at most 64, nothing around them. */
static bool parse_shape(const char *text, int *h, int *w, int *c)
{
    long v[3];
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (*p < '0' || *p > '9')
            return false;
        errno = 0;
        v[i] = strtol(p, &end, 10);
        if (errno != 0 || v[i] < 1 || v[i] > 4096 || (i < 2 ? *end != 'x' : *end != '\0'))
            return false;
        p = end + (i < 2);
    }
    if (v[2] > 64)
        return false;
    *h = (int)v[0];
    *w = (int)v[1];
    *c = (int)v[2];
    return true;
}

bool dahl_dataset_name_parse(const char *text, struct dahl_dataset_name *out)
{
    memset(out, 0, sizeof(*out));
    if (strcmp(text, "fashion-mnist") == 0) {
        *out = (struct dahl_dataset_name){.source = DAHL_DATASET_FASHION_MNIST, .c = 1, .h = 28, .w = 28};
        return true;
    }
    if (strncmp(text, "fashion-mnist:", 14) == 0 && text[14] >= '1' && text[14] <= '9') {
        char *end;
        errno = 0;
        long size = strtol(text + 14, &end, 10);
        if (*end != '\0' || errno != 0 || size < 28 || size > 512)
            return false;
        *out = (struct dahl_dataset_name){.source = DAHL_DATASET_FASHION_MNIST, .c = 1, .h = (int)size, .w = (int)size};
        return true;
    }
    if (strncmp(text, "cifar10:", 8) == 0 && text[8] != '\0') {
        *out = (struct dahl_dataset_name){.source = DAHL_DATASET_CIFAR10, .c = 3, .h = 32, .w = 32, .dir = text + 8};
        return true;
    }
    struct dahl_dataset_name n = {.source = DAHL_DATASET_SYNTHETIC};
    if (strncmp(text, "synthetic:", 10) == 0 && parse_shape(text + 10, &n.h, &n.w, &n.c)) {
        *out = n;
        return true;
    }
    return false;
}

bool dahl_dataset_name_is_fashion_mnist(const char *text)
{
    struct dahl_dataset_name n;
    return dahl_dataset_name_parse(text, &n) && n.source == DAHL_DATASET_FASHION_MNIST;
}

void dahl_dataset_name_shape(const char *text, char *buf, size_t size)
{
    struct dahl_dataset_name n;
    if (dahl_dataset_name_parse(text, &n))
        snprintf(buf, size, "%dx%dx%d", n.h, n.w, n.c);
    else if (size > 0)
        buf[0] = '\0';
}

/* Network descriptions (see dahl_netdesc.h): the two built-in models, the shapes every layer gets from its
 * input (what dahl_network.c builds tensors from, and dahl_catalogue.c and dahl_stepgraph.c list tasks
 * from), and the chunks of a split parameter update. */
#include "dahl_netdesc.h"

#include "dahl_layer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most values a layer may give per sample (4 GiB of floats, far beyond any layer that trains): below it,
 * c * h * w and a following conv's h + 2 * pad (pad at most 65536) stay within int. Checked as c * h first,
 * so that c * h * w is computed only where it fits in a long long. */
#define MAX_LAYER_VALUES (1LL << 30)

static bool too_many_values(int c, int h, int w)
{
    return (long long)c * h > MAX_LAYER_VALUES || (long long)c * h * w > MAX_LAYER_VALUES;
}

static struct dahl_layer_desc conv(int filters, int kernel, int stride, int pad)
{
    return (struct dahl_layer_desc){.kind = DAHL_LAYER_CONV, .filters = filters, .kernel = kernel,
                                    .stride = stride, .pad = pad};
}

static struct dahl_layer_desc relu(void)
{
    return (struct dahl_layer_desc){.kind = DAHL_LAYER_RELU};
}

static struct dahl_layer_desc maxpool(int kernel, int stride)
{
    return (struct dahl_layer_desc){.kind = DAHL_LAYER_MAXPOOL, .kernel = kernel, .stride = stride};
}

static struct dahl_layer_desc dense(int units)
{
    return (struct dahl_layer_desc){.kind = DAHL_LAYER_DENSE, .units = units};
}

static int desc_init(int c, int h, int w, int nclasses, struct dahl_network_desc *out)
{
    memset(out, 0, sizeof(*out));
    if (c < 1 || h < 1 || w < 1 || nclasses < 2)
        return -EINVAL;
    out->c = c;
    out->h = h;
    out->w = w;
    out->nclasses = nclasses;
    return 0;
}

static void desc_add(struct dahl_network_desc *d, struct dahl_layer_desc l)
{
    if (d->nlayers < DAHL_NETWORK_MAX_LAYERS)
        d->layers[d->nlayers++] = l;
}

int dahl_network_desc_lenet(int c, int h, int w, int nclasses, struct dahl_network_desc *out)
{
    if (desc_init(c, h, w, nclasses, out) != 0)
        return -EINVAL;
    int hh = h, ww = w;
    desc_add(out, conv(6, 5, 1, 2));
    desc_add(out, relu());
    if (hh >= 2 && ww >= 2) {
        desc_add(out, maxpool(2, 2));
        hh /= 2;
        ww /= 2;
    }
    if (hh < 5 || ww < 5)
        return -EINVAL;
    desc_add(out, conv(16, 5, 1, 0));
    desc_add(out, relu());
    hh -= 4;
    ww -= 4;
    if (hh >= 2 && ww >= 2)
        desc_add(out, maxpool(2, 2));
    desc_add(out, dense(120));
    desc_add(out, relu());
    desc_add(out, dense(nclasses));
    return 0;
}

int dahl_network_desc_deep(int c, int h, int w, int nclasses, int blocks, int width, struct dahl_network_desc *out)
{
    if (desc_init(c, h, w, nclasses, out) != 0 || blocks < 1 || width < 1 || 3 * blocks + 3 > DAHL_NETWORK_MAX_LAYERS)
        return -EINVAL;
    int hh = h, ww = w, f = width;
    for (int i = 0; i < blocks; i++) {
        desc_add(out, conv(f, 3, 1, 1));
        desc_add(out, relu());
        if (hh >= 4 && ww >= 4) {
            desc_add(out, maxpool(2, 2));
            hh /= 2;
            ww /= 2;
        }
        f *= 2;
    }
    desc_add(out, dense(128));
    desc_add(out, relu());
    desc_add(out, dense(nclasses));
    return 0;
}

int dahl_network_desc_vgg_small(int c, int h, int w, int nclasses, struct dahl_network_desc *out)
{
    if (desc_init(c, h, w, nclasses, out) != 0)
        return -EINVAL;
    int hh = h, ww = w;
    for (int f = 32; f <= 128; f *= 2) {
        desc_add(out, conv(f, 3, 1, 1));
        desc_add(out, relu());
        desc_add(out, conv(f, 3, 1, 1));
        desc_add(out, relu());
        if (hh >= 2 && ww >= 2) {
            desc_add(out, maxpool(2, 2));
            hh /= 2;
            ww /= 2;
        }
    }
    desc_add(out, dense(128));
    desc_add(out, relu());
    desc_add(out, dense(nclasses));
    return 0;
}

bool dahl_network_desc_is_named(const char *model)
{
    return strcmp(model, "lenet") == 0 || strcmp(model, "vgg-small") == 0 || strcmp(model, "deep") == 0 ||
           strncmp(model, "deep:", 5) == 0;
}

int dahl_network_desc_named(const char *model, int c, int h, int w, int nclasses, struct dahl_network_desc *out,
                            char *err, size_t err_size)
{
    if (strcmp(model, "lenet") == 0) {
        if (dahl_network_desc_lenet(c, h, w, nclasses, out) == 0)
            return 0;
        snprintf(err, err_size, "lenet: a %dx%dx%d image is too small for LeNet (its second 5x5 convolution needs at "
                 "least 5x5 pixels after the first pooling)", h, w, c);
        return -EINVAL;
    }
    if (strcmp(model, "vgg-small") == 0)
        return dahl_network_desc_vgg_small(c, h, w, nclasses, out) == 0 ? 0 : -EINVAL;
    if (!dahl_network_desc_is_named(model))
        return -ENOENT;
    long blocks = DAHL_DEEP_BLOCKS;
    if (model[4] == ':') {
        char *end = NULL;
        errno = 0;
        blocks = strtol(model + 5, &end, 10);
        if (end == model + 5 || *end != '\0' || errno != 0 || blocks < 1 || blocks > 9) {
            snprintf(err, err_size, "deep:BLOCKS: expected an integer in [1, 9], got \"%s\"", model + 5);
            return -EINVAL;
        }
    }
    if (dahl_network_desc_deep(c, h, w, nclasses, (int)blocks, DAHL_DEEP_WIDTH, out) != 0) {
        snprintf(err, err_size, "%s: cannot build the deep variant for a %dx%dx%d image", model, h, w, c);
        return -EINVAL;
    }
    return 0;
}

int dahl_network_desc_shapes(const struct dahl_network_desc *d, struct dahl_layer_shape *layers, char *err,
                             size_t err_size)
{
    if (d->c < 1 || d->h < 1 || d->w < 1) {
        snprintf(err, err_size, "input shape %dx%dx%d: every dimension must be positive", d->c, d->h, d->w);
        return -EINVAL;
    }
    if (d->nlayers < 1 || d->nlayers > DAHL_NETWORK_MAX_LAYERS) {
        snprintf(err, err_size, "%d layers: expected 1 to %d", d->nlayers, DAHL_NETWORK_MAX_LAYERS);
        return -EINVAL;
    }
    if (too_many_values(d->c, d->h, d->w)) {
        snprintf(err, err_size, "input shape %dx%dx%d: more than %lld values per sample", d->c, d->h, d->w,
                 MAX_LAYER_VALUES);
        return -EINVAL;
    }
    int c = d->c, h = d->h, w = d->w;
    for (int i = 0; i < d->nlayers; i++) {
        struct dahl_layer_shape *l = &layers[i];
        memset(l, 0, sizeof(*l));
        l->desc = d->layers[i];
        l->in_c = c;
        l->in_h = h;
        l->in_w = w;
        const struct dahl_layer_type *kind = dahl_layer_type_get(l->desc.kind);
        if (kind == NULL) {
            snprintf(err, err_size, "layer %d: unknown kind %d", i, (int)l->desc.kind);
            return -EINVAL;
        }
        if (kind->plan(l, i, err, err_size) != 0)
            return -EINVAL;
        c = l->out_c;
        h = l->out_h;
        w = l->out_w;
        if (too_many_values(c, h, w)) {
            snprintf(err, err_size, "layer %d gives %dx%dx%d values per sample, more than %lld (a smaller pad or "
                     "fewer filters?)", i, c, h, w, MAX_LAYER_VALUES);
            return -EINVAL;
        }
    }
    if (c * h * w != d->nclasses) {
        snprintf(err, err_size, "the last layer gives %d outputs, expected %d classes (end with dense %d)", c * h * w,
                 d->nclasses, d->nclasses);
        return -EINVAL;
    }
    return 0;
}

int dahl_network_desc_check(const struct dahl_network_desc *d, char *err, size_t err_size)
{
    struct dahl_layer_shape layers[DAHL_NETWORK_MAX_LAYERS];
    return dahl_network_desc_shapes(d, layers, err, err_size);
}

size_t dahl_network_desc_params(const struct dahl_network_desc *d)
{
    struct dahl_layer_shape layers[DAHL_NETWORK_MAX_LAYERS];
    char err[256];
    if (dahl_network_desc_shapes(d, layers, err, sizeof(err)) != 0)
        return 0;
    size_t n = 0;
    for (int i = 0; i < d->nlayers; i++)
        n += layers[i].nw + layers[i].nb;
    return n;
}

int dahl_update_chunks(size_t n, size_t max_elems)
{
    if (max_elems == 0)
        max_elems = DAHL_UPDATE_CHUNK_DEFAULT;
    if (n <= max_elems)
        return 1;
    size_t k = n / max_elems + (n % max_elems != 0);
    return k > (size_t)0x7fffffff ? 0x7fffffff : (int)k;
}

size_t dahl_update_chunk_elems(size_t n, int k, int i)
{
    return n / (size_t)k + ((size_t)i < n % (size_t)k);
}

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

static struct dahl_layer_desc layer(enum dahl_layer_kind kind)
{
    return (struct dahl_layer_desc){.kind = kind};
}

/* Appends a layer reading layer `from` (-1: the network's input) and, for an add, layer `from2` too. */
static void desc_add_from(struct dahl_network_desc *d, struct dahl_layer_desc l, int from, int from2)
{
    int i = d->nlayers;
    l.back[0] = i - 1 - from;
    l.back[1] = from2 >= -1 ? i - 1 - from2 : 0;
    desc_add(d, l);
}

/* A basic residual block of `filters` filters reading layer x (He et al. 2016, "Deep Residual Learning for
 * Image Recognition", figure 2): conv 3x3 (stride) - bn - relu - conv 3x3 - bn, plus the shortcut, then add and
 * relu; the shortcut is x itself, or conv 1x1 (stride) - bn where the shape changes ("option B"). Returns the
 * block's last layer. */
static int residual_block(struct dahl_network_desc *d, int x, int filters, int stride, bool project)
{
    desc_add_from(d, conv(filters, 3, stride, 1), x, -2);
    desc_add(d, layer(DAHL_LAYER_BATCHNORM));
    desc_add(d, relu());
    desc_add(d, conv(filters, 3, 1, 1));
    desc_add(d, layer(DAHL_LAYER_BATCHNORM));
    int branch = d->nlayers - 1, shortcut = x;
    if (project) {
        desc_add_from(d, conv(filters, 1, stride, 0), x, -2);
        desc_add(d, layer(DAHL_LAYER_BATCHNORM));
        shortcut = d->nlayers - 1;
    }
    desc_add_from(d, layer(DAHL_LAYER_ADD), branch, shortcut);
    desc_add(d, relu());
    return d->nlayers - 1;
}

int dahl_network_desc_resnet(int c, int h, int w, int nclasses, int depth, struct dahl_network_desc *out)
{
    int n = (depth - 2) / 6;
    if (desc_init(c, h, w, nclasses, out) != 0 || depth != 6 * n + 2 || n < 1 || n > DAHL_RESNET_MAX_BLOCKS ||
        h != w)
        return -EINVAL;
    desc_add(out, conv(16, 3, 1, 1));
    desc_add(out, layer(DAHL_LAYER_BATCHNORM));
    desc_add(out, relu());
    int x = out->nlayers - 1;
    for (int stage = 0; stage < 3; stage++)
        for (int b = 0; b < n; b++) {
            bool first = b == 0 && stage > 0;
            x = residual_block(out, x, 16 << stage, first ? 2 : 1, first);
        }
    desc_add(out, layer(DAHL_LAYER_GLOBALAVGPOOL));
    desc_add(out, dense(nclasses));
    return 0;
}

bool dahl_network_desc_is_named(const char *model)
{
    return strcmp(model, "lenet") == 0 || strcmp(model, "vgg-small") == 0 || strcmp(model, "deep") == 0 ||
           strncmp(model, "deep:", 5) == 0 || strncmp(model, "resnet:", 7) == 0;
}

/* The integer after a model's "NAME:" prefix in [min, max] into *out; false when it is not one. */
static bool name_number(const char *text, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    *out = strtol(text, &end, 10);
    return end != text && *end == '\0' && errno == 0 && *out >= min && *out <= max;
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
    if (strncmp(model, "resnet:", 7) == 0) {
        long depth;
        if (!name_number(model + 7, 8, 6 * DAHL_RESNET_MAX_BLOCKS + 2, &depth) || (depth - 2) % 6 != 0) {
            snprintf(err, err_size, "resnet:DEPTH: expected 8, 14, 20, 26 or 32 (6n + 2), got \"%s\"", model + 7);
            return -EINVAL;
        }
        if (dahl_network_desc_resnet(c, h, w, nclasses, (int)depth, out) != 0) {
            snprintf(err, err_size, "%s: expected a square image, got %dx%dx%d", model, h, w, c);
            return -EINVAL;
        }
        return 0;
    }
    if (model[4] == ':' && !name_number(model + 5, 1, 9, &blocks)) {
        snprintf(err, err_size, "deep:BLOCKS: expected an integer in [1, 9], got \"%s\"", model + 5);
        return -EINVAL;
    }
    if (dahl_network_desc_deep(c, h, w, nclasses, (int)blocks, DAHL_DEEP_WIDTH, out) != 0) {
        snprintf(err, err_size, "%s: cannot build the deep variant for a %dx%dx%d image", model, h, w, c);
        return -EINVAL;
    }
    return 0;
}

static int ninputs(const struct dahl_layer_desc *l)
{
    const struct dahl_layer_type *kind = dahl_layer_type_get(l->kind);
    return kind != NULL && kind->ninputs > 1 ? kind->ninputs : 1;
}

int dahl_network_desc_ninputs(const struct dahl_network_desc *d, int i)
{
    return ninputs(&d->layers[i]);
}

int dahl_network_desc_input(const struct dahl_network_desc *d, int i, int k)
{
    return i - 1 - d->layers[i].back[k];
}

bool dahl_network_desc_input_direct(const struct dahl_network_desc *d, int i, int k)
{
    int src = dahl_network_desc_input(d, i, k);
    for (int j = i + 1; j < d->nlayers; j++)
        for (int m = 0; m < ninputs(&d->layers[j]); m++)
            if (dahl_network_desc_input(d, j, m) == src)
                return false;
    for (int m = k + 1; m < ninputs(&d->layers[i]); m++) /* the same source twice: the later input goes first */
        if (dahl_network_desc_input(d, i, m) == src)
            return false;
    return true;
}

bool dahl_network_desc_is_chain(const struct dahl_network_desc *d)
{
    for (int i = 0; i < d->nlayers; i++)
        for (int k = 0; k < ninputs(&d->layers[i]); k++)
            if (d->layers[i].back[k] != 0)
                return false;
    return true;
}

bool dahl_network_desc_cut_ok(const struct dahl_network_desc *d, int k)
{
    for (int j = k; j < d->nlayers; j++)
        for (int m = 0; m < ninputs(&d->layers[j]); m++)
            if (dahl_network_desc_input(d, j, m) < k - 1)
                return false;
    return true;
}

/* Sets layer i's input shape from its inputs' layers (planned before it), checking that they exist and that
 * a layer of several inputs gets them from layers (not the network's input) of one shape. */
static int layer_inputs(const struct dahl_network_desc *d, struct dahl_layer_shape *layers, int i,
                        const struct dahl_layer_type *kind, char *err, size_t err_size)
{
    struct dahl_layer_shape *l = &layers[i];
    int n = kind->ninputs > 1 ? kind->ninputs : 1;
    for (int k = 0; k < DAHL_LAYER_MAX_INPUTS; k++) {
        int src = dahl_network_desc_input(d, i, k);
        if (k >= n && l->desc.back[k] != 0) {
            snprintf(err, err_size, "layer %d (%s): it reads one input, not %d", i, kind->name, k + 1);
            return -EINVAL;
        }
        if (k < n && (l->desc.back[k] < 0 || src < -1)) {
            snprintf(err, err_size, "layer %d (%s): input %d is layer %d, expected a layer from -1 (the network's "
                     "input) to %d", i, kind->name, k, src, i - 1);
            return -EINVAL;
        }
        if (k >= n)
            continue;
        if (n > 1 && src < 0) {
            snprintf(err, err_size, "layer %d (%s): its inputs must be layers, not the network's input (put a layer "
                     "in between)", i, kind->name);
            return -EINVAL;
        }
        int c = src < 0 ? d->c : layers[src].out_c, h = src < 0 ? d->h : layers[src].out_h,
            w = src < 0 ? d->w : layers[src].out_w;
        if (k == 0) {
            l->in_c = c;
            l->in_h = h;
            l->in_w = w;
        } else if (c != l->in_c || h != l->in_h || w != l->in_w) {
            snprintf(err, err_size, "layer %d (%s): its inputs differ in shape: layer %d gives %dx%dx%d, layer %d "
                     "%dx%dx%d", i, kind->name, dahl_network_desc_input(d, i, 0), l->in_c, l->in_h, l->in_w, src, c,
                     h, w);
            return -EINVAL;
        }
    }
    return 0;
}

int dahl_network_desc_plan(const struct dahl_network_desc *d, struct dahl_layer_shape *layers, char *err,
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
    for (int i = 0; i < d->nlayers; i++) {
        struct dahl_layer_shape *l = &layers[i];
        memset(l, 0, sizeof(*l));
        l->desc = d->layers[i];
        const struct dahl_layer_type *kind = dahl_layer_type_get(l->desc.kind);
        if (kind == NULL) {
            snprintf(err, err_size, "layer %d: unknown kind %d", i, (int)l->desc.kind);
            return -EINVAL;
        }
        int ret = layer_inputs(d, layers, i, kind, err, err_size);
        if (ret != 0)
            return ret;
        if (kind->plan(l, i, err, err_size) != 0)
            return -EINVAL;
        if (too_many_values(l->out_c, l->out_h, l->out_w)) {
            snprintf(err, err_size, "layer %d gives %dx%dx%d values per sample, more than %lld (a smaller pad or "
                     "fewer filters?)", i, l->out_c, l->out_h, l->out_w, MAX_LAYER_VALUES);
            return -EINVAL;
        }
    }
    return 0;
}

int dahl_network_desc_shapes(const struct dahl_network_desc *d, struct dahl_layer_shape *layers, char *err,
                             size_t err_size)
{
    int ret = dahl_network_desc_plan(d, layers, err, err_size);
    if (ret != 0)
        return ret;
    const struct dahl_layer_shape *last = &layers[d->nlayers - 1];
    int c = last->out_c, h = last->out_h, w = last->out_w;
    for (int i = 0; i + 1 < d->nlayers; i++) {
        bool read = false;
        for (int j = i + 1; j < d->nlayers && !read; j++)
            for (int k = 0; k < ninputs(&d->layers[j]) && !read; k++)
                read = dahl_network_desc_input(d, j, k) == i;
        if (!read) {
            snprintf(err, err_size, "layer %d (%s): no later layer reads its output (only the last layer's may go "
                     "unread: it gives the classes)", i, dahl_layer_type_get(d->layers[i].kind)->name);
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

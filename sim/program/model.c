/* --model: LeNet, the deep variant, or layers described in a JSON file, as a network description. */
#include "train.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads layers[i].key as an integer in [min, max] into *out; absent: *out = dflt, or an error when dflt < 0. */
static bool layer_int(const char *path, int i, const cJSON *layer, const char *key, int min, int dflt, int *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(layer, key);
    if (item == NULL) {
        if (dflt >= 0) {
            *out = dflt;
            return true;
        }
        dahlsim_error("%s: layers[%d]: \"%s\" is missing", path, i, key);
        return false;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : -1;
    /* the range first: converting a value out of int's range (1e300) is undefined */
    if (!cJSON_IsNumber(item) || !(v >= min && v <= 65536) || v != (double)(int)v) {
        char *text = cJSON_PrintUnformatted(item);
        dahlsim_error("%s: layers[%d].%s: expected an integer in [%d, 65536], got %s", path, i, key, min,
                      text != NULL ? text : "?");
        free(text);
        return false;
    }
    *out = (int)v;
    return true;
}

/* Checks that layer i has only the keys "type" and those in allowed (NULL-terminated). */
static bool layer_keys(const char *path, int i, const cJSON *layer, const char *type, const char *const *allowed)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, layer)
    {
        bool known = strcmp(item->string, "type") == 0;
        for (size_t k = 0; !known && allowed[k] != NULL; k++)
            known = strcmp(item->string, allowed[k]) == 0;
        if (!known) {
            char expected[256] = "\"type\"";
            for (size_t k = 0; allowed[k] != NULL; k++) {
                size_t used = strlen(expected);
                snprintf(expected + used, sizeof(expected) - used, ", \"%s\"", allowed[k]);
            }
            dahlsim_error("%s: layers[%d]: unknown key \"%s\" for a %s layer (expected %s)", path, i, item->string,
                          type, expected);
            return false;
        }
    }
    return true;
}

/* Fills d->layers from a JSON model file; every error names the file and the field. */
static bool model_from_json(const char *path, struct dahl_network_desc *d)
{
    cJSON *root;
    char why[160];
    int ret = dahlsim_json_load(path, (size_t)64 << 20, &root, why, sizeof(why));
    if (ret == -EINVAL) {
        dahlsim_error("%s: %s", path, why);
        return false;
    }
    if (ret != 0) {
        dahlsim_error("--model: %s: %s", path, why);
        fprintf(stderr, "hint: --model takes lenet, deep, deep:BLOCKS or a JSON model file\n");
        return false;
    }
    bool ok = false;
    const cJSON *layers = NULL;
    if (!cJSON_IsObject(root)) {
        dahlsim_error("%s: expected an object {\"layers\": [...]}", path);
        goto out;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (strcmp(item->string, "layers") != 0) {
            dahlsim_error("%s: unknown key \"%s\" (expected \"layers\")", path, item->string);
            goto out;
        }
    }
    layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    int n = cJSON_GetArraySize(layers);
    if (!cJSON_IsArray(layers) || n < 1 || n > DAHL_NETWORK_MAX_LAYERS) {
        dahlsim_error("%s: \"layers\": expected an array of 1 to %d layers", path, DAHL_NETWORK_MAX_LAYERS);
        goto out;
    }
    d->nlayers = 0;
    int i = 0;
    cJSON_ArrayForEach(item, layers)
    {
        struct dahl_layer_desc *l = &d->layers[i];
        memset(l, 0, sizeof(*l));
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
        if (!cJSON_IsObject(item) || !cJSON_IsString(type)) {
            dahlsim_error("%s: layers[%d]: expected an object with a \"type\" string", path, i);
            goto out;
        }
        const char *t = type->valuestring;
        if (strcmp(t, "conv") == 0) {
            static const char *const keys[] = {"filters", "kernel", "stride", "pad", NULL};
            l->kind = DAHL_LAYER_CONV;
            if (!layer_keys(path, i, item, t, keys) || !layer_int(path, i, item, "filters", 1, -1, &l->filters) ||
                !layer_int(path, i, item, "kernel", 1, -1, &l->kernel) ||
                !layer_int(path, i, item, "stride", 1, 1, &l->stride) || !layer_int(path, i, item, "pad", 0, 0, &l->pad))
                goto out;
        } else if (strcmp(t, "relu") == 0) {
            static const char *const keys[] = {NULL};
            l->kind = DAHL_LAYER_RELU;
            if (!layer_keys(path, i, item, t, keys))
                goto out;
        } else if (strcmp(t, "maxpool") == 0) {
            static const char *const keys[] = {"kernel", "stride", NULL};
            l->kind = DAHL_LAYER_MAXPOOL;
            if (!layer_keys(path, i, item, t, keys) || !layer_int(path, i, item, "kernel", 1, -1, &l->kernel) ||
                !layer_int(path, i, item, "stride", 1, l->kernel, &l->stride))
                goto out;
        } else if (strcmp(t, "dense") == 0) {
            static const char *const keys[] = {"units", NULL};
            l->kind = DAHL_LAYER_DENSE;
            if (!layer_keys(path, i, item, t, keys) || !layer_int(path, i, item, "units", 1, -1, &l->units))
                goto out;
        } else {
            dahlsim_error("%s: layers[%d].type: expected conv, relu, maxpool or dense, got \"%s\"", path, i, t);
            goto out;
        }
        i++;
    }
    d->nlayers = i;
    ok = true;
out:
    cJSON_Delete(root);
    return ok;
}

bool train_model_desc(const char *model, int c, int h, int w, struct dahl_network_desc *d)
{
    memset(d, 0, sizeof(*d));
    if (strcmp(model, "lenet") == 0) {
        if (dahl_network_desc_lenet(c, h, w, NCLASSES, d) != 0) {
            dahlsim_error("--model lenet: a %dx%dx%d image is too small for LeNet (its second 5x5 convolution "
                          "needs at least 5x5 pixels after the first pooling)",
                          h, w, c);
            return false;
        }
    } else if (strcmp(model, "deep") == 0 || strncmp(model, "deep:", 5) == 0) {
        long blocks = DEEP_BLOCKS;
        if (model[4] == ':' && !dahlsim_parse_int("--model deep:BLOCKS", model + 5, 1, 9, &blocks))
            return false;
        if (dahl_network_desc_deep(c, h, w, NCLASSES, (int)blocks, DEEP_WIDTH, d) != 0) {
            dahlsim_error("--model %s: cannot build the deep variant for a %dx%dx%d image", model, h, w, c);
            return false;
        }
    } else {
        d->c = c;
        d->h = h;
        d->w = w;
        d->nclasses = NCLASSES;
        if (!model_from_json(model, d))
            return false;
    }
    char err[512];
    if (dahl_network_desc_check(d, err, sizeof(err)) != 0) {
        dahlsim_error("--model %s: %s", model, err);
        return false;
    }
    return true;
}

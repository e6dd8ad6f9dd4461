/* Networks by name or model file (see dahlsim_model.h). */
#include "dahlsim_model.h"

#include "dahl_layer.h"
#include "dahlsim_fs.h"
#include "dahlsim_onnx.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODEL_BYTES ((size_t)64 << 20)
#define MODEL_NAMES "lenet, vgg-small, resnet:DEPTH, deep, deep:BLOCKS, a JSON model file or an ONNX file (.onnx)"

/* Reads layers[i].key as an integer in [min, 65536] into *out; absent: *out = dflt, or an error when
 * dflt < 0. */
static int layer_int(const char *path, int i, const cJSON *layer, const char *key, int min, int dflt, int *out,
                     char *err, size_t err_size)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(layer, key);
    if (item == NULL) {
        if (dflt >= 0) {
            *out = dflt;
            return 0;
        }
        snprintf(err, err_size, "%s: layers[%d]: \"%s\" is missing", path, i, key);
        return -EINVAL;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : -1;
    /* the range first: converting a value out of int's range (1e300) is undefined */
    if (!cJSON_IsNumber(item) || !(v >= min && v <= 65536) || v != (double)(int)v) {
        char *text = cJSON_PrintUnformatted(item);
        snprintf(err, err_size, "%s: layers[%d].%s: expected an integer in [%d, 65536], got %s", path, i, key, min,
                 text != NULL ? text : "?");
        free(text);
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

/* Layer i's inputs: "input": j (one input, default the layer before, i - 1) or "inputs": [j, k] (a layer of
 * two, required), each an earlier layer's index, -1 for the network's input; into l->back. */
static int layer_inputs(const char *path, int i, const cJSON *item, const char *in_key, int nin,
                        struct dahl_layer_desc *l, char *err, size_t err_size)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, in_key);
    if (v == NULL && nin == 1)
        return 0;
    const cJSON *first = nin > 1 ? (cJSON_IsArray(v) ? v->child : NULL) : v;
    int k = 0;
    for (const cJSON *e = first; e != NULL && k <= nin; e = nin > 1 ? e->next : NULL, k++) {
        double j = cJSON_IsNumber(e) ? e->valuedouble : -2;
        if (k == nin || !(j >= -1 && j <= i - 1) || j != (double)(int)j)
            break;
        l->back[k] = i - 1 - (int)j;
    }
    if (k == nin && (nin == 1 || cJSON_GetArraySize(v) == nin))
        return 0;
    char *text = v != NULL ? cJSON_PrintUnformatted(v) : NULL;
    if (nin > 1)
        snprintf(err, err_size, "%s: layers[%d].%s: expected [j, k], two earlier layers' indices (-1: the network's "
                 "input, up to %d), got %s", path, i, in_key, i - 1, text != NULL ? text : "nothing");
    else
        snprintf(err, err_size, "%s: layers[%d].%s: expected an earlier layer's index (-1: the network's input, up "
                 "to %d), got %s", path, i, in_key, i - 1, text != NULL ? text : "?");
    free(text);
    return -EINVAL;
}

/* Layer i of a model file (an object with "type" and the kind's keys) into *l. */
static int layer_from_json(const char *path, int i, const cJSON *item, struct dahl_layer_desc *l, char *err,
                           size_t err_size)
{
    memset(l, 0, sizeof(*l));
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
    if (!cJSON_IsObject(item) || !cJSON_IsString(type)) {
        snprintf(err, err_size, "%s: layers[%d]: expected an object with a \"type\" string", path, i);
        return -EINVAL;
    }
    const char *t = type->valuestring;
    const struct dahl_layer_type *kind = dahl_layer_type_by_name(t);
    if (kind == NULL) {
        char names[256] = "";
        int nk = dahl_layer_type_count();
        for (int k = 0; k < nk; k++) {
            size_t used = strlen(names);
            const char *sep = k == 0 ? "" : k + 1 < nk ? ", " : " or ";
            snprintf(names + used, sizeof(names) - used, "%s%s", sep, dahl_layer_type_at(k)->name);
        }
        snprintf(err, err_size, "%s: layers[%d].type: expected %s, got \"%s\"", path, i, names, t);
        return -EINVAL;
    }
    l->kind = kind->kind;
    int nin = kind->ninputs > 1 ? kind->ninputs : 1;
    const char *in_key = nin > 1 ? "inputs" : "input";
    const cJSON *key;
    cJSON_ArrayForEach(key, item)
    {
        bool known = strcmp(key->string, "type") == 0 || strcmp(key->string, in_key) == 0;
        for (const struct dahl_layer_key *k = kind->keys; !known && k->key != NULL; k++)
            known = strcmp(key->string, k->key) == 0;
        if (!known) {
            char expected[256];
            snprintf(expected, sizeof(expected), "\"type\", \"%s\"", in_key);
            for (const struct dahl_layer_key *k = kind->keys; k->key != NULL; k++) {
                size_t used = strlen(expected);
                snprintf(expected + used, sizeof(expected) - used, ", \"%s\"", k->key);
            }
            snprintf(err, err_size, "%s: layers[%d]: unknown key \"%s\" for a %s layer (expected %s)", path, i,
                     key->string, t, expected);
            return -EINVAL;
        }
    }
    int ret = layer_inputs(path, i, item, in_key, nin, l, err, err_size);
    if (ret != 0)
        return ret;
    /* in the kind's order: a default "as the kernel" comes after the kernel */
    for (const struct dahl_layer_key *k = kind->keys; k->key != NULL; k++) {
        int dflt = k->dflt == DAHL_KEY_REQUIRED ? -1 : k->dflt == DAHL_KEY_AS_KERNEL ? l->kernel : k->dflt;
        ret = layer_int(path, i, item, k->key, k->min, dflt, (int *)(void *)((char *)l + k->offset), err, err_size);
        if (ret != 0)
            return ret;
    }
    return 0;
}

/* Fills d->layers from the JSON model file at path; every error names the file and the field. */
static int model_from_json(const char *what, const char *path, struct dahl_network_desc *d, char *err,
                           size_t err_size)
{
    cJSON *root;
    char why[160];
    int ret = dahlsim_json_load(path, MAX_MODEL_BYTES, &root, why, sizeof(why));
    if (ret == -EINVAL) {
        snprintf(err, err_size, "%s: %s", path, why);
        return -EINVAL;
    }
    if (ret != 0) {
        snprintf(err, err_size, "%s: %s: %s\nhint: a model is %s", what, path, why, MODEL_NAMES);
        return -EINVAL;
    }
    ret = -EINVAL;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    const cJSON *item;
    if (!cJSON_IsObject(root)) {
        snprintf(err, err_size, "%s: expected an object {\"layers\": [...]}", path);
        goto out;
    }
    cJSON_ArrayForEach(item, root)
    {
        if (strcmp(item->string, "layers") != 0) {
            snprintf(err, err_size, "%s: unknown key \"%s\" (expected \"layers\")", path, item->string);
            goto out;
        }
    }
    int n = cJSON_GetArraySize(layers);
    if (!cJSON_IsArray(layers) || n < 1 || n > DAHL_NETWORK_MAX_LAYERS) {
        snprintf(err, err_size, "%s: \"layers\": expected an array of 1 to %d layers", path, DAHL_NETWORK_MAX_LAYERS);
        goto out;
    }
    d->nlayers = 0;
    int i = 0;
    cJSON_ArrayForEach(item, layers)
    {
        if (layer_from_json(path, i, item, &d->layers[i], err, err_size) != 0)
            goto out;
        i++;
    }
    d->nlayers = i;
    ret = 0;
out:
    cJSON_Delete(root);
    return ret;
}

int dahlsim_model_desc(const char *what, const char *model, int c, int h, int w, struct dahl_network_desc *d,
                       char *err, size_t err_size)
{
    memset(d, 0, sizeof(*d));
    char why[512];
    int ret = dahl_network_desc_named(model, c, h, w, DAHLSIM_NCLASSES, d, why, sizeof(why));
    if (ret == -EINVAL) {
        snprintf(err, err_size, "%s %s", what, why);
        return -EINVAL;
    }
    if (ret == -ENOENT && dahlsim_onnx_is_path(model)) {
        ret = dahlsim_onnx_desc(model, c, h, w, DAHLSIM_NCLASSES, d, why, sizeof(why));
        if (ret == -ENOENT)
            snprintf(err, err_size, "%s: %s\nhint: a model is %s", what, why, MODEL_NAMES);
        else if (ret != 0)
            snprintf(err, err_size, "%s", why);
        return ret == 0 ? 0 : -EINVAL;
    }
    if (ret == -ENOENT) {
        *d = (struct dahl_network_desc){.c = c, .h = h, .w = w, .nclasses = DAHLSIM_NCLASSES};
        ret = model_from_json(what, model, d, err, err_size);
        if (ret != 0)
            return ret;
    }
    if (dahl_network_desc_check(d, why, sizeof(why)) != 0) {
        snprintf(err, err_size, "%s %s: %s", what, model, why);
        return -EINVAL;
    }
    return 0;
}

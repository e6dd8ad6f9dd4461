/* --model: a built-in model, a JSON model file or an ONNX file, as a network description (dahlsim_model.h);
 * --onnx-weights: the ONNX file's weights into the network. */
#include "train.h"
#include "dahlsim_model.h"
#include "dahlsim_onnx.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool train_model_desc(const char *model, int c, int h, int w, struct dahl_network_desc *d)
{
    char err[1024];
    if (dahlsim_model_desc("--model", model, c, h, w, d, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        return false;
    }
    return true;
}

int train_onnx_weights(struct dahl_network *net, const char *model, const struct dahl_network_desc *desc)
{
    char err[1024];
    struct dahl_network_desc d;
    struct dahlsim_onnx_weights *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        dahlsim_error("--onnx-weights: out of memory");
        return -ENOMEM;
    }
    int ret = dahlsim_onnx_weights(model, desc->c, desc->h, desc->w, desc->nclasses, &d, w, err, sizeof(err));
    if (ret != 0)
        dahlsim_error("--onnx-weights: %s", err);
    for (int i = 0; ret == 0 && i < w->nlayers; i++) {
        if (w->params[i] == NULL)
            continue;
        ret = dahl_network_write_params(net, i, w->params[i], w->count[i], w->running[i]);
        if (ret == -ENODATA) /* a simulation: values are not simulated */
            ret = 0;
        else if (ret != 0)
            dahlsim_error("--onnx-weights: %s: layer %d: %s", model, i, strerror(-ret));
    }
    dahlsim_onnx_weights_fini(w);
    free(w);
    return ret;
}

/* Fuzz target: model files, the JSON layer lists a scenario's or train's "model" may name
 * (sim/program/model.c, train_model_desc), for a 28x28x1 and a 32x32x3 input; a description it accepts is
 * then planned layer by layer (dahl_network_desc_shapes), which must succeed: train_model_desc checked it. */
#include "fuzz_util.h"

#include "train.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[PATH_MAX];
    if (path[0] == '\0')
        fuzz_path(path, sizeof(path), "model.json");
    fuzz_write(path, data, size);
    static const int shapes[][3] = {{1, 28, 28}, {3, 32, 32}};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        struct dahl_network_desc d;
        if (!train_model_desc(path, shapes[i][0], shapes[i][1], shapes[i][2], &d))
            continue;
        struct dahl_layer_shape layers[DAHL_NETWORK_MAX_LAYERS];
        char err[512];
        if (dahl_network_desc_shapes(&d, layers, err, sizeof(err)) != 0) {
            fprintf(stderr, "fuzz_model: a checked description does not plan: %s\n", err);
            abort();
        }
        dahl_network_desc_params(&d);
    }
    return 0;
}

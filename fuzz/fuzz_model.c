/* Fuzz target: model files, the JSON layer lists a scenario's, train's, a cover's or the lab's "model" may name
 * (sim/lab/model.c, dahlsim_model_desc, through the layer table's names and keys), for a 28x28x1 and a 32x32x3
 * input; a description it accepts is then planned layer by layer (dahl_network_desc_shapes), which must
 * succeed: dahlsim_model_desc checked it. */
#include "fuzz_util.h"

#include "dahlsim_model.h"

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
        char err[1024];
        if (dahlsim_model_desc("--model", path, shapes[i][0], shapes[i][1], shapes[i][2], &d, err, sizeof(err)) != 0)
            continue;
        struct dahl_layer_shape layers[DAHL_NETWORK_MAX_LAYERS];
        if (dahl_network_desc_shapes(&d, layers, err, sizeof(err)) != 0) {
            fprintf(stderr, "fuzz_model: a checked description does not plan: %s\n", err);
            abort();
        }
        dahl_network_desc_params(&d);
    }
    return 0;
}

/* Fuzz target: ONNX model files (sim/lab/onnx.c, dahlsim_onnx_desc_from_bytes: protobuf-c's unpacking of the
 * ModelProto, then the graph's nodes into layers), for a 32x32x3 and a 28x28x1 input; a description it accepts
 * is then planned layer by layer (dahl_network_desc_shapes), which must succeed: the reader checked it. Seeds:
 * models PyTorch exported (tests/onnx/make_models.py). */
#include "dahl_layer.h"
#include "dahlsim_onnx.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int shapes[][3] = {{3, 32, 32}, {1, 28, 28}};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        struct dahl_network_desc d;
        char err[1024];
        if (dahlsim_onnx_desc_from_bytes("fuzz.onnx", data, size, shapes[i][0], shapes[i][1], shapes[i][2], 10, &d,
                                         err, sizeof(err)) != 0)
            continue;
        static struct dahl_layer_shape layers[DAHL_NETWORK_MAX_LAYERS];
        if (dahl_network_desc_shapes(&d, layers, err, sizeof(err)) != 0) {
            fprintf(stderr, "fuzz_onnx: a checked description does not plan: %s\n", err);
            abort();
        }
        dahl_network_desc_params(&d);
    }
    return 0;
}

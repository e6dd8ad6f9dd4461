/* A network named as users name one (`--model`, a scenario's "model", `--cover ...,model=`): a built-in model
 * (dahl_network_desc_named: lenet, vgg-small, resnet:DEPTH, deep, deep:BLOCKS), a JSON model file of layers,
 * read through the layer table (dahl_layer.h: each kind's name and keys), or an ONNX file (dahlsim_onnx.h).
 * The one reader of model files: the program, the lab's export and the machine covers all call it.
 * StarPU-free. */
#ifndef DAHLSIM_MODEL_H
#define DAHLSIM_MODEL_H

#include "dahl_netdesc.h"

#include <stddef.h>

#define DAHLSIM_NCLASSES 10 /* every dataset dahlsim trains on has 10 classes */

/* The network `model` names for a c x h x w input and DAHLSIM_NCLASSES classes into *d, checked
 * (dahl_network_desc_check). Returns 0, or -EINVAL with one message in err (a second line "hint: ..." where
 * one helps): a built-in model's reason after "WHAT MODEL: ", a model file's errors naming the file and the
 * field ("net.json: layers[2].units: expected an integer in [1, 65536], got 0"), an unreadable file after
 * "WHAT: ". what names the option or field being read ("--model", "--cover fashion-mnist: model"). */
int dahlsim_model_desc(const char *what, const char *model, int c, int h, int w, struct dahl_network_desc *d,
                       char *err, size_t err_size);

#endif /* DAHLSIM_MODEL_H */

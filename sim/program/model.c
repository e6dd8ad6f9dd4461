/* --model: a built-in model or a JSON model file, as a network description (dahlsim_model.h). */
#include "train.h"
#include "dahlsim_model.h"
#include "dahlsim_util.h"

bool train_model_desc(const char *model, int c, int h, int w, struct dahl_network_desc *d)
{
    char err[1024];
    if (dahlsim_model_desc("--model", model, c, h, w, d, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        return false;
    }
    return true;
}

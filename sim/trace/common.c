/* What several trace writers share (see dahlsim_trace_internal.h): the codelet palette, the pass and layer
 * names of a task, JSON strings, the files every writer opens and closes with a message naming them, and the
 * order transfers are written in. */
#include "dahlsim_trace_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Colours per codelet, in the order codelets are first met after sorting names (stable across runs). */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31",
                                      "#843c39", "#7b4173", "#3182bd", "#e6550d"};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

const char *dahlsim_trace_codelet_colour(size_t c)
{
    return palette[c % NPALETTE];
}

const char *dahlsim_trace_pass_of(const char *codelet)
{
    if (strstr(codelet, "_forward") != NULL)
        return "forward";
    if (strstr(codelet, "_backward") != NULL)
        return "backward";
    if (strstr(codelet, "softmax") != NULL)
        return "loss";
    return "update";
}

const char *dahlsim_trace_layer_name(const struct dahlsim_trace_run *run, int layer)
{
    if (layer < 0 || layer > run->nlayers || run->layer_names == NULL)
        return "reduction"; /* StarPU's REDUX reductions between per-worker copies work on unlabelled handles */
    return run->layer_names[layer];
}

void dahlsim_trace_json_escape(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

int dahlsim_trace_close_checked(FILE *f, const char *path, char *err, size_t err_size)
{
    bool bad = ferror(f) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = true;
        e = errno;
    }
    if (bad) {
        snprintf(err, err_size, "%s: %s", path, strerror(e != 0 ? e : EIO));
        return -(e != 0 ? e : EIO);
    }
    return 0;
}

FILE *dahlsim_trace_open_in(const char *dir, const char *name, char *path, size_t path_size, char *err,
                            size_t err_size)
{
    snprintf(path, path_size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
    return f;
}

int dahlsim_trace_transfer_cmp(const void *pa, const void *pb)
{
    const struct dahlsim_trace_transfer *a = pa, *b = pb;
    if (a->start_us != b->start_us)
        return a->start_us < b->start_us ? -1 : 1;
    if (a->end_us != b->end_us)
        return a->end_us < b->end_us ? -1 : 1;
    if (a->src != b->src)
        return a->src - b->src;
    if (a->dst != b->dst)
        return a->dst - b->dst;
    return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

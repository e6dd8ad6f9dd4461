/* The Gantt chart of one run: gantt.dat (one gnuplot data block per codelet, then the idle background) and
 * gantt.gp, the script dahlsim_trace_render hands to gnuplot; one row per worker, times in milliseconds. */
#include "dahlsim_trace_internal.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#define GANTT_MAX_BOXES_PER_ROW 4000 /* closer tasks of one codelet merge: an image has ~2000 columns */

int dahlsim_trace_gantt_write(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                              double t0_us, double t1_us, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    FILE *f = dahlsim_trace_open_in(dir, "gantt.dat", path, sizeof(path), err, err_size);
    if (f == NULL)
        return -errno;
    /* One gnuplot data block per codelet (index c), then the idle background (index ncodelets). Tasks of one
     * codelet on one worker closer than a pixel merge into one box, so huge runs stay drawable. */
    double merge_us = (t1_us - t0_us) / GANTT_MAX_BOXES_PER_ROW;
    for (size_t c = 0; c < ncodelets; c++) {
        fprintf(f, "# %s\n", codelets[c]);
        for (size_t w = 0; w < run->nworkers; w++) {
            double box_start = -1, box_end = -1;
            for (size_t t = 0; t < run->ntasks; t++) {
                const struct dahl_profile_task *x = &run->tasks[t];
                if (x->worker != (int)w || strcmp(x->codelet, codelets[c]) != 0)
                    continue;
                if (box_start >= 0 && x->start_us - box_end <= merge_us) {
                    if (x->end_us > box_end)
                        box_end = x->end_us;
                    continue;
                }
                if (box_start >= 0)
                    fprintf(f, "%.6f %zu %.6f 0.4\n", (box_start + box_end) / 2e3, w, (box_end - box_start) / 2e3);
                box_start = x->start_us;
                box_end = x->end_us;
            }
            if (box_start >= 0)
                fprintf(f, "%.6f %zu %.6f 0.4\n", (box_start + box_end) / 2e3, w, (box_end - box_start) / 2e3);
        }
        fputs("\n\n", f);
    }
    fputs("# idle\n", f);
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, "%.6f %zu %.6f 0.4\n", (t0_us + t1_us) / 2e3, w, (t1_us - t0_us) / 2e3);
    int ret = dahlsim_trace_close_checked(f, path, err, err_size);
    if (ret != 0)
        return ret;

    f = dahlsim_trace_open_in(dir, "gantt.gp", path, sizeof(path), err, err_size);
    if (f == NULL)
        return -errno;
    size_t rows = run->nworkers > 0 ? run->nworkers : 1;
    int height = 160 + 28 * (int)rows;
    fputs("# The Gantt chart of one run: one row per worker, one colour per codelet, idle time in light grey.\n"
          "# Rendered by dahlsim (gnuplot gantt.gp in this directory).\n", f);
    fprintf(f, "set title \"");
    for (const char *p = run->title; *p != '\0'; p++)
        if (*p != '"' && *p != '\\')
            fputc(*p, f);
    fputs("\" noenhanced\n", f);
    fprintf(f, "set xlabel \"time (ms, StarPU clock%s)\"\nset xrange [%.6f:%.6f]\nset yrange [-0.6:%zu.6]\n",
            strstr(run->title, "simulated") != NULL ? ": simulated" : "", t0_us / 1e3, t1_us / 1e3, rows - 1);
    fputs("set ytics (", f);
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, "%s\"%s\" %zu", w > 0 ? ", " : "", run->workers[w].name, w);
    fputs(")\nset ytics nomirror\nset grid xtics\nset style fill solid 1.0 noborder\n"
          "set key outside below center horizontal noenhanced\n",
          f);
    fputs("plot 'gantt.dat' index ", f);
    fprintf(f, "%zu using 1:2:3:4 with boxxyerror lc rgb \"%s\" title \"idle\"", ncodelets, DAHLSIM_TRACE_IDLE_COLOUR);
    for (size_t c = 0; c < ncodelets; c++)
        fprintf(f, ", \\\n     '' index %zu using 1:2:3:4 with boxxyerror lc rgb \"%s\" title \"%s\"", c,
                dahlsim_trace_codelet_colour(c), codelets[c]);
    fputc('\n', f);
    fprintf(f, "# terminals, set by dahlsim when rendering: png size 1400,%d and svg size 1400,%d\n", height, height);
    return dahlsim_trace_close_checked(f, path, err, err_size);
}

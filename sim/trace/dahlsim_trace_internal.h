/* Shared by the files of sim/trace/ only: the writers dahlsim_trace_write calls, one per format, and what
 * several of them use (codelet colours, JSON strings, files opened and closed with a message naming them, the
 * pass and layer a task belongs to, the order of transfers). Callers outside sim/trace/ use dahlsim_trace.h. */
#ifndef DAHLSIM_TRACE_INTERNAL_H
#define DAHLSIM_TRACE_INTERNAL_H

#include "dahlsim_trace.h"

#include <stddef.h>
#include <stdio.h>

/* Codelets a trace tells apart; the run's distinct codelet names, sorted, are passed to the writers. */
#define DAHLSIM_TRACE_MAX_CODELETS 64
#define DAHLSIM_TRACE_IDLE_COLOUR "#e8e8e8"

/* The colour ("#rrggbb", static) of the c-th codelet of the sorted list: the same codelet keeps its colour
 * from run to run, and from one format to another. */
const char *dahlsim_trace_codelet_colour(size_t c);

/* The pass a codelet belongs to, from its perf-model symbol: "forward", "backward", "loss" or "update". */
const char *dahlsim_trace_pass_of(const char *codelet);
/* The name of a layer index of run's records ("reduction" for StarPU's unlabelled REDUX tasks). */
const char *dahlsim_trace_layer_name(const struct dahlsim_trace_run *run, int layer);

/* Writes s as a JSON string body (no quotes) to f. */
void dahlsim_trace_json_escape(FILE *f, const char *s);

/* Opens dir/name for writing, the path into path; NULL (errno set) with a message naming it in err. */
FILE *dahlsim_trace_open_in(const char *dir, const char *name, char *path, size_t path_size, char *err,
                            size_t err_size);
/* Closes f; returns 0 or -errno with a message naming path. */
int dahlsim_trace_close_checked(FILE *f, const char *path, char *err, size_t err_size);

/* qsort order of struct dahlsim_trace_transfer: by start, then end, nodes and bytes (the same transfers give
 * the same files). */
int dahlsim_trace_transfer_cmp(const void *pa, const void *pb);

/* The writers, each of one format into dir, from run's sorted tasks and transfers: codelets[ncodelets] are the
 * run's distinct codelet names, sorted; t0_us and t1_us the first task start and the last task end. Each
 * returns 0 or -errno with a message naming the file. */
int dahlsim_trace_paje_write(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                             double t0_us, double t1_us, const char *dir, char *err, size_t err_size);
int dahlsim_trace_chrome_write(const struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size);
int dahlsim_trace_gantt_write(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                              double t0_us, double t1_us, const char *dir, char *err, size_t err_size);
int dahlsim_trace_summary_write(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                                double t0_us, double t1_us, const char *dir, char *err, size_t err_size);

#endif /* DAHLSIM_TRACE_INTERNAL_H */

/* The Chrome trace-event JSON (trace.json) of one run, for Perfetto and chrome://tracing: one thread per
 * worker with a complete event per task and per input wait, and one async track per bus link with an event
 * per data transfer; times in microseconds on StarPU's clock. */
#include "dahlsim_trace_internal.h"

#include <errno.h>
#include <limits.h>

int dahlsim_trace_chrome_write(const struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    FILE *f = dahlsim_trace_open_in(dir, "trace.json", path, sizeof(path), err, err_size);
    if (f == NULL)
        return -errno;
    fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": \"", f);
    dahlsim_trace_json_escape(f, run->title);
    fputs("\", \"clock\": \"StarPU clock, microseconds\"},\n\"traceEvents\": [\n", f);
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"", f);
    dahlsim_trace_json_escape(f, run->title);
    fputs("\"}}", f);
    for (size_t w = 0; w < run->nworkers; w++) {
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": %zu, \"args\": {\"name\": \"", w);
        dahlsim_trace_json_escape(f, run->workers[w].name);
        fprintf(f, "\"}},\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 0, \"tid\": %zu, \"args\": "
                   "{\"sort_index\": %zu}}",
                w, w);
    }
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = &run->tasks[t];
        if (x->fetch_us > 0)
            fprintf(f, ",\n{\"name\": \"fetching input\", \"cat\": \"transfer\", \"ph\": \"X\", \"ts\": %.3f, "
                       "\"dur\": %.3f, \"pid\": 0, \"tid\": %d}",
                    x->start_us - x->fetch_us, x->fetch_us, x->worker);
        fprintf(f, ",\n{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 0, "
                   "\"tid\": %d, \"args\": {\"job\": %llu, \"step\": %ld, \"layer\": \"",
                x->codelet, dahlsim_trace_pass_of(x->codelet), x->start_us, x->end_us - x->start_us, x->worker,
                (unsigned long long)x->job, x->step + 1);
        dahlsim_trace_json_escape(f, dahlsim_trace_layer_name(run, x->layer));
        fputs("\"}}", f);
    }
    /* Data transfers: one async slice per transfer (ids in start order) in a process of their own, named by
     * the link, so Perfetto shows one track per link beside the workers. */
    if (run->ntransfers > 0)
        fputs(",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"data transfers\"}}", f);
    for (size_t t = 0; t < run->ntransfers; t++) {
        const struct dahlsim_trace_transfer *x = &run->transfers[t];
        for (int half = 0; half < 2; half++) {
            fputs(",\n{\"name\": \"", f);
            dahlsim_trace_json_escape(f, run->node_names[x->src]);
            fputs(" -> ", f);
            dahlsim_trace_json_escape(f, run->node_names[x->dst]);
            fprintf(f, "\", \"cat\": \"transfer\", \"ph\": \"%s\", \"id\": %zu, \"ts\": %.3f, \"pid\": 1, \"tid\": 0",
                    half == 0 ? "b" : "e", t, half == 0 ? x->start_us : x->end_us);
            if (half == 0)
                fprintf(f, ", \"args\": {\"bytes\": %lld, \"kind\": \"%s\"}", x->bytes, x->kind);
            fputc('}', f);
        }
    }
    fputs("\n]}\n", f);
    return dahlsim_trace_close_checked(f, path, err, err_size);
}

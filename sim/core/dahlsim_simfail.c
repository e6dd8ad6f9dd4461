/* Recognising why a simulator died: see dahlsim_simfail.h. The messages matched are SimGrid 3.32's
 * (src/kernel/context), the C++ runtime's and the kernel's signals. */
#include "dahlsim_simfail.h"

#include "dahlsim_util.h"
#include "dahlsim_proc.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum cause { CAUSE_NONE, CAUSE_MAPS, CAUSE_STACK_ALLOC, CAUSE_STACK_OVERFLOW, CAUSE_NOMEM, CAUSE_FILES };

/* The first cause the log's lines name, or CAUSE_NONE. */
static enum cause cause_in_log(const char *log_path)
{
    static const struct {
        const char *text;
        enum cause cause;
    } known[] = {
        {"Failed to protect stack", CAUSE_MAPS},
        {"exceeding the amount of mappings allowed per process", CAUSE_MAPS},
        {"Failed to allocate stack", CAUSE_STACK_ALLOC},
        {"Access violation or Bus error detected", CAUSE_STACK_OVERFLOW},
        {"std::bad_alloc", CAUSE_NOMEM},
        {"Cannot allocate memory", CAUSE_NOMEM},
        {"EMFILE error code (too many files)", CAUSE_FILES},
        {"Too many open files", CAUSE_FILES},
    };
    FILE *f = log_path != NULL ? fopen(log_path, "r") : NULL;
    if (f == NULL)
        return CAUSE_NONE;
    char line[4096];
    enum cause found = CAUSE_NONE;
    while (found == CAUSE_NONE && fgets(line, sizeof(line), f) != NULL)
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && found == CAUSE_NONE; i++)
            if (strstr(line, known[i].text) != NULL)
                found = known[i].cause;
    fclose(f);
    return found;
}

int dahlsim_simfail_explain(int status, const char *log_path, char *why, size_t why_size, char *hint,
                            size_t hint_size)
{
    why[0] = hint[0] = '\0';
    if (status == 0)
        return 0;
    enum cause cause = cause_in_log(log_path);
    switch (cause) {
    case CAUSE_MAPS: {
        long limit = dahlsim_proc_max_maps();
        char limit_text[64] = "the kernel's limit";
        if (limit > 0)
            snprintf(limit_text, sizeof(limit_text), "the kernel's limit of %ld", limit);
        snprintf(why, why_size,
                 "the simulator ran out of memory mappings: SimGrid maps a stack and a guard page for every "
                 "simulated thread, and the process reached %s (vm.max_map_count)", limit_text);
        snprintf(hint, hint_size,
                 "a run that stays short of it shows its mappings in results.json (\"maps_first_step\", "
                 "\"maps_peak\"): a count that grows step after step is a leak to report with the scenario; "
                 "otherwise simulate fewer nodes");
        return 1;
    }
    case CAUSE_STACK_ALLOC:
        snprintf(why, why_size,
                 "the simulator could not allocate the stack of a new simulated thread (8 MiB of address space "
                 "each): the process is out of memory or address space");
        snprintf(hint, hint_size, "check `ulimit -v` and the machine's free memory, or simulate fewer nodes");
        return 1;
    case CAUSE_STACK_OVERFLOW:
        snprintf(why, why_size,
                 "a simulated thread overflowed its stack or touched invalid memory (SimGrid caught the signal)");
        snprintf(hint, hint_size, "report it with the scenario; the same run natively (dahlsim train) tells a "
                                  "program error from a stack too small for the simulation");
        return 1;
    case CAUSE_NOMEM:
        snprintf(why, why_size, "the simulator ran out of memory");
        snprintf(hint, hint_size, "its peak memory grows with the nodes and the images' size: simulate fewer "
                                  "nodes or smaller images, or use a machine with more memory");
        return 1;
    case CAUSE_FILES:
        snprintf(why, why_size, "the simulator ran out of file descriptors (SMPI opens files per rank)");
        snprintf(hint, hint_size, "raise the limit (`ulimit -n`) or simulate fewer nodes");
        return 1;
    case CAUSE_NONE:
        break;
    }
    if (status == 128 + SIGKILL) {
        snprintf(why, why_size, "the simulator was killed (SIGKILL), most likely by the kernel's out-of-memory "
                                "killer");
        snprintf(hint, hint_size, "`dmesg | grep -i oom` says so; its peak memory grows with the nodes and the "
                                  "images' size: simulate fewer nodes or smaller images");
        return 1;
    }
    return 0;
}

void dahlsim_simfail_report(int status, const char *log_path)
{
    char why[512], hint[512];
    if (dahlsim_simfail_explain(status, log_path, why, sizeof(why), hint, sizeof(hint)) == 0)
        return;
    dahlsim_error("%s", why);
    fprintf(stderr, "hint: %s\n", hint);
}

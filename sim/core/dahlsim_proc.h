/* What the kernel says about this process that a long simulation can run out of: its memory mappings, which
 * SimGrid spends two of per simulated thread (a stack and its guard page), against vm.max_map_count, and the
 * sampling of their count during a run (results.json "maps_first_step" and "maps_peak"). Linux /proc only;
 * elsewhere every figure is -1. */
#ifndef DAHLSIM_PROC_H
#define DAHLSIM_PROC_H

#include <stdbool.h>

/* The number of memory mappings of this process (lines of /proc/self/maps), or -1. */
long dahlsim_proc_maps(void);
/* The kernel's limit on mappings per process (/proc/sys/vm/max_map_count), or -1. */
long dahlsim_proc_max_maps(void);

/* Mapping counts sampled over a run: after the first step, then at most every interval_s of wall time, and
 * at the end. Caller-owned; dahlsim_proc_meter_init before use. */
struct dahlsim_proc_meter {
    double interval_s, last_s;
    long first, peak; /* -1 until sampled */
};

void dahlsim_proc_meter_init(struct dahlsim_proc_meter *m, double interval_s);
/* Samples when none was taken yet, when force is set, or when interval_s passed since the last sample. */
void dahlsim_proc_meter_tick(struct dahlsim_proc_meter *m, bool force);

/* The variable a front end sets to its pid in the environment of the processes it starts (dahlsim_spawn.h). */
#define DAHLSIM_PARENT_PID_VAR "DAHLSIM_PARENT_PID"
/* In a process a front end started: dies (SIGKILL) when that front end dies, so that a sweep killed with
 * kill -9 leaves no simulation writing into its directory. Does nothing when the variable is unset or names
 * a live process other than the parent (smpirun's ranks: their parent is smpirun); exits 137 when the front
 * end is already gone. Linux only (prctl); elsewhere nothing. Likewise dahlsim_proc_die_with(pid): the same tie
 * to an explicit parent pid (a forked child of a sweep, before it starts the simulation). */
void dahlsim_proc_die_with_front_end(void);
void dahlsim_proc_die_with(long parent);

/* What else ran on this machine while this process and its children ran: evidence of interference, where a
 * slower kernel alone cannot tell a neighbour from the machine's own slow spell. From /proc/stat (every CPU's
 * busy and stolen time) against getrusage (this process and the children it waited for): the rest is other
 * processes'. Linux only; elsewhere nothing is known. */
struct dahlsim_load_mark {
    double wall_s, busy_s, steal_s, own_s;
    long ivcsw;
    bool known;
};

struct dahlsim_load {
    double wall_s;      /* elapsed between the mark and now */
    double others_s;    /* CPU time of every other process (at least 0) */
    double steal_s;     /* time the hypervisor gave this machine's vCPUs to another guest */
    double own_s;       /* CPU time of this process and its waited-for children */
    double share;       /* (others + steal, less two clock ticks of /proc/stat's resolution) over the cores'
                         * time (wall x online cores): 0 alone, 1 all taken */
    double ivcsw_per_s; /* involuntary context switches of this process and its children, per second */
    bool known;         /* false: /proc/stat could not be read (every figure 0) */
};

/* Marks now. */
void dahlsim_load_mark(struct dahlsim_load_mark *m);
/* What ran since mark m (taken in this process, whose children in between were waited for). */
void dahlsim_load_since(const struct dahlsim_load_mark *m, struct dahlsim_load *l);

#endif /* DAHLSIM_PROC_H */

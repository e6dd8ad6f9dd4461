/* Mapping counts of this process from /proc, and the tie of a started process to its front end: see
 * dahlsim_proc.h. */
#include "dahlsim_proc.h"

#include "dahlsim_fs.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

long dahlsim_proc_maps(void)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[65536];
    long lines = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    close(fd);
    return n < 0 ? -1 : lines;
}

long dahlsim_proc_max_maps(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f == NULL)
        return -1;
    long limit;
    int got = fscanf(f, "%ld", &limit);
    fclose(f);
    return got == 1 ? limit : -1;
}

void dahlsim_proc_meter_init(struct dahlsim_proc_meter *m, double interval_s)
{
    *m = (struct dahlsim_proc_meter){.interval_s = interval_s, .first = -1, .peak = -1};
}

void dahlsim_proc_meter_tick(struct dahlsim_proc_meter *m, bool force)
{
    double now = dahlsim_mono_s();
    if (m->first >= 0 && !force && now - m->last_s < m->interval_s)
        return;
    m->last_s = now;
    long maps = dahlsim_proc_maps();
    if (maps < 0)
        return;
    if (m->first < 0)
        m->first = maps;
    if (maps > m->peak)
        m->peak = maps;
}

#ifdef __linux__
/* Whether process pid runs: it exists and is not a zombie (an init that reaps late keeps dead parents as
 * zombies for a while). */
static bool running(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold spaces */
    return close_paren != NULL && close_paren[1] == ' ' && close_paren[2] != 'Z' && close_paren[2] != 'X';
}
#endif

void dahlsim_proc_die_with(long parent)
{
#ifdef __linux__
    if (parent <= 1)
        return;
    if ((long)getppid() != parent) {
        if (!running(parent))
            _exit(137); /* the front end died before this process got this far */
        return;         /* started through another process (smpirun): no tie */
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if ((long)getppid() != parent) /* it died before the tie was made */
        _exit(137);
#else
    (void)parent;
#endif
}

void dahlsim_proc_die_with_front_end(void)
{
    const char *v = getenv(DAHLSIM_PARENT_PID_VAR);
    char *end;
    long pid = v != NULL ? strtol(v, &end, 10) : 0;
    if (v != NULL && *end == '\0')
        dahlsim_proc_die_with(pid);
}

/* ---- the load meter ---------------------------------------------------------------------------------------- */

/* Every CPU's busy time (user, nice, system, irq, softirq: guest time is inside user) and stolen time in
 * seconds, from /proc/stat's first line; false when it cannot be read. */
static bool cpu_times(double *busy_s, double *steal_s)
{
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return false;
    unsigned long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait, &irq,
                     &softirq, &steal);
    fclose(f);
    long tick = sysconf(_SC_CLK_TCK);
    if (got < 7 || tick <= 0)
        return false;
    *busy_s = (double)(user + nice + sys + irq + softirq) / (double)tick;
    *steal_s = got == 8 ? (double)steal / (double)tick : 0;
    return true;
}

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

/* This process's CPU time and its waited-for children's, and their involuntary context switches. */
static void own_times(double *cpu_s, long *ivcsw)
{
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    *cpu_s = tv_s(self.ru_utime) + tv_s(self.ru_stime) + tv_s(children.ru_utime) + tv_s(children.ru_stime);
    *ivcsw = self.ru_nivcsw + children.ru_nivcsw;
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void dahlsim_load_mark(struct dahlsim_load_mark *m)
{
    *m = (struct dahlsim_load_mark){.wall_s = wall_now()};
    m->known = cpu_times(&m->busy_s, &m->steal_s);
    own_times(&m->own_s, &m->ivcsw);
}

void dahlsim_load_since(const struct dahlsim_load_mark *m, struct dahlsim_load *l)
{
    *l = (struct dahlsim_load){.wall_s = wall_now() - m->wall_s};
    double busy = 0, steal = 0, own = 0;
    long ivcsw = 0;
    own_times(&own, &ivcsw);
    l->own_s = own - m->own_s;
    l->ivcsw_per_s = l->wall_s > 0 ? (double)(ivcsw - m->ivcsw) / l->wall_s : 0;
    if (!m->known || !cpu_times(&busy, &steal))
        return;
    l->known = true;
    /* /proc/stat counts in ticks, getrusage finer: a few ticks either way, never below 0 */
    double others = (busy - m->busy_s) - l->own_s;
    l->others_s = others > 0 ? others : 0;
    l->steal_s = steal - m->steal_s > 0 ? steal - m->steal_s : 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN), tick = sysconf(_SC_CLK_TCK);
    double capacity = l->wall_s * (double)(cores > 0 ? cores : 1);
    /* /proc/stat's resolution: two ticks either way are forgiven (on a 0.2 s run of 2 cores, 5 % each) */
    double taken = l->others_s + l->steal_s - (tick > 0 ? 2.0 / (double)tick : 0);
    l->share = capacity > 0 && taken > 0 ? taken / capacity : 0;
}

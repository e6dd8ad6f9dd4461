/* Mapping counts of this process from /proc, and the tie of a started process to its front end: see
 * dahlsim_proc.h. */
#include "dahlsim_proc.h"

#include "dahlsim_fs.h"

#include <fcntl.h>
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

/* Mapping counts of this process from /proc: see dahlsim_proc.h. */
#include "dahlsim_proc.h"

#include "dahlsim_fs.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

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

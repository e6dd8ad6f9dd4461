/* Output files checked at close: see dahlsim_outfile.h. */
#include "dahlsim_outfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

int dahlsim_outfile_open(struct dahlsim_outfile *o, char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->path, sizeof(o->path), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(o->path)) {
        snprintf(err, err_size, "%.200s...: path too long", o->path);
        return -ENAMETOOLONG;
    }
    o->f = fopen(o->path, "w");
    if (o->f == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", o->path, strerror(e));
        return -e;
    }
    return 0;
}

int dahlsim_outfile_close(struct dahlsim_outfile *o, char *err, size_t err_size)
{
    bool bad = ferror(o->f) != 0;
    if (fclose(o->f) != 0)
        bad = true;
    o->f = NULL;
    if (bad) {
        snprintf(err, err_size, "%s: write failed: %s", o->path, strerror(errno != 0 ? errno : EIO));
        return -EIO;
    }
    return 0;
}

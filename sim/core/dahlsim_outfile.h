/* An output file written with unchecked fprintf calls and checked once, at close: what the writers of
 * generated files (a synthesized machine's perf models, bus files, platform and manifest) share. Errors come
 * back as -errno with one line naming the file in the caller's err buffer. */
#ifndef DAHLSIM_OUTFILE_H
#define DAHLSIM_OUTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

struct dahlsim_outfile {
    FILE *f;
    char path[PATH_MAX + 512];
};

/* Creates (or truncates) the file whose path is the printf-style fmt. Returns 0, or -errno
 * (-ENAMETOOLONG for a path too long) with the reason in err. */
int dahlsim_outfile_open(struct dahlsim_outfile *o, char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Closes o: 0 when every write and the close succeeded, else -EIO with "PATH: write failed: ..." in err. */
int dahlsim_outfile_close(struct dahlsim_outfile *o, char *err, size_t err_size);

#endif /* DAHLSIM_OUTFILE_H */

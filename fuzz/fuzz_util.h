/* What every fuzz target shares (docs/reliability.md): libFuzzer's entry point, a private temporary
 * directory made once per process (removed at exit), the input's bytes written to a file there (dahlsim's
 * parsers take paths), and the input cut into parts at NUL bytes (a target whose parser reads two files, or
 * a file and --set overrides, takes them from one input). */
#ifndef DAHLSIM_FUZZ_UTIL_H
#define DAHLSIM_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define FUZZ_MAX_PARTS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The process's temporary directory (created on the first call; aborts when it cannot be). */
const char *fuzz_dir(void);
/* fuzz_dir()/name into buf (aborts when it does not fit). */
void fuzz_path(char *buf, size_t size, const char *name);
/* Writes data to path, replacing it; aborts on failure (a harness error, not a finding). */
void fuzz_write(const char *path, const void *data, size_t size);
/* Copies the source tree's file src (relative to DAHLSIM_SOURCE_DIR) to path; aborts on failure. */
void fuzz_copy_source(const char *src, const char *path);

/* One part of an input: NUL-free bytes, NUL-terminated in a copy the caller frees with fuzz_parts_free. */
struct fuzz_parts {
    char *text[FUZZ_MAX_PARTS];
    size_t len[FUZZ_MAX_PARTS];
    size_t n; /* >= 1: an input without NUL is one part */
};
/* Splits data at NUL bytes into at most FUZZ_MAX_PARTS parts (the last takes the rest, NULs dropped). */
void fuzz_parts_init(struct fuzz_parts *p, const uint8_t *data, size_t size);
void fuzz_parts_fini(struct fuzz_parts *p);

#endif /* DAHLSIM_FUZZ_UTIL_H */

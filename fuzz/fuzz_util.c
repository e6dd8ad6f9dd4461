/* The fuzz targets' shared helpers (fuzz_util.h): files in a per-process temporary directory and inputs cut
 * at NUL bytes. Harness failures abort: they are not findings, and a fuzzer must not mistake them for one. */
#include "fuzz_util.h"

#include "dahlsim_fs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[PATH_MAX];

static void remove_dir(void)
{
    dahlsim_remove_tree(dir);
}

const char *fuzz_dir(void)
{
    if (dir[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/dahlsim-fuzz-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(remove_dir);
    }
    return dir;
}

void fuzz_path(char *buf, size_t size, const char *name)
{
    if (snprintf(buf, size, "%s/%s", fuzz_dir(), name) >= (int)size) {
        fprintf(stderr, "fuzz: path too long: %s\n", name);
        abort();
    }
}

void fuzz_write(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

void fuzz_copy_source(const char *src, const char *path)
{
    char from[PATH_MAX];
    snprintf(from, sizeof(from), "%s/%s", DAHLSIM_SOURCE_DIR, src);
    char *text = dahlsim_read_text(from, SIZE_MAX);
    if (text == NULL) {
        perror(from);
        abort();
    }
    fuzz_write(path, text, strlen(text));
    free(text);
}

void fuzz_parts_init(struct fuzz_parts *p, const uint8_t *data, size_t size)
{
    memset(p, 0, sizeof(*p));
    size_t start = 0;
    while (p->n < FUZZ_MAX_PARTS) {
        const uint8_t *nul = p->n + 1 < FUZZ_MAX_PARTS ? memchr(data + start, '\0', size - start) : NULL;
        size_t end = nul != NULL ? (size_t)(nul - data) : size;
        char *t = malloc(end - start + 1);
        if (t == NULL)
            abort();
        size_t len = 0;
        for (size_t i = start; i < end; i++)
            if (data[i] != '\0')
                t[len++] = (char)data[i];
        t[len] = '\0';
        p->text[p->n] = t;
        p->len[p->n++] = len;
        if (nul == NULL)
            break;
        start = end + 1;
    }
}

void fuzz_parts_fini(struct fuzz_parts *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->text[i]);
    p->n = 0;
}

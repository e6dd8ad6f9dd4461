/* A fuzz target as a plain program (built in every configuration, gcc included): runs
 * LLVMFuzzerTestOneInput once on every file of the directories (or files) given, in name order, so CTest's
 * fuzz_replay checks the committed corpora and crashing inputs under the build's sanitizers. Exits 1 when an
 * argument cannot be read or a directory holds no input; a finding aborts through the sanitizer. */
#include "fuzz_util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        uint8_t *grown = len == cap ? realloc(buf, cap *= 2) : buf;
        if (grown == NULL)
            free(buf);
        buf = grown;
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replays every regular file of dir; returns how many, or -1. */
static long replay_dir(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, by_name);
    if (n < 0) {
        perror(dir);
        return -1;
    }
    long count = 0;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat st;
        if (names[i]->d_name[0] != '.' && snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) < (int)sizeof(path) &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode))
            count = replay_file(path) == 0 && count >= 0 ? count + 1 : -1;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long n = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                                                                : (replay_file(argv[i]) == 0 ? 1 : -1);
        if (n <= 0) {
            fprintf(stderr, "%s: %s\n", argv[i], n == 0 ? "no input to replay" : "cannot replay");
            return 1;
        }
        printf("%s: %ld input(s) replayed\n", argv[i], n);
    }
    return 0;
}

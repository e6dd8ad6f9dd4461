/* File-system and clock helpers shared by the dahlsim commands (see dahlsim_fs.h). */
#include "dahlsim_fs.h"

#include "dahl_array.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

bool dahlsim_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int dahlsim_make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (strlen(path) >= sizeof(buf))
        return -ENAMETOOLONG;
    strcpy(buf, path);
    for (char *p = buf + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -errno;
    return dahlsim_is_dir(buf) ? 0 : -ENOTDIR;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int dahlsim_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -errno;
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -errno;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (in == NULL)
        return -errno;
    FILE *out = fopen(to, "wb");
    if (out == NULL) {
        int e = errno;
        fclose(in);
        return -e;
    }
    char buf[65536];
    size_t n;
    int ret = 0;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
        if (fwrite(buf, 1, n, out) != n) {
            ret = -EIO;
            break;
        }
    }
    if (ferror(in))
        ret = -EIO;
    fclose(in);
    if (fclose(out) != 0 && ret == 0)
        ret = -errno;
    return ret;
}

int dahlsim_copy_tree(const char *from, const char *to)
{
    if (mkdir(to, 0777) != 0)
        return -errno;
    DIR *d = opendir(from);
    if (d == NULL)
        return -errno;
    int ret = 0;
    struct dirent *e;
    while (ret == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char src[PATH_MAX], dst[PATH_MAX];
        if (snprintf(src, sizeof(src), "%s/%s", from, e->d_name) >= (int)sizeof(src) ||
            snprintf(dst, sizeof(dst), "%s/%s", to, e->d_name) >= (int)sizeof(dst)) {
            ret = -ENAMETOOLONG;
            break;
        }
        struct stat st;
        if (lstat(src, &st) != 0)
            ret = -errno;
        else if (S_ISDIR(st.st_mode))
            ret = dahlsim_copy_tree(src, dst);
        else if (S_ISREG(st.st_mode))
            ret = copy_file(src, dst);
    }
    closedir(d);
    return ret;
}

char *dahlsim_read_text(const char *path, size_t max_bytes)
{
    size_t len;
    return dahlsim_read_file(path, max_bytes, &len);
}

char *dahlsim_read_file(const char *path, size_t max_bytes, size_t *out_len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    /* A regular file's size is known: one buffer of that size (and one byte to see the end), rather than
     * doublings, each a copy (and, under the sanitizers, a fresh mapping). */
    size_t cap = 8192, len = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 && (uintmax_t)st.st_size < max_bytes &&
        (uintmax_t)st.st_size < SIZE_MAX - 2)
        cap = (size_t)st.st_size + 2;
    char *buf = malloc(cap);
    int error = buf == NULL ? ENOMEM : 0;
    while (error == 0) {
        len += fread(buf + len, 1, cap - 1 - len, f);
        if (ferror(f)) {
            error = EIO;
        } else if (feof(f)) {
            break;
        } else if (cap - 1 >= max_bytes) {
            error = EFBIG;
        } else {
            char *grown = dahl_array_grow(buf, &cap, cap + 1, 1); /* doubles cap */
            if (grown == NULL)
                error = ENOMEM;
            else
                buf = grown;
        }
    }
    fclose(f);
    if (error == 0 && len > max_bytes)
        error = EFBIG;
    if (error != 0) {
        free(buf);
        errno = error;
        return NULL;
    }
    buf[len] = '\0';
    *out_len = len;
    return buf;
}

cJSON *dahlsim_read_json(const char *path)
{
    char *text = dahlsim_read_text(path, SIZE_MAX);
    if (text == NULL)
        return NULL;
    cJSON *root = cJSON_Parse(text);
    free(text);
    return root;
}

int dahlsim_json_load(const char *path, size_t max_bytes, cJSON **doc, char *err, size_t err_size)
{
    *doc = NULL;
    char *text = dahlsim_read_text(path, max_bytes);
    if (text == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s", strerror(e));
        return -e;
    }
    *doc = cJSON_Parse(text);
    if (*doc == NULL)
        dahlsim_json_error_where(text, err, err_size);
    free(text);
    return *doc != NULL ? 0 : -EINVAL;
}

int dahlsim_json_save(const cJSON *doc, const char *path, char *err, size_t err_size)
{
    const char *slash = strrchr(path, '/');
    int dir_len = slash != NULL ? (int)(slash - path + 1) : 0;
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp", dir_len, path, path + dir_len) >= sizeof(tmp)) {
        snprintf(err, err_size, "%s: path too long", path);
        return -ENAMETOOLONG;
    }
    char *text = cJSON_Print(doc);
    if (text == NULL) {
        snprintf(err, err_size, "%s: out of memory while writing it", path);
        return -ENOMEM;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", tmp, strerror(e));
        free(text);
        return -e;
    }
    size_t len = strlen(text);
    bool ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF;
    int e = errno;
    free(text);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        ok = false;
        e = errno;
    }
    if (fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        snprintf(err, err_size, "%s: %s", tmp, strerror(e));
        unlink(tmp);
        return -e;
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        snprintf(err, err_size, "%s: %s", path, strerror(e));
        unlink(tmp);
        return -e;
    }
    return 0;
}

const char *dahlsim_json_error_where(const char *text, char *buf, size_t size)
{
    const char *at = cJSON_GetErrorPtr();
    int line = 1, column = 1;
    for (const char *p = text; at != NULL && p < at && *p != '\0'; p++) {
        line += *p == '\n';
        column = *p == '\n' ? 1 : column + 1;
    }
    char found[48];
    if (at == NULL || *at == '\0')
        snprintf(found, sizeof(found), "the text ends too early");
    else if (*at == '\n' || *at == '\r')
        snprintf(found, sizeof(found), "unexpected end of line");
    else if (*at == '\'')
        snprintf(found, sizeof(found), "unexpected \"'\"");
    else if ((unsigned char)*at < 0x20 || (unsigned char)*at >= 0x7f)
        snprintf(found, sizeof(found), "unexpected byte 0x%02x", (unsigned char)*at);
    else
        snprintf(found, sizeof(found), "unexpected '%c'", *at);
    snprintf(buf, size, "line %d, column %d: not valid JSON (%s)", line, column, found);
    return buf;
}

double dahlsim_mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int dahlsim_self_exe(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n < 0)
        return -errno;
    if ((size_t)n >= size - 1)
        return -ENAMETOOLONG;
    buf[n] = '\0';
    return 0;
}

/* An installed dahlsim's data: PREFIX/share/dahlsim beside PREFIX/bin/dahlsim, when it holds calibration/. */
static const char *find_installed_home(void)
{
    static char home[PATH_MAX];
    char self[PATH_MAX], probe[PATH_MAX + 32];
    if (dahlsim_self_exe(self, sizeof(self)) != 0)
        return NULL;
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    slash = strrchr(self, '/');
    if (slash == NULL || strcmp(slash, "/bin") != 0)
        return NULL;
    *slash = '\0';
    if (snprintf(home, sizeof(home), "%s/share/dahlsim", self) >= (int)sizeof(home))
        return NULL;
    snprintf(probe, sizeof(probe), "%s/calibration", home);
    return access(probe, R_OK | X_OK) == 0 ? home : NULL;
}

const char *dahlsim_home(void)
{
    const char *home = getenv("DAHLSIM_HOME");
    if (home != NULL && home[0] != '\0')
        return home;
    /* looked up once: the executable does not move */
    static bool looked;
    static const char *installed;
    if (!looked) {
        installed = find_installed_home();
        looked = true;
    }
    return installed != NULL ? installed : DAHLSIM_SOURCE_DIR;
}

const char *dahlsim_calibration_root(void)
{
    static char root[PATH_MAX];
    snprintf(root, sizeof(root), "%s/calibration", dahlsim_home());
    return root;
}

bool dahlsim_fs_full(const char *path)
{
    struct statvfs fs;
    return statvfs(path, &fs) == 0 && (geteuid() == 0 ? fs.f_bfree : fs.f_bavail) == 0;
}

bool dahlsim_find_on_path(const char *name, char *buf, size_t size)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/bin:/bin";
    while (*path != '\0') {
        const char *colon = strchr(path, ':');
        size_t len = colon != NULL ? (size_t)(colon - path) : strlen(path);
        if (len > 0 && (size_t)snprintf(buf, size, "%.*s/%s", (int)len, path, name) < size && access(buf, X_OK) == 0)
            return true;
        path += len + (colon != NULL);
    }
    return false;
}

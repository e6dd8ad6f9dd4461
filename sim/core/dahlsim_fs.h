/* Small file-system and clock helpers every dahlsim command shares: mkdir -p, rm -rf, cp -r, reading a
 * whole file, the line of a cJSON parse error, the monotonic clock and the dahlsim tree. */
#ifndef DAHLSIM_FS_H
#define DAHLSIM_FS_H

#include <stdbool.h>
#include <stddef.h>

/* mkdir -p path. Returns 0, or -errno (-ENOTDIR when path exists and is not a directory). */
int dahlsim_make_dirs(const char *path);
/* rm -rf path; a missing path is fine. Returns 0 or -errno. */
int dahlsim_remove_tree(const char *path);
/* The executable `name` on PATH (its first directory that has it), its path into buf. False: none. */
bool dahlsim_find_on_path(const char *name, char *buf, size_t size);

/* cp -r from to, regular files and directories only; to must not exist. Returns 0 or -errno. */
int dahlsim_copy_tree(const char *from, const char *to);
bool dahlsim_is_dir(const char *path);
/* True when the file system holding path has no block left for this process (root may use the reserved
 * ones): what a tool whose writes go unchecked (StarPU's perf models, FxT) was cut short by. */
bool dahlsim_fs_full(const char *path);

/* The whole file as a NUL-terminated heap string, or NULL with errno set (EFBIG beyond max_bytes, EIO on a
 * read error, ENOMEM; fopen's errno when it cannot be opened). The caller frees it. */
char *dahlsim_read_text(const char *path, size_t max_bytes);
/* The same for a file of bytes (which may hold NULs): its length in *len. */
char *dahlsim_read_file(const char *path, size_t max_bytes, size_t *len);

/* The JSON document in path, or NULL when it cannot be read or parsed (cJSON_Delete it). */
struct cJSON *dahlsim_read_json(const char *path);

/* The JSON document in path (at most max_bytes) into *doc (cJSON_Delete it). Returns 0, or -EINVAL with
 * where and why the parse stopped in err ("line L, column C: not valid JSON (...)"), or the negative errno of
 * the read with its text in err. err does not repeat the path. */
int dahlsim_json_load(const char *path, size_t max_bytes, struct cJSON **doc, char *err, size_t err_size);

/* Writes doc, printed with indentation and a final newline, to path atomically: into path's directory as
 * ".NAME.tmp", flushed to disk, then renamed over path, so that a reader sees the old file or the whole new
 * one, never a part. Returns 0, or a negative errno with the file and cause in err. */
int dahlsim_json_save(const struct cJSON *doc, const char *path, char *err, size_t err_size);

/* Where and why cJSON_Parse stopped in text (call right after a failed parse of text), as "line L, column
 * C: not valid JSON (unexpected ',')" or "... (the text ends too early)", into buf. Returns buf. */
const char *dahlsim_json_error_where(const char *text, char *buf, size_t size);

/* CLOCK_MONOTONIC in seconds. */
double dahlsim_mono_s(void);

/* The running executable's path (readlink of /proc/self/exe) into buf. Returns 0 or a negative errno. */
int dahlsim_self_exe(char *buf, size_t size);

/* The directory holding platforms/, calibration/ and tests/data/: $DAHLSIM_HOME; else, for an installed
 * dahlsim (PREFIX/bin/dahlsim), PREFIX/share/dahlsim; else the source tree this binary was built from
 * (static string or environment). */
const char *dahlsim_home(void);
/* dahlsim_home()/calibration: where machines (measured or described) live (static buffer). */
const char *dahlsim_calibration_root(void);

#endif /* DAHLSIM_FS_H */

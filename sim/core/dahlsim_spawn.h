/* Running dahlsim's other flavour: the native front end starts build/dahlsim-sim (its sibling executable)
 * with the environment StarPU-SimGrid reads at start-up (STARPU_HOSTNAME, STARPU_PERF_MODEL_DIR, ...),
 * since a SimGrid build loads its platform before main runs. */
#ifndef DAHLSIM_SPAWN_H
#define DAHLSIM_SPAWN_H

#include <stddef.h>

/* A NAME=VALUE pair added to (or replacing in) the child's environment. */
struct dahlsim_env_var {
    const char *name;
    const char *value;
};

/* Path of an executable next to the running one (e.g. "dahlsim-sim"), written to buf. Returns 0, or -1
 * with an error printed when it does not exist. */
int dahlsim_sibling_path(const char *name, char *buf, size_t size);

/* Runs argv[0] (a full path) with argv, the parent's environment plus nvars overrides, and stdout captured
 * into out (NUL-terminated, truncated to out_size - 1; out may be NULL to leave stdout alone). Stderr is
 * inherited. Returns the child's exit status (0..255), 128 + signal if it was killed, or -1 when it could
 * not be started. */
int dahlsim_spawn(char *const argv[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                  size_t out_size);

/* dahlsim_spawn with the child's stderr written to the file stderr_path (created or truncated) instead of
 * inherited; stderr_path NULL: inherited. */
int dahlsim_spawn_err(char *const argv[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                      size_t out_size, const char *stderr_path);

/* dahlsim_spawn_err of the NULL-terminated prefix (prefix[0]: the executable) followed by args, with the
 * vars overrides and then the extra ones. */
int dahlsim_spawn_prefixed(const char *const prefix[], char *const args[], const struct dahlsim_env_var *vars,
                           size_t nvars, const struct dahlsim_env_var *extra, size_t nextra, char *out,
                           size_t out_size, const char *stderr_path);

/* Runs build/dahlsim-sim with args (NULL-terminated, without argv[0]) and the vars overrides, as
 * dahlsim_spawn does, with SimGrid's logs quiet. (The simulators are never sanitized: see the top of
 * CMakeLists.txt.) */
int dahlsim_spawn_sim(char *const args[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                      size_t out_size);
/* dahlsim_spawn_sim with stderr to a file, as dahlsim_spawn_err. */
int dahlsim_spawn_sim_err(char *const args[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                          size_t out_size, const char *stderr_path);

#endif /* DAHLSIM_SPAWN_H */

/* Starting dahlsim's SimGrid flavour from the native front end: see dahlsim_spawn.h. */
#include "dahlsim_spawn.h"

#include "dahlsim_fs.h"
#include "dahlsim_proc.h"
#include "dahlsim_util.h"
#include "dahlsim_simfail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int dahlsim_sibling_path(const char *name, char *buf, size_t size)
{
    char self[PATH_MAX];
    int ret = dahlsim_self_exe(self, sizeof(self));
    if (ret != 0) {
        dahlsim_error("cannot find the running executable (/proc/self/exe): %s", strerror(-ret));
        return -1;
    }
    char *slash = strrchr(self, '/');
    if (slash != NULL)
        *slash = '\0';
    int len = snprintf(buf, size, "%s/%s", self, name);
    if (len < 0 || (size_t)len >= size) {
        dahlsim_error("path too long: %s/%s", self, name);
        return -1;
    }
    if (access(buf, X_OK) != 0) {
        dahlsim_error("%s: %s", buf, strerror(errno));
        fprintf(stderr, "hint: rebuild dahlsim (cmake --build build); both StarPU flavours are built together\n");
        return -1;
    }
    return 0;
}

/* Builds the child's environment: the parent's, with every variable named in vars replaced. The entries
 * from *nkept on are the child's own (heap-allocated); the rest are borrowed from environ. */
static char **child_environment(const struct dahlsim_env_var *vars, size_t nvars, size_t *nkept)
{
    size_t nparent = 0;
    while (environ[nparent] != NULL)
        nparent++;
    char **env = calloc(nparent + nvars + 1, sizeof(*env));
    if (env == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < nparent; i++) {
        bool replaced = false;
        for (size_t v = 0; v < nvars; v++) {
            size_t len = strlen(vars[v].name);
            if (strncmp(environ[i], vars[v].name, len) == 0 && environ[i][len] == '=')
                replaced = true;
        }
        if (!replaced)
            env[k++] = environ[i];
    }
    *nkept = k;
    for (size_t v = 0; v < nvars; v++) {
        size_t len = strlen(vars[v].name) + strlen(vars[v].value) + 2;
        char *entry = malloc(len);
        if (entry == NULL)
            return NULL; /* out of memory: the caller gives up, and so does the process */
        snprintf(entry, len, "%s=%s", vars[v].name, vars[v].value);
        env[k++] = entry;
    }
    env[k] = NULL;
    return env;
}

int dahlsim_spawn(char *const argv[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                  size_t out_size)
{
    return dahlsim_spawn_err(argv, vars, nvars, out, out_size, NULL);
}

int dahlsim_spawn_err(char *const argv[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                      size_t out_size, const char *stderr_path)
{
    /* The child dies with this process (dahlsim_proc_die_with_front_end): one more variable. */
    struct dahlsim_env_var *all = calloc(nvars + 1, sizeof(*all));
    char self[24];
    snprintf(self, sizeof(self), "%ld", (long)getpid());
    if (all != NULL) {
        if (nvars > 0)
            memcpy(all, vars, nvars * sizeof(*all));
        all[nvars] = (struct dahlsim_env_var){.name = DAHLSIM_PARENT_PID_VAR, .value = self};
    }
    size_t nkept, nown = nvars + 1; /* the child's own variables: vars and DAHLSIM_PARENT_PID */
    char **env = all != NULL ? child_environment(all, nown, &nkept) : NULL;
    free(all);
    if (env == NULL) {
        dahlsim_error("out of memory");
        return -1;
    }
    int pipefd[2] = {-1, -1};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (out != NULL) {
        if (pipe(pipefd) != 0) {
            dahlsim_error("pipe: %s", strerror(errno));
            return -1;
        }
        posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, pipefd[0]);
        posix_spawn_file_actions_addclose(&actions, pipefd[1]);
    }
    if (stderr_path != NULL)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    pid_t pid;
    int err = posix_spawn(&pid, argv[0], &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    for (size_t v = 0; v < nown; v++)
        free(env[nkept + v]);
    free(env);
    if (err != 0) {
        dahlsim_error("cannot start %s: %s", argv[0], strerror(err));
        if (out != NULL) {
            close(pipefd[0]);
            close(pipefd[1]);
        }
        return -1;
    }
    if (out != NULL) {
        close(pipefd[1]);
        size_t used = 0;
        ssize_t n;
        char sink[4096];
        while ((n = read(pipefd[0], used + 1 < out_size ? out + used : sink,
                         used + 1 < out_size ? out_size - 1 - used : sizeof(sink))) > 0) {
            if (used + 1 < out_size)
                used += (size_t)n;
        }
        out[used] = '\0';
        close(pipefd[0]);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            dahlsim_error("waitpid: %s", strerror(errno));
            return -1;
        }
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

int dahlsim_spawn_sim(char *const args[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                      size_t out_size)
{
    return dahlsim_spawn_sim_err(args, vars, nvars, out, out_size, NULL);
}

int dahlsim_spawn_prefixed(const char *const prefix[], char *const args[], const struct dahlsim_env_var *vars,
                           size_t nvars, const struct dahlsim_env_var *extra, size_t nextra, char *out,
                           size_t out_size, const char *stderr_path)
{
    size_t nprefix = 0, nargs = 0;
    while (prefix[nprefix] != NULL)
        nprefix++;
    while (args[nargs] != NULL)
        nargs++;
    char **argv = calloc(nprefix + nargs + 1, sizeof(*argv));
    struct dahlsim_env_var *env = calloc(nvars + nextra + 1, sizeof(*env));
    if (argv == NULL || env == NULL) {
        free(argv);
        free(env);
        dahlsim_error("out of memory");
        return -1;
    }
    memcpy(argv, prefix, nprefix * sizeof(*argv));
    memcpy(argv + nprefix, args, nargs * sizeof(*argv));
    if (nvars > 0)
        memcpy(env, vars, nvars * sizeof(*env));
    if (nextra > 0)
        memcpy(env + nvars, extra, nextra * sizeof(*env));
    int status = dahlsim_spawn_err(argv, env, nvars + nextra, out, out_size, stderr_path);
    free(argv);
    free(env);
    return status;
}

int dahlsim_spawn_sim_err(char *const args[], const struct dahlsim_env_var *vars, size_t nvars, char *out,
                          size_t out_size, const char *stderr_path)
{
    char exe[PATH_MAX];
    if (dahlsim_sibling_path("dahlsim-sim", exe, sizeof(exe)) != 0)
        return -1;
    const char *prefix[] = {exe, "--log=root.thres:warning", NULL};
    int status = dahlsim_spawn_prefixed(prefix, args, vars, nvars, NULL, 0, out, out_size, stderr_path);
    if (status > 0)
        dahlsim_simfail_report(status, stderr_path);
    return status;
}

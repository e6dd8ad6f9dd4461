/* Running dahlsim's binaries from tests: see dahl_test_util.h. Uses temporary files for stdout/stderr, so
 * large outputs cannot deadlock a pipe. */
#include "dahl_test_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void slurp(FILE *f, char *buf, size_t size)
{
    rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

const char *dahl_test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    static char text[1 << 20];
    slurp(f, text, sizeof(text));
    return text;
}

void dahl_test_run(struct dahl_test_run *run, char *const argv[], char *const env[])
{
    FILE *out = tmpfile();
    FILE *err = tmpfile();
    cr_assert_not_null(out);
    cr_assert_not_null(err);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork failed");
    if (pid == 0) {
        for (size_t i = 0; env != NULL && env[i] != NULL; i++)
            putenv(env[i]);
        dup2(fileno(out), STDOUT_FILENO);
        dup2(fileno(err), STDERR_FILENO);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    run->status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    slurp(out, run->out, sizeof(run->out));
    slurp(err, run->err, sizeof(run->err));
}

double dahl_test_json_number(const char *json, const char *key)
{
    char pattern[128];
    snprintf(pattern, sizeof(pattern), "\"%s\": ", key);
    const char *at = strstr(json, pattern);
    if (at == NULL)
        return NAN;
    return strtod(at + strlen(pattern), NULL);
}

void dahl_test_assert_input_error(const struct dahl_test_run *run, const char *what, const char *want1,
                                  const char *want2)
{
    cr_assert_eq(run->status, 2, "%s: exit %d, stderr: %s", what, run->status, run->err);
    cr_assert(strncmp(run->err, "dahlsim: error: ", 16) == 0, "%s: %s", what, run->err);
    const char *eol = strchr(run->err, '\n');
    size_t len = eol != NULL ? (size_t)(eol - run->err) : strlen(run->err);
    char line[4096];
    snprintf(line, sizeof(line), "%.*s", (int)len, run->err);
    cr_assert(strstr(line, want1) != NULL, "%s: \"%s\" not in: %s", what, want1, line);
    cr_assert(want2 == NULL || strstr(line, want2) != NULL, "%s: \"%s\" not in: %s", what, want2, line);
}

char *dahl_test_results_without_wall(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/results.json", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    char *buf = calloc(1, 1 << 20);
    cr_assert_not_null(buf);
    size_t used = 0;
    char line[4096];
    while (fgets(line, sizeof(line), f) != NULL && used < (1 << 20) - 1)
        if (strstr(line, "\"wall_s\"") == NULL && strstr(line, "\"peak_rss_kib\"") == NULL &&
            strstr(line, "\"maps_first_step\"") == NULL && strstr(line, "\"maps_peak\"") == NULL)
            used += (size_t)snprintf(buf + used, (1 << 20) - used, "%s", line);
    fclose(f);
    return buf;
}

void dahl_test_machine_copy(const char *calibration_root, const char *name, const char *home)
{
    char cmd[3 * 4096];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/calibration' && cp -r '%s/%s' '%s/calibration/'", home, calibration_root,
             name, home);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

void dahl_test_manifest_add(const char *machine_dir, const char *key, const char *json)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/manifest.json", machine_dir);
    const char *text = dahl_test_read_file(path);
    const char *brace = strchr(text, '{');
    cr_assert_not_null(brace, "%s: no JSON object", path);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fprintf(f, "%.*s{\"%s\": %s,%s", (int)(brace - text), text, key, json, brace + 1);
    cr_assert_eq(fclose(f), 0, "%s", path);
}


void dahl_test_run_args(struct dahl_test_run *run, const char *bin, const char *const args[], char *const env[])
{
    char *argv[64] = {(char *)bin};
    size_t n = 1;
    for (size_t i = 0; args[i] != NULL; i++) {
        cr_assert_lt(n, 63, "too many arguments for %s", bin);
        argv[n++] = (char *)args[i];
    }
    argv[n] = NULL;
    dahl_test_run(run, argv, env);
}

void dahl_test_remove_tree(const char *path)
{
    char cmd[4200];
    cr_assert(strncmp(path, "/tmp/", 5) == 0 && strchr(path, '\'') == NULL, "not a test's directory: %s", path);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

void dahl_test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    cr_assert(fputs(text, f) >= 0 && fclose(f) == 0, "%s: cannot write", path);
}

cJSON *dahl_test_json_in(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    cJSON *root = cJSON_Parse(dahl_test_read_file(path));
    cr_assert_not_null(root, "%s is not JSON", path);
    return root;
}

cJSON *dahl_test_results_json(const char *dir)
{
    return dahl_test_json_in(dir, "results.json");
}

double dahl_test_number(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "no number \"%s\"", key);
    return v->valuedouble;
}

/* `dahlsim train`: the native program's train (sim/program), with `--grain auto --machine NAME` resolved first.
 *
 * auto picks the grain as a scenario's "grain": "auto" does (dahlsim_grain.h: the step graph emulated per
 * candidate from the machine's perf models and measured runtime costs). This front end builds that scenario
 * from the train flags that shape the step (dataset, model, batch, scheduler, workers, perf-model kind,
 * reduction, pipeline depth; the workers train starts without --ncpu and --ngpu: one CPU per core, no GPU),
 * loads it like any scenario (so every check and hint is the same), and runs the
 * program with the chosen number in place of auto and the account of the choice in --grain-choice, which
 * results.json records as "grain_choice". Every other command line goes to the program untouched. */
#include "dahlsim_cli.h"
#include "dahlsim_scenario.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The train flags that shape a step, and the scenario key each becomes (an integer in [min, max] where
 * number, as train itself takes it). */
static const struct {
    const char *flag, *key;
    bool number;
    long min, max;
} shaping[] = {
    {"--dataset", "dataset", false, 0, 0},
    {"--model", "model", false, 0, 0},
    {"--batch", "batch", true, 1, 65536},
    {"--sched", "scheduler", false, 0, 0},
    {"--ncpu", "cpus", true, 0, 1024},
    {"--ngpu", "gpus", true, 0, 64},
    {"--perfmodel", "perfmodel", false, 0, 0},
    {"--reduction", "reduction", false, 0, 0},
    {"--pipeline-depth", "pipeline_depth", true, 1, 64},
};
#define NSHAPING (sizeof(shaping) / sizeof(shaping[0]))

/* The value of argv[*i] when it is flag ("--flag VALUE" or "--flag=VALUE"), moving *i past it; NULL otherwise
 * (and for a flag missing its value, which the program then reports). */
static const char *flag_value(int argc, char **argv, int *i, const char *flag)
{
    size_t n = strlen(flag);
    if (strncmp(argv[*i], flag, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0' || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

/* The scenario of the step train's flags describe, on machine. NULL after an error line. */
static cJSON *step_scenario(int argc, char **argv, const char *machine)
{
    cJSON *root = cJSON_CreateObject();
    if (root == NULL || cJSON_AddStringToObject(root, "machine", machine) == NULL ||
        cJSON_AddStringToObject(root, "grain", "auto") == NULL) {
        dahlsim_error("train --grain auto: out of memory");
        cJSON_Delete(root);
        return NULL;
    }
    for (int i = 1; i < argc; i++) {
        for (size_t k = 0; k < NSHAPING; k++) {
            const char *v = flag_value(argc, argv, &i, shaping[k].flag);
            if (v == NULL)
                continue;
            long n = 0;
            if (shaping[k].number && !dahlsim_parse_int(shaping[k].flag, v, shaping[k].min, shaping[k].max, &n)) {
                cJSON_Delete(root);
                return NULL;
            }
            cJSON_DeleteItemFromObjectCaseSensitive(root, shaping[k].key);
            if ((shaping[k].number ? cJSON_AddNumberToObject(root, shaping[k].key, (double)n)
                                   : cJSON_AddStringToObject(root, shaping[k].key, v)) == NULL) {
                dahlsim_error("train --grain auto: out of memory");
                cJSON_Delete(root);
                return NULL;
            }
            break;
        }
    }
    /* Workers as train starts them by default: no GPU, and a CPU worker per core the GPUs leave. */
    long ngpu = 0;
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus");
    if (gpus != NULL)
        ngpu = (long)gpus->valuedouble;
    else if (cJSON_AddNumberToObject(root, "gpus", 0) == NULL)
        goto oom;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cJSON_GetObjectItemCaseSensitive(root, "cpus") == NULL &&
        cJSON_AddNumberToObject(root, "cpus", (double)(cores - ngpu > 1 ? cores - ngpu : 1)) == NULL)
        goto oom;
    return root;
oom:
    dahlsim_error("train --grain auto: out of memory");
    cJSON_Delete(root);
    return NULL;
}

/* The grain auto picks for train's flags on machine, and its account in choice. False after an error line. */
static bool resolve_auto(int argc, char **argv, const char *machine, long *grain, char *choice, size_t size)
{
    cJSON *root = step_scenario(argc, argv, machine);
    if (root == NULL)
        return false;
    struct dahlsim_scenario *s = dahlsim_scenario_from_json("train --grain auto", root, NULL, 0);
    if (s == NULL)
        return false;
    const struct dahlsim_experiment *x = dahlsim_scenario_point(s, 0);
    *grain = x->grain < 0 ? x->batch : x->grain;
    snprintf(choice, size, "%s", x->grain_choice);
    dahlsim_scenario_destroy(s);
    return true;
}

int dahlsim_cmd_train_front(int argc, char **argv)
{
    const char *machine = NULL;
    int grain_at = -1; /* the argv index of auto's value */
    for (int i = 1; i < argc; i++) {
        int at = i;
        const char *v;
        if ((v = flag_value(argc, argv, &i, "--machine")) != NULL)
            machine = v;
        else if ((v = flag_value(argc, argv, &i, "--grain")) != NULL && strcmp(v, "auto") == 0)
            grain_at = at;
    }
    if (grain_at < 0 && machine == NULL)
        return dahlsim_cmd_train(argc, argv);
    if (grain_at < 0) {
        dahlsim_error("train --machine: only used with --grain auto (the calibration whose perf models choose "
                      "the grain), got it without");
        return 2;
    }
    if (machine == NULL) {
        dahlsim_error("train --grain auto: expected --machine NAME, the calibration (calibration/NAME) whose perf "
                      "models predict each grain");
        fprintf(stderr, "hint: dahlsim calibrate --machine NAME --cover DATASET,grain=N measures one\n");
        return 2;
    }
    long grain = 0;
    char choice[sizeof(((struct dahlsim_experiment *)0)->grain_choice)];
    if (!resolve_auto(argc, argv, machine, &grain, choice, sizeof(choice)))
        return 2;
    /* The same command line, --machine dropped, auto replaced by the grain, and the choice appended. */
    char **args = calloc((size_t)argc + 3, sizeof(*args));
    char number[32];
    if (args == NULL) {
        dahlsim_error("train: out of memory");
        return 1;
    }
    snprintf(number, sizeof(number), "%ld", grain);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        int at = i;
        if (i > 0 && flag_value(argc, argv, &i, "--machine") != NULL)
            continue;
        if (at == grain_at) {
            args[n++] = "--grain";
            args[n++] = number;
            i = at + (strcmp(argv[at], "--grain") == 0);
            continue;
        }
        args[n++] = argv[i];
    }
    args[n++] = "--grain-choice";
    args[n++] = choice;
    bool quiet = false;
    for (int i = 1; i < argc; i++)
        quiet = quiet || strcmp(argv[i], "--quiet") == 0;
    if (!quiet)
        fprintf(stderr, "train: --grain auto on %s: %s\n", machine, choice);
    int ret = dahlsim_cmd_train(n, args);
    free(args);
    return ret;
}

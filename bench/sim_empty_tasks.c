/* The baseline for dahlsim's simulation speed: a bare StarPU-SimGrid program that submits N empty tasks on
 * the same simulated machine (STARPU_PERF_MODEL_DIR / STARPU_HOSTNAME, set by bench/sim_speed) with the same
 * scheduler and worker count, so that dahlsim's own cost per simulated task can be told from StarPU's and
 * SimGrid's. Tasks are shaped like dahl's: each reads a shared handle and updates one of `--handles`
 * per-task handles in turn (with --buffers MEAN > 2, tasks read more shared handles, MEAN buffers a task on
 * average: StarPU-SimGrid charges per buffer fetched) (a chain per handle, as a sample's activations are reused every step). By default
 * the codelet runs for real and takes no simulated time (STARPU_CODELET_SIMGRID_EXECUTE): no perf model
 * needed. With --task-us US every task instead takes US simulated microseconds (a STARPU_COMMON cost
 * function), so StarPU-SimGrid executes it on its worker's host as it does dahl's timed tasks.
 * Prints one JSON line: tasks, wall seconds from starpu_init to starpu_shutdown, tasks per wall second, and
 * the simulated time from the first submission to the end of the last task. */
#include <starpu.h>

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void empty_kernel(void *buffers[], void *cl_arg)
{
    (void)buffers;
    (void)cl_arg;
}

#define MAX_BUFFERS 8
static double task_us; /* --task-us: simulated length of every task, 0: none */

static double fixed_cost_us(struct starpu_task *task, unsigned nimpl)
{
    (void)task;
    (void)nimpl;
    return task_us;
}

static struct starpu_perfmodel fixed_model = {
    .type = STARPU_COMMON,
    .cost_function = fixed_cost_us,
    .symbol = "bench_fixed",
};

static struct starpu_codelet empty_cl = {
    .cpu_funcs = {empty_kernel},
    .flags = STARPU_CODELET_SIMGRID_EXECUTE,
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .name = "bench_empty",
};

static double wall_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool parse_double(const char *option, const char *text, double min, double max, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(v >= min && v <= max)) {
        fprintf(stderr, "sim_empty_tasks: error: %s: expected a number in [%g, %g], got \"%s\"\n", option, min, max,
                text);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_long(const char *option, const char *text, long min, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min) {
        fprintf(stderr, "sim_empty_tasks: error: %s: expected an integer >= %ld, got \"%s\"\n", option, min, text);
        return false;
    }
    *out = v;
    return true;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: sim_empty_tasks --tasks N [--handles H] [--ncpu C] [--sched NAME] [--task-us US] [--buffers MEAN]\n"
                "  runs under StarPU-SimGrid with STARPU_PERF_MODEL_DIR and STARPU_HOSTNAME naming a machine\n");
}

int main(int argc, char **argv)
{
    long ntasks = 0, nhandles = 64, ncpu = -1;
    const char *sched = "lws";
    double mean_buffers = 2;
    static const struct option options[] = {
        {"tasks", required_argument, NULL, 't'}, {"handles", required_argument, NULL, 'H'},
        {"ncpu", required_argument, NULL, 'c'},  {"sched", required_argument, NULL, 's'},
        {"task-us", required_argument, NULL, 'u'}, {"buffers", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 't':
            if (!parse_long("--tasks", optarg, 1, &ntasks))
                return 2;
            break;
        case 'H':
            if (!parse_long("--handles", optarg, 1, &nhandles))
                return 2;
            break;
        case 'c':
            if (!parse_long("--ncpu", optarg, 1, &ncpu))
                return 2;
            break;
        case 's':
            sched = optarg;
            break;
        case 'b':
            if (!parse_double("--buffers", optarg, 2, MAX_BUFFERS, &mean_buffers))
                return 2;
            break;
        case 'u':
            if (!parse_double("--task-us", optarg, 1e-3, 1e9, &task_us))
                return 2;
            empty_cl.flags = 0;
            empty_cl.model = &fixed_model;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (ntasks == 0 || optind != argc) {
        usage(stderr);
        return 2;
    }

    double t0 = wall_now_s();
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    unsetenv("STARPU_SCHED");             /* it would override the policy asked for */
    setenv("STARPU_FXT_TRACE", "0", 0);   /* the flavours are built with FxT, which traces every task by default */
    conf.sched_policy_name = sched;
    conf.ncpus = (int)ncpu;
    conf.ncuda = 0;
    int ret = starpu_init(&conf);
    if (ret == -ENODEV)
        return 77;
    if (ret != 0) {
        fprintf(stderr, "sim_empty_tasks: error: starpu_init failed (%d)\n", ret);
        return 1;
    }

    float shared_value[MAX_BUFFERS - 1] = {0};
    float *values = calloc((size_t)nhandles, sizeof *values);
    starpu_data_handle_t shared[MAX_BUFFERS - 1], *handles = calloc((size_t)nhandles, sizeof *handles);
    if (values == NULL || handles == NULL) {
        fprintf(stderr, "sim_empty_tasks: error: out of memory\n");
        return 1;
    }
    for (int k = 0; k < MAX_BUFFERS - 1; k++)
        starpu_variable_data_register(&shared[k], STARPU_MAIN_RAM, (uintptr_t)&shared_value[k], sizeof(float));
    for (long i = 0; i < nhandles; i++)
        starpu_variable_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)&values[i], sizeof values[i]);

    double t_submit = wall_now_s();
    double clock_submit_us = starpu_timing_now();
    for (long i = 0; i < ntasks; i++) {
        /* MEAN buffers on average: floor or ceil, spread evenly over the tasks */
        int nbuf = (int)((double)(i + 1) * mean_buffers) - (int)((double)i * mean_buffers);
        struct starpu_data_descr descr[MAX_BUFFERS];
        for (int k = 0; k < nbuf - 1; k++)
            descr[k] = (struct starpu_data_descr){.handle = shared[k], .mode = STARPU_R};
        descr[nbuf - 1] = (struct starpu_data_descr){.handle = handles[i % nhandles], .mode = STARPU_RW};
        ret = starpu_task_insert(&empty_cl, STARPU_DATA_MODE_ARRAY, descr, nbuf, 0);
        if (ret != 0) {
            fprintf(stderr, "sim_empty_tasks: error: starpu_task_insert failed (%d)\n", ret);
            return 1;
        }
    }
    starpu_task_wait_for_all();
    double simulated_s = (starpu_timing_now() - clock_submit_us) * 1e-6;
    double t_done = wall_now_s();

    for (long i = 0; i < nhandles; i++)
        starpu_data_unregister(handles[i]);
    for (int k = 0; k < MAX_BUFFERS - 1; k++)
        starpu_data_unregister(shared[k]);
    starpu_shutdown();
    double t1 = wall_now_s();
    free(handles);
    free(values);

    printf("{\"tasks\": %ld, \"handles\": %ld, \"sched\": \"%s\", \"ncpu\": %ld, \"task_us\": %g, \"buffers\": %g, \"wall_s\": %.6f, "
           "\"submit_to_done_wall_s\": %.6f, \"tasks_per_wall_s\": %.1f, \"simulated_s\": %.6f}\n",
           ntasks, nhandles, sched, ncpu, task_us, mean_buffers, t1 - t0, t_done - t_submit, (double)ntasks / (t1 - t0), simulated_s);
    return 0;
}

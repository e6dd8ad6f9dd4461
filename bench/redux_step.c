/* What one STARPU_REDUX phase costs the runtime, natively (redux_step-native) or under StarPU-SimGrid
 * (redux_step-sim, with STARPU_PERF_MODEL_DIR / STARPU_HOSTNAME naming a calibrated machine). A step is
 * `--per` tasks per worker that do nothing, then one task that reads the result. With --redux 1 the tasks
 * access one 1-float handle in STARPU_REDUX mode, so every step ends with StarPU's reduction: temporary
 * handles for the workers' copies, their inline initialisation, reduction tasks, unregistrations. With
 * --redux 0 they update 64 handles in turn (no reduction) and the last task reads the first of them. Run both:
 * the difference per step is what a reduction of tiny data costs, the wait for the whole step it imposes
 * included. The tasks do nothing and, simulated, take
 * no time (STARPU_CODELET_SIMGRID_EXECUTE); the reduction tasks take 0.5 us (a fixed cost function).
 * Prints one JSON line: workers, redux, steps, microseconds per step (first submission to last task end). */
#include <starpu.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NHANDLES 64

static void nothing(void *buffers[], void *cl_arg)
{
    (void)buffers;
    (void)cl_arg;
}

static void zero(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    *(float *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 0.0f;
}

static void add(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    *(float *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(float *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}

static double half_us(struct starpu_task *task, unsigned nimpl)
{
    (void)task;
    (void)nimpl;
    return 0.5;
}

static struct starpu_perfmodel add_model = {.type = STARPU_COMMON, .cost_function = half_us, .symbol = "bench_add"};
static struct starpu_codelet zero_cl = {.cpu_funcs = {zero}, .nbuffers = 1, .modes = {STARPU_W}, .name = "bench_zero"};
static struct starpu_codelet add_cl = {
    .cpu_funcs = {add}, .nbuffers = 2, .modes = {STARPU_RW, STARPU_R}, .model = &add_model, .name = "bench_add"};
static struct starpu_codelet redux_cl = {.cpu_funcs = {nothing},
                                         .flags = STARPU_CODELET_SIMGRID_EXECUTE,
                                         .nbuffers = 2,
                                         .modes = {STARPU_R, STARPU_REDUX},
                                         .name = "bench_redux"};
static struct starpu_codelet update_cl = {.cpu_funcs = {nothing},
                                          .flags = STARPU_CODELET_SIMGRID_EXECUTE,
                                          .nbuffers = 2,
                                          .modes = {STARPU_R, STARPU_RW},
                                          .name = "bench_update"};

static int parse_int(const char *option, const char *text, int min, int max)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "redux_step: error: %s: expected an integer in [%d, %d], got \"%s\"\n", option, min, max, text);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv)
{
    int steps = 20000, per = 4, redux = 1, ncpu = -1;
    const char *sched = "lws";
    static const struct option options[] = {
        {"steps", required_argument, NULL, 's'}, {"per", required_argument, NULL, 'p'},
        {"redux", required_argument, NULL, 'r'}, {"ncpu", required_argument, NULL, 'c'},
        {"sched", required_argument, NULL, 'S'}, {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 's':
            steps = parse_int("--steps", optarg, 1, 100000000);
            break;
        case 'p':
            per = parse_int("--per", optarg, 1, 1000);
            break;
        case 'r':
            redux = parse_int("--redux", optarg, 0, 1);
            break;
        case 'c':
            ncpu = parse_int("--ncpu", optarg, 1, STARPU_MAXCPUS);
            break;
        case 'S':
            sched = optarg;
            break;
        default:
            fprintf(stderr, "usage: redux_step [--steps N] [--per N] [--redux 0|1] [--ncpu N] [--sched NAME]\n");
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "usage: redux_step [--steps N] [--per N] [--redux 0|1] [--ncpu N] [--sched NAME]\n");
        return 2;
    }
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    unsetenv("STARPU_SCHED");
    setenv("STARPU_FXT_TRACE", "0", 0);
    conf.sched_policy_name = sched;
    conf.ncpus = ncpu;
    conf.ncuda = 0;
    int ret = starpu_init(&conf);
    if (ret != 0) {
        fprintf(stderr, "redux_step: error: starpu_init failed (%d)\n", ret);
        return ret == -ENODEV ? 77 : 1;
    }
    float input = 0.0f, sum = 0.0f, result = 0.0f, values[NHANDLES] = {0};
    starpu_data_handle_t in, acc, out, h[NHANDLES];
    starpu_variable_data_register(&in, STARPU_MAIN_RAM, (uintptr_t)&input, sizeof(float));
    starpu_variable_data_register(&out, STARPU_MAIN_RAM, (uintptr_t)&result, sizeof(float));
    starpu_variable_data_register(&acc, STARPU_MAIN_RAM, (uintptr_t)&sum, sizeof(float));
    for (int i = 0; i < NHANDLES; i++)
        starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&values[i], sizeof(float));
    starpu_data_set_reduction_methods(acc, &add_cl, &zero_cl);
    int nworkers = (int)starpu_worker_get_count();
    starpu_task_wait_for_all();
    double t0 = starpu_timing_now();
    for (int s = 0; s < steps && ret == 0; s++) {
        for (int t = 0; t < per * nworkers && ret == 0; t++)
            ret = redux ? starpu_task_insert(&redux_cl, STARPU_R, in, STARPU_REDUX, acc, 0)
                        : starpu_task_insert(&update_cl, STARPU_R, in, STARPU_RW, h[t % NHANDLES], 0);
        if (ret == 0)
            ret = starpu_task_insert(&update_cl, STARPU_R, redux ? acc : h[0], STARPU_RW, out, 0);
    }
    starpu_task_wait_for_all();
    double us = starpu_timing_now() - t0;
    starpu_data_unregister(in);
    starpu_data_unregister(acc);
    starpu_data_unregister(out);
    for (int i = 0; i < NHANDLES; i++)
        starpu_data_unregister(h[i]);
    starpu_shutdown();
    if (ret != 0) {
        fprintf(stderr, "redux_step: error: starpu_task_insert failed (%d)\n", ret);
        return 1;
    }
    printf("{\"workers\": %d, \"sched\": \"%s\", \"redux\": %d, \"per\": %d, \"steps\": %d, \"us_per_step\": %.3f}\n",
           nworkers, sched, redux, per, steps, us / steps);
    return 0;
}

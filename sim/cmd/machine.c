/* `dahlsim machine synth SPEC.json --machine NAME`: describes a machine nobody measured from its spec, as a
 * calibration directory of roofline perf models and platform files (dahlsim_machine.h). Native binary only. */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_machine.h"
#include "dahlsim_manifest.h"


#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_line[] =
    "usage: dahlsim machine synth SPEC.json --machine NAME [--out DIR] [--cover DATASET[,model=M][,grains=N]]...\n"
    "                             [--fit DIR] [--pstate K] [--quiet]\n";

static void machine_synth_print_help(void)
{
    fputs(usage_line, stdout);
    printf("\nDescribes a machine nobody measured from its spec (platforms/specs/*.json, format in\n"
           "platforms/specs/README.md): StarPU perf models from a roofline model of every task the covered\n"
           "training setups run, and the SimGrid platform and bus files of its node, under DIR/NAME/ as a\n"
           "calibration (manifest.json says \"source\": \"roofline\"). Simulate on it with\n"
           "STARPU_PERF_MODEL_DIR=DIR/NAME/sampling STARPU_HOSTNAME=NAME.\n\n"
           "options:\n"
           "  --machine NAME   the machine's name (letters, digits, '.', '_', '-'): DIR/NAME/ and STARPU_HOSTNAME\n"
           "  --out DIR        where NAME/ goes (default: the calibration root scenarios read, %s)\n"
           "  --cover SETUP    a training setup to model, repeatable: DATASET (fashion-mnist[:SIZE] or\n"
           "                   synthetic:HxWxC) with optional ,model=lenet|vgg-small|resnet:D|deep:N|FILE.json|\n"
           "                   FILE.onnx and ,grains=N (tasks over 1 to N samples, for training with a grain:\n"
           "                   default 1).\n"
           "                   Default: fashion-mnist, synthetic:28x28x3, synthetic:128x128x3 and\n"
           "                   synthetic:512x512x3, LeNet\n"
           "  --fit DIR        fit the CPU task overhead and efficiencies to the measured calibration DIR\n"
           "                   (calibration/OTHER) at the footprints both have, then write with them\n"
           "  --pstate K       the spec's CPU frequency state K (cpu.pstates, from 1) instead of its nominal\n"
           "                   clock: compute peak and task overhead scaled by the clock (memory bandwidth kept),\n"
           "                   the state's watts; manifest.json's \"pstate\" says so\n"
           "  --quiet          no summary on stderr\n"
           "\nAn existing DIR/NAME/ is replaced only when it is itself a roofline machine; a measured calibration\n"
           "is never overwritten.\n",
           dahlsim_calibration_root());
}

static void machine_print_help(FILE *to)
{
    fprintf(to, "usage: dahlsim machine synth SPEC.json --machine NAME [options]\n"
                "       dahlsim machine power NAME --cpu IDLE:FULL [--gpu IDLE:FULL] --source TEXT [--dir DIR]\n"
                "       dahlsim machine VERB --help\n\n"
                "Simulated machines.\n\nverbs:\n"
                "  synth   describe a machine from its spec (roofline perf models, platform, bus)\n"
                "  power   give a calibration measured power figures (watts of one core and one GPU)\n");
}

static const char power_usage[] =
    "usage: dahlsim machine power NAME --cpu IDLE:FULL [--gpu IDLE:FULL] --source TEXT [--dir DIR]\n";

/* IDLE:FULL watts, 0 <= IDLE <= FULL, FULL > 0. */
static bool parse_watts(const char *option, const char *text, double *idle, double *full)
{
    char tail;
    if (sscanf(text, "%lf:%lf%c", idle, full, &tail) == 2 && *idle >= 0 && *full > 0 && *idle <= *full &&
        *full < 1e5)
        return true;
    dahlsim_error("%s: expected IDLE:FULL watts of one device, 0 <= IDLE <= FULL, e.g. 25:250, got \"%s\"", option,
                  text);
    return false;
}

/* `dahlsim machine power NAME ...` (argv[0] = "power"). */
static int machine_power_main(int argc, char **argv)
{
    enum { P_CPU = 256, P_GPU, P_SOURCE, P_DIR, P_HELP };
    static const struct option popts[] = {
        {"cpu", required_argument, NULL, P_CPU},       {"gpu", required_argument, NULL, P_GPU},
        {"source", required_argument, NULL, P_SOURCE}, {"dir", required_argument, NULL, P_DIR},
        {"help", no_argument, NULL, P_HELP},           {NULL, 0, NULL, 0},
    };
    struct dahlsim_power_opts o = {.dir = dahlsim_calibration_root()};
    bool cpu = false;
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", popts, NULL)) != -1) {
        switch (opt) {
        case P_CPU:
            if (!parse_watts("--cpu", optarg, &o.cpu_idle_w, &o.cpu_full_w))
                return -EINVAL;
            cpu = true;
            break;
        case P_GPU:
            if (!parse_watts("--gpu", optarg, &o.gpu_idle_w, &o.gpu_full_w))
                return -EINVAL;
            o.gpu = true;
            break;
        case P_SOURCE:
            o.source = optarg;
            break;
        case P_DIR:
            o.dir = optarg;
            if (!dahlsim_parse_dir("--dir", optarg))
                return -EINVAL;
            break;
        case P_HELP:
            fputs(power_usage, stdout);
            printf("\nGives calibration DIR/NAME (default DIR: %s) measured power figures: the idle and full-load\n"
                   "watts of one CPU core (--cpu) and of one GPU (--gpu, required when it has GPUs), and where they\n"
                   "come from (--source, e.g. \"nvidia-smi, 2026-11-27\": simulated energy reports it). Earlier\n"
                   "figures are replaced; manifest.json's \"power\" records them.\n",
                   dahlsim_calibration_root());
            return 1;
        default:
            dahlsim_option_misuse("machine power", opt, argv, power_usage);
            return -EINVAL;
        }
    }
    if (optind != argc - 1 || !cpu || o.source == NULL || o.source[0] == '\0' || strchr(o.source, '"') != NULL ||
        strchr(o.source, '<') != NULL || strchr(o.source, '&') != NULL) {
        dahlsim_usage_error(power_usage, optind != argc - 1 ? "machine power: expected one machine NAME"
                                         : !cpu          ? "machine power: --cpu IDLE:FULL is required"
                                                         : "machine power: --source TEXT is required (no quotes, "
                                                           "'<' or '&')");
        return -EINVAL;
    }
    o.machine = argv[optind];
    if (!dahlsim_parse_machine_name("NAME", o.machine))
        return -EINVAL;
    return dahlsim_machine_power(&o);
}

enum { O_MACHINE = 256, O_OUT, O_COVER, O_FIT, O_QUIET, O_HELP, O_PSTATE };
static const struct option options[] = {
    {"machine", required_argument, NULL, O_MACHINE}, {"out", required_argument, NULL, O_OUT},
    {"cover", required_argument, NULL, O_COVER},     {"fit", required_argument, NULL, O_FIT},
    {"quiet", no_argument, NULL, O_QUIET},           {"help", no_argument, NULL, O_HELP},
    {"pstate", required_argument, NULL, O_PSTATE},
    {NULL, 0, NULL, 0},
};

static bool machine_synth_set_option(int opt, const char *arg, void *ctx)
{
    struct dahlsim_synth_opts *o = ctx;
    switch (opt) {
    case O_MACHINE:
        o->machine = arg;
        return dahlsim_parse_machine_name("--machine", arg);
    case O_OUT:
        o->out = arg;
        return dahlsim_parse_dir("--out", arg);
    case O_COVER:
        if (o->ncovers == DAHLSIM_MACHINE_MAX_COVERS) {
            dahlsim_error("--cover: at most %d setups", DAHLSIM_MACHINE_MAX_COVERS);
            return false;
        }
        return dahlsim_machine_cover_parse(arg, &o->covers[o->ncovers++]);
    case O_FIT:
        o->fit = arg;
        return true;
    case O_QUIET:
        o->quiet = true;
        return true;
    case O_PSTATE:
        return dahlsim_parse_int("--pstate", arg, 1, DAHLSIM_SPEC_MAX_PSTATES, &o->pstate);
    }
    return false;
}

static const struct dahlsim_options machine_synth_options = {"machine synth", usage_line, options, O_HELP,
                                                              machine_synth_print_help, machine_synth_set_option};

/* Parses argv (argv[0] = "synth") into o (zeroed; *help: --help was printed). Returns 0, or a negative errno
 * after printing the error. */
static int machine_synth_parse_options(int argc, char **argv, struct dahlsim_synth_opts *o, bool *help)
{
    o->out = dahlsim_calibration_root();
    int ret = dahlsim_options_parse(&machine_synth_options, argc, argv, o, help);
    if (ret != 0 || *help)
        return ret;
    if (optind != argc - 1) {
        dahlsim_usage_error(usage_line,
                            optind == argc ? "machine synth: expected a spec file (SPEC.json)"
                                           : "machine synth: expected one spec file, got \"%s\" too",
                            optind < argc - 1 ? argv[optind + 1] : "");
        return -EINVAL;
    }
    o->spec_path = argv[optind];
    if (o->machine == NULL) {
        dahlsim_usage_error(usage_line, "machine synth: --machine NAME is required");
        return -EINVAL;
    }
    if (!dahlsim_machine_covers_default(o))
        return -EIO;
    return 0;
}

int dahlsim_cmd_machine(int argc, char **argv)
{
    if (argc < 2) {
        dahlsim_error("machine: expected a verb (synth)");
        machine_print_help(stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        machine_print_help(stdout);
        return DAHLSIM_EXIT_OK;
    }
    if (strcmp(argv[1], "power") == 0) {
        int ret = machine_power_main(argc - 1, argv + 1);
        return ret == 1 ? DAHLSIM_EXIT_OK : dahlsim_exit_of(ret);
    }
    if (strcmp(argv[1], "synth") != 0) {
        dahlsim_error("machine: unknown verb \"%s\" (expected synth or power)", argv[1]);
        machine_print_help(stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_synth_opts *o = calloc(1, sizeof(*o));
    if (o == NULL) {
        dahlsim_error("out of memory");
        return DAHLSIM_EXIT_FAILURE;
    }
    dahlsim_command_line(argc, argv, o->command, sizeof(o->command)); /* before getopt_long reorders argv */
    bool help;
    int ret = machine_synth_parse_options(argc - 1, argv + 1, o, &help);
    int code = dahlsim_exit_of(ret != 0 || help ? ret : dahlsim_machine_synth(o));
    free(o);
    return code;
}

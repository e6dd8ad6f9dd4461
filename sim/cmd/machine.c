/* `dahlsim machine synth SPEC.json --machine NAME`: describes a machine nobody measured from its spec, as a
 * calibration directory of roofline perf models and platform files (dahlsim_machine.h). Native binary only. */
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_machine.h"
#include "dahlsim_manifest.h"


#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_line[] =
    "usage: dahlsim machine synth SPEC.json --machine NAME [--out DIR] [--cover DATASET[,model=M]]...\n"
    "                             [--fit DIR] [--quiet]\n";

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
           "  --cover SETUP    a training setup to model, repeatable: DATASET (fashion-mnist or synthetic:HxWxC)\n"
           "                   with optional ,model=lenet|deep|deep:N. Default: fashion-mnist, synthetic:28x28x3,\n"
           "                   synthetic:128x128x3 and synthetic:512x512x3, LeNet\n"
           "  --fit DIR        fit the CPU task overhead and efficiencies to the measured calibration DIR\n"
           "                   (calibration/OTHER) at the footprints both have, then write with them\n"
           "  --quiet          no summary on stderr\n"
           "\nAn existing DIR/NAME/ is replaced only when it is itself a roofline machine; a measured calibration\n"
           "is never overwritten.\n",
           dahlsim_calibration_root());
}

static void machine_print_help(FILE *to)
{
    fprintf(to, "usage: dahlsim machine synth SPEC.json --machine NAME [options]\n"
                "       dahlsim machine synth --help\n\n"
                "Simulated machines.\n\nverbs:\n"
                "  synth   describe a machine from its spec (roofline perf models, platform, bus)\n");
}

/* Parses argv (argv[0] = "synth") into o (zeroed); returns -1 to go on, or an exit code. */
static int machine_synth_parse_options(int argc, char **argv, struct dahlsim_synth_opts *o)
{
    enum { O_MACHINE = 256, O_OUT, O_COVER, O_FIT, O_QUIET, O_HELP };
    static const struct option options[] = {
        {"machine", required_argument, NULL, O_MACHINE}, {"out", required_argument, NULL, O_OUT},
        {"cover", required_argument, NULL, O_COVER},     {"fit", required_argument, NULL, O_FIT},
        {"quiet", no_argument, NULL, O_QUIET},           {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    o->out = dahlsim_calibration_root();
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case O_MACHINE:
            o->machine = optarg;
            if (!dahlsim_parse_machine_name("--machine", optarg))
                return DAHLSIM_EXIT_USAGE;
            break;
        case O_OUT:
            o->out = optarg;
            if (!dahlsim_parse_dir("--out", optarg))
                return DAHLSIM_EXIT_USAGE;
            break;
        case O_COVER:
            if (o->ncovers == DAHLSIM_MACHINE_MAX_COVERS) {
                dahlsim_error("--cover: at most %d setups", DAHLSIM_MACHINE_MAX_COVERS);
                return DAHLSIM_EXIT_USAGE;
            }
            if (!dahlsim_machine_cover_parse(optarg, &o->covers[o->ncovers++]))
                return DAHLSIM_EXIT_USAGE;
            break;
        case O_FIT:
            o->fit = optarg;
            break;
        case O_QUIET:
            o->quiet = true;
            break;
        case O_HELP:
            machine_synth_print_help();
            return DAHLSIM_EXIT_OK;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("machine synth", opt, argv, usage_line);
        }
    }
    if (optind != argc - 1)
        return dahlsim_usage_error(usage_line,
                                   optind == argc ? "machine synth: expected a spec file (SPEC.json)"
                                                  : "machine synth: expected one spec file, got \"%s\" too",
                                   optind < argc - 1 ? argv[optind + 1] : "");
    o->spec_path = argv[optind];
    if (o->machine == NULL)
        return dahlsim_usage_error(usage_line, "machine synth: --machine NAME is required");
    if (!dahlsim_machine_covers_default(o))
        return DAHLSIM_EXIT_FAILURE;
    return -1;
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
    if (strcmp(argv[1], "synth") != 0) {
        dahlsim_error("machine: unknown verb \"%s\" (expected synth)", argv[1]);
        machine_print_help(stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_synth_opts *o = calloc(1, sizeof(*o));
    if (o == NULL) {
        dahlsim_error("out of memory");
        return DAHLSIM_EXIT_FAILURE;
    }
    dahlsim_command_line(argc, argv, o->command, sizeof(o->command)); /* before getopt_long reorders argv */
    int code = machine_synth_parse_options(argc - 1, argv + 1, o);
    if (code < 0)
        code = dahlsim_machine_synth(o);
    free(o);
    return code;
}

/* The command line of the program-only binaries: see dahlsim_program.h. */
#include "dahlsim_program.h"
#include "dahlsim_proc.h"
#include "dahlsim_util.h"

#include "dahl_engine.h"

#include <stdio.h>
#include <string.h>

struct program_command {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct program_command commands[] = {
    {"train", dahlsim_cmd_train},
    {"sim-train", dahlsim_cmd_sim_train},
    {"engine-probe", dahlsim_cmd_engine_probe},
};

/* The native front end's commands, which these binaries do not carry, and why a user would have reached for
 * them here. */
static const struct {
    const char *name, *why;
} front_end_only[] = {
    {"calibrate", "measuring needs the native build"},
    {"machine", "the SimGrid binary cannot write machines"},
    {"run", "simulations are started by the native front end"},
    {"sweep", "simulations are started by the native front end"},
    {"validate", "validation runs natively and simulated from the native front end"},
    {"check", "scenarios are checked by the native front end"},
    {"report", "reports are written by the native front end"},
    {"dag", "the scheduler lab is a command of the native front end"},
    {"platform", "platforms are written by the native front end"},
    {"doctor", "doctor runs from the native front end"},
};

void dahlsim_program_print_version(void)
{
    printf("dahlsim %s (%s StarPU %s)\n", DAHLSIM_VERSION, dahl_engine_flavour(), dahl_engine_starpu_version());
}

int dahlsim_program_main(int argc, char **argv)
{
    dahlsim_proc_die_with_front_end(); /* started by build/dahlsim: dies with it */
    const char *name = argc > 1 ? argv[1] : "";
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    if (strcmp(name, "--version") == 0) {
        dahlsim_program_print_version();
        return DAHLSIM_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(front_end_only) / sizeof(front_end_only[0]); i++) {
        if (strcmp(name, front_end_only[i].name) == 0) {
            dahlsim_error("%s: %s (build/dahlsim); this binary carries only the training program", name,
                          front_end_only[i].why);
            return DAHLSIM_EXIT_USAGE;
        }
    }
    dahlsim_error("%s: this binary carries only the training program (train, sim-train, engine-probe); the "
                  "commands are build/dahlsim's",
                  argc > 1 ? name : "no command");
    return DAHLSIM_EXIT_USAGE;
}

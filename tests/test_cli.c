/* The command line as a user meets it: --help, a wrong command, the commands not built yet, bad option
 * values. Each check runs build/dahlsim and asserts its exit code and what it printed where. */
#include <criterion/criterion.h>

#include "dahl_test_util.h"

#include <string.h>

static struct dahl_test_run run;

static void dahlsim(char *a1, char *a2, char *a3)
{
    char *argv[] = {DAHLSIM_BIN, a1, a2, a3, NULL};
    dahl_test_run(&run, argv, NULL);
}

Test(cli, help_lists_every_command_on_stdout)
{
    dahlsim("--help", NULL, NULL);
    cr_assert_eq(run.status, 0);
    const char *commands[] = {"train", "calibrate", "run", "sweep", "validate", "check", "doctor"};
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        cr_assert(strstr(run.out, commands[i]) != NULL, "--help does not list %s", commands[i]);
    cr_assert_eq(run.err[0], '\0', "--help wrote to stderr: %s", run.err);
    cr_assert(strstr(run.out, "engine-probe") == NULL, "internal command listed");
}

Test(cli, no_command_is_a_usage_error)
{
    dahlsim(NULL, NULL, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "usage: dahlsim") != NULL);
}

Test(cli, unknown_command_exits_2_with_usage_on_stderr)
{
    dahlsim("simulate-everything", NULL, NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "dahlsim: error: unknown command \"simulate-everything\"") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "usage: dahlsim") != NULL);
    cr_assert_eq(run.out[0], '\0');
}

Test(cli, validate_without_machine_is_a_usage_error)
{
    dahlsim("validate", NULL, NULL);
    cr_assert_eq(run.status, 2, "validate exited %d", run.status);
    cr_assert(strstr(run.err, "validate: --machine NAME is required") != NULL, "%s", run.err);
    cr_assert(strstr(run.err, "hint: dahlsim calibrate --machine NAME first") != NULL, "%s", run.err);
    dahlsim("validate", "--machine", "no-such-machine");
    cr_assert_eq(run.status, 2, "validate --machine no-such-machine exited %d", run.status);
    cr_assert(strstr(run.err, "validate: --machine no-such-machine: no calibration at") != NULL, "%s", run.err);
}

Test(cli, subcommand_help_exits_0)
{
    dahlsim("run", "--help", NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "usage: dahlsim run") != NULL, "%s", run.out);
    dahlsim("doctor", "--help", NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "usage: dahlsim doctor") != NULL, "%s", run.out);
    dahlsim("train", "--help", NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "usage: dahlsim train") != NULL, "%s", run.out);
    cr_assert(strstr(run.out, "not implemented") == NULL, "%s", run.out);
}

Test(cli, version_names_the_flavour)
{
    dahlsim("--version", NULL, NULL);
    cr_assert_eq(run.status, 0);
    cr_assert(strstr(run.out, "native StarPU 1.3.10") != NULL, "%s", run.out);
}

Test(cli, bad_option_values_name_the_option)
{
    dahlsim("engine-probe", "--tasks", "-3");
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "dahlsim: error: --tasks: expected an integer in [1, 1000000], got \"-3\"") != NULL,
              "%s", run.err);
    dahlsim("engine-probe", "--duration-us", "5ms");
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "--duration-us: expected a number") != NULL, "%s", run.err);
    dahlsim("engine-probe", "--frobnicate", NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "usage: dahlsim engine-probe") != NULL, "%s", run.err);
    dahlsim("doctor", "extra", NULL);
    cr_assert_eq(run.status, 2);
    cr_assert(strstr(run.err, "doctor: unexpected argument \"extra\"") != NULL, "%s", run.err);
}

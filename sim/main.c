/* Entry point of build/dahlsim, the native front end (dahlsim_cli.h). The simulators start in
 * sim/program/main.c. */
#include "dahlsim_cli.h"

int main(int argc, char **argv)
{
    return dahlsim_cli_main(argc, argv);
}

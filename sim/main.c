/* Entry point of both dahlsim binaries: build/dahlsim (native StarPU) and build/dahlsim-sim (StarPU-SimGrid).
 * This file must include starpu.h: in SimGrid mode StarPU renames main and starts the simulation around it. */
#include <starpu.h>

#include "dahlsim_cli.h"

int main(int argc, char **argv)
{
    return dahlsim_cli_main(argc, argv);
}

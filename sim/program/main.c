/* Entry point of the binaries that carry only the program: build/dahlsim-sim, build/dahlsim-sim-mpi and
 * build/dahlsim-mpi (dahlsim_program.h). This file must include starpu.h: in SimGrid mode StarPU renames
 * main and starts the simulation around it. */
#include <starpu.h>

#include "dahlsim_program.h"

int main(int argc, char **argv)
{
    return dahlsim_program_main(argc, argv);
}

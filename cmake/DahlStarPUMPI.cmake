# The two multi-node StarPU flavours built by scripts/setup-deps, both optional: the build makes their
# binaries only where they exist.
#   sim-mpi     StarPU-MPI over SimGrid's SMPI, static (SMPI privatizes only a statically linked StarPU's
#               globals). SMPI loads the program as a shared object, so build/dahlsim-sim-mpi is a MODULE
#               and everything in it is PIC; it runs under starpu_smpirun (dahlsim run does that). In the
#               Asan build it is the one program built without sanitizers (CMakeLists.txt says why).
#   native-mpi  StarPU-MPI over Debian's OpenMPI: build/dahlsim-mpi, run with mpirun.
# Sets DAHL_MPI_FLAVOURS (the flavours found) and, for each, the target dahl::starpu_<flavour> and
# DAHL_STARPU_<FLAVOUR>_PREFIX. Like DahlStarPU.cmake, looks only in the given prefixes and links StarPU's
# libraries by full path: a system libstarpu must never be picked instead.

set(DAHL_MPI_FLAVOURS "")

# Reads one flag of the flavour's starpu_config.h into out (TRUE/FALSE).
function(dahl_starpu_config_has prefix define out)
    file(STRINGS "${prefix}/include/starpu/1.3/starpu_config.h" hit REGEX "^#define ${define} 1")
    if(hit)
        set(${out} TRUE PARENT_SCOPE)
    else()
        set(${out} FALSE PARENT_SCOPE)
    endif()
endfunction()

function(dahl_find_starpu_sim_mpi prefix)
    get_filename_component(real "${prefix}" REALPATH)
    set(libmpi "${real}/lib/libstarpumpi-1.3.a")
    set(libcore "${real}/lib/libstarpu-1.3.a")
    if(NOT EXISTS "${libmpi}" OR NOT EXISTS "${libcore}")
        message(STATUS "dahlsim: StarPU sim-mpi not found in ${prefix}: no multi-node simulation "
                       "(scripts/setup-deps --flavours sim-mpi builds it)")
        return()
    endif()
    dahl_starpu_config_has("${real}" STARPU_SIMGRID simgrid)
    dahl_starpu_config_has("${real}" STARPU_USE_MPI mpi)
    if(NOT simgrid OR NOT mpi)
        message(FATAL_ERROR "dahlsim: the sim-mpi StarPU at ${prefix} is not a SimGrid build with MPI "
                            "(STARPU_SIMGRID and STARPU_USE_MPI must be defined in its starpu_config.h)\n"
                            "hint: rebuild it with scripts/setup-deps --flavours sim-mpi")
    endif()
    if(NOT EXISTS "${real}/bin/starpu_smpirun")
        message(FATAL_ERROR "dahlsim: ${real}/bin/starpu_smpirun is missing: the sim-mpi install is incomplete\n"
                            "hint: rebuild it with scripts/setup-deps --flavours sim-mpi")
    endif()
    find_path(DAHL_SMPI_INCLUDE_DIR smpi/mpi.h PATHS /usr/include NO_DEFAULT_PATH)
    find_library(DAHL_SIMGRID_LIB simgrid)
    find_library(DAHL_GLPK_LIB glpk)
    find_library(DAHL_BLAS_LIB blas)
    if(NOT DAHL_SMPI_INCLUDE_DIR OR NOT DAHL_SIMGRID_LIB OR NOT DAHL_GLPK_LIB OR NOT DAHL_BLAS_LIB)
        message(FATAL_ERROR "dahlsim: StarPU sim-mpi needs SMPI's mpi.h, libsimgrid, libglpk and libblas\n"
                            "hint: run scripts/setup-deps (libsimgrid-dev, libglpk-dev, libopenblas-dev)")
    endif()
    add_library(dahl_starpu_sim_mpi INTERFACE)
    # SMPI's mpi.h (/usr/include/smpi), never OpenMPI's; the static archives then their dependencies, as the
    # flavour's starpumpi-1.3.pc lists them in Libs.private.
    target_include_directories(dahl_starpu_sim_mpi INTERFACE "${real}/include/starpu/1.3"
                                                             "${DAHL_SMPI_INCLUDE_DIR}/smpi")
    target_link_libraries(dahl_starpu_sim_mpi INTERFACE "${libmpi}" "${libcore}" "${DAHL_SIMGRID_LIB}"
                                                        "${DAHL_GLPK_LIB}" "${DAHL_BLAS_LIB}" stdc++ rt m pthread)
    add_library(dahl::starpu_sim-mpi ALIAS dahl_starpu_sim_mpi)
    set(DAHL_STARPU_SIM_MPI_PREFIX "${real}" PARENT_SCOPE)
    set(DAHL_MPI_FLAVOURS ${DAHL_MPI_FLAVOURS} sim-mpi PARENT_SCOPE)
    message(STATUS "dahlsim: StarPU sim-mpi: ${real}")
endfunction()

function(dahl_find_starpu_native_mpi prefix)
    get_filename_component(real "${prefix}" REALPATH)
    if(NOT EXISTS "${real}/lib/pkgconfig/starpumpi-1.3.pc")
        message(STATUS "dahlsim: StarPU native-mpi not found in ${prefix}: no real multi-node training "
                       "(scripts/setup-deps --flavours native-mpi builds it)")
        return()
    endif()
    dahl_starpu_config_has("${real}" STARPU_SIMGRID simgrid)
    dahl_starpu_config_has("${real}" STARPU_USE_MPI mpi)
    if(simgrid OR NOT mpi)
        message(FATAL_ERROR "dahlsim: the native-mpi StarPU at ${prefix} must be a native build with MPI\n"
                            "hint: rebuild it with scripts/setup-deps --flavours native-mpi")
    endif()
    find_package(MPI COMPONENTS C)
    if(NOT MPI_C_FOUND)
        message(FATAL_ERROR "dahlsim: StarPU native-mpi needs an MPI C library\n"
                            "hint: run scripts/setup-deps (libopenmpi-dev)")
    endif()
    set(saved_path "$ENV{PKG_CONFIG_PATH}")
    set(ENV{PKG_CONFIG_PATH} "${real}/lib/pkgconfig")
    pkg_check_modules(DAHL_PC_NATIVE_MPI REQUIRED QUIET IMPORTED_TARGET GLOBAL starpumpi-1.3)
    set(ENV{PKG_CONFIG_PATH} "${saved_path}")
    get_target_property(libs PkgConfig::DAHL_PC_NATIVE_MPI INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS libs)
        if(lib MATCHES "starpu")
            get_filename_component(real_lib "${lib}" REALPATH)
            string(FIND "${real_lib}" "${real}" at)
            if(NOT at EQUAL 0)
                message(FATAL_ERROR "dahlsim: StarPU native-mpi links ${lib}, outside ${prefix}")
            endif()
        endif()
    endforeach()
    add_library(dahl_starpu_native_mpi INTERFACE)
    target_link_libraries(dahl_starpu_native_mpi INTERFACE PkgConfig::DAHL_PC_NATIVE_MPI MPI::MPI_C)
    add_library(dahl::starpu_native-mpi ALIAS dahl_starpu_native_mpi)
    set(DAHL_STARPU_NATIVE_MPI_PREFIX "${real}" PARENT_SCOPE)
    set(DAHL_MPI_FLAVOURS ${DAHL_MPI_FLAVOURS} native-mpi PARENT_SCOPE)
    message(STATUS "dahlsim: StarPU native-mpi: ${real}")
endfunction()

dahl_find_starpu_sim_mpi("${DAHLSIM_STARPU_SIM_MPI_PREFIX}")
dahl_find_starpu_native_mpi("${DAHLSIM_STARPU_NATIVE_MPI_PREFIX}")

# Finds one StarPU flavour built by scripts/setup-deps, through pkg-config with an explicit path, and makes
# an imported target dahl::starpu_<flavour>. Never falls back to the system StarPU: a Debian libstarpu-dev
# may be installed too, and it is not a SimGrid build.
#
#   dahl_find_starpu(FLAVOUR PREFIX [SIMGRID])
#     FLAVOUR: sim | native        PREFIX: install prefix        SIMGRID: require STARPU_SIMGRID
# Sets DAHL_STARPU_<FLAVOUR>_INCLUDEDIR, DAHL_STARPU_<FLAVOUR>_LIBDIR, DAHL_STARPU_<FLAVOUR>_PREFIX.

find_package(PkgConfig REQUIRED)

function(dahl_find_starpu flavour prefix)
    cmake_parse_arguments(ARG "SIMGRID" "" "" ${ARGN})
    string(TOUPPER "${flavour}" up)
    string(CONCAT hint "hint: run scripts/setup-deps (it builds StarPU ${flavour} into "
                       "\$DAHLSIM_DEPS/starpu-${flavour}), or pass -DDAHLSIM_STARPU_${up}_PREFIX=<prefix>")
    set(pcdir "${prefix}/lib/pkgconfig")
    if(NOT EXISTS "${pcdir}/starpu-1.3.pc")
        message(FATAL_ERROR "dahlsim: StarPU flavour '${flavour}' not found: no ${pcdir}/starpu-1.3.pc\n${hint}")
    endif()

    # Only this prefix, then the system's dirs for StarPU's own dependencies (hwloc, simgrid, fxt).
    set(saved_path "$ENV{PKG_CONFIG_PATH}")
    set(ENV{PKG_CONFIG_PATH} "${pcdir}")
    pkg_check_modules(DAHL_PC_${up} REQUIRED QUIET IMPORTED_TARGET GLOBAL starpu-1.3)
    set(ENV{PKG_CONFIG_PATH} "${saved_path}")

    get_filename_component(real_prefix "${prefix}" REALPATH)
    set(incdir "${DAHL_PC_${up}_INCLUDEDIR}")
    get_filename_component(real_inc "${incdir}" REALPATH)
    string(FIND "${real_inc}" "${real_prefix}" at)
    if(NOT at EQUAL 0)
        message(FATAL_ERROR "dahlsim: pkg-config resolved StarPU '${flavour}' to ${incdir}, outside ${prefix}\n${hint}")
    endif()

    set(config_h "${incdir}/starpu/1.3/starpu_config.h")
    if(NOT EXISTS "${config_h}")
        message(FATAL_ERROR "dahlsim: ${config_h} is missing: the StarPU '${flavour}' install is incomplete\n${hint}")
    endif()
    file(STRINGS "${config_h}" simgrid_define REGEX "^#define STARPU_SIMGRID 1")
    if(ARG_SIMGRID AND NOT simgrid_define)
        message(FATAL_ERROR
            "dahlsim: ${config_h} does not define STARPU_SIMGRID: the '${flavour}' StarPU at ${prefix} is not a "
            "SimGrid build.\nhint: build it with scripts/setup-deps --flavours sim (configure --enable-simgrid "
            "--disable-cuda), or point -DDAHLSIM_STARPU_SIM_PREFIX at such a build")
    endif()
    if(NOT ARG_SIMGRID AND simgrid_define)
        message(FATAL_ERROR "dahlsim: the '${flavour}' StarPU at ${prefix} is a SimGrid build; a native one is "
                            "expected\n${hint}")
    endif()

    # Every library resolved to a full path inside the prefix (pkg-config's -L dirs first), with an rpath.
    get_target_property(libs PkgConfig::DAHL_PC_${up} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS libs)
        if(lib MATCHES "starpu")
            get_filename_component(real_lib "${lib}" REALPATH)
            string(FIND "${real_lib}" "${real_prefix}" at)
            if(NOT at EQUAL 0)
                message(FATAL_ERROR "dahlsim: StarPU '${flavour}' links ${lib}, outside ${prefix}\n${hint}")
            endif()
        endif()
    endforeach()

    add_library(dahl::starpu_${flavour} ALIAS PkgConfig::DAHL_PC_${up})
    file(STRINGS "${config_h}" cuda_define REGEX "^#define STARPU_USE_CUDA 1")
    set(DAHL_STARPU_${up}_HAS_CUDA "${cuda_define}" PARENT_SCOPE)
    set(DAHL_STARPU_${up}_INCLUDEDIR "${incdir}" PARENT_SCOPE)
    set(DAHL_STARPU_${up}_LIBDIR "${DAHL_PC_${up}_LIBDIR}" PARENT_SCOPE)
    set(DAHL_STARPU_${up}_PREFIX "${real_prefix}" PARENT_SCOPE)
    message(STATUS "dahlsim: StarPU ${flavour}: ${real_prefix}")
endfunction()

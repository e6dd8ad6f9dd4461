# dahl's CUDA kernels (kernels/cuda/) are built only where the native StarPU flavour has CUDA workers
# (DAHL_STARPU_NATIVE_HAS_CUDA, read from its starpu_config.h) AND nvcc is found: builds without either are
# unchanged (CI has neither). nvcc defaults to the one StarPU was configured with (--with-cuda-dir).
# Sets DAHL_CUDA (ON/OFF). Include after dahl_find_starpu(native ...).

set(DAHL_CUDA OFF)
if(NOT DAHL_STARPU_NATIVE_HAS_CUDA)
    if(DAHLSIM_CUDA)
        message(FATAL_ERROR "dahlsim: DAHLSIM_CUDA=ON but the native StarPU at ${DAHL_STARPU_NATIVE_PREFIX} has no "
                            "CUDA (no STARPU_USE_CUDA in its starpu_config.h)\nhint: run scripts/setup-deps "
                            "--flavours native-cuda (it builds \$DAHLSIM_DEPS/starpu-native-cuda)")
    endif()
    return()
endif()

if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    set(flags_file "${DAHL_STARPU_NATIVE_PREFIX}/.dahlsim-configure-flags")
    if(EXISTS "${flags_file}")
        file(STRINGS "${flags_file}" cuda_dir_flag REGEX "^--with-cuda-dir=")
        string(REPLACE "--with-cuda-dir=" "" starpu_cuda_dir "${cuda_dir_flag}")
        if(starpu_cuda_dir AND EXISTS "${starpu_cuda_dir}/bin/nvcc")
            set(CMAKE_CUDA_COMPILER "${starpu_cuda_dir}/bin/nvcc" CACHE FILEPATH "nvcc (the one StarPU was built with)")
            set(CUDAToolkit_ROOT "${starpu_cuda_dir}")
        endif()
    endif()
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
    if(DAHLSIM_CUDA)
        message(FATAL_ERROR "dahlsim: DAHLSIM_CUDA=ON but no nvcc found\nhint: put the CUDA toolkit's bin/ on PATH "
                            "or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc")
    endif()
    message(STATUS "dahlsim: the native StarPU has CUDA but no nvcc was found: CPU kernels only")
    return()
endif()

# Machine code for A100 (sm_80) and H100/H200 (sm_90), plus sm_90 PTX that newer GPUs compile at load.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
endif()
# The shared CUDA runtime: StarPU links libcudart.so, and its streams must be the ones our kernels see (a
# second, static runtime in the same process would have its own).
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
enable_language(CUDA)
# Programs linking the CUDA kernels stay C programs linked by the C compiler (the kernels need no device
# link step): nvcc as the linker would reject the sanitizer flags of Asan builds.
set(CMAKE_CUDA_LINKER_PREFERENCE_PROPAGATES 0)
find_package(CUDAToolkit REQUIRED)
# starpu.h with CUDA includes cusparse.h, whose deprecated declarations flood every file that includes it.
set_property(TARGET PkgConfig::DAHL_PC_NATIVE APPEND PROPERTY INTERFACE_COMPILE_OPTIONS
             "$<$<COMPILE_LANGUAGE:C>:-Wno-deprecated-declarations>")
set(DAHL_CUDA ON)
message(STATUS "dahlsim: CUDA kernels on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")

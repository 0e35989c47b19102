# cmake/torch2.cmake — the second peer: libtorch 2.x as PyPI's torch wheel carries it (installed by
# `tools/install-deps.sh torch2` into .peers/torch2; optional, never needed by `make demo` or `make test`). The first peer, Debian's
# libtorch 1.13, is found by find_package(Torch) where it is used.
#
# Defines, when found:
#   glassbox::torch2         an imported target: the wheel's C++ headers, libtorch_cpu and libc10 (not libtorch.so,
#                            which pulls in libtorch_cuda and the CUDA libraries of the wheel's own CUDA; the peer
#                            runs on the CPU)
#   GLASSBOX_TORCH2_VERSION  e.g. 2.15.0 (from the wheel's share/cmake/Torch/TorchConfigVersion.cmake)
#   GLASSBOX_TORCH2_FOUND_DIR the torch/ folder it came from
# GLASSBOX_TORCH2_DIR (a cache variable, empty by default: searched) names another libtorch 2.x tree laid out the same
# way, or NONE (any folder without one) to leave the peer out.
# Nothing is imported from the wheel's TorchConfig.cmake: it searches for the CUDA toolkit and cuDNN of the wheel's
# build (13.2 and 9.26 today), which are neither needed for the CPU peer nor always what this machine has.
if(TARGET glassbox::torch2)
  return()
endif()
set(GLASSBOX_TORCH2_DIR "" CACHE PATH "libtorch 2.x laid out as PyPI's torch wheel's torch/ folder (empty: search)")
set(_gb_torch_dir "${GLASSBOX_TORCH2_DIR}")
if(NOT _gb_torch_dir)
  # Where tools/install-deps.sh torch2 puts it, else where Python would import torch from, without importing it (the
  # import needs the wheel's CUDA packages; Debian's python3-torch there is 1.13 and is refused below). Searched at
  # every configure, so a peer installed after the first one is found.
  find_program(GLASSBOX_PYTHON3 python3)
  if(EXISTS "${PROJECT_SOURCE_DIR}/.peers/torch2/torch/share/cmake/Torch/TorchConfigVersion.cmake")
    set(_gb_torch_dir "${PROJECT_SOURCE_DIR}/.peers/torch2/torch")
  elseif(GLASSBOX_PYTHON3)
    execute_process(COMMAND ${GLASSBOX_PYTHON3} -c
                            "import importlib.util as u; s = u.find_spec('torch'); print(s.submodule_search_locations[0] if s else '')"
                    OUTPUT_VARIABLE _gb_torch_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
endif()
set(GLASSBOX_TORCH2_VERSION "")
set(_gb_version_file "${_gb_torch_dir}/share/cmake/Torch/TorchConfigVersion.cmake")
if(_gb_torch_dir AND EXISTS "${_gb_version_file}")
  file(STRINGS "${_gb_version_file}" _gb_version_line REGEX "set\\(PACKAGE_VERSION \"")
  string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" GLASSBOX_TORCH2_VERSION "${_gb_version_line}")
endif()
if(NOT GLASSBOX_TORCH2_VERSION OR GLASSBOX_TORCH2_VERSION VERSION_LESS 2.0)
  if(_gb_torch_dir AND GLASSBOX_TORCH2_VERSION)
    message(STATUS "glassbox: ${_gb_torch_dir} holds libtorch ${GLASSBOX_TORCH2_VERSION}, not 2.x: "
                   "the second peer is left out")
  endif()
  set(GLASSBOX_TORCH2_VERSION "")
  return()
endif()
find_library(GLASSBOX_TORCH2_CPU torch_cpu PATHS "${_gb_torch_dir}/lib" NO_DEFAULT_PATH NO_CACHE)
find_library(GLASSBOX_TORCH2_C10 c10 PATHS "${_gb_torch_dir}/lib" NO_DEFAULT_PATH NO_CACHE)
if(NOT GLASSBOX_TORCH2_CPU OR NOT GLASSBOX_TORCH2_C10)
  message(WARNING "glassbox: ${_gb_torch_dir} has libtorch ${GLASSBOX_TORCH2_VERSION}'s headers but not "
                  "lib/libtorch_cpu.so and lib/libc10.so: reinstall it (tools/install-deps.sh torch2)")
  set(GLASSBOX_TORCH2_VERSION "")
  return()
endif()
set(GLASSBOX_TORCH2_FOUND_DIR "${_gb_torch_dir}")
add_library(glassbox::torch2 INTERFACE IMPORTED)
# SYSTEM: the wheel's headers are not ours to warn about (the warning set is cmake/warnings.cmake's)
target_include_directories(glassbox::torch2 SYSTEM INTERFACE "${_gb_torch_dir}/include"
                                                             "${_gb_torch_dir}/include/torch/csrc/api/include")
# By name with the folder's -L and -rpath as flags rather than by full path: CMake's own rpath would put the folder after the
# system's and warn that the wheel's libgomp.so.1 shadows Debian's (it does, on purpose: the wheel's libraries were
# built against their own, newer libgomp, and oneDNN's calls are served by it as well).
target_link_libraries(glassbox::torch2 INTERFACE -ltorch_cpu -lc10)  # -l: Debian's TorchConfig names targets torch_cpu and c10
target_link_options(glassbox::torch2 INTERFACE "-L${_gb_torch_dir}/lib" "LINKER:-rpath,${_gb_torch_dir}/lib")
message(STATUS "glassbox: libtorch ${GLASSBOX_TORCH2_VERSION} (the second peer) at ${_gb_torch_dir}")

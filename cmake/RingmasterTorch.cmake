# Finds the LibTorch that the trainer builds against, and checks it before LibTorch's own CMake files can
# fail in ways that do not name the cause (or, worse, build something that corrupts memory). Two kinds:
#  - Debian's libtorch-dev (CPU, 1.13): find_package(Torch) as it is, nothing else.
#  - the LibTorch inside PyTorch's wheel, CUDA or CPU: -DRINGMASTER_TORCH_PYTHON=/path/to/python names a
#    Python whose torch package it is (scripts/setup-torch.sh makes one, scripts/build-trainer.sh takes a
#    user's). Before find_package(Torch) this checks, each with one message that names the fix:
#      the C++11 ABI (the 2.4-2.6 wheels are ABI 0; spdlog, fmt and Ringmaster's own libraries are ABI 1),
#      the CUDA toolkit (its nvcc must be torch.version.cuda, with the cuBLAS/cuSPARSE/cuSOLVER headers that
#        ATen/cuda/CUDAContext.h includes; 2.4-2.7 with CUDA >= 12.9 cannot configure, pytorch#152756),
#      nccl.h (the wheel's own, from nvidia-nccl-*, whose NCCL_VERSION_CODE must be torch.cuda.nccl.version():
#        another one changes the layout of ProcessGroupNCCL::Options; a compile-time assert checks that the
#        header the compiler sees is that one).
#    The fmt that the wheel bundles is handled by the trainer's log (core/trainer/log.h).
# Sets: RINGMASTER_TORCH_CUDA (the CUDA major.minor LibTorch was built with, empty without CUDA),
#       RINGMASTER_TORCH_NCCL (its version), RINGMASTER_TORCH_NCCL_INCLUDE_DIR and
#       RINGMASTER_TORCH_NCCL_VERSION_CODE (CUDA wheels),
#       RINGMASTER_TORCH_LIBRARY_DIR (where libtorch*.so live; CMake's build run path points there, and
#         build-trainer copies the binary with it),
#       RINGMASTER_TORCH_EXPORTS_LIBSTDCXX (see below; ringmaster_link_torch acts on it).
set(RINGMASTER_TORCH_PYTHON "" CACHE FILEPATH
  "A Python whose torch package's LibTorch the trainer is built against (empty: find_package(Torch) as found)")

set(RINGMASTER_TORCH_CUDA "")
set(RINGMASTER_TORCH_NCCL_INCLUDE_DIR "")
set(RINGMASTER_TORCH_NCCL_VERSION_CODE "")
set(RINGMASTER_TORCH_NCCL "")
set(RINGMASTER_TORCH_VERSION "")  # what the Python says (torch.__version__ without +local), tests compare

# NCCL_VERSION_CODE as nccl.h computes it (NCCL_VERSION(X, Y, Z)): X*10000 + Y*100 + Z from 2.9 on.
function(ringmaster_nccl_version_code version out)
  string(REPLACE "." ";" parts "${version}")
  list(GET parts 0 major)
  list(GET parts 1 minor)
  list(GET parts 2 patch)
  if(major GREATER 2 OR (major EQUAL 2 AND minor GREATER_EQUAL 9))
    math(EXPR code "${major} * 10000 + ${minor} * 100 + ${patch}")
  else()
    math(EXPR code "${major} * 1000 + ${minor} * 100 + ${patch}")
  endif()
  set(${out} ${code} PARENT_SCOPE)
endfunction()

function(ringmaster_check_cuda_toolkit torch_version torch_cuda)
  set(hint "the CUDA toolkit ${torch_cuda} (the version torch ${torch_version} was built with)")
  if(CMAKE_CUDA_COMPILER)
    set(nvcc "${CMAKE_CUDA_COMPILER}")
  else()
    find_program(RINGMASTER_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATH_SUFFIXES bin
                 PATHS /usr/local/cuda/bin NO_CACHE)
    set(nvcc "${RINGMASTER_NVCC}")
  endif()
  if(NOT nvcc)
    message(FATAL_ERROR "Ringmaster: torch ${torch_version} has CUDA ${torch_cuda}, and LibTorch's CMake files need "
      "${hint} with nvcc; none found on PATH, in CUDA_HOME or /usr/local/cuda: install it, or pass "
      "-DCMAKE_CUDA_COMPILER=/path/to/nvcc")
  endif()
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE nvcc_out RESULT_VARIABLE nvcc_rc)
  string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _ "${nvcc_out}")
  set(toolkit "${CMAKE_MATCH_1}")
  if(NOT nvcc_rc EQUAL 0 OR toolkit STREQUAL "")
    message(FATAL_ERROR "Ringmaster: ${nvcc} --version did not say its release: is it a CUDA compiler?")
  endif()
  if(NOT toolkit VERSION_EQUAL torch_cuda)
    message(FATAL_ERROR "Ringmaster: the CUDA toolkit of ${nvcc} is ${toolkit}, but torch ${torch_version} was built "
      "with CUDA ${torch_cuda}: install ${hint} and pass -DCMAKE_CUDA_COMPILER=/path/to/its/nvcc, or use the torch "
      "built for CUDA ${toolkit}")
  endif()
  get_filename_component(root "${nvcc}" DIRECTORY)
  get_filename_component(root "${root}" DIRECTORY)
  foreach(header cublas_v2.h cusparse.h cusolverDn.h cuda_runtime_api.h)
    if(NOT EXISTS "${root}/include/${header}" AND NOT EXISTS "${root}/targets/x86_64-linux/include/${header}")
      message(FATAL_ERROR "Ringmaster: ${root}/include/${header} is missing: ATen/cuda/CUDAContext.h includes it; "
        "install the toolkit's cuBLAS, cuSPARSE and cuSOLVER development files (for example "
        "cuda-libraries-dev-${toolkit})")
    endif()
  endforeach()
  if(torch_version VERSION_GREATER_EQUAL 2.4 AND torch_version VERSION_LESS 2.8 AND toolkit VERSION_GREATER_EQUAL 12.9)
    message(FATAL_ERROR "Ringmaster: torch ${torch_version}'s CMake files look for CUDA::nvToolsExt, which CUDA "
      "${toolkit} no longer has (pytorch#152756): use torch 2.8 or newer, or a CUDA toolkit older than 12.9")
  endif()
  # LibTorch's Caffe2 files enable the CUDA language: make them use this nvcc, the one just checked.
  set(CMAKE_CUDA_COMPILER "${nvcc}" CACHE FILEPATH "CUDA compiler (checked against torch.version.cuda)" FORCE)
  set(CUDA_TOOLKIT_ROOT_DIR "${root}" CACHE PATH "CUDA toolkit (checked against torch.version.cuda)" FORCE)
  set(CUDAToolkit_ROOT "${root}" PARENT_SCOPE)
  message(STATUS "Ringmaster: CUDA toolkit ${toolkit} at ${root} matches torch.version.cuda")
endfunction()

if(RINGMASTER_TORCH_PYTHON)
  set(facts_script [=[
import importlib.util, os, torch, torch.utils
print("version=" + torch.__version__.split("+")[0])
print("full_version=" + torch.__version__)
print("prefix=" + torch.utils.cmake_prefix_path)
print("library_dir=" + os.path.join(os.path.dirname(torch.__file__), "lib"))
print("abi=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI))
print("cuda=" + (torch.version.cuda or ""))
if torch.version.cuda:
    print("nccl=" + ".".join(map(str, torch.cuda.nccl.version())))
    spec = importlib.util.find_spec("nvidia.nccl")
    if spec and spec.submodule_search_locations:
        print("nccl_include=" + os.path.join(list(spec.submodule_search_locations)[0], "include"))
]=])
  execute_process(COMMAND "${RINGMASTER_TORCH_PYTHON}" -c "${facts_script}"
    OUTPUT_VARIABLE facts ERROR_VARIABLE facts_err RESULT_VARIABLE facts_rc)
  if(NOT facts_rc EQUAL 0)
    string(REGEX REPLACE ".*\n([^\n]+)\n*$" "\\1" last_line "\n${facts_err}")
    message(FATAL_ERROR "Ringmaster: RINGMASTER_TORCH_PYTHON=${RINGMASTER_TORCH_PYTHON} cannot import torch "
      "(${last_line}): name a Python with PyTorch installed (scripts/setup-torch.sh makes one)")
  endif()
  string(REPLACE "\n" ";" facts "${facts}")
  foreach(line IN LISTS facts)
    if(line MATCHES "^([a-z_]+)=(.*)$")
      set(torch_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  message(STATUS "Ringmaster: torch ${torch_full_version} from ${RINGMASTER_TORCH_PYTHON}")
  set(RINGMASTER_TORCH_VERSION "${torch_version}")

  if(torch_abi EQUAL 0)
    message(FATAL_ERROR "Ringmaster: torch ${torch_full_version} uses the pre-C++11 ABI (_GLIBCXX_USE_CXX11_ABI=0, "
      "as PyPI's 2.4-2.6 wheels do), but spdlog, fmt and Ringmaster's own libraries use the C++11 ABI: the trainer "
      "would link and corrupt memory. Use torch 2.7 or newer (scripts/setup-torch.sh installs 2.11.0)")
  endif()
  if(torch_version VERSION_LESS 2.7)
    message(FATAL_ERROR "Ringmaster: torch ${torch_full_version} is older than a wheel build supports (2.7: the "
      "NCCL group's bound device, eager connect and shutdown, the allocator's statistics): use torch 2.7 or newer "
      "(scripts/setup-torch.sh installs 2.11.0)")
  endif()
  if(torch_cuda)
    ringmaster_check_cuda_toolkit("${torch_version}" "${torch_cuda}")
    ringmaster_nccl_version_code("${torch_nccl}" expected_code)
    set(header "${torch_nccl_include}/nccl.h")
    if(NOT torch_nccl_include OR NOT EXISTS "${header}")
      message(FATAL_ERROR "Ringmaster: torch ${torch_full_version} uses NCCL ${torch_nccl}, whose nccl.h "
        "(ProcessGroupNCCL.hpp includes it) is not in that Python's environment: install the nvidia-nccl "
        "package of NCCL ${torch_nccl} that torch requires (pip show torch lists it)")
    endif()
    file(STRINGS "${header}" code_line REGEX "^#define NCCL_VERSION_CODE [0-9]+")
    string(REGEX REPLACE ".* ([0-9]+)$" "\\1" header_code "${code_line}")
    if(NOT header_code EQUAL expected_code)
      message(FATAL_ERROR "Ringmaster: ${header} is NCCL_VERSION_CODE ${header_code}, but torch "
        "${torch_full_version} was built with NCCL ${torch_nccl} (${expected_code}): another nccl.h changes the "
        "layout of ProcessGroupNCCL::Options; install the nvidia-nccl package of NCCL ${torch_nccl}")
    endif()
    set(RINGMASTER_TORCH_CUDA "${torch_cuda}")
    set(RINGMASTER_TORCH_NCCL_INCLUDE_DIR "${torch_nccl_include}")
    set(RINGMASTER_TORCH_NCCL_VERSION_CODE "${expected_code}")
    set(RINGMASTER_TORCH_NCCL "${torch_nccl}")
    message(STATUS "Ringmaster: NCCL ${torch_nccl}, nccl.h from ${torch_nccl_include}")
  endif()
  set(RINGMASTER_TORCH_LIBRARY_DIR "${torch_library_dir}")
  # TorchConfig.cmake finds Caffe2 and its libraries with PATHS, which CMake searches after the system's
  # folders: where Debian's libtorch-dev is installed too, the wheel's TorchConfig would take Debian's
  # Caffe2 (CPU, 1.13) and /usr/lib's libtorch.so. Name each one in the wheel, so nothing is searched.
  set(Torch_DIR "${torch_prefix}/Torch" CACHE PATH "LibTorch's CMake files (from RINGMASTER_TORCH_PYTHON)" FORCE)
  set(Caffe2_DIR "${torch_prefix}/Caffe2" CACHE PATH "LibTorch's Caffe2 files (from RINGMASTER_TORCH_PYTHON)" FORCE)
  foreach(pair "TORCH_LIBRARY;torch" "c10_LIBRARY;c10" "C10_CUDA_LIBRARY;c10_cuda")
    list(GET pair 0 variable)
    list(GET pair 1 name)
    if(EXISTS "${torch_library_dir}/lib${name}.so")
      set(${variable} "${torch_library_dir}/lib${name}.so" CACHE FILEPATH "From RINGMASTER_TORCH_PYTHON" FORCE)
    endif()
  endforeach()
endif()

find_package(Torch REQUIRED)

if(RINGMASTER_TORCH_PYTHON)
  # Every LibTorch library must be the wheel's: one from elsewhere links, and crashes at the first call.
  foreach(target torch torch_cpu torch_cuda c10 c10_cuda)
    if(TARGET ${target})
      get_target_property(location ${target} IMPORTED_LOCATION_RELEASE)
      if(NOT location)
        get_target_property(location ${target} IMPORTED_LOCATION)
      endif()
      string(FIND "${location}" "${torch_library_dir}/" at)
      if(location AND NOT at EQUAL 0)
        message(FATAL_ERROR "Ringmaster: LibTorch's ${target} resolved to ${location}, not to the wheel's "
          "${torch_library_dir}: remove Torch_DIR, Caffe2_DIR and *_LIBRARY from the CMake cache (a fresh build folder)")
      endif()
    endif()
  endforeach()
  foreach(library IN LISTS TORCH_LIBRARIES)
    string(FIND "${library}" "${torch_library_dir}/" at)
    if(library MATCHES "/lib(torch|c10)[^/]*\\.so$" AND NOT at EQUAL 0)
      message(FATAL_ERROR "Ringmaster: LibTorch's libraries include ${library}, not the wheel's "
        "${torch_library_dir}: remove Torch_DIR, Caffe2_DIR and *_LIBRARY from the CMake cache (a fresh build folder)")
    endif()
  endforeach()
  if(NOT Torch_VERSION VERSION_EQUAL torch_version)
    message(FATAL_ERROR "Ringmaster: found LibTorch ${Torch_VERSION} at ${Torch_DIR}, but ${RINGMASTER_TORCH_PYTHON} "
      "has torch ${torch_version}: a fresh build folder fixes a stale cache")
  endif()
  if(torch_cuda AND NOT TARGET torch_cuda)
    message(FATAL_ERROR "Ringmaster: torch ${torch_full_version} has CUDA, but its CMake files defined no torch_cuda "
      "target (did the CUDA toolkit check fail above?)")
  endif()
endif()

# A LibTorch found some other way (a LibTorch zip, Torch_DIR by hand) gets the ABI check from its own flags.
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR "Ringmaster: the LibTorch at ${Torch_DIR} uses the pre-C++11 ABI (${TORCH_CXX_FLAGS}), but "
    "spdlog, fmt and Ringmaster's own libraries use the C++11 ABI: use a cxx11-ABI LibTorch (torch 2.7 or newer)")
endif()
if(NOT RINGMASTER_TORCH_LIBRARY_DIR AND TORCH_LIBRARY)
  get_filename_component(RINGMASTER_TORCH_LIBRARY_DIR "${TORCH_LIBRARY}" DIRECTORY)
endif()

# PyTorch's wheels export copies of libstdc++'s std::filesystem functions from libtorch.so and libtorch_cpu.so
# (statically linked, pytorch#133437). Listed before libstdc++ among the trainer's needed libraries, they
# interpose on the system's: std::filesystem::remove_all then jumps to address 0 in our code. With this set,
# ringmaster_link_torch puts libstdc++ first, so every std:: symbol resolves to the system's own.
set(RINGMASTER_TORCH_EXPORTS_LIBSTDCXX OFF)
if(CMAKE_NM AND RINGMASTER_TORCH_LIBRARY_DIR)
  foreach(library libtorch.so libtorch_cpu.so)
    if(EXISTS "${RINGMASTER_TORCH_LIBRARY_DIR}/${library}")
      execute_process(COMMAND "${CMAKE_NM}" -D --defined-only "${RINGMASTER_TORCH_LIBRARY_DIR}/${library}"
                      OUTPUT_VARIABLE exported ERROR_QUIET)
      if(exported MATCHES " T _ZNSt10filesystem")
        set(RINGMASTER_TORCH_EXPORTS_LIBSTDCXX ON)
      endif()
    endif()
  endforeach()
endif()
if(RINGMASTER_TORCH_EXPORTS_LIBSTDCXX)
  message(STATUS "Ringmaster: LibTorch exports libstdc++'s std::filesystem: libstdc++ is linked ahead of it")
endif()

# The standard LibTorch asks for (TorchConfig.cmake sets it on its target), if newer than the project's.
get_target_property(torch_standard torch CXX_STANDARD)
if(torch_standard AND torch_standard GREATER 17)
  target_compile_features(ringmaster_options INTERFACE cxx_std_${torch_standard})
  message(STATUS "Ringmaster: C++${torch_standard}, as LibTorch asks")
endif()

# ringmaster::build_info: a generated header (ringmaster_build_info.h) with the Ringmaster version, the
# LibTorch version found at configure time and whether it has CUDA, for every program's --version.
# Included after find_package(Torch).
if(TARGET torch_cuda OR TARGET c10_cuda OR TORCH_CUDA_LIBRARIES)
  set(RINGMASTER_WITH_CUDA 1)
else()
  set(RINGMASTER_WITH_CUDA 0)
endif()
set(RINGMASTER_LIBTORCH_VERSION "${Torch_VERSION}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/ringmaster_build_info.h.in
               ${CMAKE_BINARY_DIR}/generated/ringmaster_build_info.h @ONLY)
add_library(ringmaster_build_info INTERFACE)
add_library(ringmaster::build_info ALIAS ringmaster_build_info)
target_include_directories(ringmaster_build_info INTERFACE ${CMAKE_BINARY_DIR}/generated)

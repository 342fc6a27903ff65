# One INTERFACE target carries the language standard, warnings and Qt strictness defines for every
# Ringmaster target; nothing here touches CMAKE_CXX_FLAGS or global include directories.
add_library(ringmaster_options INTERFACE)
add_library(ringmaster::options ALIAS ringmaster_options)

target_compile_features(ringmaster_options INTERFACE cxx_std_17)
set(CMAKE_CXX_EXTENSIONS OFF)

target_compile_options(ringmaster_options INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)

# Harmless for the Qt-free trainer; they make Qt code spell out encodings and connection contexts.
target_compile_definitions(ringmaster_options INTERFACE
  QT_NO_CAST_FROM_ASCII
  QT_NO_CAST_TO_ASCII
  QT_NO_CAST_FROM_BYTEARRAY
  QT_NO_CONTEXTLESS_CONNECT
  QT_NO_NARROWING_CONVERSIONS_IN_CONNECT
  QT_USE_QSTRINGBUILDER)

# LibTorch headers are third-party: include them as system headers so -Wpedantic stays about our code.
# Where LibTorch exports copies of libstdc++ symbols (cmake/RingmasterTorch.cmake), libstdc++ comes first.
function(ringmaster_link_torch target scope)
  if(RINGMASTER_TORCH_EXPORTS_LIBSTDCXX)
    target_link_libraries(${target} ${scope} "-Wl,--push-state,--no-as-needed" stdc++ "-Wl,--pop-state")
  endif()
  target_link_libraries(${target} ${scope} ${TORCH_LIBRARIES})
  target_include_directories(${target} SYSTEM ${scope} ${TORCH_INCLUDE_DIRS})
endfunction()

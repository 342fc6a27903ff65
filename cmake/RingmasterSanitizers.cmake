# The sanitizer and fuzzing builds (issue 13): one cache option puts -fsanitize on every Ringmaster target
# through ringmaster::options, so a sanitizer build is a separate build folder configured differently, never a
# change of global flags. LibTorch, Qt and the other system libraries stay uninstrumented; the suppression files
# in tests/sanitizers/ name what is found inside them, each with its reason.
#
#   RINGMASTER_SANITIZE=address,undefined   AddressSanitizer + UndefinedBehaviorSanitizer (clang or gcc)
#   RINGMASTER_SANITIZE=thread              ThreadSanitizer
#   RINGMASTER_FUZZ=ON                      libFuzzer targets in tests/fuzz (clang only); every Ringmaster
#                                           library gets coverage instrumentation (-fsanitize=fuzzer-no-link)
set(RINGMASTER_SANITIZE "" CACHE STRING "Sanitizers for every Ringmaster target: address,undefined or thread")
option(RINGMASTER_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

if(RINGMASTER_SANITIZE)
  if(NOT RINGMASTER_SANITIZE MATCHES "^(address,undefined|undefined,address|address|undefined|thread)$")
    message(FATAL_ERROR "RINGMASTER_SANITIZE=${RINGMASTER_SANITIZE}: use address,undefined or thread")
  endif()
  # Undefined behaviour stops the program (a test fails) instead of printing and going on.
  target_compile_options(ringmaster_options INTERFACE -fsanitize=${RINGMASTER_SANITIZE} -fno-omit-frame-pointer)
  if(RINGMASTER_SANITIZE MATCHES "undefined")
    target_compile_options(ringmaster_options INTERFACE -fno-sanitize-recover=undefined)
  endif()
  target_link_options(ringmaster_options INTERFACE -fsanitize=${RINGMASTER_SANITIZE})
  message(STATUS "Ringmaster: sanitizers ${RINGMASTER_SANITIZE}")
endif()

if(RINGMASTER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RINGMASTER_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-14 "
                        "-DCMAKE_C_COMPILER=clang-14 in a separate build folder")
  endif()
  target_compile_options(ringmaster_options INTERFACE -fsanitize=fuzzer-no-link)
endif()

# SPDX-License-Identifier: MIT
# LT_FUZZ=ON: every target gets libFuzzer coverage instrumentation (fuzzer-no-link) and, unless
# LT_SANITIZE says otherwise, ASan+UBSan; tests/fuzz links its targets with -fsanitize=fuzzer.
if(LT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LT_FUZZ=ON needs clang: configure with -DCMAKE_C_COMPILER=clang")
  endif()
  if(NOT LT_SANITIZE)
    set(LT_SANITIZE "address;undefined")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

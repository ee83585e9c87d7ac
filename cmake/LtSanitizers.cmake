# SPDX-License-Identifier: MIT
# LT_SANITIZE="address;undefined" (or "thread") instruments every target of the build.
if(LT_SANITIZE)
  list(JOIN LT_SANITIZE "," lt_sanitize_list)
  add_compile_options(-fsanitize=${lt_sanitize_list} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all -g)
  add_link_options(-fsanitize=${lt_sanitize_list})
  # A sanitized Debug build runs at -O1 rather than GCC's default -O0: the SIMD kernels and the
  # tests' float64 reference loops ran 2.1x slower at -O0 (test_ops_permute under ASan: 232 s of
  # CPU against 109 s), which the CI's time budget cannot afford, and -O1 keeps every frame in
  # the reports (no tail calls or frame-pointer omission at that level).
  if(CMAKE_BUILD_TYPE STREQUAL "Debug")
    add_compile_options(-O1)
  endif()
endif()

# SPDX-License-Identifier: MIT
# LT_SANITIZE="address;undefined" (or "thread") instruments every target of the build.
if(LT_SANITIZE)
  list(JOIN LT_SANITIZE "," lt_sanitize_list)
  add_compile_options(-fsanitize=${lt_sanitize_list} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all -g)
  add_link_options(-fsanitize=${lt_sanitize_list})
endif()

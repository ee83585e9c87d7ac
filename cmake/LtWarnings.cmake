# SPDX-License-Identifier: MIT
# Warning flags for every target of the project (errors with LT_WERROR, as CI builds).
set(LT_WARNING_FLAGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wno-unused-parameter)
if(LT_WERROR)
  list(APPEND LT_WARNING_FLAGS -Werror)
endif()

function(lt_target_warnings target)
  target_compile_options(${target} PRIVATE ${LT_WARNING_FLAGS})
endfunction()

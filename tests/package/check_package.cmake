# SPDX-License-Identifier: MIT
# Runs cpack on the build tree into WORK_DIR and checks that it made a .deb and a .tar.gz
# holding the library, the header, the tool, the pkg-config file and the Python binding.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CPACK} --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cpack failed (${rc}):\n${out}\n${err}")
endif()
file(GLOB debs ${WORK_DIR}/*.deb)
file(GLOB tgzs ${WORK_DIR}/*.tar.gz)
if(NOT debs OR NOT tgzs)
  message(FATAL_ERROR "cpack made no .deb or no .tar.gz in ${WORK_DIR}:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E tar tzf ${tgzs} OUTPUT_VARIABLE listing)
foreach(expected lib/libtensor.so.0 include/tensor.h bin/tensor lib/pkgconfig/tensor.pc
                 dist-packages/libtensor/__init__.py lib/cmake/tensor/tensorConfig.cmake)
  string(FIND "${listing}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${tgzs} lacks ${expected}:\n${listing}")
  endif()
endforeach()
message(STATUS "packages: ${debs} ${tgzs}")

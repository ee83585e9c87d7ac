# SPDX-License-Identifier: MIT
# Install-side packaging: pkg-config file, CMake package (tensor::tensor), CPack.
include(CMakePackageConfigHelpers)

# The .pc file locates the prefix relative to itself, so an installed tree can be moved.
file(RELATIVE_PATH LT_PC_TO_PREFIX /lt/${CMAKE_INSTALL_LIBDIR}/pkgconfig /lt)
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/tensor.pc.in ${PROJECT_BINARY_DIR}/tensor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tensor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# issue 24: libtensor_mpi's (OpenMPI's pkg-config name: ompi-c).
if(LT_HAVE_MPI)
  configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/tensor_mpi.pc.in ${PROJECT_BINARY_DIR}/tensor_mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/tensor_mpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

install(EXPORT tensorTargets NAMESPACE tensor:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tensor)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tensorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tensorConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tensor)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tensorConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tensorConfig.cmake ${PROJECT_BINARY_DIR}/tensorConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tensor)

# The Python binding (pure ctypes) goes where the system python3 looks for the prefix it is
# installed to, decided at install time (cmake --install --prefix, CPack's /usr): Debian's
# /usr -> lib/python3/dist-packages; any other prefix -> lib/python3.X/dist-packages (Debian:
# /usr/local's is on sys.path) or site-packages where the interpreter uses those. The package
# finds the library three folders up (PREFIX/lib) either way. LT_PYTHON_INSTALL_DIR (relative
# to the prefix) fixes one folder instead.
set(lt_py_versioned ${CMAKE_INSTALL_LIBDIR}/python3/dist-packages)
find_program(LT_PYTHON3_FOR_INSTALL NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(LT_PYTHON3_FOR_INSTALL)
  execute_process(COMMAND ${LT_PYTHON3_FOR_INSTALL} -c
    "import sys; d = 'dist-packages' if any(p.endswith('dist-packages') for p in sys.path) else 'site-packages'; print('python%d.%d/%s' % (sys.version_info[0], sys.version_info[1], d))"
    OUTPUT_VARIABLE lt_py_sub OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE lt_py_rc)
  if(lt_py_rc EQUAL 0 AND lt_py_sub)
    set(lt_py_versioned ${CMAKE_INSTALL_LIBDIR}/${lt_py_sub})
  endif()
endif()
set(LT_PYTHON_INSTALL_DIR "" CACHE STRING
    "Where cmake --install puts the Python package, relative to the prefix (empty: automatic)")
if(LT_PYTHON_INSTALL_DIR)
  install(CODE "set(LT_PY_DEST \"${LT_PYTHON_INSTALL_DIR}\")")
else()
  install(CODE "if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(LT_PY_DEST \"${CMAKE_INSTALL_LIBDIR}/python3/dist-packages\")
  else()
    set(LT_PY_DEST \"${lt_py_versioned}\")
  endif()")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/libtensor
  DESTINATION "\${LT_PY_DEST}"
  PATTERN __pycache__ EXCLUDE PATTERN *.pyc EXCLUDE)
# The binding's optional C extension (issue 20 A) goes inside the package.
if(TARGET lt_python_fast)
  install(TARGETS lt_python_fast LIBRARY DESTINATION "\${LT_PY_DEST}/libtensor")
endif()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME libtensor)
set(CPACK_PACKAGE_VENDOR "libtensor")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Dense strided tensors, einsum and plans for C and FFI")
set(CPACK_PACKAGE_CONTACT "libtensor developers")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0, ocl-icd-libopencl1")
if(LT_HAVE_MPI) # issue 24: libtensor_mpi.so links Debian's OpenMPI
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi3")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-numpy")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)

# Install-side packaging: pkg-config file, CMake package (tensor::tensor), CPack.
include(CMakePackageConfigHelpers)

# The .pc file locates the prefix relative to itself, so an installed tree can be moved.
file(RELATIVE_PATH LT_PC_TO_PREFIX /lt/${CMAKE_INSTALL_LIBDIR}/pkgconfig /lt)
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/tensor.pc.in ${PROJECT_BINARY_DIR}/tensor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tensor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT tensorTargets NAMESPACE tensor:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tensor)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tensorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tensorConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tensor)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tensorConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tensorConfig.cmake ${PROJECT_BINARY_DIR}/tensorConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tensor)

# The Python binding (pure ctypes) goes where Debian's python3 looks; it finds the library in
# the same prefix.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/libtensor
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/python3/dist-packages
  PATTERN __pycache__ EXCLUDE PATTERN *.pyc EXCLUDE)

set(CPACK_PACKAGE_NAME libtensor)
set(CPACK_PACKAGE_VENDOR "libtensor")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Dense strided tensors, einsum and plans for C and FFI")
set(CPACK_PACKAGE_CONTACT "libtensor developers")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0, ocl-icd-libopencl1")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-numpy")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)

# The BLAS of cpu_backend.so's matrix_multiply, chosen by DLARRAY_CPU_BLAS:
#   AUTO (default): the OpenBLAS that NumPy ships (PyPI's scipy-openblas32: DYNAMIC_ARCH, so it
#                   picks its kernels for the CPU it runs on; symbols prefixed with scipy_) when the
#                   build's Python can import scipy_openblas32, else a system CBLAS, else none;
#   ON:             the same, but fail when neither is found;
#   SYSTEM:         a system CBLAS only (OpenBLAS first, then any BLAS exporting cblas_sgemm);
#   OFF:            none: the own blocked SGEMM.
# scipy-openblas32 is then a dependency of the package, not a copy in it: the CPU libraries (in
# dlarray/plugins or dlarray/lib) find site-packages/scipy_openblas32/lib through
# DLARRAY_CBLAS_INSTALL_RPATH ($ORIGIN/../../scipy_openblas32/lib; auditwheel keeps it, as it stays
# below the wheel's root, and is told not to copy the library). The build tree (CMake's build RPATH names
# the folders of linked libraries), and a `cmake --install` outside a wheel, use the library where
# the build found it.
#
# Sets DLARRAY_CBLAS_FOUND, DLARRAY_CBLAS_KIND (scipy-openblas | system), DLARRAY_CBLAS_TARGET
# (a target to link), DLARRAY_CBLAS_DEFINITIONS (compile definitions for the kernels) and
# DLARRAY_CBLAS_INSTALL_RPATH (where the installed libraries that link it find it).
set(DLARRAY_CPU_BLAS "AUTO" CACHE STRING
    "BLAS for cpu matrix_multiply: AUTO, ON (require one), SYSTEM (system CBLAS only), OFF (own SGEMM)")
set_property(CACHE DLARRAY_CPU_BLAS PROPERTY STRINGS AUTO ON SYSTEM OFF)
string(TOUPPER "${DLARRAY_CPU_BLAS}" dlarray_blas_mode)
if(NOT dlarray_blas_mode MATCHES "^(AUTO|ON|SYSTEM|OFF)$")
  message(FATAL_ERROR "DLARRAY_CPU_BLAS must be AUTO, ON, SYSTEM or OFF, not '${DLARRAY_CPU_BLAS}'")
endif()

set(DLARRAY_CBLAS_FOUND OFF)
set(DLARRAY_CBLAS_KIND "")
set(DLARRAY_CBLAS_DEFINITIONS "")
set(DLARRAY_CBLAS_INSTALL_RPATH "")

# 1. scipy-openblas32, located by the Python the build runs with (pip's build environment, or
#    the venv for --no-build-isolation builds): include dir, library file, version.
if(dlarray_blas_mode MATCHES "^(AUTO|ON)$")
  if(NOT Python_EXECUTABLE)
    find_package(Python 3.8 COMPONENTS Interpreter QUIET)
  endif()
  if(Python_EXECUTABLE)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c
        "import os, scipy_openblas32 as s; print(s.get_include_dir()); print(os.path.join(s.get_lib_dir(), s.get_library(True))); print(s.__version__)"
      OUTPUT_VARIABLE dlarray_scipy_blas ERROR_VARIABLE dlarray_scipy_blas_error
      RESULT_VARIABLE dlarray_scipy_blas_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(dlarray_scipy_blas_rc EQUAL 0)
      string(REPLACE "\n" ";" dlarray_scipy_blas "${dlarray_scipy_blas}")
      list(GET dlarray_scipy_blas 0 DLARRAY_SCIPY_OPENBLAS_INCLUDE_DIR)
      list(GET dlarray_scipy_blas 1 DLARRAY_SCIPY_OPENBLAS_LIBRARY)
      list(GET dlarray_scipy_blas 2 DLARRAY_SCIPY_OPENBLAS_VERSION)
      if(EXISTS "${DLARRAY_SCIPY_OPENBLAS_LIBRARY}"
         AND EXISTS "${DLARRAY_SCIPY_OPENBLAS_INCLUDE_DIR}/cblas.h")
        set(DLARRAY_CBLAS_FOUND ON)
        set(DLARRAY_CBLAS_KIND "scipy-openblas")
      endif()
    else()
      message(STATUS "cpu_backend: scipy-openblas32 is not importable by ${Python_EXECUTABLE} "
                     "(pip install scipy-openblas32): ${dlarray_scipy_blas_error}")
    endif()
  endif()
endif()

if(DLARRAY_CBLAS_KIND STREQUAL "scipy-openblas")
  get_filename_component(dlarray_blas_name "${DLARRAY_SCIPY_OPENBLAS_LIBRARY}" NAME)
  get_filename_component(dlarray_blas_dir "${DLARRAY_SCIPY_OPENBLAS_LIBRARY}" DIRECTORY)
  add_library(dlarray_cpu_blas SHARED IMPORTED GLOBAL)
  set_target_properties(dlarray_cpu_blas PROPERTIES
    IMPORTED_LOCATION "${DLARRAY_SCIPY_OPENBLAS_LIBRARY}"
    IMPORTED_SONAME "${dlarray_blas_name}"
    INTERFACE_INCLUDE_DIRECTORIES "${DLARRAY_SCIPY_OPENBLAS_INCLUDE_DIR}")
  if(SKBUILD)  # a wheel: dlarray/ and scipy_openblas32/ side by side in site-packages
    set(DLARRAY_CBLAS_INSTALL_RPATH "$ORIGIN/../../scipy_openblas32/lib")
  else()
    set(DLARRAY_CBLAS_INSTALL_RPATH "${dlarray_blas_dir}")
  endif()
  set(DLARRAY_CBLAS_TARGET dlarray_cpu_blas)
  set(DLARRAY_CBLAS_DEFINITIONS DLARRAY_HAVE_CBLAS DLARRAY_HAVE_OPENBLAS
      DLARRAY_BLAS_PREFIX_SCIPY "DLARRAY_BLAS_NAME=\"scipy-openblas32 ${DLARRAY_SCIPY_OPENBLAS_VERSION}\"")
  message(STATUS "cpu_backend: matrix_multiply through scipy-openblas32 "
                 "${DLARRAY_SCIPY_OPENBLAS_VERSION} (${DLARRAY_SCIPY_OPENBLAS_LIBRARY})")
  return()
endif()

# 2. A system CBLAS (Debian's OpenBLAS: its kernel choice may lag the CPU, see README).
if(dlarray_blas_mode MATCHES "^(AUTO|ON|SYSTEM)$")
  find_path(DLARRAY_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas)
  find_library(DLARRAY_CBLAS_LIBRARY NAMES openblas cblas)
  if(NOT DLARRAY_CBLAS_LIBRARY)
    find_package(BLAS QUIET)
    if(BLAS_FOUND)
      set(DLARRAY_CBLAS_LIBRARY "${BLAS_LIBRARIES}" CACHE FILEPATH "CBLAS library" FORCE)
    endif()
  endif()
  if(DLARRAY_CBLAS_INCLUDE_DIR AND DLARRAY_CBLAS_LIBRARY)
    include(CheckSymbolExists)
    include(CMakePushCheckState)
    cmake_push_check_state(RESET)
    set(CMAKE_REQUIRED_INCLUDES "${DLARRAY_CBLAS_INCLUDE_DIR}")
    set(CMAKE_REQUIRED_LIBRARIES "${DLARRAY_CBLAS_LIBRARY}")
    set(CMAKE_REQUIRED_QUIET ON)
    check_symbol_exists(cblas_sgemm "cblas.h" DLARRAY_CBLAS_LINKS)
    check_symbol_exists(openblas_get_corename "cblas.h" DLARRAY_CBLAS_IS_OPENBLAS)
    cmake_pop_check_state()
    if(DLARRAY_CBLAS_LINKS)
      set(DLARRAY_CBLAS_FOUND ON)
      set(DLARRAY_CBLAS_KIND "system")
      add_library(dlarray_cpu_blas INTERFACE)
      target_include_directories(dlarray_cpu_blas INTERFACE "${DLARRAY_CBLAS_INCLUDE_DIR}")
      target_link_libraries(dlarray_cpu_blas INTERFACE "${DLARRAY_CBLAS_LIBRARY}")
      set(DLARRAY_CBLAS_TARGET dlarray_cpu_blas)
      get_filename_component(dlarray_blas_name "${DLARRAY_CBLAS_LIBRARY}" NAME)
      set(DLARRAY_CBLAS_DEFINITIONS DLARRAY_HAVE_CBLAS "DLARRAY_BLAS_NAME=\"${dlarray_blas_name}\"")
      if(DLARRAY_CBLAS_IS_OPENBLAS)
        list(APPEND DLARRAY_CBLAS_DEFINITIONS DLARRAY_HAVE_OPENBLAS)
      endif()
    endif()
  endif()
endif()
if(DLARRAY_CBLAS_FOUND)
  message(STATUS "cpu_backend: matrix_multiply through the system CBLAS ${DLARRAY_CBLAS_LIBRARY}")
elseif(dlarray_blas_mode STREQUAL "ON")
  message(FATAL_ERROR "DLARRAY_CPU_BLAS=ON but no BLAS was found: pip install scipy-openblas32 "
                      "into the Python that builds (${Python_EXECUTABLE}), or install a system "
                      "CBLAS (cblas.h: ${DLARRAY_CBLAS_INCLUDE_DIR}, library: ${DLARRAY_CBLAS_LIBRARY})")
else()
  message(STATUS "cpu_backend: matrix_multiply through the own blocked SGEMM (no CBLAS)")
endif()

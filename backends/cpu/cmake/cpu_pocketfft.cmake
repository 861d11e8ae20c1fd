# pocketfft (BSD-3-Clause, header-only C++; docs/fft.md says why) for the CPU FFT kernels.
# Found in DLARRAY_POCKETFFT_DIR (default: <repo>/third_party/pocketfft, an ignored folder);
# when the header is missing there, scripts/fetch_pocketfft.py downloads it (pinned, checked by
# SHA-256) from NumPy's source distribution on PyPI. Sets DLARRAY_POCKETFFT_INCLUDE_DIR.
set(DLARRAY_POCKETFFT_DIR "${PROJECT_SOURCE_DIR}/third_party/pocketfft" CACHE PATH
    "Folder holding pocketfft_hdronly.h (fetched there by scripts/fetch_pocketfft.py when missing)")
if(NOT EXISTS "${DLARRAY_POCKETFFT_DIR}/pocketfft_hdronly.h")
  if(NOT Python_EXECUTABLE)
    find_package(Python 3.8 COMPONENTS Interpreter QUIET)
  endif()
  if(NOT Python_EXECUTABLE)
    message(FATAL_ERROR "cpu_backend: no pocketfft_hdronly.h in ${DLARRAY_POCKETFFT_DIR} and no "
                        "Python to run scripts/fetch_pocketfft.py")
  endif()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/scripts/fetch_pocketfft.py"
            "${DLARRAY_POCKETFFT_DIR}"
    RESULT_VARIABLE dlarray_pocketfft_rc)
  if(NOT dlarray_pocketfft_rc EQUAL 0)
    message(FATAL_ERROR "cpu_backend: pocketfft could not be fetched into "
                        "${DLARRAY_POCKETFFT_DIR} (see the message above)")
  endif()
endif()
set(DLARRAY_POCKETFFT_INCLUDE_DIR "${DLARRAY_POCKETFFT_DIR}")
message(STATUS "cpu_backend: pocketfft from ${DLARRAY_POCKETFFT_DIR}")

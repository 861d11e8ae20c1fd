/*!
 * \file dlarray/aot_guard.h
 * \brief The exception guard of a C++ AOT custom op library: C++ exceptions become an error code
 * and a message on the library's side of the C calling convention.
 *
 * An exception that escapes Func (or FuncInit, FuncInferShape, FuncInferType) is an object of the
 * C++ runtime that compiled the library. dlarray can be built with another one (the portable
 * wheel uses LLVM's libc++, a library built here with g++ uses GCC's libstdc++): there the
 * exception is foreign, `catch (const std::exception&)` does not match it and its message is
 * lost. So the catch happens in code that the library's own compiler builds: dlarray.custom
 * compiles every C++ and CUDA source with this header included first (`-include`), and calls
 * the library's functions through dlarray_aot_guard_v1 when the library exports it. A library
 * built elsewhere gets the same by including this header in one of its C++ files; without it,
 * an escaping exception is still caught, with a generic message when the runtimes differ.
 */
#ifndef DLARRAY_AOT_GUARD_H_
#define DLARRAY_AOT_GUARD_H_
#ifdef __cplusplus
#include <cstddef>
#include <cstring>
#include <exception>

/*!
 * \brief Runs call(data) and returns its result; when a C++ exception escapes it, sets *threw to
 * 1, copies the exception's message (what() of a standard exception, else empty) into message
 * (size bytes, NUL-terminated, truncated) and returns -1.
 */
extern "C" __attribute__((visibility("default"), used)) inline int dlarray_aot_guard_v1(
    int (*call)(void*), void* data, int* threw, char* message, std::size_t size) {
  *threw = 0;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  const char* what = "";
  try {
    return call(data);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  *threw = 1;
  if (size > 0) {
    std::strncpy(message, what != nullptr ? what : "", size - 1);
    message[size - 1] = '\0';
  }
  return -1;
#else
  (void)message;
  (void)size;
  return call(data);  // built without exceptions: nothing can escape
#endif
}
#endif  // __cplusplus
#endif  // DLARRAY_AOT_GUARD_H_

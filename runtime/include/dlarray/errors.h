/*!
 * \file dlarray/errors.h
 * \brief Typed exceptions used inside C++ (core and plugins). Header-only: nothing of them crosses
 *        a library boundary. The C API and the plugin ABI turn them into -1 plus a message; the
 *        Python module maps them to ValueError, TypeError, RuntimeError and MemoryError.
 */
#ifndef DLARRAY_ERRORS_H_
#define DLARRAY_ERRORS_H_

#include <stdexcept>
#include <string>

#ifndef DLARRAY_EXPORT
#define DLARRAY_EXPORT __attribute__((visibility("default")))
#endif

namespace dlarray {

/*! \brief What kind of mistake an Error reports (DLArrayErrorKind's numbers); decides the Python
 *         exception type. */
enum class ErrorKind {
  kRuntime = 0,  //!< backend or plugin failure (RuntimeError)
  kValue = 1,    //!< bad shape, bad device, bad argument value (ValueError)
  kType = 2,     //!< unsupported dtype or argument type (TypeError)
  kMemory = 3,   //!< allocation failed (MemoryError)
};

/*! \brief Base of every exception the runtime and plugins throw. */
class DLARRAY_EXPORT Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ~Error() override = default;
  /*! \brief The kind, which picks the Python exception type. */
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

/*! \brief Shapes that do not fit the op (ValueError). */
class DLARRAY_EXPORT ShapeError : public Error {
 public:
  explicit ShapeError(const std::string& msg) : Error(ErrorKind::kValue, msg) {}
  ~ShapeError() override = default;
};

/*! \brief A dtype the op or the call does not support (TypeError). */
class DLARRAY_EXPORT DTypeError : public Error {
 public:
  explicit DTypeError(const std::string& msg) : Error(ErrorKind::kType, msg) {}
  ~DTypeError() override = default;
};

/*! \brief Operands on different devices, a device id out of range, ... (ValueError). */
class DLARRAY_EXPORT DeviceError : public Error {
 public:
  explicit DeviceError(const std::string& msg) : Error(ErrorKind::kValue, msg) {}
  ~DeviceError() override = default;
};

/*! \brief A plugin that is missing or broken, a failing kernel or driver call (RuntimeError). */
class DLARRAY_EXPORT BackendError : public Error {
 public:
  explicit BackendError(const std::string& msg) : Error(ErrorKind::kRuntime, msg) {}
  ~BackendError() override = default;
};

/*! \brief An allocation that cannot be satisfied (MemoryError). */
class DLARRAY_EXPORT OutOfMemoryError : public Error {
 public:
  explicit OutOfMemoryError(const std::string& msg) : Error(ErrorKind::kMemory, msg) {}
  ~OutOfMemoryError() override = default;
};

/*!
 * \brief A C function of the core or of another plugin (an extension's, see dlarray/ext/) failed
 *        and already recorded why: the plugin's adapter returns -1 without replacing the message.
 */
class CoreCallFailed : public Error {
 public:
  CoreCallFailed() : Error(ErrorKind::kRuntime, "a call into the dlarray core failed") {}
};

}  // namespace dlarray

#endif  // DLARRAY_ERRORS_H_

/*!
 * \file dlarray/runtime.h
 * \brief The core's C++ API: plugins, devices, arrays, op invocation. Used by the Python module
 *        and the C API; knows no device.
 */
#ifndef DLARRAY_RUNTIME_H_
#define DLARRAY_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlarray/device.h"
#include "dlarray/dlarray.h"
#include "dlarray/kernel.h"

namespace dlarray {

/*! \brief float32, the compute dtype. */
constexpr DLArrayDType kFloat32{kDLArrayFloat, 32, 1};

/*! \brief What happened to a plugin the loader tried. */
enum class PluginStatus {
  kLoaded = 0,    //!< usable
  kDisabled,      //!< named in DLARRAY_DISABLE_PLUGINS
  kOpenFailed,    //!< not a library, or a dependency is missing (dlerror text in reason)
  kMissingEntry,  //!< no DLARRAY_PLUGIN_ENTRY_SYMBOL
  kAbiMismatch,   //!< built for another DLARRAY_PLUGIN_ABI_VERSION (both in reason)
  kInitFailed,    //!< create_device or register_kernels threw (message in reason)
  kNoDevices,     //!< loaded, but device_count() is 0 (unavailable_reason in reason)
  kDuplicate,     //!< another plugin already serves its device type, or the same file
};

/*! \brief "loaded", "disabled", "open failed", ... */
DLARRAY_EXPORT const char* PluginStatusName(PluginStatus status);

/*! \brief One plugin the loader tried (dlarray.plugins()). */
struct PluginInfo {
  std::string name;    //!< descriptor name, or derived from the file name
  std::string path;    //!< absolute path of the library
  std::string origin;  //!< "plugins folder", "DLARRAY_PLUGIN_PATH" or "load_plugin"
  PluginStatus status = PluginStatus::kOpenFailed;
  std::string reason;            //!< why it is not loaded (empty when loaded)
  int device_type = 0;           //!< DLArrayDeviceType served, 0 for op-only plugins or unknown
  int device_count = 0;          //!< devices it reported
  uint32_t abi_version = 0;      //!< the plugin's ABI version (0 when unknown)
  std::vector<std::string> ops;  //!< ops it registered kernels for
};

/*! \brief Every plugin tried so far (discovery runs on first use of the runtime). */
DLARRAY_EXPORT std::vector<PluginInfo> Plugins();
/*! \brief Loads one plugin library explicitly; returns its record (check status). */
DLARRAY_EXPORT PluginInfo LoadPlugin(const std::string& path);
/*! \brief The folders searched at start-up, in order. */
DLARRAY_EXPORT std::vector<std::string> PluginSearchPath();

/*! \brief "cpu(0)", "gpu(1)", "device_type_7(0)". */
DLARRAY_EXPORT std::string ContextToString(DLContext ctx);
/*! \brief "cpu", "gpu", ... */
DLARRAY_EXPORT std::string DeviceTypeName(int device_type);
/*! \brief "float32", "int64", ... */
DLARRAY_EXPORT std::string DTypeToString(DLArrayDType dtype);
/*! \brief Bytes per element. */
inline size_t DTypeBytes(DLArrayDType t) { return (static_cast<size_t>(t.bits) * t.lanes + 7) / 8; }
inline bool operator==(DLArrayDType a, DLArrayDType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(DLArrayDType a, DLArrayDType b) { return !(a == b); }
inline bool operator==(DLContext a, DLContext b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
inline bool operator!=(DLContext a, DLContext b) { return !(a == b); }

/*!
 * \brief The Device serving ctx; throws BackendError with the stored reason when its plugin is not
 *        loaded, DeviceError when the id is out of range.
 */
DLARRAY_EXPORT Device* GetDevice(DLContext ctx);
/*! \brief Every usable context, CPU first. */
DLARRAY_EXPORT std::vector<DLContext> Devices();
/*! \brief Number of devices of a type (0 when no plugin serves it). */
DLARRAY_EXPORT int DeviceCount(int device_type);

/*! \brief An owned, compact array: the object behind NDArray and DLArrayHandle. */
class DLARRAY_EXPORT Array {
 public:
  /*! \brief Allocates an uninitialised array; validates shape, dtype and ctx. */
  static std::shared_ptr<Array> Empty(const std::vector<int64_t>& shape, DLContext ctx,
                                      DLArrayDType dtype = kFloat32);
  ~Array();
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  /*! \brief The DLPack-layout view (shape points into this object). */
  DLArray* dl() { return &dl_; }
  const DLArray* dl() const { return &dl_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  DLContext ctx() const { return dl_.ctx; }
  DLArrayDType dtype() const { return dl_.dtype; }
  int64_t size() const { return size_; }
  size_t nbytes() const { return nbytes_; }

 private:
  Array() = default;
  DLArray dl_{};
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  size_t nbytes_ = 0;
  Device* device_ = nullptr;
};

/*! \brief Id of a declared op, or -1. */
DLARRAY_EXPORT int FindOp(const std::string& name);
/*! \brief Id of a declared op; throws ValueError listing the known ops when there is none. */
DLARRAY_EXPORT int RequireOp(const std::string& name);
/*! \brief The schema of op id. */
DLARRAY_EXPORT const OpSchema& GetOpSchema(int op);
/*! \brief Names of every declared op. */
DLARRAY_EXPORT std::vector<std::string> ListOps();
/*! \brief Whether a kernel for (op, device type) is registered. */
DLARRAY_EXPORT bool HasKernel(int op, int device_type);

/*!
 * \brief Validates and runs op on its operands' device. Returns without waiting on asynchronous
 *        devices.
 */
DLARRAY_EXPORT void Invoke(int op, const DLArray* const* inputs, int num_inputs,
                           DLArray* const* outputs, int num_outputs, const double* attrs,
                           int num_attrs);

/*! \brief Copies between arrays of equal shape and dtype on any devices. */
DLARRAY_EXPORT void CopyFromTo(const DLArray* from, DLArray* to);
/*! \brief Waits for all queued work on ctx. */
DLARRAY_EXPORT void Synchronize(DLContext ctx);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_H_

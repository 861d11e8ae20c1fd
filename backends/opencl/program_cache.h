/*!
 * \file program_cache.h
 * \brief Compiled OpenCL programs of one device: built once per context, and kept on disk as
 *        program binaries in dlarray's cache (namespace "opencl", see disk_cache.h).
 */
#ifndef DLARRAY_BACKENDS_OPENCL_PROGRAM_CACHE_H_
#define DLARRAY_BACKENDS_OPENCL_PROGRAM_CACHE_H_

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cl_headers.h"

namespace dlarray::opencl {

struct DeviceInfo;

/*! \brief OpenCL C source of one program (one op), compiled per device and options. */
struct ProgramSource {
  const char* name;    //!< e.g. "relu", for messages
  const char* source;  //!< OpenCL C; the common preamble (kernel_common) is put in front
};

/*!
 * \brief The programs and kernels of one context. A program is found, in order: in memory; on
 *        disk, as the binary stored under the key of (source, options, platform, device, driver
 *        version), verified by its checksum; else built from source and its binary stored (written
 *        under a temporary name and renamed, with its manifest). A binary the driver rejects is
 *        rebuilt from source and replaced. The disk is optional: when the cache folder cannot be
 *        used, programs are built in every process.
 */
class ProgramCache {
 public:
  ProgramCache(cl_context context, const DeviceInfo& info, std::string where);
  ~ProgramCache();
  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;

  /*! \brief The kernel `kernel` of program src built with options (made once, then shared: set
   *         its arguments only under the device's launch mutex). */
  cl_kernel kernel(const ProgramSource& src, const std::string& options, const char* kernel);

  /*! \brief Where binaries are kept ("<folder>/opencl"), or why they are not. */
  static std::string DiskStatus();

 private:
  cl_program Build(const ProgramSource& src, const std::string& options);
  cl_program FromBinary(const std::string& binary, const std::string& options);
  cl_program FromSource(const std::string& source, const std::string& options,
                        const ProgramSource& src);

  cl_context context_;
  const DeviceInfo& info_;
  std::string where_;
  std::mutex mu_;
  std::map<std::pair<const char*, std::string>, cl_program> programs_;
  std::map<std::pair<cl_program, std::string>, cl_kernel> kernels_;
};

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_PROGRAM_CACHE_H_

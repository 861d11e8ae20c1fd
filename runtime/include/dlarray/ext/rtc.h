/*!
 * \file dlarray/ext/rtc.h
 * \brief Extension "dlarray.rtc.v1": CUDA kernels compiled at run time (NVRTC) and launched on a
 *        device's stream. Offered by the CUDA plugin, which loads NVRTC (libnvrtc.so) and the CUDA
 *        driver (libcuda.so.1) only when a function here first needs them, so the plugin loads and
 *        serves its ops where either is missing; unavailable_reason then says why.
 *
 * Reach the table with DLArrayDeviceApi::get_extension(self, DLARRAY_EXT_RTC_V1, &table) (C++:
 * dlarray::PluginExtension(kDLArrayCUDA, DLARRAY_EXT_RTC_V1), which also works where the plugin
 * found no GPU, so code can still be compiled for a given architecture).
 *
 * The life of a kernel: compile() gives a program (machine code for one architecture, or PTX, plus
 * NVRTC's log) that the caller may store (it depends only on the source, the options, the
 * architecture and the NVRTC version); module_load() puts that code on one device;
 * get_function() finds a kernel in the module; launch() queues it on a stream.
 *
 * Errors: functions returning int return 0, or -1 after recording the error with the dlarray
 * core's set_error (read it with dlarray::ThrowPluginError, runtime.h). Kinds: kDLArrayErrValue
 * for bad arguments (an unknown kernel name, a grid or block out of range, too much shared memory),
 * kDLArrayErrRuntime for NVRTC or CUDA failures (their error names are in the message).
 * A compile error is not a failure of compile(): the program records it (program_compiled() is 0)
 * with NVRTC's log.
 *
 * Threads: every function may be called from several threads at once; a program, module or
 * function must not be used while it is freed.
 */
#ifndef DLARRAY_EXT_RTC_H_
#define DLARRAY_EXT_RTC_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name (get_extension). A new layout gets a new name (".v2"). */
#define DLARRAY_EXT_RTC_V1 "dlarray.rtc.v1"

/*! \brief What a program holds and module_load takes. */
typedef enum {
  kDLArrayRtcCubin = 1, /*!< machine code for one architecture (sm_XX) */
  kDLArrayRtcPtx = 2,   /*!< PTX text, compiled by the driver when loaded */
} DLArrayRtcCodeKind;

/*! \brief The services unavailable_reason reports on. */
typedef enum {
  kDLArrayRtcCompiling = 0, /*!< compile: needs NVRTC */
  kDLArrayRtcLaunching = 1, /*!< module_load, launch: need the CUDA driver and a GPU */
} DLArrayRtcService;

/*! \brief The result of compile(): code and log (owned by the plugin; program_free). */
typedef struct DLArrayRtcProgram DLArrayRtcProgram;
/*! \brief Code loaded on one device (owned by the plugin; module_free). */
typedef struct DLArrayRtcModule DLArrayRtcModule;
/*! \brief One kernel of a module (owned by the module: valid until module_free). */
typedef struct DLArrayRtcFunction DLArrayRtcFunction;

/*! \brief What the driver says about a kernel (function_info). */
typedef struct DLArrayRtcFunctionInfo {
  uint64_t struct_size;             /*!< sizeof(DLArrayRtcFunctionInfo) of the caller */
  const char* name;                 /*!< the name get_function was given (the module owns it) */
  int32_t device_id;                /*!< the device of its module */
  int32_t max_threads_per_block;    /*!< most threads a block of this kernel may have */
  int32_t static_shared_bytes;      /*!< shared memory the kernel declares statically */
  int32_t max_dynamic_shared_bytes; /*!< most dynamic shared memory a launch may ask for */
  int32_t num_registers;            /*!< registers per thread */
  int32_t num_params;               /*!< kernel parameters; -1: neither driver nor code says */
} DLArrayRtcFunctionInfo;

/*! \brief The table get_extension returns (static: valid until the process exits). */
typedef struct DLArrayRtcExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayRtcExtV1) of the plugin */
  /*!
   * \brief Why a service (DLArrayRtcService) cannot work in this process, e.g. "NVRTC is not
   *        available: libnvrtc.so.13: cannot open shared object file"; "" when it can. The text
   *        stays valid until the process exits. Loads NVRTC or the driver on first use.
   */
  int (*unavailable_reason)(int32_t service, const char** out);
  /*! \brief NVRTC's version and the file it was loaded from (stays valid). */
  int (*nvrtc_version)(int32_t* major, int32_t* minor, const char** library_path);
  /*! \brief The architectures NVRTC makes machine code for, ascending (e.g. 75, 80, ..., 120). */
  int (*supported_archs)(const int32_t** archs, int32_t* count);
  /*! \brief The compute capability of a GPU as 10 * major + minor (90 for sm_90). */
  int (*device_arch)(int32_t device_id, int32_t* arch);
  /*!
   * \brief Compiles CUDA C++ source. arch > 0 adds the architecture option: machine code for
   *        sm_<arch> when NVRTC supports it, else PTX for the newest architecture it supports
   *        below arch (the driver compiles it when loaded). arch = 0 leaves the architecture to
   *        the options (machine code when they name an sm_ architecture, else PTX).
   *        name_expressions (may be NULL) are C++ names to look up after compiling (e.g.
   *        "scale<float>"); program_lowered_name gives their symbol names. Returns 0 with *out
   *        set when NVRTC ran, whether or not the source compiled (program_compiled says).
   */
  int (*compile)(const char* source, const char* program_name, const char* const* options,
                 int32_t num_options, const char* const* name_expressions, int32_t num_names,
                 int32_t arch, DLArrayRtcProgram** out);
  /*! \brief 1 when the program compiled, 0 when NVRTC reported errors (see program_log). */
  int32_t (*program_compiled)(const DLArrayRtcProgram* program);
  /*! \brief NVRTC's log (warnings and errors; "" when empty). Valid until program_free. */
  const char* (*program_log)(const DLArrayRtcProgram* program);
  /*! \brief The code (NULL when it did not compile), its size and its DLArrayRtcCodeKind. */
  const void* (*program_code)(const DLArrayRtcProgram* program, uint64_t* size, int32_t* kind);
  /*! \brief The symbol name of name_expressions[index] (NULL when out of range or not compiled). */
  const char* (*program_lowered_name)(const DLArrayRtcProgram* program, int32_t index);
  /*! \brief Frees a program (NULL is ignored). */
  void (*program_free)(DLArrayRtcProgram* program);
  /*! \brief Loads code of a DLArrayRtcCodeKind on a GPU (cuModuleLoadData). */
  int (*module_load)(int32_t device_id, const void* code, uint64_t size, int32_t kind,
                     DLArrayRtcModule** out);
  /*! \brief Unloads a module; its functions become invalid (NULL is ignored). */
  void (*module_free)(DLArrayRtcModule* module);
  /*! \brief The kernel of a module with this symbol name (kDLArrayErrValue when there is none). */
  int (*get_function)(DLArrayRtcModule* module, const char* name, DLArrayRtcFunction** out);
  /*! \brief Fills out (set out->struct_size first; fields beyond it are not written). */
  int (*function_info)(const DLArrayRtcFunction* function, DLArrayRtcFunctionInfo* out);
  /*!
   * \brief Queues the kernel on stream (NULL: the device's own stream, the one dlarray's ops use)
   *        of device_id, which must be the module's device. args[i] points to the value of
   *        parameter i (as cuLaunchKernel takes them). Checks the grid, the block and shared_mem
   *        against the kernel's and the device's limits first (kDLArrayErrValue); asks the driver
   *        for more than 48 KiB of dynamic shared memory when needed. Does not wait: a fault inside
   *        the kernel surfaces at the device's next synchronize.
   */
  int (*launch)(const DLArrayRtcFunction* function, const uint32_t grid[3], const uint32_t block[3],
                uint32_t shared_mem, void** args, int32_t device_id, void* stream);
} DLArrayRtcExtV1;

/* Deprecated names from before the extension naming rule (docs/architecture.md), kept for
 * out-of-tree plugins and callers; define DLARRAY_NO_DEPRECATED_EXT_NAMES to hide them. */
#ifndef DLARRAY_NO_DEPRECATED_EXT_NAMES
#define DLARRAY_EXT_RTC DLARRAY_EXT_RTC_V1
typedef DLArrayRtcExtV1 DLArrayRtcExt;
#endif

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_RTC_H_

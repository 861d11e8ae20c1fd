// A structural check of a plugin file before the dynamic loader sees it. glibc's loader trusts
// the file: a truncated library is mapped past its end (SIGBUS on first access), and tables that
// point outside the file are read anyway (SIGSEGV). Libraries that do not export the plugin entry
// symbol are refused here too, so none of their code (constructors) runs.
#ifndef DLARRAY_RUNTIME_SRC_ELF_CHECK_H_
#define DLARRAY_RUNTIME_SRC_ELF_CHECK_H_

#include <string>

#include "dlarray/runtime.h"

namespace dlarray {

/*! \brief The verdict on a file: ok, or a status (kOpenFailed, kMissingEntry) and a reason. */
struct PluginFileCheck {
  bool ok = true;
  bool missing = false;  //!< the path does not exist (left to the loader to report)
  PluginStatus status = PluginStatus::kLoaded;
  std::string reason;
};

/*!
 * \brief Checks that path is a regular file holding an ELF shared object for this machine whose
 *        segments, dynamic section, string, symbol, hash, version and relocation tables lie
 *        inside the file and its segments, and that it defines the symbol entry_symbol.
 *        Reads the file only (never maps or runs it).
 */
PluginFileCheck CheckPluginFile(const std::string& path, const char* entry_symbol);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_ELF_CHECK_H_

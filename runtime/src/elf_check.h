// The check of a plugin file before dlopen, only for what the system loader gets wrong (each case
// of tests/python/hostile/test_hostile_plugins.py shows what dlopen itself says):
// - glibc maps a loadable segment of a truncated library past the end of the file and dies of
//   SIGBUS when it touches it (an interrupted copy would otherwise crash the process);
// - it answers a library built for another machine (an aarch64 .so on x86-64) with "cannot open
//   shared object file: No such file or directory".
// (dlopen also blocks forever on a FIFO: the loader refuses what is not a regular file first.)
// Every other bad file (text, empty, 32-bit, an executable, a missing entry symbol...) gets a
// clear message from dlopen or the loader. This stops accidents, not attacks: a well-formed
// library runs whatever code it holds.
#ifndef DLARRAY_RUNTIME_SRC_ELF_CHECK_H_
#define DLARRAY_RUNTIME_SRC_ELF_CHECK_H_

#include <string>

namespace dlarray {

/*!
 * \brief Reads (never maps) the file at path: its ELF header and program headers.
 * \return Empty when dlopen may try the file, else why not, starting with the path.
 */
std::string CheckPluginFile(const std::string& path);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_ELF_CHECK_H_

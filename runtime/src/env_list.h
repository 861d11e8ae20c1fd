// Lists in environment variables (DLARRAY_DISABLE_PLUGINS=cuda,sigmoid_ops).
#ifndef DLARRAY_RUNTIME_SRC_ENV_LIST_H_
#define DLARRAY_RUNTIME_SRC_ENV_LIST_H_

#include <string>
#include <vector>

namespace dlarray {

/*!
 * \brief Splits value at sep; each entry loses leading and trailing blanks (space, tab, CR, LF);
 *        empty entries are dropped. " cpu, cuda," -> {"cpu", "cuda"}.
 */
std::vector<std::string> SplitEnvList(const std::string& value, char sep);

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_ENV_LIST_H_

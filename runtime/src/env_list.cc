// Lists in environment variables: split, trimmed, without empty entries.
#include "env_list.h"

namespace dlarray {

std::vector<std::string> SplitEnvList(const std::string& value, char sep) {
  std::vector<std::string> out;
  const char* blanks = " \t\r\n";
  size_t begin = 0;
  while (begin <= value.size()) {
    size_t end = value.find(sep, begin);
    if (end == std::string::npos) end = value.size();
    const std::string item = value.substr(begin, end - begin);
    const size_t first = item.find_first_not_of(blanks);
    if (first != std::string::npos) {
      out.push_back(item.substr(first, item.find_last_not_of(blanks) - first + 1));
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace dlarray

/*!
 * \file device_selection.cc
 * \brief DLARRAY_OPENCL_DEVICES (see device_selection.h).
 */
#include "device_selection.h"

#include <algorithm>
#include <cctype>

namespace dlarray::opencl {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool ParseIndex(const std::string& s, size_t* out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *out = static_cast<size_t>(std::stoul(s));
  return true;
}

bool PlatformMatches(const DeviceCandidate& d, const std::string& lowered) {
  return Lower(d.platform_name).find(lowered) != std::string::npos ||
         Lower(d.platform_vendor).find(lowered) != std::string::npos;
}

// A short name for a platform in messages: the first word of its vendor that a selector would
// match ("pocl", "NVIDIA", "Intel(R)" -> "intel", ...).
std::string ShortName(const DeviceCandidate& d) {
  static const char* const kKnown[] = {"pocl",  "nvidia",  "intel",  "amd",      "arm",
                                       "apple", "rusticl", "clover", "qualcomm", "imagination"};
  const std::string text = Lower(d.platform_name + " " + d.platform_vendor);
  for (const char* k : kKnown) {
    if (text.find(k) != std::string::npos) return k;
  }
  return Lower(d.platform_name.substr(0, d.platform_name.find(' ')));
}

}  // namespace

std::string DescribeCandidates(const std::vector<DeviceCandidate>& all) {
  std::string out;
  for (size_t i = 0; i < all.size(); ++i) {
    size_t index = 0;
    for (size_t j = 0; j < i; ++j) index += all[j].platform_name == all[i].platform_name;
    out += (i ? ", " : "") + ShortName(all[i]) + ":" + std::to_string(index) + " (" +
           all[i].device_name + ", platform \"" + all[i].platform_name + "\")";
  }
  return out.empty() ? "none" : out;
}

DeviceSelection SelectDevices(const std::string& spec, const std::vector<DeviceCandidate>& all) {
  DeviceSelection sel;
  auto add = [&](size_t i) {
    if (std::find(sel.chosen.begin(), sel.chosen.end(), i) == sel.chosen.end()) {
      sel.chosen.push_back(i);
    }
  };
  const std::string trimmed = Trim(spec);
  if (trimmed.empty()) {
    for (size_t i = 0; i < all.size(); ++i) add(i);
    return sel;
  }
  const std::string where = "DLARRAY_OPENCL_DEVICES='" + spec + "'";
  size_t start = 0;
  while (start <= trimmed.size()) {
    size_t comma = trimmed.find(',', start);
    if (comma == std::string::npos) comma = trimmed.size();
    const std::string item = Trim(trimmed.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) {
      sel.error = where +
                  ": an empty selector (selectors are 'platform:index', 'platform:*', "
                  "'platform', 'index' or '*', separated by commas)";
      break;
    }
    size_t index = 0;
    if (item == "*" || Lower(item) == "all") {
      for (size_t i = 0; i < all.size(); ++i) add(i);
      continue;
    }
    if (ParseIndex(item, &index)) {
      if (index >= all.size()) {
        sel.error = where + ": there is no device " + item + " (" + std::to_string(all.size()) +
                    " OpenCL device(s): " + DescribeCandidates(all) + ")";
        break;
      }
      add(index);
      continue;
    }
    const size_t colon = item.find(':');
    const std::string platform = Lower(Trim(item.substr(0, colon)));
    const std::string which = colon == std::string::npos ? "*" : Trim(item.substr(colon + 1));
    if (platform.empty() || (which != "*" && !ParseIndex(which, &index))) {
      sel.error = where + ": '" + item + "' is not a selector ('platform:index', 'platform:*', " +
                  "'platform', 'index' or '*'; devices: " + DescribeCandidates(all) + ")";
      break;
    }
    std::vector<size_t> matching;
    for (size_t i = 0; i < all.size(); ++i) {
      if (PlatformMatches(all[i], platform)) matching.push_back(i);
    }
    if (matching.empty()) {
      sel.error = where + ": no OpenCL platform's name or vendor contains '" + platform +
                  "' (devices: " + DescribeCandidates(all) + ")";
      break;
    }
    if (which == "*") {
      for (size_t i : matching) add(i);
    } else if (index < matching.size()) {
      add(matching[index]);
    } else {
      sel.error = where + ": '" + platform + "' platforms have " + std::to_string(matching.size()) +
                  " device(s), so there is no device " + std::to_string(index) +
                  " (devices: " + DescribeCandidates(all) + ")";
      break;
    }
  }
  if (!sel.error.empty()) sel.chosen.clear();
  return sel;
}

}  // namespace dlarray::opencl

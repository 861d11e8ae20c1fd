// Helpers shared by the doctest files.
#ifndef DLARRAY_TESTS_CPP_TEST_HELPERS_H_
#define DLARRAY_TESTS_CPP_TEST_HELPERS_H_

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dlarray/runtime.h"

namespace dltest {

inline DLContext Cpu() { return DLContext{kDLArrayCPU, 0}; }

/*! \brief A runtime array filled from a host vector. */
inline std::shared_ptr<dlarray::Array> Make(const std::vector<int64_t>& shape,
                                            const std::vector<float>& values,
                                            DLContext ctx = Cpu()) {
  auto a = dlarray::Array::Empty(shape, ctx);
  std::vector<int64_t> s = shape;
  DLArray host{const_cast<float*>(values.data()),
               Cpu(),
               static_cast<int32_t>(s.size()),
               dlarray::kFloat32,
               s.data(),
               nullptr,
               0};
  dlarray::CopyFromTo(&host, a->dl());
  return a;
}

/*! \brief The contents of an array, copied to the host. */
inline std::vector<float> Read(const dlarray::Array& a) {
  std::vector<float> out(static_cast<size_t>(a.size()));
  std::vector<int64_t> s = a.shape();
  DLArray host{out.data(), Cpu(), static_cast<int32_t>(s.size()), dlarray::kFloat32, s.data(),
               nullptr,    0};
  dlarray::CopyFromTo(a.dl(), &host);
  return out;
}

inline std::vector<float> Random(size_t n, float lo = -1, float hi = 1, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

/*! \brief Runs op by name with the given operands (returns the exception text, or ""). */
inline std::string TryInvoke(const std::string& op, std::vector<const DLArray*> in,
                             std::vector<DLArray*> out, std::vector<double> attrs = {}) {
  try {
    dlarray::Invoke(dlarray::RequireOp(op), in.data(), static_cast<int>(in.size()), out.data(),
                    static_cast<int>(out.size()), attrs.data(), static_cast<int>(attrs.size()));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace dltest

#endif  // DLARRAY_TESTS_CPP_TEST_HELPERS_H_

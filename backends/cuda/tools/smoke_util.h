// Helpers of the cuda_smoke and cuda_bench drivers: GPU arrays through the runtime, random data,
// op calls by name, and a checker that counts failures.
#ifndef DLARRAY_BACKENDS_CUDA_TOOLS_SMOKE_UTIL_H_
#define DLARRAY_BACKENDS_CUDA_TOOLS_SMOKE_UTIL_H_

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dlarray/runtime.h"

namespace smoke {

using ArrayPtr = std::shared_ptr<dlarray::Array>;

inline DLContext Gpu(int id = 0) { return DLContext{kDLArrayCUDA, id}; }
inline DLContext Cpu() { return DLContext{kDLArrayCPU, 0}; }

inline int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/*! \brief A host DLArray view of v with the given shape. */
inline DLArray HostView(std::vector<float>& v, std::vector<int64_t>& shape) {
  return DLArray{
      v.data(), Cpu(), static_cast<int32_t>(shape.size()), dlarray::kFloat32, shape.data(),
      nullptr,  0};
}

inline ArrayPtr Upload(std::vector<int64_t> shape, std::vector<float> values, int dev = 0) {
  auto a = dlarray::Array::Empty(shape, Gpu(dev));
  DLArray host = HostView(values, shape);
  dlarray::CopyFromTo(&host, a->dl());
  return a;
}

inline std::vector<float> Download(const DLArray* a) {
  std::vector<int64_t> shape(a->shape, a->shape + a->ndim);
  std::vector<float> out(static_cast<size_t>(Numel(shape)));
  DLArray host = HostView(out, shape);
  dlarray::CopyFromTo(a, &host);
  return out;
}

inline std::vector<float> Download(const ArrayPtr& a) { return Download(a->dl()); }

/*! \brief Fresh random values on every call. */
inline std::vector<float> Random(size_t n, float lo = -1.f, float hi = 1.f) {
  static std::mt19937 gen(12345);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

inline void Run(const std::string& op, std::vector<const DLArray*> in, std::vector<DLArray*> out,
                std::vector<double> attrs = {}) {
  dlarray::Invoke(dlarray::RequireOp(op), in.data(), static_cast<int>(in.size()), out.data(),
                  static_cast<int>(out.size()), attrs.data(), static_cast<int>(attrs.size()));
}

/*! \brief Fills a GPU array with NaN, so that unwritten elements show. */
inline void Poison(const ArrayPtr& a) { Run("array_set", {}, {a->dl()}, {std::nan("")}); }

inline std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

class Checker {
 public:
  void Expect(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) {
      ++failures_;
      std::printf("FAIL %s\n", what.c_str());
    }
  }

  /*! \brief |got - ref| <= atol + rtol |ref| everywhere (NaN only where ref is NaN). */
  void Close(const std::string& what, const std::vector<float>& got, const std::vector<double>& ref,
             double rtol = 1e-5, double atol = 1e-6) {
    ++checks_;
    if (got.size() != ref.size()) {
      ++failures_;
      std::printf("FAIL %s: %zu values, expected %zu\n", what.c_str(), got.size(), ref.size());
      return;
    }
    size_t bad = 0;
    size_t first = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const bool both_nan = std::isnan(got[i]) && std::isnan(ref[i]);
      const bool ok = both_nan || std::fabs(got[i] - ref[i]) <= atol + rtol * std::fabs(ref[i]);
      if (!ok && bad++ == 0) first = i;
    }
    if (bad > 0) {
      ++failures_;
      std::printf("FAIL %s: %zu of %zu differ; first at %zu: got %.9g, expected %.9g\n",
                  what.c_str(), bad, got.size(), first, got[first], ref[first]);
    }
  }

  /*! \brief ||got - ref|| / ||ref|| <= tol. */
  void RelNorm(const std::string& what, const std::vector<float>& got,
               const std::vector<double>& ref, double tol, double* err_out = nullptr) {
    ++checks_;
    double num = 0;
    double den = 0;
    for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
      num += (got[i] - ref[i]) * (got[i] - ref[i]);
      den += ref[i] * ref[i];
    }
    const double err = std::sqrt(num / (den > 0 ? den : 1));
    if (err_out) *err_out = err;
    if (!(err <= tol) || got.size() != ref.size()) {
      ++failures_;
      std::printf("FAIL %s: relative error %.3g > %.3g\n", what.c_str(), err, tol);
    }
  }

  int failures() const { return failures_; }
  int checks() const { return checks_; }

 private:
  int failures_ = 0;
  int checks_ = 0;
};

}  // namespace smoke

#endif  // DLARRAY_BACKENDS_CUDA_TOOLS_SMOKE_UTIL_H_

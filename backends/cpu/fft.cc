/*!
 * \file fft.cc
 * \brief The FFT primitives (fft_c2c, fft_r2c, fft_c2r along axis 1 of a compact (outer, n, inner)
 *        layout; runtime/src/fft_ops.cc says the forms) through pocketfft (docs/fft.md says why
 *        that library): mixed radix for 2, 3, 4, 5, 7, 11 and Bluestein's algorithm for the other
 *        prime factors, so every length is O(n log n). pocketfft reads and writes the strided
 *        signals itself (a transform along any axis needs no transpose) and transforms a few
 *        signals at once with SIMD. The signals are split over the backend's thread pool along
 *        whichever of outer and inner is longer; pocketfft's own threads stay unused
 *        (nthreads = 1), its plan cache (a mutex-guarded LRU of 16 plans per type) serves every
 *        thread.
 *
 * Built once for every instruction set path (CMakeLists.txt): pocketfft's templates are the
 * slowest code of the backend to compile, and NumPy runs the same code at the same baseline.
 */
#include "fft.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "dlarray/dlarray.h"
#include "dlarray/errors.h"
#include "parallel.h"

// pocketfft keeps no plans unless asked: 16 per plan type (its LRU, guarded by a mutex), so a
// repeated length costs no twiddle computation and no allocation of the plan's tables.
#define POCKETFFT_CACHE_SIZE 16
#include "pocketfft_hdronly.h"

namespace dlarray::cpu {
namespace {

enum class Form { kC2C, kR2C, kC2R };

template <typename T>
T* At(const DLArray* a) {
  return reinterpret_cast<T*>(static_cast<char*>(a->data) + a->byte_offset);
}

// The first exception of the tasks of a parallel loop (a task must not throw through the pool).
class FirstError {
 public:
  template <typename F>
  void Run(F&& f) {
    try {
      f();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  std::exception_ptr error() const { return error_; }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

// Rows [r0, r1) of a (rows, n) layout (inner = 1), one at a time, as NumPy runs them: each row is
// copied into its place in the output once and transformed there (pocketfft's strided path would
// copy it into a buffer and back). The real transforms (RealRows) use pocketfft's packed
// "halfcomplex" order [r0, r1, i1, r2, i2, ...]: placed one real into the output row of n / 2 + 1
// complex values, it becomes that row's (re, im) pairs by moving r0 down and writing the zero
// imaginary parts; c2r packs its input the other way round.
template <typename T>
void ComplexRows(const pocketfft::detail::pocketfft_c<T>& plan, const void* in, void* out,
                 int64_t r0, int64_t r1, int64_t n, bool forward, T scale) {
  using C = std::complex<T>;
  for (int64_t r = r0; r < r1; ++r) {
    C* row = static_cast<C*>(out) + r * n;
    if (in != out) std::copy_n(static_cast<const C*>(in) + r * n, n, row);  // _nd: in place
    plan.exec(reinterpret_cast<pocketfft::detail::cmplx<T>*>(row), scale, forward);
  }
}

template <typename T>
void RealRows(const pocketfft::detail::pocketfft_r<T>& plan, Form form, const void* in, void* out,
              int64_t r0, int64_t r1, int64_t n, bool forward, T scale) {
  using C = std::complex<T>;
  const int64_t half = n / 2 + 1;
  for (int64_t r = r0; r < r1; ++r) {
    if (form == Form::kR2C) {
      T* res = reinterpret_cast<T*>(static_cast<C*>(out) + r * half);  // 2 * half reals
      std::copy_n(static_cast<const T*>(in) + r * n, n, res + 1);
      plan.exec(res + 1, scale, true);
      res[0] = res[1];
      res[1] = 0;
      if (n % 2 == 0) res[n + 1] = 0;
      if (!forward) {  // ihfft: the conjugate
        for (int64_t k = 1; k < half; ++k) res[2 * k + 1] = -res[2 * k + 1];
      }
    } else {
      const T* x = reinterpret_cast<const T*>(static_cast<const C*>(in) + r * half);
      T* res = static_cast<T*>(out) + r * n;
      res[0] = x[0];
      std::copy_n(x + 2, n - 1, res + 1);
      if (forward) {  // hfft: the inverse transform of the conjugate
        for (int64_t j = 2; j < n; j += 2) res[j] = -res[j];
      }
      plan.exec(res, scale, false);
    }
  }
}

// Signals per chunk of the strided path: a multiple of the widest SIMD group pocketfft forms.
constexpr int64_t kChunkAlign = 8;

// One axis's transform: signals of length n along axis 1 of (outer, in_len, inner) at in, written
// to (outer, out_len, inner) at out (in_len and out_len: n or n / 2 + 1 on the complex side of a
// real transform). A c2c pass of an _nd op runs in place (in == out).
struct Axis {
  const void* in;
  void* out;
  int64_t outer, in_len, out_len, inner, n;
};

// Signals along axis 1 of (outer, n, inner), inner > 1: pocketfft's strided path, which
// transforms a few signals at once with SIMD (in place too). Chunks split the longer of outer and
// inner; the strides stay those of the whole array.
template <typename T>
void TransformStrided(Form form, const Axis& a, bool forward, T scale, int64_t work,
                      FirstError* failed) {
  using C = std::complex<T>;
  const int64_t outer = a.outer, inner = a.inner;
  const ptrdiff_t in_item = form == Form::kR2C ? sizeof(T) : sizeof(C);
  const ptrdiff_t out_item = form == Form::kC2R ? sizeof(T) : sizeof(C);
  const pocketfft::stride_t in_stride{a.in_len * inner * in_item, inner * in_item, in_item};
  const pocketfft::stride_t out_stride{a.out_len * inner * out_item, inner * out_item, out_item};
  const bool split_outer = outer >= inner;
  ParallelFor(split_outer ? outer : inner, work, kChunkAlign, [&](int64_t i0, int64_t i1) {
    failed->Run([&] {
      const size_t count = static_cast<size_t>(i1 - i0);
      const pocketfft::shape_t shape{split_outer ? count : static_cast<size_t>(outer),
                                     static_cast<size_t>(a.n),
                                     split_outer ? static_cast<size_t>(inner) : count};
      const char* src =
          static_cast<const char*>(a.in) + i0 * (split_outer ? in_stride[0] : in_item);
      char* dst = static_cast<char*>(a.out) + i0 * (split_outer ? out_stride[0] : out_item);
      switch (form) {
        case Form::kC2C:
          pocketfft::c2c<T>(shape, in_stride, out_stride, {1}, forward,
                            reinterpret_cast<const C*>(src), reinterpret_cast<C*>(dst), scale, 1);
          break;
        case Form::kR2C:
          pocketfft::r2c<T>(shape, in_stride, out_stride, size_t{1}, forward,
                            reinterpret_cast<const T*>(src), reinterpret_cast<C*>(dst), scale, 1);
          break;
        case Form::kC2R:
          pocketfft::c2r<T>(shape, in_stride, out_stride, size_t{1}, forward,
                            reinterpret_cast<const C*>(src), reinterpret_cast<T*>(dst), scale, 1);
          break;
      }
    });
  });
}

template <typename T>
void TransformAxis(Form form, const Axis& a, bool forward, T scale, FirstError* failed) {
  const int64_t outer = a.outer, inner = a.inner, n = a.n;
  if (outer == 0 || inner == 0) return;
  const double log_n = std::log2(static_cast<double>(n) + 1.0);
  const int64_t work = static_cast<int64_t>(static_cast<double>(outer * inner * n) * (1.0 + log_n));
  if (inner > 1) {
    TransformStrided<T>(form, a, forward, scale, work, failed);
    return;
  }
  const void* src = a.in;
  void* dst = a.out;
  const size_t length = static_cast<size_t>(n);  // plans: cached by pocketfft (16 per type)
  if (form == Form::kC2C) {
    const auto plan = pocketfft::detail::get_plan<pocketfft::detail::pocketfft_c<T>>(length);
    ParallelFor(outer, work, 1, [&](int64_t r0, int64_t r1) {
      failed->Run([&] { ComplexRows<T>(*plan, src, dst, r0, r1, n, forward, scale); });
    });
  } else {
    const auto plan = pocketfft::detail::get_plan<pocketfft::detail::pocketfft_r<T>>(length);
    ParallelFor(outer, work, 1, [&](int64_t r0, int64_t r1) {
      failed->Run([&] { RealRows<T>(*plan, form, src, dst, r0, r1, n, forward, scale); });
    });
  }
}

// The product of dims [begin, end) of a.
int64_t Product(const DLArray* a, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d) p *= a->shape[d];
  return p;
}

// The transform over axes 1..k of (outer, n_1, ..., n_k, inner) (k = ndim - 2; 1 for the 1-D
// forms): one pass per axis, the real one (n_k) first for r2c and last for c2r, the complex passes
// in place in the output (c2r: in a copy of its input, which is const), the scale applied once.
template <typename T>
void Transform(const KernelContext& ctx, Form form, FirstError* failed) {
  using C = std::complex<T>;
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  const int k = in->ndim - 2;
  const DLArray* full = form == Form::kC2R ? out : in;  // the operand of the full lengths
  const bool forward = ctx.attrs[0] != 0.0;
  const T scale = static_cast<T>(ctx.attrs[1]);
  // Axis d (< k) of the complex operand's layout (the output for c2c and r2c, a copy of the
  // input for c2r) at data, in place.
  const DLArray* cx = form == Form::kC2R ? in : out;
  auto complex_pass = [&](void* data, int d) {
    const int64_t len = cx->shape[d];
    const Axis a{data, data, Product(cx, 0, d), len, len, Product(cx, d + 1, cx->ndim), len};
    TransformAxis<T>(Form::kC2C, a, forward, T{1}, failed);
  };
  const int64_t in_len = in->shape[k], out_len = out->shape[k];
  const int64_t before = Product(in, 0, k), after = in->shape[k + 1];
  if (form == Form::kC2R) {
    const void* src = At<const char>(in);
    std::vector<C> copy;
    if (k > 1) {  // the complex axes first, on a copy
      copy.assign(At<const C>(in), At<const C>(in) + Product(in, 0, in->ndim));
      for (int d = k - 1; d >= 1; --d) complex_pass(copy.data(), d);
      src = copy.data();
    }
    TransformAxis<T>(form, Axis{src, At<char>(out), before, in_len, out_len, after, full->shape[k]},
                     forward, scale, failed);
    return;
  }
  TransformAxis<T>(
      form, Axis{At<const char>(in), At<char>(out), before, in_len, out_len, after, full->shape[k]},
      forward, scale, failed);
  for (int d = k - 1; d >= 1; --d) complex_pass(At<char>(out), d);
}

// The precision is the real operand's: complex64 pairs with float32, complex128 with float64.
// pocketfft's errors (std::bad_alloc, std::runtime_error) become dlarray errors naming the op.
void Run(const KernelContext& ctx, Form form) {
  const DLArrayDType t = form == Form::kC2R ? ctx.outputs[0]->dtype : ctx.inputs[0]->dtype;
  const bool is_double = t.code == kDLArrayComplex ? t.bits == 128 : t.bits == 64;
  FirstError failed;
  failed.Run([&] {
    if (is_double) {
      Transform<double>(ctx, form, &failed);
    } else {
      Transform<float>(ctx, form, &failed);
    }
  });
  if (!failed.error()) return;
  const DLArray* full = form == Form::kC2R ? ctx.outputs[0] : ctx.inputs[0];
  const int64_t n = full->shape[full->ndim - 2];
  try {
    std::rethrow_exception(failed.error());
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(std::string(ctx.op_name) + " on cpu: out of memory for length " +
                           std::to_string(n));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw BackendError(std::string(ctx.op_name) + " on cpu: pocketfft failed: " + e.what());
  }
}

}  // namespace

void FftC2CKernel(const KernelContext& ctx) { Run(ctx, Form::kC2C); }
void FftR2CKernel(const KernelContext& ctx) { Run(ctx, Form::kR2C); }
void FftC2RKernel(const KernelContext& ctx) { Run(ctx, Form::kC2R); }

}  // namespace dlarray::cpu

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
    std::copy_n(static_cast<const C*>(in) + r * n, n, row);
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

// Signals along axis 1 of (outer, n, inner), inner > 1: pocketfft's strided path, which
// transforms a few signals at once with SIMD. Chunks split the longer of outer and inner; the
// strides stay those of the whole array.
template <typename T>
void TransformStrided(Form form, const DLArray* in, const DLArray* out, int64_t n, bool forward,
                      T scale, int64_t work, FirstError* failed) {
  using C = std::complex<T>;
  const int64_t outer = in->shape[0], inner = in->shape[2];
  const ptrdiff_t in_item = form == Form::kR2C ? sizeof(T) : sizeof(C);
  const ptrdiff_t out_item = form == Form::kC2R ? sizeof(T) : sizeof(C);
  const pocketfft::stride_t in_stride{in->shape[1] * inner * in_item, inner * in_item, in_item};
  const pocketfft::stride_t out_stride{out->shape[1] * inner * out_item, inner * out_item,
                                       out_item};
  const bool split_outer = outer >= inner;
  ParallelFor(split_outer ? outer : inner, work, kChunkAlign, [&](int64_t i0, int64_t i1) {
    failed->Run([&] {
      const size_t count = static_cast<size_t>(i1 - i0);
      const pocketfft::shape_t shape{split_outer ? count : static_cast<size_t>(outer),
                                     static_cast<size_t>(n),
                                     split_outer ? static_cast<size_t>(inner) : count};
      const char* src = At<const char>(in) + i0 * (split_outer ? in_stride[0] : in_item);
      char* dst = At<char>(out) + i0 * (split_outer ? out_stride[0] : out_item);
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
void Transform(const KernelContext& ctx, Form form, FirstError* failed) {
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  const int64_t outer = in->shape[0], inner = in->shape[2];
  const int64_t n = form == Form::kC2R ? out->shape[1] : in->shape[1];  // the signal's length
  if (outer == 0 || inner == 0) return;
  const bool forward = ctx.attrs[0] != 0.0;
  const T scale = static_cast<T>(ctx.attrs[1]);
  const double log_n = std::log2(static_cast<double>(n) + 1.0);
  const int64_t work = static_cast<int64_t>(static_cast<double>(outer * inner * n) * (1.0 + log_n));
  if (inner > 1) {
    TransformStrided<T>(form, in, out, n, forward, scale, work, failed);
    return;
  }
  const void* src = At<const char>(in);
  void* dst = At<char>(out);
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
  const int64_t n = form == Form::kC2R ? ctx.outputs[0]->shape[1] : ctx.inputs[0]->shape[1];
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

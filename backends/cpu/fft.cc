/*!
 * \file fft.cc
 * \brief The FFT primitives (fft_c2c, fft_r2c, fft_c2r over the rows of a compact (batch, n)
 *        layout; runtime/src/fft_ops.cc says the forms) through pocketfft (docs/fft.md says why
 *        that library): mixed radix for 2, 3, 4, 5, 7, 11 and Bluestein's algorithm for the other
 *        prime factors, so every length is O(n log n). Rows are split over the backend's thread
 *        pool in chunks of whole vector groups (pocketfft transforms a few rows at once with SIMD);
 *        pocketfft's own threads stay unused (nthreads = 1), its plan cache (a mutex-guarded LRU
 *        of 16 plans per type) serves every thread.
 *
 * Built once for every instruction set path (CMakeLists.txt): pocketfft's templates are the
 * slowest code of the backend to compile, and NumPy runs the same code at the same baseline.
 */
#include "fft.h"

#include <cmath>
#include <complex>
#include <exception>
#include <mutex>
#include <string>

#include "dlarray/errors.h"
#include "parallel.h"
#include "pocketfft_hdronly.h"

namespace dlarray::cpu {
namespace {

enum class Form { kC2C, kR2C, kC2R };

template <typename T>
T* At(const DLArray* a) {
  return reinterpret_cast<T*>(static_cast<char*>(a->data) + a->byte_offset);
}

// Rows per chunk: a multiple of the widest SIMD group pocketfft forms (8 floats).
constexpr int64_t kRowAlign = 8;

template <typename T>
void Transform(const KernelContext& ctx, Form form) {
  using C = std::complex<T>;
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  const int64_t rows = in->shape[0];
  const int64_t n = form == Form::kC2R ? out->shape[1] : in->shape[1];  // the signal's length
  const int64_t in_cols = in->shape[1], out_cols = out->shape[1];
  if (rows == 0) return;
  const bool forward = ctx.attrs[0] != 0.0;
  const T scale = static_cast<T>(ctx.attrs[1]);
  const ptrdiff_t in_item = form == Form::kR2C ? sizeof(T) : sizeof(C);
  const ptrdiff_t out_item = form == Form::kC2R ? sizeof(T) : sizeof(C);
  const double log_n = std::log2(static_cast<double>(n) + 1.0);
  const int64_t work = static_cast<int64_t>(static_cast<double>(rows * n) * (1.0 + log_n));
  std::mutex error_mutex;
  std::exception_ptr error;
  ParallelFor(rows, work, kRowAlign, [&](int64_t r0, int64_t r1) {
    try {
      const size_t count = static_cast<size_t>(r1 - r0);
      const pocketfft::stride_t in_stride{in_cols * in_item, in_item};
      const pocketfft::stride_t out_stride{out_cols * out_item, out_item};
      const char* src = At<const char>(in) + r0 * in_cols * in_item;
      char* dst = At<char>(out) + r0 * out_cols * out_item;
      const pocketfft::shape_t shape{count, static_cast<size_t>(n)};
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
    } catch (...) {  // a task must not throw through the pool: the first error is rethrown below
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  });
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(std::string(ctx.op_name) + " on cpu: out of memory for length " +
                           std::to_string(n));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw BackendError(std::string(ctx.op_name) + " on cpu: pocketfft failed: " + e.what());
  }
}

// The precision is the real operand's: complex64 pairs with float32, complex128 with float64.
void Run(const KernelContext& ctx, Form form) {
  const DLArrayDType t = form == Form::kC2R ? ctx.outputs[0]->dtype : ctx.inputs[0]->dtype;
  const bool is_double = t.code == kDLArrayComplex ? t.bits == 128 : t.bits == 64;
  if (is_double) {
    Transform<double>(ctx, form);
  } else {
    Transform<float>(ctx, form);
  }
}

}  // namespace

void FftC2CKernel(const KernelContext& ctx) { Run(ctx, Form::kC2C); }
void FftR2CKernel(const KernelContext& ctx) { Run(ctx, Form::kR2C); }
void FftC2RKernel(const KernelContext& ctx) { Run(ctx, Form::kC2R); }

}  // namespace dlarray::cpu

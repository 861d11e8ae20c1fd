// Each product runs as cublaslt_tune.cc chose for its problem: the fastest of cuBLASLt's
// algorithms for the epilogue and of the unfused alternative below (matrix_multiply's cuBLAS
// product, then one bias (+ relu) kernel, or reduce_sum_axis_zero's kernel for the bias
// gradient), timed on the first call. The unfused alternative also runs where cuBLASLt has no
// algorithm for the product (a dtype, layout or alignment its epilogues refuse). Where cuBLASLt
// itself is missing the kernels throw a BackendError before anything is queued: dlarray.linear
// and the executor then run the composite (matrix_multiply and the elementwise ops).
#include <cstdint>
#include <string>

#include "cublaslt_tune.h"
#include "dlarray/errors.h"
#include "dtype.cuh"
#include "gemm_types.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kBiasThreads = 256;

// out[r, c] = out[r, c] + bias[c], then relu (x < 0 ? 0 : x, as the relu op), rounded to T as
// the composite's add and relu round: results equal the composite's bit for bit.
template <typename T>
__global__ void __launch_bounds__(kBiasThreads)
    AddBiasKernel(T* out, const T* __restrict__ bias, int64_t total, int64_t n, bool relu) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const T sum = Store<T>(Load(out[i]) + Load(bias[i % n]));
    out[i] = relu && Load(sum) < 0 ? Store<T>(0) : sum;
  }
}

// A sub-call of the fused op's kernel context: another op's inputs, outputs and attributes.
KernelContext SubCall(const KernelContext& ctx, const char* op, const DLArray* const* inputs,
                      int num_inputs, DLArray* const* outputs, int num_outputs, const double* attrs,
                      int num_attrs) {
  KernelContext sub = ctx;
  sub.op_name = op;
  sub.inputs = inputs;
  sub.num_inputs = num_inputs;
  sub.outputs = outputs;
  sub.num_outputs = num_outputs;
  sub.attrs = attrs;
  sub.num_attrs = num_attrs;
  return sub;
}

// linear without cuBLASLt: matrix_multiply's product, then the bias (+ relu) in place.
void LinearUnfused(const KernelContext& ctx) {
  const DLArray *x = ctx.inputs[0], *w = ctx.inputs[1], *bias = ctx.inputs[2];
  DLArray* out = ctx.outputs[0];
  const DLArray* const inputs[] = {x, w};
  const double no_transposes[] = {0.0, 0.0};
  MatrixMultiplyKernel(
      SubCall(ctx, "matrix_multiply", inputs, 2, ctx.outputs, 1, no_transposes, 2));
  const LaunchEnv env = Prepare(ctx);
  const int64_t total = NumElements(out);
  const int blocks = GridSize(total, kBiasThreads, FullWaveBlocks(env, kBiasThreads));
  Dispatch<kFloatTypes>(out->dtype, "linear", [&](auto tag) {
    using T = typename decltype(tag)::type;
    AddBiasKernel<T><<<blocks, kBiasThreads, 0, env.stream>>>(
        Data<T>(out), Data<const T>(bias), total, out->shape[1], ctx.attrs[0] != 0.0);
  });
  CHECK_LAUNCH("AddBiasKernel");
}

// linear_weight_grad without cuBLASLt: matrix_multiply's x^T . dy, reduce_sum_axis_zero's dy.
void LinearWeightGradUnfused(const KernelContext& ctx) {
  const DLArray* const inputs[] = {ctx.inputs[0], ctx.inputs[1]};
  const double transpose_x[] = {1.0, 0.0};
  MatrixMultiplyKernel(SubCall(ctx, "matrix_multiply", inputs, 2, ctx.outputs, 1, transpose_x, 2));
  ReduceSumAxisZeroKernel(
      SubCall(ctx, "reduce_sum_axis_zero", inputs + 1, 1, ctx.outputs + 1, 1, nullptr, 0));
}

// D (m x n) = A (m x k, untransposed) . op_b(B) into ctx's output 0, with an epilogue; every
// operand is compact (row-major buffers read column-major), so the leading dimensions follow.
void Product(const KernelContext& ctx, const char* op, cublasOperation_t op_b, int64_t m, int64_t n,
             int64_t k, const DLArray* a, const DLArray* b, cublasLtEpilogue_t epilogue, void* bias,
             void (*unfused)(const KernelContext&)) {
  if (m == 0 || n == 0 || k == 0) {  // dlarray.linear* answer these through the composite
    throw BackendError(std::string("cuBLASLt: ") + op +
                       " has an empty dimension (m=" + std::to_string(m) +
                       ", n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  }
  const LaunchEnv env = Prepare(ctx);
  const GemmTypes types = GemmTypesOf(env, ctx.outputs[0]->dtype, op);
  LtProblem p{};
  p.op = op;
  p.type = types.type;
  p.compute = types.compute;
  p.op_a = CUBLAS_OP_N;
  p.op_b = op_b;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = Data<const char>(a);
  p.lda = m;
  p.b = Data<const char>(b);
  p.ldb = op_b == CUBLAS_OP_N ? k : n;
  p.d = Data<char>(ctx.outputs[0]);
  p.ldd = m;
  p.epilogue = epilogue;
  p.bias = bias;
  RunLtProblem(env, p, [&ctx, unfused] { unfused(ctx); });
}

}  // namespace

void LinearKernel(const KernelContext& ctx) {
  const DLArray *x = ctx.inputs[0], *w = ctx.inputs[1], *bias = ctx.inputs[2];
  // out^T (n x m) = w^T . x^T, the bias per row of D
  const cublasLtEpilogue_t epilogue =
      ctx.attrs[0] != 0.0 ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  Product(ctx, "linear", CUBLAS_OP_N, w->shape[1], x->shape[0], x->shape[1], w, x, epilogue,
          const_cast<char*>(Data<const char>(bias)),  // read only: a BIAS epilogue
          LinearUnfused);
}

void LinearWeightGradKernel(const KernelContext& ctx) {
  const DLArray *x = ctx.inputs[0], *dy = ctx.inputs[1];
  // dw^T (n x k) = dy^T . x, x's buffer read transposed; dbias = the sum of dy^T over the
  // batch (BGRADA, which needs A untransposed)
  Product(ctx, "linear_weight_grad", CUBLAS_OP_T, dy->shape[1], x->shape[1], x->shape[0], dy, x,
          CUBLASLT_EPILOGUE_BGRADA, Data<char>(ctx.outputs[1]), LinearWeightGradUnfused);
}

}  // namespace cuda
}  // namespace dlarray

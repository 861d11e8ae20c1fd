// linear and linear_weight_grad: a dense layer's products with cuBLASLt epilogues, so the bias
// add, the relu and the bias gradient ride in the product's kernel instead of kernels of their
// own (issue 23: the MNIST MLP step).
//
// cuBLASLt is column-major: a row-major (r x c) buffer is its (c x r) transpose, so
//   linear:             out^T (n x m) = w^T (n x k) . x^T (k x m); the bias (n,) is per row of
//                       D, CUBLASLT_EPILOGUE_BIAS / RELU_BIAS;
//   linear_weight_grad: dw^T (n x k) = dy^T (n x m) . x (m x k), x's buffer read transposed;
//                       dbias (n,) = the sum of A = dy^T over the product's k (the batch),
//                       CUBLASLT_EPILOGUE_BGRADA.
// Any failure here (no cuBLASLt, no algorithm for the layout, dtype or alignment) throws a
// BackendError naming the cuBLASLt call before anything is queued: dlarray.linear and the
// executor then run the composite (matrix_multiply and the elementwise ops) instead.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "cublaslt_library.h"
#include "dlarray/errors.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

// A status check that names the call.
void LtCheck(cublasStatus_t st, const char* call) {
  if (st != CUBLAS_STATUS_SUCCESS) {
    throw BackendError(std::string("cuBLASLt call ") + call + " failed with status " +
                       std::to_string(static_cast<int>(st)));
  }
}

constexpr size_t kWorkspaceBytes = size_t{4} << 20;

// Per device: the handle, and a workspace made at the first call outside a graph recording
// (cudaMalloc cannot be recorded; until then products run without one).
struct DeviceLt {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

// One product: operand A (op_a), B (op_b), D = op(A) op(B), column-major, with an epilogue.
struct Problem {
  cudaDataType_t type;
  cublasComputeType_t compute;
  cublasOperation_t op_a, op_b;
  int64_t m, n, k;
  const void* a;
  int64_t lda;
  const void* b;
  int64_t ldb;
  void* d;
  int64_t ldd;
  cublasLtEpilogue_t epilogue;
  void* bias;  // read (BIAS) or written (BGRADA)
};

// What the heuristic's answer depends on: the problem's shapes, types and pointer alignments.
using AlgoKey = std::tuple<int, int, int, int, int, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int, uint32_t, uint32_t, uint32_t, uint32_t, size_t>;
struct AlgoEntry {
  bool found;
  cublasLtMatmulAlgo_t algo;
  size_t workspace;
};

std::mutex g_mu;  // guards the two maps
std::map<int, DeviceLt> g_devices;
std::map<AlgoKey, AlgoEntry> g_algos;

uint32_t Alignment(const void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && v % align != 0) align /= 2;
  return align;
}

DeviceLt& Device(const LaunchEnv& env, const CublasLtLibrary& lib) {
  DeviceLt& d = g_devices[env.id];
  if (d.handle == nullptr) LtCheck(lib.Create(&d.handle), "cublasLtCreate");
  if (d.workspace == nullptr && !env.device->capturing(env.id)) {
    if (cudaMalloc(&d.workspace, kWorkspaceBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      d.workspace = nullptr;  // products run without one
    }
  }
  return d;
}

// The descriptors of one call, destroyed with it.
struct Descriptors {
  const CublasLtLibrary& lib;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  explicit Descriptors(const CublasLtLibrary& l) : lib(l) {}
  ~Descriptors() {
    if (pref != nullptr) (void)lib.MatmulPreferenceDestroy(pref);
    if (d != nullptr) (void)lib.MatrixLayoutDestroy(d);
    if (b != nullptr) (void)lib.MatrixLayoutDestroy(b);
    if (a != nullptr) (void)lib.MatrixLayoutDestroy(a);
    if (op != nullptr) (void)lib.MatmulDescDestroy(op);
  }
};

template <typename T>
void SetDesc(const Descriptors& s, cublasLtMatmulDescAttributes_t attr, const T& value,
             const char* what) {
  LtCheck(s.lib.MatmulDescSetAttribute(s.op, attr, &value, sizeof(value)), what);
}

template <typename T>
void SetPref(const Descriptors& s, cublasLtMatmulPreferenceAttributes_t attr, const T& value,
             const char* what) {
  LtCheck(s.lib.MatmulPreferenceSetAttribute(s.pref, attr, &value, sizeof(value)), what);
}

std::string Describe(const Problem& p) {
  return "m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
         " epilogue " + std::to_string(static_cast<int>(p.epilogue)) + " type " +
         std::to_string(static_cast<int>(p.type));
}

// The heuristic's algorithm for the problem the descriptors say (asked once per key).
const AlgoEntry& FindAlgo(int id, const DeviceLt& dev, Descriptors* s, const Problem& p,
                          size_t workspace) {
  const uint32_t align_a = Alignment(p.a), align_b = Alignment(p.b), align_d = Alignment(p.d);
  const AlgoKey key{id,
                    static_cast<int>(p.type),
                    static_cast<int>(p.compute),
                    p.op_a,
                    p.op_b,
                    p.m,
                    p.n,
                    p.k,
                    p.lda,
                    p.ldb,
                    p.ldd,
                    static_cast<int>(p.epilogue),
                    align_a,
                    align_b,
                    align_d,
                    Alignment(p.bias),
                    workspace};
  auto it = g_algos.find(key);
  if (it != g_algos.end()) return it->second;
  const CublasLtLibrary& lib = s->lib;
  LtCheck(lib.MatmulPreferenceCreate(&s->pref), "cublasLtMatmulPreferenceCreate");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t{workspace},
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  // The heuristic assumes 256-byte aligned operands unless told: say what they are.
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a,
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b,
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_d,
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_d,
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)");
  cublasLtMatmulHeuristicResult_t result{};
  int count = 0;
  const cublasStatus_t st = lib.MatmulAlgoGetHeuristic(dev.handle, s->op, s->a, s->b, s->d, s->d,
                                                       s->pref, 1, &result, &count);
  AlgoEntry entry{};
  entry.found = st == CUBLAS_STATUS_SUCCESS && count > 0 && result.state == CUBLAS_STATUS_SUCCESS;
  if (entry.found) {
    entry.algo = result.algo;
    entry.workspace = result.workspaceSize;
  } else if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED) {
    LtCheck(st, "cublasLtMatmulAlgoGetHeuristic");
  }
  return g_algos.emplace(key, entry).first->second;  // "none" is remembered too
}

void Run(const LaunchEnv& env, const Problem& p) {
  const CublasLtLibrary& lib = CublasLtLibrary::Get();
  if (!lib.ok) throw BackendError(lib.reason);  // "cuBLASLt is not available: ..."
  std::lock_guard<std::mutex> lock(g_mu);
  DeviceLt& dev = Device(env, lib);
  const size_t workspace = dev.workspace != nullptr ? kWorkspaceBytes : 0;
  const bool f64 = p.type == CUDA_R_64F;
  Descriptors s(lib);
  LtCheck(lib.MatmulDescCreate(&s.op, p.compute, f64 ? CUDA_R_64F : CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  SetDesc(s, CUBLASLT_MATMUL_DESC_TRANSA, p.op_a, "cublasLtMatmulDescSetAttribute(TRANSA)");
  SetDesc(s, CUBLASLT_MATMUL_DESC_TRANSB, p.op_b, "cublasLtMatmulDescSetAttribute(TRANSB)");
  SetDesc(s, CUBLASLT_MATMUL_DESC_EPILOGUE, p.epilogue, "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  SetDesc(s, CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias,
          "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  const bool a_n = p.op_a == CUBLAS_OP_N, b_n = p.op_b == CUBLAS_OP_N;
  LtCheck(lib.MatrixLayoutCreate(&s.a, p.type, a_n ? p.m : p.k, a_n ? p.k : p.m, p.lda),
          "cublasLtMatrixLayoutCreate(A)");
  LtCheck(lib.MatrixLayoutCreate(&s.b, p.type, b_n ? p.k : p.n, b_n ? p.n : p.k, p.ldb),
          "cublasLtMatrixLayoutCreate(B)");
  LtCheck(lib.MatrixLayoutCreate(&s.d, p.type, p.m, p.n, p.ldd), "cublasLtMatrixLayoutCreate(D)");
  const AlgoEntry& algo = FindAlgo(env.id, dev, &s, p, workspace);
  if (!algo.found) {
    throw BackendError("cuBLASLt has no algorithm for this product (" + Describe(p) + ")");
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  LtCheck(lib.Matmul(dev.handle, s.op, alpha, p.a, s.a, p.b, s.b, beta, p.d, s.d, p.d, s.d,
                     &algo.algo, dev.workspace, algo.workspace, env.stream),
          "cublasLtMatmul");
}

// The data and compute types of dtype t: float32 (TF32 tensor cores when asked), float16 and
// bfloat16 (float32 accumulation and scalars), float64.
void Types(const LaunchEnv& env, DLArrayDType t, const char* op, Problem* p) {
  p->type = CUDA_R_32F;
  p->compute = env.device->matmul_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (t.code == kDLArrayFloat && t.bits == 16) {
    p->type = CUDA_R_16F;
    p->compute = CUBLAS_COMPUTE_32F;
  } else if (t.code == kDLArrayBfloat && t.bits == 16) {
    p->type = CUDA_R_16BF;
    p->compute = CUBLAS_COMPUTE_32F;
  } else if (t.code == kDLArrayFloat && t.bits == 64) {
    p->type = CUDA_R_64F;
    p->compute = CUBLAS_COMPUTE_64F;
  } else if (!(t.code == kDLArrayFloat && t.bits == 32)) {
    throw DTypeError(std::string(op) + " on cuda: no kernel for " + std::to_string(t.bits) +
                     "-bit type code " + std::to_string(t.code));
  }
}

// D (m x n) = A (m x k, untransposed) . op_b(B) into ctx's output 0, with an epilogue; every
// operand is compact (row-major buffers read column-major), so the leading dimensions follow.
void Product(const KernelContext& ctx, const char* op, cublasOperation_t op_b, int64_t m, int64_t n,
             int64_t k, const DLArray* a, const DLArray* b, cublasLtEpilogue_t epilogue,
             void* bias) {
  if (m == 0 || n == 0 || k == 0) {  // dlarray.linear* answer these through the composite
    throw BackendError(std::string("cuBLASLt: ") + op +
                       " has an empty dimension (m=" + std::to_string(m) +
                       ", n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  }
  const LaunchEnv env = Prepare(ctx);
  DLArray* d = ctx.outputs[0];
  Problem p{};
  Types(env, d->dtype, op, &p);
  p.op_a = CUBLAS_OP_N;
  p.op_b = op_b;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = Data<const char>(a);
  p.lda = m;
  p.b = Data<const char>(b);
  p.ldb = op_b == CUBLAS_OP_N ? k : n;
  p.d = Data<char>(d);
  p.ldd = m;
  p.epilogue = epilogue;
  p.bias = bias;
  Run(env, p);
}

}  // namespace

void LinearKernel(const KernelContext& ctx) {
  const DLArray *x = ctx.inputs[0], *w = ctx.inputs[1], *bias = ctx.inputs[2];
  // out^T (n x m) = w^T . x^T, the bias per row of D
  const cublasLtEpilogue_t epilogue =
      ctx.attrs[0] != 0.0 ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  Product(ctx, "linear", CUBLAS_OP_N, w->shape[1], x->shape[0], x->shape[1], w, x, epilogue,
          const_cast<char*>(Data<const char>(bias)));  // read only: a BIAS epilogue
}

void LinearWeightGradKernel(const KernelContext& ctx) {
  const DLArray *x = ctx.inputs[0], *dy = ctx.inputs[1];
  // dw^T (n x k) = dy^T . x, x's buffer read transposed; dbias = the sum of dy^T over the
  // batch (BGRADA, which needs A untransposed)
  Product(ctx, "linear_weight_grad", CUBLAS_OP_T, dy->shape[1], x->shape[1], x->shape[0], dy, x,
          CUBLASLT_EPILOGUE_BGRADA, Data<char>(ctx.outputs[1]));
}

}  // namespace cuda
}  // namespace dlarray

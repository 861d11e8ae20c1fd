// The choice of how a cuBLASLt product with an epilogue runs (issue 23).
//
// cuBLASLt's heuristic ranks its algorithms by a model, and for the MNIST MLP's small products
// with BIAS / RELU_BIAS / BGRADA epilogues its first answer was slower on an H100 than cuBLAS's
// own product followed by a bias (+ relu) or column-sum kernel: the fused step took 0.138 ms,
// the unfused one 0.118. So the first call of a problem (its shapes, types, epilogue,
// transposes, operand alignments, workspace and device) times, on the call's stream with CUDA
// events, up to kMaxAlgos of the heuristic's results, split-k variants of its first few (see
// SplitKVariants) and the caller's unfused alternative, and keeps the fastest: a fused product
// is never slower than the unfused ops as this GPU runs them.
//
// Each candidate is timed as the GPU runs it back to back (TimeLaunches, launch_timer.h), on
// the call's own outputs (the core rejects outputs that overlap inputs), which the chosen run
// then overwrites. It costs some milliseconds per problem, once.
//
// No timing while the stream records a CUDA graph (events and a host wait cannot be recorded):
// a problem first seen then runs the heuristic's first result, and is timed at its next call
// outside a recording. The executor runs a plan op by op before it records it, so its choices
// exist by then. DLARRAY_CUBLASLT_TUNE=0 turns timing off: the heuristic's first result always
// (=unfused: the unfused alternative always, as the tests check it).
//
// Results: every candidate computes the same product, but algorithms split the k sum
// differently (tiles, split-k), so the result's rounding may change with the choice, within the
// float tolerance of a product; the choice is fixed once made, so a process's results repeat.
#include "cublaslt_tune.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "cublaslt_library.h"
#include "dlarray/errors.h"
#include "launch_timer.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kMaxAlgos = 16;   // heuristic results timed
constexpr int kSplitBases = 4;  // of them, those whose split-k variants are timed too
constexpr int32_t kSplits[] = {2, 4, 8, 16};
constexpr uint32_t kSchemes[] = {CUBLASLT_REDUCTION_SCHEME_INPLACE,
                                 CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE};
constexpr const char* kTuneEnv = "DLARRAY_CUBLASLT_TUNE";

// A status check that names the call.
void LtCheck(cublasStatus_t st, const char* call) {
  if (st != CUBLAS_STATUS_SUCCESS) {
    throw BackendError(std::string("cuBLASLt call ") + call + " failed with status " +
                       std::to_string(static_cast<int>(st)));
  }
}

// DLARRAY_CUBLASLT_TUNE: unset or "1" time, "0" the heuristic's first result, "unfused" the
// unfused alternative always (to test it, or to compare).
enum class Mode { kTime, kFirst, kUnfused };

Mode TuneMode() {
  static const Mode mode = [] {
    const char* v = std::getenv(kTuneEnv);
    if (v == nullptr || *v == '\0' || std::strcmp(v, "1") == 0) return Mode::kTime;
    if (std::strcmp(v, "0") == 0) return Mode::kFirst;
    if (std::strcmp(v, "unfused") == 0) return Mode::kUnfused;
    throw Error(ErrorKind::kValue, std::string(kTuneEnv) + "='" + v +
                                       "': expected 1 (time the algorithms, the default), 0 "
                                       "(the heuristic's first) or unfused");
  }();
  return mode;
}

// Whether env's stream records a CUDA graph: the device's own recording, or another's (a
// library capturing our stream), which cudaStreamIsCapturing sees.
bool Recording(const LaunchEnv& env) {
  if (env.device->capturing(env.id)) return true;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDA_CALL(cudaStreamIsCapturing(env.stream, &capture));
  return capture != cudaStreamCaptureStatusNone;
}

uint32_t Alignment(const void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && v % align != 0) align /= 2;
  return align;
}

// What a choice depends on: device, types, transposes, shapes, epilogue, alignments, workspace.
using Key = std::tuple<int, int, int, int, int, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int, uint32_t, uint32_t, uint32_t, uint32_t, size_t>;

Key KeyOf(int id, const LtProblem& p, size_t workspace) {
  return Key{id,
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
             Alignment(p.a),
             Alignment(p.b),
             Alignment(p.d),
             Alignment(p.bias),
             workspace};
}

struct Choice {
  bool timed = false;
  bool fused = false;  // else the caller's unfused alternative
  cublasLtMatmulAlgo_t algo{};
  int candidates = 0;  // the heuristic's results (all timed when timed)
  int variants = 0;    // split-k variants of them timed
  int32_t split = 1;   // the picked algorithm's k splits
  cublasStatus_t heuristic = CUBLAS_STATUS_SUCCESS;  // cublasLtMatmulAlgoGetHeuristic's status
  int pick = -1;  // algo: a heuristic result below candidates, else a split-k variant
  float fused_us = -1, first_us = -1, unfused_us = -1;  // per launch; -1: not timed
  std::string why;                                      // of an untimed choice
  std::string text;                                     // the problem
};

std::mutex g_mu;  // guards the two maps
std::map<int, cublasLtHandle_t> g_handles;
std::map<Key, Choice> g_choices;

cublasLtHandle_t Handle(int id, const CublasLtLibrary& lib) {
  cublasLtHandle_t& h = g_handles[id];
  if (h == nullptr) LtCheck(lib.Create(&h), "cublasLtCreate");
  return h;
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

void MakeDescriptors(const LtProblem& p, Descriptors* s) {
  const CublasLtLibrary& lib = s->lib;
  LtCheck(lib.MatmulDescCreate(&s->op, p.compute, p.type == CUDA_R_64F ? CUDA_R_64F : CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  SetDesc(*s, CUBLASLT_MATMUL_DESC_TRANSA, p.op_a, "cublasLtMatmulDescSetAttribute(TRANSA)");
  SetDesc(*s, CUBLASLT_MATMUL_DESC_TRANSB, p.op_b, "cublasLtMatmulDescSetAttribute(TRANSB)");
  SetDesc(*s, CUBLASLT_MATMUL_DESC_EPILOGUE, p.epilogue,
          "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  SetDesc(*s, CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias,
          "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  const bool a_n = p.op_a == CUBLAS_OP_N, b_n = p.op_b == CUBLAS_OP_N;
  LtCheck(lib.MatrixLayoutCreate(&s->a, p.type, a_n ? p.m : p.k, a_n ? p.k : p.m, p.lda),
          "cublasLtMatrixLayoutCreate(A)");
  LtCheck(lib.MatrixLayoutCreate(&s->b, p.type, b_n ? p.k : p.n, b_n ? p.n : p.k, p.ldb),
          "cublasLtMatrixLayoutCreate(B)");
  LtCheck(lib.MatrixLayoutCreate(&s->d, p.type, p.m, p.n, p.ldd), "cublasLtMatrixLayoutCreate(D)");
}

// Up to `most` of the heuristic's algorithms for the problem, its best guess first. A status
// other than success (NOT_SUPPORTED: none for this problem; INVALID_VALUE: a layout or
// alignment the epilogue refuses) goes to *status, not an exception: the unfused kernels run.
std::vector<cublasLtMatmulHeuristicResult_t> Heuristic(cublasLtHandle_t handle, Descriptors* s,
                                                       const LtProblem& p, size_t workspace,
                                                       int most, cublasStatus_t* status) {
  LtCheck(s->lib.MatmulPreferenceCreate(&s->pref), "cublasLtMatmulPreferenceCreate");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t{workspace},
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  // The heuristic assumes 256-byte aligned operands unless told: say what they are.
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, Alignment(p.a),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, Alignment(p.b),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, Alignment(p.d),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)");
  SetPref(*s, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, Alignment(p.d),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)");
  std::vector<cublasLtMatmulHeuristicResult_t> results(most);
  int count = 0;
  const cublasStatus_t st = s->lib.MatmulAlgoGetHeuristic(handle, s->op, s->a, s->b, s->d, s->d,
                                                          s->pref, most, results.data(), &count);
  *status = st;
  if (st != CUBLAS_STATUS_SUCCESS) count = 0;
  results.resize(count);
  std::vector<cublasLtMatmulHeuristicResult_t> usable;
  for (const auto& r : results) {
    if (r.state == CUBLAS_STATUS_SUCCESS) usable.push_back(r);
  }
  return usable;
}

// The k splits of an algorithm (1: none, or unknown).
int32_t SplitK(const CublasLtLibrary& lib, const cublasLtMatmulAlgo_t& algo) {
  int32_t split = 1;
  size_t written = 0;
  if (lib.MatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                       sizeof(split), &written) != CUBLAS_STATUS_SUCCESS) {
    return 1;
  }
  return split;
}

// Split-k variants of the heuristic's first kSplitBases unsplit results that cuBLASLt accepts
// for the problem (cublasLtMatmulAlgoCheck) within the workspace. A small output over a long k
// (the MLP's weight gradients: 784 x 256 over a batch of 1000) makes few output tiles, so an
// unsplit kernel leaves most multiprocessors idle; the heuristic does not always offer splits
// with an epilogue.
std::vector<cublasLtMatmulHeuristicResult_t> SplitKVariants(
    cublasLtHandle_t handle, const Descriptors& s,
    const std::vector<cublasLtMatmulHeuristicResult_t>& algos, size_t workspace) {
  const CublasLtLibrary& lib = s.lib;
  std::vector<cublasLtMatmulHeuristicResult_t> out;
  int bases = 0;
  for (const auto& r : algos) {
    if (bases == kSplitBases) break;
    if (SplitK(lib, r.algo) != 1) continue;
    ++bases;
    for (const int32_t split : kSplits) {
      for (const uint32_t scheme : kSchemes) {
        cublasLtMatmulAlgo_t algo = r.algo;
        cublasLtMatmulHeuristicResult_t checked{};
        if (lib.MatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                             sizeof(split)) != CUBLAS_STATUS_SUCCESS ||
            lib.MatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
                                             sizeof(scheme)) != CUBLAS_STATUS_SUCCESS ||
            lib.MatmulAlgoCheck(handle, s.op, s.a, s.b, s.d, s.d, &algo, &checked) !=
                CUBLAS_STATUS_SUCCESS ||
            checked.workspaceSize > workspace) {
          continue;  // not for this problem: the next
        }
        checked.algo = algo;  // the check reports on it, never writes it
        checked.state = CUBLAS_STATUS_SUCCESS;
        out.push_back(checked);
      }
    }
  }
  return out;
}

// Everything a launch of the fused product needs.
struct FusedCall {
  const CublasLtLibrary& lib;
  cublasLtHandle_t handle;
  const Descriptors& s;
  const LtProblem& p;
  void* workspace;
  size_t workspace_bytes;
  cudaStream_t stream;

  cublasStatus_t operator()(const cublasLtMatmulAlgo_t& algo) const {
    static const float one_f = 1.0f, zero_f = 0.0f;
    static const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = p.type == CUDA_R_64F;
    const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
    return lib.Matmul(handle, s.op, alpha, p.a, s.a, p.b, s.b, beta, p.d, s.d, p.d, s.d, &algo,
                      workspace, workspace_bytes, stream);
  }
};

const char* EpilogueName(cublasLtEpilogue_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_BIAS:
      return "BIAS";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_BGRADA:
      return "BGRADA";
    default:
      return "epilogue ?";
  }
}

const char* TypeName(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F:
      return "float32";
    case CUDA_R_64F:
      return "float64";
    case CUDA_R_16F:
      return "float16";
    case CUDA_R_16BF:
      return "bfloat16";
    default:
      return "type ?";
  }
}

std::string Describe(const LtProblem& p) {
  return std::string(p.op) + " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
         " k=" + std::to_string(p.k) + " " + TypeName(p.type) +
         (p.compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? " (tf32)" : "") + " " +
         EpilogueName(p.epilogue) + (p.op_b == CUBLAS_OP_T ? " B^T" : "") + " align " +
         std::to_string(Alignment(p.a)) + "/" + std::to_string(Alignment(p.b)) + "/" +
         std::to_string(Alignment(p.d));
}

// Times the heuristic's results, their split-k variants and `unfused`; the fastest becomes
// the choice.
void Time(const FusedCall& run, std::vector<cublasLtMatmulHeuristicResult_t> algos,
          const std::function<void()>& unfused, Choice* c) {
  const auto variants = SplitKVariants(run.handle, run.s, algos, run.workspace_bytes);
  c->variants = static_cast<int>(variants.size());
  algos.insert(algos.end(), variants.begin(), variants.end());
  std::vector<std::function<bool()>> launches;
  for (const auto& r : algos) {
    launches.push_back([&run, &r] { return run(r.algo) == CUBLAS_STATUS_SUCCESS; });
  }
  launches.push_back([&unfused] {
    try {
      unfused();
      return true;
    } catch (const std::exception&) {  // e.g. no cuBLAS: then a fused algorithm runs
      return false;
    }
  });
  const std::vector<float> us = TimeLaunches(run.stream, launches);
  c->timed = true;
  c->unfused_us = us.back();
  if (!algos.empty()) c->first_us = us[0];
  for (size_t i = 0; i < algos.size(); ++i) {
    if (us[i] >= 0 && (c->fused_us < 0 || us[i] < c->fused_us)) {
      c->fused_us = us[i];
      c->pick = static_cast<int>(i);
    }
  }
  c->fused = c->pick >= 0 && (c->unfused_us < 0 || c->fused_us <= c->unfused_us);
  if (c->pick >= 0) c->split = SplitK(run.lib, algos[c->pick].algo);
  if (c->fused) c->algo = algos[c->pick].algo;
  if (c->pick < 0 && c->unfused_us < 0) {
    throw BackendError("cuBLASLt: no algorithm for " + c->text +
                       " could run, and its unfused alternative failed too");
  }
}

std::string Line(const Choice& c) {
  auto us = [](float v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f", v);
    return std::string(text);
  };
  std::string s = c.text + ": ";
  const std::string heuristic = c.heuristic == CUBLAS_STATUS_SUCCESS
                                    ? ""
                                    : " (cublasLtMatmulAlgoGetHeuristic status " +
                                          std::to_string(static_cast<int>(c.heuristic)) + ")";
  if (!c.timed) {
    return s + (c.fused ? "FUSED" : "UNFUSED") + ", untimed (" + c.why + "); " +
           (c.fused ? "the heuristic's first of " : "cuBLASLt algorithms: ") +
           std::to_string(c.candidates) + heuristic;
  }
  const std::string fused =
      c.pick < 0 ? "no fused algorithm ran (of " + std::to_string(c.candidates) + ")" + heuristic
                 : "fused " + us(c.fused_us) + " us (" +
                       (c.pick < c.candidates
                            ? "heuristic result " + std::to_string(c.pick + 1)
                            : "split-k variant " + std::to_string(c.pick - c.candidates + 1)) +
                       " of " + std::to_string(c.candidates) + " + " + std::to_string(c.variants) +
                       ", k split " + std::to_string(c.split) + "; the heuristic's first " +
                       us(c.first_us) + " us)";
  const std::string plain =
      c.unfused_us < 0 ? std::string("unfused failed") : "unfused " + us(c.unfused_us) + " us";
  return s + (c.fused ? "FUSED; " + fused + ", " + plain : "UNFUSED; " + plain + ", " + fused);
}

}  // namespace

void RunLtProblem(const LaunchEnv& env, const LtProblem& p, const std::function<void()>& unfused) {
  const CublasLtLibrary& lib = CublasLtLibrary::Get();
  if (!lib.ok) throw BackendError(lib.reason);  // "cuBLASLt is not available: ..."
  // cuBLAS's workspace (made before any recording): the products of both libraries run on
  // this one stream, one after the other, so they can share it.
  const std::pair<void*, size_t> workspace = env.device->cublas_workspace(env.id);
  Descriptors s(lib);
  MakeDescriptors(p, &s);
  std::unique_lock<std::mutex> lock(g_mu);
  const cublasLtHandle_t handle = Handle(env.id, lib);
  const FusedCall run{lib, handle, s, p, workspace.first, workspace.second, env.stream};
  const Key key = KeyOf(env.id, p, workspace.second);
  auto it = g_choices.find(key);
  const Mode mode = TuneMode();
  if (it == g_choices.end() || (!it->second.timed && mode == Mode::kTime && !Recording(env))) {
    const bool timing = mode == Mode::kTime && !Recording(env);
    Choice c;
    c.text = Describe(p);
    const auto algos = Heuristic(handle, &s, p, workspace.second, kMaxAlgos, &c.heuristic);
    c.candidates = static_cast<int>(algos.size());
    if (timing) {
      Time(run, algos, unfused, &c);
    } else {
      c.why = mode == Mode::kTime ? "first seen during a CUDA graph recording"
                                  : std::string(kTuneEnv) + "=" + std::getenv(kTuneEnv);
      c.fused = !algos.empty() && mode != Mode::kUnfused;
      if (c.fused) {
        c.pick = 0;
        c.algo = algos[0].algo;
      }
    }
    it = g_choices.insert_or_assign(key, c).first;
  }
  const bool fused = it->second.fused;
  const cublasLtMatmulAlgo_t algo = it->second.algo;
  lock.unlock();
  if (fused) {
    LtCheck(run(algo), "cublasLtMatmul");
  } else {
    unfused();
  }
}

std::string CublasLtChoices(int id) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string out;
  for (const auto& [key, choice] : g_choices) {
    if (std::get<0>(key) == id) out += Line(choice) + "\n";
  }
  return out;
}

}  // namespace cuda
}  // namespace dlarray

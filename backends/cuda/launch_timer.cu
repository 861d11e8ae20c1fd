// TimeLaunches (launch_timer.h).
#include <cstddef>
#include <functional>
#include <vector>

#include "cuda_check.h"
#include "launch_timer.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kRuns = 4;                   // launches per timed sample
constexpr int kRounds = 3;                 // samples per candidate, the least kept
constexpr long long kSpinCycles = 200000;  // ~100 us at 2 GHz: longer than kRuns launches take

__global__ void SpinKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Events made and destroyed with the timing (also when making one of them fails).
struct Events {
  std::vector<cudaEvent_t> all;
  explicit Events(size_t n) : all(n, nullptr) {
    try {
      for (cudaEvent_t& e : all) CUDA_CALL(cudaEventCreate(&e));
    } catch (...) {
      Destroy();
      throw;
    }
  }
  ~Events() { Destroy(); }
  void Destroy() noexcept {
    for (cudaEvent_t& e : all) {
      if (e != nullptr) (void)cudaEventDestroy(e);
      e = nullptr;
    }
  }
};

}  // namespace

std::vector<float> TimeLaunches(cudaStream_t stream,
                                const std::vector<std::function<bool()>>& launches) {
  const size_t n = launches.size();
  std::vector<float> us(n, -1.0f);
  std::vector<bool> ok(n);
  for (size_t c = 0; c < n; ++c) ok[c] = launches[c]();  // warm-up (module loads), and checks
  (void)cudaGetLastError();
  Events events(2 * n * kRounds);
  for (int r = 0; r < kRounds; ++r) {
    for (size_t c = 0; c < n; ++c) {
      if (!ok[c]) continue;
      cudaEvent_t start = events.all[2 * (r * n + c)], stop = events.all[2 * (r * n + c) + 1];
      SpinKernel<<<1, 1, 0, stream>>>(kSpinCycles);
      CHECK_LAUNCH("SpinKernel");
      CUDA_CALL(cudaEventRecord(start, stream));
      for (int i = 0; i < kRuns; ++i) launches[c]();
      CUDA_CALL(cudaEventRecord(stop, stream));
    }
  }
  CUDA_CALL(cudaStreamSynchronize(stream));
  for (int r = 0; r < kRounds; ++r) {
    for (size_t c = 0; c < n; ++c) {
      if (!ok[c]) continue;
      float ms = 0;
      CUDA_CALL(
          cudaEventElapsedTime(&ms, events.all[2 * (r * n + c)], events.all[2 * (r * n + c) + 1]));
      const float per = ms * 1e3f / kRuns;
      if (us[c] < 0 || per < us[c]) us[c] = per;
    }
  }
  return us;
}

}  // namespace cuda
}  // namespace dlarray

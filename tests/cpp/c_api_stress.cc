// C API stress test: threads allocate, fill, copy, run ops on and free arrays, check every result,
// and race each other to free (and use) shared handles. Run under ThreadSanitizer by
// `make sanitize` (with OMP_NUM_THREADS=1: libgomp is not instrumented).
//
//   c_api_stress [seconds=2] [threads=8]
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dlarray/c_runtime_api.h"

namespace {

std::atomic<int> failures{0};
std::atomic<long> ops_run{0};

void Fail(const char* what, int line) {
  if (failures.fetch_add(1) < 20) {
    std::fprintf(stderr, "c_api_stress: line %d: %s (last error: %s)\n", line, what,
                 DLGetLastError());
  }
}
#define EXPECT(cond)                    \
  do {                                  \
    if (!(cond)) Fail(#cond, __LINE__); \
  } while (0)

constexpr DLContext kCpu{kDLArrayCPU, 0};
constexpr DLArrayDType kF32{kDLArrayFloat, 32, 1};

struct Host {
  std::vector<float> v;
  std::vector<int64_t> shape;
  DLArray dl{};
  explicit Host(std::vector<int64_t> s) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    v.assign(static_cast<size_t>(n), 0.0f);
    dl =
        DLArray{v.data(), kCpu, static_cast<int32_t>(shape.size()), kF32, shape.data(), nullptr, 0};
  }
};

DLArrayHandle Alloc(const std::vector<int64_t>& shape) {
  DLArrayHandle h = nullptr;
  EXPECT(DLArrayAlloc(shape.data(), static_cast<int>(shape.size()), kCpu, &h) == 0);
  return h;
}

// One round of private work: every result is checked against a scalar reference.
void PrivateRound(std::mt19937& gen) {
  std::uniform_int_distribution<int> dim(1, 40);
  const int64_t m = dim(gen), k = dim(gen), n = dim(gen);
  Host x({m, k}), w({k, n}), y({m, n});
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  for (float& f : x.v) f = val(gen);
  for (float& f : w.v) f = val(gen);
  DLArrayHandle a = Alloc({m, k}), b = Alloc({k, n}), c = Alloc({m, n}), r = Alloc({m, k});
  EXPECT(DLArrayCopyFromTo(&x.dl, a, nullptr) == 0);
  EXPECT(DLArrayCopyFromTo(&w.dl, b, nullptr) == 0);
  EXPECT(DLArrayMatrixMultiply(a, 0, b, 0, c) == 0);
  EXPECT(DLArrayCopyFromTo(c, &y.dl, nullptr) == 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float ref = 0.0f;
      for (int64_t p = 0; p < k; ++p) ref += x.v[i * k + p] * w.v[p * n + j];
      EXPECT(std::fabs(y.v[i * n + j] - ref) <= 1e-4f * (1.0f + std::fabs(ref)));
    }
  }
  EXPECT(DLArrayRelu(a, r) == 0);
  EXPECT(DLArrayMatrixElementwiseAddByConst(r, 2.0f, r) == 0);
  Host back({m, k});
  EXPECT(DLArrayCopyFromTo(r, &back.dl, nullptr) == 0);
  for (size_t i = 0; i < back.v.size(); ++i) EXPECT(back.v[i] == std::max(x.v[i], 0.0f) + 2.0f);
  DLArrayHandle ins[1] = {a};
  DLArrayHandle outs[1] = {r};
  EXPECT(DLArrayInvoke("copy", ins, 1, outs, 1, nullptr, 0) == 0);
  EXPECT(DLArrayCopyFromTo(r, &back.dl, nullptr) == 0);
  EXPECT(std::memcmp(back.v.data(), x.v.data(), x.v.size() * sizeof(float)) == 0);
  for (DLArrayHandle h : {a, b, c, r}) EXPECT(DLArrayFree(h) == 0);
  for (DLArrayHandle h : {a, b, c, r}) EXPECT(DLArrayFree(h) == -1);  // double free: an error
  EXPECT(DLArraySet(a, 1.0f) == -1);                                  // stale: an error
  ops_run.fetch_add(7, std::memory_order_relaxed);
}

// Shared handles: every thread tries to use and free each of them; exactly one free succeeds,
// and a use either sees the live array (and computes right) or reports a freed handle.
constexpr int kShared = 32;
std::atomic<DLArrayHandle> shared_handles[kShared];
std::atomic<int> shared_frees{0};

void SharedRound(std::mt19937& gen) {
  std::uniform_int_distribution<int> pick(0, kShared - 1);
  const int i = pick(gen);
  DLArrayHandle h = shared_handles[i].load();
  if (h == nullptr) return;
  Host out({16});
  if (DLArrayCopyFromTo(h, &out.dl, nullptr) == 0) {
    for (float f : out.v) EXPECT(f == 3.0f);
  } else {
    EXPECT(std::strstr(DLGetLastError(), "freed") != nullptr);
  }
  if (gen() % 4 == 0) {
    if (DLArrayFree(h) == 0) {
      shared_frees.fetch_add(1);
    } else {
      EXPECT(std::strstr(DLGetLastError(), "freed") != nullptr);
    }
  }
}

void RefillShared() {
  for (auto& slot : shared_handles) {
    DLArrayHandle h = Alloc({16});
    EXPECT(DLArraySet(h, 3.0f) == 0);
    DLArrayHandle old = slot.exchange(h);
    if (old != nullptr && DLArrayFree(old) == 0) shared_frees.fetch_add(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 8;
  RefillShared();
  const int initial = kShared;
  std::atomic<bool> stop{false};
  std::atomic<int> refills{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([t, &stop, &refills] {
      std::mt19937 gen(1234u + static_cast<unsigned>(t));
      while (!stop.load()) {
        PrivateRound(gen);
        for (int s = 0; s < 8; ++s) SharedRound(gen);
        if (t == 0 && gen() % 8 == 0) {
          RefillShared();
          refills.fetch_add(1);
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& th : pool) th.join();
  for (auto& slot : shared_handles) {
    DLArrayHandle h = slot.exchange(nullptr);
    if (DLArrayFree(h) == 0) shared_frees.fetch_add(1);
  }
  // Every shared handle ever made was freed exactly once.
  EXPECT(shared_frees.load() == initial + refills.load() * kShared);
  std::printf("c_api_stress: %d threads, %.1f s, %ld ops, %d shared-handle refills, %d failures\n",
              threads, seconds, ops_run.load(), refills.load(), failures.load());
  return failures.load() == 0 ? 0 : 1;
}

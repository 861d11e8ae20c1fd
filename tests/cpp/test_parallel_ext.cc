// "dlarray.parallel.v1": the CPU plugin's pool for other plugins' CPU kernels (ext/parallel.h),
// and the SDK's dlarray::ParallelFor over it (parallel.h).
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "dlarray/ext/parallel.h"
#include "dlarray/parallel.h"
#include "dlarray/runtime.h"

namespace {

const DLArrayParallelExtV1* Pool() {
  const void* ext = dlarray::DeviceExtension(kDLArrayCPU, DLARRAY_EXT_PARALLEL_V1);
  REQUIRE(ext != nullptr);
  const auto* pool = static_cast<const DLArrayParallelExtV1*>(ext);
  REQUIRE(DLARRAY_STRUCT_HAS(pool, DLArrayParallelExtV1, num_threads));
  return pool;
}

struct Coverage {
  std::vector<std::atomic<int>> hits;
  int64_t align;
  std::atomic<int64_t> ranges{0};
  std::atomic<bool> misaligned{false};
  Coverage(int64_t n, int64_t a) : hits(static_cast<size_t>(n)), align(a) {}
};

void Count(void* context, int64_t begin, int64_t end) {
  auto* c = static_cast<Coverage*>(context);
  if (begin % c->align != 0) c->misaligned = true;
  for (int64_t i = begin; i < end; ++i) c->hits[static_cast<size_t>(i)]++;
  c->ranges++;
}

// A fake device table whose get_extension hands out the real pool: what a CPU kernel call of an
// op plugin carries in DLArrayKernelCall::device.
int GetPool(void*, const char* name, const void** out) {
  *out = std::string(name) == DLARRAY_EXT_PARALLEL_V1 ? Pool() : nullptr;
  return 0;
}

struct FakeCall {
  DLArrayDeviceApi device{};
  DLArrayKernelCall call{};
  dlarray::KernelContext ctx{};
  explicit FakeCall(bool with_pool) {
    device.struct_size = sizeof device;
    device.get_extension = with_pool ? &GetPool : nullptr;
    call.struct_size = sizeof call;
    call.device = &device;
    ctx.device_type = kDLArrayCPU;
    ctx.call = &call;
  }
};

}  // namespace

TEST_CASE("parallel.v1 covers 0..n exactly once in aligned ranges") {
  const DLArrayParallelExtV1* pool = Pool();
  CHECK(pool->num_threads(pool->self) >= 1);
  struct Shape {
    int64_t n, work, align;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{1000, 1000, 16}, Shape{1000003, 1000003, 16},
                  Shape{100000, 100000, 7}, Shape{65, 1 << 20, 64}}) {
    CAPTURE(s.n);
    CAPTURE(s.align);
    Coverage c(s.n, s.align);
    REQUIRE(pool->parallel_for(pool->self, s.n, s.work, s.align, &Count, &c) == 0);
    bool once = true;
    for (auto& h : c.hits) once = once && h.load() == 1;
    CHECK(once);
    CHECK_FALSE(c.misaligned.load());
    if (s.work < 32768) CHECK(c.ranges.load() == 1);  // small loops stay on the calling thread
  }
  Coverage none(0, 1);
  CHECK(pool->parallel_for(pool->self, 0, 0, 1, &Count, &none) == 0);
  CHECK(none.ranges.load() == 0);
}

TEST_CASE("parallel.v1 refuses a negative n, an align below 1 and a missing body") {
  const DLArrayParallelExtV1* pool = Pool();
  Coverage c(4, 1);
  struct Bad {
    int64_t n, align;
    DLArrayParallelBody body;
  };
  for (Bad b : {Bad{-1, 1, &Count}, Bad{4, 0, &Count}, Bad{4, 1, nullptr}}) {
    dlarray::ClearPluginError();
    CHECK(pool->parallel_for(pool->self, b.n, 4, b.align, b.body, &c) == -1);
    // The message the pool recorded with the core's set_error, as a plugin's caller sees it.
    const std::string want = "needs n >= 0, align >= 1 and a body, got n=" + std::to_string(b.n);
    CHECK_THROWS_WITH(dlarray::ThrowPluginError("parallel_for"), doctest::Contains(want.c_str()));
  }
  CHECK(c.ranges.load() == 0);
}

TEST_CASE("dlarray::ParallelFor runs on the pool, nests serially and carries exceptions back") {
  FakeCall with_pool(true);
  const int64_t n = 1 << 20;
  std::vector<std::atomic<int>> hits(n);
  std::atomic<int> inner_ranges{0};
  dlarray::ParallelFor(with_pool.ctx, n, n, 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    // A loop inside a loop runs whole on this thread (no deadlock, no oversubscription).
    dlarray::ParallelFor(with_pool.ctx, n, n, 16, [&](int64_t ib, int64_t ie) {
      if (ib == 0 && ie == n) inner_ranges++;
    });
  });
  bool once = true;
  for (auto& h : hits) once = once && h.load() == 1;
  CHECK(once);
  CHECK(inner_ranges.load() >= 1);

  CHECK_THROWS_WITH_AS(dlarray::ParallelFor(with_pool.ctx, n, n, 16,
                                            [&](int64_t b, int64_t) {
                                              if (b == 0)
                                                throw std::runtime_error("range 0 failed");
                                            }),
                       "range 0 failed", std::runtime_error);

  FakeCall without_pool(false);  // an older CPU plugin: the whole loop on the calling thread
  int calls = 0;
  dlarray::ParallelFor(without_pool.ctx, n, n, 16, [&](int64_t b, int64_t e) {
    calls++;
    CHECK((b == 0 && e == n));
  });
  CHECK(calls == 1);
}

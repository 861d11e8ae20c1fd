// cuda_bench: times every op of cuda_backend.so with CUDA events on the device's stream, at the
// sizes of python/dlarray/_opbench.py (seed and GPU-large), plus copy rates and the host cost
// of one op call. Prints "BENCH <op> <shape> <ms> <GB/s or GFLOP/s>" lines that
// tools/torch_reference.py reads to print ratios against PyTorch.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dlarray/runtime.h"
#include "smoke_util.h"

using namespace smoke;  // NOLINT(build/namespaces)

void LaunchEmptyKernel(cudaStream_t stream);  // launch_probe.cu

namespace {

cudaStream_t Stream() { return static_cast<cudaStream_t>(dlarray::DeviceStream(Gpu())); }

double HostSeconds(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Host microseconds per call of fn when 200 calls are queued without waiting (for small ops:
// whether the host or the GPU sets the pace).
double g_host_us = 0;

// Median milliseconds per call of fn over 15 timed groups of `inner` calls each.
double TimeMs(const std::function<void()>& fn, int inner = 1) {
  cudaStream_t s = Stream();
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) fn();
  std::vector<double> times;
  for (int rep = 0; rep < 15; ++rep) {
    cudaEventRecord(start, s);
    for (int i = 0; i < inner; ++i) fn();
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms / inner);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  g_host_us = 0;
  if (inner > 1) {
    g_host_us = HostSeconds([&] {
                  for (int i = 0; i < 200; ++i) fn();
                }) /
                200 * 1e6;
    cudaStreamSynchronize(s);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string Join(const std::vector<int64_t>& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "x" : "") + std::to_string(s[i]);
  return t;
}

void Report(const std::string& op, const std::string& shape, double ms, double bytes,
            double flops = 0) {
  if (flops > 0) {
    std::printf("BENCH %-38s %-22s %10.4f ms %9.1f GFLOP/s\n", op.c_str(), shape.c_str(), ms,
                flops / ms / 1e6);
  } else {
    std::printf("BENCH %-38s %-22s %10.4f ms %9.1f GB/s  host %.2f us/call\n", op.c_str(),
                shape.c_str(), ms, bytes / ms / 1e6, g_host_us);
  }
  std::fflush(stdout);
}

// Calls per timed group: enough that launch gaps do not dominate small sizes.
int Inner(double bytes) { return bytes < 64e6 ? 20 : 1; }

void BenchSet(const std::vector<int64_t>& ew, const std::vector<int64_t>& b_in,
              const std::vector<int64_t>& b_out, const std::vector<int64_t>& red,
              const std::vector<int64_t>& sm, const std::vector<std::vector<int64_t>>& mm,
              bool all_transposes) {
  const int64_t n = Numel(ew);
  const std::string t = Join(ew);
  auto a = Upload(ew, Random(n));
  auto b = Upload(ew, Random(n));
  auto c = dlarray::Array::Empty(ew, Gpu());
  const double nb = 4.0 * n;
  const int inner = Inner(nb);
  auto time = [&](const std::string& op, std::vector<const DLArray*> in, std::vector<double> attrs,
                  double bytes) {
    Report(op, t, TimeMs([&] { Run(op, in, {c->dl()}, attrs); }, inner), bytes);
  };
  time("array_set", {}, {1.5}, nb);
  time("matrix_elementwise_add", {a->dl(), b->dl()}, {}, 3 * nb);
  time("matrix_elementwise_add_by_const", {a->dl()}, {0.5}, 2 * nb);
  time("matrix_elementwise_multiply", {a->dl(), b->dl()}, {}, 3 * nb);
  time("matrix_elementwise_multiply_by_const", {a->dl()}, {0.5}, 2 * nb);
  time("relu", {a->dl()}, {}, 2 * nb);
  time("relu_gradient", {a->dl(), b->dl()}, {}, 3 * nb);
  time("copy", {a->dl()}, {}, 2 * nb);
  {
    auto x = Upload(b_in, Random(Numel(b_in)));
    auto y = dlarray::Array::Empty(b_out, Gpu());
    const double bytes = 4.0 * (Numel(b_in) + Numel(b_out));
    Report("broadcast_to", Join(b_in) + "->" + Join(b_out),
           TimeMs([&] { Run("broadcast_to", {x->dl()}, {y->dl()}); }, Inner(bytes)), bytes);
  }
  {
    auto x = Upload(red, Random(Numel(red), 0, 20));
    std::vector<int64_t> os(red.begin() + 1, red.end());
    auto y = dlarray::Array::Empty(os, Gpu());
    const double bytes = 4.0 * (Numel(red) + Numel(os));
    Report("reduce_sum_axis_zero", Join(red),
           TimeMs([&] { Run("reduce_sum_axis_zero", {x->dl()}, {y->dl()}); }, Inner(bytes)), bytes);
  }
  {
    const double bytes = 8.0 * Numel(sm);
    auto x = Upload(sm, Random(Numel(sm), -5, 5));
    auto y = dlarray::Array::Empty(sm, Gpu());
    Report("softmax", Join(sm), TimeMs([&] { Run("softmax", {x->dl()}, {y->dl()}); }, Inner(bytes)),
           bytes);
    std::vector<float> labels(Numel(sm), 0.f);
    const auto pick = Random(sm[0], 0, 1);
    for (int64_t r = 0; r < sm[0]; ++r) labels[r * sm[1] + int64_t(pick[r] * (sm[1] - 1))] = 1.f;
    auto l = Upload(sm, labels);
    auto loss = dlarray::Array::Empty({1}, Gpu());
    Report("softmax_cross_entropy", Join(sm),
           TimeMs(
               [&] {
                 Run("softmax_cross_entropy", {x->dl(), l->dl()}, {loss->dl()});
               },
               Inner(bytes)),
           bytes);
  }
  for (const auto& s : mm) {
    const int64_t m = s[0], k = s[1], nn = s[2];
    for (int f = 0; f < (all_transposes ? 4 : 1); ++f) {
      const bool ta = f & 2, tb = f & 1;
      auto x = Upload(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, Random(m * k));
      auto y =
          Upload(tb ? std::vector<int64_t>{nn, k} : std::vector<int64_t>{k, nn}, Random(k * nn));
      auto z = dlarray::Array::Empty({m, nn}, Gpu());
      const double flops = 2.0 * m * k * nn;
      const std::string shape = Join(s) + " " + (ta ? "T" : "N") + (tb ? "T" : "N");
      Report("matrix_multiply", shape,
             TimeMs(
                 [&] {
                   Run("matrix_multiply", {x->dl(), y->dl()}, {z->dl()}, {double(ta), double(tb)});
                 },
                 flops < 1e10 ? 20 : 1),
             0, flops);
    }
  }
}

void BenchCopies() {
  cudaStream_t s = Stream();
  for (int64_t n : {int64_t{1024}, int64_t{1} << 18, int64_t{1} << 24, int64_t{1} << 26}) {
    std::vector<float> host = Random(n);
    std::vector<int64_t> shape{n};
    DLArray hv = HostView(host, shape);
    auto d = dlarray::Array::Empty(shape, Gpu());
    const double bytes = 4.0 * n;
    const int reps = n <= (1 << 18) ? 200 : 10;
    dlarray::Synchronize(Gpu());
    // Through the device (pinned staging, no wait on the GPU), then made visible by a sync.
    double staged = HostSeconds([&] {
      for (int i = 0; i < reps; ++i) dlarray::CopyFromTo(&hv, d->dl());
      dlarray::Synchronize(Gpu());
    });
    // Plain cudaMemcpyAsync from pageable memory and a stream sync per copy.
    double direct = HostSeconds([&] {
      for (int i = 0; i < reps; ++i) {
        cudaMemcpyAsync(d->dl()->data, host.data(), bytes, cudaMemcpyHostToDevice, s);
        cudaStreamSynchronize(s);
      }
    });
    double d2h = HostSeconds([&] {
      for (int i = 0; i < reps; ++i) dlarray::CopyFromTo(d->dl(), &hv);
    });
    std::printf(
        "COPY %10.0f bytes: h2d staged %8.2f GB/s (%.1f us/copy), h2d direct+sync %8.2f "
        "GB/s (%.1f us/copy), d2h %8.2f GB/s (%.1f us/copy)\n",
        bytes, bytes * reps / staged / 1e9, staged / reps * 1e6, bytes * reps / direct / 1e9,
        direct / reps * 1e6, bytes * reps / d2h / 1e9, d2h / reps * 1e6);
  }
}

void BenchOverhead() {
  auto a = Upload({1}, {1.f});
  auto o = dlarray::Array::Empty({1}, Gpu());
  const int op = dlarray::RequireOp("relu");
  const DLArray* in[] = {a->dl()};
  DLArray* out[] = {o->dl()};
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    const int calls = 20000;
    const double s = HostSeconds([&] {
      for (int i = 0; i < calls; ++i) dlarray::Invoke(op, in, 1, out, 1, nullptr, 0);
    });
    dlarray::Synchronize(Gpu());
    best = std::min(best, s / calls);
  }
  std::printf("OVERHEAD host time per async relu on 1 element through dlarray::Invoke: %.2f us\n",
              best * 1e6);
  best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    const int calls = 20000;
    auto stream = Stream();
    const double s = HostSeconds([&] {
      for (int i = 0; i < calls; ++i) cudaMemsetAsync(o->dl()->data, 0, 4, stream);
    });
    dlarray::Synchronize(Gpu());
    best = std::min(best, s / calls);
  }
  std::printf("OVERHEAD host time per cudaMemsetAsync: %.2f us\n", best * 1e6);
  best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    const int calls = 20000;
    auto stream = Stream();
    const double s = HostSeconds([&] {
      for (int i = 0; i < calls; ++i) LaunchEmptyKernel(stream);
    });
    dlarray::Synchronize(Gpu());
    best = std::min(best, s / calls);
  }
  std::printf("OVERHEAD host time per empty kernel launch (the floor): %.2f us\n", best * 1e6);
  best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    const int calls = 2000;
    const double s = HostSeconds([&] {
      for (int i = 0; i < calls; ++i) dlarray::Array::Empty({1}, Gpu());
    });
    best = std::min(best, s / calls);
  }
  std::printf("OVERHEAD host time per Array::Empty + free (cached): %.2f us\n", best * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  if (dlarray::DeviceCount(kDLArrayCUDA) == 0) {
    std::printf("no GPU\n");
    return 0;
  }
  const bool large_only = argc > 1 && std::strcmp(argv[1], "--large") == 0;
  std::printf("%s: %s\n", dlarray::ContextToString(Gpu()).c_str(),
              dlarray::DeviceName(Gpu()).c_str());
  BenchOverhead();
  if (!large_only) {
    BenchSet({500, 200}, {200, 300}, {130, 200, 300}, {500, 200, 100}, {400, 1000},
             {{500, 700, 1000}}, true);
  }
  BenchSet({8192, 8192}, {8192}, {8192, 8192}, {500, 200, 100}, {8192, 8192}, {{8192, 8192, 8192}},
           false);
  BenchCopies();
  const auto st = dlarray::GetMemoryStats(Gpu());
  std::printf("memory: in use %llu, reserved %llu, cudaMalloc calls %llu, frees %llu, peak %llu\n",
              (unsigned long long)st.bytes_in_use, (unsigned long long)st.bytes_reserved,
              (unsigned long long)st.num_allocations, (unsigned long long)st.num_frees,
              (unsigned long long)st.peak_bytes_in_use);
  return 0;
}

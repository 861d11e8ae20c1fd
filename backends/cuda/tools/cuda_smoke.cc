// cuda_smoke: checks every op of cuda_backend.so against a double-precision CPU reference at
// sizes that cross warp, block and chunk boundaries, and the device's allocator, copies, options
// and errors. Runs through the runtime (plugins found next to libdlarray_runtime.so).
// Exit status: the number of failed checks. Without a GPU it prints the plugin's reason, exits 0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "smoke_util.h"

using namespace smoke;  // NOLINT(build/namespaces)

namespace {

Checker check;

std::vector<double> Ref(size_t n) { return std::vector<double>(n); }

void CheckElementwise() {
  for (int64_t n : {1, 3, 4, 5, 1023, 4097 * 33, (1 << 20) + 5}) {
    const std::vector<int64_t> shape{n};
    const auto av = Random(n, -2, 2);
    const auto bv = Random(n, -2, 2);
    auto a = Upload(shape, av);
    auto b = Upload(shape, bv);
    auto c = dlarray::Array::Empty(shape, Gpu());
    const std::string sz = " n=" + std::to_string(n);
    auto run = [&](const std::string& op, std::vector<const DLArray*> in, std::vector<double> attrs,
                   std::function<double(size_t)> f) {
      Poison(c);
      Run(op, in, {c->dl()}, attrs);
      auto ref = Ref(n);
      for (int64_t i = 0; i < n; ++i) ref[i] = f(i);
      check.Close(op + sz, Download(c), ref);
    };
    run("matrix_elementwise_add", {a->dl(), b->dl()}, {}, [&](size_t i) { return av[i] + bv[i]; });
    run("matrix_elementwise_multiply", {a->dl(), b->dl()}, {},
        [&](size_t i) { return av[i] * bv[i]; });
    run("matrix_elementwise_add_by_const", {a->dl()}, {0.5},
        [&](size_t i) { return av[i] + 0.5f; });
    run("matrix_elementwise_multiply_by_const", {a->dl()}, {-3.0},
        [&](size_t i) { return av[i] * -3.0f; });
    run("relu", {a->dl()}, {}, [&](size_t i) { return std::max(av[i], 0.f); });
    run("relu_gradient", {a->dl(), b->dl()}, {}, [&](size_t i) { return av[i] > 0 ? bv[i] : 0.0; });
    run("array_set", {}, {1.25}, [&](size_t) { return 1.25; });
    run("copy", {a->dl()}, {}, [&](size_t i) { return av[i]; });
    // In place: the output is the first input.
    auto d = Upload(shape, av);
    Run("matrix_elementwise_add", {d->dl(), b->dl()}, {d->dl()});
    Run("relu", {d->dl()}, {d->dl()});
    auto ref = Ref(n);
    for (int64_t i = 0; i < n; ++i) ref[i] = std::max(av[i] + bv[i], 0.f);
    check.Close("in-place add, relu" + sz, Download(d), ref);
  }
  // Relu semantics of numpy.maximum and grad * (in > 0): NaN stays NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = Upload({4}, {nan, -1.f, 2.f, 0.f});
  auto g = Upload({4}, {1.f, nan, 3.f, 4.f});
  auto y = dlarray::Array::Empty({4}, Gpu());
  Run("relu", {x->dl()}, {y->dl()});
  check.Close("relu NaN", Download(y), {std::nan(""), 0, 2, 0});
  Run("relu_gradient", {x->dl(), g->dl()}, {y->dl()});
  check.Close("relu_gradient NaN", Download(y), {0, std::nan(""), 3, 0});
}

// Views at byte_offset 4 take the scalar (unaligned) paths.
void CheckUnaligned() {
  for (int64_t n : {7, 4097, 100003}) {
    std::vector<int64_t> base_shape{n + 1};
    const auto v = Random(n + 1);
    auto base = Upload(base_shape, v);
    auto out_base = dlarray::Array::Empty(base_shape, Gpu());
    int64_t shape[1] = {n};
    DLArray in{base->dl()->data, Gpu(), 1, dlarray::kFloat32, shape, nullptr, 4};
    DLArray out{out_base->dl()->data, Gpu(), 1, dlarray::kFloat32, shape, nullptr, 4};
    Run("matrix_elementwise_multiply_by_const", {&in}, {&out}, {2.0});
    auto got = Download(&out);
    auto ref = Ref(n);
    for (int64_t i = 0; i < n; ++i) ref[i] = v[i + 1] * 2.0;
    check.Close("unaligned multiply_by_const n=" + std::to_string(n), got, ref);
    Run("softmax", {&in}, {&out});
    double m = -1e300, s = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, double(v[i + 1]));
    for (int64_t i = 0; i < n; ++i) s += std::exp(v[i + 1] - m);
    for (int64_t i = 0; i < n; ++i) ref[i] = std::exp(v[i + 1] - m) / s;
    check.Close("unaligned softmax n=" + std::to_string(n), Download(&out), ref, 1e-4, 1e-9);
  }
}

void CheckBroadcast() {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1}, {7}},
      {{5}, {3, 5}},
      {{4097}, {33, 4097}},
      {{8}, {1000, 8}},
      {{3}, {1001, 3}},
      {{3, 1, 5}, {3, 4, 5}},
      {{1, 1}, {2, 3}},
      {{6, 1}, {6, 7}},
      {{200, 100}, {500, 200, 100}},
      {{7, 9}, {7, 9}},
      {{1}, {1}},
      {{2, 1, 3, 1}, {5, 2, 4, 3, 6}},
      {{1000}, {1, 3, 1000}},
      {{255}, {4099, 255}}};
  for (const auto& [in_shape, out_shape] : cases) {
    const auto v = Random(Numel(in_shape));
    auto in = Upload(in_shape, v);
    auto out = dlarray::Array::Empty(out_shape, Gpu());
    Poison(out);
    Run("broadcast_to", {in->dl()}, {out->dl()});
    const int64_t n = Numel(out_shape);
    const int lead = static_cast<int>(out_shape.size() - in_shape.size());
    auto ref = Ref(n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, offset = 0, stride = 1;
      for (int d = static_cast<int>(out_shape.size()) - 1; d >= 0; --d) {
        const int64_t coord = rest % out_shape[d];
        rest /= out_shape[d];
        if (d >= lead) {
          const int64_t extent = in_shape[d - lead];
          if (extent != 1) offset += coord * stride;
          stride *= extent;
        }
      }
      ref[i] = v[offset];
    }
    check.Close("broadcast_to " + ShapeText(in_shape) + " -> " + ShapeText(out_shape),
                Download(out), ref, 0, 0);
  }
}

void CheckReduce() {
  const std::vector<std::vector<int64_t>> shapes = {
      {1},         {7},    {1000003},  {500, 200, 100}, {3, 5}, {4097, 33},  {1, 20000},
      {100000, 3}, {2, 1}, {64, 8192}, {20000, 4},      {1, 1}, {3000, 1025}};
  for (const auto& shape : shapes) {
    const auto v = Random(Numel(shape));
    auto in = Upload(shape, v);
    std::vector<int64_t> out_shape(shape.begin() + 1, shape.end());
    if (out_shape.empty()) out_shape = {1};
    auto out = dlarray::Array::Empty(out_shape, Gpu());
    Poison(out);
    Run("reduce_sum_axis_zero", {in->dl()}, {out->dl()});
    const int64_t rows = shape[0];
    const int64_t cols = Numel(shape) / rows;
    auto ref = Ref(cols);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) ref[c] += v[r * cols + c];
    }
    const auto got = Download(out);
    // float32 sums of `rows` values in [-1, 1]: error grows like sqrt(rows) ulps.
    check.Close("reduce_sum_axis_zero " + ShapeText(shape), got, ref, 1e-5,
                1e-6 * std::sqrt(static_cast<double>(rows)) * 4);
    Run("reduce_sum_axis_zero", {in->dl()}, {out->dl()});
    check.Expect(Download(out) == got,
                 "reduce_sum_axis_zero " + ShapeText(shape) + " is not deterministic");
  }
}

std::vector<double> MatmulRef(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                              int64_t n, int64_t k, bool ta, bool tb) {
  std::vector<double> c(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const double x = ta ? a[p * m + i] : a[i * k + p];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += x * (tb ? b[j * k + p] : b[p * n + j]);
    }
  }
  return c;
}

double CheckMatmul(int64_t m, int64_t n, int64_t k, bool ta, bool tb, double tol) {
  const auto av = Random(m * k);
  const auto bv = Random(k * n);
  auto a = Upload(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, av);
  auto b = Upload(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, bv);
  auto c = dlarray::Array::Empty({m, n}, Gpu());
  Poison(c);
  Run("matrix_multiply", {a->dl(), b->dl()}, {c->dl()}, {ta ? 1.0 : 0.0, tb ? 1.0 : 0.0});
  double err = 0;
  check.RelNorm("matrix_multiply m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" +
                    std::to_string(k) + " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb),
                Download(c), MatmulRef(av, bv, m, n, k, ta, tb), tol, &err);
  return err;
}

void CheckMatmuls() {
  const int64_t sizes[][3] = {{1, 1, 1},     {500, 500, 200}, {500, 200, 500}, {33, 65, 17},
                              {127, 1, 255}, {1, 300, 7},     {257, 129, 1000}};
  for (const auto& s : sizes) {
    for (int t = 0; t < 4; ++t) CheckMatmul(s[0], s[1], s[2], t & 1, t & 2, 1e-5);
  }
  check.Expect(dlarray::GetDeviceOption(Gpu(), "matmul_precision") == "highest",
               "default precision is highest");
  const double highest = CheckMatmul(512, 512, 2048, false, false, 1e-5);
  dlarray::SetDeviceOption(Gpu(), "matmul_precision", "tf32");
  check.Expect(dlarray::GetDeviceOption(Gpu(), "matmul_precision") == "tf32",
               "precision reads back tf32");
  const double tf32 = CheckMatmul(512, 512, 2048, false, true, 5e-3);
  dlarray::SetDeviceOption(Gpu(), "matmul_precision", "highest");
  std::printf("matmul relative error: highest %.3g, tf32 %.3g\n", highest, tf32);
  check.Expect(tf32 > 10 * highest, "tf32 changes the result (tensor cores used)");
  bool threw = false;
  try {
    dlarray::SetDeviceOption(Gpu(), "matmul_precision", "fast");
  } catch (const dlarray::Error& e) {
    threw = e.kind() == dlarray::ErrorKind::kValue;
  }
  check.Expect(threw, "matmul_precision=fast raises a value error");
}

std::vector<float> RowsWithSpecials(int64_t rows, int64_t cols, float scale) {
  auto v = Random(rows * cols, -scale, scale);
  if (cols > 1) v[1] = -std::numeric_limits<float>::infinity();  // a -inf logit in row 0
  return v;
}

void CheckSoftmax() {
  const int64_t col_list[] = {1,    2,    31,   32,   33,   100,   1000,  1024,  1025,
                              2048, 3000, 4096, 8191, 8192, 10000, 16384, 16385, 100000};
  for (int64_t cols : col_list) {
    for (int64_t rows : {1, 3, 37}) {
      for (float scale : {1.f, 60.f}) {
        const auto v = RowsWithSpecials(rows, cols, scale);
        auto in = Upload({rows, cols}, v);
        auto out = dlarray::Array::Empty({rows, cols}, Gpu());
        Poison(out);
        Run("softmax", {in->dl()}, {out->dl()});
        auto ref = Ref(rows * cols);
        for (int64_t r = 0; r < rows; ++r) {
          double m = -1e300, s = 0;
          for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(v[r * cols + c]));
          for (int64_t c = 0; c < cols; ++c) s += std::exp(v[r * cols + c] - m);
          for (int64_t c = 0; c < cols; ++c) ref[r * cols + c] = std::exp(v[r * cols + c] - m) / s;
        }
        check.Close("softmax (" + std::to_string(rows) + ", " + std::to_string(cols) + ") scale " +
                        std::to_string(int(scale)),
                    Download(out), ref, 1e-4, 1e-7);
      }
    }
  }
  // 3-D input: rows over the last axis; in place.
  const auto v = Random(2 * 3 * 50);
  auto x = Upload({2, 3, 50}, v);
  Run("softmax", {x->dl()}, {x->dl()});
  auto ref = Ref(300);
  for (int r = 0; r < 6; ++r) {
    double m = -1e300, s = 0;
    for (int c = 0; c < 50; ++c) m = std::max(m, double(v[r * 50 + c]));
    for (int c = 0; c < 50; ++c) s += std::exp(v[r * 50 + c] - m);
    for (int c = 0; c < 50; ++c) ref[r * 50 + c] = std::exp(v[r * 50 + c] - m) / s;
  }
  check.Close("softmax (2, 3, 50) in place", Download(x), ref, 1e-5, 1e-7);
}

void CheckCrossEntropy() {
  const int64_t shapes[][2] = {{1, 1},      {1, 10},    {3, 33},     {500, 10}, {100000, 10},
                               {37, 1000},  {8, 2048},  {9, 2049},   {5, 8192}, {3, 16385},
                               {2, 100000}, {4097, 33}, {1000, 1001}};
  for (const auto& s : shapes) {
    const int64_t rows = s[0], cols = s[1];
    for (bool one_hot : {true, false}) {
      // No -inf logits here: 0 * -inf is NaN in the loss, as in NumPy and PyTorch.
      const auto y = Random(rows * cols, -8.f, 8.f);
      std::vector<float> t(rows * cols, 0.f);
      if (one_hot) {
        const auto pick = Random(rows, 0.f, 1.f);
        for (int64_t r = 0; r < rows; ++r) {
          int64_t c = std::min<int64_t>(cols - 1, int64_t(pick[r] * cols));
          t[r * cols + c] = 1.f;
        }
      } else {
        t = Random(rows * cols, 0.f, 1.f);
      }
      auto yd = Upload({rows, cols}, y);
      auto td = Upload({rows, cols}, t);
      auto out = dlarray::Array::Empty({1}, Gpu());
      Poison(out);
      Run("softmax_cross_entropy", {yd->dl(), td->dl()}, {out->dl()});
      double total = 0;
      for (int64_t r = 0; r < rows; ++r) {
        double m = -1e300, sum = 0, loss = 0;
        for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(y[r * cols + c]));
        for (int64_t c = 0; c < cols; ++c) sum += std::exp(y[r * cols + c] - m);
        for (int64_t c = 0; c < cols; ++c) {
          loss -= t[r * cols + c] * (y[r * cols + c] - m - std::log(sum));
        }
        total += loss;
      }
      const std::string what = "softmax_cross_entropy (" + std::to_string(rows) + ", " +
                               std::to_string(cols) + (one_hot ? ") one-hot" : ") dense");
      const auto got = Download(out);
      check.Close(what, got, {total / rows}, 2e-5, 1e-5);
      Run("softmax_cross_entropy", {yd->dl(), td->dl()}, {out->dl()});
      check.Expect(Download(out) == got, what + " is not deterministic");
    }
  }
}

dlarray::MemoryStats Stats(int id = 0) { return dlarray::GetMemoryStats(Gpu(id)); }

void CheckAllocator() {
  // A training-like loop: after the first iteration every block comes from the cache.
  auto x = Upload({500, 200}, Random(500 * 200));
  auto w = Upload({200, 100}, Random(200 * 100));
  auto labels = Upload({500, 100}, Random(500 * 100, 0, 1));
  uint64_t allocations_after_first = 0;
  for (int it = 0; it < 50; ++it) {
    auto h = dlarray::Array::Empty({500, 100}, Gpu());
    auto p = dlarray::Array::Empty({500, 100}, Gpu());
    auto loss = dlarray::Array::Empty({1}, Gpu());
    auto colsum = dlarray::Array::Empty({100}, Gpu());
    Run("matrix_multiply", {x->dl(), w->dl()}, {h->dl()}, {0, 0});
    Run("relu", {h->dl()}, {h->dl()});
    Run("softmax", {h->dl()}, {p->dl()});
    Run("softmax_cross_entropy", {h->dl(), labels->dl()}, {loss->dl()});
    Run("reduce_sum_axis_zero", {p->dl()}, {colsum->dl()});
    if (it == 0) allocations_after_first = Stats().num_allocations;
  }
  dlarray::Synchronize(Gpu());
  const auto steady = Stats();
  check.Expect(steady.num_allocations == allocations_after_first,
               "steady loop made " +
                   std::to_string(steady.num_allocations - allocations_after_first) +
                   " new cudaMalloc calls");
  check.Expect(steady.bytes_reserved >= steady.bytes_in_use, "reserved >= in use");
  check.Expect(steady.peak_bytes_in_use >= steady.bytes_in_use, "peak >= in use");
  dlarray::EmptyCache(Gpu());
  const auto emptied = Stats();
  check.Expect(emptied.bytes_reserved == emptied.bytes_in_use,
               "empty_cache leaves reserved == in use");
  check.Expect(emptied.num_frees > steady.num_frees, "empty_cache frees cached blocks");

  // An impossible request: OutOfMemoryError naming the bytes and the device; then business as
  // usual.
  std::string message;
  try {
    dlarray::Array::Empty({int64_t{1} << 40}, Gpu());
  } catch (const dlarray::Error& e) {
    if (e.kind() == dlarray::ErrorKind::kMemory) message = e.what();
  }
  std::printf("OOM message: %s\n", message.c_str());
  check.Expect(message.find("4398046511104 bytes") != std::string::npos &&
                   message.find("cuda(0)") != std::string::npos,
               "1 TiB request raises OutOfMemoryError naming bytes and device");

  // Fill the GPU with 1 GiB arrays, free them (they stay cached), then ask for 2 GiB: the
  // allocator must give the cache back to the driver and retry.
  {
    std::vector<ArrayPtr> hog;
    try {
      for (int i = 0; i < 1024; ++i)
        hog.push_back(dlarray::Array::Empty({int64_t{1} << 28}, Gpu()));
    } catch (const dlarray::Error& e) {
      check.Expect(e.kind() == dlarray::ErrorKind::kMemory, "filling the GPU ends in MemoryError");
    }
    std::printf("filled the GPU with %zu arrays of 1 GiB\n", hog.size());
  }
  const auto before = Stats();
  bool ok = true;
  try {
    auto big = dlarray::Array::Empty({int64_t{1} << 29}, Gpu());
    Run("array_set", {}, {big->dl()}, {2.0});
  } catch (const std::exception& e) {
    ok = false;
    std::printf("2 GiB after the fill: %s\n", e.what());
  }
  check.Expect(ok, "2 GiB after freeing a full GPU succeeds (cache emptied and retried)");
  check.Expect(Stats().num_frees > before.num_frees, "the retry freed cached blocks");
  dlarray::EmptyCache(Gpu());
  auto small = Upload({3}, {1.f, -2.f, 3.f});
  Run("relu", {small->dl()}, {small->dl()});
  check.Close("runtime works after OOM", Download(small), {1, 0, 3});
}

void CheckCopies() {
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{(4 << 20) / 4 + 3}, int64_t{20000003}}) {
    const auto v = Random(n);
    auto a = Upload({n}, v);
    auto b = dlarray::Array::Empty({n}, Gpu());
    dlarray::CopyFromTo(a->dl(), b->dl());
    std::vector<double> ref(v.begin(), v.end());
    check.Close("host->gpu->gpu->host n=" + std::to_string(n), Download(b), ref, 0, 0);
  }
  // Many small uploads in a row, then a read: staging buffers are shared in order.
  std::vector<ArrayPtr> arrays;
  std::vector<std::vector<float>> values;
  for (int i = 0; i < 3000; ++i) {
    values.push_back(Random(1000 + i));
    arrays.push_back(Upload({1000 + i}, values.back()));
  }
  bool same = true;
  for (int i = 0; i < 3000; ++i) same = same && Download(arrays[i]) == values[i];
  check.Expect(same, "3000 queued small uploads arrive intact");
}

void CheckMultiGpu() {
  const int count = dlarray::DeviceCount(kDLArrayCUDA);
  if (count < 2) {
    std::printf("one GPU: multi-GPU checks skipped\n");
    return;
  }
  for (int64_t n : {int64_t{5}, int64_t{3000007}}) {
    const auto v = Random(n);
    auto a = Upload({n}, v, 0);
    Run("relu", {a->dl()}, {a->dl()});  // queued on gpu(0) before the copy
    auto b = dlarray::Array::Empty({n}, Gpu(1));
    dlarray::CopyFromTo(a->dl(), b->dl());
    Run("matrix_elementwise_multiply_by_const", {b->dl()}, {b->dl()}, {2.0});
    auto c = dlarray::Array::Empty({n}, Gpu(0));
    dlarray::CopyFromTo(b->dl(), c->dl());
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i) ref[i] = std::max(v[i], 0.f) * 2.0;
    check.Close("gpu0 -> gpu1 -> gpu0 n=" + std::to_string(n), Download(c), ref, 0, 0);
  }
  check.Expect(Stats(1).bytes_in_use == 0 || Stats(1).num_allocations > 0, "gpu(1) stats");
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  for (const auto& p : dlarray::Plugins()) {
    std::printf("plugin %-8s %-12s devices=%d %s %s\n", p.name.c_str(),
                dlarray::PluginStatusName(p.status), p.device_count, p.path.c_str(),
                p.reason.c_str());
  }
  const int gpus = dlarray::DeviceCount(kDLArrayCUDA);
  if (gpus == 0) {
    std::printf("no GPU: nothing to check\n");
    return 0;
  }
  for (int i = 0; i < gpus; ++i) {
    std::printf("%s: %s\n", dlarray::ContextToString(Gpu(i)).c_str(),
                dlarray::DeviceName(Gpu(i)).c_str());
  }
  const std::vector<std::pair<const char*, void (*)()>> groups = {
      {"elementwise", CheckElementwise},
      {"unaligned", CheckUnaligned},
      {"broadcast_to", CheckBroadcast},
      {"reduce_sum_axis_zero", CheckReduce},
      {"matrix_multiply", CheckMatmuls},
      {"softmax", CheckSoftmax},
      {"softmax_cross_entropy", CheckCrossEntropy},
      {"copies", CheckCopies},
      {"multi-gpu", CheckMultiGpu},
      {"allocator", CheckAllocator}};
  for (const auto& [name, fn] : groups) {
    if (quick && std::strcmp(name, "allocator") == 0) continue;
    const int before = check.failures();
    try {
      fn();
      dlarray::Synchronize(Gpu());
    } catch (const std::exception& e) {
      check.Expect(false, std::string(name) + " threw: " + e.what());
    }
    std::printf("%-24s %s\n", name, check.failures() == before ? "ok" : "FAILED");
  }
  std::printf("%d checks, %d failed\n", check.checks(), check.failures());
  return check.failures();
}

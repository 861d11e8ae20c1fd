// The CPU backend's kernels against plain reference loops, through the runtime (so through the
// loaded cpu_backend.so), at sizes around the serial/parallel switch (32768 elements), the
// streaming-store switch (half the L3) and the SGEMM block sizes, odd shapes and 1 element.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "test_helpers.h"

// The kernel library is visible when the test links cpu_backend_kernels: then the own blocked
// SGEMM is tested as well, even in builds that use CBLAS for matrix_multiply.
#if __has_include("cpu_kernels.h")
#include "cpu_kernels.h"
#define DLARRAY_TEST_SGEMM_BLOCKED 1
#endif

namespace {

using dltest::Cpu;
using dltest::Make;
using dltest::Random;
using dltest::Read;
using Shape = std::vector<int64_t>;

int64_t Numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeText(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

void Run(const std::string& op, std::vector<const DLArray*> in, std::vector<DLArray*> out,
         std::vector<double> attrs = {}) {
  const std::string error = dltest::TryInvoke(op, std::move(in), std::move(out), std::move(attrs));
  REQUIRE_MESSAGE(error.empty(), op << ": " << error);
}

// Number of elements where |got - want| > atol + rtol * |want| (NaN == NaN counts as equal).
int64_t Mismatches(const std::vector<float>& got, const std::vector<double>& want, double rtol,
                   double atol) {
  REQUIRE(got.size() == want.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) continue;
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) ++bad;
  }
  return bad;
}

// Sizes crossing the parallel threshold; the last crosses the streaming-store threshold (16 MiB
// here) with an odd row length.
const std::vector<Shape> kElementwiseShapes = {{1},     {3},     {17},       {5, 7},
                                               {32767}, {32769}, {181, 183}, {1025, 4097}};

}  // namespace

TEST_CASE("cpu: binary and unary elementwise ops match float arithmetic exactly") {
  using Fn = std::function<float(float, float)>;
  struct Case {
    const char* op;
    int inputs;
    std::vector<double> attrs;
    Fn fn;
  };
  const float c = 0.37f;
  const std::vector<Case> cases = {
      {"matrix_elementwise_add", 2, {}, [](float a, float b) { return a + b; }},
      {"matrix_elementwise_multiply", 2, {}, [](float a, float b) { return a * b; }},
      {"matrix_elementwise_add_by_const", 1, {0.37}, [c](float a, float) { return a + c; }},
      {"matrix_elementwise_multiply_by_const", 1, {0.37}, [c](float a, float) { return a * c; }},
      {"relu", 1, {}, [](float a, float) { return a > 0 ? a : 0.0f; }},
      {"relu_gradient", 2, {}, [](float a, float g) { return a > 0 ? g : 0.0f; }},
      {"copy", 1, {}, [](float a, float) { return a; }},
  };
  for (const Shape& shape : kElementwiseShapes) {
    const int64_t n = Numel(shape);
    const auto x = Random(static_cast<size_t>(n), -2, 2, 3);
    const auto g = Random(static_cast<size_t>(n), -2, 2, 4);
    for (const Case& k : cases) {
      CAPTURE(k.op);
      CAPTURE(ShapeText(shape));
      std::vector<double> want(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) want[i] = k.fn(x[i], g[i]);
      auto a = Make(shape, x);
      auto b = Make(shape, g);
      auto out = dlarray::Array::Empty(shape, Cpu());
      std::vector<const DLArray*> in = {a->dl()};
      if (k.inputs == 2) in.push_back(b->dl());
      Run(k.op, in, {out->dl()}, k.attrs);
      CHECK(Mismatches(Read(*out), want, 0, 0) == 0);
      // In place: the output is the first input.
      Run(k.op, in, {a->dl()}, k.attrs);
      CHECK(Mismatches(Read(*a), want, 0, 0) == 0);
    }
  }
}

TEST_CASE("cpu: relu keeps NaN and relu_gradient multiplies like grad * (x > 0)") {
  const float nan = std::nanf("");
  const float inf = INFINITY;
  auto x = Make({4}, {nan, -1.0f, 2.0f, -3.0f});
  auto g = Make({4}, {1.0f, nan, 5.0f, inf});
  auto y = dlarray::Array::Empty({4}, Cpu());
  Run("relu", {x->dl()}, {y->dl()});
  const auto r = Read(*y);
  CHECK(std::isnan(r[0]));
  CHECK(r[1] == 0.0f);
  CHECK(r[2] == 2.0f);
  Run("relu_gradient", {x->dl(), g->dl()}, {y->dl()});
  const auto d = Read(*y);
  CHECK(d[0] == 0.0f);      // NaN > 0 is false: 1 * 0
  CHECK(std::isnan(d[1]));  // NaN * 0
  CHECK(d[2] == 5.0f);
  CHECK(std::isnan(d[3]));  // inf * 0
}

TEST_CASE("cpu: relu and relu_gradient at zeros of either sign, bit for bit") {
  // relu(x) is x unless x < 0, so -0.0 stays -0.0 (as numpy.maximum(-0.0, 0)); its gradient is
  // grad * (x > 0): 0 at both zeros. Zeros of both signs sit at random places (every SIMD lane,
  // the scalar tail, both sides of the parallel split): comparing with <= or >= instead of < or
  // > gives a value or a sign that differs, and only the bits show the sign of a zero.
  auto bits = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof(u));
    return u;
  };
  for (const Shape& shape : kElementwiseShapes) {
    CAPTURE(ShapeText(shape));
    const int64_t n = Numel(shape);
    auto x = Random(static_cast<size_t>(n), -2, 2, 21);
    const auto g = Random(static_cast<size_t>(n), 0.5f, 2, 22);
    std::mt19937 gen(23);
    for (int64_t i = 0; i < n; ++i) {
      const unsigned pick = gen() % 6;
      if (pick == 0) x[i] = 0.0f;
      if (pick == 1) x[i] = -0.0f;
    }
    x[n - 1] = -0.0f;
    if (n > 1) x[n - 2] = 0.0f;
    auto a = Make(shape, x);
    auto gr = Make(shape, g);
    auto out = dlarray::Array::Empty(shape, Cpu());
    Run("relu", {a->dl()}, {out->dl()});
    const auto r = Read(*out);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += bits(r[i]) != bits(x[i] < 0 ? 0.0f : x[i]);
    CHECK(bad == 0);
    Run("relu_gradient", {a->dl(), gr->dl()}, {out->dl()});
    const auto d = Read(*out);
    bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += bits(d[i]) != bits(x[i] > 0 ? g[i] : 0.0f);
    CHECK(bad == 0);
  }
}

namespace {

// relu and relu_gradient in a dtype other than float32, bit for bit, on a cycle of +1, -0.0,
// -1, +0.0, 2, -2.5 (bits of each in that dtype, from the caller) and grad = +1 everywhere:
// relu keeps -0.0 and turns negatives into +0.0; the gradient is +1 where x > 0, else +0.0.
template <typename Bits>
void CheckReluAtZeros(DLArrayDType dtype, const std::vector<Bits>& cycle, Bits one) {
  const Bits plus_zero = 0;
  for (int64_t n : {int64_t{7}, int64_t{40001}}) {
    CAPTURE(n);
    CAPTURE(dtype.bits);
    std::vector<Bits> x(static_cast<size_t>(n)), relu(x.size()), grad(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t k = (i * 7 + i / 5) % cycle.size();  // every lane meets every value
      x[i] = cycle[k];
      const bool positive = k == 0 || k == 4, negative = k == 2 || k == 5;
      relu[i] = negative ? plus_zero : x[i];
      grad[i] = positive ? one : plus_zero;
    }
    auto a = dlarray::Array::Empty({n}, Cpu(), dtype);
    auto g = dlarray::Array::Empty({n}, Cpu(), dtype);
    auto out = dlarray::Array::Empty({n}, Cpu(), dtype);
    std::memcpy(a->dl()->data, x.data(), x.size() * sizeof(Bits));
    const std::vector<Bits> ones(x.size(), one);
    std::memcpy(g->dl()->data, ones.data(), ones.size() * sizeof(Bits));
    Run("relu", {a->dl()}, {out->dl()});
    CHECK(std::memcmp(out->dl()->data, relu.data(), relu.size() * sizeof(Bits)) == 0);
    Run("relu_gradient", {a->dl(), g->dl()}, {out->dl()});
    CHECK(std::memcmp(out->dl()->data, grad.data(), grad.size() * sizeof(Bits)) == 0);
  }
}

}  // namespace

TEST_CASE("cpu: relu and relu_gradient at zeros of either sign in float16, bfloat16, float64") {
  // float16: 1 = 0x3c00, -1 = 0xbc00, 2 = 0x4000, -2.5 = 0xc100; bfloat16: 1 = 0x3f80, ...
  CheckReluAtZeros<uint16_t>(DLArrayDType{kDLArrayFloat, 16, 1},
                             {0x3c00, 0x8000, 0xbc00, 0x0000, 0x4000, 0xc100}, 0x3c00);
  CheckReluAtZeros<uint16_t>(DLArrayDType{kDLArrayBfloat, 16, 1},
                             {0x3f80, 0x8000, 0xbf80, 0x0000, 0x4000, 0xc020}, 0x3f80);
  auto bits = [](double v) {
    uint64_t u;
    std::memcpy(&u, &v, sizeof(u));
    return u;
  };
  CheckReluAtZeros<uint64_t>(DLArrayDType{kDLArrayFloat, 64, 1},
                             {bits(1.0), bits(-0.0), bits(-1.0), bits(0.0), bits(2.0), bits(-2.5)},
                             bits(1.0));
}

TEST_CASE("cpu: array_set fills every element") {
  for (const Shape& shape : kElementwiseShapes) {
    CAPTURE(ShapeText(shape));
    auto out = Make(shape, std::vector<float>(static_cast<size_t>(Numel(shape)), 9.0f));
    Run("array_set", {}, {out->dl()}, {-1.25});
    const auto got = Read(*out);
    CHECK(Mismatches(got, std::vector<double>(got.size(), -1.25), 0, 0) == 0);
  }
}

TEST_CASE("cpu: broadcast_to follows NumPy's rules") {
  struct Case {
    Shape in, out;
  };
  const std::vector<Case> cases = {
      {{1}, {1}},
      {{1}, {5}},
      {{}, {2, 3}},
      {{3}, {2, 3}},
      {{2, 3}, {2, 3}},
      {{2, 1}, {2, 5}},
      {{1, 5}, {4, 5}},
      {{3, 1, 5}, {3, 4, 5}},
      {{4, 1}, {3, 4, 5}},
      {{1, 4, 1}, {2, 4, 3}},
      {{7}, {3, 1, 7}},
      {{5, 1, 1}, {5, 6, 7}},
      {{183}, {181, 183}},
      {{181, 1}, {181, 183}},
      {{4097}, {1025, 4097}},
      {{1}, {1025, 4097}},
      {{1025, 1}, {1025, 4097}},
      {{2, 1, 3}, {9000, 2, 2, 3}},
      {{1, 2100, 1024}, {2, 2100, 1024}},  // large input: the streaming-store path
  };
  for (const Case& k : cases) {
    CAPTURE(ShapeText(k.in));
    CAPTURE(ShapeText(k.out));
    const auto x = Random(static_cast<size_t>(Numel(k.in)), -1, 1, 5);
    const int64_t n = Numel(k.out);
    const size_t nd = k.out.size(), pad = nd - k.in.size();
    std::vector<double> want(static_cast<size_t>(n));
    std::vector<int64_t> index(nd, 0);
    for (int64_t e = 0; e < n; ++e) {
      int64_t rest = e, src = 0, stride = 1;
      for (size_t d = nd; d-- > 0;) {
        index[d] = rest % k.out[d];
        rest /= k.out[d];
      }
      for (size_t d = nd; d-- > pad;) {
        const int64_t in_dim = k.in[d - pad];
        src += (in_dim == 1 ? 0 : index[d]) * stride;
        stride *= in_dim;
      }
      want[e] = x[src];
    }
    auto a = Make(k.in, x);
    auto out = dlarray::Array::Empty(k.out, Cpu());
    Run("broadcast_to", {a->dl()}, {out->dl()});
    CHECK(Mismatches(Read(*out), want, 0, 0) == 0);
  }
}

TEST_CASE("cpu: reduce_sum_axis_zero") {
  const std::vector<Shape> shapes = {{1},       {7},          {100003},   {1, 1},     {3, 5},
                                     {1, 50},   {500, 2001},  {70001, 3}, {40000, 1}, {300, 65},
                                     {9, 3, 4}, {5000, 7, 1}, {2, 1}};
  for (const Shape& shape : shapes) {
    CAPTURE(ShapeText(shape));
    const int64_t rows = shape[0], cols = Numel(shape) / rows;
    const auto x = Random(static_cast<size_t>(rows * cols), -1, 1, 6);
    std::vector<double> want(static_cast<size_t>(cols), 0.0), magnitude(want);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < cols; ++j) {
        want[j] += x[r * cols + j];
        magnitude[j] += std::fabs(x[r * cols + j]);
      }
    }
    auto a = Make(shape, x);
    Shape out_shape(shape.begin() + 1, shape.end());
    if (out_shape.empty()) out_shape = {1};
    auto out = dlarray::Array::Empty(out_shape, Cpu());
    Run("reduce_sum_axis_zero", {a->dl()}, {out->dl()});
    const auto got = Read(*out);
    // Float sums of at most 16 values, then double: within 16 float roundings of the magnitude
    // whatever the row count (NumPy's float running sums drift with the row count).
    for (int64_t j = 0; j < cols; ++j) {
      CHECK(std::fabs(got[j] - want[j]) <= 1e-6 * magnitude[j] + 1e-6);
    }
  }
}

TEST_CASE("cpu: reduce_sum_axis_zero counts past 2^24 (float partial sums go into double)") {
  // 2^24 at a random row of the first half of each column, ones elsewhere: a float running sum
  // stops counting the ones after it (2^24 + 1 rounds to 2^24). Float partial sums of at most 16
  // values lose at most 15 of them. One column, narrow outputs and wide ones.
  const std::vector<Shape> shapes = {{3000},     {3000, 1},  {3000, 5},
                                     {3000, 63}, {3000, 64}, {3000, 130}};
  std::mt19937 gen(24);
  for (const Shape& shape : shapes) {
    CAPTURE(ShapeText(shape));
    const int64_t rows = shape[0], cols = Numel(shape) / rows;
    std::vector<float> x(static_cast<size_t>(rows * cols), 1.0f);
    for (int64_t j = 0; j < cols; ++j) {
      x[static_cast<size_t>(static_cast<int64_t>(gen() % (rows / 2)) * cols + j)] = 16777216.0f;
    }
    auto a = Make(shape, x);
    Shape out_shape(shape.begin() + 1, shape.end());
    if (out_shape.empty()) out_shape = {1};
    auto out = dlarray::Array::Empty(out_shape, Cpu());
    Run("reduce_sum_axis_zero", {a->dl()}, {out->dl()});
    const auto got = Read(*out);
    const double want = 16777216.0 + static_cast<double>(rows - 1);
    for (int64_t j = 0; j < cols; ++j) {
      CAPTURE(j);
      CHECK(std::fabs(got[j] - want) <= 16.0 / 16777216.0 * want + 1.0);
    }
  }
}

namespace {

// Softmax of each row over the last axis, in double.
std::vector<double> SoftmaxReference(const std::vector<float>& x, int64_t cols) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / cols; ++r) {
    const float* row = x.data() + r * cols;
    double m = row[0], s = 0;
    for (int64_t j = 0; j < cols; ++j) m = std::max<double>(m, row[j]);
    for (int64_t j = 0; j < cols; ++j) s += std::exp(row[j] - m);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = std::exp(row[j] - m) / s;
  }
  return y;
}

// The last two are large enough for streaming stores (rows within and beyond the scratch row).
const std::vector<Shape> kRowShapes = {{1},         {1, 1},      {1, 5},     {3, 17},
                                       {64, 1000},  {2000, 37},  {4, 3, 16}, {3, 100003},
                                       {512, 4100}, {130, 16500}};

}  // namespace

TEST_CASE("cpu: softmax over the last axis, in place too, for extreme values") {
  for (const Shape& shape : kRowShapes) {
    CAPTURE(ShapeText(shape));
    const int64_t cols = shape.back();
    auto x = Random(static_cast<size_t>(Numel(shape)), -8, 8, 7);
    if (x.size() >= 4) {
      x[0] = 1000.0f;   // large logits: exp would overflow without the max
      x[1] = -1000.0f;  // underflows to exactly 0
      x[2] = -95.0f;    // a subnormal result relative to the row max of 8.x
      x[3] = 0.0f;
    }
    const auto want = SoftmaxReference(x, cols);
    auto a = Make(shape, x);
    auto out = dlarray::Array::Empty(shape, Cpu());
    Run("softmax", {a->dl()}, {out->dl()});
    CHECK(Mismatches(Read(*out), want, 1e-5, 1e-30) == 0);
    Run("softmax", {a->dl()}, {a->dl()});
    CHECK(Mismatches(Read(*a), want, 1e-5, 1e-30) == 0);
  }
  // A row of zeros: every entry exactly 1 / n.
  auto zeros = Make({2, 4}, std::vector<float>(8, 0.0f));
  Run("softmax", {zeros->dl()}, {zeros->dl()});
  for (float v : Read(*zeros)) CHECK(v == 0.25f);
}

namespace {

// Sum over rows of -sum(labels * log_softmax(x)), in double (divide by rows for the mean).
double CrossEntropyReference(const std::vector<float>& x, const std::vector<float>& labels,
                             int64_t cols) {
  double total = 0;
  for (size_t r = 0; r * cols < x.size(); ++r) {
    const float* row = x.data() + r * cols;
    const float* label = labels.data() + r * cols;
    double m = row[0], s = 0;
    for (int64_t j = 0; j < cols; ++j) m = std::max<double>(m, row[j]);
    for (int64_t j = 0; j < cols; ++j) s += std::exp(row[j] - m);
    for (int64_t j = 0; j < cols; ++j) total -= label[j] * (row[j] - m - std::log(s));
  }
  return total;
}

}  // namespace

TEST_CASE("cpu: softmax_cross_entropy is the mean of -sum(y_ * log_softmax(y))") {
  for (const Shape& shape : kRowShapes) {
    CAPTURE(ShapeText(shape));
    const int64_t cols = shape.back(), rows = Numel(shape) / cols;
    auto y = Random(static_cast<size_t>(Numel(shape)), -5, 5, 8);
    if (y.size() >= 2) y[1] = -300.0f;  // exp underflows; log_softmax stays finite
    const auto labels = Random(y.size(), 0, 1, 9);
    const double total = CrossEntropyReference(y, labels, cols);
    auto a = Make(shape, y);
    auto t = Make(shape, labels);
    auto out = dlarray::Array::Empty({1}, Cpu());
    Run("softmax_cross_entropy", {a->dl(), t->dl()}, {out->dl()});
    CHECK(Mismatches(Read(*out), {total / rows}, 1e-5, 1e-7) == 0);
  }
}

namespace {

// Logits in [-3, 3] with 1 to 4 of about 1000 at random places of each row, never index 0, and
// -1000 at index 0 of every other row: exp of a logit minus anything but the row's maximum
// overflows, so only a kernel that shifts by the maximum gets these right.
std::vector<float> LargeLogits(int64_t rows, int64_t cols, unsigned seed) {
  auto x = Random(static_cast<size_t>(rows * cols), -3, 3, seed);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> jitter(-2, 2);
  for (int64_t r = 0; r < rows && cols > 1; ++r) {
    const int k = 1 + static_cast<int>(gen() % 4);
    for (int i = 0; i < k; ++i)
      x[r * cols + 1 + static_cast<int64_t>(gen() % (cols - 1))] = 1000 + jitter(gen);
    if (cols > 2 && r % 2 == 1) x[r * cols] = -1000.0f;
  }
  return x;
}

}  // namespace

TEST_CASE("cpu: softmax and softmax_cross_entropy shift by the row maximum, wherever it is") {
  for (const Shape& shape : kRowShapes) {
    CAPTURE(ShapeText(shape));
    const int64_t cols = shape.back(), rows = Numel(shape) / cols;
    if (cols < 2) continue;
    const auto x = LargeLogits(rows, cols, 25);
    const auto want = SoftmaxReference(x, cols);
    auto a = Make(shape, x);
    auto out = dlarray::Array::Empty(shape, Cpu());
    Run("softmax", {a->dl()}, {out->dl()});
    CHECK(Mismatches(Read(*out), want, 1e-5, 1e-30) == 0);
    const auto labels = Random(x.size(), 0, 1, 26);
    const double total = CrossEntropyReference(x, labels, cols);
    auto t = Make(shape, labels);
    auto loss = dlarray::Array::Empty({1}, Cpu());
    Run("softmax_cross_entropy", {a->dl(), t->dl()}, {loss->dl()});
    CHECK(Mismatches(Read(*loss), {total / rows}, 1e-5, 0) == 0);
  }
}

namespace {

// Checks c = op(a) @ op(b) entry by entry (all of them, or a sample of `samples`) against a
// double dot product, within 1e-5 of the sum of |products| (the float rounding bound).
void CheckProduct(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                  const std::vector<float>& b, const std::vector<float>& c, int samples) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  std::mt19937 gen(11);
  int bad = 0;
  const int64_t total = samples > 0 ? samples : m * n;
  for (int64_t s = 0; s < total; ++s) {
    const int64_t i = samples > 0 ? static_cast<int64_t>(gen() % m) : s / n;
    const int64_t j = samples > 0 ? static_cast<int64_t>(gen() % n) : s % n;
    double want = 0, magnitude = 0;
    for (int64_t p = 0; p < k; ++p) {
      const double prod = static_cast<double>(ta ? a[p * lda + i] : a[i * lda + p]) *
                          (tb ? b[j * ldb + p] : b[p * ldb + j]);
      want += prod;
      magnitude += std::fabs(prod);
    }
    if (!(std::fabs(c[i * n + j] - want) <= 1e-5 * magnitude + 1e-6)) ++bad;
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("cpu: matrix_multiply with every transpose combination") {
  struct Dims {
    int64_t m, n, k;
  };
  const std::vector<Dims> dims = {{1, 1, 1},    {2, 3, 4},    {1, 7, 1},       {16, 16, 16},
                                  {17, 33, 65}, {64, 1, 300}, {200, 300, 100}, {97, 513, 401}};
  for (const Dims& d : dims) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        CAPTURE(d.m);
        CAPTURE(d.n);
        CAPTURE(d.k);
        CAPTURE(ta);
        CAPTURE(tb);
        const auto av = Random(static_cast<size_t>(d.m * d.k), -1, 1, 12);
        const auto bv = Random(static_cast<size_t>(d.k * d.n), -1, 1, 13);
        auto a = Make(ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, av);
        auto b = Make(tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, bv);
        auto c = dlarray::Array::Empty({d.m, d.n}, Cpu());
        Run("matrix_multiply", {a->dl(), b->dl()}, {c->dl()},
            {static_cast<double>(ta), static_cast<double>(tb)});
        CheckProduct(ta, tb, d.m, d.n, d.k, av, bv, Read(*c), 0);
      }
    }
  }
}

#ifdef DLARRAY_TEST_SGEMM_BLOCKED
TEST_CASE("cpu: the own blocked SGEMM across its block sizes and edge tiles") {
  struct Dims {
    int64_t m, n, k;
  };
  // Block sizes: kKc = 384, kMc = 96 or 192, kNc = 1536 or 3072, tiles of 6 or 12 rows.
  const std::vector<Dims> dims = {{1, 1, 1},    {5, 3, 2},        {13, 33, 385},
                                  {193, 65, 7}, {200, 3100, 400}, {1, 4000, 3}};
  for (const Dims& d : dims) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        CAPTURE(d.m);
        CAPTURE(d.n);
        CAPTURE(d.k);
        CAPTURE(ta);
        CAPTURE(tb);
        const auto a = Random(static_cast<size_t>(d.m * d.k), -1, 1, 14);
        const auto b = Random(static_cast<size_t>(d.k * d.n), -1, 1, 15);
        std::vector<float> c(static_cast<size_t>(d.m * d.n), NAN);
        dlarray::cpu::SgemmBlocked(ta, tb, d.m, d.n, d.k, a.data(), ta ? d.m : d.k, b.data(),
                                   tb ? d.k : d.n, c.data(), d.n);
        CheckProduct(ta, tb, d.m, d.n, d.k, a, b, c, d.m * d.n > 100000 ? 3000 : 0);
      }
    }
  }
}
#endif

TEST_CASE("cpu: the device allocates aligned memory, counts it and refuses impossible sizes") {
  CHECK(dlarray::DeviceCount(kDLArrayCPU) == 1);
  CHECK(!dlarray::DeviceName(Cpu()).empty());
  const std::string gemm = dlarray::GetDeviceOption(Cpu(), "gemm");
  CHECK((gemm == "cblas" || gemm == "blocked"));
  CHECK(std::stoi(dlarray::GetDeviceOption(Cpu(), "num_threads")) >= 1);
  const dlarray::MemoryStats before = dlarray::GetMemoryStats(Cpu());
  {
    auto a = dlarray::Array::Empty({25}, Cpu());  // 100 bytes
    CHECK(reinterpret_cast<uintptr_t>(a->dl()->data) % 64 == 0);
    const dlarray::MemoryStats during = dlarray::GetMemoryStats(Cpu());
    CHECK(during.bytes_in_use == before.bytes_in_use + 100);
    CHECK(during.num_allocations == before.num_allocations + 1);
    CHECK(during.peak_bytes_in_use >= during.bytes_in_use);
  }
  const dlarray::MemoryStats after = dlarray::GetMemoryStats(Cpu());
  CHECK(after.bytes_in_use == before.bytes_in_use);
  CHECK(after.num_frees == before.num_frees + 1);
  CHECK_THROWS_WITH_AS(dlarray::Array::Empty({int64_t{1} << 58}, Cpu()),
                       doctest::Contains("1152921504606846976 bytes"), dlarray::OutOfMemoryError);
  CHECK_THROWS_AS(dlarray::Array::Empty({int64_t{1} << 60}, Cpu()), dlarray::OutOfMemoryError);
  CHECK_THROWS_AS(dlarray::Array::Empty({4}, DLContext{kDLArrayCPU, 1}), dlarray::DeviceError);
}

TEST_CASE("cpu: large host copies (parallel) and overlapping ones") {
  std::vector<float> src = Random(3000001, -1, 1, 16), dst(src.size(), 0.0f);
  auto View = [](std::vector<float>& v, int64_t* n, size_t offset, int64_t count) {
    *n = count;
    return DLArray{v.data(), Cpu(), 1, dlarray::kFloat32, n, nullptr, offset * sizeof(float)};
  };
  int64_t n1 = 0, n2 = 0;
  DLArray s = View(src, &n1, 0, static_cast<int64_t>(src.size()));
  DLArray d = View(dst, &n2, 0, static_cast<int64_t>(dst.size()));
  dlarray::CopyFromTo(&s, &d);
  CHECK(src == dst);
  std::vector<float> overlap = {1, 2, 3, 4, 5};
  DLArray from = View(overlap, &n1, 0, 4), to = View(overlap, &n2, 1, 4);
  dlarray::CopyFromTo(&from, &to);
  CHECK(overlap == std::vector<float>{1, 1, 2, 3, 4});
}

/*!
 * \file sgemm_blocked.cc
 * \brief The own SGEMM for builds without CBLAS: Goto-style blocking (B panels of kKc x kNc kept
 *        in L3, A blocks of kMc x kKc in L2), operands packed into register-tile panels, a
 *        kMr x kNr vector micro-kernel, and OpenMP over (A block, column group) tasks.
 */
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "cpu_kernels.h"
#include "dlarray/errors.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

#if defined(__AVX512F__)
constexpr int kMr = 12;  // 24 of the 32 vector registers hold the C tile
#else
constexpr int kMr = 6;  // 12 of the 16 vector registers hold the C tile
#endif
constexpr int kNr = 2 * kVecWidth;
constexpr int64_t kKc = 384;
constexpr int64_t kMc = kMr * 16;
constexpr int64_t kNc = kNr * 96;
constexpr int64_t kColumnGroup = kNr * 8;  // most columns of one parallel task

// op(X) as a strided view: element (i, j) at data[i * row_stride + j * col_stride].
struct View {
  const float* data;
  int64_t row_stride;
  int64_t col_stride;
  float at(int64_t i, int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

Buffer AllocateFloats(int64_t count) {
  const size_t bytes = (static_cast<size_t>(count) * sizeof(float) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) {
    throw OutOfMemoryError("matrix_multiply on cpu: cannot allocate a " + std::to_string(bytes) +
                           "-byte packing buffer");
  }
  return Buffer(static_cast<float*>(p));
}

// Rows [i0, i0 + mc) x cols [p0, p0 + kc) of op(A) as kMr-row panels (dst[p * kMr + r]), padded
// with zero rows.
void PackA(const View& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  for (int64_t ir = 0; ir < mc; ir += kMr, dst += kc * kMr) {
    const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - ir));
    if (rows < kMr) std::fill(dst, dst + kc * kMr, 0.0f);
    if (a.col_stride == 1) {
      for (int r = 0; r < rows; ++r) {
        const float* src = a.data + (i0 + ir + r) * a.row_stride + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * kMr + r] = src[p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int r = 0; r < rows; ++r) dst[p * kMr + r] = a.at(i0 + ir + r, p0 + p);
      }
    }
  }
}

// Rows [p0, p0 + kc) x cols [j0, j0 + nc) of op(B) as kNr-column panels (dst[p * kNr + c]),
// padded with zero columns; panels [panel0, panel1) only.
void PackB(const View& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t panel0,
           int64_t panel1, float* dst) {
  for (int64_t panel = panel0; panel < panel1; ++panel) {
    float* out = dst + panel * kc * kNr;
    const int64_t jr = panel * kNr;
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    if (cols < kNr) std::fill(out, out + kc * kNr, 0.0f);
    if (b.col_stride == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b.data + (p0 + p) * b.row_stride + j0 + jr;
        std::copy(src, src + cols, out + p * kNr);
      }
    } else {
      for (int c = 0; c < cols; ++c) {
        for (int64_t p = 0; p < kc; ++p) out[p * kNr + c] = b.at(p0 + p, j0 + jr + c);
      }
    }
  }
}

// C[rows x cols] (= or +=) the kMr x kNr product of one A panel and one B panel.
void MicroKernel(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int rows,
                 int cols, bool accumulate) {
  VecF acc[kMr][2] = {};
  for (int64_t p = 0; p < kc; ++p, ap += kMr, bp += kNr) {
    const VecF b0 = LoadU(bp);
    const VecF b1 = LoadU(bp + kVecWidth);
#pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r) {
      const VecF av = Splat<VecF>(ap[r]);
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
  if (rows == kMr && cols == kNr) {
#pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r) {
      float* row = c + r * ldc;
      if (accumulate) {
        acc[r][0] += LoadU(row);
        acc[r][1] += LoadU(row + kVecWidth);
      }
      StoreU(row, acc[r][0]);
      StoreU(row + kVecWidth, acc[r][1]);
    }
    return;
  }
  float tile[kMr][kNr];
  for (int r = 0; r < kMr; ++r) {
    StoreU(tile[r], acc[r][0]);
    StoreU(tile[r] + kVecWidth, acc[r][1]);
  }
  for (int r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    for (int j = 0; j < cols; ++j) row[j] = accumulate ? row[j] + tile[r][j] : tile[r][j];
  }
}

// Columns of one task: kColumnGroup, or fewer when that would leave threads without a task.
int64_t GroupWidth(int64_t nc, int64_t m_blocks, int threads) {
  const int64_t wanted_groups = (2 * threads + m_blocks - 1) / m_blocks;
  const int64_t width = (nc / wanted_groups + kNr - 1) / kNr * kNr;
  return std::clamp(width, static_cast<int64_t>(kNr), kColumnGroup);
}

}  // namespace

void SgemmBlocked(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  const View av{a, trans_a ? 1 : lda, trans_a ? lda : 1};
  const View bv{b, trans_b ? 1 : ldb, trans_b ? ldb : 1};
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int threads = macs < 4.0 * kParallelWork ? 1 : ParallelThreads();
  const int64_t kc_max = std::min(kKc, k);
  const int64_t nc_max = std::min(kNc, (n + kNr - 1) / kNr * kNr);
  Buffer b_pack = AllocateFloats(kc_max * nc_max);
  Buffer a_pack = AllocateFloats(kc_max * kMc * threads);
  const int64_t m_blocks = (m + kMc - 1) / kMc;

  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    const int64_t panels = (nc + kNr - 1) / kNr;
    const int64_t group_width = GroupWidth(nc, m_blocks, threads);
    const int64_t groups = (nc + group_width - 1) / group_width;
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      const bool accumulate = pc > 0;
      float* bp = b_pack.get();
      auto pack_b = [&](int t) {
        PackB(bv, pc, kc, jc, nc, ChunkBegin(panels, 1, t, threads),
              ChunkBegin(panels, 1, t + 1, threads), bp);
      };
      auto task_body = [&](int64_t task, int thread) {
        const int64_t ic = task / groups * kMc;
        const int64_t mc = std::min(kMc, m - ic);
        const int64_t g0 = task % groups * group_width;
        const int64_t g1 = std::min(nc, g0 + group_width);
        float* ap = a_pack.get() + thread * kMc * kc_max;
        PackA(av, ic, mc, pc, kc, ap);
        for (int64_t jr = g0; jr < g1; jr += kNr) {
          const int cols = static_cast<int>(std::min<int64_t>(kNr, g1 - jr));
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - ir));
            MicroKernel(kc, ap + ir * kc, bp + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc, rows,
                        cols, accumulate);
          }
        }
      };
      if (threads == 1) {  // no parallel region at all (see parallel.h)
        pack_b(0);
        for (int64_t task = 0; task < m_blocks * groups; ++task) task_body(task, 0);
        continue;
      }
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int t = 0; t < threads; ++t) pack_b(t);
#pragma omp parallel for schedule(dynamic) num_threads(threads)
      for (int64_t task = 0; task < m_blocks * groups; ++task)
        task_body(task, omp_get_thread_num());
    }
  }
}

}  // namespace dlarray::cpu

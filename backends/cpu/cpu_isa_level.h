/*!
 * \file cpu_isa_level.h
 * \brief The best x86-64 instruction set level this CPU (and its OS) runs: 0 baseline,
 *        1 x86-64-v3 (AVX2), 2 x86-64-v4 (AVX-512).
 *
 * Read from CPUID and XGETBV directly rather than through __builtin_cpu_supports: that builtin is
 * answered by the compiler's runtime library (libgcc, or compiler-rt under clang), and zig's
 * compiler-rt, which the portable wheel links, reported no AVX2 or AVX-512 on CPUs that have
 * them. The instructions give the same answer whatever compiler built us.
 */
#ifndef DLARRAY_BACKENDS_CPU_CPU_ISA_LEVEL_H_
#define DLARRAY_BACKENDS_CPU_CPU_ISA_LEVEL_H_

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace dlarray::cpu {

#if defined(__x86_64__)
namespace isa_detail {

inline bool AllBits(unsigned reg, unsigned mask) { return (reg & mask) == mask; }

// The register state the OS saves on a context switch (XCR0): without it, the wide registers are
// not usable even where CPUID lists the instructions.
inline unsigned long long OsSavedState() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

}  // namespace isa_detail
#endif

inline int CpuIsaLevel() {
#if defined(__x86_64__)
  using isa_detail::AllBits;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return 0;
  __cpuid_count(1, 0, a, b, c, d);
  // Leaf 1 ECX: FMA (12), MOVBE (22), OSXSAVE (27), AVX (28), F16C (29).
  const bool leaf1 = AllBits(c, (1u << 12) | (1u << 22) | (1u << 27) | (1u << 28) | (1u << 29));
  if (!leaf1) return 0;
  const unsigned long long xcr0 = isa_detail::OsSavedState();
  const bool ymm_saved = (xcr0 & 0x6) == 0x6;    // SSE and AVX state
  const bool zmm_saved = (xcr0 & 0xe6) == 0xe6;  // and the opmask, ZMM0-15 high, ZMM16-31
  unsigned ext_a = 0, ext_b = 0, ext_c = 0, ext_d = 0;
  __cpuid(0x80000000u, ext_a, ext_b, ext_c, ext_d);
  bool lzcnt = false;
  if (ext_a >= 0x80000001u) {
    __cpuid(0x80000001u, ext_a, ext_b, ext_c, ext_d);
    lzcnt = (ext_c & (1u << 5)) != 0;  // ABM/LZCNT
  }
  __cpuid_count(7, 0, a, b, c, d);
  // Leaf 7 EBX: BMI1 (3), AVX2 (5), BMI2 (8); AVX512F (16), DQ (17), CD (28), BW (30), VL (31).
  const bool v3 = ymm_saved && lzcnt && AllBits(b, (1u << 3) | (1u << 5) | (1u << 8));
  const bool v4 =
      v3 && zmm_saved && AllBits(b, (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31));
  if (v4) return 2;
  if (v3) return 1;
#endif
  return 0;
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_CPU_ISA_LEVEL_H_

/*!
 * \file cpu_isa_level.h
 * \brief The best x86-64 instruction set level this CPU (and its OS) runs: 0 baseline,
 *        1 x86-64-v3 (AVX2), 2 x86-64-v4 (AVX-512).
 */
#ifndef DLARRAY_BACKENDS_CPU_CPU_ISA_LEVEL_H_
#define DLARRAY_BACKENDS_CPU_CPU_ISA_LEVEL_H_

namespace dlarray::cpu {

inline int CpuIsaLevel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
#if defined(__clang__)
  // Clang before 16 has no level names in __builtin_cpu_supports: the features that define them
  // (the rest of each level, F16C, LZCNT, MOVBE, came with these on every x86-64 CPU made).
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
#else
  const bool v3 = __builtin_cpu_supports("x86-64-v3");
  const bool v4 = __builtin_cpu_supports("x86-64-v4");
#endif
  if (v4) return 2;
  if (v3) return 1;
#endif
  return 0;
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_CPU_ISA_LEVEL_H_

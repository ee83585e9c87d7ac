/* SPDX-License-Identifier: MIT */
/* Runtime instruction-set checks and the per-instruction-set tables (cpu_isa.h). LT_CPU_ISA
 * (baseline, avx2, avx512, avx512bf16) caps the set, so the tests can run every code path on one
 * machine and users can rule out a suspect kernel. */
#include "backend/cpu/cpu_isa.h"

#include <stdatomic.h>
#if defined(LT_HAVE_X86_ISA_KERNELS) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif
#include <stdlib.h>
#include <string.h>

enum isa_level { ISA_BASELINE, ISA_AVX2, ISA_AVX512, ISA_AVX512_BF16 };

static enum isa_level isa_cap_from_env(void) {
  const char *cap = getenv("LT_CPU_ISA");
  if (!cap || !*cap) return ISA_AVX512_BF16;
  if (strcmp(cap, "baseline") == 0) return ISA_BASELINE;
  if (strcmp(cap, "avx2") == 0) return ISA_AVX2;
  if (strcmp(cap, "avx512") == 0) return ISA_AVX512;
  return ISA_AVX512_BF16;
}

static enum isa_level isa_of_cpu(void) {
#if defined(LT_HAVE_X86_ISA_KERNELS) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  /* libgcc's checks include the OS's XSAVE state, so a "yes" means the registers work. */
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("fma"))
    return __builtin_cpu_supports("avx512bf16") ? ISA_AVX512_BF16 : ISA_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return ISA_AVX2;
#endif
  return ISA_BASELINE;
}

bool lt__cpu_has_f16c(void) {
#if defined(LT_HAVE_X86_ISA_KERNELS) && (defined(__GNUC__) || defined(__clang__))
  static atomic_int known; /* 0: not asked yet, 1: no, 2: yes (racing threads store the same) */
  int k = atomic_load_explicit(&known, memory_order_relaxed);
  if (k == 0) {
    /* cpuid rather than __builtin_cpu_supports, which clang 14 does not ask about f16c */
    unsigned a, b, c, d;
    k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) ? 2 : 1;
    atomic_store_explicit(&known, k, memory_order_relaxed);
  }
  return k == 2;
#else
  return false;
#endif
}

static enum isa_level isa_level(void) {
  static atomic_int cpu_level = -1; /* every thread that races here stores the same value */
  int level = atomic_load_explicit(&cpu_level, memory_order_relaxed);
  if (level < 0) {
    level = (int)isa_of_cpu();
    atomic_store_explicit(&cpu_level, level, memory_order_relaxed);
  }
  enum isa_level cap = isa_cap_from_env();
  return (enum isa_level)level < cap ? (enum isa_level)level : cap;
}

static const lt__cpu_isa isa_baseline = {
    .name = "baseline",
    .simd = LT__CPU_SIMD_BASELINE,
    .kernels = lt__cpu_kernels_for,
    .gemm_blocking = NULL,
    .gemm_stream = NULL,
    .gemm_small = NULL,
    .gemm_kdot = NULL,
};
#if defined(LT_HAVE_X86_ISA_KERNELS)
static const lt__cpu_isa isa_avx2 = {
    .name = "avx2",
    .simd = LT__CPU_SIMD_AVX2,
    .kernels = lt__cpu_kernels_avx2,
    .gemm_blocking = lt__gemm_blocking_avx2,
    .gemm_stream = lt__gemm_stream_avx2,
    .gemm_small = lt__gemm_small_avx2,
    .gemm_kdot = lt__gemm_kdot_avx2,
};
static const lt__cpu_isa isa_avx512 = {
    .name = "avx512",
    .simd = LT__CPU_SIMD_AVX512,
    .kernels = lt__cpu_kernels_avx512,
    .gemm_blocking = lt__gemm_blocking_avx512,
    .gemm_stream = lt__gemm_stream_avx512,
    .gemm_small = lt__gemm_small_avx512,
    .gemm_kdot = lt__gemm_kdot_avx512,
};
/* AVX-512 with the bf16 dot products: the same kernels, plus vdpbf16ps GEMM for bf16. */
static const lt__cpu_isa isa_avx512bf16 = {
    .name = "avx512bf16",
    .simd = LT__CPU_SIMD_AVX512,
    .kernels = lt__cpu_kernels_avx512,
    .gemm_blocking = lt__gemm_blocking_avx512bf16,
    .gemm_stream = lt__gemm_stream_avx512,
    .gemm_small = lt__gemm_small_avx512,
    .gemm_kdot = lt__gemm_kdot_avx512,
};
#endif

const lt__cpu_isa *lt__cpu_isa_select(void) {
#if defined(LT_HAVE_X86_ISA_KERNELS)
  switch (isa_level()) {
  case ISA_AVX512_BF16: return &isa_avx512bf16;
  case ISA_AVX512: return &isa_avx512;
  case ISA_AVX2: return &isa_avx2;
  default: break;
  }
#endif
  return &isa_baseline;
}

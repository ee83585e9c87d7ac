/* SPDX-License-Identifier: MIT */
/* Portable GEMM micro-kernels in plain C (the compiler vectorises the row loop with whatever
 * the baseline has). They run plans whose matrices have no unit stride on CPUs without the
 * AVX-512 kernels, where OpenBLAS cannot take them; speed there is secondary. Generated names:
 * gemm_kernel_f32_portable and gemm_kernel_f64_portable. */
#include "backend/cpu/cpu_gemm_kernel.h"

#define PORTABLE_MR 8
#define PORTABLE_NR 4

#define LT_DEFINE_PORTABLE_KERNEL(T, name)                                                         \
  static void name(int64_t kc, const void *a_panel, const void *b_panel, void *c_tile,             \
                   int64_t rs_c, int64_t cs_c, double alpha_d, double beta_d, int m, int n) {      \
    const T *a = a_panel, *b = b_panel;                                                            \
    T *c = c_tile, acc[PORTABLE_NR][PORTABLE_MR] = {{0}};                                          \
    for (int64_t p = 0; p < kc; p++, a += PORTABLE_MR, b += PORTABLE_NR)                           \
      for (int j = 0; j < PORTABLE_NR; j++)                                                        \
        for (int i = 0; i < PORTABLE_MR; i++)                                                      \
          acc[j][i] += a[i] * b[j];                                                                \
    const T alpha = (T)alpha_d, beta = (T)beta_d;                                                  \
    for (int j = 0; j < n; j++)                                                                    \
      for (int i = 0; i < m; i++) {                                                                \
        T *cij = c + i * rs_c + j * cs_c;                                                          \
        *cij = beta != 0 ? alpha * acc[j][i] + beta * *cij : alpha * acc[j][i];                    \
      }                                                                                            \
  }
LT_DEFINE_PORTABLE_KERNEL(float, gemm_kernel_f32_portable)
LT_DEFINE_PORTABLE_KERNEL(double, gemm_kernel_f64_portable)
#undef LT_DEFINE_PORTABLE_KERNEL

static const lt__gemm_blocking blocking_f32 = {
    LT_F32, sizeof(float), PORTABLE_MR, PORTABLE_NR, 256, 128, 2048, gemm_kernel_f32_portable,
    false,  NULL};
static const lt__gemm_blocking blocking_f64 = {
    LT_F64, sizeof(double),           PORTABLE_MR, PORTABLE_NR, 256, 64,
    2048,   gemm_kernel_f64_portable, false,       NULL};

const lt__gemm_blocking *lt__gemm_blocking_portable(lt_dtype dtype) {
  return dtype == LT_F32 ? &blocking_f32 : dtype == LT_F64 ? &blocking_f64 : NULL;
}

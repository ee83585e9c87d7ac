/* SPDX-License-Identifier: MIT */
/* The AVX2 lt__gemm_pack16_fn: f16 / bf16 operands widened to the f32 kernel's panels with F16C
 * (vcvtph2ps) and shifts instead of one out-of-line scalar conversion per element. Panel rows
 * adjacent in memory are widened eight at a time per k; k adjacent, eight k values of a row at
 * a time; any other layout element by element, still inline. Without F16C (hidden by a
 * hypervisor) the portable packer runs. */
#include "backend/cpu/cpu_gemm_kernel.h"
#include "backend/cpu/cpu_isa.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include "backend/cpu/cpu_half_avx2.h"

#include <string.h>

static bool steps_by_one(const int64_t *off, int64_t n) {
  for (int64_t i = 1; i < n; i++)
    if (off[i] != off[0] + i) return false;
  return true;
}

LT_F16C void lt__gemm_pack16_avx2(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                                  int64_t rows, const int64_t *koff, int64_t kc, int r,
                                  bool pairs) {
  if (pairs || !lt__cpu_has_f16c()) { /* pairs are for the bf16 dot-product kernels only */
    lt__gemm_pack16_portable(dst, src, bf16, roff, rows, koff, kc, r, pairs);
    return;
  }
  bool k_unit = kc >= 8 && steps_by_one(koff, kc);
  for (int64_t r0 = 0; r0 < rows; r0 += r) {
    int64_t nr = rows - r0 < r ? rows - r0 : r;
    const int64_t *ro = roff + r0;
    float *d = (float *)dst + r0 * kc;
    if (nr < r) memset(d, 0, sizeof *d * (size_t)r * (size_t)kc);
    if (nr == r && r % 8 == 0 && steps_by_one(ro, nr)) {
      for (int64_t p = 0; p < kc; p++)
        for (int i = 0; i < r; i += 8)
          _mm256_storeu_ps(d + p * r + i, lt__widen8_avx2(src + ro[0] + i + koff[p], bf16));
    } else if (k_unit) {
      for (int64_t i = 0; i < nr; i++) {
        const uint16_t *row = src + ro[i] + koff[0];
        int64_t p = 0;
        for (; p + 8 <= kc; p += 8) {
          float f[8];
          _mm256_storeu_ps(f, lt__widen8_avx2(row + p, bf16));
          for (int j = 0; j < 8; j++)
            d[(p + j) * r + i] = f[j];
        }
        for (; p < kc; p++)
          d[p * r + i] = lt__widen1_avx2(row[p], bf16);
      }
    } else {
      for (int64_t p = 0; p < kc; p++)
        for (int64_t i = 0; i < nr; i++)
          d[p * r + i] = lt__widen1_avx2(src[ro[i] + koff[p]], bf16);
    }
  }
}
#endif

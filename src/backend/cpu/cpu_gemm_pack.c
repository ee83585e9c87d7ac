/* Panel packing by element size (the values are only moved, so f32/f64 differ only in width):
 * pack_u32 and pack_u64. The read order follows whichever source stride is unit. */
#include "backend/cpu/cpu_gemm_pack.h"

#include <string.h>

#define LT_DEFINE_PACK(S, name)                                                                    \
  static void pack_##name(S *dst, const S *src, int64_t s_row, int64_t s_k, int64_t rows,          \
                          int64_t kc, int r) {                                                     \
    for (int64_t r0 = 0; r0 < rows; r0 += r, dst += (int64_t)r * kc) {                             \
      int64_t nr = rows - r0 < r ? rows - r0 : r;                                                  \
      const S *s = src + r0 * s_row;                                                               \
      if (nr < r) memset(dst, 0, sizeof(S) * (size_t)r * (size_t)kc);                              \
      if (s_row == 1) {                                                                            \
        for (int64_t p = 0; p < kc; p++)                                                           \
          memcpy(dst + p * r, s + p * s_k, sizeof(S) * (size_t)nr);                                \
      } else {                                                                                     \
        for (int64_t i = 0; i < nr; i++)                                                           \
          for (int64_t p = 0; p < kc; p++)                                                         \
            dst[p * r + i] = s[i * s_row + p * s_k];                                               \
      }                                                                                            \
    }                                                                                              \
  }
LT_DEFINE_PACK(uint32_t, u32)
LT_DEFINE_PACK(uint64_t, u64)
#undef LT_DEFINE_PACK

void lt__gemm_pack(void *dst, const void *src, int64_t s_row, int64_t s_k, int64_t rows, int64_t kc,
                   int r, size_t esize) {
  if (esize == 4)
    pack_u32(dst, src, s_row, s_k, rows, kc, r);
  else
    pack_u64(dst, src, s_row, s_k, rows, kc, r);
}

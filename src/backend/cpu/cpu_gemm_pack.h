/* SPDX-License-Identifier: MIT */
/* Packing for the micro-kernels: a block of a strided matrix into k-major panels of R rows. */
#ifndef LT_BACKEND_CPU_GEMM_PACK_H
#define LT_BACKEND_CPU_GEMM_PACK_H

#include "backend/cpu/cpu_transpose.h"

#include <stddef.h>
#include <stdint.h>

/* Packs rows [0, rows) x k [0, kc) of src (element (r, p) at src[r*s_row + p*s_k]) into
 * ceil(rows/R) panels, panel q holding (r = q*R + i, p) at dst[q*R*kc + p*R + i], rows past
 * `rows` zero. Elements of esize 4 or 8 bytes; `simd` picks the tile transposes used when k is
 * the unit-stride direction. */
void lt__gemm_pack(void *dst, const void *src, int64_t s_row, int64_t s_k, int64_t rows, int64_t kc,
                   int r, size_t esize, lt__cpu_simd simd);

#endif

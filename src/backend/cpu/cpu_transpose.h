/* Bit-exact copies for permutations without arithmetic: strided rows and transposed tiles. */
#ifndef LT_BACKEND_CPU_TRANSPOSE_H
#define LT_BACKEND_CPU_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

/* dst[i*ds] = src[i*ss] for i < n, elements of esize bytes (2, 4 or 8). */
void lt__cpu_copy_strided(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n,
                          size_t esize);
/* dst[p*ldd + q] = src[q*lds + p] for p < np, q < nq (one cache-resident tile). */
void lt__cpu_transpose_tile(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t np,
                            int64_t nq, size_t esize);

#endif

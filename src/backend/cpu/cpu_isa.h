/* Which vector instruction sets the CPU kernels may use, decided once per process. Kernels for
 * AVX2 / AVX-512 live in files named *_avx2.c / *_avx512.c that are compiled for that set
 * only, so nothing in them may run before these checks say yes. */
#ifndef LT_BACKEND_CPU_ISA_H
#define LT_BACKEND_CPU_ISA_H

#include <stdbool.h>

/* True when the build has the AVX2+FMA kernels and the running CPU (and OS) supports them,
 * unless LT_CPU_ISA=baseline forces the portable code. */
bool lt__cpu_has_avx2(void);
/* Same for AVX-512 (F, DQ, BW, VL); LT_CPU_ISA=avx2 or baseline disables it. */
bool lt__cpu_has_avx512(void);

#endif

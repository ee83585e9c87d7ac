/* SPDX-License-Identifier: MIT */
/* cpu_vocab_kernels.inc compiled for AVX-512 (names with _avx512 appended): twice the lanes of
 * the AVX2 build for the exp loops, the same operations in the same order, so the same bits.
 * Normals get a hand-vectorised loop (normals_zmm below): the compiler's version of
 * philox.h's scalar code shuffles 32-bit halves between every Philox round and ran at a third
 * of this speed. It computes philox.h's definition step for step (no fused multiply-adds, the
 * same constants and evaluation order, negation as a sign flip), so its values are the scalar
 * ones bit for bit (test_random checks them against philox.h). Chosen only where the
 * context's instruction-set table is AVX-512 (cpu_vocab_kernels.c). */
#if defined(LT_HAVE_X86_ISA_KERNELS)
#include "backend/cpu/cpu_vocab.h"

static void normals_zmm(const lt__rng_step *s, int64_t lo, int64_t n, double *d);
#define VK_NORMALS normals_zmm
#define VK_ISA _avx512
#include "backend/cpu/cpu_vocab_kernels.inc"

#include <immintrin.h>

#define BCAST_U32(v) _mm512_set1_epi64((long long)(uint32_t)(v))

/* Independent groups of eight lanes in flight per step: the log, division, square root and
 * Philox chains are long, and one group alone leaves the vector units waiting on latency. */
#define G 4
#define EACH for (int g = 0; g < G; g++)

/* Philox4x32-10 on G x 8 counters at once, one per 64-bit lane; only the low 32 bits of each
 * lane are meaningful (vpmuludq reads only those, so the high halves are never cleaned). */
static inline void philox_zmm(__m512i *a, __m512i *b, __m512i *c, __m512i *e, uint32_t k0,
                              uint32_t k1) {
  const __m512i m0 = BCAST_U32(LT_PHILOX_M0), m1 = BCAST_U32(LT_PHILOX_M1);
  for (int r = 0; r < 10; r++) {
    __m512i ka = BCAST_U32(k0), kb = BCAST_U32(k1);
    EACH {
      __m512i p0 = _mm512_mul_epu32(a[g], m0), p1 = _mm512_mul_epu32(c[g], m1);
      /* 0x96: three-way exclusive or. */
      a[g] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), b[g], ka, 0x96);
      c[g] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), e[g], kb, 0x96);
      b[g] = p1;
      e[g] = p0;
    }
    k0 += LT_PHILOX_W0;
    k1 += LT_PHILOX_W1;
  }
}

/* lt_rng_unit52 of the words (hi, lo) in the low halves of two lanes. */
static inline __m512d unit52_zmm(__m512i hi, __m512i lo) {
  const __m512i one_bits = _mm512_set1_epi64(0x3ff0000000000000LL);
  __m512i w = _mm512_or_si512(_mm512_slli_epi64(hi, 32), _mm512_and_si512(lo, BCAST_U32(~0u)));
  __m512i bits = _mm512_or_si512(_mm512_srli_epi64(w, 12), one_bits);
  return _mm512_sub_pd(_mm512_castsi512_pd(bits), _mm512_set1_pd(1.0));
}

#define MUL _mm512_mul_pd
#define ADD _mm512_add_pd
#define SUB _mm512_sub_pd
#define C(x) _mm512_set1_pd(x)

/* lt_rng_log for u in (0, 1], in place on G vectors. */
static inline void log_zmm(__m512d *x) {
  static const double coef[10] = {1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
                                  1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3};
  __m512d s[G], z[G], p[G], ed[G];
  EACH {
    __m512i bits = _mm512_castpd_si512(x[g]);
    __m512i e = _mm512_sub_epi64(_mm512_srli_epi64(bits, 52), _mm512_set1_epi64(1023));
    __m512i mant = _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi64(0x000fffffffffffffLL)),
                                   _mm512_set1_epi64(0x3ff0000000000000LL));
    __m512d m = _mm512_castsi512_pd(mant);
    __mmask8 big = _mm512_cmp_pd_mask(m, C(1.4142135623730951), _CMP_GT_OQ);
    m = _mm512_mask_mul_pd(m, big, m, C(0.5));
    e = _mm512_mask_add_epi64(e, big, e, _mm512_set1_epi64(1));
    ed[g] = _mm512_cvtepi64_pd(e);
    s[g] = _mm512_div_pd(SUB(m, C(1.0)), ADD(m, C(1.0)));
    z[g] = MUL(s[g], s[g]);
    p[g] = C(1.0 / 23);
  }
  for (int t = 0; t < 10; t++)
    EACH p[g] = ADD(MUL(p[g], z[g]), C(coef[t]));
  EACH {
    __m512d pz = MUL(p[g], z[g]), s2 = MUL(C(2.0), s[g]);
    __m512d tail = ADD(ADD(s2, MUL(s2, pz)), MUL(ed[g], C(2.3190468138462996e-17)));
    x[g] = ADD(MUL(ed[g], C(0.6931471805599453)), tail);
  }
}

/* lt_rng_sincos2pi for u in [0, 1), on G vectors (the Taylor terms alternate in sign, as
 * philox.h writes them: x * z - c, not x * z + (-c)). */
static inline void sincos2pi_zmm(const __m512d *u, __m512d *c, __m512d *s) {
  static const double sc[8] = {
      1.0 / 355687428096000.0, 1.0 / 1307674368000.0, 1.0 / 6227020800.0, 1.0 / 39916800.0,
      1.0 / 362880.0,          1.0 / 5040.0,          1.0 / 120.0,        1.0 / 6.0};
  static const double cc[8] = {
      1.0 / 20922789888000.0, 1.0 / 87178291200.0, 1.0 / 479001600.0, 1.0 / 3628800.0,
      1.0 / 40320.0,          1.0 / 720.0,         1.0 / 24.0,        0.5};
  __m512d k[G], phi[G], z[G], sp[G], cp[G];
  EACH {
    __m512d q = MUL(u[g], C(4.0));
    k[g] = _mm512_roundscale_pd(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    phi[g] = MUL(SUB(SUB(q, k[g]), C(0.5)), C(1.5707963267948966));
    z[g] = MUL(phi[g], phi[g]);
    sp[g] = C(sc[0]);
    cp[g] = C(cc[0]);
  }
  for (int t = 1; t < 8; t++)
    EACH {
      sp[g] = t % 2 ? SUB(MUL(sp[g], z[g]), C(sc[t])) : ADD(MUL(sp[g], z[g]), C(sc[t]));
      cp[g] = t % 2 ? SUB(MUL(cp[g], z[g]), C(cc[t])) : ADD(MUL(cp[g], z[g]), C(cc[t]));
    }
  const __m512d sign = C(-0.0);
  EACH {
    __m512d spf = ADD(phi[g], MUL(MUL(phi[g], z[g]), sp[g]));
    __m512d cpf = ADD(C(1.0), MUL(z[g], cp[g]));
    __m512d st = MUL(ADD(spf, cpf), C(0.7071067811865476));
    __m512d ct = MUL(SUB(cpf, spf), C(0.7071067811865476));
    __m512d nst = _mm512_xor_pd(st, sign), nct = _mm512_xor_pd(ct, sign);
    __mmask8 q1 = _mm512_cmp_pd_mask(k[g], C(1.0), _CMP_EQ_OQ);
    __mmask8 q2 = _mm512_cmp_pd_mask(k[g], C(2.0), _CMP_EQ_OQ);
    __mmask8 q3 = _mm512_cmp_pd_mask(k[g], C(3.0), _CMP_EQ_OQ);
    c[g] = _mm512_mask_mov_pd(_mm512_mask_mov_pd(_mm512_mask_mov_pd(ct, q1, nst), q2, nct), q3, st);
    s[g] = _mm512_mask_mov_pd(_mm512_mask_mov_pd(_mm512_mask_mov_pd(st, q1, ct), q2, nst), q3, nct);
  }
}

/* Normals of elements [lo, lo + n) (lo even): eight Philox blocks and Box-Muller pairs per
 * group, G groups per step; the remainder (fewer than 16 G elements) goes to the generic
 * loop. */
static void normals_zmm(const lt__rng_step *s, int64_t lo, int64_t n, double *d) {
  uint64_t first = s->offset + (uint64_t)lo / 2;
  const __m512i lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i even = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
  const __m512i odd = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
  const __m512i st_lo = BCAST_U32(s->stream), st_hi = BCAST_U32(s->stream >> 32);
  const __m512d a = C(s->a), sd = C(s->b);
  int64_t done = 0;
  for (; done + 16 * G <= n; done += 16 * G) {
    __m512i c0[G], c1[G], c2[G], c3[G];
    EACH {
      uint64_t b0 = first + (uint64_t)done / 2 + 8 * (uint64_t)g;
      c0[g] = _mm512_add_epi64(_mm512_set1_epi64((long long)b0), lanes);
      c1[g] = _mm512_srli_epi64(c0[g], 32);
      c2[g] = st_lo;
      c3[g] = st_hi;
    }
    philox_zmm(c0, c1, c2, c3, (uint32_t)s->seed, (uint32_t)(s->seed >> 32));
    __m512d r[G], u2[G], cs[G], sn[G];
    EACH {
      r[g] = SUB(C(1.0), unit52_zmm(c0[g], c1[g]));
      u2[g] = unit52_zmm(c2[g], c3[g]);
    }
    log_zmm(r);
    EACH r[g] = _mm512_sqrt_pd(MUL(C(-2.0), r[g]));
    sincos2pi_zmm(u2, cs, sn);
    EACH {
      __m512d z0 = ADD(a, MUL(sd, MUL(r[g], cs[g]))), z1 = ADD(a, MUL(sd, MUL(r[g], sn[g])));
      _mm512_storeu_pd(d + done + 16 * g, _mm512_permutex2var_pd(z0, even, z1));
      _mm512_storeu_pd(d + done + 16 * g + 8, _mm512_permutex2var_pd(z0, odd, z1));
    }
  }
  if (done < n) normal_values_avx512(s, lo + done, n - done, d + done);
}
#undef MUL
#undef ADD
#undef SUB
#undef C
#undef BCAST_U32
#undef EACH
#undef G

const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx512(void) { return &vocab_kernels_avx512; }
#endif

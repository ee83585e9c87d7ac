/* SPDX-License-Identifier: MIT */
/* Random generators: Philox4x32-10 against the Random123 known-answer vectors; fills against
 * the documented stream layout recomputed here; the same bits on every thread count, through
 * any output layout, and on CPU and OpenCL; statistical sanity with fixed seeds (moments,
 * chi-square of integers, Bernoulli rates, normal tails); permutations; bad input. */
#include "harness.h"

#include "../kernels/philox.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_philox_kat(void **state) {
  (void)state;
  /* Random123 kat_vectors: counter, key -> output. */
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
       0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (int t = 0; t < 3; t++) {
    const uint32_t *k = kat[t];
    lt_philox4 out = lt_philox4x32_10(k[0], k[1], k[2], k[3], k[4], k[5]);
    for (int w = 0; w < 4; w++)
      assert_int_equal(out.v[w], k[6 + w]);
  }
}

/* Fills of `n` elements of dtype on ctx with a fresh (seed, stream) generator (which == 0
 * uniform, 1 normal, 2 integers, 3 bernoulli), read back as doubles. */
static double *draw(lt_context *ctx, int which, lt_dtype dtype, int64_t n, uint64_t seed,
                    uint64_t stream) {
  lt_rng *rng;
  lt_tensor *t;
  LT_CHECK(lt_rng_create(seed, stream, &rng));
  LT_CHECK(lt_tensor_empty(ctx, dtype, 1, &n, &t));
  switch (which) {
  case 0: LT_CHECK(lt_rng_uniform(rng, t, -2, 3)); break;
  case 1: LT_CHECK(lt_rng_normal(rng, t, 1, 2)); break;
  case 2: LT_CHECK(lt_rng_integers(rng, t, -5, 1000003)); break;
  default: LT_CHECK(lt_rng_bernoulli(rng, t, 0.3)); break;
  }
  double *v = lt_test_read_all(t);
  lt_tensor_destroy(t);
  lt_rng_destroy(rng);
  return v;
}

/* Uniform f32 and f64 values and integers are what the layout in philox.h says, recomputed
 * here from the raw Philox words with the formulas written out independently. */
static void test_stream_layout(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  const uint64_t seed = 0x123456789abcdefULL, stream = 7;
  int64_t n = 1001;
  double *f32 = draw(ctx, 0, LT_F32, n, seed, stream), *f64 = draw(ctx, 0, LT_F64, n, seed, stream);
  for (int64_t i = 0; i < n; i++) {
    lt_philox4 b = lt_philox4x32_10((uint32_t)(i / 4), 0, (uint32_t)stream, 0, (uint32_t)seed,
                                    (uint32_t)(seed >> 32));
    float u = (float)(b.v[i % 4] >> 8) / 16777216.0f;
    assert_true(f32[i] == (double)(-2.0f + 5.0f * u));
    lt_philox4 c = lt_philox4x32_10((uint32_t)(i / 2), 0, (uint32_t)stream, 0, (uint32_t)seed,
                                    (uint32_t)(seed >> 32));
    uint64_t bits = ((uint64_t)c.v[2 * (i % 2)] << 32 | c.v[2 * (i % 2) + 1]) >> 11;
    assert_true(f64[i] == -2.0 + 5.0 * ((double)bits / 9007199254740992.0));
  }
  free(f32);
  free(f64);
  lt_context_destroy(ctx);
}

/* Normals are philox.h's scalar definition bit for bit, whichever vector loop computed them
 * (the AVX-512 one is written by hand; the _isa_avx2 and _isa_baseline runs cover the others):
 * lengths around the 16-element step and odd tails, counters that cross 2^32 (the high word
 * of the block), and seeds and streams with both halves set. */
static void test_normal_definition(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  const uint64_t seed = 0xfedcba9876543210ULL, stream = 0x0123456789abcdefULL;
  const uint64_t offsets[2] = {0, ((uint64_t)1 << 32) - 5};
  const int64_t lengths[4] = {1, 15, 48, 1001};
  for (int o = 0; o < 2; o++)
    for (int l = 0; l < 4; l++) {
      int64_t n = lengths[l];
      lt_rng *rng;
      lt_tensor *t;
      LT_CHECK(lt_rng_create(seed, stream, &rng));
      LT_CHECK(lt_rng_set_offset(rng, offsets[o]));
      LT_CHECK(lt_tensor_empty(ctx, LT_F64, 1, &n, &t));
      LT_CHECK(lt_rng_normal(rng, t, -0.5, 3.0));
      double *got = lt_test_read_all(t);
      for (int64_t i = 0; i < n; i++) {
        double z0, z1;
        lt_rng_normal_pair(lt_rng_block(seed, stream, offsets[o] + (uint64_t)(i / 2), 0), &z0, &z1);
        double want = -0.5 + 3.0 * (i % 2 ? z1 : z0);
        if (got[i] != want)
          fail_msg("offset %llu n %lld element %lld: %.17g, philox.h %.17g",
                   (unsigned long long)offsets[o], (long long)n, (long long)i, got[i], want);
      }
      free(got);
      lt_tensor_destroy(t);
      lt_rng_destroy(rng);
    }
  lt_context_destroy(ctx);
}

/* The same values on 1 and 3 threads, and through stepped / negative-stride outputs. */
static void test_thread_and_layout_invariance(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shape[2] = {37, 1500};
  for (int which = 0; which < 4; which++) {
    lt_dtype dt = which == 2 ? LT_I64 : (which == 1 ? LT_F64 : LT_F32);
    double *ref = NULL;
    for (int threads = 1; threads <= 3; threads += 2)
      for (int layout = LT_LAYOUT_CONTIGUOUS; layout <= LT_LAYOUT_NEGATIVE; layout++) {
        LT_CHECK(lt_context_set_num_threads(ctx, threads));
        lt_test_output out;
        lt_test_output_make(ctx, dt, 2, shape, (lt_test_layout)layout, &out);
        lt_rng *rng;
        LT_CHECK(lt_rng_create(99, 3, &rng));
        switch (which) {
        case 0: LT_CHECK(lt_rng_uniform(rng, out.view, 0, 1)); break;
        case 1: LT_CHECK(lt_rng_normal(rng, out.view, 0, 1)); break;
        case 2: LT_CHECK(lt_rng_integers(rng, out.view, 0, 10)); break;
        default: LT_CHECK(lt_rng_bernoulli(rng, out.view, 0.5)); break;
        }
        double *got = lt_test_read_all(out.view);
        if (ref == NULL)
          ref = got;
        else {
          assert_memory_equal(got, ref, sizeof(double) * 37 * 1500);
          free(got);
        }
        lt_test_output_check_guard(&out);
        lt_test_output_free(&out);
        lt_rng_destroy(rng);
      }
    free(ref);
  }
  lt_context_destroy(ctx);
}

/* CPU and OpenCL give the same bits, normals included: philox.h's transform uses only correctly
 * rounded + - * / and sqrt (its own log and sincos, no libm, no contraction on either side), so
 * f32 and f64 normals must be equal bit for bit, not merely close. The normals run long enough
 * (and from an offset that crosses 2^32 blocks) for every vector loop and tail of the CPU side. */
static void test_cpu_opencl_equal(void **state) {
  (void)state;
  const char *devs[8];
  int ndev = lt_test_devices(devs), other = -1;
  for (int d = 0; d < ndev; d++)
    if (strncmp(devs[d], "opencl", 6) == 0) other = d;
  if (other < 0) {
    printf("[ SKIP     ] no OpenCL device\n");
    return;
  }
  lt_context *cpu, *ocl;
  LT_CHECK(lt_context_create("cpu", &cpu));
  LT_CHECK(lt_context_create(devs[other], &ocl));
  /* One program build per (distribution, dtype) on the device: a few representative pairs. */
  const struct {
    int which;
    lt_dtype dtype;
  } cases[] = {{0, LT_F16}, {0, LT_F32}, {0, LT_F64}, {1, LT_F32}, {1, LT_F64},
               {1, LT_F16}, {2, LT_I64}, {2, LT_F64}, {3, LT_BF16}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int which = cases[c].which;
    lt_dtype dtype = cases[c].dtype;
    int64_t n = which == 1 ? 10001 : 3001;
    double *a = draw(cpu, which, dtype, n, 5, 11), *b = draw(ocl, which, dtype, n, 5, 11);
    if (memcmp(a, b, sizeof(double) * (size_t)n) != 0)
      for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0)
          fail_msg("dist %d %s element %lld: CPU %a, OpenCL %a", which, lt_dtype_name(dtype),
                   (long long)i, a[i], b[i]);
    free(a);
    free(b);
  }
  /* Normals from an offset whose blocks cross 2^32, with a seed and stream using both halves. */
  for (int wide = 0; wide < 2; wide++) {
    lt_dtype dtype = wide ? LT_F64 : LT_F32;
    int64_t n = 4097;
    double *v[2];
    for (int dev = 0; dev < 2; dev++) {
      lt_rng *rng;
      lt_tensor *t;
      LT_CHECK(lt_rng_create(0xfedcba9876543210ULL, 0x0123456789abcdefULL, &rng));
      LT_CHECK(lt_rng_set_offset(rng, ((uint64_t)1 << 32) - 1000));
      LT_CHECK(lt_tensor_empty(dev ? ocl : cpu, dtype, 1, &n, &t));
      LT_CHECK(lt_rng_normal(rng, t, 0, 1));
      v[dev] = lt_test_read_all(t);
      lt_tensor_destroy(t);
      lt_rng_destroy(rng);
    }
    for (int64_t i = 0; i < n; i++)
      if (memcmp(&v[0][i], &v[1][i], sizeof(double)) != 0)
        fail_msg("normal %s past 2^32 blocks, element %lld: CPU %a, OpenCL %a",
                 lt_dtype_name(dtype), (long long)i, v[0][i], v[1][i]);
    free(v[0]);
    free(v[1]);
  }
  lt_context_destroy(cpu);
  lt_context_destroy(ocl);
}

/* philox.h's log and sincos against libm in long double (an independent reference): the log
 * within 1.5 ulp on (0, 1] (u from 52 random bits, scaled down to 2^-52 as the Box-Muller
 * radius sees), cos and sin of 2 pi u within 1.5 ulp of 1 in absolute terms on [0, 1) (what
 * r cos(2 pi u) needs: the radius, not the angle, sets the scale). */
/* Whether long double arithmetic is wider than double here: under valgrind, whose x87
 * emulation computes in double, logl/sinl/cosl are no better than what they would check (the
 * memcheck stage read sincos at 3.3 ulp of such a reference). */
static bool long_double_is_wider(void) {
  volatile long double one = 1.0L, tiny = (long double)DBL_EPSILON / 4;
  return one + tiny != one;
}

static void test_transform_accuracy(void **state) {
  (void)state;
  if (!long_double_is_wider()) {
    print_message("long double is no wider than double here (valgrind?): no reference\n");
    skip();
  }
  int64_t n = lt_test_instrumented() ? 20000 : 400000;
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  double worst_log = 0, worst_sc = 0;
  for (int64_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = 1.0 - (double)(x >> 12) * (1.0 / 4503599627370496.0);
    if (i % 3 == 0) u = ldexp(u, -(int)(i % 53));
    long double ref = logl((long double)u);
    double r = (double)ref, ulp = nextafter(fabs(r), INFINITY) - fabs(r);
    if (u != 1.0) {
      double e = (double)fabsl((long double)lt_rng_log(u) - ref) / ulp;
      worst_log = e > worst_log ? e : worst_log;
    } else {
      assert_true(lt_rng_log(u) == 0.0);
    }
    double v = 1.0 - u / ldexp(1.0, -(int)(i % 53)), c, s; /* back in [0, 1) */
    if (!(v >= 0 && v < 1)) v = 0.5;
    lt_rng_sincos2pi(v, &c, &s);
    long double th = 6.283185307179586476925286766559L * (long double)v;
    double ec = (double)fabsl((long double)c - cosl(th)),
           es = (double)fabsl((long double)s - sinl(th));
    double e = (ec > es ? ec : es) / 2.220446049250313e-16;
    worst_sc = e > worst_sc ? e : worst_sc;
  }
  if (worst_log > 1.5 || worst_sc > 1.5)
    fail_msg("log worst %.3f ulp, sincos worst %.3f ulp(1)", worst_log, worst_sc);
}

static void moments(const double *v, int64_t n, double *mean, double *var) {
  double s = 0, q = 0;
  for (int64_t i = 0; i < n; i++)
    s += v[i];
  *mean = s / (double)n;
  for (int64_t i = 0; i < n; i++)
    q += (v[i] - *mean) * (v[i] - *mean);
  *var = q / (double)(n - 1);
}

/* Moments within 6 standard errors, integer chi-square, Bernoulli rate, normal tails. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Kolmogorov-Smirnov distance of the n values v (sorted here) from the standard normal CDF. */
static double ks_normal(double *v, int64_t n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double d = 0;
  for (int64_t i = 0; i < n; i++) {
    double f = 0.5 * erfc(-v[i] / sqrt(2.0));
    double lo = f - (double)i / (double)n, hi = (double)(i + 1) / (double)n - f;
    d = lo > d ? lo : d;
    d = hi > d ? hi : d;
  }
  return d;
}

/* Standard normals of both precisions: mean, variance and the KS distance on 1e6 draws
 * (1.95 / sqrt(n) is the 0.1% critical value; the seed is fixed, so this never flickers). On
 * the CPU only: test_cpu_opencl_equal proves the device's bits the same. */
static void test_normal_ks(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t n = lt_test_instrumented() ? 20000 : 1000000;
  for (int wide = 0; wide < 2; wide++) {
    lt_rng *rng;
    lt_tensor *t;
    LT_CHECK(lt_rng_create(2026, wide, &rng));
    LT_CHECK(lt_tensor_empty(ctx, wide ? LT_F64 : LT_F32, 1, &n, &t));
    LT_CHECK(lt_rng_normal(rng, t, 0, 1));
    double *z = lt_test_read_all(t), m, v;
    moments(z, n, &m, &v);
    assert_true(fabs(m) < 6 / sqrt((double)n));
    assert_true(fabs(v - 1) < 6 * sqrt(2.0 / (double)n));
    double d = ks_normal(z, n);
    if (d > 1.95 / sqrt((double)n))
      fail_msg("normal %s: KS distance %.5f over %lld draws (critical %.5f)", wide ? "f64" : "f32",
               d, (long long)n, 1.95 / sqrt((double)n));
    free(z);
    lt_tensor_destroy(t);
    lt_rng_destroy(rng);
  }
  lt_context_destroy(ctx);
}

static void stats_on(lt_context *ctx) {
  int64_t n = lt_test_instrumented() ? 20000 : 200000;
  double m, v;
  double *u = draw(ctx, 0, LT_F64, n, 1, 0);
  moments(u, n, &m, &v);
  assert_true(fabs(m - 0.5) < 6 * 5 * sqrt(1.0 / 12 / (double)n));
  assert_true(fabs(v - 25.0 / 12) < 0.05);
  for (int64_t i = 0; i < n; i++)
    assert_true(u[i] >= -2 && u[i] < 3);
  free(u);
  double *z = draw(ctx, 1, LT_F64, n, 2, 0);
  moments(z, n, &m, &v);
  assert_true(fabs(m - 1) < 6 * 2 / sqrt((double)n));
  assert_true(fabs(v - 4) < 6 * 4 * sqrt(2.0 / (double)n));
  int64_t beyond2 = 0, beyond3 = 0;
  for (int64_t i = 0; i < n; i++) {
    beyond2 += fabs(z[i] - 1) > 4;
    beyond3 += fabs(z[i] - 1) > 6;
  }
  /* P(|Z| > 2) = 0.0455, P(|Z| > 3) = 0.0027. */
  assert_true(fabs((double)beyond2 / (double)n - 0.0455) < 6 * sqrt(0.0455 / (double)n));
  assert_true(fabs((double)beyond3 / (double)n - 0.0027) < 6 * sqrt(0.0027 / (double)n));
  free(z);
  /* Integers in [-5, 1000003): chi-square over 16 equal-probability residue bins is not
   * available for a range of 1000008, so bin by (x + 5) % 8 (1000008 is a multiple of 8). */
  double *q = draw(ctx, 2, LT_I64, n, 3, 0);
  double bins[8] = {0};
  for (int64_t i = 0; i < n; i++) {
    assert_true(q[i] >= -5 && q[i] < 1000003 && q[i] == floor(q[i]));
    bins[((int64_t)q[i] + 5) % 8] += 1;
  }
  double chi = 0, e = (double)n / 8;
  for (int b = 0; b < 8; b++)
    chi += (bins[b] - e) * (bins[b] - e) / e;
  assert_true(chi < 40); /* df 7: P(chi2 > 40) ~ 1e-6 */
  free(q);
  double *b = draw(ctx, 3, LT_F32, n, 4, 0), ones = 0;
  for (int64_t i = 0; i < n; i++) {
    assert_true(b[i] == 0 || b[i] == 1);
    ones += b[i];
  }
  assert_true(fabs(ones / (double)n - 0.3) < 6 * sqrt(0.21 / (double)n));
  free(b);
}

static void test_statistics(void **state) {
  (void)state;
  lt_test_on_each_device(stats_on);
}

/* Successive calls differ; seeds and streams give different values; the offset replays. */
static void sequence_on(lt_context *ctx) {
  int64_t n = 64;
  lt_rng *r;
  lt_tensor *a, *b;
  LT_CHECK(lt_rng_create(42, 0, &r));
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 1, &n, &a));
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 1, &n, &b));
  LT_CHECK(lt_rng_uniform(r, a, 0, 1));
  uint64_t off;
  LT_CHECK(lt_rng_get_offset(r, &off));
  assert_int_equal(off, 16); /* 64 f32 uniforms = 16 blocks */
  LT_CHECK(lt_rng_uniform(r, b, 0, 1));
  double *va = lt_test_read_all(a), *vb = lt_test_read_all(b);
  int same = 0;
  for (int64_t i = 0; i < n; i++)
    same += va[i] == vb[i];
  assert_true(same < 4);
  LT_CHECK(lt_rng_set_offset(r, 0));
  LT_CHECK(lt_rng_uniform(r, b, 0, 1));
  free(vb);
  vb = lt_test_read_all(b);
  assert_memory_equal(va, vb, sizeof(double) * (size_t)n);
  free(va);
  free(vb);
  double *s0 = draw(ctx, 0, LT_F32, n, 42, 0), *s1 = draw(ctx, 0, LT_F32, n, 42, 1),
         *k1 = draw(ctx, 0, LT_F32, n, 43, 0);
  same = 0;
  for (int64_t i = 0; i < n; i++)
    same += (s0[i] == s1[i]) + (s0[i] == k1[i]);
  assert_true(same < 4);
  free(s0);
  free(s1);
  free(k1);
  /* Integers over the whole int64 range, a range of 1, Bernoulli at 0 and 1, rank 0. */
  lt_tensor *i64, *scalar;
  LT_CHECK(lt_tensor_empty(ctx, LT_I64, 1, &n, &i64));
  LT_CHECK(lt_rng_integers(r, i64, INT64_MIN, INT64_MAX));
  LT_CHECK(lt_rng_integers(r, i64, 7, 8));
  va = lt_test_read_all(i64);
  for (int64_t i = 0; i < n; i++)
    assert_true(va[i] == 7);
  free(va);
  LT_CHECK(lt_rng_bernoulli(r, a, 1.0));
  LT_CHECK(lt_rng_bernoulli(r, b, 0.0));
  va = lt_test_read_all(a);
  vb = lt_test_read_all(b);
  for (int64_t i = 0; i < n; i++)
    assert_true(va[i] == 1 && vb[i] == 0);
  free(va);
  free(vb);
  LT_CHECK(lt_tensor_empty(ctx, LT_F64, 0, NULL, &scalar));
  LT_CHECK(lt_rng_normal(r, scalar, 0, 1));
  lt_tensor_destroy(scalar);
  lt_tensor_destroy(i64);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_rng_destroy(r);
}

static void test_sequence(void **state) {
  (void)state;
  lt_test_on_each_device(sequence_on);
}

static void permutation_on(lt_context *ctx) {
  const int64_t sizes[] = {0, 1, 2, 10, 1001};
  lt_rng *r;
  LT_CHECK(lt_rng_create(8, 0, &r));
  for (size_t s = 0; s < 5; s++) {
    int64_t n = sizes[s];
    lt_test_output out;
    lt_test_output_make(ctx, LT_I64, 1, &n, s % 2 ? LT_LAYOUT_NEGATIVE : LT_LAYOUT_STEPPED, &out);
    LT_CHECK(lt_rng_permutation(r, out.view));
    double *v = lt_test_read_all(out.view);
    char *seen = calloc((size_t)n + 1, 1);
    int64_t fixed = 0;
    for (int64_t i = 0; i < n; i++) {
      assert_true(v[i] >= 0 && v[i] < (double)n && !seen[(int64_t)v[i]]);
      seen[(int64_t)v[i]] = 1;
      fixed += v[i] == (double)i;
    }
    if (n == 1001) assert_true(fixed < 10); /* expected 1 fixed point */
    lt_test_output_check_guard(&out);
    lt_test_output_free(&out);
    free(v);
    free(seen);
  }
  lt_rng_destroy(r);
}

static void test_permutation(void **state) {
  (void)state;
  lt_test_on_each_device(permutation_on);
}

static void errors_on(lt_context *ctx) {
  int64_t n = 4, two[2] = {2, 2};
  lt_rng *r;
  lt_tensor *f, *i64, *bc, *m;
  LT_CHECK(lt_rng_create(1, 2, &r));
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 1, &n, &f));
  LT_CHECK(lt_tensor_empty(ctx, LT_I64, 1, &n, &i64));
  LT_CHECK(lt_tensor_empty(ctx, LT_I64, 2, two, &m));
  LT_CHECK(lt_view_broadcast_to(f, 2, (int64_t[]){3, 4}, &bc));
  LT_CHECK_FAILS(lt_rng_uniform(r, f, 1, 0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_uniform(r, f, 0, INFINITY), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_uniform(r, f, -1e308, 1e308), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_uniform(r, i64, 0, 1), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_rng_normal(r, f, 0, -1), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_normal(r, f, NAN, 1), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_integers(r, i64, 3, 3), LT_ERR_INVALID_ARGUMENT);
  /* draws an integer out cannot hold were wrapped silently (NumPy: high is out of bounds) */
  lt_tensor *i8 = NULL, *u16 = NULL, *b1 = NULL;
  LT_CHECK(lt_tensor_empty(ctx, LT_I8, 1, &n, &i8));
  LT_CHECK(lt_tensor_empty(ctx, LT_U16, 1, &n, &u16));
  LT_CHECK(lt_tensor_empty(ctx, LT_BOOL, 1, &n, &b1));
  LT_CHECK_FAILS(lt_rng_integers(r, i8, 0, 1000), LT_ERR_OUT_OF_RANGE);
  assert_non_null(strstr(lt_last_error(), "[0, 999] does not fit out's dtype i8 [-128, 127]"));
  LT_CHECK_FAILS(lt_rng_integers(r, i8, -129, 0), LT_ERR_OUT_OF_RANGE);
  LT_CHECK_FAILS(lt_rng_integers(r, u16, -1, 5), LT_ERR_OUT_OF_RANGE);
  LT_CHECK_FAILS(lt_rng_integers(r, b1, 0, 3), LT_ERR_OUT_OF_RANGE);
  assert_non_null(strstr(lt_last_error(), "bool"));
  LT_CHECK(lt_rng_integers(r, i8, -128, 128)); /* the whole range fits */
  LT_CHECK(lt_rng_integers(r, u16, 0, 65536));
  LT_CHECK(lt_rng_integers(r, b1, 0, 2));
  lt_tensor_destroy(i8);
  lt_tensor_destroy(u16);
  lt_tensor_destroy(b1);
  LT_CHECK_FAILS(lt_rng_bernoulli(r, f, 1.5), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_bernoulli(r, f, NAN), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_uniform(r, bc, 0, 1), LT_ERR_ALIASING);
  LT_CHECK_FAILS(lt_rng_permutation(r, f), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_permutation(r, m), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_rng_uniform(NULL, f, 0, 1), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_rng_uniform(r, NULL, 0, 1), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_rng_uniform((lt_rng *)f, f, 0, 1), LT_ERR_INVALID_HANDLE);
  LT_CHECK_FAILS(lt_rng_set_offset(r, (uint64_t)1 << 56), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_rng_set_offset(r, ((uint64_t)1 << 56) - 1));
  LT_CHECK(lt_rng_uniform(r, f, 0, 1)); /* 4 f32 values: the last block */
  LT_CHECK(lt_rng_set_offset(r, ((uint64_t)1 << 56) - 1));
  LT_CHECK_FAILS(lt_rng_integers(r, i64, 0, 9), LT_ERR_OVERFLOW); /* 2 blocks */
  LT_CHECK_FAILS(lt_rng_create(0, 0, NULL), LT_ERR_NULL_POINTER);
  lt_rng_destroy(r);
  LT_CHECK_FAILS(lt_rng_uniform(r, f, 0, 1), LT_ERR_INVALID_HANDLE);
  lt_rng_destroy(NULL);
  lt_tensor_destroy(bc);
  lt_tensor_destroy(m);
  lt_tensor_destroy(f);
  lt_tensor_destroy(i64);
}

static void test_errors(void **state) {
  (void)state;
  lt_test_on_each_device(errors_on);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_philox_kat),
      cmocka_unit_test(test_stream_layout),
      cmocka_unit_test(test_normal_definition),
      cmocka_unit_test(test_thread_and_layout_invariance),
      cmocka_unit_test(test_cpu_opencl_equal),
      cmocka_unit_test(test_transform_accuracy),
      cmocka_unit_test(test_statistics),
      cmocka_unit_test(test_normal_ks),
      cmocka_unit_test(test_sequence),
      cmocka_unit_test(test_permutation),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

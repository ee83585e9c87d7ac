/* SPDX-License-Identifier: MIT */
/* Exact integer and bool contractions, einsum and scans (issue 18) on every backend: results
 * must equal, bit for bit, a naive reference computed in unsigned __int128 (the exact integer
 * result reduced modulo 2^64, then wrapped to the output's width, as NumPy's integer einsum,
 * matmul and cumsum wrap), for values near 2^62, 2^63 - 1, INT64_MIN and the unsigned top, mixed
 * widths and signed/unsigned operands, every input layout family, size-0 and rank-0 operands,
 * sizes past the point where float contractions would take GEMM, and bool einsum giving bool
 * (NumPy's or-of-ands). Before issue 18's fix these computed through f64 and lost every value
 * above 2^53; narrow operands now take a float GEMM only where it is exact (checked too). Also:
 * narrow-lane elementwise compute agrees with 64-bit compute at its edges, and an OpenCL device
 * without 64-bit integers refuses integer work. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

static bool is_signed(lt_dtype d) {
  return d == LT_I8 || d == LT_I16 || d == LT_I32 || d == LT_I64;
}

/* v (any integer, modulo 2^128) wrapped to dtype d, as a signed 128-bit value. */
static __int128 wrap(lt_dtype d, u128 v) {
  if (d == LT_BOOL) return v != 0;
  int b = (int)lt_dtype_size(d) * 8;
  uint64_t bits = (uint64_t)v;
  if (b < 64) bits &= (1ull << b) - 1;
  if (is_signed(d) && (bits >> (b - 1)) & 1) return (__int128)bits - ((__int128)1 << b);
  return (__int128)bits;
}

/* Values near the edges of 64-bit integers first, then random bits and small values. */
static uint64_t edge_bits(void) {
  static const uint64_t edges[] = {(1ull << 62) + 1,
                                   (1ull << 62) - 3,
                                   0x7fffffffffffffffull,
                                   0x8000000000000000ull,
                                   ~0ull,
                                   (1ull << 53) + 1,
                                   ~0ull - (1ull << 62),
                                   0x8000000000000001ull,
                                   3,
                                   1,
                                   0xfffffffffffffffdull,
                                   (1ull << 63) - 7};
  int n = (int)(sizeof edges / sizeof edges[0]);
  int64_t k = lt_test_rand_int(0, 2 * n);
  if (k < n) return edges[k];
  return lt_test_rand_int(0, 1) ? lt_test_rand_u64() : (uint64_t)lt_test_rand_int(-9, 9);
}

/* Every element of t in C order, exactly, as the value its dtype holds. */
static __int128 *read_exact(const lt_tensor *t) {
  lt_tensor *c;
  LT_CHECK(lt_tensor_contiguous(t, LT_DTYPE_INVALID, &c));
  lt_dtype d = lt_tensor_dtype(t);
  int64_t n = lt_tensor_numel(c);
  size_t es = lt_dtype_size(d);
  unsigned char *raw = malloc((size_t)n * es + 1);
  __int128 *out = malloc(sizeof(__int128) * (size_t)(n + 1));
  LT_CHECK(lt_tensor_to_host(c, raw, (size_t)n * es));
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = 0;
    memcpy(&v, raw + (size_t)i * es, es);
    if (d == LT_BOOL && v > 1)
      fail_msg("bool element %lld holds byte %llu", (long long)i, (unsigned long long)v);
    out[i] = wrap(d, v);
  }
  free(raw);
  lt_tensor_destroy(c);
  return out;
}

/* Naive einsum over explicit letter labels ("ij,jk->ik"), exact modulo 2^128: every
 * assignment of every label, the operands' product added into the output element. */
static u128 *ref_einsum(const char *expr, int n, __int128 *const *vals, const lt_tensor *const *ts,
                        int64_t *out_numel) {
  char terms[4][LT_MAX_RANK + 1], out_labels[LT_MAX_RANK + 1];
  const char *arrow = strstr(expr, "->");
  int k = 0, len = 0;
  for (const char *p = expr; p < arrow; p++) {
    if (*p == ',') {
      terms[k++][len] = 0;
      len = 0;
    } else {
      terms[k][len++] = *p;
    }
  }
  terms[k][len] = 0;
  snprintf(out_labels, sizeof out_labels, "%s", arrow + 2);
  int64_t extent[128] = {0};
  char labels[32];
  int nl = 0;
  for (int i = 0; i < n; i++)
    for (int a = 0; terms[i][a]; a++) {
      unsigned char c = (unsigned char)terms[i][a];
      bool seen = false;
      for (int q = 0; q < nl; q++)
        seen |= labels[q] == (char)c;
      if (!seen) labels[nl++] = (char)c;
      extent[c] = lt_tensor_shape(ts[i])[a];
    }
  int64_t total = 1, on = 1;
  for (int q = 0; q < nl; q++)
    total *= extent[(unsigned char)labels[q]];
  for (int a = 0; out_labels[a]; a++)
    on *= extent[(unsigned char)out_labels[a]];
  u128 *out = calloc((size_t)on + 1, sizeof(u128));
  int64_t value[128];
  for (int64_t it = 0; it < total; it++) {
    int64_t r = it;
    for (int q = nl - 1; q >= 0; q--) {
      int64_t e = extent[(unsigned char)labels[q]];
      value[(unsigned char)labels[q]] = r % e;
      r /= e;
    }
    u128 prod = 1;
    for (int i = 0; i < n; i++) {
      int64_t lin = 0;
      for (int a = 0; terms[i][a]; a++)
        lin = lin * lt_tensor_shape(ts[i])[a] + value[(unsigned char)terms[i][a]];
      prod *= (u128)vals[i][lin];
    }
    int64_t o = 0;
    for (int a = 0; out_labels[a]; a++)
      o = o * extent[(unsigned char)out_labels[a]] + value[(unsigned char)out_labels[a]];
    out[o] += prod;
  }
  *out_numel = on;
  return out;
}

/* einsum(expr) of freshly made operands against the reference, exactly; the result dtype must
 * be want (NumPy's). Bool results are "some product nonzero". */
static void check_einsum(lt_context *ctx, const char *expr, int n, const lt_dtype *dt,
                         const int *ranks, const int64_t (*shapes)[LT_MAX_RANK],
                         lt_test_layout layout, lt_dtype want) {
  lt_tensor *ts[4];
  __int128 *vals[4];
  for (int i = 0; i < n; i++) {
    ts[i] = lt_test_bits_tensor(ctx, dt[i], ranks[i], shapes[i], layout, edge_bits);
    vals[i] = read_exact(ts[i]);
  }
  lt_tensor *d = NULL;
  LT_CHECK(lt_einsum(expr, n, (const lt_tensor *const *)ts, NULL, &d));
  if (lt_tensor_dtype(d) != want)
    fail_msg("einsum '%s' gave %s, NumPy gives %s", expr, lt_dtype_name(lt_tensor_dtype(d)),
             lt_dtype_name(want));
  int64_t on;
  u128 *ref = ref_einsum(expr, n, vals, (const lt_tensor *const *)ts, &on);
  assert_int_equal(lt_tensor_numel(d), on);
  __int128 *got = read_exact(d);
  for (int64_t o = 0; o < on; o++)
    if (got[o] != wrap(want, ref[o]))
      fail_msg("einsum '%s' (%s, %s..., layout %s) element %lld: got %lld, want %lld "
               "(low 64 bits)",
               expr, lt_dtype_name(dt[0]), lt_dtype_name(dt[1 % n]), lt_test_layout_name(layout),
               (long long)o, (long long)(int64_t)got[o], (long long)(int64_t)wrap(want, ref[o]));
  free(got);
  free(ref);
  lt_tensor_destroy(d);
  for (int i = 0; i < n; i++) {
    free(vals[i]);
    lt_tensor_destroy(ts[i]);
  }
}

typedef struct einsum_case {
  const char *expr;
  int n;
  int ranks[3];
  int64_t shapes[3][LT_MAX_RANK];
} einsum_case;

static const einsum_case cases[] = {
    {"ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"bij,bjk->bik", 2, {3, 3}, {{2, 3, 2}, {2, 2, 3}}},
    {"i,i->", 2, {1, 1}, {{7}, {7}}},
    {"i,j->ij", 2, {1, 1}, {{3, 4}, {4}}},
    {"ijk,kj->i", 2, {3, 2}, {{2, 3, 4}, {4, 3}}},
    {"ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 2}}},
    {"ij->", 1, {2}, {{3, 4}}},
    {"ij->ji", 1, {2}, {{3, 4}}},
    {"ii->i", 1, {2}, {{4, 4}}},
    {"ij,jk->ik", 2, {2, 2}, {{2, 0}, {0, 3}}}, /* size-0 contracted: zeros */
    {"i,i->", 2, {1, 1}, {{0}, {0}}},
    {",i->i", 2, {0, 1}, {{0}, {5}}},               /* rank 0 */
    {"ij,jk->ik", 2, {2, 2}, {{24, 40}, {40, 24}}}, /* float would take GEMM here */
};

/* Operand dtypes (the third repeats the second) and NumPy's einsum result dtype. */
static const lt_dtype combos[][3] = {{LT_I64, LT_I64, LT_I64},  {LT_U64, LT_U64, LT_U64},
                                     {LT_I32, LT_I64, LT_I64},  {LT_U32, LT_I64, LT_I64},
                                     {LT_U8, LT_I8, LT_I16},    {LT_BOOL, LT_BOOL, LT_BOOL},
                                     {LT_I16, LT_BOOL, LT_I16}, {LT_U16, LT_U32, LT_U32}};

/* Whether ctx is a device whose kernels compile per dtype combination (OpenCL: each one costs
 * a compiler run, so the device runs every fourth combination; the CPU runs them all). */
static bool compiles_kernels(const lt_context *ctx) {
  return strncmp(lt_context_device(ctx), "opencl", 6) == 0;
}

static void run_einsum(lt_context *ctx) {
  int nc = (int)(sizeof cases / sizeof cases[0]), nd = (int)(sizeof combos / sizeof combos[0]);
  bool few = compiles_kernels(ctx);
  for (int c = 0; c < nc; c++)
    for (int k = 0; k < nd; k++) {
      if (few && (k + c) % 4 != 0) continue;
      const einsum_case *e = &cases[c];
      lt_dtype dt[3] = {combos[k][0], combos[k][1], combos[k][1]};
      lt_dtype want = e->n == 1 ? dt[0] : combos[k][2];
      /* Layout families rotate with the dtype combination; the large case stays contiguous
       * or transposed (layouts are covered by the small ones). */
      lt_test_layout layout = (lt_test_layout)((c + k) % LT_LAYOUT_COUNT);
      if (e->shapes[0][1] == 40) layout = (lt_test_layout)(k % 2);
      check_einsum(ctx, e->expr, e->n, dt, e->ranks, e->shapes, layout, want);
    }
}

static void test_einsum_exact(void **state) {
  (void)state;
  lt_test_on_each_device(run_einsum);
}

/* Operands of at most 16 bits contract as a float GEMM wherever every product and partial sum
 * is an integer the float holds (f32 to 2^24, f64 to 2^53 on the CPU; lower/pair_int.c), then
 * wrap in the integer compute as the direct kernel does: i8 x i8 over k = 300 runs in f32,
 * over 1100 in f64, u8 x u8 over 300 in f64; with the edge bits every product is near the
 * widest, so a bound one step too loose rounds the sums. On the CPU each must have run as a
 * GEMM (the description); the values must equal the exact reference on every device. */
static const einsum_case narrow_cases[] = {
    {"ij,jk->ik", 2, {2, 2}, {{33, 300}, {300, 17}}},
    {"ij,jk->ik", 2, {2, 2}, {{9, 1100}, {1100, 7}}},
    {"bij,bjk->bik", 2, {3, 3}, {{3, 20, 70}, {3, 70, 30}}},
    {"ij,kj->ki", 2, {2, 2}, {{25, 90}, {21, 90}}},
};
static const lt_dtype narrow_combos[][3] = {{LT_I8, LT_I8, LT_I8},   {LT_U8, LT_U8, LT_U8},
                                            {LT_U8, LT_I8, LT_I16},  {LT_I16, LT_I16, LT_I16},
                                            {LT_U16, LT_U8, LT_U16}, {LT_I8, LT_I16, LT_I16}};

static void run_narrow_gemm(lt_context *ctx) {
  int nc = (int)(sizeof narrow_cases / sizeof narrow_cases[0]);
  int nd = (int)(sizeof narrow_combos / sizeof narrow_combos[0]);
  bool cpu = strcmp(lt_context_device(ctx), "cpu") == 0, few = compiles_kernels(ctx);
  for (int c = 0; c < nc; c++)
    for (int k = 0; k < nd; k++) {
      if (few && (k + c) % 3 != 0) continue;
      const einsum_case *e = &narrow_cases[c];
      lt_dtype dt[2] = {narrow_combos[k][0], narrow_combos[k][1]};
      lt_test_layout layout = (lt_test_layout)((c + k) % LT_LAYOUT_COUNT);
      check_einsum(ctx, e->expr, 2, dt, e->ranks, e->shapes, layout, narrow_combos[k][2]);
      if (cpu) {
        lt_tensor *ts[2];
        for (int i = 0; i < 2; i++)
          ts[i] = lt_test_bits_tensor(ctx, dt[i], e->ranks[i], e->shapes[i], layout, edge_bits);
        lt_plan *plan;
        LT_CHECK(lt_plan_einsum(e->expr, 2, (const lt_tensor *const *)ts, NULL, NULL, &plan));
        if (!strstr(lt_plan_describe(plan), "GEMM"))
          fail_msg("'%s' on %s x %s did not run as a GEMM: %s", e->expr, lt_dtype_name(dt[0]),
                   lt_dtype_name(dt[1]), lt_plan_describe(plan));
        lt_plan_destroy(plan);
        lt_tensor_destroy(ts[0]), lt_tensor_destroy(ts[1]);
      }
    }
}

/* Sums at the float bound: k - 10 products of (-128)^2 (or 255^2) and then 10 of 1 or 3,
 * so that the partial sums pass 2^24 and then take odd steps, which f32 rounds away: i8 over
 * k = 1100 and u8 over k = 300 must take f64 (a bound one step too loose passed every random
 * case above, whose sums stay near sqrt(k) * 2^14). */
static void run_narrow_bound(lt_context *ctx) {
  static const struct {
    lt_dtype dt;
    int64_t k, big;
  } bound[] = {{LT_I8, 1100, -128}, {LT_U8, 300, 255}};
  enum { R = 8, TAIL = 10 }; /* R x R outputs: past the direct kernel's size */
  for (size_t c = 0; c < sizeof bound / sizeof bound[0]; c++) {
    int64_t k = bound[c].k, sa[2] = {R, k}, sb[2] = {k, R};
    int8_t *va = malloc((size_t)(R * k)), *vb = malloc((size_t)(R * k));
    for (int64_t p = 0; p < k; p++)
      for (int r = 0; r < R; r++) {
        bool tail = p >= k - TAIL;
        va[r * k + p] = (int8_t)(tail ? 1 : bound[c].big);
        vb[p * R + r] = (int8_t)(tail ? 1 + 2 * (r % 2) : bound[c].big);
      }
    lt_tensor *ts[2], *d = NULL;
    LT_CHECK(lt_tensor_from_host(ctx, bound[c].dt, 2, sa, NULL, va, &ts[0]));
    LT_CHECK(lt_tensor_from_host(ctx, bound[c].dt, 2, sb, NULL, vb, &ts[1]));
    LT_CHECK(lt_einsum("ij,jk->ik", 2, (const lt_tensor *const *)ts, NULL, &d));
    __int128 *got = read_exact(d);
    __int128 big = bound[c].dt == LT_U8 ? (uint8_t)bound[c].big : bound[c].big;
    for (int i = 0; i < R; i++)
      for (int j = 0; j < R; j++) {
        u128 s = (u128)(big * big * (k - TAIL) + TAIL * (1 + 2 * (j % 2)));
        if (got[i * R + j] != wrap(bound[c].dt, s))
          fail_msg("%s over k = %lld: D[%d,%d] = %lld, want %lld", lt_dtype_name(bound[c].dt),
                   (long long)k, i, j, (long long)got[i * R + j], (long long)wrap(bound[c].dt, s));
      }
    free(got), free(va), free(vb);
    lt_tensor_destroy(d), lt_tensor_destroy(ts[0]), lt_tensor_destroy(ts[1]);
  }
}

static void test_narrow_as_float_gemm(void **state) {
  (void)state;
  lt_test_on_each_device(run_narrow_gemm);
  lt_test_on_each_device(run_narrow_bound);
}

/* lt_plan_contraction with alpha, beta and C: D = 3 * A.B - 2 * C, wrapping, into outputs of
 * every layout family but broadcast, m x k x n in dtype dt. */
static void run_contraction_of(lt_context *ctx, lt_dtype dt, int64_t m, int64_t k, int64_t n) {
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, sd[2] = {m, n};
  int32_t ma[2] = {'i', 'k'}, mb[2] = {'k', 'j'}, md[2] = {'i', 'j'};
  for (int layout = 0; layout < LT_LAYOUT_BROADCAST; layout++) {
    lt_tensor *a = lt_test_bits_tensor(ctx, dt, 2, sa, (lt_test_layout)layout, edge_bits);
    lt_tensor *b = lt_test_bits_tensor(ctx, dt, 2, sb, LT_LAYOUT_TRANSPOSED, edge_bits);
    lt_tensor *c = lt_test_bits_tensor(ctx, dt, 2, sd, LT_LAYOUT_NEGATIVE, edge_bits);
    lt_tensor *d = lt_test_bits_tensor(ctx, dt, 2, sd, (lt_test_layout)layout, edge_bits);
    __int128 *va = read_exact(a), *vb = read_exact(b), *vc = read_exact(c);
    lt_plan *plan;
    LT_CHECK(lt_plan_contraction(a, ma, b, mb, c, md, d, md, NULL, &plan));
    const lt_tensor *ins[3] = {a, b, c};
    double scalars[2] = {3.0, -2.0};
    LT_CHECK(lt_plan_execute(plan, ins, 3, scalars, 2, d));
    __int128 *vd = read_exact(d);
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        u128 s = 0;
        for (int64_t p = 0; p < k; p++)
          s += (u128)va[i * k + p] * (u128)vb[p * n + j];
        __int128 want = wrap(dt, 3 * s - 2 * (u128)vc[i * n + j]);
        if (vd[i * n + j] != want)
          fail_msg("%s contraction (%s) D[%lld,%lld] = %lld, want %lld: %s", lt_dtype_name(dt),
                   lt_test_layout_name(layout), (long long)i, (long long)j,
                   (long long)vd[i * n + j], (long long)want, lt_plan_describe(plan));
      }
    lt_plan_destroy(plan);
    free(va), free(vb), free(vc), free(vd);
    lt_tensor_destroy(a), lt_tensor_destroy(b), lt_tensor_destroy(c), lt_tensor_destroy(d);
  }
}

/* In i64 (the direct kernel), and in i8 with k = 300 (a float GEMM on the CPU: alpha and beta
 * apply in the integer compute after the exact sum). */
static void run_contraction(lt_context *ctx) {
  run_contraction_of(ctx, LT_I64, 3, 5, 4);
  run_contraction_of(ctx, LT_I8, 12, 300, 10);
}

static void test_contraction_exact(void **state) {
  (void)state;
  lt_test_on_each_device(run_contraction);
}

/* cumsum / cumprod of integers and bool: NumPy's result dtype (i64, u64 for unsigned inputs)
 * and wrapping running sums and products. */
static void run_scans(lt_context *ctx) {
  static const lt_dtype dts[] = {LT_I64, LT_U64, LT_I32, LT_U8, LT_BOOL, LT_I8};
  int64_t shape[2] = {3, 6};
  bool few = compiles_kernels(ctx);
  for (size_t q = 0; q < sizeof dts / sizeof dts[0]; q++)
    for (int axis = 0; axis < 2; axis++)
      for (int prod = 0; prod < 2; prod++) {
        if (few && (q + (size_t)axis + (size_t)prod) % 3 != 0) continue;
        lt_dtype dt = dts[q];
        lt_test_layout layout = (lt_test_layout)((q + (size_t)axis) % LT_LAYOUT_COUNT);
        lt_tensor *a = lt_test_bits_tensor(ctx, dt, 2, shape, layout, edge_bits);
        __int128 *va = read_exact(a);
        lt_tensor *d = NULL;
        LT_CHECK(prod ? lt_cumprod(a, axis, &d) : lt_cumsum(a, axis, &d));
        bool uns = dt == LT_U8 || dt == LT_U16 || dt == LT_U32 || dt == LT_U64;
        lt_dtype want = uns ? LT_U64 : LT_I64;
        assert_int_equal(lt_tensor_dtype(d), want);
        __int128 *vd = read_exact(d);
        /* Column-wise or row-wise running values, checked element by element. */
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 6; j++) {
            u128 run = prod ? 1 : 0;
            int len = axis == 0 ? i : j;
            for (int t = 0; t <= len; t++) {
              u128 v = (u128)va[axis == 0 ? t * 6 + j : i * 6 + t];
              run = prod ? run * v : run + v;
            }
            if (vd[i * 6 + j] != wrap(want, run))
              fail_msg("%s of %s (axis %d, %s) [%d,%d] = %lld, want %lld",
                       prod ? "cumprod" : "cumsum", lt_dtype_name(dt), axis,
                       lt_test_layout_name(layout), i, j, (long long)vd[i * 6 + j],
                       (long long)wrap(want, run));
          }
        free(va), free(vd);
        lt_tensor_destroy(a), lt_tensor_destroy(d);
      }
}

static void test_scans_exact(void **state) {
  (void)state;
  lt_test_on_each_device(run_scans);
}

/* The examples: 2^62 + 1 through 'i->i' and a big-value matmul, by value. */
static void run_examples(lt_context *ctx) {
  int64_t v[2] = {(1ll << 62) + 1, INT64_MIN}, n = 2, got[2];
  lt_tensor *a, *d;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &n, NULL, v, &a));
  LT_CHECK(lt_einsum("i->i", 1, (const lt_tensor *const *)&a, NULL, &d));
  LT_CHECK(lt_tensor_to_host(d, got, sizeof got));
  assert_true(got[0] == v[0] && got[1] == v[1]);
  lt_tensor_destroy(d);
  const lt_tensor *two[2] = {a, a};
  LT_CHECK(lt_einsum("i,i->", 2, two, NULL, &d)); /* (2^62+1)^2 + 2^126: wraps to 2^63 + 1 */
  LT_CHECK(lt_tensor_to_host(d, got, sizeof got[0]));
  assert_true((uint64_t)got[0] == (1ull << 63) + 1);
  lt_tensor_destroy(d);
  lt_tensor_destroy(a);
}

static void test_examples(void **state) {
  (void)state;
  lt_test_on_each_device(run_examples);
}

/* The CPU computes elementwise integer steps in narrow lanes only where that gives the 64-bit
 * compute's bits: these cases sit on each side of that line (an output wider than the inputs
 * after a wrapping op, a bool output of a sum, unsigned inputs in signed lanes, comparisons into
 * wide outputs), each against the exact result of the op wrapped to the output's width. */
static void run_narrow_edges(lt_context *ctx) {
  static const lt_dtype pairs[][2] = {{LT_I8, LT_I8},   {LT_U8, LT_I8},   {LT_U16, LT_U16},
                                      {LT_I32, LT_U8},  {LT_BOOL, LT_I8}, {LT_U32, LT_U32},
                                      {LT_I16, LT_I16}, {LT_U8, LT_U8}};
  static const lt_dtype outs[] = {LT_I16, LT_I64, LT_BOOL, LT_I8, LT_U32};
  static const lt_binary_op ops[] = {LT_BINARY_ADD, LT_BINARY_MUL, LT_BINARY_SUB,
                                     LT_BINARY_LT,  LT_BINARY_MAX, LT_BINARY_BITWISE_XOR};
  int64_t shape[2] = {5, 7};
  int32_t modes[2] = {0, 1};
  if (compiles_kernels(ctx)) return; /* narrow lanes are the CPU's; test_dtypes covers OpenCL */
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
    for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++)
      for (size_t q = 0; q < sizeof ops / sizeof ops[0]; q++) {
        lt_binary_op op = ops[q];
        if (op == LT_BINARY_BITWISE_XOR && (pairs[p][0] == LT_BOOL) != (pairs[p][1] == LT_BOOL))
          continue;
        lt_test_layout layout = (lt_test_layout)((p + o + q) % LT_LAYOUT_COUNT);
        lt_tensor *a = lt_test_bits_tensor(ctx, pairs[p][0], 2, shape, layout, edge_bits);
        lt_tensor *b =
            lt_test_bits_tensor(ctx, pairs[p][1], 2, shape, LT_LAYOUT_TRANSPOSED, edge_bits);
        lt_tensor *d = lt_test_random_tensor(ctx, outs[o], 2, shape, LT_LAYOUT_STEPPED);
        __int128 *va = read_exact(a), *vb = read_exact(b);
        lt_plan *plan;
        LT_CHECK(lt_plan_binary(a, modes, b, modes, op, d, modes, NULL, &plan));
        const lt_tensor *ins[2] = {a, b};
        LT_CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, d));
        __int128 *vd = read_exact(d);
        for (int i = 0; i < 35; i++) {
          __int128 x = va[i], y = vb[i], r;
          switch (op) {
          case LT_BINARY_ADD: r = x + y; break;
          case LT_BINARY_MUL: r = x * y; break;
          case LT_BINARY_SUB: r = x - y; break;
          case LT_BINARY_LT: r = x < y; break;
          case LT_BINARY_MAX: r = x > y ? x : y; break;
          default: r = x ^ y; break;
          }
          if (vd[i] != wrap(outs[o], (u128)r))
            fail_msg("%s op %d %s -> %s (%s) element %d: %lld op %lld gave %lld, want %lld",
                     lt_dtype_name(pairs[p][0]), (int)op, lt_dtype_name(pairs[p][1]),
                     lt_dtype_name(outs[o]), lt_test_layout_name(layout), i, (long long)x,
                     (long long)y, (long long)vd[i], (long long)wrap(outs[o], (u128)r));
        }
        lt_plan_destroy(plan);
        free(va), free(vb), free(vd);
        lt_tensor_destroy(a), lt_tensor_destroy(b), lt_tensor_destroy(d);
      }
}

static void test_narrow_edges(void **state) {
  (void)state;
  lt_test_on_each_device(run_narrow_edges);
}

/* Random integers into u64 and i64 outputs are exact (through double, values above 2^53 lost
 * their low bits) and the same bits in both dtypes, on every device (the stream defines them). */
static void run_rng_integers(lt_context *ctx) {
  int64_t n = 64, lo = (1ll << 62) + 1, hi = INT64_MAX;
  uint64_t got[2][64];
  const lt_dtype dts[2] = {LT_U64, LT_I64};
  for (int q = 0; q < 2; q++) {
    lt_rng *rng;
    LT_CHECK(lt_rng_create(7, 3, &rng));
    lt_tensor *t;
    LT_CHECK(lt_tensor_empty(ctx, dts[q], 1, &n, &t));
    LT_CHECK(lt_rng_integers(rng, t, lo, hi));
    LT_CHECK(lt_tensor_to_host(t, got[q], sizeof got[q]));
    lt_tensor_destroy(t);
    lt_rng_destroy(rng);
  }
  int low_bits = 0;
  for (int i = 0; i < 64; i++) {
    assert_true(got[0][i] == got[1][i]);
    assert_true(got[0][i] >= (uint64_t)lo && got[0][i] < (uint64_t)hi);
    low_bits |= (int)(got[0][i] & 0x3ff) != 0;
  }
  assert_true(low_bits); /* doubles this large are multiples of 2^10 */
}

static void test_rng_integers_exact(void **state) {
  (void)state;
  lt_test_on_each_device(run_rng_integers);
}

/* An OpenCL device without 64-bit integers (simulated with LT_OPENCL_NO_INT64) refuses integer
 * and bool work with a message, and still runs float work. */
static void test_opencl_no_int64(void **state) {
  (void)state;
  const char *devs[8];
  int nd = lt_test_devices(devs);
  bool found = false;
  for (int i = 0; i < nd; i++)
    found |= strncmp(devs[i], "opencl", 6) == 0;
  if (!found) {
    print_message("no OpenCL device: the no-int64 refusal is not exercised\n");
    return;
  }
  setenv("LT_OPENCL_NO_INT64", "1", 1);
  lt_context *ctx;
  LT_CHECK(lt_context_create("opencl", &ctx));
  unsetenv("LT_OPENCL_NO_INT64");
  int64_t n = 4, v[4] = {1, 2, 3, 4};
  float f[4] = {1, 2, 3, 4};
  lt_tensor *a, *b, *d = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &n, NULL, v, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, &n, NULL, f, &b));
  const lt_tensor *ins[2] = {a, a};
  LT_CHECK_FAILS(lt_einsum("i,i->", 2, ins, NULL, &d), LT_ERR_UNSUPPORTED);
  assert_non_null(strstr(lt_last_error(), "64-bit integers"));
  LT_CHECK_FAILS(lt_cumsum(a, 0, &d), LT_ERR_UNSUPPORTED);
  const lt_tensor *fins[2] = {b, b};
  LT_CHECK(lt_einsum("i,i->", 2, fins, NULL, &d));
  float dot;
  LT_CHECK(lt_tensor_to_host(d, &dot, sizeof dot));
  assert_true(dot == 30.0f);
  lt_tensor_destroy(d);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_examples),          cmocka_unit_test(test_einsum_exact),
      cmocka_unit_test(test_contraction_exact), cmocka_unit_test(test_scans_exact),
      cmocka_unit_test(test_narrow_edges),      cmocka_unit_test(test_rng_integers_exact),
      cmocka_unit_test(test_opencl_no_int64),   cmocka_unit_test(test_narrow_as_float_gemm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

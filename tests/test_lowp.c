/* SPDX-License-Identifier: MIT */
/* f16 / bf16 contractions and einsum (issue 21, low precision): every path (bf16 dot products
 * where the CPU has AVX512-BF16, widening while packing elsewhere and under LT_LOWP_F32; run
 * again with LT_CPU_ISA capped by ctest) against a float64 product of the same rounded inputs.
 *
 * Tolerance, per output element: the f32 accumulation may be off by (k + 2) * 2^-24 * sum |a b|
 * (k terms, plus the scaling), and the one rounding to the output dtype by half an ulp of it,
 * so |got - ref| <= (k + 2) * 2^-24 * sum|a b| + u_out * |ref| with u_out 2^-8 for bf16,
 * 2^-11 for f16 (plus 2^-25 for its subnormals) and 0 for f32 (its rounding is in the first
 * term). */
#include "einsum_ref.h"
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair_case {
  int na, nb, nd, n_labels;
  int32_t ma[8], mb[8], md[8];
  int64_t extent[8];
} pair_case;

static void shape_of(const pair_case *c, int rank, const int32_t *modes, int64_t *shape, int *ids) {
  for (int i = 0; i < rank; i++)
    shape[i] = c->extent[modes[i]], ids[i] = modes[i];
}

/* Random batch, M, N, K groups (K never empty), at least `total` label combinations so that
 * the pair runs as GEMM, not the direct kernel. */
static void random_pair(pair_case *c, int64_t min_total) {
  int counts[4];
  for (int g = 0; g < 4; g++)
    counts[g] = (int)lt_test_rand_int(g == 3, 2);
  c->na = c->nb = c->nd = c->n_labels = 0;
  for (int g = 0; g < 4; g++)
    for (int i = 0; i < counts[g]; i++) {
      int32_t l = c->n_labels++;
      c->extent[l] = lt_test_rand_int(1, 12);
      if (g != 2) c->ma[c->na++] = l;
      if (g != 1) c->mb[c->nb++] = l;
      if (g != 3) c->md[c->nd++] = l;
    }
  for (int64_t total = 1;; total = 1) {
    for (int i = 0; i < c->n_labels; i++)
      total *= c->extent[i];
    if (total >= min_total) break;
    c->extent[lt_test_rand_int(0, c->n_labels - 1)] += 1;
  }
  lt_test_shuffle(c->ma, c->na);
  lt_test_shuffle(c->mb, c->nb);
  lt_test_shuffle(c->md, c->nd);
}

static double out_unit(lt_dtype dt) {
  return dt == LT_BF16 ? ldexp(1, -8) : dt == LT_F16 ? ldexp(1, -11) : 0.0;
}

/* Checks got against ref within the tolerance above; mag = sum |a b| per element. */
static void check_close(const double *got, const double *ref, const double *mag, int64_t n,
                        int64_t k, lt_dtype out, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    /* The rounding is measured from the exact value (a sum near a midpoint between two output
     * values may round either way); f16's subnormal spacing 2^-24 bounds it near zero. */
    double tol = (double)(k + 2) * ldexp(1, -24) * mag[i] + out_unit(out) * fabs(ref[i]) +
                 (out == LT_F16 ? ldexp(1, -25) : 0.0);
    if (!(fabs(got[i] - ref[i]) <= tol))
      fail_msg("%s: element %lld is %.9g, want %.9g (tolerance %.3g)", what, (long long)i, got[i],
               ref[i], tol);
  }
}

static double *abs_copy(const double *x, int64_t n) {
  double *y = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    y[i] = fabs(x[i]);
  return y;
}

/* Plans and runs D = A.B for case c with the given dtypes, layouts and mode, and checks it. */
static void run_case(lt_context *ctx, const pair_case *c, lt_dtype in, lt_dtype out,
                     lt_test_layout la, lt_test_layout lb, lt_test_layout ld,
                     lt_lowp_compute mode) {
  int64_t sa[8], sb[8], sd[8];
  int ia[8], ib[8], id[8];
  shape_of(c, c->na, c->ma, sa, ia);
  shape_of(c, c->nb, c->mb, sb, ib);
  shape_of(c, c->nd, c->md, sd, id);
  lt_tensor *a = lt_test_random_tensor(ctx, in, c->na, sa, la);
  lt_tensor *b = lt_test_random_tensor(ctx, in, c->nb, sb, lb);
  lt_test_output d;
  lt_test_output_make(ctx, out, c->nd, sd, ld, &d);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_lowp_compute(opts, mode));
  lt_plan *plan;
  LT_CHECK(lt_plan_contraction(a, c->ma, b, c->mb, NULL, NULL, d.view, c->md, opts, &plan));
  const lt_tensor *ins[2] = {a, b};
  LT_CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, d.view));
  char what[512];
  snprintf(what, sizeof what, "%s->%s %s/%s/%s mode %d: %s", lt_dtype_name(in), lt_dtype_name(out),
           lt_test_layout_name(la), lt_test_layout_name(lb), lt_test_layout_name(ld), (int)mode,
           lt_plan_describe(plan));
  double *da = lt_test_read_all(a), *db = lt_test_read_all(b), *got = lt_test_read_all(d.view);
  int64_t na = lt_test_numel(c->na, sa), nb = lt_test_numel(c->nb, sb);
  double *aa = abs_copy(da, na), *ab = abs_copy(db, nb);
  lt_ref_operand ro[2] = {{c->na, ia, sa, da}, {c->nb, ib, sb, db}};
  lt_ref_operand rm[2] = {{c->na, ia, sa, aa}, {c->nb, ib, sb, ab}};
  double *ref = lt_ref_einsum(2, ro, c->n_labels, c->extent, c->nd, id);
  double *mag = lt_ref_einsum(2, rm, c->n_labels, c->extent, c->nd, id);
  int64_t k = 1;
  for (int l = 0; l < c->n_labels; l++) {
    bool in_d = false;
    for (int i = 0; i < c->nd; i++)
      in_d |= c->md[i] == l;
    if (!in_d) k *= c->extent[l];
  }
  check_close(got, ref, mag, lt_test_numel(c->nd, sd), k, out, what);
  lt_test_output_check_guard(&d);
  free(da), free(db), free(got), free(aa), free(ab), free(ref), free(mag);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  lt_test_output_free(&d);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
}

static const lt_dtype outs[3] = {LT_F32, LT_BF16, LT_F16};

/* Fewer cases off the CPU: OpenCL's GEMM gets f32 operands whatever this issue changed. */
static bool on_cpu(lt_context *ctx) { return strcmp(lt_context_device(ctx), "cpu") == 0; }

static void random_pairs_on(lt_context *ctx) {
  int cases = lt_test_instrumented() || !on_cpu(ctx) ? 6 : 24;
  for (int it = 0; it < cases; it++) {
    pair_case c;
    random_pair(&c, 20000);
    lt_dtype in = it % 2 ? LT_F16 : LT_BF16;
    lt_test_layout la = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_COUNT - 1);
    lt_test_layout lb = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_COUNT - 1);
    lt_test_layout ld = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_BROADCAST - 1);
    run_case(ctx, &c, in, outs[it % 3], la, lb, ld, (lt_lowp_compute)(it / 2 % 2));
  }
}

static void test_random_pairs(void **state) {
  (void)state;
  lt_test_on_each_device(random_pairs_on);
}

/* Matrices past the packing blocks: odd k across two k blocks (k pairs padded), edges of the
 * register tile in m and n, C row- and column-major, transposed operands. */
static void large_matrices_on(lt_context *ctx) {
  pair_case c = {.na = 2, .nb = 2, .nd = 2, .n_labels = 3};
  int64_t dims[][3] = {{37, 29, 1601}, {70, 45, 33}, {3, 200, 77}};
  int n = lt_test_instrumented() || !on_cpu(ctx) ? 1 : 3;
  for (int t = 0; t < n; t++) {
    c.extent[0] = dims[t][0], c.extent[1] = dims[t][1], c.extent[2] = dims[t][2];
    /* D[i,j] = A[i,k] B[k,j], with A as [k,i] on odd t (k the unit stride or not). */
    int32_t ma0[2] = {0, 2}, ma1[2] = {2, 0}, mb[2] = {2, 1}, md0[2] = {0, 1}, md1[2] = {1, 0};
    memcpy(c.ma, t % 2 ? ma1 : ma0, sizeof ma0);
    memcpy(c.mb, mb, sizeof mb);
    memcpy(c.md, t == 2 ? md1 : md0, sizeof md0);
    for (int mode = 0; mode < 2; mode++)
      for (int i = mode; i < 2; i += 2)
        run_case(ctx, &c, (t + i) % 2 ? LT_F16 : LT_BF16, outs[(t + mode) % 3],
                 t == 1 ? LT_LAYOUT_TRANSPOSED : LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_CONTIGUOUS,
                 t == 1 ? LT_LAYOUT_STEPPED : LT_LAYOUT_CONTIGUOUS, (lt_lowp_compute)mode);
  }
}

static void test_large_matrices(void **state) {
  (void)state;
  lt_test_on_each_device(large_matrices_on);
}

/* LT_LOWP_F32 keeps subnormal products (bf16 has f32's exponent range, so 2^-70 * 2^-70 is
 * an f32 subnormal); the fast mode may flush them, so only its finiteness is checked. */
static void subnormals_on(lt_context *ctx) {
  int64_t sa[2] = {64, 64};
  for (int mode = 0; mode < 2; mode++) {
    lt_tensor *a, *b, *d;
    LT_CHECK(lt_tensor_full(ctx, LT_BF16, 2, sa, ldexp(1, -70), &a));
    LT_CHECK(lt_tensor_full(ctx, LT_BF16, 2, sa, ldexp(1, -70), &b));
    LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, sa, &d));
    lt_plan_options *opts;
    LT_CHECK(lt_plan_options_create(&opts));
    LT_CHECK(lt_plan_options_set_lowp_compute(opts, (lt_lowp_compute)mode));
    int32_t ma[2] = {0, 2}, mb[2] = {2, 1}, md[2] = {0, 1};
    lt_plan *plan;
    LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, d, md, opts, &plan));
    const lt_tensor *ins[2] = {a, b};
    LT_CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, d));
    double *got = lt_test_read_all(d);
    double want = (double)(float)(64 * ldexp(1, -140));
    for (int64_t i = 0; i < 64 * 64; i++) {
      if (mode == LT_LOWP_F32 && got[i] != want)
        fail_msg("LT_LOWP_F32: element %lld is %g, want the subnormal %g (%s)", (long long)i,
                 got[i], want, lt_plan_describe(plan));
      if (mode == LT_LOWP_FAST && !(got[i] == want || got[i] == 0))
        fail_msg("LT_LOWP_FAST: element %lld is %g, want %g or 0", (long long)i, got[i], want);
    }
    free(got);
    lt_plan_destroy(plan);
    lt_plan_options_destroy(opts);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
    lt_tensor_destroy(d);
  }
}

static void test_subnormals(void **state) {
  (void)state;
  lt_test_on_each_device(subnormals_on);
}

/* A three-operand bf16 einsum: the first pair reads bf16 directly, the second an f32
 * intermediate with a bf16 operand (mixed: widened into workspace). */
static void einsum_chain_on(lt_context *ctx) {
  int64_t s0[3] = {4, 24, 40}, s1[3] = {4, 40, 36}, s2[2] = {36, 20}, sd[3] = {4, 24, 20};
  int l0[3] = {0, 1, 2}, l1[3] = {0, 2, 3}, l2[2] = {3, 4}, ld[3] = {0, 1, 4};
  int64_t extent[5] = {4, 24, 40, 36, 20};
  lt_tensor *x = lt_test_random_tensor(ctx, LT_BF16, 3, s0, LT_LAYOUT_TRANSPOSED);
  lt_tensor *y = lt_test_random_tensor(ctx, LT_BF16, 3, s1, LT_LAYOUT_CONTIGUOUS);
  lt_tensor *z = lt_test_random_tensor(ctx, LT_BF16, 2, s2, LT_LAYOUT_NEGATIVE);
  lt_test_output d;
  lt_test_output_make(ctx, LT_BF16, 3, sd, LT_LAYOUT_CONTIGUOUS, &d);
  const lt_tensor *ins[3] = {x, y, z};
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum("bij,bjk,kl->bil", 3, ins, d.view, NULL, &plan));
  LT_CHECK(lt_plan_execute(plan, ins, 3, NULL, 0, d.view));
  double *dx = lt_test_read_all(x), *dy = lt_test_read_all(y), *dz = lt_test_read_all(z);
  double *got = lt_test_read_all(d.view);
  double *ax = abs_copy(dx, 4 * 24 * 40), *ay = abs_copy(dy, 4 * 40 * 36), *az = abs_copy(dz, 720);
  lt_ref_operand ro[3] = {{3, l0, s0, dx}, {3, l1, s1, dy}, {2, l2, s2, dz}};
  lt_ref_operand rm[3] = {{3, l0, s0, ax}, {3, l1, s1, ay}, {2, l2, s2, az}};
  double *ref = lt_ref_einsum(3, ro, 5, extent, 3, ld);
  double *mag = lt_ref_einsum(3, rm, 5, extent, 3, ld);
  /* The intermediate is f32: one more rounding per term, inside the k * 2^-24 term. */
  check_close(got, ref, mag, 4 * 24 * 20, 40 * 36, LT_BF16, lt_plan_describe(plan));
  lt_test_output_check_guard(&d);
  free(dx), free(dy), free(dz), free(got), free(ax), free(ay), free(az), free(ref), free(mag);
  lt_plan_destroy(plan);
  lt_test_output_free(&d);
  lt_tensor_destroy(x);
  lt_tensor_destroy(y);
  lt_tensor_destroy(z);
}

static void test_einsum_chain(void **state) {
  (void)state;
  lt_test_on_each_device(einsum_chain_on);
}

/* GEMMs that store an f16 / bf16 D themselves (f32 blocks rounded once, cpu_gemm_store16.c):
 * D = alpha A.B + beta D over a batch split across threads by whole GEMMs and over single larger
 * GEMMs, D row- or column-major for the GEMM, from 16-bit and from f32 operands; and, for
 * contrast, D stepped or transposed (no unit stride in the GEMM's m or n: rounded from f32
 * workspace in a second pass, as before). The reference adds beta times D's values before the call.
 */
static void stored_16bit_on(lt_context *ctx) {
  struct {
    int64_t b, m, n, k;
    bool d_turned; /* D[b, j, i]: C column-major */
    lt_test_layout ld;
    lt_dtype in, out;
    double alpha, beta;
  } cases[] = {
      {8, 24, 20, 40, false, LT_LAYOUT_CONTIGUOUS, LT_BF16, LT_BF16, 1.0, 0.0},
      {8, 24, 20, 40, true, LT_LAYOUT_CONTIGUOUS, LT_F16, LT_F16, 0.5, -1.5},
      {6, 33, 17, 70, false, LT_LAYOUT_TRANSPOSED, LT_BF16, LT_F16, -2.0, 0.25},
      {1, 130, 90, 50, false, LT_LAYOUT_CONTIGUOUS, LT_BF16, LT_BF16, 1.0, 1.0},
      {2, 70, 300, 30, true, LT_LAYOUT_CONTIGUOUS, LT_F32, LT_BF16, 1.5, 0.0},
      {5, 16, 16, 600, false, LT_LAYOUT_CONTIGUOUS, LT_F32, LT_F16, 1.0, 2.0},
      {3, 40, 36, 50, false, LT_LAYOUT_STEPPED, LT_BF16, LT_BF16, 1.0, -0.5},
  };
  int n = lt_test_instrumented() || !on_cpu(ctx) ? 2 : (int)(sizeof cases / sizeof cases[0]);
  for (int t = 0; t < n; t++) {
    int64_t sa[3] = {cases[t].b, cases[t].m, cases[t].k},
            sb[3] = {cases[t].b, cases[t].k, cases[t].n};
    int64_t sd[3] = {cases[t].b, cases[t].d_turned ? cases[t].n : cases[t].m,
                     cases[t].d_turned ? cases[t].m : cases[t].n};
    int la[3] = {0, 1, 3}, lb[3] = {0, 3, 2}, ld0[3] = {0, 1, 2}, ld1[3] = {0, 2, 1};
    const int *ld = cases[t].d_turned ? ld1 : ld0;
    int64_t extent[4] = {cases[t].b, cases[t].m, cases[t].n, cases[t].k};
    lt_tensor *a = lt_test_random_tensor(ctx, cases[t].in, 3, sa, LT_LAYOUT_CONTIGUOUS);
    lt_tensor *b = lt_test_random_tensor(ctx, cases[t].in, 3, sb, LT_LAYOUT_TRANSPOSED);
    lt_tensor *d = lt_test_random_tensor(ctx, cases[t].out, 3, sd, cases[t].ld);
    const char *expr = cases[t].d_turned ? "bik,bkj->bji" : "bik,bkj->bij";
    const lt_tensor *ins[2] = {a, b};
    lt_plan *plan;
    LT_CHECK(lt_plan_einsum(expr, 2, ins, d, NULL, &plan));
    double *d0 = lt_test_read_all(d);
    const double scalars[2] = {cases[t].alpha, cases[t].beta};
    LT_CHECK(lt_plan_execute(plan, ins, 2, scalars, 2, d));
    int64_t na = lt_test_numel(3, sa), nb = lt_test_numel(3, sb), nd = lt_test_numel(3, sd);
    double *da = lt_test_read_all(a), *db = lt_test_read_all(b), *got = lt_test_read_all(d);
    double *aa = abs_copy(da, na), *ab = abs_copy(db, nb);
    lt_ref_operand ro[2] = {{3, la, sa, da}, {3, lb, sb, db}};
    lt_ref_operand rm[2] = {{3, la, sa, aa}, {3, lb, sb, ab}};
    double *ref = lt_ref_einsum(2, ro, 4, extent, 3, ld);
    double *mag = lt_ref_einsum(2, rm, 4, extent, 3, ld);
    for (int64_t i = 0; i < nd; i++) {
      ref[i] = cases[t].alpha * ref[i] + cases[t].beta * d0[i];
      mag[i] = fabs(cases[t].alpha) * mag[i] + fabs(cases[t].beta * d0[i]);
    }
    char what[600];
    snprintf(what, sizeof what, "case %d (%s, alpha %g, beta %g): %s", t, expr, cases[t].alpha,
             cases[t].beta, lt_plan_describe(plan));
    check_close(got, ref, mag, nd, cases[t].k, cases[t].out, what);
    free(d0), free(da), free(db), free(got), free(aa), free(ab), free(ref), free(mag);
    lt_plan_destroy(plan);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
    lt_tensor_destroy(d);
  }
}

static void test_stored_16bit(void **state) {
  (void)state;
  lt_test_on_each_device(stored_16bit_on);
}

/* f32 <-> f16 / bf16 conversions of the elementwise engine (vectorised on AVX-512 for
 * contiguous runs) give the bits of the scalar lt_f32_to_f16 / lt_f32_to_bf16 / lt_f16_to_f32 /
 * lt_bf16_to_f32: NaN, infinities, overflow, f16 subnormals, ties to even, and lengths that
 * leave a partial vector. */
static void conversions_on(lt_context *ctx) {
  float special[] = {
      NAN,           -NAN,          INFINITY,     -INFINITY,      65504.f,        65519.f,
      65520.f,       -1e9f,         0.f,          -0.f,           5.9604645e-8f,  2.9802322e-8f,
      2.9802326e-8f, 8.9406967e-8f, 6.097555e-5f, 1.00048828125f, 1.00146484375f, 1.0039062f,
      1.01171875f,   3.4028235e38f, 1e-40f,       -1e-45f,        1.1754942e-38f};
  int ns = (int)(sizeof special / sizeof special[0]);
  enum { N = 53 };
  float x[N];
  for (int i = 0; i < N; i++)
    x[i] = i < ns ? special[i] : (float)lt_test_rand_double(-300, 300);
  /* NaNs whose payload would carry into the exponent (and sign) if rounded as numbers. */
  uint32_t nan_bits[2] = {0x7fffffffu, 0xffffffffu};
  memcpy(&x[N - 2], nan_bits, sizeof nan_bits);
  int64_t shape[1] = {N};
  for (int t = 0; t < 2; t++) {
    lt_dtype half = t ? LT_BF16 : LT_F16;
    lt_tensor *src, *narrow, *wide;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, shape, NULL, x, &src));
    LT_CHECK(lt_tensor_contiguous(src, half, &narrow));
    LT_CHECK(lt_tensor_contiguous(narrow, LT_F32, &wide));
    uint16_t got[N];
    float back[N];
    LT_CHECK(lt_tensor_to_host(narrow, got, sizeof got));
    LT_CHECK(lt_tensor_to_host(wide, back, sizeof back));
    for (int i = 0; i < N; i++) {
      uint16_t want = t ? lt_f32_to_bf16(x[i]) : lt_f32_to_f16(x[i]);
      float want_back = t ? lt_bf16_to_f32(want) : lt_f16_to_f32(want);
      /* NaN payloads are the device's business off the CPU: any NaN will do there. */
      bool nan_ok = !on_cpu(ctx) && x[i] != x[i] &&
                    (t ? (got[i] & 0x7f80) == 0x7f80 && (got[i] & 0x7f)
                       : (got[i] & 0x7c00) == 0x7c00 && (got[i] & 0x3ff));
      if (got[i] != want && !nan_ok)
        fail_msg("%s: %.9g became 0x%04x, want 0x%04x", lt_dtype_name(half), (double)x[i], got[i],
                 want);
      if (memcmp(&back[i], &want_back, sizeof(float)) != 0 && !nan_ok)
        fail_msg("%s 0x%04x widened to %.9g, want %.9g", lt_dtype_name(half), want, (double)back[i],
                 (double)want_back);
    }
    lt_tensor_destroy(src);
    lt_tensor_destroy(narrow);
    lt_tensor_destroy(wide);
  }
}

/* 16-bit values widened to f32 (vector runs and a partial vector) give lt_f16_to_f32's /
 * lt_bf16_to_f32's bits, except that a signalling NaN comes out quiet (IEEE 754's conversion;
 * F16C's vcvtph2ps quiets it, and so does the engine's arithmetic on every path), payload
 * kept. */
static void widen_nans_on(lt_context *ctx) {
  enum { N = 19 };
  const uint16_t f16[N] = {0x7c01, 0xfc01, 0x7dff, 0xfd55, 0x7e00, 0xfe01, 0x7c00,
                           0xfc00, 0x3c00, 0x0001, 0x8001, 0x03ff, 0x7bff, 0x0000,
                           0x8000, 0x7c02, 0x7fff, 0xffff, 0x7d00};
  const uint16_t bf16[N] = {0x7f81, 0xff81, 0x7fbf, 0xffd5, 0x7fc0, 0xffc1, 0x7f80,
                            0xff80, 0x3f80, 0x0001, 0x8001, 0x007f, 0x7f7f, 0x0000,
                            0x8000, 0x7f82, 0x7fff, 0xffff, 0x7fa0};
  int64_t shape[1] = {N};
  for (int t = 0; t < 2; t++) {
    lt_dtype half = t ? LT_BF16 : LT_F16;
    const uint16_t *bits = t ? bf16 : f16;
    lt_tensor *src, *wide;
    LT_CHECK(lt_tensor_from_host(ctx, half, 1, shape, NULL, bits, &src));
    LT_CHECK(lt_tensor_contiguous(src, LT_F32, &wide));
    float got[N];
    LT_CHECK(lt_tensor_to_host(wide, got, sizeof got));
    for (int i = 0; i < N; i++) {
      float want = t ? lt_bf16_to_f32(bits[i]) : lt_f16_to_f32(bits[i]);
      uint32_t w;
      memcpy(&w, &want, sizeof w);
      if (want != want) w |= 0x400000u;
      memcpy(&want, &w, sizeof w);
      if (memcmp(&got[i], &want, sizeof want) != 0 && (on_cpu(ctx) || want == want))
        fail_msg("%s 0x%04x widened to %.9g, want %.9g", lt_dtype_name(half), bits[i],
                 (double)got[i], (double)want);
    }
    lt_tensor_destroy(src);
    lt_tensor_destroy(wide);
  }
}

static void test_conversions(void **state) {
  (void)state;
  lt_test_on_each_device(conversions_on);
  lt_test_on_each_device(widen_nans_on);
}

static void test_option_errors(void **state) {
  (void)state;
  LT_CHECK_FAILS(lt_plan_options_set_lowp_compute(NULL, LT_LOWP_F32), LT_ERR_NULL_POINTER);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK_FAILS(lt_plan_options_set_lowp_compute(opts, (lt_lowp_compute)2),
                 LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "mode 2"));
  LT_CHECK_FAILS(lt_plan_options_set_lowp_compute(opts, (lt_lowp_compute)-1),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_plan_options_set_lowp_compute(opts, LT_LOWP_F32));
  lt_plan_options_destroy(opts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_pairs), cmocka_unit_test(test_large_matrices),
      cmocka_unit_test(test_subnormals),   cmocka_unit_test(test_einsum_chain),
      cmocka_unit_test(test_conversions),  cmocka_unit_test(test_option_errors),
      cmocka_unit_test(test_stored_16bit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

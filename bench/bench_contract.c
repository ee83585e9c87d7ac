/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
/* Tensor contractions from the TCCG benchmark set through lt_plan_contraction, as a ratio to
 * a plain OpenBLAS GEMM with the same m, n, k in the same process (medians of several runs);
 * plus the overheads: executing a 4x4.4x4 plan, a warm one-shot lt_einsum, planning a
 * 20-operand chain. Usage: bench_contract [repeats] (LT_BENCH_SCALE=0.5 shrinks the cases). */
#include "bench_peak.h"
#include "tensor.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define CHECK(call)                                                                                \
  do {                                                                                             \
    lt_status st_ = (call);                                                                        \
    if (st_ != LT_OK) {                                                                            \
      fprintf(stderr, "%s: %s (%s)\n", #call, lt_status_string(st_), lt_last_error());             \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* A TCCG case "C-A-B" with an extent for each letter. */
typedef struct tccg_case {
  const char *spec;
  int extent[26]; /* by letter, 0 = unused */
} tccg_case;

static const tccg_case cases[] = {
    {"abc-bda-dc", {['a' - 'a'] = 312, ['b' - 'a'] = 296, ['c' - 'a'] = 24, ['d' - 'a'] = 312}},
    {"abcd-dbea-ec",
     {['a' - 'a'] = 72, ['b' - 'a'] = 72, ['c' - 'a'] = 24, ['d' - 'a'] = 72, ['e' - 'a'] = 72}},
    {"abcde-efbad-cf",
     {['a' - 'a'] = 24,
      ['b' - 'a'] = 24,
      ['c' - 'a'] = 48,
      ['d' - 'a'] = 24,
      ['e' - 'a'] = 24,
      ['f' - 'a'] = 48}},
    {"abcd-ea-ebcd",
     {['a' - 'a'] = 128, ['b' - 'a'] = 32, ['c' - 'a'] = 32, ['d' - 'a'] = 32, ['e' - 'a'] = 128}},
    {"ab-ac-cb", {['a' - 'a'] = 1024, ['b' - 'a'] = 1024, ['c' - 'a'] = 1024}},
    {"abc-acd-db", {['a' - 'a'] = 168, ['b' - 'a'] = 168, ['c' - 'a'] = 168, ['d' - 'a'] = 168}},
    {"abcdef-dega-gfbc",
     {['a' - 'a'] = 16,
      ['b' - 'a'] = 16,
      ['c' - 'a'] = 16,
      ['d' - 'a'] = 16,
      ['e' - 'a'] = 16,
      ['f' - 'a'] = 16,
      ['g' - 'a'] = 32}},
};

static int split(const char *spec, int part, int32_t *modes) {
  int p = 0, n = 0;
  for (const char *c = spec; *c; c++) {
    if (*c == '-')
      p++;
    else if (p == part)
      modes[n++] = *c - 'a';
  }
  return n;
}

static bool has(const int32_t *m, int n, int32_t x) {
  for (int i = 0; i < n; i++)
    if (m[i] == x) return true;
  return false;
}

static lt_tensor *random_tensor(lt_context *ctx, lt_dtype dt, int rank, const int64_t *shape) {
  lt_tensor *t;
  CHECK(lt_tensor_empty(ctx, dt, rank, shape, &t));
  void *p;
  CHECK(lt_tensor_host_pointer(t, &p));
  int64_t n = lt_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    double v = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
    if (dt == LT_F32)
      ((float *)p)[i] = (float)v;
    else
      ((double *)p)[i] = v;
  }
  return t;
}

static double time_gemm(lt_dtype dt, int64_t m, int64_t n, int64_t k, int reps) {
  size_t es = dt == LT_F32 ? 4 : 8;
  void *a = calloc((size_t)(m * k), es), *b = calloc((size_t)(k * n), es),
       *c = calloc((size_t)(m * n), es);
  double t[32];
  for (int r = -1; r < reps; r++) {
    double t0 = now();
    if (dt == LT_F32)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                  (int)k, b, (int)n, 0.0f, c, (int)n);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a, (int)k,
                  b, (int)n, 0.0, c, (int)n);
    if (r >= 0) t[r] = now() - t0;
  }
  free(a);
  free(b);
  free(c);
  return median(t, reps);
}

/* f32 FMA peak of all threads (GFLOP/s), measured in main; f64 is half. */
static double fma_peak;

static double bench_case(lt_context *ctx, const tccg_case *tc, lt_dtype dt, double scale, int reps,
                         double *gemm_ratio) {
  int32_t mc[16], ma[16], mb[16];
  int nc = split(tc->spec, 0, mc), na = split(tc->spec, 1, ma), nb = split(tc->spec, 2, mb);
  int64_t sc[16], sa[16], sb[16], m = 1, n = 1, k = 1;
  int64_t ext[26];
  for (int l = 0; l < 26; l++)
    ext[l] = tc->extent[l] ? (int64_t)fmax(1, round(tc->extent[l] * scale)) : 0;
  for (int i = 0; i < nc; i++)
    sc[i] = ext[mc[i]];
  for (int i = 0; i < na; i++) {
    sa[i] = ext[ma[i]];
    if (has(mc, nc, ma[i]))
      m *= sa[i];
    else
      k *= sa[i];
  }
  for (int i = 0; i < nb; i++) {
    sb[i] = ext[mb[i]];
    if (has(mc, nc, mb[i])) n *= sb[i];
  }
  lt_tensor *a = random_tensor(ctx, dt, na, sa), *b = random_tensor(ctx, dt, nb, sb), *c;
  CHECK(lt_tensor_zeros(ctx, dt, nc, sc, &c));
  lt_plan *plan;
  CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, c, mc, NULL, &plan));
  const lt_tensor *ins[2] = {a, b};
  double t[32];
  for (int r = -1; r < reps; r++) {
    double t0 = now();
    CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, c));
    if (r >= 0) t[r] = now() - t0;
  }
  double flops = 2.0 * (double)m * (double)n * (double)k;
  double ours = flops / median(t, reps) / 1e9;
  double gemm = flops / time_gemm(dt, m, n, k, reps) / 1e9;
  *gemm_ratio = ours / gemm;
  double peak = dt == LT_F64 ? fma_peak / 2 : fma_peak;
  printf("%-18s %-4s m=%-7lld n=%-7lld k=%-5lld %6.2f GFLOP  ours %7.1f GFLOP/s (%.2f of peak)  "
         "gemm %7.1f GFLOP/s  ratio %.2f   [%s]\n",
         tc->spec, lt_dtype_name(dt), (long long)m, (long long)n, (long long)k, flops / 1e9, ours,
         peak > 0 ? ours / peak : 0.0, gemm, *gemm_ratio, lt_plan_describe(plan));
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_tensor_destroy(c);
  return ours;
}

static double memcpy_gbs(void) {
  size_t n = 64u << 20;
  char *a = malloc(n), *b = malloc(n);
  memset(a, 1, n);
  memset(b, 2, n);
  double t[5];
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    memcpy(b, a, n);
    t[r] = now() - t0;
  }
  free(a);
  free(b);
  return 2.0 * (double)n / median(t, 5) / 1e9;
}

/* Median microseconds per call of f over many calls. */
#define TIME_US(result, iters, body)                                                               \
  do {                                                                                             \
    double samples_[9];                                                                            \
    for (int s_ = 0; s_ < 9; s_++) {                                                               \
      double t0_ = now();                                                                          \
      for (int i_ = 0; i_ < (iters); i_++) {                                                       \
        body;                                                                                      \
      }                                                                                            \
      samples_[s_] = (now() - t0_) / (iters)*1e6;                                                  \
    }                                                                                              \
    (result) = median(samples_, 9);                                                                \
  } while (0)

static void bench_overheads(lt_context *ctx) {
  int64_t s4[2] = {4, 4};
  lt_tensor *a = random_tensor(ctx, LT_F32, 2, s4), *d;
  CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s4, &d));
  const lt_tensor *ins[2] = {a, a};
  lt_plan *plan;
  CHECK(lt_plan_einsum("ij,jk->ik", 2, ins, d, NULL, &plan));
  double exec_us, oneshot_us, plan20_ms;
  TIME_US(exec_us, 20000, CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, d)));
  TIME_US(oneshot_us, 20000, {
    lt_tensor *o;
    CHECK(lt_einsum("ij,jk->ik", 2, ins, NULL, &o));
    lt_tensor_destroy(o);
  });
  /* 20-operand matrix chain with varied extents. */
  lt_tensor *chain[20];
  char expr[128];
  size_t len = 0;
  for (int i = 0; i < 20; i++) {
    int64_t s[2] = {2 + (i * 7) % 9, 2 + ((i + 1) * 7) % 9};
    CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s, &chain[i]));
    len += (size_t)sprintf(expr + len, "%s%c%c", i ? "," : "", 'a' + i, 'a' + i + 1);
  }
  sprintf(expr + len, "->au");
  TIME_US(plan20_ms, 20, {
    lt_plan *p;
    CHECK(lt_plan_einsum(expr, 20, (const lt_tensor *const *)chain, NULL, NULL, &p));
    lt_plan_destroy(p);
  });
  plan20_ms /= 1000.0;
  printf("overhead: execute 4x4.4x4 plan %.2f us (target < 2), one-shot lt_einsum warm %.2f us "
         "(target < 5), plan 20-operand chain %.3f ms (target < 10)\n",
         exec_us, oneshot_us, plan20_ms);
  for (int i = 0; i < 20; i++)
    lt_tensor_destroy(chain[i]);
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(d);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1 || reps > 31) reps = 5;
  double scale = getenv("LT_BENCH_SCALE") ? atof(getenv("LT_BENCH_SCALE")) : 1.0;
  lt_context *ctx;
  CHECK(lt_context_create("cpu", &ctx));
  fma_peak = lt_fma_peak_gflops(lt_context_num_threads(ctx));
  printf("machine: memcpy %.1f GB/s, FMA peak %.0f GFLOP/s f32 (%.0f f64) on %d threads, OpenBLAS "
         "%s with %d threads; medians of %d runs\n",
         memcpy_gbs(), fma_peak, fma_peak / 2, lt_context_num_threads(ctx), openblas_get_corename(),
         openblas_get_num_threads(), reps);
  bench_overheads(ctx);
  double ratios[64];
  int nr = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int d = 0; d < 2; d++) {
      double r;
      bench_case(ctx, &cases[c], d ? LT_F64 : LT_F32, scale, reps, &r);
      ratios[nr++] = r;
    }
  double lo = ratios[0];
  for (int i = 0; i < nr; i++)
    lo = ratios[i] < lo ? ratios[i] : lo;
  printf("ratio to GEMM: median %.2f, min %.2f (aim: median >= 0.9, none below 0.75)\n",
         median(ratios, nr), lo);
  lt_context_destroy(ctx);
  return 0;
}

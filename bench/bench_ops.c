/* SPDX-License-Identifier: MIT */
/* Operations at memory speed: permutations, reductions and broadcast binary ops on 64M-element
 * float32 tensors, each printed as GB/s (bytes read + written) and as a ratio to a limit
 * measured in the same run with the same number of threads, the better of a plain loop and a
 * tuned one: copy (a plain loop, memcpy), a read-only sum (plain, with software prefetch) and a
 * STREAM triad (plain, with non-temporal stores). The tuned loops use what the library's kernels
 * use, so a ratio above 1 means a weak limit, not a fast kernel. Medians of LT_BENCH_REPS runs
 * (default 5).
 * Each case's limit is re-measured before each of its runs and the ratio taken per pair (the
 * machine may be shared; a burst of load then hits both sides of a pair).
 *   usage: bench_ops [csv-file]   (LT_BENCH_N overrides the element count, LT_NUM_THREADS the
 *   thread count; the CSV lines feed bench/bench_ops_numpy.py for the side-by-side) */
#define _GNU_SOURCE
#include "bench_timing.h"
#include "tensor.h"

#include <math.h>
#include <pthread.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int64_t N = 1 << 26;
static int REPS = 5;
static int THREADS = 2;
static FILE *csv;

/* ---- machine limits: simple loops split across THREADS pthreads ---- */

/* Plain loops, then their tuned partners (partner_of). K_GATHER copies rows of GATHER_ROW
 * floats from random places (gather_idx), as a random take does. */
typedef enum {
  K_COPY,
  K_SUM,
  K_TRIAD,
  K_GATHER,
  K_MEMCPY,
  K_SUM_PREFETCH,
  K_TRIAD_STREAM,
  K_GATHER_STREAM
} limit_kind;

static limit_kind partner_of(limit_kind plain) {
  return plain == K_COPY    ? K_MEMCPY
         : plain == K_SUM   ? K_SUM_PREFETCH
         : plain == K_TRIAD ? K_TRIAD_STREAM
                            : K_GATHER_STREAM;
}

#define GATHER_ROW 64       /* floats: 256-byte rows */
static int64_t *gather_idx; /* N / GATHER_ROW source rows, uniformly random */
typedef struct limit_arg {
  limit_kind kind;
  float *a, *b, *c;
  int64_t lo, hi;
  double sink;
} limit_arg;

/* Keep the compiler from turning the copy loop into a memcpy call. */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void
copy_loop(float *restrict d, const float *restrict s, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    d[i] = s[i];
}

/* `ahead`: bytes prefetched ahead of the loop, in bursts of 1 KB (0: none). */
static double sum_loop(const float *restrict s, int64_t n, int64_t ahead) {
  float acc[16] = {0};
  int64_t i = 0;
  for (; i + 256 <= n; i += 256) {
    if (ahead)
      for (int b = 0; b < 1024; b += 64)
        __builtin_prefetch((const char *)(s + i) + ahead + b);
    for (int64_t k = i; k < i + 256; k += 16)
      for (int j = 0; j < 16; j++)
        acc[j] += s[k + j];
  }
  double t = 0;
  for (int j = 0; j < 16; j++)
    t += acc[j];
  for (; i < n; i++)
    t += s[i];
  return t;
}

static void triad_loop(float *restrict a, const float *restrict b, const float *restrict c,
                       int64_t n) {
  for (int64_t i = 0; i < n; i++)
    a[i] = b[i] + 3.0f * c[i];
}

/* The triad with non-temporal stores: no read for ownership of the output. */
static void triad_stream_loop(float *restrict a, const float *restrict b, const float *restrict c,
                              int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i < n && ((uintptr_t)(a + i) & 15) != 0; i++)
    a[i] = b[i] + 3.0f * c[i];
  __m128 three = _mm_set1_ps(3.0f);
  for (; i + 4 <= n; i += 4)
    _mm_stream_ps(a + i, _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(three, _mm_loadu_ps(c + i))));
  _mm_sfence();
#endif
  for (; i < n; i++)
    a[i] = b[i] + 3.0f * c[i];
}

/* Output rows [r0, r1) from their random source rows: memcpy each (plain), or (tuned, as the
 * library's row gather does) with the rows `ahead` further on prefetched and the output written
 * with non-temporal stores. */
static void gather_loop(float *restrict d, const float *restrict s, int64_t r0, int64_t r1,
                        bool tuned) {
  for (int64_t r = r0; r < r1; r++) {
    const float *src = s + gather_idx[r] * GATHER_ROW;
    float *dst = d + r * GATHER_ROW;
    if (!tuned) {
      memcpy(dst, src, sizeof(float) * GATHER_ROW);
      continue;
    }
    if (r + 3 < r1)
      for (int b = 0; b < GATHER_ROW * 4; b += 64)
        __builtin_prefetch((const char *)(s + gather_idx[r + 3] * GATHER_ROW) + b);
#if defined(__SSE2__)
    for (int i = 0; i < GATHER_ROW; i += 4)
      _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
#else
    memcpy(dst, src, sizeof(float) * GATHER_ROW);
#endif
  }
#if defined(__SSE2__)
  if (tuned) _mm_sfence();
#endif
}

static void *limit_worker(void *p) {
  limit_arg *a = p;
  int64_t n = a->hi - a->lo;
  switch (a->kind) {
  case K_MEMCPY: memcpy(a->a + a->lo, a->b + a->lo, sizeof(float) * (size_t)n); break;
  case K_COPY: copy_loop(a->a + a->lo, a->b + a->lo, n); break;
  case K_SUM: a->sink = sum_loop(a->b + a->lo, n, 0); break;
  case K_SUM_PREFETCH: a->sink = sum_loop(a->b + a->lo, n, 8192); break;
  case K_TRIAD: triad_loop(a->a + a->lo, a->b + a->lo, a->c + a->lo, n); break;
  case K_TRIAD_STREAM: triad_stream_loop(a->a + a->lo, a->b + a->lo, a->c + a->lo, n); break;
  case K_GATHER:
  case K_GATHER_STREAM:
    gather_loop(a->a, a->b, a->lo / GATHER_ROW, a->hi / GATHER_ROW, a->kind == K_GATHER_STREAM);
    break;
  }
  return NULL;
}

static double run_limit(limit_kind kind, float *a, float *b, float *c) {
  pthread_t th[64];
  limit_arg args[64];
  double t0 = bench_now();
  for (int i = 0; i < THREADS; i++) {
    int64_t rows = N / GATHER_ROW; /* split on whole rows, for the gathers */
    args[i] = (limit_arg){
        kind, a, b, c, rows * i / THREADS * GATHER_ROW, rows * (i + 1) / THREADS * GATHER_ROW, 0};
    pthread_create(&th[i], NULL, limit_worker, &args[i]);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  return bench_now() - t0;
}

static double limit_gbs(limit_kind kind, float *a, float *b, float *c, double bytes) {
  double t[64];
  run_limit(kind, a, b, c); /* warm-up */
  for (int r = 0; r < REPS; r++)
    t[r] = run_limit(kind, a, b, c);
  return bytes / bench_median(t, REPS) / 1e9;
}

/* Same page policy as the library's CPU allocations (transparent huge pages when allowed). */
static float *huge_alloc(int64_t n) {
  size_t bytes = (sizeof(float) * (size_t)n + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  float *p = aligned_alloc(2u << 20, bytes);
  if (p == NULL) exit(1);
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* ---- our operations ---- */

/* The limit buffers stay allocated: each case re-measures its limit interleaved with its own
 * runs (limit, case, limit, case, ...), so both see the same machine load (it is shared). */
static float *la, *lb, *lc;

static lt_context *ctx;

static void check(lt_status st, const char *what) {
  if (st != LT_OK) {
    fprintf(stderr, "%s failed: %s: %s\n", what, lt_status_string(st), lt_last_error());
    exit(1);
  }
}

/* One case's figures: median seconds of a plan execution, and the medians of its per-run
 * ratios to the limits measured just before that run (paired, so that both see the same load
 * from the machine's other tenants): `ratio` against the better of the plain loop and its tuned
 * partner, `ratio_loop` against the plain loop alone. */
typedef struct timing {
  double seconds, ratio, ratio_loop;
} timing;

static timing time_plan(lt_plan *plan, const lt_tensor *const *ins, int n_in, lt_tensor *out,
                        limit_kind kind, double limit_bytes, double case_bytes) {
  double t[64], ratio[64], ratio_loop[64];
  check(lt_plan_execute(plan, ins, n_in, NULL, 0, out), "execute"); /* warm-up, faults D in */
  for (int r = 0; r < REPS; r++) {
    double tc = run_limit(kind, la, lb, lc), tl = run_limit(partner_of(kind), la, lb, lc);
    tl = tc < tl ? tc : tl;
    double t0 = bench_now();
    check(lt_plan_execute(plan, ins, n_in, NULL, 0, out), "execute");
    t[r] = bench_now() - t0;
    double gbs = case_bytes / t[r];
    ratio[r] = gbs / (limit_bytes / tl);
    ratio_loop[r] = gbs / (limit_bytes / tc);
  }
  return (timing){bench_median(t, REPS), bench_median(ratio, REPS), bench_median(ratio_loop, REPS)};
}

typedef struct category {
  const char *name;
  double log_ratio_sum, min_ratio;
  int count;
} category;

/* LT_BENCH_ONLY=permutation|perm-odd|short-axis|nchw|reduction|binary|gather runs one category. */
static bool wanted(const char *cat) {
  const char *only = getenv("LT_BENCH_ONLY");
  return only == NULL || strcmp(only, cat) == 0;
}

static void report(category *cat, const char *name, const char *detail, double bytes, timing tm) {
  double gbs = bytes / tm.seconds / 1e9;
  printf("%-12s %-34s %8.2f GB/s  %5.2f of %s  (%4.2f of the plain loop)\n", cat->name, detail, gbs,
         tm.ratio, name, tm.ratio_loop);
  if (csv) fprintf(csv, "%s,%s,%.4f,%.4f\n", cat->name, detail, gbs, tm.ratio);
  cat->log_ratio_sum += log(tm.ratio);
  cat->min_ratio = cat->count == 0 || tm.ratio < cat->min_ratio ? tm.ratio : cat->min_ratio;
  cat->count++;
}

static void summary(const category *cat) {
  if (cat->count == 0) return;
  printf("%-12s geometric mean %.2f, minimum %.2f over %d cases\n", cat->name,
         exp(cat->log_ratio_sum / cat->count), cat->min_ratio, cat->count);
}

static void describe(char *buf, size_t n, int rank, const int64_t *shape, const int *p, int np) {
  int k = snprintf(buf, n, "(");
  for (int i = 0; i < rank; i++)
    k += snprintf(buf + k, n - (size_t)k, "%s%lld", i ? "," : "", (long long)shape[i]);
  k += snprintf(buf + k, n - (size_t)k, ") [");
  for (int i = 0; i < np; i++)
    k += snprintf(buf + k, n - (size_t)k, "%s%d", i ? "," : "", p[i]);
  snprintf(buf + k, n - (size_t)k, "]");
}

static lt_tensor *make(int rank, const int64_t *shape) {
  lt_tensor *t;
  check(lt_tensor_full(ctx, LT_F32, rank, shape, 1.0, &t), "full");
  return t;
}

static void bench_permutation(category *cat, int rank, const int64_t *shape, const int *perm) {
  if (!wanted(cat->name)) return;
  lt_tensor *a = make(rank, shape), *d;
  int64_t dshape[8];
  int32_t ma[8], md[8];
  for (int i = 0; i < rank; i++) {
    ma[i] = i;
    md[i] = perm[i];
    dshape[i] = shape[perm[i]];
  }
  d = make(rank, dshape);
  lt_plan *plan;
  check(lt_plan_permutation(a, ma, d, md, NULL, &plan), "plan_permutation");
  double bytes = 8.0 * (double)lt_tensor_numel(a);
  timing tm = time_plan(plan, (const lt_tensor *const *)&a, 1, d, K_COPY, 8.0 * (double)N, bytes);
  char detail[128];
  describe(detail, sizeof detail, rank, shape, perm, rank);
  report(cat, "copy", detail, bytes, tm);
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(d);
}

static void bench_reduction(category *cat, int rank, const int64_t *shape, const int *axes,
                            int n_axes) {
  if (!wanted(cat->name)) return;
  lt_tensor *a = make(rank, shape), *d;
  int64_t dshape[8];
  int32_t ma[8], md[8];
  int kept = 0;
  int64_t nout = 1;
  for (int i = 0; i < rank; i++) {
    ma[i] = i;
    bool red = false;
    for (int k = 0; k < n_axes; k++)
      red |= axes[k] == i;
    if (!red) {
      md[kept] = i;
      dshape[kept++] = shape[i];
      nout *= shape[i];
    }
  }
  d = make(kept, dshape);
  lt_plan *plan;
  check(lt_plan_reduction(a, ma, NULL, NULL, LT_REDUCE_SUM, d, md, NULL, &plan), "plan_reduction");
  double bytes = 4.0 * (double)(lt_tensor_numel(a) + nout);
  timing tm = time_plan(plan, (const lt_tensor *const *)&a, 1, d, K_SUM, 4.0 * (double)N, bytes);
  char detail[128];
  describe(detail, sizeof detail, rank, shape, axes, n_axes);
  report(cat, "read", detail, bytes, tm);
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(d);
}

/* D = take(A, INDEX, 0): rows of GATHER_ROW floats from random places (the limit loops' own
 * indices), bytes = rows read and written + the i64 index. */
static void bench_gather(category *cat) {
  if (!wanted(cat->name)) return;
  int64_t rows = N / GATHER_ROW, shape[2] = {rows, GATHER_ROW};
  lt_tensor *a = make(2, shape), *d = make(2, shape), *idx;
  check(lt_tensor_from_host(ctx, LT_I64, 1, &rows, NULL, gather_idx, &idx), "index");
  lt_plan *plan;
  check(lt_plan_take(a, 0, idx, d, NULL, &plan), "plan_take");
  const lt_tensor *ins[2] = {a, idx};
  double bytes = 8.0 * (double)(rows * GATHER_ROW) + 8.0 * (double)rows;
  timing tm = time_plan(plan, ins, 2, d, K_GATHER, bytes, bytes);
  char detail[128];
  snprintf(detail, sizeof detail, "take rows (%lld,%d) axis 0, random", (long long)rows,
           GATHER_ROW);
  report(cat, "random-row copy", detail, bytes, tm);
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(d);
  lt_tensor_destroy(idx);
}

/* D = A + B over a subset of A's modes (mb), A of rank 3 or 4: bytes = A + B + D. */
static void bench_binary(category *cat, int rank, const int64_t *shape, const int32_t *mb,
                         int rank_b, const char *label) {
  if (!wanted(cat->name)) return;
  int32_t m[4] = {0, 1, 2, 3};
  int64_t bshape[4];
  int64_t nb = 1;
  for (int i = 0; i < rank_b; i++)
    nb *= (bshape[i] = shape[mb[i]]);
  lt_tensor *a = make(rank, shape), *b = make(rank_b, bshape), *d = make(rank, shape);
  lt_plan *plan;
  check(lt_plan_binary(a, m, b, mb, LT_BINARY_ADD, d, m, NULL, &plan), "plan_binary");
  const lt_tensor *ins[2] = {a, b};
  double bytes = 4.0 * (double)(2 * lt_tensor_numel(a) + nb);
  timing tm = time_plan(plan, ins, 2, d, K_TRIAD, 12.0 * (double)N, bytes);
  char detail[128];
  int k = snprintf(detail, sizeof detail, "(");
  for (int i = 0; i < rank; i++)
    k += snprintf(detail + k, sizeof detail - (size_t)k, "%s%lld", i ? "," : "",
                  (long long)shape[i]);
  snprintf(detail + k, sizeof detail - (size_t)k, ") + %s", label);
  report(cat, "triad", detail, bytes, tm);
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_tensor_destroy(d);
}

int main(int argc, char **argv) {
  if (getenv("LT_BENCH_N")) N = strtoll(getenv("LT_BENCH_N"), NULL, 10);
  if (getenv("LT_BENCH_REPS")) REPS = atoi(getenv("LT_BENCH_REPS"));
  if (REPS < 1 || REPS > 64) REPS = 5;
  if (argc > 1 && argv[1][0] == '-') { /* an option, not a CSV path: say how to call */
    printf("usage: bench_ops [results.csv]\n(env: LT_BENCH_N elements, LT_BENCH_REPS runs, "
           "LT_BENCH_ONLY=permutation|perm-odd|short-axis|nchw|reduction|binary|gather)\n");
    return argv[1][1] == 'h' || strcmp(argv[1], "--help") == 0 ? 0 : 2;
  }
  if (argc > 1) csv = fopen(argv[1], "w");
  check(lt_context_create("cpu", &ctx), "context");
  THREADS = lt_context_num_threads(ctx);
  if (THREADS <= 0) {
    const char *env = getenv("LT_NUM_THREADS");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    THREADS = env ? atoi(env) : (int)cores;
  }
  if (THREADS < 1 || THREADS > 64) THREADS = 2;
  float *a = huge_alloc(N), *b = huge_alloc(N), *c = huge_alloc(N);
  for (int64_t i = 0; i < N; i++)
    a[i] = b[i] = c[i] = 1.0f;
  double bytes = 4.0 * (double)N;
  double mcpy = limit_gbs(K_MEMCPY, a, b, c, 2 * bytes);
  double cpy = limit_gbs(K_COPY, a, b, c, 2 * bytes);
  double rd = limit_gbs(K_SUM, a, b, c, bytes);
  double rd_pf = limit_gbs(K_SUM_PREFETCH, a, b, c, bytes);
  double triad = limit_gbs(K_TRIAD, a, b, c, 3 * bytes);
  double triad_nt = limit_gbs(K_TRIAD_STREAM, a, b, c, 3 * bytes);
  gather_idx = malloc(sizeof(int64_t) * (size_t)(N / GATHER_ROW));
  if (gather_idx == NULL) return 1;
  uint64_t state = 0x9e3779b97f4a7c15u; /* xorshift: the same indices every run */
  for (int64_t r = 0; r < N / GATHER_ROW; r++) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    gather_idx[r] = (int64_t)(state % (uint64_t)(N / GATHER_ROW));
  }
  double gbytes = 8.0 * (double)N + 8.0 * (double)(N / GATHER_ROW);
  double gather = limit_gbs(K_GATHER, a, b, c, gbytes);
  double gather_nt = limit_gbs(K_GATHER_STREAM, a, b, c, gbytes);
  la = a;
  lb = b;
  lc = c;
  printf("libtensor %s, %lld float32 elements, %d threads, median of %d runs\n", lt_version(),
         (long long)N, THREADS, REPS);
  printf("limits (GB/s, plain loop / tuned): copy %.2f / memcpy %.2f, read-only sum %.2f / "
         "prefetched %.2f, triad %.2f / streamed %.2f, random %d-byte rows %.2f / prefetched and "
         "streamed %.2f\n",
         cpy, mcpy, rd, rd_pf, triad, triad_nt, 4 * GATHER_ROW, gather, gather_nt);
  if (csv)
    fprintf(csv,
            "limit,memcpy,%.4f,1\nlimit,copy,%.4f,1\nlimit,sum,%.4f,1\nlimit,sum_prefetch,%.4f,1\n"
            "limit,triad,%.4f,1\nlimit,triad_stream,%.4f,1\nlimit,gather,%.4f,1\n"
            "limit,gather_stream,%.4f,1\n",
            mcpy, cpy, rd, rd_pf, triad, triad_nt, gather, gather_nt);

  category perm = {"permutation", 0, 0, 0};
  int64_t r = (int64_t)llround(sqrt((double)N));
  int64_t s2[2] = {r, N / r};
  int p2[2] = {1, 0};
  bench_permutation(&perm, 2, s2, p2);
  int64_t s3[3] = {N / (512 * 256), 256, 512};
  int p3[4][3] = {{2, 1, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}};
  for (int i = 0; i < 4; i++)
    bench_permutation(&perm, 3, s3, p3[i]);
  int64_t s4[4] = {N / (64 * 128 * 128), 64, 128, 128};
  int p4[3][4] = {{3, 2, 1, 0}, {0, 1, 3, 2}, {3, 0, 1, 2}};
  for (int i = 0; i < 3; i++)
    bench_permutation(&perm, 4, s4, p4[i]);
  int64_t s5[5] = {N / (32 * 32 * 32 * 64), 32, 32, 32, 64};
  int p5[3][5] = {{4, 3, 2, 1, 0}, {0, 1, 2, 4, 3}, {4, 0, 1, 2, 3}};
  for (int i = 0; i < 3; i++)
    bench_permutation(&perm, 5, s5, p5[i]);
  int64_t s6[6] = {N / (16 * 16 * 16 * 16 * 64), 16, 16, 16, 16, 64};
  int p6[3][6] = {{5, 4, 3, 2, 1, 0}, {0, 1, 2, 3, 5, 4}, {5, 0, 1, 2, 3, 4}};
  for (int i = 0; i < 3; i++)
    bench_permutation(&perm, 6, s6, p6[i]);

  /* Extents that are not powers of two: rows off the 64-byte grid on one side or both. */
  category odd = {"perm-odd", 0, 0, 0};
  int64_t o2[2] = {r - 1, r + 1};
  bench_permutation(&odd, 2, o2, p2);
  int64_t o3a[3] = {1000, 1000, N / 1000000}, o3b[3] = {N / (255 * 257), 255, 257};
  bench_permutation(&odd, 3, o3a, p3[0]);
  bench_permutation(&odd, 3, o3b, p3[1]);
  bench_permutation(&odd, 3, o3b, p3[2]);
  int64_t o3c[3] = {4096, N / (4096 * 3), 3}; /* channels last to channels first */
  bench_permutation(&odd, 3, o3c, p3[2]);

  category red = {"reduction", 0, 0, 0};
  int64_t r3[3] = {N / (512 * 512), 512, 512};
  int ax[7][3] = {{2}, {0}, {1}, {1, 2}, {0, 1}, {0, 2}, {0, 1, 2}};
  int nax[7] = {1, 1, 1, 2, 2, 2, 3};
  for (int i = 0; i < 7; i++)
    bench_reduction(&red, 3, r3, ax[i], nax[i]);

  category bin = {"binary", 0, 0, 0};
  int32_t full[3] = {0, 1, 2}, row[1] = {2}, col[2] = {0, 1}, mid[1] = {1};
  bench_binary(&bin, 3, r3, full, 3, "B(i,j,k)");
  bench_binary(&bin, 3, r3, row, 1, "B(k)");
  bench_binary(&bin, 3, r3, col, 2, "B(i,j)");
  bench_binary(&bin, 3, r3, mid, 1, "B(j)");

  /* Short axes (a few channels): summed over, summed along, broadcast along (B repeats along
   * the rows), held along (B(i,j): each value held for the 3 channels), kept (column sums). */
  category shrt = {"short-axis", 0, 0, 0};
  int64_t hwc[3] = {4096, N / (4096 * 3), 3}, chw[3] = {3, 4096, N / (4096 * 3)};
  int last[1] = {2}, first[1] = {0};
  int32_t chan[1] = {2};
  bench_reduction(&shrt, 3, hwc, last, 1);
  bench_reduction(&shrt, 3, chw, first, 1);
  bench_binary(&shrt, 3, hwc, chan, 1, "B(k)");
  bench_binary(&shrt, 3, hwc, col, 2, "B(i,j)");
  int64_t tall[2] = {N / 64, 64}; /* column sums of a tall matrix: a short kept axis */
  bench_reduction(&shrt, 2, tall, first, 1);
  int along[1] = {1}; /* its row sums: many short reduced rows */
  bench_reduction(&shrt, 2, tall, along, 1);

  /* Channels first (N, C, H, W): per-channel sums (batch statistics) and a per-channel bias. */
  category nchw = {"nchw", 0, 0, 0};
  int64_t s_nchw[4] = {N / (256 * 64 * 64), 256, 64, 64};
  int stats[3] = {0, 2, 3};
  int32_t channel[1] = {1};
  bench_reduction(&nchw, 4, s_nchw, stats, 3);
  bench_binary(&nchw, 4, s_nchw, channel, 1, "B(j)");

  /* A random row gather against the same gather as a plain loop: random 256-byte reads reach
   * about half a sequential copy's bandwidth, which no kernel changes. */
  category gat = {"gather", 0, 0, 0};
  bench_gather(&gat);

  summary(&perm);
  summary(&odd);
  summary(&shrt);
  summary(&nchw);
  summary(&red);
  summary(&bin);
  summary(&gat);
  if (csv) fclose(csv);
  free(gather_idx);
  free(a);
  free(b);
  free(c);
  lt_context_destroy(ctx);
  return 0;
}

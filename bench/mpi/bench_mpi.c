/* SPDX-License-Identifier: MIT */
/* libtensor_mpi benchmark (issue 24). Run: mpirun -np 4 --oversubscribe bench_mpi [n]
 *   1. SUMMA (lt_dist_contract, C = A B, n x n f64): bytes each rank received, against the
 *      volume SUMMA must move on that process grid, (M K (pc-1) + K N (pr-1)) / P elements per
 *      rank, and against the memory-independent lower bound of any parallel matrix product,
 *      3 (M N K / P)^(2/3) - (M K + K N + M N) / P elements (Ballard et al. 2012); once with
 *      A and B already in SUMMA's layout, once from 1-D layouts that must be redistributed.
 *      Time against the single-process contraction (rank 0 alone, the others waiting).
 *   2. Sliced einsum (lt_dist_einsum_sliced, a ring under a memory limit): time against the same
 *      slices run by one process (lt_plan_execute on rank 0).
 * Arguments: n (default 768) and the ring's extent (default 40).
 * Runs alternate, 5 repeats, medians and spreads (min-max) are printed with the load average.
 * The ranks share this machine's cores: on 2 cores, 4 ranks can at best run 2x faster. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_timing.h */
#include "bench_timing.h"
#include "tensor/dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPEATS 5

static int me, np;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    lt_status st_ = (call);                                                                        \
    if (st_ != LT_OK) {                                                                            \
      fprintf(stderr, "rank %d: %s: %s\n", me, #call, lt_last_error());                            \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static double load_average(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

static void report(const char *what, double *v, int n, const char *unit) {
  double lo = v[0], hi = v[0];
  for (int i = 1; i < n; i++)
    lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
  double med = bench_median(v, n);
  if (me == 0) printf("  %-46s median %9.4f%s (min %.4f, max %.4f)\n", what, med, unit, lo, hi);
}

static lt_dist_tensor *random_dist(lt_context *ctx, int64_t r, int64_t c, const int *grid) {
  int64_t shape[2] = {r, c};
  lt_dist_tensor *t;
  CHECK(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 2, shape, grid, NULL, &t));
  lt_tensor *loc = lt_dist_tensor_local(t);
  int64_t n = lt_tensor_numel(loc);
  double *p = NULL;
  CHECK(lt_tensor_host_pointer(loc, (void **)&p));
  for (int64_t i = 0; i < n; i++)
    p[i] = sin(0.37 * (double)(i + 1) + me);
  return t;
}

static void summa_bench(lt_context *ctx, int64_t n) {
  int g22[2] = {2, 2}, g41[2] = {4, 1}, g14[2] = {1, 4};
  int pr = np == 4 ? 2 : 1, pc = np / pr;
  double es = 8, mnk = (double)n * n * n, p = np;
  double grid_bound = es * ((double)n * n * (pc - 1) + (double)n * n * (pr - 1)) / p;
  double lower = es * (3 * pow(mnk / p, 2.0 / 3.0) - 3.0 * n * n / p);
  int32_t ma[2] = {0, 1}, mb[2] = {1, 2}, mc[2] = {0, 2};
  for (int layout = 0; layout < 2; layout++) {
    const int *ga = layout == 0 && np == 4 ? g22 : g41, *gb = layout == 0 && np == 4 ? g22 : g14;
    lt_dist_tensor *a = random_dist(ctx, n, n, ga), *b = random_dist(ctx, n, n, gb), *c = NULL;
    lt_dist_bytes_reset();
    CHECK(lt_dist_contract(a, ma, b, mb, 2, mc, &c));
    double mine = (double)lt_dist_bytes_received(), most = 0, sum = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
      printf("SUMMA %lldx%lld f64, operands on grids A %dx%d, B %dx%d%s:\n", (long long)n,
             (long long)n, ga[0], ga[1], gb[0], gb[1],
             layout == 0 ? " (SUMMA's own layout)" : " (redistributed first)");
      printf("  bytes received per rank: max %.0f, mean %.0f\n", most, sum / p);
      printf("  SUMMA volume for a %dx%d grid: %.0f  -> measured max / volume = %.3f\n", pr, pc,
             grid_bound, most / grid_bound);
      printf("  memory-independent lower bound: %.0f -> measured max / bound = %.3f\n", lower,
             most / lower);
    }
    lt_dist_tensor_destroy(c);
    /* time: distributed vs rank 0 alone on the whole matrices */
    lt_tensor *ga_ = NULL, *gb_ = NULL;
    CHECK(lt_dist_tensor_gather(a, 0, &ga_));
    CHECK(lt_dist_tensor_gather(b, 0, &gb_));
    double td[REPEATS], t1[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      CHECK(lt_dist_contract(a, ma, b, mb, 2, mc, &c));
      MPI_Barrier(MPI_COMM_WORLD);
      td[r] = MPI_Wtime() - t0;
      lt_dist_tensor_destroy(c);
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      if (me == 0) {
        lt_tensor *out = NULL;
        const lt_tensor *ins[2] = {ga_, gb_};
        CHECK(lt_einsum("ik,kj->ij", 2, ins, NULL, &out));
        lt_tensor_destroy(out);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      t1[r] = MPI_Wtime() - t0;
    }
    double ratio[REPEATS];
    for (int r = 0; r < REPEATS; r++)
      ratio[r] = td[r] / t1[r];
    report("lt_dist_contract (4 ranks)", td, REPEATS, " s");
    report("lt_einsum on rank 0 alone", t1, REPEATS, " s");
    report("ratio distributed / one process", ratio, REPEATS, "  ");
    if (me == 0) printf("  load average %.2f\n", load_average());
    lt_tensor_destroy(ga_);
    lt_tensor_destroy(gb_);
    lt_dist_tensor_destroy(a);
    lt_dist_tensor_destroy(b);
  }
}

static void sliced_bench(lt_context *ctx, int64_t e) {
  /* ring ab,bc,cd,da-> with extents e: intermediates of e^2..e^3, sliced under e^2 elements */
  int64_t s[2] = {e, e};
  lt_tensor *ins[4];
  for (int k = 0; k < 4; k++) {
    CHECK(lt_tensor_empty(ctx, LT_F64, 2, s, &ins[k]));
    double *p = NULL;
    CHECK(lt_tensor_host_pointer(ins[k], (void **)&p));
    for (int64_t i = 0; i < e * e; i++)
      p[i] = cos(0.11 * (double)i + k);
  }
  const lt_tensor *const *in = (const lt_tensor *const *)ins;
  const char *expr = "abc,cd,de,eab->";
  lt_tensor *in3[4];
  int64_t s3[3] = {e, e, e};
  CHECK(lt_tensor_empty(ctx, LT_F64, 3, s3, &in3[0]));
  CHECK(lt_tensor_empty(ctx, LT_F64, 3, s3, &in3[3]));
  in3[1] = ins[1], in3[2] = ins[2];
  for (int k = 0; k < 4; k += 3) {
    double *p = NULL;
    CHECK(lt_tensor_host_pointer(in3[k], (void **)&p));
    for (int64_t i = 0; i < e * e * e; i++)
      p[i] = sin(0.07 * (double)i + k);
  }
  (void)in;
  const lt_tensor *const *op = (const lt_tensor *const *)in3;
  lt_plan_options *o;
  CHECK(lt_plan_options_create(&o));
  /* the best path keeps e^2 intermediates: a quarter of that slices a label several ways */
  CHECK(lt_plan_options_set_memory_limit(o, 8 * e * e / 4));
  lt_plan *plan;
  CHECK(lt_plan_einsum(expr, 4, op, NULL, o, &plan));
  double slices = 0;
  CHECK(lt_plan_einsum_slicing(plan, NULL, NULL, 0, &slices, NULL));
  lt_tensor *d;
  CHECK(lt_plan_create_output(plan, &d));
  double td[REPEATS], t1[REPEATS], ratio[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    lt_tensor *out = NULL;
    CHECK(lt_dist_einsum_sliced(MPI_COMM_WORLD, expr, 4, op, o, &out));
    MPI_Barrier(MPI_COMM_WORLD);
    td[r] = MPI_Wtime() - t0;
    lt_tensor_destroy(out);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (me == 0) CHECK(lt_plan_execute(plan, op, 4, NULL, 0, d));
    MPI_Barrier(MPI_COMM_WORLD);
    t1[r] = MPI_Wtime() - t0;
    ratio[r] = td[r] / t1[r];
  }
  if (me == 0)
    printf("sliced einsum %s, extents %lld, %.0f slices over %d ranks:\n", expr, (long long)e,
           slices, np);
  report("lt_dist_einsum_sliced (plan + run + allreduce)", td, REPEATS, " s");
  report("the same slices in one process", t1, REPEATS, " s");
  report("ratio distributed / one process", ratio, REPEATS, "  ");
  if (me == 0) printf("  load average %.2f\n", load_average());
  lt_tensor_destroy(d);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(o);
  lt_tensor_destroy(in3[0]);
  lt_tensor_destroy(in3[3]);
  for (int k = 0; k < 4; k++)
    lt_tensor_destroy(ins[k]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int64_t n = argc > 1 ? atoll(argv[1]) : 768;
  lt_context *ctx;
  CHECK(lt_context_create("cpu", &ctx));
  if (me == 0) printf("bench_mpi: %d ranks, load average %.2f\n", np, load_average());
  summa_bench(ctx, n);
  sliced_bench(ctx, argc > 2 ? atoll(argv[2]) : 40);
  lt_context_destroy(ctx);
  MPI_Finalize();
  return 0;
}

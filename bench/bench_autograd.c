/* SPDX-License-Identifier: MIT */
/* Autograd costs, as ratios to limits measured in the same run:
 *  - one training step (forward, softmax cross-entropy, backward, Adam) of a 784-256-10 MLP at
 *    batch 128 in f32, against the machine's f32 FMA peak (bench_peak.h);
 *  - backward / forward time of einsum for TCCG-style pair contractions (aim <= 2.2);
 *  - memory a 20-op elementwise chain keeps for backward.
 * `bench_autograd --step` prints only the step's median milliseconds (bench_autograd.py runs it
 * beside PyTorch and NumPy), `--ops` the medians of the step's phases (forward GEMMs, bias adds,
 * ReLU, loss, backward, Adam). LT_BENCH_QUICK=1 shrinks the repetitions. */
#define _POSIX_C_SOURCE 200809L
#include "bench_peak.h"
#include "bench_timing.h"
#include "tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    lt_status st_ = (call);                                                                        \
    if (st_ != LT_OK) {                                                                            \
      fprintf(stderr, "%s: %s\n", #call, lt_last_error());                                         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static lt_tensor *rnd(lt_context *ctx, int rank, const int64_t *shape, double scale) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= shape[i];
  float *h = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    h[i] = (float)(scale * ((double)rand() / RAND_MAX - 0.5));
  lt_tensor *t;
  CHECK(lt_tensor_from_host(ctx, LT_F32, rank, shape, NULL, h, &t));
  free(h);
  return t;
}

static void destroy_all(lt_tensor **ts, int n) {
  for (int i = 0; i < n; i++)
    lt_tensor_destroy(ts[i]);
}

typedef struct mlp {
  lt_context *ctx;
  lt_tape *tape;
  lt_optimizer *opt;
  lt_tensor *x, *onehot, *p[4];
} mlp;

/* The step's phases, timed by `--ops` (bench_autograd --ops prints their medians). */
enum { PH_GEMM1, PH_BIAS1, PH_RELU, PH_GEMM2, PH_BIAS2, PH_LOSS, PH_BACKWARD, PH_ADAM, PH_N };
static const char *const phase_names[PH_N] = {"forward 128x784 @ 784x256",
                                              "bias add 1",
                                              "relu",
                                              "forward 128x256 @ 256x10",
                                              "bias add 2",
                                              "log_softmax cross-entropy",
                                              "backward (all)",
                                              "Adam, zero_grad, clear"};

/* One step; `ph` (NULL: not timed) receives each phase's seconds. */
static void mlp_step(mlp *m, double *ph) {
  lt_tape *t = m->tape;
  lt_tensor *h, *hb, *a, *z, *zb, *ls, *picked, *loss;
  double t0 = ph ? bench_now() : 0.0;
#define PHASE(i)                                                                                   \
  do {                                                                                             \
    if (ph) {                                                                                      \
      double t1_ = bench_now();                                                                    \
      ph[i] = t1_ - t0;                                                                            \
      t0 = t1_;                                                                                    \
    }                                                                                              \
  } while (0)
  const lt_tensor *in1[2] = {m->x, m->p[0]};
  CHECK(lt_ad_einsum(t, "bi,ih->bh", 2, in1, &h));
  PHASE(PH_GEMM1);
  CHECK(lt_ad_binary(t, LT_BINARY_ADD, h, m->p[1], &hb));
  PHASE(PH_BIAS1);
  CHECK(lt_ad_unary(t, LT_UNARY_RELU, hb, &a));
  PHASE(PH_RELU);
  const lt_tensor *in2[2] = {a, m->p[2]};
  CHECK(lt_ad_einsum(t, "bh,hc->bc", 2, in2, &z));
  PHASE(PH_GEMM2);
  CHECK(lt_ad_binary(t, LT_BINARY_ADD, z, m->p[3], &zb));
  PHASE(PH_BIAS2);
  /* mean cross-entropy as examples/mlp.c computes it: sum(log_softmax(zb) * -onehot / B) */
  const int ax = 1;
  CHECK(lt_ad_log_softmax(t, zb, 1, &ax, &ls));
  CHECK(lt_ad_binary(t, LT_BINARY_MUL, ls, m->onehot, &picked));
  CHECK(lt_ad_reduce(t, LT_REDUCE_SUM, picked, -1, NULL, false, &loss));
  PHASE(PH_LOSS);
  CHECK(lt_tape_backward(t, loss, NULL, 0));
  PHASE(PH_BACKWARD);
  CHECK(lt_optim_step(m->opt));
  CHECK(lt_optim_zero_grad(m->opt));
  CHECK(lt_tape_clear(t));
  PHASE(PH_ADAM);
#undef PHASE
  lt_tensor *all[] = {h, hb, a, z, zb, ls, picked, loss};
  destroy_all(all, 8);
}

/* Median milliseconds of a step; with `ops`, also each phase's median, printed. */
static double step_ms(lt_context *ctx, int reps, bool ops) {
  mlp m = {.ctx = ctx};
  const int64_t sx[2] = {128, 784}, s1[2] = {784, 256}, b1[1] = {256}, s2[2] = {256, 10},
                b2[1] = {10}, sy[2] = {128, 10};
  m.x = rnd(ctx, 2, sx, 2.0);
  float *oh = calloc(128 * 10, sizeof(float));
  for (int i = 0; i < 128; i++)
    oh[i * 10 + i % 10] = -1.0f / 128; /* -onehot / B: the loss's weights */
  CHECK(lt_tensor_from_host(ctx, LT_F32, 2, sy, NULL, oh, &m.onehot));
  free(oh);
  m.p[0] = rnd(ctx, 2, s1, 0.1);
  m.p[1] = rnd(ctx, 1, b1, 0.1);
  m.p[2] = rnd(ctx, 2, s2, 0.1);
  m.p[3] = rnd(ctx, 1, b2, 0.1);
  CHECK(lt_tape_create(ctx, &m.tape));
  for (int k = 0; k < 4; k++)
    CHECK(lt_tape_requires_grad(m.tape, m.p[k], true));
  CHECK(lt_optim_create(m.tape, LT_OPTIM_ADAM, 4, m.p, &m.opt));
  /* Warm-up: plans, caches, optimiser state, and the first 0.3 s of the process, during which
   * OpenBLAS's threads, started when the library loads, spin before they sleep (2^28 cycles,
   * ~0.1 s; libtensor calls OpenBLAS single-threaded, but its spinning workers take a core from
   * our pool until they time out). A steady training loop never sees them. */
  double warm_start = bench_now();
  for (int w = 0; w < 2 || bench_now() - warm_start < 0.3; w++)
    mlp_step(&m, NULL);
  double *t = malloc(sizeof(double) * (size_t)reps * (PH_N + 1));
  for (int r = 0; r < reps; r++) {
    double ph[PH_N], t0 = bench_now();
    mlp_step(&m, ops ? ph : NULL);
    t[r] = bench_now() - t0;
    for (int i = 0; ops && i < PH_N; i++)
      t[(size_t)reps * (size_t)(i + 1) + (size_t)r] = ph[i];
  }
  double med = bench_median(t, reps);
  for (int i = 0; ops && i < PH_N; i++)
    printf("  %-28s %8.4f ms (median of %d)\n", phase_names[i],
           bench_median(t + (size_t)reps * (size_t)(i + 1), reps) * 1e3, reps);
  free(t);
  lt_optim_destroy(m.opt);
  lt_tape_destroy(m.tape);
  destroy_all(m.p, 4);
  lt_tensor_destroy(m.x);
  lt_tensor_destroy(m.onehot);
  return med * 1e3;
}

/* Median seconds of forward and of backward (both operands' gradients) of one pair einsum. */
static void einsum_ratio(lt_context *ctx, const char *expr, int ra, const int64_t *sa, int rb,
                         const int64_t *sb, int reps) {
  lt_tensor *a = rnd(ctx, ra, sa, 1.0), *b = rnd(ctx, rb, sb, 1.0);
  const lt_tensor *in[2] = {a, b};
  lt_tape *tape;
  CHECK(lt_tape_create(ctx, &tape));
  CHECK(lt_tape_requires_grad(tape, a, true));
  CHECK(lt_tape_requires_grad(tape, b, true));
  double *tf = malloc(sizeof(double) * (size_t)reps), *tb = malloc(sizeof(double) * (size_t)reps);
  lt_tensor *g = NULL;
  for (int r = -1; r < reps; r++) {
    lt_tensor *y;
    double t0 = bench_now();
    CHECK(lt_ad_einsum(tape, expr, 2, in, &y));
    double t1 = bench_now();
    if (g == NULL) g = rnd(ctx, lt_tensor_rank(y), lt_tensor_shape(y), 1.0);
    double t2 = bench_now();
    CHECK(lt_tape_backward(tape, y, g, 0));
    double t3 = bench_now();
    CHECK(lt_tape_zero_grads(tape));
    CHECK(lt_tape_clear(tape));
    lt_tensor_destroy(y);
    if (r >= 0) {
      tf[r] = t1 - t0;
      tb[r] = t3 - t2;
    }
  }
  double f = bench_median(tf, reps), bw = bench_median(tb, reps);
  printf("  %-22s forward %8.3f ms  backward %8.3f ms  backward/forward %.2f (aim <= 2.2)\n", expr,
         f * 1e3, bw * 1e3, bw / f);
  free(tf);
  free(tb);
  lt_tensor_destroy(g);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_tape_destroy(tape);
}

int main(int argc, char **argv) {
  bool quick = getenv("LT_BENCH_QUICK") != NULL;
  lt_context *ctx;
  CHECK(lt_context_create("cpu", &ctx));
  if (argc > 1 && strcmp(argv[1], "--ops") == 0) { /* where a step's time goes */
    printf("MLP step, medians per phase:\n");
    printf("  %-28s %8.4f ms\n", "whole step", step_ms(ctx, quick ? 5 : 100, true));
    lt_context_destroy(ctx);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "--step") == 0) {
    printf("%.4f\n", step_ms(ctx, quick ? 5 : 30, false));
    lt_context_destroy(ctx);
    return 0;
  }
  int threads = lt_context_num_threads(ctx);
  double peak = lt_fma_peak_gflops(threads);
  double ms = step_ms(ctx, quick ? 5 : 30, false);
  /* The GEMM flops the step does: forward and weight gradients of both layers, the input
   * gradient of layer 2 only (the data needs none), as bench_autograd.py's limit counts them. */
  double flops = 2.0 * 128.0 * (2.0 * 784.0 * 256.0 + 3.0 * 256.0 * 10.0);
  printf("MLP 784-256-10, batch 128, f32, Adam: %.3f ms per step = %.1f GFLOP/s = %.3f of the "
         "f32 FMA peak (%.0f GFLOP/s, %d threads)\n",
         ms, flops / ms * 1e-6, flops / ms * 1e-6 / peak, peak, threads);
  printf("einsum backward/forward (TCCG-style pair contractions, f32):\n");
  int reps = quick ? 3 : 15;
  const int64_t a1[3] = {96, 64, 96}, b1[3] = {64, 96, 96};
  einsum_ratio(ctx, "abc,bda->dc", 3, a1, 3, b1, reps);
  const int64_t a2[4] = {48, 32, 48, 32}, b2[2] = {64, 48};
  einsum_ratio(ctx, "abcd,ea->ebcd", 4, a2, 2, b2, reps);
  const int64_t a3[2] = {256, 256}, b3[3] = {64, 256, 64};
  einsum_ratio(ctx, "ab,cad->dcb", 2, a3, 3, b3, reps);
  const int64_t a4[3] = {512, 512, 8}, b4[2] = {512, 512};
  einsum_ratio(ctx, "abc,ad->bcd", 3, a4, 2, b4, reps);
  /* memory: a 20-op chain of elementwise ops keeps one tensor per op */
  lt_tape *tape;
  CHECK(lt_tape_create(ctx, &tape));
  const int64_t sc[2] = {256, 256};
  lt_tensor *x = rnd(ctx, 2, sc, 1.0), *cur;
  CHECK(lt_tape_requires_grad(tape, x, true));
  CHECK(lt_ad_unary(tape, LT_UNARY_TANH, x, &cur));
  static const lt_unary_op chain[3] = {LT_UNARY_SIN, LT_UNARY_EXP, LT_UNARY_SIGMOID};
  for (int i = 1; i < 20; i++) {
    lt_tensor *next;
    CHECK(lt_ad_unary(tape, chain[i % 3], cur, &next));
    lt_tensor_destroy(cur);
    cur = next;
  }
  int64_t count;
  size_t bytes;
  CHECK(lt_tape_saved_count(tape, &count, &bytes));
  printf("memory: a chain of 20 elementwise ops (tanh, sin, exp, sigmoid) on 256x256 f32 keeps "
         "%lld tensors for backward, %.2f MB = %.2f tensors of the chain's size per op\n",
         (long long)count, (double)bytes / 1e6, (double)bytes / (256.0 * 256 * 4) / 20.0);
  lt_tensor_destroy(cur);
  lt_tensor_destroy(x);
  lt_tape_destroy(tape);
  lt_context_destroy(ctx);
  return 0;
}

/* SPDX-License-Identifier: MIT */
/* Two builds of libtensor side by side in one process: `ab_builds A.so B.so [reps]` loads both
 * (dlopen with RTLD_LOCAL | RTLD_DEEPBIND, so each resolves its own symbols), runs the same
 * cases through each's public API on the same inputs, alternating A and B rep by rep so that
 * both see the same machine state, and prints the median time of each and B/A speed.
 *
 * For refactors and tuning: "did this change lose speed anywhere?". LT_AB_ONLY=text runs only
 * the cases whose name contains the text. LT_AB_PAUSE_MS=ms sleeps that long before each timed
 * sample and LT_AB_CALLS=n times n calls per sample (their mean): with both, each sample is the
 * first n calls after an idle pause, the pattern of issue 25, rather than a call in a loop. It is
 * not run by `tensor bench` (it needs two libraries); see the README's "Where the numbers stand".
 */
#define _GNU_SOURCE
#include "bench_timing.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lt_context lt_context;
typedef struct lt_tensor lt_tensor;
typedef struct lt_plan lt_plan;
typedef int status;

/* The public calls the cases use, resolved in one library. */
typedef struct api {
  void *lib;
  status (*context_create)(const char *, lt_context **);
  void (*context_destroy)(lt_context *);
  status (*from_host)(lt_context *, int, int, const int64_t *, const int64_t *, const void *,
                      lt_tensor **);
  status (*create_output)(const lt_plan *, lt_tensor **);
  void (*tensor_destroy)(lt_tensor *);
  status (*view_permute)(const lt_tensor *, const int *, lt_tensor **);
  status (*plan_einsum)(const char *, int, const lt_tensor *const *, const lt_tensor *,
                        const void *, lt_plan **);
  status (*plan_execute)(const lt_plan *, const lt_tensor *const *, int, const double *, int,
                         lt_tensor *);
  void (*plan_destroy)(lt_plan *);
  const char *(*last_error)(void);
} api;

static void *need(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (f == NULL) {
    fprintf(stderr, "ab_builds: the library lacks %s\n", name);
    exit(2);
  }
  return f;
}

static void load(api *a, const char *path) {
  a->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (a->lib == NULL) {
    fprintf(stderr, "ab_builds: %s\n", dlerror());
    exit(2);
  }
  *(void **)&a->context_create = need(a->lib, "lt_context_create");
  *(void **)&a->context_destroy = need(a->lib, "lt_context_destroy");
  *(void **)&a->from_host = need(a->lib, "lt_tensor_from_host");
  *(void **)&a->create_output = need(a->lib, "lt_plan_create_output");
  *(void **)&a->tensor_destroy = need(a->lib, "lt_tensor_destroy");
  *(void **)&a->view_permute = need(a->lib, "lt_view_permute");
  *(void **)&a->plan_einsum = need(a->lib, "lt_plan_einsum");
  *(void **)&a->plan_execute = need(a->lib, "lt_plan_execute");
  *(void **)&a->plan_destroy = need(a->lib, "lt_plan_destroy");
  *(void **)&a->last_error = need(a->lib, "lt_last_error");
}

/* An einsum over f32 operands of the given shapes; `perm0` (if set) makes operand 0 a
 * permuted view, for layouts other than C order. */
typedef struct bench_case {
  const char *name, *expr;
  int n;
  int rank[2];
  int64_t shape[2][4];
  int perm0[4];
  int calls; /* executions timed together (small cases) */
} bench_case;

static const bench_case cases[] = {
    {"transpose 8192^2", "ab->ba", 1, {2}, {{8192, 8192}}, {0}, 1},
    {"permute (512,256,512)->cab", "abc->cab", 1, {3}, {{512, 256, 512}}, {0}, 1},
    {"permute (64,64,128,128)->dabc", "abcd->dabc", 1, {4}, {{64, 64, 128, 128}}, {0}, 1},
    /* TCCG's efbad -> abdef with its mode pairs merged: rows off and on the line grid */
    {"permute (1247,29,1247)->bca", "abc->bca", 1, {3}, {{1247, 29, 1247}}, {0}, 1},
    {"permute (1248,29,1247)->bca", "abc->bca", 1, {3}, {{1248, 29, 1247}}, {0}, 1},
    {"sum rows (4096,4096)", "ab->a", 1, {2}, {{4096, 4096}}, {0}, 1},
    {"sum cols (4096,4096)", "ab->b", 1, {2}, {{4096, 4096}}, {0}, 1},
    {"sum (1048576,64) rows", "ab->a", 1, {2}, {{1048576, 64}}, {0}, 1},
    {"sum (256,512,512) over 0,2", "abc->b", 1, {3}, {{256, 512, 512}}, {0}, 1},
    {"matmul 512^3", "ij,jk->ik", 2, {2, 2}, {{512, 512}, {512, 512}}, {0}, 1},
    {"matmul 1024^3", "ij,jk->ik", 2, {2, 2}, {{1024, 1024}, {1024, 1024}}, {0}, 1},
    {"matmul A^T 1024^3", "ij,jk->ik", 2, {2, 2}, {{1024, 1024}, {1024, 1024}}, {1, 0}, 1},
    {"batched 64x128^3", "bij,bjk->bik", 2, {3, 3}, {{64, 128, 128}, {64, 128, 128}}, {0}, 1},
    {"abc,bd->dac (256,64,256)x(64,256)",
     "abc,bd->dac",
     2,
     {3, 2},
     {{256, 64, 256}, {64, 256}},
     {0},
     1},
    /* the weight gradient of abcd,ea->ebcd (bench_autograd): C 64 x 48, k = 49152 */
    {"weight grad ebcd,abcd->ea k=49152",
     "ebcd,abcd->ea",
     2,
     {4, 4},
     {{64, 32, 48, 32}, {48, 32, 48, 32}},
     {0},
     1},
    {"long k 16x16 k=65536", "ik,jk->ij", 2, {2, 2}, {{16, 65536}, {16, 65536}}, {0}, 1},
    {"long k 128x64 k=8192", "ik,jk->ij", 2, {2, 2}, {{128, 8192}, {64, 8192}}, {0}, 1},
    {"long k 64x64 k=8192", "ik,jk->ij", 2, {2, 2}, {{64, 8192}, {64, 8192}}, {0}, 1},
    {"long k 1x64 k=65536", "ik,jk->ij", 2, {2, 2}, {{1, 65536}, {64, 65536}}, {0}, 1},
    {"skinny k=32 (1600000,32)x(32,20)", "ik,kj->ij", 2, {2, 2}, {{1600000, 32}, {32, 20}}, {0}, 1},
    {"plan call 4x4 matmul (x1000)", "ij,jk->ik", 2, {2, 2}, {{4, 4}, {4, 4}}, {0}, 1000},
};

typedef struct prepared {
  lt_context *ctx;
  lt_tensor *in[2], *view, *out;
  lt_plan *plan;
} prepared;

static int64_t numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= shape[i];
  return n;
}

static void prepare(const api *a, const bench_case *c, float *const *data, prepared *p) {
  memset(p, 0, sizeof *p);
  if (a->context_create("cpu", &p->ctx) != 0) goto fail;
  for (int k = 0; k < c->n; k++)
    if (a->from_host(p->ctx, 3 /* LT_F32 */, c->rank[k], c->shape[k], NULL, data[k], &p->in[k]))
      goto fail;
  const lt_tensor *ins[2] = {p->in[0], p->in[1]};
  if (c->perm0[0] || c->perm0[1]) {
    if (a->view_permute(p->in[0], c->perm0, &p->view)) goto fail;
    ins[0] = p->view;
  }
  if (a->plan_einsum(c->expr, c->n, ins, NULL, NULL, &p->plan)) goto fail;
  return;
fail:
  fprintf(stderr, "ab_builds: %s: %s\n", c->name, a->last_error());
  exit(1);
}

static double run(const api *a, const bench_case *c, prepared *p, int calls, double pause) {
  const lt_tensor *ins[2] = {p->view ? p->view : p->in[0], p->in[1]};
  if (pause > 0) bench_sleep(pause);
  double t0 = bench_now();
  for (int i = 0; i < calls; i++)
    if (a->plan_execute(p->plan, ins, c->n, NULL, 0, p->out)) {
      fprintf(stderr, "ab_builds: %s: %s\n", c->name, a->last_error());
      exit(1);
    }
  return (bench_now() - t0) / calls;
}

static void release(const api *a, prepared *p) {
  a->plan_destroy(p->plan);
  a->tensor_destroy(p->out);
  a->tensor_destroy(p->view);
  a->tensor_destroy(p->in[0]);
  a->tensor_destroy(p->in[1]);
  a->context_destroy(p->ctx);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ab_builds A/libtensor.so B/libtensor.so [reps]\n");
    return 2;
  }
  int reps = argc > 3 ? atoi(argv[3]) : 7;
  if (reps < 1 || reps > 101) reps = 7;
  api lib[2];
  load(&lib[0], argv[1]);
  load(&lib[1], argv[2]);
  printf("A = %s\nB = %s\n%d alternating reps each, medians\n\n", argv[1], argv[2], reps);
  printf("%-38s %12s %12s %8s\n", "case", "A", "B", "B/A speed");
  double log_sum = 0, worst = 1e9;
  int ran = 0;
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  const char *only = getenv("LT_AB_ONLY"); /* cases whose name holds it, when set */
  double pause = getenv("LT_AB_PAUSE_MS") ? 1e-3 * atof(getenv("LT_AB_PAUSE_MS")) : 0;
  int calls = getenv("LT_AB_CALLS") ? atoi(getenv("LT_AB_CALLS")) : 0;
  if (pause > 0)
    printf("each sample: the first %d call(s) after a %.0f ms pause\n\n", calls ? calls : 1,
           pause * 1e3);
  for (int ci = 0; ci < ncase; ci++) {
    const bench_case *c = &cases[ci];
    if (only && !strstr(c->name, only)) continue;
    float *data[2] = {NULL, NULL};
    for (int k = 0; k < c->n; k++) {
      int64_t n = numel(c->rank[k], c->shape[k]);
      data[k] = malloc(sizeof(float) * (size_t)n);
      for (int64_t i = 0; i < n; i++)
        data[k][i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    }
    prepared p[2];
    double t[2][101];
    for (int l = 0; l < 2; l++) {
      prepare(&lib[l], c, data, &p[l]);
      if (lib[l].create_output(p[l].plan, &p[l].out)) {
        fprintf(stderr, "ab_builds: output: %s\n", lib[l].last_error());
        return 1;
      }
      run(&lib[l], c, &p[l], c->calls, 0); /* warm-up: workspace, threads, pages */
    }
    for (int r = 0; r < reps; r++) /* A first on even reps, B first on odd ones */
      for (int i = 0; i < 2; i++) {
        int l = r % 2 ? 1 - i : i;
        t[l][r] = run(&lib[l], c, &p[l], calls ? calls : c->calls, pause);
      }
    double ma = bench_median(t[0], reps), mb = bench_median(t[1], reps), speed = ma / mb;
    printf("%-38s %10.3f us %10.3f us %8.3f\n", c->name, ma * 1e6, mb * 1e6, speed);
    log_sum += log(speed), ran++;
    if (speed < worst) worst = speed;
    for (int l = 0; l < 2; l++)
      release(&lib[l], &p[l]);
    free(data[0]);
    free(data[1]);
  }
  printf("\ngeometric mean B/A speed %.3f, lowest %.3f\n", exp(log_sum / (ran ? ran : 1)), worst);
  return 0;
}

/* SPDX-License-Identifier: MIT */
/* A 2-layer MLP (ReLU, softmax cross-entropy, Adam) trained in plain C through libtensor's
 * gradient tape, on three interleaved spirals generated here or on X.npy / y.npy (rows of
 * features, integer or float class labels) given on the command line.
 *
 *   mlp [--epochs N] [--hidden H] [--lr LR] [--seed S] [--min-accuracy A] [X.npy y.npy]
 *
 * Prints the loss per epoch on a progress line and the test accuracy (a held-out fifth of the
 * data); exits 1 when the accuracy is below --min-accuracy. */
#include "tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    lt_status st_ = (call);                                                                        \
    if (st_ != LT_OK) {                                                                            \
      fprintf(stderr, "mlp: %s failed: %s (%s)\n", #call, lt_status_string(st_), lt_last_error()); \
      exit(2);                                                                                     \
    }                                                                                              \
  } while (0)

static uint64_t rng_state;
static double uniform(void) { /* xorshift64*: reproducible on every platform */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}
static double normal(void) {
  double u = uniform(), v = uniform();
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

/* n points per class on `classes` interleaved spirals (CS231n's construction). */
static void spirals(int n, int classes, float *x, int64_t *y) {
  for (int c = 0; c < classes; c++)
    for (int i = 0; i < n; i++) {
      double r = (double)i / (n - 1), t = c * 4.0 + r * 4.0 + normal() * 0.1;
      x[2 * (c * n + i)] = (float)(r * sin(t));
      x[2 * (c * n + i) + 1] = (float)(r * cos(t));
      y[c * n + i] = c;
    }
}

static void destroy_all(lt_tensor **ts, int n) {
  for (int i = 0; i < n; i++)
    lt_tensor_destroy(ts[i]);
}

/* Mean softmax cross-entropy of logits z [B, C], recorded on the tape, as sum(log_softmax(z) *
 * w) with w = -onehot / B (made once): three recorded ops, where the log-sum-exp written out
 * (max, subtract, exp, sum, log, pick, mean) took nine, each a pass and a backward rule of its
 * own, which cost more than the layers' GEMMs outside them in a 784-256-10 step. */
static lt_tensor *cross_entropy(lt_tape *tape, const lt_tensor *z, const lt_tensor *w) {
  const int ax = 1;
  lt_tensor *ls, *picked, *loss;
  CHECK(lt_ad_log_softmax(tape, z, 1, &ax, &ls));
  CHECK(lt_ad_binary(tape, LT_BINARY_MUL, ls, w, &picked));
  CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, picked, -1, NULL, false, &loss));
  lt_tensor *tmp[] = {ls, picked};
  destroy_all(tmp, 2);
  return loss;
}

/* logits = relu(x W1 + b1) W2 + b2 */
static lt_tensor *forward(lt_tape *tape, const lt_tensor *x, lt_tensor *const *p) {
  lt_tensor *h, *hb, *a, *z, *zb;
  const lt_tensor *in1[2] = {x, p[0]};
  CHECK(lt_ad_einsum(tape, "bi,ih->bh", 2, in1, &h));
  CHECK(lt_ad_binary(tape, LT_BINARY_ADD, h, p[1], &hb));
  CHECK(lt_ad_unary(tape, LT_UNARY_RELU, hb, &a));
  const lt_tensor *in2[2] = {a, p[2]};
  CHECK(lt_ad_einsum(tape, "bh,hc->bc", 2, in2, &z));
  CHECK(lt_ad_binary(tape, LT_BINARY_ADD, z, p[3], &zb));
  lt_tensor *tmp[] = {h, hb, a, z};
  destroy_all(tmp, 4);
  return zb;
}

static double accuracy(const lt_tensor *x, const int64_t *y, int64_t n, lt_tensor *const *p) {
  lt_tensor *z = forward(NULL, x, p), *am;
  CHECK(lt_argmax(z, 1, &am));
  int64_t *pred = malloc(sizeof(int64_t) * (size_t)n);
  CHECK(lt_tensor_to_host(am, pred, sizeof(int64_t) * (size_t)n));
  int64_t ok = 0;
  for (int64_t i = 0; i < n; i++)
    ok += pred[i] == y[i];
  free(pred);
  lt_tensor_destroy(z);
  lt_tensor_destroy(am);
  return (double)ok / (double)n;
}

int main(int argc, char **argv) {
  int epochs = 200, hidden = 64;
  double lr = 0.02, min_acc = 0.0;
  rng_state = 42;
  const char *xpath = NULL, *ypath = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--epochs") && i + 1 < argc)
      epochs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--hidden") && i + 1 < argc)
      hidden = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--lr") && i + 1 < argc)
      lr = atof(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      rng_state = strtoull(argv[++i], NULL, 10) * 2654435761u + 1;
    else if (!strcmp(argv[i], "--min-accuracy") && i + 1 < argc)
      min_acc = atof(argv[++i]);
    else if (argv[i][0] != '-' && !xpath)
      xpath = argv[i];
    else if (argv[i][0] != '-' && !ypath)
      ypath = argv[i];
    else {
      fprintf(stderr, "usage: mlp [--epochs N] [--hidden H] [--lr LR] [--seed S] "
                      "[--min-accuracy A] [X.npy y.npy]\n");
      return 2;
    }
  }
  if (epochs < 1 || hidden < 1 || (xpath && !ypath)) {
    fprintf(stderr, "mlp: bad arguments (epochs and hidden >= 1; X.npy needs y.npy)\n");
    return 2;
  }
  lt_context *ctx;
  CHECK(lt_context_create(NULL, &ctx));
  /* the data: all rows, shuffled, then 80% train / 20% test */
  int64_t n, d, classes = 0;
  float *xs;
  int64_t *ys;
  if (xpath) {
    lt_tensor *tx, *ty, *tx32, *ty64;
    CHECK(lt_npy_load(ctx, xpath, &tx));
    CHECK(lt_npy_load(ctx, ypath, &ty));
    if (lt_tensor_rank(tx) != 2 || lt_tensor_rank(ty) != 1 ||
        lt_tensor_shape(ty)[0] != lt_tensor_shape(tx)[0] || lt_tensor_shape(tx)[0] < 5) {
      fprintf(stderr, "mlp: X must be [n, d] and y [n] with n >= 5\n");
      return 2;
    }
    n = lt_tensor_shape(tx)[0];
    d = lt_tensor_shape(tx)[1];
    CHECK(lt_tensor_contiguous(tx, LT_F32, &tx32));
    CHECK(lt_tensor_contiguous(ty, LT_I64, &ty64));
    xs = malloc(sizeof(float) * (size_t)(n * d));
    ys = malloc(sizeof(int64_t) * (size_t)n);
    CHECK(lt_tensor_to_host(tx32, xs, sizeof(float) * (size_t)(n * d)));
    CHECK(lt_tensor_to_host(ty64, ys, sizeof(int64_t) * (size_t)n));
    for (int64_t i = 0; i < n; i++) {
      if (ys[i] < 0 || ys[i] > 1000) {
        fprintf(stderr, "mlp: label %lld of row %lld is outside [0, 1000]\n", (long long)ys[i],
                (long long)i);
        return 2;
      }
      if (ys[i] + 1 > classes) classes = ys[i] + 1;
    }
    lt_tensor *tmp[] = {tx, ty, tx32, ty64};
    destroy_all(tmp, 4);
  } else {
    classes = 3;
    d = 2;
    n = 3 * 400;
    xs = malloc(sizeof(float) * (size_t)(n * d));
    ys = malloc(sizeof(int64_t) * (size_t)n);
    spirals(400, 3, xs, ys);
  }
  for (int64_t i = n - 1; i > 0; i--) { /* shuffle rows */
    int64_t j = (int64_t)(uniform() * (double)(i + 1));
    for (int64_t k = 0; k < d; k++) {
      float t = xs[i * d + k];
      xs[i * d + k] = xs[j * d + k];
      xs[j * d + k] = t;
    }
    int64_t t = ys[i];
    ys[i] = ys[j];
    ys[j] = t;
  }
  int64_t ntr = n * 4 / 5, nte = n - ntr;
  float *onehot = calloc((size_t)(ntr * classes), sizeof(float)); /* cross_entropy's w */
  for (int64_t i = 0; i < ntr; i++)
    onehot[i * classes + ys[i]] = (float)(-1.0 / (double)ntr);
  lt_tensor *xtr, *xte, *ytr;
  int64_t sh[2] = {ntr, d};
  CHECK(lt_tensor_from_host(ctx, LT_F32, 2, sh, NULL, xs, &xtr));
  sh[0] = nte;
  CHECK(lt_tensor_from_host(ctx, LT_F32, 2, sh, NULL, xs + ntr * d, &xte));
  sh[0] = ntr;
  sh[1] = classes;
  CHECK(lt_tensor_from_host(ctx, LT_F32, 2, sh, NULL, onehot, &ytr));
  /* parameters: He initialisation */
  int64_t shapes[4][2] = {{d, hidden}, {hidden, 0}, {hidden, classes}, {classes, 0}};
  lt_tensor *p[4];
  lt_tape *tape;
  CHECK(lt_tape_create(ctx, &tape));
  for (int k = 0; k < 4; k++) {
    int rank = shapes[k][1] ? 2 : 1;
    int64_t cnt = shapes[k][0] * (rank == 2 ? shapes[k][1] : 1);
    float *w = malloc(sizeof(float) * (size_t)cnt);
    double scale = rank == 2 ? sqrt(2.0 / (double)shapes[k][0]) : 0.0;
    for (int64_t i = 0; i < cnt; i++)
      w[i] = (float)(normal() * scale);
    CHECK(lt_tensor_from_host(ctx, LT_F32, rank, shapes[k], NULL, w, &p[k]));
    free(w);
    CHECK(lt_tape_requires_grad(tape, p[k], true));
  }
  lt_optimizer *opt;
  CHECK(lt_optim_create(tape, LT_OPTIM_ADAM, 4, p, &opt));
  CHECK(lt_optim_set(opt, LT_OPTIM_LR, lr));
  printf("mlp: %lld train / %lld test rows, %lld features, %lld classes, hidden %d, %d epochs\n",
         (long long)ntr, (long long)nte, (long long)d, (long long)classes, hidden, epochs);
  double loss_v = 0;
  bool tty = isatty(1);
  for (int ep = 1; ep <= epochs; ep++) {
    lt_tensor *z = forward(tape, xtr, p);
    lt_tensor *loss = cross_entropy(tape, z, ytr);
    CHECK(lt_tape_backward(tape, loss, NULL, 0));
    CHECK(lt_optim_step(opt));
    CHECK(lt_optim_zero_grad(opt));
    CHECK(lt_tape_clear(tape));
    CHECK(lt_tensor_get(loss, NULL, &loss_v));
    lt_tensor_destroy(z);
    lt_tensor_destroy(loss);
    int bar = (int)(30.0 * ep / epochs);
    if (!tty && ep % 20 != 0 && ep != epochs) continue; /* logs get every 20th epoch */
    printf("\r[%-30.*s] epoch %4d/%d  loss %.4f", bar, "==============================", ep, epochs,
           loss_v);
    if (!tty || ep % 100 == 0 || ep == epochs) printf("\n");
    fflush(stdout);
  }
  double acc = accuracy(xte, ys + ntr, nte, p);
  printf("test accuracy %.4f (%lld rows)\n", acc, (long long)nte);
  lt_optim_destroy(opt);
  lt_tape_destroy(tape);
  destroy_all(p, 4);
  lt_tensor *tmp[] = {xtr, xte, ytr};
  destroy_all(tmp, 3);
  lt_context_destroy(ctx);
  free(xs);
  free(ys);
  free(onehot);
  if (acc < min_acc) {
    fprintf(stderr, "mlp: test accuracy %.4f is below %.4f\n", acc, min_acc);
    return 1;
  }
  return 0;
}

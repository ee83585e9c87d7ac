/* SPDX-License-Identifier: MIT */
/* The end of `tensor demo`: a short training run through the gradient tape. A 2-4-1 tanh
 * network learns XOR with Adam; the loss is printed as it falls. */
#include "tool.h"

#include <stdio.h>

#define TRAIN_TRY(what, call)                                                                      \
  do {                                                                                             \
    st = (call);                                                                                   \
    failed = what;                                                                                 \
    if (st != LT_OK) goto fail;                                                                    \
  } while (0)

/* loss = mean((tanh(tanh(x W1 + b1) W2 + b2) - y)^2), recorded on tape. */
static lt_status xor_loss(lt_tape *t, lt_tensor *x, lt_tensor *y, lt_tensor *const *p,
                          lt_tensor **loss, lt_tensor **pred) {
  lt_tensor *h = NULL, *hb = NULL, *a = NULL, *z = NULL, *zb = NULL, *d = NULL, *sq = NULL;
  const lt_tensor *in1[2] = {x, p[0]};
  lt_status st = lt_ad_einsum(t, "bi,ih->bh", 2, in1, &h);
  if (st == LT_OK) st = lt_ad_binary(t, LT_BINARY_ADD, h, p[1], &hb);
  if (st == LT_OK) st = lt_ad_unary(t, LT_UNARY_TANH, hb, &a);
  const lt_tensor *in2[2] = {a, p[2]};
  if (st == LT_OK) st = lt_ad_einsum(t, "bh,ho->bo", 2, in2, &z);
  if (st == LT_OK) st = lt_ad_binary(t, LT_BINARY_ADD, z, p[3], &zb);
  if (st == LT_OK) st = lt_ad_unary(t, LT_UNARY_TANH, zb, pred);
  if (st == LT_OK) st = lt_ad_binary(t, LT_BINARY_SUB, *pred, y, &d);
  if (st == LT_OK) st = lt_ad_unary(t, LT_UNARY_SQUARE, d, &sq);
  if (st == LT_OK) st = lt_ad_reduce(t, LT_REDUCE_MEAN, sq, -1, NULL, false, loss);
  lt_tensor *tmp[] = {h, hb, a, z, zb, d, sq};
  for (int i = 0; i < 7; i++)
    lt_tensor_destroy(tmp[i]);
  return st;
}

int tool_demo_train(lt_context *ctx) {
  printf("\n6. Train a tiny network (2-4-1, tanh) on XOR with the gradient tape and Adam:\n");
  static const float xs[8] = {0, 0, 0, 1, 1, 0, 1, 1}, ys[4] = {-1, 1, 1, -1};
  static const float w1[8] = {0.5f, -0.4f, 0.3f, 0.8f, -0.6f, 0.2f, 0.7f, -0.3f};
  static const float w2[4] = {0.4f, -0.5f, 0.6f, 0.3f}, zero[4] = {0};
  const int64_t sx[2] = {4, 2}, sy[2] = {4, 1}, s1[2] = {2, 4}, sb1[1] = {4}, s2[2] = {4, 1},
                sb2[1] = {1};
  lt_tensor *x = NULL, *y = NULL, *p[4] = {NULL}, *loss = NULL, *pred = NULL;
  lt_tape *tape = NULL;
  lt_optimizer *opt = NULL;
  lt_status st;
  const char *failed = "";
  TRAIN_TRY("data", lt_tensor_from_host(ctx, LT_F32, 2, sx, NULL, xs, &x));
  TRAIN_TRY("data", lt_tensor_from_host(ctx, LT_F32, 2, sy, NULL, ys, &y));
  TRAIN_TRY("params", lt_tensor_from_host(ctx, LT_F32, 2, s1, NULL, w1, &p[0]));
  TRAIN_TRY("params", lt_tensor_from_host(ctx, LT_F32, 1, sb1, NULL, zero, &p[1]));
  TRAIN_TRY("params", lt_tensor_from_host(ctx, LT_F32, 2, s2, NULL, w2, &p[2]));
  TRAIN_TRY("params", lt_tensor_from_host(ctx, LT_F32, 1, sb2, NULL, zero, &p[3]));
  TRAIN_TRY("lt_tape_create", lt_tape_create(ctx, &tape));
  for (int k = 0; k < 4; k++)
    TRAIN_TRY("requires_grad", lt_tape_requires_grad(tape, p[k], true));
  TRAIN_TRY("lt_optim_create", lt_optim_create(tape, LT_OPTIM_ADAM, 4, p, &opt));
  TRAIN_TRY("lt_optim_set", lt_optim_set(opt, LT_OPTIM_LR, 0.05));
  for (int step = 1; step <= 300; step++) {
    TRAIN_TRY("forward", xor_loss(tape, x, y, p, &loss, &pred));
    TRAIN_TRY("lt_tape_backward", lt_tape_backward(tape, loss, NULL, 0));
    TRAIN_TRY("lt_optim_step", lt_optim_step(opt));
    TRAIN_TRY("lt_optim_zero_grad", lt_optim_zero_grad(opt));
    TRAIN_TRY("lt_tape_clear", lt_tape_clear(tape));
    if (step == 1 || step % 60 == 0) {
      double v;
      TRAIN_TRY("lt_tensor_get", lt_tensor_get(loss, NULL, &v));
      printf("   step %3d  loss %.5f\n", step, v);
    }
    if (step < 300) {
      lt_tensor_destroy(loss);
      lt_tensor_destroy(pred);
      loss = pred = NULL;
    }
  }
  printf("   predictions for (0,0) (0,1) (1,0) (1,1), targets -1 1 1 -1:");
  for (int64_t i = 0; i < 4; i++) {
    double v;
    int64_t idx[2] = {i, 0};
    TRAIN_TRY("lt_tensor_get", lt_tensor_get(pred, idx, &v));
    printf(" %+.2f", v);
  }
  printf("\n");
fail:
  lt_optim_destroy(opt);
  lt_tape_destroy(tape);
  lt_tensor *all[] = {x, y, p[0], p[1], p[2], p[3], loss, pred};
  for (int i = 0; i < 8; i++)
    lt_tensor_destroy(all[i]);
  return st == LT_OK ? 0 : tool_fail("demo", failed, st);
}

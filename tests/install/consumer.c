/* SPDX-License-Identifier: MIT */
/* An external program built against the installed library. */
#include <stdio.h>
#include <tensor.h>

int main(void) {
  lt_context *ctx;
  lt_tensor *t;
  int64_t shape[2] = {2, 3};
  double v = 0;
  if (lt_context_create("cpu", &ctx) != LT_OK) return 1;
  if (lt_tensor_full(ctx, LT_F32, 2, shape, 2.5, &t) != LT_OK) return 1;
  int64_t idx[2] = {1, 2};
  if (lt_tensor_get(t, idx, &v) != LT_OK || v != 2.5) return 1;
  printf("libtensor %s ok\n", lt_version());
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  return 0;
}

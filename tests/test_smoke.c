/* SPDX-License-Identifier: MIT */
/* Smoke test: a context, a tensor, a view and a copy on every backend. */
#include "harness.h"

#include <stdlib.h>

static void test_roundtrip(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    int64_t shape[2] = {3, 4};
    float data[12];
    for (int i = 0; i < 12; i++)
      data[i] = (float)i;
    lt_tensor *t, *tt, *c;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 2, shape, NULL, data, &t));
    LT_CHECK(lt_view_transpose(t, 0, 1, &tt));
    LT_CHECK(lt_tensor_contiguous(tt, LT_F64, &c));
    double out[12];
    LT_CHECK(lt_tensor_to_host(c, out, sizeof out));
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++)
        assert_true(out[i * 3 + j] == data[j * 4 + i]);
    lt_tensor_destroy(c);
    lt_tensor_destroy(tt);
    lt_tensor_destroy(t);
    lt_context_destroy(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_roundtrip)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

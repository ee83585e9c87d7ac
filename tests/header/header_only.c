/* SPDX-License-Identifier: MIT */
/* Compiled alone as C11 and as C++: the public header must be self-contained. */
#include "tensor.h"

int main(void) {
  lt_context *ctx = 0;
  (void)ctx;
  return LT_VERSION_MAJOR >= 0 && LT_OK == 0 ? 0 : 1;
}

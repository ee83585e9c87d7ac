/* SPDX-License-Identifier: MIT */
/* How a lowered pair runs, in words, for plan descriptions (pair.h). */
#include "lower/pair.h"

#include <stdio.h>
#include <string.h>

const char *lt__how_name(lt__how how) {
  switch (how) {
  case LT__HOW_EMPTY: return "empty";
  case LT__HOW_FILL: return "fill";
  case LT__HOW_ELEMENTWISE: return "elementwise";
  case LT__HOW_DIRECT: return "direct";
  case LT__HOW_GEMM: return "GEMM";
  case LT__HOW_BATCHED_GEMM: return "batched GEMM";
  }
  return "?";
}

void lt__pair_describe_gemm(const lt__pair *p, lt__how how, char *text, size_t size) {
  size_t used = strlen(text);
  if ((how != LT__HOW_GEMM && how != LT__HOW_BATCHED_GEMM) || used >= size) return;
  snprintf(text + used, size - used, " (%lld x %lld x %lld, batch %lld%s%s)",
           (long long)p->gemm_shape[0], (long long)p->gemm_shape[1], (long long)p->gemm_shape[2],
           (long long)p->gemm_shape[3], p->gemm_engine ? ", " : "",
           p->gemm_engine ? p->gemm_engine : "");
}

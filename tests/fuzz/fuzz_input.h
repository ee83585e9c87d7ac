/* SPDX-License-Identifier: MIT */
/* Decodes fuzzer bytes into bounded integers; an exhausted input reads as zeros, so every
 * prefix of an input is itself a valid (shorter) program. */
#ifndef LT_FUZZ_INPUT_H
#define LT_FUZZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

typedef struct fuzz_input {
  const uint8_t *data;
  size_t size, pos;
} fuzz_input;

static inline uint8_t fuzz_u8(fuzz_input *in) {
  return in->pos < in->size ? in->data[in->pos++] : 0;
}

static inline bool fuzz_done(const fuzz_input *in) { return in->pos >= in->size; }

/* Integer in [lo, hi] (hi - lo < 2^16). */
static inline int64_t fuzz_range(fuzz_input *in, int64_t lo, int64_t hi) {
  uint32_t v = fuzz_u8(in);
  if (hi - lo > 255) v = v << 8 | fuzz_u8(in);
  return lo + (int64_t)(v % (uint32_t)(hi - lo + 1));
}

/* Mostly small values, sometimes the edges of int64 where overflow bugs hide. */
static inline int64_t fuzz_int(fuzz_input *in, int64_t lo, int64_t hi) {
  static const int64_t edges[] = {
      0,         1,         -1,        INT64_MAX,    INT64_MIN,     INT32_MAX,     -INT32_MAX,
      1LL << 31, 1LL << 32, 1LL << 62, -(1LL << 62), INT64_MAX / 2, INT64_MIN + 1, 3};
  uint8_t sel = fuzz_u8(in);
  if (sel >= 240) return edges[(sel - 240) % (sizeof edges / sizeof edges[0])];
  return fuzz_range(in, lo, hi);
}

/* Stops the fuzzer with a message: libFuzzer records the input as a crash. */
#define FUZZ_ASSERT(cond, ...)                                                                     \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "fuzz assertion failed: %s\n  ", #cond);                                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n  last error: %s\n", lt_last_error());                                    \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

#endif

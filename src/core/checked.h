/* SPDX-License-Identifier: MIT */
/* Overflow-checked integer arithmetic for shapes, sizes and offsets. */
#ifndef LT_CORE_CHECKED_H
#define LT_CORE_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

/* Each returns true on overflow, leaving *out unspecified. */
static inline bool lt__mul_overflow(int64_t a, int64_t b, int64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}
static inline bool lt__add_overflow(int64_t a, int64_t b, int64_t *out) {
  return __builtin_add_overflow(a, b, out);
}
static inline bool lt__sub_overflow(int64_t a, int64_t b, int64_t *out) {
  return __builtin_sub_overflow(a, b, out);
}

#endif

/* SPDX-License-Identifier: MIT */
/* The rules every backend's map kernels share, decided here once: when a map step is a plain
 * move of bits, and that a zero scalar's operand is never read. */
#ifndef LT_BACKEND_COMMON_MAP_RULES_H
#define LT_BACKEND_COMMON_MAP_RULES_H

#include "backend/backend.h"

/* Whether every value of dtype d survives a trip through the compute dtype (i64 beyond 2^53
 * does not survive f64, nor i32 beyond 2^24 f32). */
bool lt__compute_holds(lt_dtype compute, lt_dtype d);
/* A permutation without arithmetic whose compute dtype cannot change a value: the kernel may
 * move bits instead of converting. */
bool lt__map_is_bitcopy(const lt__map_step *s);
/* The step a backend runs for s: out = 0 * u(in) of one input does not read in (as cuTENSOR),
 * so it becomes a fill with zero in *tmp, which is then returned; otherwise s itself. */
const lt__map_step *lt__map_without_zero_term(const lt__map_step *s, lt__map_step *tmp);

#endif

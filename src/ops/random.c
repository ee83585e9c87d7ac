/* SPDX-License-Identifier: MIT */
/* Random generators and fills: the handle holds (seed, stream) and an atomic counter; a fill
 * reserves the Philox blocks it needs and hands one backend step (backend.h) over. The bits
 * themselves are defined in kernels/philox.h, shared with both backends; permutations are
 * shuffled here on the host from the same bounded draws. */
#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

#include "philox.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNTER_LIMIT ((uint64_t)1 << 56) /* philox.h keeps counter bits 56..63 for retries */

struct lt_rng {
  uint32_t tag; /* LT__HANDLE_RNG while alive (core/handle.h) */
  uint64_t seed, stream;
  _Atomic uint64_t offset;
};

lt_status lt_rng_create(uint64_t seed, uint64_t stream, lt_rng **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  lt_rng *r = malloc(sizeof *r);
  LT_RETURN_IF(r == NULL, LT_ERR_OUT_OF_MEMORY, "lt_rng_create: out of memory");
  r->tag = LT__HANDLE_RNG;
  r->seed = seed;
  r->stream = stream;
  atomic_init(&r->offset, 0);
  *out = r;
  return LT_OK;
}

void lt_rng_destroy(lt_rng *rng) {
  if (rng == NULL || !lt__handle_may_destroy(rng, LT__HANDLE_RNG, "lt_rng_destroy")) return;
  lt__handle_kill(rng, LT__HANDLE_RNG);
  lt__handle_retire(rng);
}

lt_status lt_rng_get_offset(const lt_rng *rng, uint64_t *offset) {
  LT_TRY(lt__handle_check(rng, LT__HANDLE_RNG, "lt_rng_get_offset", "rng"));
  LT_CHECK_NULL(offset, "offset");
  *offset = atomic_load(&((lt_rng *)rng)->offset);
  return LT_OK;
}

lt_status lt_rng_set_offset(lt_rng *rng, uint64_t offset) {
  LT_TRY(lt__handle_check(rng, LT__HANDLE_RNG, "lt_rng_set_offset", "rng"));
  LT_RETURN_IF(offset >= COUNTER_LIMIT, LT_ERR_INVALID_ARGUMENT,
               "lt_rng_set_offset: offset %llu is past the counter limit 2^56",
               (unsigned long long)offset);
  atomic_store(&rng->offset, offset);
  return LT_OK;
}

/* Reserves `blocks` counter blocks; *first is the first of them. */
static lt_status reserve(const char *fn, lt_rng *rng, uint64_t blocks, uint64_t *first) {
  uint64_t cur = atomic_load(&rng->offset);
  do {
    LT_RETURN_IF(blocks > COUNTER_LIMIT - cur, LT_ERR_OVERFLOW,
                 "%s: the generator's counter (at %llu) would pass 2^56 blocks", fn,
                 (unsigned long long)cur);
  } while (!atomic_compare_exchange_weak(&rng->offset, &cur, cur + blocks));
  *first = cur;
  return LT_OK;
}

static bool is_float(lt_dtype t) {
  return t == LT_F16 || t == LT_BF16 || t == LT_F32 || t == LT_F64;
}

/* Integers drawn into an integer or bool out must all be representable there (NumPy refuses
 * integers(0, 1000, dtype=int8) too): wrapping would skew the distribution silently. Float
 * outs hold them rounded, as documented. */
static lt_status check_integers_fit(const char *fn, const lt__rng_step *s, lt_dtype dtype) {
  if (!lt__dtype_is_exact(dtype) || dtype == LT_I64) return LT_OK;
  int64_t last = (int64_t)((uint64_t)s->low + s->range - 1);
  double lo = 0, hi = 2; /* bool: 0 and 1 */
  if (dtype != LT_BOOL) lt__int_range(dtype, &lo, &hi);
  LT_RETURN_IF((double)s->low < lo || (double)last >= hi, LT_ERR_OUT_OF_RANGE,
               "%s: [%lld, %lld] does not fit out's dtype %s [%.17g, %.17g]", fn, (long long)s->low,
               (long long)last, lt_dtype_name(dtype), lo, hi - 1);
  return LT_OK;
}

/* Validates rng and out, reserves the blocks and runs the step. */
static lt_status fill(const char *fn, lt_rng *rng, lt_tensor *out, lt__rng_step *s) {
  LT_TRY(lt__handle_check(rng, LT__HANDLE_RNG, fn, "rng"));
  char what[48];
  snprintf(what, sizeof what, "%s: out", fn);
  LT_TRY(lt__check_tensor(out, what));
  LT_RETURN_IF((s->dist == LT__RNG_UNIFORM || s->dist == LT__RNG_NORMAL) && !is_float(out->dtype),
               LT_ERR_DTYPE, "%s: out must have a floating dtype, not %s", fn,
               lt_dtype_name(out->dtype));
  LT_RETURN_IF(lt__tensor_self_overlaps(out), LT_ERR_ALIASING,
               "%s: out has elements that overlap each other (zero or clashing strides)", fn);
  if (s->dist == LT__RNG_INTEGERS) LT_TRY(check_integers_fit(fn, s, out->dtype));
  int group = lt_rng_group((int)s->dist, out->dtype == LT_F64);
  uint64_t blocks = ((uint64_t)out->numel + (uint64_t)group - 1) / (uint64_t)group;
  s->seed = rng->seed;
  s->stream = rng->stream;
  LT_TRY(reserve(fn, rng, blocks, &s->offset));
  if (out->numel == 0) return LT_OK;
  s->rank = out->rank;
  for (int i = 0; i < out->rank; i++)
    s->shape[i] = out->shape[i];
  lt__operand_from_tensor(out, &s->out);
  lt_context *ctx = out->storage->ctx;
  return ctx->backend->rng(ctx, s);
}

lt_status lt_rng_uniform(lt_rng *rng, lt_tensor *out, double low, double high) {
  LT_RETURN_IF(!isfinite(low) || !isfinite(high) || !(low <= high), LT_ERR_INVALID_ARGUMENT,
               "lt_rng_uniform: low and high must be finite with low <= high, not %g and %g", low,
               high);
  LT_RETURN_IF(!isfinite(high - low), LT_ERR_INVALID_ARGUMENT,
               "lt_rng_uniform: high - low overflows a double (low %g, high %g)", low, high);
  lt__rng_step s = {.dist = LT__RNG_UNIFORM, .a = low, .b = high};
  return fill("lt_rng_uniform", rng, out, &s);
}

lt_status lt_rng_normal(lt_rng *rng, lt_tensor *out, double mean, double std) {
  LT_RETURN_IF(!isfinite(mean) || !isfinite(std) || !(std >= 0), LT_ERR_INVALID_ARGUMENT,
               "lt_rng_normal: mean must be finite and std finite and >= 0, not %g and %g", mean,
               std);
  lt__rng_step s = {.dist = LT__RNG_NORMAL, .a = mean, .b = std};
  return fill("lt_rng_normal", rng, out, &s);
}

lt_status lt_rng_integers(lt_rng *rng, lt_tensor *out, int64_t low, int64_t high) {
  LT_RETURN_IF(low >= high, LT_ERR_INVALID_ARGUMENT,
               "lt_rng_integers: low (%lld) must be below high (%lld)", (long long)low,
               (long long)high);
  lt__rng_step s = {.dist = LT__RNG_INTEGERS, .low = low};
  s.range = (uint64_t)high - (uint64_t)low;
  return fill("lt_rng_integers", rng, out, &s);
}

lt_status lt_rng_bernoulli(lt_rng *rng, lt_tensor *out, double p) {
  LT_RETURN_IF(!(p >= 0 && p <= 1), LT_ERR_INVALID_ARGUMENT,
               "lt_rng_bernoulli: p must be in [0, 1], not %g", p);
  lt__rng_step s = {.dist = LT__RNG_BERNOULLI};
  s.threshold = (uint64_t)llround(p * 4294967296.0);
  return fill("lt_rng_bernoulli", rng, out, &s);
}

lt_status lt_rng_permutation(lt_rng *rng, lt_tensor *out) {
  LT_TRY(lt__handle_check(rng, LT__HANDLE_RNG, "lt_rng_permutation", "rng"));
  LT_TRY(lt__check_tensor(out, "lt_rng_permutation: out"));
  LT_RETURN_IF(out->rank != 1 || out->dtype != LT_I64, LT_ERR_INVALID_ARGUMENT,
               "lt_rng_permutation: out must be a rank-1 i64 tensor, not rank %d %s", out->rank,
               lt_dtype_name(out->dtype));
  LT_RETURN_IF(lt__tensor_self_overlaps(out), LT_ERR_ALIASING,
               "lt_rng_permutation: out has elements that overlap each other");
  int64_t n = out->shape[0];
  uint64_t first = 0;
  LT_TRY(reserve("lt_rng_permutation", rng, ((uint64_t)n + 1) / 2, &first));
  if (n == 0) return LT_OK;
  lt_context *ctx = out->storage->ctx;
  int64_t *perm = lt__host_calloc(ctx, (size_t)n, sizeof *perm);
  LT_RETURN_IF(perm == NULL, LT_ERR_OUT_OF_MEMORY, "lt_rng_permutation: out of memory (%lld)",
               (long long)n);
  for (int64_t i = 0; i < n; i++)
    perm[i] = i;
  /* Draw i picks perm[i]'s partner among 0..i, from lane i % 2 of block first + i / 2. */
  for (int64_t i = n - 1; i > 0; i--) {
    uint64_t j = lt_rng_bounded(rng->seed, rng->stream, first + (uint64_t)i / 2, (int)(i % 2),
                                (uint64_t)i + 1);
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  lt_tensor *tmp;
  lt_status st = lt_tensor_from_host(ctx, LT_I64, 1, &n, NULL, perm, &tmp);
  lt__host_free(ctx, perm, (size_t)n * sizeof *perm);
  if (st != LT_OK) return st;
  st = lt_tensor_copy_into(out, tmp);
  lt_tensor_destroy(tmp);
  return st;
}

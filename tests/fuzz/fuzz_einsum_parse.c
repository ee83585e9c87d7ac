/* SPDX-License-Identifier: MIT */
/* Fuzz target: the einsum parser and planner. Operand shapes and an expression come from the
 * bytes: [n_inputs][rank, extents...] per input, [dtype], then the expression text. Planning
 * must either succeed (and the plan must describe itself and create its output) or fail with
 * a status, a message and no plan. The integer-label entry point gets the same operands with
 * labels taken from the bytes. Nothing is executed here (fuzz_einsum_exec does that). */
#include "fuzz_input.h"
#include "tensor.h"

static bool accepted_failure(lt_status st) {
  return st == LT_ERR_PARSE || st == LT_ERR_SHAPE_MISMATCH || st == LT_ERR_INVALID_ARGUMENT ||
         st == LT_ERR_OUT_OF_RANGE || st == LT_ERR_DTYPE || st == LT_ERR_OVERFLOW ||
         st == LT_ERR_UNSUPPORTED || st == LT_ERR_NULL_POINTER;
}

static void check_plan(lt_status st, lt_plan *plan, const char *what) {
  if (st != LT_OK) {
    FUZZ_ASSERT(accepted_failure(st), "%s: unexpected status %s", what, lt_status_string(st));
    FUZZ_ASSERT(plan == NULL, "%s: failed but set *out", what);
    FUZZ_ASSERT(lt_last_error()[0] != '\0', "%s: failed without a message", what);
    return;
  }
  FUZZ_ASSERT(lt_plan_describe(plan) != NULL, "%s: no description", what);
  lt_tensor *out = NULL;
  lt_status ost = lt_plan_create_output(plan, &out);
  FUZZ_ASSERT(ost == LT_OK || ost == LT_ERR_OUT_OF_MEMORY || ost == LT_ERR_OVERFLOW,
              "%s: create_output %s", what, lt_status_string(ost));
  size_t ws = 0;
  FUZZ_ASSERT(lt_plan_workspace_size(plan, &ws) == LT_OK, "%s: workspace size", what);
  lt_tensor_destroy(out);
  lt_plan_destroy(plan);
}

/* Outputs of valid plans may be astronomically large ("i->iiiiiiii..."): the context's
 * allocator refuses anything above 64 MiB, so lt_plan_create_output reports out-of-memory
 * instead of exhausting the fuzzer's memory. */
static void *capped_alloc(size_t bytes, size_t align, void *user) {
  if (bytes > ((size_t)64 << 20)) return NULL;
  return aligned_alloc(align, (bytes + align - 1) / align * align);
}
static void capped_free(void *ptr, size_t bytes, void *user) { free(ptr); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lt_context *ctx;
  if (ctx == NULL &&
      lt_context_create_with_allocator(NULL, capped_alloc, capped_free, NULL, &ctx) != LT_OK)
    abort();
  fuzz_input in = {data, size, 0};
  int n = (int)fuzz_range(&in, 0, 4);
  lt_tensor *ops[4] = {NULL};
  lt_dtype dtype = fuzz_u8(&in) & 1 ? LT_F64 : LT_F32;
  for (int i = 0; i < n; i++) {
    int rank = (int)fuzz_range(&in, 0, 5);
    int64_t shape[5];
    for (int d = 0; d < rank; d++)
      shape[d] = fuzz_range(&in, 0, 4);
    if (lt_tensor_empty(ctx, dtype, rank, shape, &ops[i]) != LT_OK) abort();
  }
  /* The expression: the rest of the bytes, at most 80 characters. */
  char expr[81];
  size_t len = size - in.pos < 80 ? size - in.pos : 80;
  memcpy(expr, data + in.pos, len);
  expr[len] = '\0';
  lt_plan *plan = (lt_plan *)&ctx; /* must become NULL on failure */
  lt_clear_error();
  lt_status st = lt_plan_einsum(expr, n, (const lt_tensor *const *)ops, NULL, NULL, &plan);
  check_plan(st, plan, expr);
  {
    /* The same bytes as integer labels (including negative and huge ones). */
    int32_t labels[4][5], out_labels[8];
    const int32_t *modes[4];
    size_t p = 0;
    for (int i = 0; i < n; i++) {
      for (int d = 0; d < lt_tensor_rank(ops[i]); d++)
        labels[i][d] = p < len ? (int32_t)(int8_t)expr[p++] : 0;
      modes[i] = labels[i];
    }
    int rank_out = p < len ? (int)(uint8_t)expr[p++] % 9 - 1 : 0;
    for (int d = 0; d < rank_out; d++)
      out_labels[d] = p < len ? (int32_t)(int8_t)expr[p++] : 0;
    plan = (lt_plan *)&ctx;
    lt_clear_error();
    st = lt_plan_einsum_modes(n, (const lt_tensor *const *)ops, modes, rank_out, out_labels, NULL,
                              NULL, &plan);
    check_plan(st, plan, "lt_plan_einsum_modes");
  }
  for (int i = 0; i < n; i++)
    lt_tensor_destroy(ops[i]);
  return 0;
}

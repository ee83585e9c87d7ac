/* Internal einsum pieces: the parsed expression (labels per axis), its canonical form over
 * dense mode ids (diagonals and broadcasting folded into strides), the contraction path and
 * the plan cache. */
#ifndef LT_EINSUM_EINSUM_H
#define LT_EINSUM_EINSUM_H

#include "lower/pair.h"
#include "ops/plan.h"

/* NumPy allows 32 operands (64 in NumPy 2); einsum here accepts up to this many. */
#define LT__EINSUM_MAX_OPERANDS 64
/* Distinct labels one einsum may use (letters are 52 of them; integer labels may use more). */
#define LT__EINSUM_MAX_LABELS 512
/* Letters are labels 0..51 ('A'..'Z' then 'a'..'z', so sorting ids sorts uppercase first);
 * ellipsis dimension j (counted from the left of the broadcast shape) is BASE + j. */
#define LT__ELLIPSIS_LABEL_BASE (1 << 24)

/* An expression as labels per axis (before extents are looked at). */
typedef struct lt__einsum_expr {
  bool letters; /* labels came from letters and '...' (for messages) */
  int n_inputs;
  int rank[LT__EINSUM_MAX_OPERANDS];
  int32_t labels[LT__EINSUM_MAX_OPERANDS][LT_MAX_RANK];
  int rank_out;
  int32_t labels_out[LT_MAX_RANK]; /* may repeat (writes a diagonal) */
} lt__einsum_expr;

/* Parses a NumPy einsum string for inputs of the given ranks into e. */
lt_status lt__einsum_parse(const char *text, int n_inputs, const int *ranks, lt__einsum_expr *e);
/* Builds e from integer labels (lt_plan_einsum_modes). */
lt_status lt__einsum_from_modes(int n_inputs, const int *ranks, const int32_t *const *modes,
                                int rank_out, const int32_t *modes_out, lt__einsum_expr *e);
/* Writes a readable name of label `l` ("'k'", "'...' dimension 1", "7"). */
void lt__einsum_label_name(const lt__einsum_expr *e, int32_t l, char *buf, size_t size);

/* The expression over dense mode ids with extents resolved. */
typedef struct lt__einsum_canon {
  int n_labels;
  int32_t label_of[LT__EINSUM_MAX_LABELS]; /* dense id -> original label */
  int64_t extent[LT__EINSUM_MAX_LABELS];
  int n_inputs;
  lt__mview in[LT__EINSUM_MAX_OPERANDS]; /* unique modes; diagonals and broadcasts in strides */
  lt__mview out;                         /* D, one mode per output dimension */
} lt__einsum_canon;

/* Resolves extents (size-1 broadcasting across operands, equal extents within one) and
 * strides. d may be NULL (then out describes a C-contiguous output; out.buf is OUTPUT). */
lt_status lt__einsum_canonicalize(const lt__einsum_expr *e, const lt_tensor *const *inputs,
                                  const lt_tensor *d, lt__einsum_canon *c, int64_t *out_shape);

/* ---- contraction path ---- */

typedef struct lt__path_step {
  int i, j; /* positions in the current operand list (i < j); the result is appended */
} lt__path_step;

typedef struct lt__path {
  int n_steps;
  lt__path_step step[LT__EINSUM_MAX_OPERANDS];
  double flops, naive_flops;
  double largest; /* elements of the largest intermediate */
} lt__path;

/* Chooses a pairwise order for the canonical operands under opts (algorithm, memory limit in
 * bytes of `elem_bytes` elements); search tables come from ctx's allocator. */
lt_status lt__einsum_path(lt_context *ctx, const lt__einsum_canon *c, lt_path_algo algo,
                          int64_t memory_limit, size_t elem_bytes, lt__path *path);

/* LT_OK if input k is a live tensor handle, else LT_ERR_INVALID_HANDLE naming "einsum: input k". */
lt_status lt__einsum_check_input(const lt_tensor *t, int k);

/* ---- plan cache (one per context) ---- */

/* Finds or builds (through `build(arg)`) the plan cached under `key` and marks it in use;
 * *plan stays valid until lt__plan_cache_release(ctx, *entry). */
typedef lt_status (*lt__plan_builder)(const void *arg, lt_plan **out);
lt_status lt__plan_cache_acquire(lt_context *ctx, const void *key, size_t key_len,
                                 lt__plan_builder build, const void *arg, void **entry,
                                 const lt_plan **plan);
void lt__plan_cache_release(lt_context *ctx, void *entry);

#endif

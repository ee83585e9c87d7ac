/* SPDX-License-Identifier: MIT */
/* Internal einsum pieces: the parsed expression (labels per axis), its canonical form over
 * dense mode ids (diagonals and broadcasting folded into strides), the contraction path and
 * the plan cache. */
#ifndef LT_EINSUM_EINSUM_H
#define LT_EINSUM_EINSUM_H

#include "einsum/path.h"
#include "lower/pair.h"
#include "ops/plan.h"

/* Letters are labels 0..51 ('A'..'Z' then 'a'..'z', so sorting ids sorts uppercase first);
 * ellipsis dimension j (counted from the left of the broadcast shape) is BASE + j. */
#define LT__ELLIPSIS_LABEL_BASE (1 << 24)

/* An expression as labels per axis (before extents are looked at). Any number of operands:
 * the per-operand arrays come from ctx's allocator (lt__einsum_expr_free). */
typedef struct lt__einsum_expr {
  lt_context *ctx; /* set before parsing; may be NULL (plain malloc) */
  bool letters;    /* labels came from letters and '...' (for messages) */
  int n_inputs, cap;
  int *rank;
  int32_t (*labels)[LT_MAX_RANK];
  int rank_out;
  int32_t labels_out[LT_MAX_RANK]; /* may repeat (writes a diagonal) */
} lt__einsum_expr;

/* Room for n operands in e (keeps e->ctx). */
lt_status lt__einsum_expr_alloc(lt__einsum_expr *e, int n);
void lt__einsum_expr_free(lt__einsum_expr *e);

/* Parses a NumPy einsum string for inputs of the given ranks into e. */
lt_status lt__einsum_parse(const char *text, int n_inputs, const int *ranks, lt__einsum_expr *e);
/* Builds e from integer labels (lt_plan_einsum_modes). */
lt_status lt__einsum_from_modes(int n_inputs, const int *ranks, const int32_t *const *modes,
                                int rank_out, const int32_t *modes_out, lt__einsum_expr *e);
/* Writes a readable name of label `l` ("'k'", "'...' dimension 1", "7"). */
void lt__einsum_label_name(const lt__einsum_expr *e, int32_t l, char *buf, size_t size);

/* The expression over dense mode ids with extents resolved (arrays from ctx's allocator;
 * lt__einsum_canon_free). */
typedef struct lt__einsum_canon {
  lt_context *ctx;
  int n_labels, cap_labels;
  int32_t *label_of; /* dense id -> original label */
  int64_t *extent;
  int n_inputs;
  lt__mview *in; /* unique modes; diagonals and broadcasts in strides */
  lt__mview out; /* D, one mode per output dimension */
} lt__einsum_canon;

void lt__einsum_canon_free(lt__einsum_canon *c);

/* Resolves extents (size-1 broadcasting across operands, equal extents within one) and
 * strides. d may be NULL (then out describes a C-contiguous output; out.buf is OUTPUT). */
lt_status lt__einsum_canonicalize(const lt__einsum_expr *e, const lt_tensor *const *inputs,
                                  const lt_tensor *d, lt__einsum_canon *c, int64_t *out_shape);

/* ---- contraction path ---- */

typedef struct lt__path {
  lt__pnet net;            /* the network searched (kept for slicing) */
  int n;                   /* operands */
  int32_t (*ssa)[2];       /* n-1 steps, SSA ids (path.h) */
  int64_t (*pos)[2];       /* the same steps as NumPy-style positions */
  double *step_cost;       /* per step: product of the extents it touches (per slice) */
  double *step_size;       /* per step: elements of its result (per slice) */
  double cost, naive_cost; /* sums of step costs (times the slice count) */
  double largest;          /* elements of the largest intermediate (per slice) */
  bool *sliced;            /* per dense label (net.n_labels), or NULL: nothing sliced */
  int n_sliced;
  double slices, overhead; /* slice count; cost with slicing / cost without */
} lt__path;

/* Chooses a contraction tree for the canonical operands under opts (algorithm, budget, seed,
 * cost weights, explicit path, memory limit in bytes of elem_bytes elements). */
lt_status lt__einsum_path(lt_context *ctx, const lt__einsum_canon *c, const lt_plan_options *opts,
                          size_t elem_bytes, lt__path *path);
/* Slices path so that intermediates hold at most target elements (fills sliced, slices,
 * overhead, step figures). LT_ERR_OUT_OF_MEMORY if no slicing gets there. */
lt_status lt__einsum_path_slice(lt__path *path, double target, int64_t limit_bytes);
void lt__path_free(lt__path *path);

/* The einsum plan's private part (tree introspection reads it). */
typedef struct lt__einsum_impl {
  lt__program prog;
  int n_inputs;
  int64_t n_steps;
  int64_t (*pos)[2];
  int32_t (*ssa)[2];
  double *step_cost, *step_size;
  /* slicing: label j (original label sliced_label[j]) runs over slice_ext[j] values, moving
   * input k by in_stride[j * n_inputs + k] and the output by out_stride[j] elements */
  int n_sliced;
  int32_t *sliced_label;
  int64_t *slice_ext, *in_stride, *out_stride;
  bool *slice_in_out;
  double slices, overhead;
} lt__einsum_impl;

/* Runs an einsum plan's program once per slice of [first, first + count) (once when nothing is
 * sliced and count > 0). beta_once: each output part's first summed slice applies scalars[1]
 * and the rest add; false: every slice adds (beta = 1). */
lt_status lt__einsum_run_slices(const lt__einsum_impl *impl, lt_context *ctx,
                                const lt_tensor *const *inputs, const double *scalars,
                                lt_tensor *d, int64_t first, int64_t count, bool beta_once);

/* Runs slices [first, first + count) (slice s: sliced label j at digit j of s, j = 0
 * fastest); beta applies where a slice is the first in the range to write its output part. */
lt_status lt__einsum_run_slice_range(const lt__einsum_impl *impl, lt_context *ctx,
                                     const lt_tensor *const *inputs, const double *scalars,
                                     int64_t first, int64_t count, lt_tensor *d);
/* The product of the sliced extents (1 without slicing); LT_ERR_INVALID_ARGUMENT past int64. */
lt_status lt__einsum_slice_count(const lt__einsum_impl *impl, int64_t *count);
/* LT_ERR_ALIASING when the output overlaps an input. */
lt_status lt__einsum_check_alias(const lt_tensor *const *inputs, int n_inputs, const lt_tensor *d);

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

/* SPDX-License-Identifier: MIT */
/* A lowered operation: a list of backend steps over the plan's inputs, its output and one
 * workspace block. Everything is decided when the plan is built; executing only patches
 * memory handles, offsets and the alpha/beta scalars into copies of the steps. */
#ifndef LT_LOWER_PROGRAM_H
#define LT_LOWER_PROGRAM_H

#include "core/object.h"

#include <stdatomic.h>

/* Where an operand's memory comes from at execute time. */
typedef enum lt__buf_kind {
  LT__BUF_NONE = 0,
  LT__BUF_INPUT,  /* inputs[index]: offset is relative to the tensor's own offset */
  LT__BUF_OUTPUT, /* d: offset relative to d's offset */
  LT__BUF_WS      /* the workspace block: offset in elements of the operand's dtype */
} lt__buf_kind;

typedef struct lt__bufref {
  lt__buf_kind kind;
  int index;
} lt__bufref;

/* A value a step reads from the execute-time scalars. */
typedef enum lt__scalar_role {
  LT__SCALAR_ONE = 0,
  LT__SCALAR_ZERO,
  LT__SCALAR_ALPHA,
  LT__SCALAR_BETA,
  LT__SCALAR_GAMMA /* a trinary elementwise plan's third scalar */
} lt__scalar_role;

typedef enum lt__step_kind {
  LT__STEP_MAP,
  LT__STEP_REDUCE,
  LT__STEP_GEMM,
  LT__STEP_CONTRACT,
  LT__STEP_ROWS,
  LT__STEP_GATHER,
  LT__STEP_SCATTER,
  LT__STEP_SORT
} lt__step_kind;

/* One backend call. Buffer slots: map in[0..2], out; reduce in, out, c; gemm a, b, c;
 * contract a, b, out, c; rows in, out; gather in, index, out; scatter src, index, out; sort
 * in, out. */
typedef struct lt__step {
  lt__step_kind kind;
  union {
    lt__map_step map;
    lt__reduce_step reduce;
    lt__gemm_step gemm;
    lt__contract_step contract;
    lt__row_step rows;
    lt__gather_step gather;
    lt__scatter_step scatter;
    lt__sort_step sort;
  } u;
  lt__bufref buf[4];
  lt__scalar_role scalar[3]; /* map: scalars[0..2]; others: alpha, beta */
  /* Map with a beta*C term last: when beta is 0 at execute the term is dropped (C unread). */
  bool drop_last_if_beta_zero;
} lt__step;

typedef struct lt__program {
  int n_steps, cap_steps;
  lt__step *steps;
  size_t ws_bytes; /* workspace block size (64-byte aligned regions) */
  /* One workspace block kept between executions (fresh pages cost page faults); a run that
   * finds it taken by a concurrent run allocates its own. */
  _Atomic(void *) ws_kept;
  lt_context *ctx; /* the plan's context: steps come from its allocator, ws_kept from its device */
} lt__program;

/* An empty program whose memory comes from ctx. */
void lt__program_init(lt__program *p, lt_context *ctx);
/* Appends a zeroed step of `kind`; returns NULL when out of memory (message set). */
lt__step *lt__program_add(lt__program *p, lt__step_kind kind);
/* Reserves a 64-byte aligned workspace region of n elements of dtype; returns the element
 * offset of its start. */
lt_status lt__program_ws(lt__program *p, lt_dtype dtype, int64_t n, int64_t *elem_offset);
void lt__program_free(lt__program *p);
/* Runs every step with alpha = scalars[0], beta = scalars[1] (gamma = scalars[2] for the steps
 * that name it: scalars holds the plan's n_scalars values). */
lt_status lt__program_run(lt__program *p, lt_context *ctx, const lt_tensor *const *inputs,
                          const double *scalars, lt_tensor *d);

#endif

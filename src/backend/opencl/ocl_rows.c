/* SPDX-License-Identifier: MIT */
/* Row steps and random fills on the device (kernels/rows.cl, kernels/random.cl): one
 * work-item per row, and one per Philox group, with the shapes and strides in constant
 * tables. Simple rather than fast: they exist so that every op runs on every backend with the
 * same results (random bits identical to the CPU's, from the shared kernels/philox.h). */
#include "backend/opencl/ocl.h"
#include "core/dtype.h"
#include "core/error.h"

#include "philox.h"

#include <string.h>

static size_t global_size(int64_t items) {
  int64_t groups = (items + 63) / 64, cap = (int64_t)1 << 20;
  return (size_t)(groups < cap ? (groups > 0 ? groups : 1) : cap) * 64;
}

lt_status lt__ocl_rows(lt_context *ctx, const lt__row_step *s) {
  lt__ocl_state *st = lt__ocl(ctx);
  int64_t nrows = 1, n = 1;
  int64_t kdesc[3 * LT_MAX_RANK], rdesc[3 * LT_MAX_RANK];
  for (int d = 0; d < s->rank; d++) {
    nrows *= s->shape[d];
    kdesc[d] = s->shape[d];
    kdesc[s->rank + d] = s->in.strides[d];
    kdesc[2 * s->rank + d] = s->out.strides[d];
  }
  bool whole = s->op == LT__ROW_SOFTMAX || s->op == LT__ROW_LOG_SOFTMAX ||
               s->op == LT__ROW_CUMSUM || s->op == LT__ROW_CUMPROD;
  for (int d = 0; d < s->row_rank; d++) {
    n *= s->row_shape[d];
    rdesc[d] = s->row_shape[d];
    rdesc[s->row_rank + d] = s->in_row_strides[d];
    rdesc[2 * s->row_rank + d] = whole ? s->out_row_strides[d] : 0;
  }
  if (nrows == 0 || (whole && n == 0)) return LT_OK;
  LT_TRY(lt__ocl_require_dtype(st, s->compute, "compute"));
  LT_TRY(lt__ocl_require_dtype(st, s->in.dtype, "load"));
  LT_TRY(lt__ocl_require_dtype(st, s->out.dtype, "store"));
  char opts[256] = "";
  LT_TRY(lt__ocl_append(opts, sizeof opts, "-DLT_IN0=%s -DLT_OUT=%s%s",
                        lt__ocl_dtype_token(s->in.dtype), lt__ocl_dtype_token(s->out.dtype),
                        lt__ocl_compute_define(s->compute)));
  cl_mem kbuf = NULL, rbuf = NULL;
  pthread_mutex_lock(&st->lock);
  cl_kernel k;
  lt_status r = lt__ocl_kernel(st, "rows.cl", "lt_rows", opts, &k);
  if (r == LT_OK) r = lt__ocl_const_buffer(st, kdesc, 3 * (size_t)s->rank, &kbuf);
  if (r == LT_OK) r = lt__ocl_const_buffer(st, rdesc, 3 * (size_t)s->row_rank, &rbuf);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 0, nrows);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 1, n);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 2, s->rank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 3, kbuf);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 4, s->row_rank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 5, rbuf);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 6, (int)s->op);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 7, s->in.mem);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 8, s->in.offset);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 9, s->out.mem);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 10, s->out.offset);
  if (r == LT_OK) r = lt__ocl_arg_real(k, 11, st->fp64 ? LT_F64 : LT_F32, s->ddof);
  size_t local = 64, global = global_size(nrows);
  if (r == LT_OK) r = lt__ocl_launch(st, k, 1, &global, &local);
  pthread_mutex_unlock(&st->lock);
  if (kbuf) lt__ocl_release(st, kbuf, 0);
  if (rbuf) lt__ocl_release(st, rbuf, 0);
  return r;
}

lt_status lt__ocl_rng(lt_context *ctx, const lt__rng_step *s) {
  lt__ocl_state *st = lt__ocl(ctx);
  int64_t n = 1, desc[2 * LT_MAX_RANK];
  for (int d = 0; d < s->rank; d++) {
    n *= s->shape[d];
    desc[d] = s->shape[d];
    desc[s->rank + d] = s->out.strides[d];
  }
  if (n == 0) return LT_OK;
  bool wide = s->out.dtype == LT_F64;
  int group = lt_rng_group((int)s->dist, wide);
  lt_dtype compute =
      s->dist == LT__RNG_NORMAL || (s->dist == LT__RNG_UNIFORM && wide) ? LT_F64 : LT_F32;
  bool i64 = s->dist == LT__RNG_INTEGERS && lt__dtype_is_int(s->out.dtype);
  LT_TRY(lt__ocl_require_dtype(st, compute, "random numbers"));
  LT_TRY(lt__ocl_require_dtype(st, s->out.dtype, "store"));
  char opts[256] = "";
  LT_TRY(lt__ocl_append(opts, sizeof opts, "-DLT_OUT=%s -DLT_GROUP=%d%s%s",
                        lt__ocl_dtype_token(s->out.dtype), group,
                        compute == LT_F64 ? " -DLT_COMPUTE_F64" : "", i64 ? " -DLT_OUT_I64" : ""));
  cl_mem dbuf = NULL;
  pthread_mutex_lock(&st->lock);
  cl_kernel k;
  lt_status r = lt__ocl_kernel(st, "philox.h+random.cl", "lt_rng", opts, &k);
  if (r == LT_OK) r = lt__ocl_const_buffer(st, desc, 2 * (size_t)s->rank, &dbuf);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 0, n);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 1, s->rank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 2, dbuf);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 3, s->out.mem);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 4, s->out.offset);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 5, (int)s->dist);
  uint64_t u[3] = {s->seed, s->stream, s->offset};
  for (int i = 0; i < 3 && r == LT_OK; i++)
    r = lt__ocl_arg_bytes(k, (cl_uint)(6 + i), sizeof u[i], &u[i]);
  if (r == LT_OK) r = lt__ocl_arg_real(k, 9, compute, s->a);
  if (r == LT_OK) r = lt__ocl_arg_real(k, 10, compute, s->b);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 11, s->low);
  if (r == LT_OK) r = lt__ocl_arg_bytes(k, 12, sizeof s->range, &s->range);
  if (r == LT_OK) r = lt__ocl_arg_bytes(k, 13, sizeof s->threshold, &s->threshold);
  size_t local = 64, global = global_size((n + group - 1) / group);
  if (r == LT_OK) r = lt__ocl_launch(st, k, 1, &global, &local);
  pthread_mutex_unlock(&st->lock);
  if (dbuf) lt__ocl_release(st, dbuf, 0);
  return r;
}

/* SPDX-License-Identifier: MIT */
/* Index steps on the device (kernels/index.cl): gather, scatter-add and sort. Gather and
 * scatter-add report a bad index through a one-long buffer the host reads back after the run
 * (so each such step waits for the device); sort uses a scratch buffer of two position arrays
 * per row, launched in batches of rows that keep it under SCRATCH_BYTES. */
#include "backend/index_error.h"
#include "backend/opencl/ocl.h"
#include "core/dtype.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

#define SCRATCH_BYTES ((int64_t)64 << 20)

static const char *elem_type(lt_dtype dt) {
  switch (lt_dtype_size(dt)) {
  case 1: return "uchar";
  case 2: return "ushort";
  case 4: return "uint";
  default: return "ulong";
  }
}

/* The OpenCL C type of an index dtype (lt__index_dtype). */
static const char *index_type(lt_dtype dt) {
  switch (dt) {
  case LT_I8: return "char";
  case LT_I16: return "short";
  case LT_I32: return "int";
  case LT_U8: return "uchar";
  case LT_U16: return "ushort";
  case LT_U32: return "uint";
  case LT_U64: return "ulong -DLT_INDEX_U64";
  default: return "long";
  }
}

static bool is_int(lt_dtype dt) { return dt >= LT_I64 && dt <= LT_U64; }

/* A one-long device buffer set to INT64_MAX (no bad index seen). */
static lt_status bad_buffer(lt__ocl_state *st, cl_mem *out) {
  cl_long none = INT64_MAX;
  cl_int err;
  *out = clCreateBuffer(st->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof none, &none,
                        &err);
  LT_CL_TRY(err, "clCreateBuffer");
  return LT_OK;
}

/* Reads the bad position back (blocking); INT64_MAX when none. */
static lt_status read_bad(lt__ocl_state *st, cl_mem bad, int64_t *pos) {
  cl_long v = INT64_MAX;
  LT_CL_TRY(clEnqueueReadBuffer(st->queue, bad, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL),
            "clEnqueueReadBuffer");
  *pos = v;
  return LT_OK;
}

static lt_status index_value(lt_context *ctx, const lt__operand *index, int64_t off, uint64_t *v) {
  uint64_t raw = 0;
  size_t es = lt_dtype_size(index->dtype);
  LT_TRY(lt__ocl_mem_read(ctx, index->mem, (size_t)off * es, &raw, es));
  *v = lt__load_bits(&raw, index->dtype, 0);
  return LT_OK;
}

/* A gather-like launch that reports a bad index: kernel `name` of index.cl with arguments
 * (items, rank, desc, in, index, out, longs..., bad), `items` work items in groups of `local`
 * (at most 2^22 groups: the kernels loop over the rest). *pos is the first bad position, or
 * INT64_MAX when every index was in range. */
static lt_status launch_checked(lt__ocl_state *st, const char *name, const char *opts,
                                const int64_t *desc, size_t ndesc, int64_t items, int rank,
                                const cl_mem mems[3], const int64_t *longs, cl_uint nlongs,
                                size_t local, int64_t *pos) {
  *pos = INT64_MAX;
  pthread_mutex_lock(&st->lock);
  cl_kernel k;
  cl_mem dbuf = NULL, bad = NULL;
  lt_status r = lt__ocl_kernel(st, "index.cl", name, opts, &k);
  if (r == LT_OK) r = lt__ocl_const_buffer(st, desc, ndesc, &dbuf);
  if (r == LT_OK) r = bad_buffer(st, &bad);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 0, items);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 1, rank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 2, dbuf);
  for (cl_uint i = 0; i < 3 && r == LT_OK; i++)
    r = lt__ocl_arg_mem(k, 3 + i, mems[i]);
  for (cl_uint i = 0; i < nlongs && r == LT_OK; i++)
    r = lt__ocl_arg_long(k, 6 + i, longs[i]);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 6 + nlongs, bad);
  size_t groups = (size_t)((items + (int64_t)local - 1) / (int64_t)local), cap = (size_t)1 << 22;
  size_t global = (groups < cap ? groups : cap) * local;
  if (r == LT_OK) r = lt__ocl_launch(st, k, 1, &global, &local);
  if (r == LT_OK) r = read_bad(st, bad, pos);
  if (dbuf) lt__ocl_release(st, dbuf, 0);
  if (bad) lt__ocl_release(st, bad, 0);
  pthread_mutex_unlock(&st->lock);
  return r;
}

static lt_status gather(lt_context *ctx, const lt__gather_step *g) {
  lt__ocl_state *st = lt__ocl(ctx);
  int64_t n = 1, desc[4 * LT_MAX_RANK];
  for (int d = 0; d < g->rank; d++) {
    n *= g->shape[d];
    desc[d] = g->shape[d];
    desc[g->rank + d] = g->in.strides[d];
    desc[2 * g->rank + d] = g->index.strides[d];
    desc[3 * g->rank + d] = g->out.strides[d];
  }
  if (n == 0) return LT_OK;
  LT_TRY(lt__ocl_require_dtype(st, g->index.dtype, "index"));
  char opts[128] = "";
  LT_TRY(lt__ocl_append(opts, sizeof opts, "-DLT_ELEM=%s -DLT_INDEX=%s", elem_type(g->out.dtype),
                        index_type(g->index.dtype)));
  const cl_mem mems[3] = {g->in.mem, g->index.mem, g->out.mem};
  int64_t longs[] = {g->in.offset, g->index.offset, g->out.offset, g->axis_extent, g->axis_stride};
  int64_t pos;
  lt_status r = launch_checked(st, "lt_gather", opts, desc, 4 * (size_t)g->rank, n, g->rank, mems,
                               longs, 5, 256, &pos);
  if (r != LT_OK || pos == INT64_MAX) return r;
  uint64_t v = 0;
  LT_TRY(index_value(ctx, &g->index, lt__index_offset(g->rank, g->shape, &g->index, pos), &v));
  return lt__index_range_error(g->rank, g->shape, pos, v, g->index.dtype, g->axis_extent);
}

static lt_status scatter_options(const lt__ocl_state *st, lt_dtype dt, lt_dtype index, char *opts,
                                 size_t size) {
  bool exact = is_int(dt);
  LT_TRY(lt__ocl_require_dtype(st, dt, "scatter-add"));
  LT_TRY(lt__ocl_require_dtype(st, index, "index"));
  return lt__ocl_append(opts, size, "-DLT_OUT=%s -DLT_INDEX=%s%s", lt__ocl_dtype_token(dt),
                        index_type(index),
                        exact          ? " -DLT_EXACT_INT"
                        : dt == LT_F64 ? " -DLT_COMPUTE_F64"
                                       : "");
}

static lt_status scatter_add(lt_context *ctx, const lt__scatter_step *s) {
  lt__ocl_state *st = lt__ocl(ctx);
  int rank = 0, ax = s->axis;
  int64_t lines = 1, desc[4 * LT_MAX_RANK];
  for (int d = 0; d < s->rank; d++) {
    if (d == ax) continue;
    rank++;
    lines *= s->shape[d];
  }
  for (int d = 0, j = 0; d < s->rank; d++) {
    if (d == ax) continue;
    desc[j] = s->shape[d];
    desc[rank + j] = s->src.strides[d];
    desc[2 * rank + j] = s->index.strides[d];
    desc[3 * rank + j] = s->out.strides[d];
    j++;
  }
  int64_t len = s->shape[ax];
  if (lines == 0 || len == 0) return LT_OK;
  char opts[160] = "";
  LT_TRY(scatter_options(st, s->out.dtype, s->index.dtype, opts, sizeof opts));
  const cl_mem mems[3] = {s->src.mem, s->index.mem, s->out.mem};
  int64_t longs[] = {
      s->src.offset,      s->index.offset,      s->out.offset,      len,
      s->src.strides[ax], s->index.strides[ax], s->out_axis_extent, s->out_axis_stride};
  int64_t pos;
  lt_status r = launch_checked(st, "lt_scatter_add", opts, desc, 4 * (size_t)rank, lines, rank,
                               mems, longs, 8, 64, &pos);
  if (r != LT_OK || pos == INT64_MAX) return r;
  /* (line, c) back to the C-order position of the iteration space: c goes in at dim ax. */
  int64_t line = pos / len, c = pos % len, inner = 1;
  for (int d = ax + 1; d < s->rank; d++)
    inner *= s->shape[d];
  int64_t at = (line / inner * len + c) * inner + line % inner;
  uint64_t v = 0;
  LT_TRY(index_value(ctx, &s->index, lt__index_offset(s->rank, s->shape, &s->index, at), &v));
  return lt__index_range_error(s->rank, s->shape, at, v, s->index.dtype, s->out_axis_extent);
}

static lt_status sort_batches(lt__ocl_state *st, cl_kernel k, const lt__sort_step *s,
                              int64_t rows) {
  int64_t per = SCRATCH_BYTES / (16 * (s->n > 0 ? s->n : 1));
  if (per < 1) per = 1;
  if (per > rows) per = rows;
  cl_int err;
  cl_mem scratch = clCreateBuffer(st->context, CL_MEM_READ_WRITE,
                                  (size_t)(per * 16 * (s->n > 0 ? s->n : 1)), NULL, &err);
  LT_CL_TRY(err, "clCreateBuffer");
  lt_status r = lt__ocl_arg_mem(k, 15, scratch);
  for (int64_t row0 = 0; row0 < rows && r == LT_OK; row0 += per) {
    int64_t count = rows - row0 < per ? rows - row0 : per;
    r = lt__ocl_arg_long(k, 0, count);
    if (r == LT_OK) r = lt__ocl_arg_long(k, 1, row0);
    size_t local = 64, global = (size_t)((count + 63) / 64) * local;
    if (r == LT_OK) r = lt__ocl_launch(st, k, 1, &global, &local);
  }
  lt__ocl_release(st, scratch, 0);
  return r;
}

static lt_status sort(lt_context *ctx, const lt__sort_step *s) {
  lt__ocl_state *st = lt__ocl(ctx);
  int64_t rows = 1, desc[3 * LT_MAX_RANK];
  for (int d = 0; d < s->rank; d++) {
    rows *= s->shape[d];
    desc[d] = s->shape[d];
    desc[s->rank + d] = s->in.strides[d];
    desc[2 * s->rank + d] = s->out.strides[d];
  }
  if (rows == 0 || s->k == 0) return LT_OK;
  /* Integers and bool compare exactly, as long (signed) or ulong (unsigned, bool). */
  lt_dtype dt = s->in.dtype;
  bool exact = !(dt >= LT_F16 && dt <= LT_F64);
  bool is_signed = dt == LT_I64 || dt == LT_I8 || dt == LT_I16 || dt == LT_I32;
  LT_TRY(lt__ocl_require_dtype(st, dt, "sort"));
  char opts[160] = "";
  LT_TRY(lt__ocl_append(opts, sizeof opts, "-DLT_IN0=%s -DLT_ELEM=%s%s",
                        lt__ocl_dtype_token(s->in.dtype), elem_type(s->in.dtype),
                        !exact      ? (dt == LT_F64 ? " -DLT_COMPUTE_F64" : "")
                        : is_signed ? " -DLT_EXACT_INT -DLT_KEY_T=long"
                                    : " -DLT_EXACT_INT -DLT_KEY_T=ulong"));
  pthread_mutex_lock(&st->lock);
  cl_kernel k;
  cl_mem dbuf = NULL;
  lt_status r = lt__ocl_kernel(st, "index.cl", "lt_sort", opts, &k);
  if (r == LT_OK) r = lt__ocl_const_buffer(st, desc, 3 * (size_t)s->rank, &dbuf);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 2, s->rank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 3, dbuf);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 4, s->in.mem);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 5, s->in.mem);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 6, s->indices ? NULL : s->out.mem);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 7, s->indices ? s->out.mem : NULL);
  int64_t longs[] = {s->in.offset, s->out.offset,     s->n,
                     s->k,         s->in_axis_stride, s->out_axis_stride};
  for (cl_uint i = 0; i < 6 && r == LT_OK; i++)
    r = lt__ocl_arg_long(k, 8 + i, longs[i]);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 14, s->descending);
  if (r == LT_OK) r = sort_batches(st, k, s, rows);
  if (dbuf) lt__ocl_release(st, dbuf, 0);
  pthread_mutex_unlock(&st->lock);
  return r;
}

const lt__index_ops lt__ocl_index_ops = {
    .gather = gather,
    .scatter_add = scatter_add,
    .sort = sort,
};

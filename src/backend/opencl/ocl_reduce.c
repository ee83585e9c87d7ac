/* SPDX-License-Identifier: MIT */
/* Reduction steps on the device (kernels/reduce.cl): short reductions, and long ones whose kept
 * dims are the input's fastest, run one work-item per (output, chunk); other long ones a
 * work-group tree per (output, chunk). When outputs are split into several chunks to fill the
 * device, a second pass folds the partials. */
#include "backend/common/nest.h"
#include "backend/opencl/ocl.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

/* A reduce step's two iteration spaces after dropping size-1 dims and fusing mergeable ones.
 * Kept tables: 0 out, 1 c, 2 in. */
typedef struct red_space {
  int rank, red_rank;
  int64_t shape[LT_MAX_RANK], st[3][LT_MAX_RANK];
  int64_t red_shape[LT_MAX_RANK], red_st[LT_MAX_RANK];
  int64_t nout, nred;
} red_space;

static void build_space(const lt__reduce_step *s, red_space *sp) {
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  sp->rank = s->rank;
  sp->nout = 1;
  for (int d = 0; d < s->rank; d++) {
    sp->shape[d] = s->shape[d];
    sp->st[0][d] = s->out.strides[d];
    sp->st[1][d] = c->strides[d];
    sp->st[2][d] = s->in.strides[d];
    sp->nout *= s->shape[d];
  }
  sp->nred = 1;
  for (int d = 0; d < s->red_rank; d++) {
    sp->red_shape[d] = s->red_shape[d];
    sp->red_st[d] = s->in_red_strides[d];
    sp->nred *= s->red_shape[d];
  }
  if (sp->nout == 0) return;
  sp->rank = lt__nest_fuse(lt__nest_squeeze(sp->rank, sp->shape, 3, sp->st), sp->shape, 3, sp->st);
  if (sp->nred == 0) {
    sp->red_rank = 0; /* every output is the identity */
    return;
  }
  int64_t red_st[1][LT_MAX_RANK];
  memcpy(red_st[0], sp->red_st, sizeof red_st[0]);
  sp->red_rank = lt__nest_fuse(lt__nest_squeeze(s->red_rank, sp->red_shape, 1, red_st),
                               sp->red_shape, 1, red_st);
  memcpy(sp->red_st, red_st[0], sizeof red_st[0]);
}

static lt_status check_dtypes(const lt__ocl_state *st, const lt__reduce_step *s) {
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  LT_TRY(lt__ocl_require_dtype(st, s->compute, "reduce"));
  LT_TRY(lt__ocl_require_dtype(st, s->in.dtype, "load"));
  LT_TRY(lt__ocl_require_dtype(st, s->out.dtype, "store"));
  return lt__ocl_require_dtype(st, c->dtype, "load");
}

static int work_group(const lt__ocl_state *st) {
  int wg = 256;
  while (wg > 1 && wg > st->dev->max_work_group)
    wg /= 2;
  return wg;
}

/* LT_RED_ARGS of kernels/reduce.cl (indices 0..14). */
static lt_status set_common_args(cl_kernel k, const lt__reduce_step *s, const red_space *sp,
                                 cl_mem desc) {
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  lt_status r = lt__ocl_arg_int(k, 0, sp->rank);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 1, sp->red_rank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 2, desc);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 3, sp->nout);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 4, sp->nred);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 5, (int)s->op);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 6, (int)s->unary);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 7, s->in.mem);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 8, s->in.offset);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 9, s->out.mem);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 10, s->out.offset);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 11, c->mem);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 12, c->offset);
  if (r == LT_OK) r = lt__ocl_arg_real(k, 13, s->compute, s->alpha);
  if (r == LT_OK) r = lt__ocl_arg_real(k, 14, s->compute, s->beta);
  return r;
}

static size_t capped_groups(const lt__ocl_state *st, int64_t jobs, int64_t per_group) {
  int64_t groups = (jobs + per_group - 1) / per_group, cap = (int64_t)1 << 22;
  return (size_t)(groups < cap ? groups : cap);
}

/* How a step is split: the kernel, and into how many chunks each output's reduction goes. */
typedef struct red_plan {
  bool serial;
  int64_t chunks;
} red_plan;

static red_plan choose(const lt__ocl_state *st, const red_space *sp, int wg) {
  int64_t cu = st->dev->compute_units, chunks = 1;
  bool kept_fastest = sp->rank > 0 && sp->red_rank > 0 &&
                      llabs(sp->st[2][sp->rank - 1]) < llabs(sp->red_st[sp->red_rank - 1]);
  if (sp->nred < 2 * wg || sp->nout >= cu * wg * 4) return (red_plan){true, 1};
  if (kept_fastest) {
    /* Work-items along the outputs; enough chunks to give every compute unit ~4 groups. */
    chunks = (cu * wg * 4 + sp->nout - 1) / sp->nout;
    int64_t max_chunks = (sp->nred + 63) / 64;
    return (red_plan){true, chunks < max_chunks ? chunks : max_chunks};
  }
  /* A work-group per (output, chunk): enough chunks to give every compute unit a few. */
  if (sp->nout < cu * 8) {
    chunks = (cu * 8 + sp->nout - 1) / sp->nout;
    int64_t max_chunks = (sp->nred + 4 * wg - 1) / (4 * wg);
    if (chunks > max_chunks) chunks = max_chunks;
  }
  return (red_plan){false, chunks < 1 ? 1 : chunks};
}

/* Partials live in buffers released right after the launches that use them are queued. */
static lt_status run_passes(lt__ocl_state *st, const lt__reduce_step *s, const red_space *sp,
                            const char *opts, cl_mem desc, int wg, red_plan plan) {
  cl_kernel first, fin = NULL;
  int64_t chunks = plan.chunks;
  LT_TRY(lt__ocl_kernel(st, "reduce.cl", plan.serial ? "lt_reduce_serial" : "lt_reduce_tree", opts,
                        &first));
  if (chunks > 1) LT_TRY(lt__ocl_kernel(st, "reduce.cl", "lt_reduce_final", opts, &fin));
  size_t real_size = s->compute == LT_F32 ? 4 : 8,
         nparts = chunks > 1 ? (size_t)(sp->nout * chunks) : 1;
  cl_int err;
  cl_mem pv = clCreateBuffer(st->context, CL_MEM_READ_WRITE, nparts * real_size, NULL, &err);
  LT_CL_TRY(err, "clCreateBuffer");
  cl_mem pi = clCreateBuffer(st->context, CL_MEM_READ_WRITE, nparts * 8, NULL, &err);
  if (err != CL_SUCCESS) {
    lt__ocl_release(st, pv, 0);
    return lt__cl_error(err, "clCreateBuffer");
  }
  int64_t chunk_len = (sp->nred + chunks - 1) / chunks;
  lt_status r = set_common_args(first, s, sp, desc);
  if (r == LT_OK) r = lt__ocl_arg_long(first, 15, chunks);
  if (r == LT_OK) r = lt__ocl_arg_long(first, 16, chunk_len);
  if (r == LT_OK) r = lt__ocl_arg_mem(first, 17, pv);
  if (r == LT_OK) r = lt__ocl_arg_mem(first, 18, pi);
  /* serial: one item per (output, chunk); tree: one group of wg items per (output, chunk). */
  size_t local = plan.serial ? 64 : (size_t)wg;
  size_t global = capped_groups(st, sp->nout * chunks, plan.serial ? 64 : 1) * local;
  if (r == LT_OK) r = lt__ocl_launch(st, first, 1, &global, &local);
  if (r == LT_OK && chunks > 1) {
    r = set_common_args(fin, s, sp, desc);
    if (r == LT_OK) r = lt__ocl_arg_long(fin, 15, chunks);
    if (r == LT_OK) r = lt__ocl_arg_mem(fin, 16, pv);
    if (r == LT_OK) r = lt__ocl_arg_mem(fin, 17, pi);
    size_t flocal = 64, fglobal = capped_groups(st, sp->nout, 64) * flocal;
    if (r == LT_OK) r = lt__ocl_launch(st, fin, 1, &fglobal, &flocal);
  }
  lt__ocl_release(st, pv, 0);
  lt__ocl_release(st, pi, 0);
  return r;
}

static lt_status run(lt__ocl_state *st, const lt__reduce_step *s, const red_space *sp,
                     const char *opts, int wg) {
  int64_t desc[6 * LT_MAX_RANK];
  size_t n = 0;
  for (int t = -1; t < 3; t++)
    for (int d = 0; d < sp->rank; d++)
      desc[n++] = t < 0 ? sp->shape[d] : sp->st[t][d];
  for (int d = 0; d < sp->red_rank; d++)
    desc[n++] = sp->red_shape[d];
  for (int d = 0; d < sp->red_rank; d++)
    desc[n++] = sp->red_st[d];
  cl_mem dbuf;
  LT_TRY(lt__ocl_const_buffer(st, desc, n, &dbuf));
  lt_status r = run_passes(st, s, sp, opts, dbuf, wg, choose(st, sp, wg));
  lt__ocl_release(st, dbuf, 0);
  return r;
}

lt_status lt__ocl_reduce(lt_context *ctx, const lt__reduce_step *s) {
  lt__ocl_state *st = lt__ocl(ctx);
  red_space sp;
  build_space(s, &sp);
  if (sp.nout == 0) return LT_OK;
  LT_TRY(check_dtypes(st, s));
  bool arg = s->op == LT_REDUCE_ARGMAX || s->op == LT_REDUCE_ARGMIN;
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  int wg = work_group(st);
  char opts[256] = "";
  LT_TRY(lt__ocl_append(
      opts, sizeof opts, "-DLT_IN0=%s -DLT_OUT=%s -DLT_C=%s -DLT_WG=%d -DLT_ARG=%d%s",
      lt__ocl_dtype_token(s->in.dtype), lt__ocl_dtype_token(s->out.dtype),
      lt__ocl_dtype_token(c->dtype), wg, arg ? 1 : 0, lt__ocl_compute_define(s->compute)));
  pthread_mutex_lock(&st->lock);
  lt_status r = run(st, s, &sp, opts, wg);
  pthread_mutex_unlock(&st->lock);
  return r;
}

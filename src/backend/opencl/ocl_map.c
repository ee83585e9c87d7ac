/* SPDX-License-Identifier: MIT */
/* Map steps on the device: the iteration space is simplified on the host (size-1 dims
 * dropped, dims ordered by the output's strides, mergeable dims fused), then runs on the
 * tiled permutation kernel when the input's fastest dim differs from the output's, else on
 * the generic strided kernel. Copies between equal dtypes and fills move raw bits. */
#include "backend/common/map_rules.h"
#include "backend/common/nest.h"
#include "backend/opencl/ocl.h"
#include "core/dtype.h"
#include "core/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operand 0 is the output, 1..n_in the inputs. */
typedef struct space {
  int rank, nops;
  int64_t shape[LT_MAX_RANK];
  int64_t st[4][LT_MAX_RANK];
} space;

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* Elementwise work has no order, so dims may be sorted freely: by the output's strides, ties
 * by the inputs'. */
static void simplify(space *s) {
  s->rank = lt__nest_squeeze(s->rank, s->shape, s->nops, s->st);
  lt__nest_sort(s->rank, s->shape, s->nops, s->st, 0);
  s->rank = lt__nest_fuse(s->rank, s->shape, s->nops, s->st);
}

/* Fills and copies move raw bits (map_rules.h). */
static bool is_raw(const lt__map_step *m) { return m->n_in == 0 || lt__map_is_bitcopy(m); }

static lt_status options(const lt__ocl_state *st, const lt__map_step *m, bool raw, char *buf,
                         size_t size) {
  if (!raw) {
    LT_TRY(lt__ocl_require_dtype(st, m->compute, "compute"));
    LT_TRY(lt__ocl_require_dtype(st, m->out.dtype, "store"));
    for (int i = 0; i < m->n_in; i++)
      LT_TRY(lt__ocl_require_dtype(st, m->in[i].dtype, "load"));
  } else if (lt__dtype_is_exact(m->out.dtype)) { /* raw bits move as 64-bit words too */
    LT_TRY(lt__ocl_require_dtype(st, m->out.dtype, "copy"));
  }
  buf[0] = '\0';
  LT_TRY(lt__ocl_append(buf, size, "-DLT_N_IN=%d -DLT_OUT=%s", m->n_in,
                        lt__ocl_dtype_token(m->out.dtype)));
  for (int i = 0; i < m->n_in; i++)
    LT_TRY(lt__ocl_append(buf, size, " -DLT_IN%d=%s", i, lt__ocl_dtype_token(m->in[i].dtype)));
  if (raw) return lt__ocl_append(buf, size, " -DLT_RAW");
  return lt__ocl_append(buf, size, "%s", lt__ocl_compute_define(m->compute));
}

/* Arguments shared by both kernels, starting at index `i`: LT_MAP_ARGS of kernels/map.cl. */
static lt_status set_op_args(cl_kernel k, cl_uint i, const lt__map_step *m, bool raw) {
  lt_dtype real = raw ? LT_F32 : m->compute;
  for (int j = 0; j < 3; j++)
    LT_TRY(lt__ocl_arg_mem(k, i + j, j < m->n_in ? m->in[j].mem : m->out.mem));
  LT_TRY(lt__ocl_arg_mem(k, i + 3, m->out.mem));
  for (int j = 0; j < 3; j++)
    LT_TRY(lt__ocl_arg_int(k, i + 4 + j, (int)m->unary[j]));
  LT_TRY(lt__ocl_arg_int(k, i + 7, (int)m->op_ab));
  LT_TRY(lt__ocl_arg_int(k, i + 8, (int)m->op_abc));
  for (int j = 0; j < 3; j++)
    LT_TRY(lt__ocl_arg_real(k, i + 9 + j, real, m->scalars[j]));
  /* A fill stores the scalar exactly as the CPU would, as the output dtype's bits. */
  cl_ulong bits = 0;
  bool int_compute = m->compute == LT_I64 || m->compute == LT_U64;
  if (m->n_in == 0)
    lt__store_f64(&bits, m->out.dtype, 0,
                  m->compute == LT_F32 ? (double)(float)m->scalars[0]
                  : int_compute        ? nearbyint(m->scalars[0])
                                       : m->scalars[0]);
  return lt__ocl_arg_bytes(k, i + 12, sizeof bits, &bits);
}

static lt_status run_strided(lt__ocl_state *st, const lt__map_step *m, const space *s,
                             const char *opts, bool raw) {
  cl_kernel k;
  LT_TRY(lt__ocl_kernel(st, "map.cl", "lt_map_strided", opts, &k));
  int64_t desc[5 * LT_MAX_RANK], n = 1;
  for (int d = 0; d < s->rank; d++) {
    desc[d] = s->shape[d];
    n *= s->shape[d];
    for (int j = 0; j < 3; j++)
      desc[(j + 1) * s->rank + d] = j < m->n_in ? s->st[j + 1][d] : 0;
    desc[4 * s->rank + d] = s->st[0][d];
  }
  cl_mem dbuf;
  LT_TRY(lt__ocl_const_buffer(st, desc, 5 * (size_t)s->rank, &dbuf));
  lt_status r = lt__ocl_arg_long(k, 0, n);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 1, s->rank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 2, dbuf);
  if (r == LT_OK) r = set_op_args(k, 3, m, raw);
  for (int j = 0; j < 3 && r == LT_OK; j++)
    r = lt__ocl_arg_long(k, 16 + j, j < m->n_in ? m->in[j].offset : 0);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 19, m->out.offset);
  size_t local = 256, groups = (size_t)((n + 255) / 256), cap = (size_t)1 << 22;
  size_t global = (groups < cap ? groups : cap) * local;
  if (r == LT_OK) r = lt__ocl_launch(st, k, 1, &global, &local);
  lt__ocl_release(st, dbuf, 0);
  return r;
}

/* Picks the input's fastest dim b != a (a = the output's fastest, the last); -1 if the input
 * is already fastest along a or the tile would be mostly empty. */
static int tiled_dim(const space *s) {
  int a = s->rank - 1, b = -1;
  if (s->rank < 2 || s->shape[a] < 8) return -1;
  for (int d = 0; d < a; d++)
    if (b < 0 || abs64(s->st[1][d]) < abs64(s->st[1][b])) b = d;
  if (s->shape[b] < 8 || abs64(s->st[1][b]) >= abs64(s->st[1][a])) return -1;
  return b;
}

static lt_status run_tiled(lt__ocl_state *st, const lt__map_step *m, const space *s, int b,
                           const char *opts, bool raw) {
  cl_kernel k;
  LT_TRY(lt__ocl_kernel(st, "map.cl", "lt_map_tiled", opts, &k));
  int a = s->rank - 1, brank = 0;
  int64_t desc[3 * LT_MAX_RANK], nbatch = 1;
  for (int d = 0; d < a; d++)
    if (d != b) brank++;
  for (int d = 0, j = 0; d < a; d++) {
    if (d == b) continue;
    desc[j] = s->shape[d];
    desc[brank + j] = s->st[1][d];
    desc[2 * brank + j] = s->st[0][d];
    nbatch *= s->shape[d];
    j++;
  }
  int64_t tiles_a = (s->shape[a] + 31) / 32, tiles_b = (s->shape[b] + 31) / 32;
  cl_mem dbuf;
  LT_TRY(lt__ocl_const_buffer(st, desc, 3 * (size_t)brank, &dbuf));
  int64_t args[] = {s->shape[a], s->shape[b], s->st[1][a], s->st[1][b], s->st[0][a],
                    s->st[0][b], tiles_a,     tiles_b,     nbatch};
  lt_status r = LT_OK;
  for (cl_uint i = 0; i < 9 && r == LT_OK; i++)
    r = lt__ocl_arg_long(k, i, args[i]);
  if (r == LT_OK) r = lt__ocl_arg_int(k, 9, brank);
  if (r == LT_OK) r = lt__ocl_arg_mem(k, 10, dbuf);
  if (r == LT_OK) r = set_op_args(k, 11, m, raw);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 24, m->in[0].offset);
  if (r == LT_OK) r = lt__ocl_arg_long(k, 25, m->out.offset);
  size_t local = 256, ntiles = (size_t)(tiles_a * tiles_b * nbatch);
  size_t cap = (size_t)1 << 22;
  size_t global = (ntiles < cap ? ntiles : cap) * local;
  if (r == LT_OK) r = lt__ocl_launch(st, k, 1, &global, &local);
  lt__ocl_release(st, dbuf, 0);
  return r;
}

lt_status lt__ocl_map(lt_context *ctx, const lt__map_step *step) {
  lt__map_step zero_fill;
  const lt__map_step *m = lt__map_without_zero_term(step, &zero_fill);
  lt__ocl_state *st = lt__ocl(ctx);
  space s = {.rank = m->rank, .nops = 1 + m->n_in};
  for (int d = 0; d < m->rank; d++) {
    if (m->shape[d] == 0) return LT_OK;
    s.shape[d] = m->shape[d];
    s.st[0][d] = m->out.strides[d];
    for (int j = 0; j < m->n_in; j++)
      s.st[j + 1][d] = m->in[j].strides[d];
  }
  simplify(&s);
  bool raw = is_raw(m);
  char opts[512];
  LT_TRY(options(st, m, raw, opts, sizeof opts));
  pthread_mutex_lock(&st->lock);
  int b = m->n_in == 1 && st->dev->max_work_group >= 256 ? tiled_dim(&s) : -1;
  lt_status r = b >= 0 ? run_tiled(st, m, &s, b, opts, raw) : run_strided(st, m, &s, opts, raw);
  pthread_mutex_unlock(&st->lock);
  return r;
}

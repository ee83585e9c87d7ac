/* SPDX-License-Identifier: MIT */
/* Moving blocks between distributions: every pair of ranks exchanges the intersection of what
 * one holds under the source layout and the other under the destination layout (a box, since
 * both are block layouts of one global shape), all in one MPI_Alltoallv. Scatter, gather and
 * redistribution are that move between different layouts; a permutation moves nothing. */
#include "dist/dist.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

lt_status lt__dist_box_view(const lt_tensor *t, const int64_t *lo, const int64_t *hi,
                            lt_tensor **out) {
  int rank = lt_tensor_rank(t);
  lt_tensor *v = NULL;
  /* a rank-0 view through reshape: one code path for every rank */
  LT_TRY_DIST(lt_view_reshape(t, rank, lt_tensor_shape(t), &v));
  for (int m = 0; m < rank; m++) {
    lt_tensor *next = NULL;
    lt_status st = lt_view_slice(v, m, lo[m], hi[m], 1, &next);
    lt_tensor_destroy(v);
    if (st != LT_OK) return st;
    v = next;
  }
  *out = v;
  return LT_OK;
}

/* The intersection of two boxes; its element count (0 when empty). */
static int64_t intersect(int rank, const int64_t *alo, const int64_t *ahi, const int64_t *blo,
                         const int64_t *bhi, int64_t *lo, int64_t *hi) {
  int64_t n = 1;
  for (int m = 0; m < rank; m++) {
    lo[m] = alo[m] > blo[m] ? alo[m] : blo[m];
    hi[m] = ahi[m] < bhi[m] ? ahi[m] : bhi[m];
    if (hi[m] <= lo[m]) return 0;
    n *= hi[m] - lo[m];
  }
  return n;
}

/* Copies the global box [lo, hi) of `local` (whose block starts at `origin`) into buf, C order. */
static lt_status pack(const lt_tensor *local, const int64_t *origin, const int64_t *lo,
                      const int64_t *hi, void *buf, size_t bytes) {
  int rank = lt_tensor_rank(local);
  int64_t a[LT_MAX_RANK], b[LT_MAX_RANK];
  for (int m = 0; m < rank; m++)
    a[m] = lo[m] - origin[m], b[m] = hi[m] - origin[m];
  lt_tensor *v = NULL;
  LT_TRY_DIST(lt__dist_box_view(local, a, b, &v));
  lt_status st = lt_tensor_to_host(v, buf, bytes);
  lt_tensor_destroy(v);
  return st;
}

/* The reverse: buf (C order) into the global box [lo, hi) of `local`. */
static lt_status unpack(lt_tensor *local, const int64_t *origin, const int64_t *lo,
                        const int64_t *hi, const void *buf) {
  int rank = lt_tensor_rank(local);
  int64_t a[LT_MAX_RANK], b[LT_MAX_RANK], ext[LT_MAX_RANK];
  for (int m = 0; m < rank; m++)
    a[m] = lo[m] - origin[m], b[m] = hi[m] - origin[m], ext[m] = hi[m] - lo[m];
  lt_tensor *v = NULL, *src = NULL;
  LT_TRY_DIST(lt__dist_box_view(local, a, b, &v));
  lt_status st = lt_tensor_from_host(lt_tensor_context(local), lt_tensor_dtype(local), rank, ext,
                                     NULL, buf, &src);
  if (st == LT_OK) st = lt_tensor_copy_into(v, src);
  lt_tensor_destroy(src);
  lt_tensor_destroy(v);
  return st;
}

lt_status lt__dist_move(MPI_Comm comm, lt_dtype dtype, const lt__dist_layout *src,
                        const lt_tensor *src_local, const lt__dist_layout *dst,
                        lt_tensor *dst_local) {
  int nproc = 0, me = 0;
  MPI_Comm_size(comm, &nproc);
  MPI_Comm_rank(comm, &me);
  int rank = src->rank;
  size_t es = lt_dtype_size(dtype);
  int *counts = calloc((size_t)nproc * 4, sizeof(int));
  lt_status st = counts ? LT_OK : lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "lt_dist: out of memory");
  int *scount = counts, *sdispl = counts + nproc, *rcount = counts + 2 * nproc,
      *rdispl = counts + 3 * nproc;
  int64_t slo[LT_MAX_RANK], shi[LT_MAX_RANK], dlo[LT_MAX_RANK], dhi[LT_MAX_RANK];
  int64_t lo[LT_MAX_RANK], hi[LT_MAX_RANK], plo[LT_MAX_RANK], phi[LT_MAX_RANK];
  bool have_src = false, have_dst = false;
  if (st == LT_OK) {
    have_src = lt__dist_box(src, me, slo, shi);
    have_dst = lt__dist_box(dst, me, dlo, dhi);
  }
  /* counts in bytes; MPI's int counts bound one message */
  int64_t stotal = 0, rtotal = 0;
  for (int p = 0; st == LT_OK && p < nproc; p++) {
    int64_t sn = 0, rn = 0;
    if (have_src && lt__dist_box(dst, p, plo, phi))
      sn = intersect(rank, slo, shi, plo, phi, lo, hi);
    if (have_dst && lt__dist_box(src, p, plo, phi))
      rn = intersect(rank, dlo, dhi, plo, phi, lo, hi);
    if (sn * (int64_t)es > INT_MAX || rn * (int64_t)es > INT_MAX || stotal > INT_MAX ||
        rtotal > INT_MAX)
      st = lt__dist_fail(LT_ERR_OVERFLOW, "lt_dist: a message of more than %d bytes", INT_MAX);
    scount[p] = (int)(sn * (int64_t)es);
    rcount[p] = (int)(rn * (int64_t)es);
    sdispl[p] = (int)stotal;
    rdispl[p] = (int)rtotal;
    stotal += scount[p];
    rtotal += rcount[p];
  }
  char *sbuf = NULL, *rbuf = NULL;
  if (st == LT_OK) {
    sbuf = malloc((size_t)stotal + 1);
    rbuf = malloc((size_t)rtotal + 1);
    if (!sbuf || !rbuf) st = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "lt_dist: out of memory");
  }
  for (int p = 0; st == LT_OK && p < nproc; p++)
    if (scount[p] > 0) {
      lt__dist_box(dst, p, plo, phi);
      intersect(rank, slo, shi, plo, phi, lo, hi);
      st = pack(src_local, slo, lo, hi, sbuf + sdispl[p], (size_t)scount[p]);
    }
  st = lt__dist_agree(comm, st);
  if (st == LT_OK)
    st = lt__dist_mpi(
        MPI_Alltoallv(sbuf, scount, sdispl, MPI_BYTE, rbuf, rcount, rdispl, MPI_BYTE, comm),
        "lt_dist: MPI_Alltoallv");
  if (st == LT_OK) lt__dist_count((uint64_t)(rtotal - rcount[me]));
  for (int p = 0; st == LT_OK && p < nproc; p++)
    if (rcount[p] > 0) {
      lt__dist_box(src, p, plo, phi);
      intersect(rank, dlo, dhi, plo, phi, lo, hi);
      st = unpack(dst_local, dlo, lo, hi, rbuf + rdispl[p]);
    }
  free(sbuf);
  free(rbuf);
  free(counts);
  /* an unpack that failed here must not leave the others in the caller's next exchange */
  return lt__dist_agree(comm, st);
}

lt_status lt_dist_tensor_scatter(lt_dist_tensor *t, int root, const lt_tensor *global) {
  static const char fn[] = "lt_dist_tensor_scatter";
  LT_TRY_DIST(lt__dist_check(t, fn, "t"));
  lt_status st = LT_OK;
  lt_tensor *whole = NULL;
  if (root < 0 || root >= t->nproc)
    st = lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: root %d is outside [0, %d)", fn, root,
                       t->nproc);
  else if (t->me == root) {
    if (global == NULL)
      st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: global is NULL at root", fn);
    else if (lt_tensor_rank(global) != t->lay.rank)
      st = lt__dist_fail(LT_ERR_SHAPE_MISMATCH, "%s: global has rank %d, the tensor %d", fn,
                         lt_tensor_rank(global), t->lay.rank);
    for (int m = 0; st == LT_OK && m < t->lay.rank; m++)
      if (lt_tensor_shape(global)[m] != t->lay.shape[m])
        st =
            lt__dist_fail(LT_ERR_SHAPE_MISMATCH, "%s: global mode %d has extent %lld, not %lld", fn,
                          m, (long long)lt_tensor_shape(global)[m], (long long)t->lay.shape[m]);
    /* C order in t's dtype, on whatever device global lives */
    if (st == LT_OK) st = lt_tensor_contiguous(global, t->dtype, &whole);
  }
  lt__dist_layout from;
  lt__dist_layout_whole(&from, t->lay.rank, t->lay.shape, root < 0 || root >= t->nproc ? 0 : root);
  st = lt__dist_agree(t->comm, st);
  if (st == LT_OK) st = lt__dist_move(t->comm, t->dtype, &from, whole, &t->lay, t->local);
  lt_tensor_destroy(whole);
  return st;
}

lt_status lt_dist_tensor_gather(const lt_dist_tensor *t, int root, lt_tensor **out) {
  static const char fn[] = "lt_dist_tensor_gather";
  LT_TRY_DIST(lt__dist_check(t, fn, "t"));
  lt_status st = LT_OK;
  lt_tensor *whole = NULL;
  if (out == NULL)
    st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  else
    *out = NULL;
  if (st == LT_OK && (root < 0 || root >= t->nproc))
    st = lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: root %d is outside [0, %d)", fn, root,
                       t->nproc);
  lt__dist_layout to;
  lt__dist_layout_whole(&to, t->lay.rank, t->lay.shape, st == LT_OK ? root : 0);
  int64_t zero[LT_MAX_RANK] = {0};
  if (st == LT_OK)
    st =
        lt_tensor_empty(t->ctx, t->dtype, t->lay.rank, t->me == root ? t->lay.shape : zero, &whole);
  st = lt__dist_agree(t->comm, st);
  if (st == LT_OK) st = lt__dist_move(t->comm, t->dtype, &t->lay, t->local, &to, whole);
  if (st == LT_OK && t->me == root) {
    *out = whole;
    whole = NULL;
  }
  lt_tensor_destroy(whole);
  return st;
}

lt_status lt_dist_redistribute(const lt_dist_tensor *t, const int *grid, const int64_t *block,
                               lt_dist_tensor **out) {
  static const char fn[] = "lt_dist_redistribute";
  LT_TRY_DIST(lt__dist_check(t, fn, "t"));
  lt_status st = out ? LT_OK : lt__dist_fail(LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  lt__dist_layout lay;
  lt_dist_tensor *r = NULL;
  if (st == LT_OK)
    st = lt__dist_layout_init(&lay, t->lay.rank, t->lay.shape, grid, block, t->nproc, fn);
  if (st == LT_OK) st = lt__dist_new(t->comm, t->ctx, t->dtype, &lay, &r);
  st = lt__dist_agree(t->comm, st);
  if (st == LT_OK) st = lt__dist_move(t->comm, t->dtype, &t->lay, t->local, &r->lay, r->local);
  if (st != LT_OK) {
    lt_dist_tensor_destroy(r);
    if (out) *out = NULL;
    return st;
  }
  *out = r;
  return LT_OK;
}

lt_status lt_dist_permute(const lt_dist_tensor *t, const int *axes, lt_dist_tensor **out) {
  static const char fn[] = "lt_dist_permute";
  LT_TRY_DIST(lt__dist_check(t, fn, "t"));
  lt_status st = out ? LT_OK : lt__dist_fail(LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  int rank = t->lay.rank;
  bool seen[LT_MAX_RANK] = {false};
  if (st == LT_OK && rank > 0 && axes == NULL)
    st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: axes is NULL", fn);
  for (int m = 0; st == LT_OK && m < rank; m++) {
    if (axes[m] < 0 || axes[m] >= rank || seen[axes[m]])
      st = lt__dist_fail(LT_ERR_INVALID_ARGUMENT,
                         "%s: axes is no permutation of 0..%d (axes[%d] = %d)", fn, rank - 1, m,
                         axes[m]);
    else
      seen[axes[m]] = true;
  }
  lt_dist_tensor *r = NULL;
  lt_tensor *view = NULL;
  if (st == LT_OK) st = lt_view_permute(t->local, axes, &view);
  if (st == LT_OK) {
    r = calloc(1, sizeof *r);
    if (r == NULL) st = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  if (st == LT_OK) {
    *r = *t;
    r->local = NULL;
    for (int m = 0; m < rank; m++) {
      r->lay.shape[m] = t->lay.shape[axes[m]];
      r->lay.block[m] = t->lay.block[axes[m]];
      r->lay.grid[m] = t->lay.grid[axes[m]];
      r->lay.pstride[m] = t->lay.pstride[axes[m]];
    }
    st = lt_tensor_contiguous(view, LT_DTYPE_INVALID, &r->local);
  }
  lt_tensor_destroy(view);
  st = lt__dist_agree(t->comm, st);
  if (st != LT_OK) {
    if (r) lt_tensor_destroy(r->local);
    free(r);
    if (out) *out = NULL;
    return st;
  }
  *out = r;
  return LT_OK;
}

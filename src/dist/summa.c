/* SPDX-License-Identifier: MIT */
/* SUMMA contraction of two distributed tensors. The labels fall into the matricised roles
 * M (A and C), N (B and C), K (A and B, summed), batch (all three) and local sums (one operand
 * only). One M label is split over the pr process rows, one N label over the pc columns and one
 * K label over both (A's over the columns, B's over the rows); every other label stays whole.
 * Panels of K (the cuts of both splits) then go round: the owning process column broadcasts
 * its A panel along each row, the owning row its B panel along each column, and every rank
 * adds A_panel * B_panel into its C block with a local einsum plan. */
#include "dist/dist.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct summa {
  int pr, pc;             /* process grid; ranks >= pr * pc hold nothing */
  int ma, kk_a, nb, kk_b; /* axis of A split over rows, of A over columns, of B ... (-1: none) */
  int64_t kext;           /* extent of the split K label (1 when there is none) */
  lt__dist_layout la, lb, lc;
} summa;

static int find(const int32_t *modes, int n, int32_t label) {
  for (int i = 0; i < n; i++)
    if (modes[i] == label) return i;
  return -1;
}

/* Checks labels and extents and picks the labels to split. */
static lt_status classify(const lt_dist_tensor *a, const int32_t *ma, const lt_dist_tensor *b,
                          const int32_t *mb, int rank_c, const int32_t *mc, int *cut_m, int *cut_n,
                          int *cut_ka, int *cut_kb, int64_t *cshape) {
  static const char fn[] = "lt_dist_contract";
  const int32_t *modes[3] = {ma, mb, mc};
  int ranks[3] = {a->lay.rank, b->lay.rank, rank_c};
  for (int t = 0; t < 3; t++)
    for (int i = 0; i < ranks[t]; i++)
      if (find(modes[t], i, modes[t][i]) >= 0)
        return lt__dist_fail(LT_ERR_UNSUPPORTED, "%s: label %d repeats in %s", fn, modes[t][i],
                             t == 0   ? "A"
                             : t == 1 ? "B"
                                      : "C");
  int64_t best_m = -1, best_n = -1, best_k = -1;
  *cut_m = *cut_n = *cut_ka = *cut_kb = -1;
  for (int i = 0; i < a->lay.rank; i++) {
    int jb = find(mb, b->lay.rank, ma[i]), jc = find(mc, rank_c, ma[i]);
    int64_t e = a->lay.shape[i];
    if (jb >= 0 && b->lay.shape[jb] != e)
      return lt__dist_fail(LT_ERR_SHAPE_MISMATCH, "%s: label %d has extent %lld in A, %lld in B",
                           fn, ma[i], (long long)e, (long long)b->lay.shape[jb]);
    if (jc >= 0) cshape[jc] = e;
    if (jb < 0 && jc >= 0 && e > best_m) best_m = e, *cut_m = i;
    if (jb >= 0 && jc < 0 && e > best_k) best_k = e, *cut_ka = i, *cut_kb = jb;
  }
  for (int j = 0; j < b->lay.rank; j++) {
    int ja = find(ma, a->lay.rank, mb[j]), jc = find(mc, rank_c, mb[j]);
    if (jc >= 0) cshape[jc] = b->lay.shape[j];
    if (ja < 0 && jc >= 0 && b->lay.shape[j] > best_n) best_n = b->lay.shape[j], *cut_n = j;
  }
  for (int i = 0; i < rank_c; i++)
    if (find(ma, a->lay.rank, mc[i]) < 0 && find(mb, b->lay.rank, mc[i]) < 0)
      return lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: label %d of C is in neither operand", fn,
                           mc[i]);
  return LT_OK;
}

/* A layout with everything whole except the axes named, split over rows / columns. */
static void split_layout(lt__dist_layout *lay, int rank, const int64_t *shape, int row_axis, int pr,
                         int col_axis, int pc) {
  lt__dist_layout_whole(lay, rank, shape, 0);
  if (row_axis >= 0) {
    lay->grid[row_axis] = pr;
    lay->pstride[row_axis] = pc;
    lay->block[row_axis] = shape[row_axis] > 0 ? (shape[row_axis] + pr - 1) / pr : 1;
  }
  if (col_axis >= 0) {
    lay->grid[col_axis] = pc;
    lay->pstride[col_axis] = 1;
    lay->block[col_axis] = shape[col_axis] > 0 ? (shape[col_axis] + pc - 1) / pc : 1;
  }
}

/* pr x pc = P minimising the words a rank receives, M K / pr + K N / pc (the SUMMA volume). */
static void choose_grid(int nproc, bool has_m, bool has_n, double m, double n, int *pr, int *pc) {
  if (!has_m && !has_n) {
    *pr = *pc = 1;
    return;
  }
  if (!has_m || !has_n) {
    *pr = has_m ? nproc : 1;
    *pc = has_m ? 1 : nproc;
    return;
  }
  double best = -1;
  for (int r = 1; r <= nproc; r++) {
    if (nproc % r) continue;
    double cost = m / r + n / (nproc / r);
    if (best < 0 || cost < best) best = cost, *pr = r, *pc = nproc / r;
  }
}

/* The panel [k0, k1) along `axis` of this rank's block `src` (block origin `origin` there),
 * into buf in C order. */
static lt_status pack_panel(const lt_tensor *src, int axis, int64_t origin, int64_t k0, int64_t k1,
                            void *buf, size_t bytes) {
  int rank = lt_tensor_rank(src);
  int64_t lo[LT_MAX_RANK] = {0}, hi[LT_MAX_RANK];
  for (int m = 0; m < rank; m++)
    hi[m] = lt_tensor_shape(src)[m];
  if (axis >= 0) lo[axis] = k0 - origin, hi[axis] = k1 - origin;
  lt_tensor *v = NULL;
  LT_TRY_DIST(lt__dist_box_view(src, lo, hi, &v));
  lt_status st = lt_tensor_to_host(v, buf, bytes);
  lt_tensor_destroy(v);
  return st;
}

/* Extents of the panel [k0, k1) of the block that grid rank `owner` holds under lay. */
static size_t panel_shape(const lt__dist_layout *lay, int owner, int axis, int64_t k0, int64_t k1,
                          size_t es, int64_t *ext) {
  int64_t lo[LT_MAX_RANK], hi[LT_MAX_RANK];
  lt__dist_box(lay, owner, lo, hi);
  size_t n = es;
  for (int m = 0; m < lay->rank; m++) {
    ext[m] = m == axis ? k1 - k0 : hi[m] - lo[m];
    n *= (size_t)ext[m];
  }
  return n;
}

/* C_local += A_panel * B_panel over the caller's labels (a local einsum plan). */
static lt_status multiply(const void *abuf, const int64_t *aext, const int32_t *ma,
                          const void *bbuf, const int64_t *bext, const int32_t *mb, int rank_c,
                          const int32_t *mc, const lt_dist_tensor *a, const lt_dist_tensor *b,
                          lt_tensor *c) {
  lt_tensor *ap = NULL, *bp = NULL;
  lt_plan *plan = NULL;
  lt_status st = lt_tensor_from_host(a->ctx, a->dtype, a->lay.rank, aext, NULL, abuf, &ap);
  if (st == LT_OK) st = lt_tensor_from_host(a->ctx, b->dtype, b->lay.rank, bext, NULL, bbuf, &bp);
  const lt_tensor *ins[2] = {ap, bp};
  const int32_t *modes[2] = {ma, mb};
  if (st == LT_OK) st = lt_plan_einsum_modes(2, ins, modes, rank_c, mc, c, NULL, &plan);
  double sc[2] = {1.0, 1.0};
  if (st == LT_OK) st = lt_plan_execute(plan, ins, 2, sc, 2, c);
  lt_plan_destroy(plan);
  lt_tensor_destroy(bp);
  lt_tensor_destroy(ap);
  return st;
}

/* The SUMMA loop over K panels; every rank of the communicator runs it (ranks outside the grid
 * only join the status agreements). */
static lt_status summa_loop(const summa *s, const lt_dist_tensor *a2, const int32_t *ma,
                            const lt_dist_tensor *b2, const int32_t *mb, int rank_c,
                            const int32_t *mc, lt_dist_tensor *c2) {
  MPI_Comm comm = a2->comm, row = MPI_COMM_NULL, col = MPI_COMM_NULL;
  int me = a2->me, grid_n = s->pr * s->pc;
  int r = me < grid_n ? me / s->pc : 0, cc = me < grid_n ? me % s->pc : 0;
  lt_status st = lt__dist_mpi(MPI_Comm_split(comm, me < grid_n ? r : MPI_UNDEFINED, cc, &row),
                              "lt_dist_contract: MPI_Comm_split");
  if (st == LT_OK)
    st = lt__dist_mpi(MPI_Comm_split(comm, me < grid_n ? cc : MPI_UNDEFINED, r, &col),
                      "lt_dist_contract: MPI_Comm_split");
  size_t es = lt_dtype_size(a2->dtype);
  int64_t ba = s->kk_a >= 0 ? s->la.block[s->kk_a] : 1,
          bb = s->kk_b >= 0 ? s->lb.block[s->kk_b] : 1;
  void *abuf = NULL, *bbuf = NULL;
  /* A local failure (pending) waits for the next agreement, so that every rank leaves the loop
   * at the same panel and no broadcast is left without its partners. */
  lt_status pending = LT_OK;
  st = lt__dist_agree(comm, st);
  for (int64_t k0 = 0; st == LT_OK && k0 < s->kext;) {
    int64_t k1 = (k0 / ba + 1) * ba, kb = (k0 / bb + 1) * bb;
    if (kb < k1) k1 = kb;
    if (k1 > s->kext) k1 = s->kext;
    int ca = (int)(k0 / ba), rb = (int)(k0 / bb); /* owning column of A's panel, row of B's */
    int64_t aext[LT_MAX_RANK], bext[LT_MAX_RANK];
    size_t an = panel_shape(&s->la, r * s->pc + ca, s->kk_a, k0, k1, es, aext);
    size_t bn = panel_shape(&s->lb, rb * s->pc + cc, s->kk_b, k0, k1, es, bext);
    if (pending == LT_OK && me < grid_n) {
      abuf = malloc(an + 1);
      bbuf = malloc(bn + 1);
      if (!abuf || !bbuf)
        pending = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "lt_dist_contract: out of memory");
      else if (an > INT_MAX || bn > INT_MAX)
        pending = lt__dist_fail(LT_ERR_OVERFLOW, "lt_dist_contract: a panel of more than %d bytes",
                                INT_MAX);
      if (pending == LT_OK && cc == ca)
        pending = pack_panel(a2->local, s->kk_a, (int64_t)ca * ba, k0, k1, abuf, an);
      if (pending == LT_OK && r == rb)
        pending = pack_panel(b2->local, s->kk_b, (int64_t)rb * bb, k0, k1, bbuf, bn);
    }
    st = lt__dist_agree(comm, pending);
    if (st == LT_OK && me < grid_n && an > 0) {
      st = lt__dist_mpi(MPI_Bcast(abuf, (int)an, MPI_BYTE, ca, row), "lt_dist_contract: MPI_Bcast");
      if (cc != ca) lt__dist_count(an);
    }
    if (st == LT_OK && me < grid_n && bn > 0) {
      st = lt__dist_mpi(MPI_Bcast(bbuf, (int)bn, MPI_BYTE, rb, col), "lt_dist_contract: MPI_Bcast");
      if (r != rb) lt__dist_count(bn);
    }
    if (st == LT_OK && me < grid_n && lt_tensor_numel(c2->local) > 0)
      pending = multiply(abuf, aext, ma, bbuf, bext, mb, rank_c, mc, a2, b2, c2->local);
    free(abuf);
    free(bbuf);
    abuf = bbuf = NULL;
    k0 = k1;
  }
  if (st == LT_OK) st = pending;
  if (row != MPI_COMM_NULL) MPI_Comm_free(&row);
  if (col != MPI_COMM_NULL) MPI_Comm_free(&col);
  return st;
}

lt_status lt_dist_contract(const lt_dist_tensor *a, const int32_t *modes_a, const lt_dist_tensor *b,
                           const int32_t *modes_b, int rank_c, const int32_t *modes_c,
                           lt_dist_tensor **out) {
  static const char fn[] = "lt_dist_contract";
  LT_TRY_DIST(lt__dist_check(a, fn, "a"));
  LT_TRY_DIST(lt__dist_check(b, fn, "b"));
  lt_status st = out ? LT_OK : lt__dist_fail(LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  if (out) *out = NULL;
  int same = MPI_UNEQUAL;
  MPI_Comm_compare(a->comm, b->comm, &same);
  if (st == LT_OK && same != MPI_IDENT && same != MPI_CONGRUENT)
    st = lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: A and B live on different communicators", fn);
  if (st == LT_OK && a->dtype != b->dtype)
    st = lt__dist_fail(LT_ERR_DTYPE, "%s: A is %s, B %s", fn, lt_dtype_name(a->dtype),
                       lt_dtype_name(b->dtype));
  if (st == LT_OK && (rank_c < 0 || rank_c > LT_MAX_RANK))
    st = lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: rank_c %d is outside [0, %d]", fn, rank_c,
                       LT_MAX_RANK);
  if (st == LT_OK &&
      ((a->lay.rank && !modes_a) || (b->lay.rank && !modes_b) || (rank_c && !modes_c)))
    st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: a modes array is NULL", fn);
  summa s;
  memset(&s, 0, sizeof s);
  int64_t cshape[LT_MAX_RANK] = {0};
  if (st == LT_OK)
    st = classify(a, modes_a, b, modes_b, rank_c, modes_c, &s.ma, &s.nb, &s.kk_a, &s.kk_b, cshape);
  lt_dist_tensor *a2 = NULL, *b2 = NULL, *c2 = NULL;
  if (st == LT_OK) {
    double m = s.ma >= 0 ? (double)a->lay.shape[s.ma] : 1,
           n = s.nb >= 0 ? (double)b->lay.shape[s.nb] : 1;
    choose_grid(a->nproc, s.ma >= 0, s.nb >= 0, m, n, &s.pr, &s.pc);
    s.kext = s.kk_a >= 0 ? a->lay.shape[s.kk_a] : 1;
    split_layout(&s.la, a->lay.rank, a->lay.shape, s.ma, s.pr, s.kk_a, s.pc);
    split_layout(&s.lb, b->lay.rank, b->lay.shape, s.kk_b, s.pr, s.nb, s.pc);
    int cm = s.ma >= 0 ? find(modes_c, rank_c, modes_a[s.ma]) : -1;
    int cn = s.nb >= 0 ? find(modes_c, rank_c, modes_b[s.nb]) : -1;
    split_layout(&s.lc, rank_c, cshape, cm, s.pr, cn, s.pc);
    st = lt__dist_new(a->comm, a->ctx, a->dtype, &s.la, &a2);
    if (st == LT_OK) st = lt__dist_new(a->comm, a->ctx, b->dtype, &s.lb, &b2);
    if (st == LT_OK) st = lt__dist_new(a->comm, a->ctx, a->dtype, &s.lc, &c2);
  }
  st = lt__dist_agree(a->comm, st);
  if (st == LT_OK) st = lt__dist_move(a->comm, a->dtype, &a->lay, a->local, &s.la, a2->local);
  if (st == LT_OK) st = lt__dist_move(b->comm, b->dtype, &b->lay, b->local, &s.lb, b2->local);
  if (st == LT_OK) st = summa_loop(&s, a2, modes_a, b2, modes_b, rank_c, modes_c, c2);
  st = lt__dist_agree(a->comm, st);
  lt_dist_tensor_destroy(a2);
  lt_dist_tensor_destroy(b2);
  if (st != LT_OK) {
    lt_dist_tensor_destroy(c2);
    return st;
  }
  *out = c2;
  return LT_OK;
}

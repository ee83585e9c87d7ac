/* SPDX-License-Identifier: MIT */
/* Lowering of a pairwise contraction into map / reduce / direct / GEMM steps (see pair.h). */
#include "lower/pair.h"
#include "core/dtype.h"
#include "core/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Elements within which a packing gather along a stride stays on the same few cache lines. */
#define NEAR_STRIDE 8
/* The GEMM rate, as a share of the same GEMM on operands read as they lie, where one input is
 * read by lines (by_lines): measured 0.78-1.11, median ~0.87, on TCCG's abcdef cases (Zen 3),
 * whose small operand is cheaper packed first; where the operand is as large as the output
 * (abcde-efbad-cf), the permutation it saves outweighs that. */
#define LINE_SHARE 0.85

/* Columns from which a packed small-k B is stored with k innermost (see lower_gemm). */
#define LONG_B_COLUMNS 65536

typedef struct group {
  int n;
  int32_t mode[LT_MAX_RANK];
  int64_t size; /* product of extents */
} group;

/* ---- GEMM ---- */

/* Orders g's modes by decreasing |stride| in v, outermost first (stable insertion sort). */
static void order_by(group *g, const lt__mview *v) {
  for (int i = 1; i < g->n; i++) {
    int32_t mode = g->mode[i];
    int64_t key = llabs(lt__mview_stride(v, mode));
    int j = i;
    for (; j > 0 && llabs(lt__mview_stride(v, g->mode[j - 1])) < key; j--)
      g->mode[j] = g->mode[j - 1];
    g->mode[j] = mode;
  }
}

/* Collapses g into one dimension of v: true if consecutive modes nest exactly; *stride is the
 * innermost stride, or 0 when g's size is 1 (any stride will do). */
static bool collapse(const lt__mview *v, const group *g, const int64_t *extent, int64_t *stride) {
  *stride = 0;
  if (g->size == 1) return true;
  for (int i = 0; i + 1 < g->n; i++)
    if (lt__mview_stride(v, g->mode[i]) !=
        lt__mview_stride(v, g->mode[i + 1]) * extent[g->mode[i + 1]])
      return false;
  *stride = lt__mview_stride(v, g->mode[g->n - 1]);
  return true;
}

/* GEMM (rs, cs) for v as a rows x cols matrix over groups r and c: BLAS-compatible (one unit
 * stride, the other a leading dimension) when the strides allow, else, if the backend packs any
 * strides (p->gemm_any_strides), whatever single strides the groups collapse to. The output
 * must keep one unit stride even then (a C with none is updated element by element, slower
 * than computing into workspace and permuting), and an input must have one short stride (a
 * stepped slice, a reversal): packing gathers along it, and gathering over two long strides
 * misses the cache on every element, slower than the permutation engine's tiled copy. */
static void scatter_group(const lt__mview *v, const group *g, const int64_t *extent,
                          lt__gemm_group *out) {
  out->n = g->n;
  for (int i = 0; i < g->n; i++)
    out->extent[i] = extent[g->mode[i]], out->stride[i] = lt__mview_stride(v, g->mode[i]);
}

/* An input read by lines (p->gemm_line_max_k): its one unit stride lies on a free mode that is
 * not the innermost of its free group, whose innermost mode is the output's unit mode. */
static bool by_lines(const lt__pair *p, const lt__mview *v, const group *r, const group *c) {
  const group *f = v == &p->a ? r : c, *k = v == &p->a ? c : r;
  if (p->lines_off || k->size > p->gemm_line_max_k || f->n < 2 || p->d.buf.kind == LT__BUF_NONE ||
      lt__mview_stride(&p->d, f->mode[f->n - 1]) != 1)
    return false;
  for (int i = 0; i + 1 < f->n; i++)
    if (lt__mview_stride(v, f->mode[i]) == 1) return true;
  return false;
}

/* A group that does not collapse is scattered (gr / gc get its modes) where the backend packs
 * any strides: its packing gathers through an offset list and C's tiles are written in place
 * wherever their rows and columns step evenly, so no permutation of A, B or C is needed. The
 * same short-stride rules hold, on the groups' innermost strides, except for an input read by
 * lines (by_lines). */
static bool as_scattered(const lt__pair *p, const lt__mview *v, const group *r, const group *c,
                         int64_t *rs, int64_t *cs, lt__gemm_group *gr, lt__gemm_group *gc) {
  bool is_output = v == &p->d;
  int64_t sr, sc;
  bool r_one = collapse(v, r, p->extent, &sr), c_one = collapse(v, c, p->extent, &sc);
  if (!p->gemm_any_strides || r->n > LT__GEMM_GROUP_MODES || c->n > LT__GEMM_GROUP_MODES)
    return false;
  if (!r_one) sr = lt__mview_stride(v, r->mode[r->n - 1]);
  if (!c_one) sc = lt__mview_stride(v, c->mode[c->n - 1]);
  if (is_output ? sr != 1 && sc != 1
                : llabs(sr) > NEAR_STRIDE && llabs(sc) > NEAR_STRIDE && !by_lines(p, v, r, c))
    return false;
  if (!r_one) scatter_group(v, r, p->extent, gr);
  if (!c_one) scatter_group(v, c, p->extent, gc);
  *rs = sr, *cs = sc;
  return true;
}

static bool as_matrix_of(const lt__pair *p, const lt__mview *v, const group *r, const group *c,
                         int64_t *rs, int64_t *cs, lt__gemm_group *gr, lt__gemm_group *gc) {
  bool is_output = v == &p->d;
  int64_t sr, sc;
  gr->n = gc->n = 0;
  if (!collapse(v, r, p->extent, &sr) || !collapse(v, c, p->extent, &sc))
    return as_scattered(p, v, r, c, rs, cs, gr, gc);
  int64_t rows = r->size, cols = c->size;
  bool blas_ints = sr <= p->caps->gemm_index_max && sc <= p->caps->gemm_index_max;
  if (rows == 1 && cols == 1)
    *rs = 1, *cs = 1;
  else if (blas_ints && cols == 1 && sr >= 1)
    *rs = sr, *cs = 1;
  else if (blas_ints && rows == 1 && sc >= 1)
    *rs = sc == 1 ? cols : 1, *cs = sc;
  else if (blas_ints && sc == 1 && sr >= cols)
    *rs = sr, *cs = 1;
  else if (blas_ints && sr == 1 && sc >= rows)
    *rs = 1, *cs = sc;
  else if (p->gemm_any_strides &&
           (is_output ? sr == 1 || sc == 1 : llabs(sr) <= NEAR_STRIDE || llabs(sc) <= NEAR_STRIDE))
    *rs = sr, *cs = sc;
  else
    return false;
  return true;
}

static bool as_matrix(const lt__pair *p, const lt__mview *v, const group *r, const group *c,
                      int64_t *rs, int64_t *cs) {
  lt__gemm_group gr, gc;
  return as_matrix_of(p, v, r, c, rs, cs, &gr, &gc);
}

/* True when (rs, cs) has no unit stride: the backend gathers or scatters it element-wise. */
static bool strided_matrix(int64_t rs, int64_t cs) { return rs != 1 && cs != 1; }

static void concat(int32_t *out, int *n, const group *g) {
  for (int i = 0; i < g->n; i++)
    out[(*n)++] = g->mode[i];
}

/* The dtype the GEMM step reads A and B in: their own when both are f16 or both bf16 (no unary
 * to apply) and the backend widens them itself while packing, else the compute dtype. */
static lt_dtype gemm_in_dtype(const lt__pair *p) {
  lt_dtype t = p->a.dtype;
  bool half = t == LT_F16 || t == LT_BF16;
  if (p->gemm_16bit && half && p->compute == LT_F32 && p->b.dtype == t &&
      p->unary[0] == LT_UNARY_IDENTITY && p->unary[1] == LT_UNARY_IDENTITY)
    return t;
  return p->compute;
}

/* Whether the GEMM step cannot read v as its matrix (r, c) and gemm_operand packs it. */
static bool needs_pack(const lt__pair *p, const lt__mview *v, lt_unary_op unary, const group *r,
                       const group *c) {
  int64_t rs, cs;
  lt__gemm_group gr, gc;
  return v->dtype != gemm_in_dtype(p) || unary != LT_UNARY_IDENTITY ||
         !as_matrix_of(p, v, r, c, &rs, &cs, &gr, &gc);
}

/* Fills one GEMM matrix from v (in place or packed over batch+rows+cols, in the dtype the step
 * reads: packing a 16-bit operand keeps it 16-bit, exactly). */
static lt_status gemm_operand(lt__program *prog, const lt__pair *p, const lt__mview *v,
                              lt_unary_op unary, const group *bt, const group *r, const group *c,
                              bool c_first, lt__matrix *mat, lt__bufref *buf, bool *packed) {
  lt__mview use = *v;
  int64_t rs, cs;
  lt_dtype in = gemm_in_dtype(p);
  *packed = needs_pack(p, v, unary, r, c);
  if (!*packed) {
    as_matrix_of(p, v, r, c, &rs, &cs, &mat->rows, &mat->cols);
  } else {
    /* Batch modes the operand lacks (free modes promoted to the batch) stay out: its batch
     * stride for them is 0. */
    int32_t modes[LT_MAX_RANK];
    int n = 0;
    for (int i = 0; i < bt->n; i++)
      if (lt__mview_has(v, bt->mode[i])) modes[n++] = bt->mode[i];
    concat(modes, &n, c_first ? c : r);
    concat(modes, &n, c_first ? r : c);
    LT_TRY(lt__pair_pack(prog, p->extent, v, unary, n, modes, in, &use));
    as_matrix_of(p, &use, r, c, &rs, &cs, &mat->rows, &mat->cols);
  }
  mat->offset = use.offset;
  mat->rs = rs;
  mat->cs = cs;
  for (int i = 0; i < bt->n; i++)
    mat->batch_strides[i] = lt__mview_stride(&use, bt->mode[i]);
  *buf = use.buf;
  return LT_OK;
}

/* Packed bytes if A is ordered (M, K) and B (K, N) with K in the current order. */
static int64_t packed_cost(const lt__pair *p, const group *m, const group *n, const group *k) {
  int64_t rs, cs, cost = 0;
  if (!as_matrix(p, &p->a, m, k, &rs, &cs)) cost += m->size * k->size;
  if (!as_matrix(p, &p->b, k, n, &rs, &cs)) cost += k->size * n->size;
  return cost;
}

/* One way to run the pair as batched GEMM: the groups (in order) and what must be copied. */
typedef struct gemm_cfg {
  group bt, m, n, k;
  bool d_direct;  /* BLAS writes D in place */
  bool lines_off; /* inputs by_lines would read in place are packed */
  double cost;    /* modelled seconds */
} gemm_cfg;

/* The modelled machine for choosing among configurations comes from the backend's caps
 * (p->caps): relative figures are what matter. */

/* GEMM efficiency along one dimension: small extents waste the micro-kernel. */
static double dim_efficiency(int64_t x) { return (double)x / ((double)x + 8.0); }

static int64_t operand_elems(const lt__pair *p, const lt__mview *v, const group *bt, const group *r,
                             const group *c) {
  int64_t n = r->size * c->size;
  for (int i = 0; i < bt->n; i++)
    if (lt__mview_has(v, bt->mode[i])) n *= p->extent[bt->mode[i]];
  return n;
}

/* The modelled GEMM rate of cfg: the measured one of its k class and engine (an operand
 * without a BLAS layout goes to the engine that takes any strides), lowered for extents that
 * waste the register tile (k's own waste is in the small-k rate where that was measured). */
/* Whether the GEMM step reads v as matrix (r, c) by lines (by_lines): no short stride. */
static bool read_by_lines(const lt__pair *p, const lt__mview *v, const group *r, const group *c) {
  int64_t rs, cs;
  lt__gemm_group gr, gc;
  if (!as_matrix_of(p, v, r, c, &rs, &cs, &gr, &gc)) return false;
  int64_t sr = gr.n ? gr.stride[gr.n - 1] : rs, sc = gc.n ? gc.stride[gc.n - 1] : cs;
  return llabs(sr) > NEAR_STRIDE && llabs(sc) > NEAR_STRIDE;
}

static double gemm_rate(const lt__pair *p, const gemm_cfg *cfg) {
  int64_t rs, cs;
  lt__gemm_group gr, gc;
  bool blas = true;
  const lt__mview *v[3] = {&p->a, &p->b, &p->d};
  const group *rows[3] = {&cfg->m, &cfg->k, &cfg->m}, *cols[3] = {&cfg->k, &cfg->n, &cfg->n};
  for (int i = 0; i < 3 && blas; i++) {
    if (i == 2 && !cfg->d_direct) break;
    if (as_matrix_of(p, v[i], rows[i], cols[i], &rs, &cs, &gr, &gc) &&
        (strided_matrix(rs, cs) || gr.n || gc.n))
      blas = false;
  }
  bool small_k = cfg->k.size <= LT__CAPS_SMALL_K && p->caps->small_k_gemm_share > 0;
  double share = small_k
                     ? (blas ? p->caps->small_k_gemm_share : p->caps->strided_small_k_gemm_share)
                     : (blas ? 1.0 : p->caps->strided_gemm_share);
  if (share <= 0) share = 1.0;
  if (read_by_lines(p, &p->a, &cfg->m, &cfg->k) || read_by_lines(p, &p->b, &cfg->k, &cfg->n))
    share *= LINE_SHARE;
  double eff = dim_efficiency(cfg->m.size) * dim_efficiency(cfg->n.size) *
               (small_k ? 1.0 : dim_efficiency(cfg->k.size));
  return p->caps->gemm_flops * share * eff;
}

/* Whether the GEMM step writes D (f16 / bf16 from f32 compute) itself: a plain matrix, and no
 * C to copy into D first (that copy would round C to D's dtype before beta scales it). */
static bool stores_16bit(const lt__pair *p, const group *m, const group *n) {
  int64_t rs, cs;
  lt__gemm_group gr, gc;
  return p->gemm_store_16bit && p->compute == LT_F32 &&
         (p->d.dtype == LT_F16 || p->d.dtype == LT_BF16) &&
         !(p->has_c && p->beta != LT__SCALAR_ZERO) &&
         as_matrix_of(p, &p->d, m, n, &rs, &cs, &gr, &gc) && gr.n == 0 && gc.n == 0;
}

/* Seconds to copy an operand of `elems` elements once: through DRAM past the caches. */
static double copy_seconds(const lt__pair *p, double elems) {
  double per = p->caps->copy_seconds, big = p->caps->big_copy_seconds;
  if (big > per && elems * (double)lt_dtype_size(p->compute) > (double)LT__CAPS_BIG_COPY_BYTES)
    per = big;
  return elems * per;
}

/* Orders the groups of cfg and prices it: packing, unpacking, GEMM efficiency, calls. */
static void configure(const lt__pair *p, gemm_cfg *cfg) {
  int64_t rs, cs;
  bool d_ws = p->d.buf.kind == LT__BUF_NONE;
  /* D in place if its layout allows; else M and N follow A and B, and D is unpacked after. */
  order_by(&cfg->bt, d_ws ? &p->a : &p->d);
  order_by(&cfg->m, &p->d);
  order_by(&cfg->n, &p->d);
  cfg->d_direct =
      !d_ws && (p->d.dtype == p->compute ? as_matrix(p, &p->d, &cfg->m, &cfg->n, &rs, &cs)
                                         : stores_16bit(p, &cfg->m, &cfg->n));
  if (!cfg->d_direct) {
    order_by(&cfg->m, &p->a);
    order_by(&cfg->n, &p->b);
  }
  group kb = cfg->k;
  order_by(&cfg->k, &p->a);
  order_by(&kb, &p->b);
  if (packed_cost(p, &cfg->m, &cfg->n, &kb) < packed_cost(p, &cfg->m, &cfg->n, &cfg->k))
    cfg->k = kb;
  /* A pack costs a pass; an operand the backend gathers element-wise while packing, half. */
  double a_elems = (double)operand_elems(p, &p->a, &cfg->bt, &cfg->m, &cfg->k);
  double b_elems = (double)operand_elems(p, &p->b, &cfg->bt, &cfg->k, &cfg->n);
  double a_passes = 0, b_passes = 0, d_passes = 0;
  lt__gemm_group gr, gc;
  lt_dtype in = gemm_in_dtype(p);
  if (p->a.dtype != in || p->unary[0] != LT_UNARY_IDENTITY ||
      !as_matrix_of(p, &p->a, &cfg->m, &cfg->k, &rs, &cs, &gr, &gc))
    a_passes = 1.0;
  else if (strided_matrix(rs, cs) || gr.n || gc.n)
    a_passes = 0.5;
  if (p->b.dtype != in || p->unary[1] != LT_UNARY_IDENTITY ||
      !as_matrix_of(p, &p->b, &cfg->k, &cfg->n, &rs, &cs, &gr, &gc))
    b_passes = 1.0;
  else if (strided_matrix(rs, cs) || gr.n || gc.n)
    b_passes = 0.5;
  double d_elems = (double)(cfg->bt.size * cfg->m.size * cfg->n.size);
  if (!cfg->d_direct && !d_ws) d_passes = 2.0;
  double flops =
      2.0 * (double)cfg->bt.size * (double)cfg->m.size * (double)cfg->n.size * (double)cfg->k.size;
  cfg->cost = a_passes * copy_seconds(p, a_elems) + b_passes * copy_seconds(p, b_elems) +
              d_passes * copy_seconds(p, d_elems) + flops / gemm_rate(p, cfg) +
              (double)cfg->bt.size * p->caps->call_seconds;
}

static void group_add(group *g, int32_t mode, const int64_t *extent);

/* Tries moving each subset of the free modes into the batch (a loop of smaller GEMMs over
 * them) and keeps the cheapest configuration: e.g. C[a,b,c] = A[a,c,d].B[d,b] runs as one
 * GEMM per a, with no copy of C, instead of a GEMM into workspace and a permutation. */
static void choose_config(lt__pair *p, const group *bt, const group *m, const group *n,
                          const group *k, gemm_cfg *best) {
  int32_t free_modes[2 * LT_MAX_RANK];
  bool from_m[2 * LT_MAX_RANK];
  int nf = 0;
  for (int i = 0; i < m->n; i++)
    free_modes[nf] = m->mode[i], from_m[nf++] = true;
  for (int i = 0; i < n->n; i++)
    free_modes[nf] = n->mode[i], from_m[nf++] = false;
  int limit = nf > 10 ? 10 : nf; /* at most 1024 candidates */
  best->cost = INFINITY;
  for (uint32_t set = 0; set < (1u << limit); set++) {
    gemm_cfg c = {.bt = *bt, .m = {.size = 1}, .n = {.size = 1}, .k = *k};
    for (int i = 0; i < nf; i++) {
      bool promote = i < limit && (set >> i & 1);
      group_add(promote ? &c.bt : from_m[i] ? &c.m : &c.n, free_modes[i], p->extent);
    }
    if (c.bt.n > LT_MAX_RANK) continue;
    /* An input read by lines is also priced packed (a small one costs less so: its
     * permutation is cheap and lines run below the packed operand's rate). */
    for (int off = 0; off < 2; off++) {
      p->lines_off = off;
      gemm_cfg t = c;
      t.lines_off = off;
      configure(p, &t);
      if (t.cost < best->cost) *best = t;
      if (!read_by_lines(p, &p->a, &t.m, &t.k) && !read_by_lines(p, &p->b, &t.k, &t.n)) break;
    }
  }
}

/* Lowers the pair to GEMM. With `in_place_only` (a contraction small enough for the direct
 * kernel), adds nothing and sets *declined unless it is one GEMM with no copy before or after
 * that the backend runs without allocating. */
static lt_status lower_gemm(lt_context *ctx, lt__program *prog, lt__pair *p, group *bt0, group *m0,
                            group *n0, group *k0, bool in_place_only, bool *declined,
                            lt__how *how) {
  int64_t rs, cs;
  gemm_cfg cfg;
  choose_config(p, bt0, m0, n0, k0, &cfg);
  p->lines_off = cfg.lines_off;
  group *bt = &cfg.bt, *m = &cfg.m, *n = &cfg.n, *k = &cfg.k;
  bool d_direct = cfg.d_direct;
  *declined = in_place_only && !(d_direct && ctx->backend->gemm_in_place &&
                                 !needs_pack(p, &p->a, p->unary[0], m, k) &&
                                 !needs_pack(p, &p->b, p->unary[1], k, n));
  if (*declined) return LT_OK;
  lt__gemm_step g;
  memset(&g, 0, sizeof g);
  if (d_direct) as_matrix_of(p, &p->d, m, n, &rs, &cs, &g.c.rows, &g.c.cols);

  lt__step *s;
  lt__bufref ba, bb;
  bool pa, pb;
  LT_TRY(gemm_operand(prog, p, &p->a, p->unary[0], bt, m, k, false, &g.a, &ba, &pa));
  /* A long packed B with small k keeps each column's k values together (k innermost): the
   * streaming engine reads whole rows of B^T from memory then, and the copy into that order was
   * as cheap or cheaper (abcde-efbad-cf: 18 -> 30 GFLOP/s on Zen 3, permutation 60 -> 30 ms,
   * GEMM 56 -> 45 ms); a B of a few thousand columns is packed again into L2 anyway (TCCG's
   * abcdef cases read 0.83-1.08 of the old order). */
  bool k_inner = k->size <= LT__CAPS_SMALL_K && n->size >= LONG_B_COLUMNS;
  LT_TRY(gemm_operand(prog, p, &p->b, p->unary[1], bt, k, n, k_inner, &g.b, &bb, &pb));
  g.dtype = p->compute;
  g.ab_dtype = gemm_in_dtype(p);
  g.c_dtype = d_direct ? p->d.dtype : p->compute;
  g.exact = p->lowp_exact;
  g.m = m->size, g.n = n->size, g.k = k->size;
  g.batch_rank = bt->n;
  for (int i = 0; i < bt->n; i++)
    g.batch_shape[i] = p->extent[bt->mode[i]];
  *how = bt->size > 1 ? LT__HOW_BATCHED_GEMM : LT__HOW_GEMM;
  if (in_place_only) { /* no copies (checked above): A, B and D as they lie */
    g.c.offset = p->d.offset;
    g.c.rs = rs;
    g.c.cs = cs;
    if (!ctx->backend->gemm_in_place(ctx, &g)) {
      *declined = true;
      return LT_OK;
    }
  }

  lt__mview out = p->d;
  lt__scalar_role beta = p->beta;
  if (!d_direct) {
    int32_t modes[LT_MAX_RANK];
    int r = 0;
    concat(modes, &r, bt);
    concat(modes, &r, m);
    concat(modes, &r, n);
    /* Extent-1 modes join no group, but an intermediate must keep them: the next pair of the
     * einsum path names them. */
    for (int i = 0; i < p->d.rank; i++)
      if (p->extent[p->d.mode[i]] == 1) modes[r++] = p->d.mode[i];
    LT_TRY(lt__pair_ws_view(prog, p->extent, r, modes, p->compute, &out));
    as_matrix(p, &out, m, n, &rs, &cs);
    beta = LT__SCALAR_ZERO;
  } else if (p->has_c && p->beta != LT__SCALAR_ZERO) {
    /* D = C first, so that BLAS can add beta*D in place. */
    s = lt__pair_map_into_d(prog, p);
    if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
    lt__pair_operand_over(&p->c, p->d.rank, p->d.mode, &s->u.map.in[0]);
    s->u.map.unary[0] = p->unary[2];
    s->u.map.n_in = 1;
    s->buf[0] = p->c.buf;
  }
  g.c.offset = out.offset;
  g.c.rs = rs;
  g.c.cs = cs;
  for (int i = 0; i < bt->n; i++)
    g.c.batch_strides[i] = lt__mview_stride(&out, bt->mode[i]);
  p->gemm_engine = ctx->backend->gemm_choose ? ctx->backend->gemm_choose(ctx, &g) : NULL;
  p->gemm_shape[0] = g.m, p->gemm_shape[1] = g.n, p->gemm_shape[2] = g.k;
  p->gemm_shape[3] = bt->size;
  s = lt__program_add(prog, LT__STEP_GEMM);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  s->u.gemm = g;
  s->buf[0] = ba;
  s->buf[1] = bb;
  s->buf[2] = out.buf;
  bool finish_int = p->int_compute != LT_DTYPE_INVALID;
  s->scalar[0] = finish_int ? LT__SCALAR_ONE : p->alpha;
  s->scalar[1] = beta;
  if (d_direct) return LT_OK;
  if (p->d.buf.kind == LT__BUF_NONE) {
    /* The caller takes the workspace result as D (its intermediate), with the extent-1 modes
     * that no group holds. */
    for (int i = 0; i < p->d.rank; i++)
      if (p->extent[p->d.mode[i]] == 1) {
        out.mode[out.rank] = p->d.mode[i];
        out.stride[out.rank++] = 0;
      }
    p->d = out;
    return LT_OK;
  }
  if (finish_int) p->compute = p->int_compute;
  s = lt__pair_map_into_d(prog, p);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  lt__pair_operand_over(&out, p->d.rank, p->d.mode, &s->u.map.in[0]);
  s->u.map.n_in = 1;
  s->buf[0] = out.buf;
  s->scalar[0] = finish_int ? p->alpha : LT__SCALAR_ONE;
  if (p->beta != LT__SCALAR_ZERO) lt__pair_add_beta_term(p, s, 1);
  return LT_OK;
}

static void group_add(group *g, int32_t mode, const int64_t *extent) {
  g->mode[g->n++] = mode;
  g->size *= extent[mode];
}

/* Allocates D in workspace over its modes in the given order (for intermediates). */
static lt_status alloc_d(lt__program *prog, lt__pair *p) {
  int32_t modes[LT_MAX_RANK];
  memcpy(modes, p->d.mode, sizeof(int32_t) * (size_t)p->d.rank);
  return lt__pair_ws_view(prog, p->extent, p->d.rank, modes, p->compute, &p->d);
}

lt_status lt__lower_pair(lt_context *ctx, lt__pair *p, lt__program *prog, lt__how *how) {
  p->gemm_any_strides =
      ctx->backend->gemm_takes_any_strides && ctx->backend->gemm_takes_any_strides(ctx);
  p->gemm_16bit = ctx->backend->gemm_takes_16bit && ctx->backend->gemm_takes_16bit(ctx);
  p->gemm_store_16bit = ctx->backend->gemm_stores_16bit && ctx->backend->gemm_stores_16bit(ctx);
  p->gemm_line_max_k =
      ctx->backend->gemm_line_max_k ? ctx->backend->gemm_line_max_k(ctx, p->compute) : 0;
  p->lines_off = false;
  p->int_compute = LT_DTYPE_INVALID;
  p->caps = ctx->backend->measured_caps ? ctx->backend->measured_caps(ctx) : &ctx->backend->caps;
  const int64_t index_max = p->caps->gemm_index_max;
  for (int i = 0; i < p->d.rank; i++)
    LT_RETURN_IF(!lt__mview_has(&p->a, p->d.mode[i]) && !lt__mview_has(&p->b, p->d.mode[i]),
                 LT_ERR_INVALID_ARGUMENT, "contraction: output mode %d appears in neither A nor B",
                 (int)p->d.mode[i]);
  lt__pair_canonical_order(p);
  LT_TRY(lt__pair_reduce_private(prog, p, &p->a, &p->b, &p->unary[0]));
  LT_TRY(lt__pair_reduce_private(prog, p, &p->b, &p->a, &p->unary[1]));

  group bt = {.size = 1}, m = {.size = 1}, n = {.size = 1}, k = {.size = 1};
  int64_t d_numel = 1;
  bool any_zero = false;
  for (int i = 0; i < p->d.rank; i++) {
    int32_t md = p->d.mode[i];
    d_numel *= p->extent[md];
    if (p->extent[md] == 1) continue; /* extent-1 modes take part in no group */
    bool in_a = lt__mview_has(&p->a, md), in_b = lt__mview_has(&p->b, md);
    group_add(in_a && in_b ? &bt : in_a ? &m : &n, md, p->extent);
  }
  for (int i = 0; i < p->a.rank; i++) {
    int32_t ma = p->a.mode[i];
    if (p->extent[ma] == 0) any_zero = true;
    if (!lt__mview_has(&p->d, ma) && p->extent[ma] != 1) group_add(&k, ma, p->extent);
  }
  for (int i = 0; i < p->b.rank; i++)
    if (p->extent[p->b.mode[i]] == 0) any_zero = true;

  if (d_numel == 0) {
    *how = LT__HOW_EMPTY;
    return p->d.buf.kind == LT__BUF_NONE ? alloc_d(prog, p) : LT_OK;
  }
  bool allocate_d = p->d.buf.kind == LT__BUF_NONE;
  /* Integer compute takes the exact direct kernel (GEMM is f32/f64 only), unless the float
   * GEMM is exact for it. */
  bool exact = !lt__dtype_is_float(p->compute);
  bool tiny = ctx->backend->contract &&
              2.0 * (double)bt.size * (double)m.size * (double)n.size * (double)k.size <=
                  p->caps->direct_max_flops;
  lt_dtype float_compute = exact ? lt__pair_exact_float_compute(p, k.size) : LT_DTYPE_INVALID;
  if (float_compute != LT_DTYPE_INVALID && !tiny && !any_zero && k.n > 0 && m.size <= index_max &&
      n.size <= index_max && k.size <= index_max) {
    if (allocate_d) LT_TRY(alloc_d(prog, p)); /* an intermediate keeps the integer dtype */
    p->int_compute = p->compute;
    p->compute = float_compute;
    bool declined;
    return lower_gemm(ctx, prog, p, &bt, &m, &n, &k, false, &declined, how);
  }
  if (tiny && !any_zero && k.n > 0 && !exact && m.size <= index_max && n.size <= index_max &&
      k.size <= index_max) {
    /* One GEMM on the operands as they lie beats the direct kernel's per-element walk even
     * at a few thousand flops (16^3: 0.3 us against 26); with a copy, or an engine that packs
     * into scratch (which would escape a plan's memory limit), it does not. */
    if (allocate_d) LT_TRY(alloc_d(prog, p));
    allocate_d = false;
    /* 16-bit operands the GEMM engine converts while packing: the direct kernel converts
     * every element of every product in scalar code (16^3 f16: 46 us, packed GEMM ~1 us), so
     * these take GEMM with its small packing scratch. */
    bool half = gemm_in_dtype(p) != p->compute;
    bool declined;
    LT_TRY(lower_gemm(ctx, prog, p, &bt, &m, &n, &k, !half, &declined, how));
    if (!declined) return LT_OK;
  }
  if (any_zero || k.n == 0 || exact || tiny || m.size > index_max || n.size > index_max ||
      k.size > index_max) {
    if (allocate_d) LT_TRY(alloc_d(prog, p));
    if (any_zero) {
      *how = LT__HOW_FILL;
      return lt__pair_lower_fill(prog, p);
    }
    if (k.n == 0) {
      *how = LT__HOW_ELEMENTWISE;
      return lt__pair_lower_elementwise(prog, p);
    }
    if (ctx->backend->contract) {
      *how = LT__HOW_DIRECT;
      lt__mview a = p->a, b = p->b;
      /* The direct kernel applies no unary: transform those operands first. */
      if (p->unary[0] != LT_UNARY_IDENTITY)
        LT_TRY(lt__pair_pack(prog, p->extent, &a, p->unary[0], a.rank, a.mode, p->compute, &p->a));
      if (p->unary[1] != LT_UNARY_IDENTITY)
        LT_TRY(lt__pair_pack(prog, p->extent, &b, p->unary[1], b.rank, b.mode, p->compute, &p->b));
      if (p->has_c && p->unary[2] != LT_UNARY_IDENTITY) {
        lt__mview c = p->c;
        LT_TRY(lt__pair_pack(prog, p->extent, &c, p->unary[2], c.rank, c.mode, p->compute, &p->c));
      }
      return lt__pair_lower_direct(prog, p, k.n, k.mode);
    }
    LT_RETURN_IF(exact, LT_ERR_UNSUPPORTED,
                 "contraction: integer compute (%s) needs a direct kernel; backend %s has none",
                 lt_dtype_name(p->compute), ctx->backend->name);
    return lt__error(LT_ERR_UNSUPPORTED,
                     "contraction: a dimension exceeds the BLAS integer range and the backend "
                     "has no direct kernel");
  }
  bool declined;
  return lower_gemm(ctx, prog, p, &bt, &m, &n, &k, false, &declined, how);
}

/* SPDX-License-Identifier: MIT */
/* The small pieces every pair lowering shares (pair.c, pair_direct.c): mode lookups in a view,
 * step operands over a mode order, workspace views and packs, the sums of modes private to one
 * operand, and the final map into D. */
#include "core/error.h"
#include "lower/pair.h"

#include <string.h>

int64_t lt__mview_stride(const lt__mview *v, int32_t mode) {
  for (int i = 0; i < v->rank; i++)
    if (v->mode[i] == mode) return v->stride[i];
  return 0;
}

bool lt__mview_has(const lt__mview *v, int32_t mode) {
  for (int i = 0; i < v->rank; i++)
    if (v->mode[i] == mode) return true;
  return false;
}

void lt__pair_operand_over(const lt__mview *v, int rank, const int32_t *modes, lt__operand *op) {
  op->mem = NULL;
  op->offset = v->offset;
  op->dtype = v->dtype;
  for (int i = 0; i < rank; i++)
    op->strides[i] = lt__mview_stride(v, modes[i]);
}

/* Output of the final map: D = in0 [* in1] + beta*C, with C = D itself when there is none. */
void lt__pair_add_beta_term(const lt__pair *p, lt__step *s, int slot) {
  lt__map_step *m = &s->u.map;
  const lt__mview *c = p->has_c ? &p->c : &p->d;
  lt__pair_operand_over(c, p->d.rank, p->d.mode, &m->in[slot]);
  m->unary[slot] = p->has_c ? p->unary[2] : LT_UNARY_IDENTITY;
  s->buf[slot] = c->buf;
  s->scalar[slot] = p->beta;
  m->n_in = slot + 1;
  if (slot == 1)
    m->op_ab = LT_BINARY_ADD;
  else
    m->op_abc = LT_BINARY_ADD;
  s->drop_last_if_beta_zero = p->beta == LT__SCALAR_BETA;
}

lt__step *lt__pair_map_into_d(lt__program *prog, const lt__pair *p) {
  lt__step *s = lt__program_add(prog, LT__STEP_MAP);
  if (s == NULL) return NULL;
  lt__map_step *m = &s->u.map;
  m->rank = p->d.rank;
  for (int i = 0; i < p->d.rank; i++)
    m->shape[i] = p->extent[p->d.mode[i]];
  lt__pair_operand_over(&p->d, p->d.rank, p->d.mode, &m->out);
  s->buf[3] = p->d.buf;
  m->compute = p->compute;
  return s;
}

/* Contiguous workspace view over `modes` (C order) of `dtype`. */
lt_status lt__pair_ws_view(lt__program *prog, const int64_t *extent, int rank, const int32_t *modes,
                           lt_dtype dtype, lt__mview *out) {
  memset(out, 0, sizeof *out);
  out->buf = (lt__bufref){LT__BUF_WS, 0};
  out->dtype = dtype;
  out->rank = rank;
  int64_t n = 1;
  for (int i = rank - 1; i >= 0; i--) {
    out->mode[i] = modes[i];
    out->stride[i] = n;
    n *= extent[modes[i]];
  }
  return lt__program_ws(prog, dtype, n, &out->offset);
}

/* Materialises `src` over `modes` into fresh workspace (conversion and unary on the way). */
lt_status lt__pair_pack(lt__program *prog, const int64_t *extent, const lt__mview *src,
                        lt_unary_op unary, int rank, const int32_t *modes, lt_dtype dtype,
                        lt__mview *out) {
  LT_TRY(lt__pair_ws_view(prog, extent, rank, modes, dtype, out));
  lt__step *s = lt__program_add(prog, LT__STEP_MAP);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  lt__map_step *m = &s->u.map;
  m->rank = rank;
  for (int i = 0; i < rank; i++)
    m->shape[i] = extent[modes[i]];
  m->n_in = 1;
  lt__pair_operand_over(src, rank, modes, &m->in[0]);
  lt__pair_operand_over(out, rank, modes, &m->out);
  m->unary[0] = unary;
  m->compute = lt_dtype_size(dtype) == 2 ? LT_F32 : dtype; /* a 16-bit GEMM operand: exact */
  s->buf[0] = src->buf;
  s->buf[3] = out->buf;
  return LT_OK;
}

lt_status lt__pair_reduce_private(lt__program *prog, lt__pair *p, lt__mview *v,
                                  const lt__mview *other, lt_unary_op *unary) {
  int32_t keep[LT_MAX_RANK], red[LT_MAX_RANK];
  int nk = 0, nr = 0;
  for (int i = 0; i < v->rank; i++) {
    if (lt__mview_has(other, v->mode[i]) || lt__mview_has(&p->d, v->mode[i]))
      keep[nk++] = v->mode[i];
    else
      red[nr++] = v->mode[i];
  }
  if (nr == 0) return LT_OK;
  lt__mview out;
  LT_TRY(lt__pair_ws_view(prog, p->extent, nk, keep, p->compute, &out));
  lt__step *s = lt__program_add(prog, LT__STEP_REDUCE);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  lt__reduce_step *r = &s->u.reduce;
  r->rank = nk;
  for (int i = 0; i < nk; i++)
    r->shape[i] = p->extent[keep[i]];
  r->red_rank = nr;
  for (int i = 0; i < nr; i++)
    r->red_shape[i] = p->extent[red[i]];
  lt__pair_operand_over(v, nk, keep, &r->in);
  for (int i = 0; i < nr; i++)
    r->in_red_strides[i] = lt__mview_stride(v, red[i]);
  lt__pair_operand_over(&out, nk, keep, &r->out);
  r->unary = *unary;
  r->op = LT_REDUCE_SUM;
  r->compute = p->compute;
  s->buf[0] = v->buf;
  s->buf[1] = out.buf;
  s->scalar[0] = LT__SCALAR_ONE;
  s->scalar[1] = LT__SCALAR_ZERO;
  *v = out;
  *unary = LT_UNARY_IDENTITY;
  return LT_OK;
}

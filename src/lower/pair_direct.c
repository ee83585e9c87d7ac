/* SPDX-License-Identifier: MIT */
/* The lowerings of a pair that need no GEMM: fill (a contracted extent is 0), elementwise (no
 * contracted mode) and the backend's direct kernel (small problems); see pair.h. */
#include "core/error.h"
#include "lower/pair.h"

/* Some contracted mode has extent 0: D = beta*C. */
lt_status lt__pair_lower_fill(lt__program *prog, const lt__pair *p) {
  lt__step *s = lt__pair_map_into_d(prog, p);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  if (p->beta == LT__SCALAR_ZERO) {
    s->scalar[0] = LT__SCALAR_ZERO;
    return LT_OK;
  }
  lt__pair_add_beta_term(p, s, 0);
  return LT_OK;
}

/* No contracted mode: D = alpha*A*B + beta*C elementwise (outer and Hadamard products). */
lt_status lt__pair_lower_elementwise(lt__program *prog, const lt__pair *p) {
  lt__step *s = lt__pair_map_into_d(prog, p);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  lt__map_step *m = &s->u.map;
  lt__pair_operand_over(&p->a, p->d.rank, p->d.mode, &m->in[0]);
  lt__pair_operand_over(&p->b, p->d.rank, p->d.mode, &m->in[1]);
  m->unary[0] = p->unary[0];
  m->unary[1] = p->unary[1];
  m->op_ab = LT_BINARY_MUL;
  m->n_in = 2;
  s->buf[0] = p->a.buf;
  s->buf[1] = p->b.buf;
  s->scalar[0] = p->alpha;
  s->scalar[1] = LT__SCALAR_ONE;
  if (p->beta != LT__SCALAR_ZERO) lt__pair_add_beta_term(p, s, 2);
  return LT_OK;
}

lt_status lt__pair_lower_direct(lt__program *prog, const lt__pair *p, int nk, const int32_t *k) {
  lt__step *s = lt__program_add(prog, LT__STEP_CONTRACT);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  lt__contract_step *c = &s->u.contract;
  int32_t modes[2 * LT_MAX_RANK];
  int r = 0;
  for (int i = 0; i < p->d.rank; i++)
    modes[r++] = p->d.mode[i];
  for (int i = 0; i < nk; i++)
    modes[r++] = k[i];
  LT_RETURN_IF(r > LT_MAX_RANK, LT_ERR_UNSUPPORTED,
               "contraction: %d output and contracted modes exceed the rank limit %d", r,
               LT_MAX_RANK);
  c->rank = r;
  c->out_rank = p->d.rank;
  for (int i = 0; i < r; i++)
    c->shape[i] = p->extent[modes[i]];
  lt__pair_operand_over(&p->a, r, modes, &c->a);
  lt__pair_operand_over(&p->b, r, modes, &c->b);
  lt__pair_operand_over(&p->d, p->d.rank, p->d.mode, &c->out);
  c->compute = p->compute;
  s->buf[0] = p->a.buf;
  s->buf[1] = p->b.buf;
  s->buf[2] = p->d.buf;
  if (p->has_c) {
    lt__pair_operand_over(&p->c, p->d.rank, p->d.mode, &c->c);
    c->has_c = true;
    s->buf[3] = p->c.buf;
  }
  s->scalar[0] = p->alpha;
  s->scalar[1] = p->beta;
  return LT_OK;
}

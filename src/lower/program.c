/* SPDX-License-Identifier: MIT */
/* Building and running lowered step lists (see program.h). */
#include "lower/program.h"
#include "core/checked.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

void lt__program_init(lt__program *p, lt_context *ctx) {
  memset(p, 0, sizeof *p);
  p->ctx = ctx;
}

lt__step *lt__program_add(lt__program *p, lt__step_kind kind) {
  if (p->n_steps == p->cap_steps) {
    int cap = p->cap_steps ? 2 * p->cap_steps : 4;
    lt__step *grown = lt__host_realloc(p->ctx, p->steps, sizeof *grown * (size_t)p->cap_steps,
                                       sizeof *grown * (size_t)cap);
    if (grown == NULL) {
      lt__error(LT_ERR_OUT_OF_MEMORY, "out of memory for the steps of a plan (%d steps)", cap);
      return NULL;
    }
    p->steps = grown;
    p->cap_steps = cap;
  }
  lt__step *s = &p->steps[p->n_steps++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  return s;
}

lt_status lt__program_ws(lt__program *p, lt_dtype dtype, int64_t n, int64_t *elem_offset) {
  int64_t bytes;
  size_t es = lt_dtype_size(dtype);
  LT_RETURN_IF(lt__mul_overflow(n, (int64_t)es, &bytes) || bytes > INT64_MAX / 2, LT_ERR_OVERFLOW,
               "workspace of %lld elements overflows", (long long)n);
  size_t start = (p->ws_bytes + 63) / 64 * 64;
  *elem_offset = (int64_t)(start / es);
  p->ws_bytes = start + (size_t)bytes;
  return LT_OK;
}

void lt__program_free(lt__program *p) {
  void *kept = atomic_load(&p->ws_kept);
  if (kept) lt__device_free(p->ctx, kept, p->ws_bytes);
  lt__host_free(p->ctx, p->steps, sizeof *p->steps * (size_t)p->cap_steps);
  memset(p, 0, sizeof *p);
}

typedef struct run_env {
  const lt_tensor *const *inputs;
  lt_tensor *d;
  void *ws;
} run_env;

static void patch(const run_env *env, lt__bufref ref, void **mem, int64_t *offset) {
  switch (ref.kind) {
  case LT__BUF_INPUT:
    *mem = env->inputs[ref.index]->storage->mem;
    *offset += env->inputs[ref.index]->offset;
    break;
  case LT__BUF_OUTPUT:
    *mem = env->d->storage->mem;
    *offset += env->d->offset;
    break;
  case LT__BUF_WS: *mem = env->ws; break;
  case LT__BUF_NONE: break;
  }
}

static double scalar_value(lt__scalar_role role, const double *scalars) {
  switch (role) {
  case LT__SCALAR_ZERO: return 0.0;
  case LT__SCALAR_ALPHA: return scalars[0];
  case LT__SCALAR_BETA: return scalars[1];
  case LT__SCALAR_GAMMA: return scalars[2];
  case LT__SCALAR_ONE: break;
  }
  return 1.0;
}

static lt_status run_step(lt_context *ctx, const run_env *env, const lt__step *src,
                          const double *sc) {
  lt__step s = *src;
  switch (s.kind) {
  case LT__STEP_MAP: {
    lt__map_step *m = &s.u.map;
    for (int i = 0; i < m->n_in; i++)
      patch(env, s.buf[i], &m->in[i].mem, &m->in[i].offset);
    patch(env, s.buf[3], &m->out.mem, &m->out.offset);
    for (int i = 0; i < 3; i++)
      m->scalars[i] = scalar_value(s.scalar[i], sc);
    if (s.drop_last_if_beta_zero && sc[1] == 0.0) m->n_in--;
    return ctx->backend->map(ctx, m);
  }
  case LT__STEP_REDUCE: {
    lt__reduce_step *r = &s.u.reduce;
    patch(env, s.buf[0], &r->in.mem, &r->in.offset);
    patch(env, s.buf[1], &r->out.mem, &r->out.offset);
    patch(env, s.buf[2], &r->c.mem, &r->c.offset);
    r->alpha = scalar_value(s.scalar[0], sc);
    r->beta = scalar_value(s.scalar[1], sc);
    return ctx->backend->reduce(ctx, r);
  }
  case LT__STEP_GEMM: {
    lt__gemm_step *g = &s.u.gemm;
    patch(env, s.buf[0], &g->a.mem, &g->a.offset);
    patch(env, s.buf[1], &g->b.mem, &g->b.offset);
    patch(env, s.buf[2], &g->c.mem, &g->c.offset);
    g->alpha = scalar_value(s.scalar[0], sc);
    g->beta = scalar_value(s.scalar[1], sc);
    return ctx->backend->gemm(ctx, g);
  }
  case LT__STEP_CONTRACT: {
    lt__contract_step *c = &s.u.contract;
    patch(env, s.buf[0], &c->a.mem, &c->a.offset);
    patch(env, s.buf[1], &c->b.mem, &c->b.offset);
    patch(env, s.buf[2], &c->out.mem, &c->out.offset);
    patch(env, s.buf[3], &c->c.mem, &c->c.offset);
    c->alpha = scalar_value(s.scalar[0], sc);
    c->beta = scalar_value(s.scalar[1], sc);
    return ctx->backend->contract(ctx, c);
  }
  case LT__STEP_ROWS: {
    lt__row_step *r = &s.u.rows;
    patch(env, s.buf[0], &r->in.mem, &r->in.offset);
    patch(env, s.buf[1], &r->out.mem, &r->out.offset);
    return ctx->backend->rows(ctx, r);
  }
  case LT__STEP_GATHER: {
    lt__gather_step *g = &s.u.gather;
    patch(env, s.buf[0], &g->in.mem, &g->in.offset);
    patch(env, s.buf[1], &g->index.mem, &g->index.offset);
    patch(env, s.buf[2], &g->out.mem, &g->out.offset);
    return ctx->backend->index->gather(ctx, g);
  }
  case LT__STEP_SCATTER: {
    lt__scatter_step *c = &s.u.scatter;
    patch(env, s.buf[0], &c->src.mem, &c->src.offset);
    patch(env, s.buf[1], &c->index.mem, &c->index.offset);
    patch(env, s.buf[2], &c->out.mem, &c->out.offset);
    return ctx->backend->index->scatter_add(ctx, c);
  }
  case LT__STEP_SORT: {
    lt__sort_step *o = &s.u.sort;
    patch(env, s.buf[0], &o->in.mem, &o->in.offset);
    patch(env, s.buf[1], &o->out.mem, &o->out.offset);
    return ctx->backend->index->sort(ctx, o);
  }
  }
  return lt__error(LT_ERR_INTERNAL, "unknown plan step kind %d", (int)s.kind);
}

/* Workspaces larger than this are returned after each run rather than kept by the plan. */
#define KEEP_WS_MAX_BYTES ((size_t)256 << 20)

lt_status lt__program_run(lt__program *p, lt_context *ctx, const lt_tensor *const *inputs,
                          const double *scalars, lt_tensor *d) {
  run_env env = {inputs, d, NULL};
  if (p->ws_bytes) {
    env.ws = atomic_exchange(&p->ws_kept, NULL);
    if (env.ws == NULL) LT_TRY(lt__device_alloc(ctx, p->ws_bytes, &env.ws));
  }
  lt_status st = LT_OK;
  for (int i = 0; i < p->n_steps && st == LT_OK; i++)
    st = run_step(ctx, &env, &p->steps[i], scalars);
  if (env.ws) {
    void *expected = NULL;
    if (p->ws_bytes > KEEP_WS_MAX_BYTES ||
        !atomic_compare_exchange_strong(&p->ws_kept, &expected, env.ws))
      lt__device_free(ctx, env.ws, p->ws_bytes);
  }
  return st;
}

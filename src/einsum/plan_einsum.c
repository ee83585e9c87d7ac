/* SPDX-License-Identifier: MIT */
/* lt_plan_einsum / lt_plan_einsum_modes: parse, canonicalise, choose a path, lower every
 * pairwise step (lower/pair.c) into one program run by lt_plan_execute. */
#include "core/dtype.h"
#include "core/error.h"
#include "einsum/einsum.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything a build needs, from the context's allocator (the canonical form is large). */
typedef struct einsum_build {
  lt_context *ctx;
  lt__einsum_expr expr;
  lt__einsum_canon canon;
  int64_t out_shape[LT_MAX_RANK];
  lt__path path;
  lt_dtype compute, out_dtype;
  bool lowp_exact; /* lt_plan_options' LT_LOWP_F32 */
  char *text;      /* description being built (cap bytes from ctx's allocator) */
  size_t len, cap;
  bool text_oom; /* a line of the description did not fit in memory */
} einsum_build;

static void impl_free_arrays(lt__einsum_impl *impl, lt_context *ctx) {
  size_t steps = (size_t)(impl->n_steps > 0 ? impl->n_steps : 1);
  size_t ns = (size_t)(impl->n_sliced > 0 ? impl->n_sliced : 1);
  if (impl->pos) lt__host_free(ctx, impl->pos, sizeof(int64_t[2]) * steps);
  if (impl->ssa) lt__host_free(ctx, impl->ssa, sizeof(int32_t[2]) * steps);
  if (impl->step_cost) lt__host_free(ctx, impl->step_cost, sizeof(double) * steps);
  if (impl->step_size) lt__host_free(ctx, impl->step_size, sizeof(double) * steps);
  if (impl->sliced_label) lt__host_free(ctx, impl->sliced_label, sizeof(int32_t) * ns);
  if (impl->slice_ext) lt__host_free(ctx, impl->slice_ext, sizeof(int64_t) * ns);
  if (impl->in_stride)
    lt__host_free(ctx, impl->in_stride, sizeof(int64_t) * ns * (size_t)impl->n_inputs);
  if (impl->out_stride) lt__host_free(ctx, impl->out_stride, sizeof(int64_t) * ns);
  if (impl->slice_in_out) lt__host_free(ctx, impl->slice_in_out, sizeof(bool) * ns);
}

static void einsum_destroy(void *p) {
  lt__einsum_impl *impl = p;
  if (impl == NULL) return;
  lt_context *ctx = impl->prog.ctx;
  impl_free_arrays(impl, ctx);
  lt__program_free(&impl->prog);
  lt__host_free(ctx, impl, sizeof *impl);
}

static lt_status einsum_run(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                            const double *scalars, lt_tensor *d) {
  for (int i = 0; i < n_inputs; i++)
    LT_RETURN_IF(lt__tensor_overlap(d, inputs[i]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
                 "einsum: the output overlaps input %d", i);
  const lt__einsum_impl *impl = plan->impl;
  int64_t total = 1;
  for (int j = 0; j < impl->n_sliced; j++)
    total *= impl->slice_ext[j];
  return lt__einsum_run_slices(impl, plan->ctx, inputs, scalars, d, 0, total, true);
}

/* ---- description (like np.einsum_path) ---- */

static void say(einsum_build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(einsum_build *b, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || b->text_oom) return;
  if ((size_t)n >= sizeof line) n = sizeof line - 1;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = (b->cap ? 2 * b->cap : 1024) + (size_t)n;
    char *grown = lt__host_realloc(b->ctx, b->text, b->cap, cap);
    if (grown == NULL) {
      b->text_oom = true;
      return;
    }
    b->text = grown;
    b->cap = cap;
  }
  memcpy(b->text + b->len, line, (size_t)n + 1);
  b->len += (size_t)n;
}

/* A mode view's labels as text: letters, digits for '...' dims, or {i j} for integer labels. */
static void modes_text(const einsum_build *b, const lt__mview *v, char *buf, size_t size) {
  size_t n = 0;
  bool ints = !b->expr.letters;
  if (ints && n + 1 < size) buf[n++] = '{';
  for (int i = 0; i < v->rank && n + 16 < size; i++) {
    int32_t l = b->canon.label_of[v->mode[i]];
    if (ints)
      n += (size_t)snprintf(buf + n, size - n, i ? " %d" : "%d", (int)l);
    else if (l >= LT__ELLIPSIS_LABEL_BASE)
      buf[n++] = (char)('0' + (l - LT__ELLIPSIS_LABEL_BASE) % 10);
    else
      buf[n++] = (char)(l < 26 ? 'A' + l : 'a' + l - 26);
  }
  if (ints && n + 1 < size) buf[n++] = '}';
  buf[n] = '\0';
}

static double pair_flops(const lt__einsum_canon *c, const lt__mview *a, const lt__mview *b) {
  double f = 2.0;
  for (int i = 0; i < a->rank; i++)
    f *= (double)c->extent[a->mode[i]];
  for (int i = 0; i < b->rank; i++)
    if (!lt__mview_has(a, b->mode[i])) f *= (double)c->extent[b->mode[i]];
  return f;
}

static double view_size(const lt__einsum_canon *c, const lt__mview *v) {
  double n = 1;
  for (int i = 0; i < v->rank; i++)
    n *= (double)c->extent[v->mode[i]];
  return n;
}

/* ---- lowering ---- */

/* One operand: a reduction over the labels D lacks, or a permuting map. */
static lt_status lower_single(einsum_build *b, lt__program *prog) {
  const lt__mview *a = &b->canon.in[0], *d = &b->canon.out;
  int32_t red[LT_MAX_RANK];
  int nr = 0;
  for (int i = 0; i < a->rank; i++)
    if (!lt__mview_has(d, a->mode[i])) red[nr++] = a->mode[i];
  lt__step *s = lt__program_add(prog, nr ? LT__STEP_REDUCE : LT__STEP_MAP);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  const int64_t *ext = b->canon.extent;
  if (nr == 0) {
    lt__map_step *m = &s->u.map;
    m->rank = d->rank;
    for (int i = 0; i < d->rank; i++) {
      m->shape[i] = ext[d->mode[i]];
      m->in[0].strides[i] = lt__mview_stride(a, d->mode[i]);
      m->in[1].strides[i] = m->out.strides[i] = d->stride[i];
    }
    m->in[0].offset = a->offset;
    m->in[0].dtype = a->dtype;
    m->in[1].dtype = m->out.dtype = d->dtype;
    m->in[1].offset = m->out.offset = d->offset;
    m->n_in = 2; /* + beta*D, dropped at execution when beta is 0 */
    m->op_ab = LT_BINARY_ADD;
    m->compute = b->compute;
    s->buf[0] = a->buf;
    s->buf[1] = s->buf[3] = d->buf;
    s->scalar[0] = LT__SCALAR_ALPHA;
    s->scalar[1] = LT__SCALAR_BETA;
    s->drop_last_if_beta_zero = true;
    return LT_OK;
  }
  lt__reduce_step *r = &s->u.reduce;
  r->rank = d->rank;
  for (int i = 0; i < d->rank; i++) {
    r->shape[i] = ext[d->mode[i]];
    r->in.strides[i] = lt__mview_stride(a, d->mode[i]);
    r->out.strides[i] = d->stride[i];
  }
  r->red_rank = nr;
  for (int i = 0; i < nr; i++) {
    r->red_shape[i] = ext[red[i]];
    r->in_red_strides[i] = lt__mview_stride(a, red[i]);
  }
  r->in.offset = a->offset;
  r->in.dtype = a->dtype;
  r->out.offset = d->offset;
  r->out.dtype = d->dtype;
  r->op = LT_REDUCE_SUM;
  r->compute = b->compute;
  s->buf[0] = a->buf;
  s->buf[1] = d->buf;
  s->scalar[0] = LT__SCALAR_ALPHA;
  s->scalar[1] = LT__SCALAR_BETA;
  return LT_OK;
}

/* Labels the result of contracting a and b keeps: needed by the output or another operand. */
static lt_status result_modes(const einsum_build *b, const lt__mview *list, int n, int i, int j,
                              lt__mview *res) {
  memset(res, 0, sizeof *res);
  res->buf.kind = LT__BUF_NONE;
  const lt__mview *pair[2] = {&list[i], &list[j]};
  for (int s = 0; s < 2; s++)
    for (int a = 0; a < pair[s]->rank; a++) {
      int32_t m = pair[s]->mode[a];
      if (lt__mview_has(res, m)) continue;
      bool need = lt__mview_has(&b->canon.out, m);
      for (int k = 0; k < n && !need; k++)
        need = k != i && k != j && lt__mview_has(&list[k], m);
      if (!need) continue;
      LT_RETURN_IF(res->rank >= LT_MAX_RANK, LT_ERR_UNSUPPORTED,
                   "einsum: an intermediate would have more than %d dimensions", LT_MAX_RANK);
      res->mode[res->rank++] = m;
    }
  return LT_OK;
}

static lt_status lower_path(lt_context *ctx, einsum_build *b, lt__program *prog) {
  int n = b->canon.n_inputs;
  lt__mview *list = lt__host_alloc(ctx, sizeof(lt__mview) * (size_t)n);
  LT_RETURN_IF(list == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory lowering %d operands", n);
  memcpy(list, b->canon.in, sizeof(lt__mview) * (size_t)n);
  lt_status st = LT_OK;
  const int steps = n - 1;
  for (int s = 0; s < steps && st == LT_OK; s++) {
    int i = (int)b->path.pos[s][0], j = (int)b->path.pos[s][1];
    bool last = s + 1 == steps;
    lt__pair p;
    memset(&p, 0, sizeof p);
    p.extent = b->canon.extent;
    p.a = list[i];
    p.b = list[j];
    if (last)
      p.d = b->canon.out;
    else
      st = result_modes(b, list, n, i, j, &p.d);
    if (st != LT_OK) break;
    p.compute = b->compute;
    p.lowp_exact = b->lowp_exact;
    p.alpha = last ? LT__SCALAR_ALPHA : LT__SCALAR_ONE;
    p.beta = last ? LT__SCALAR_BETA : LT__SCALAR_ZERO;
    char ta[160], tb[160], td[160];
    modes_text(b, &p.a, ta, sizeof ta);
    modes_text(b, &p.b, tb, sizeof tb);
    double flops = pair_flops(&b->canon, &p.a, &p.b);
    lt__how how;
    st = lt__lower_pair(ctx, &p, prog, &how);
    if (st != LT_OK) break;
    modes_text(b, &p.d, td, sizeof td);
    /* Long networks: the first and last steps tell the story; the tree API has them all. */
    if (s < 64 || s + 16 >= steps) {
      char gemm[128] = "";
      lt__pair_describe_gemm(&p, how, gemm, sizeof gemm);
      say(b, "  step %d: %s,%s->%s  flops %.3g  %s %.0f elements  %s%s\n", s + 1, ta, tb, td, flops,
          last ? "output" : "intermediate", view_size(&b->canon, &p.d), lt__how_name(how), gemm);
    } else if (s == 64)
      say(b, "  ... (%d more steps)\n", steps - 64 - 16);
    memmove(&list[j], &list[j + 1], sizeof(lt__mview) * (size_t)(n - j - 1));
    memmove(&list[i], &list[i + 1], sizeof(lt__mview) * (size_t)(n - i - 2));
    n -= 2;
    list[n++] = p.d;
  }
  lt__host_free(ctx, list, sizeof(lt__mview) * (size_t)b->canon.n_inputs);
  return st;
}

/* Lowers the path with sliced labels at extent 1 (one slice's program). */
static lt_status lower_sliced(lt_context *ctx, einsum_build *b, lt__program *prog) {
  if (b->path.n_sliced == 0) return lower_path(ctx, b, prog);
  int64_t *full = b->canon.extent;
  int64_t *one = lt__host_alloc(ctx, sizeof(int64_t) * (size_t)b->canon.cap_labels);
  LT_RETURN_IF(one == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory slicing");
  for (int l = 0; l < b->canon.n_labels; l++)
    one[l] = b->path.sliced[l] ? 1 : full[l];
  b->canon.extent = one;
  lt_status st = lower_path(ctx, b, prog);
  b->canon.extent = full;
  lt__host_free(ctx, one, sizeof(int64_t) * (size_t)b->canon.cap_labels);
  return st;
}

/* Copies the tree and the slicing into the plan's private part. */
static lt_status keep_tree(einsum_build *b, lt__einsum_impl *impl) {
  lt_context *ctx = b->ctx;
  int n = b->canon.n_inputs;
  size_t steps = (size_t)(n - 1);
  impl->n_inputs = n;
  impl->n_steps = n - 1;
  impl->pos = lt__host_alloc(ctx, sizeof(int64_t[2]) * steps);
  impl->ssa = lt__host_alloc(ctx, sizeof(int32_t[2]) * steps);
  impl->step_cost = lt__host_alloc(ctx, sizeof(double) * steps);
  impl->step_size = lt__host_alloc(ctx, sizeof(double) * steps);
  int ns = b->path.n_sliced;
  size_t nsz = (size_t)(ns > 0 ? ns : 1);
  impl->n_sliced = ns;
  impl->sliced_label = lt__host_alloc(ctx, sizeof(int32_t) * nsz);
  impl->slice_ext = lt__host_alloc(ctx, sizeof(int64_t) * nsz);
  impl->in_stride = lt__host_alloc(ctx, sizeof(int64_t) * nsz * (size_t)n);
  impl->out_stride = lt__host_alloc(ctx, sizeof(int64_t) * nsz);
  impl->slice_in_out = lt__host_alloc(ctx, sizeof(bool) * nsz);
  LT_RETURN_IF(!impl->pos || !impl->ssa || !impl->step_cost || !impl->step_size ||
                   !impl->sliced_label || !impl->slice_ext || !impl->in_stride ||
                   !impl->out_stride || !impl->slice_in_out,
               LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the plan's tree");
  memcpy(impl->pos, b->path.pos, sizeof(int64_t[2]) * steps);
  memcpy(impl->ssa, b->path.ssa, sizeof(int32_t[2]) * steps);
  memcpy(impl->step_cost, b->path.step_cost, sizeof(double) * steps);
  memcpy(impl->step_size, b->path.step_size, sizeof(double) * steps);
  impl->slices = b->path.slices;
  impl->overhead = b->path.overhead;
  int j = 0;
  for (int l = 0; l < b->canon.n_labels && j < ns; l++) {
    if (!b->path.sliced[l]) continue;
    impl->sliced_label[j] = b->canon.label_of[l];
    impl->slice_ext[j] = b->canon.extent[l];
    for (int k = 0; k < n; k++)
      impl->in_stride[(size_t)j * (size_t)n + (size_t)k] = lt__mview_stride(&b->canon.in[k], l);
    impl->out_stride[j] = lt__mview_stride(&b->canon.out, l);
    impl->slice_in_out[j] = lt__mview_has(&b->canon.out, l);
    j++;
  }
  return LT_OK;
}

/* Chooses the path (slicing under a memory limit until the lowered program's workspace
 * fits) and lowers it. */
static lt_status plan_path(einsum_build *b, const lt_plan_options *opts, lt__einsum_impl *impl) {
  lt_context *ctx = b->ctx;
  size_t esize = lt_dtype_size(b->compute);
  LT_TRY(lt__einsum_path(ctx, &b->canon, opts, esize, &b->path));
  int64_t limit = opts->memory_limit;
  double target = limit > 0 ? (double)limit / (double)esize : 0;
  size_t mark = b->len;
  for (int attempt = 0;; attempt++) {
    if (limit > 0 && b->path.largest > target)
      LT_TRY(lt__einsum_path_slice(&b->path, target, limit));
    say(b,
        "  naive flops %.4g, optimized flops %.4g, speedup %.3gx, largest intermediate %.0f "
        "elements\n",
        2 * b->path.naive_cost, 2 * b->path.cost,
        b->path.cost > 0 ? b->path.naive_cost / b->path.cost : 1.0, b->path.largest);
    if (b->path.n_sliced) {
      say(b, "  sliced labels:");
      for (int l = 0; l < b->canon.n_labels; l++)
        if (b->path.sliced[l]) {
          char name[48];
          lt__einsum_label_name(&b->expr, b->canon.label_of[l], name, sizeof name);
          say(b, " %s (%lld)", name, (long long)b->canon.extent[l]);
        }
      say(b, "; %.0f slices, overhead %.3gx\n", b->path.slices, b->path.overhead);
    }
    LT_TRY(lower_sliced(ctx, b, &impl->prog));
    if (limit == 0 || impl->prog.ws_bytes <= (size_t)limit) break;
    /* Packing copies and simultaneous intermediates outgrow the largest one: aim lower. */
    double next = target * (double)limit / (double)impl->prog.ws_bytes;
    if (b->path.largest < target)
      next = b->path.largest * 0.75 < next ? b->path.largest * 0.75 : next;
    target = next < target * 0.75 ? next : target * 0.75;
    LT_RETURN_IF(target < 1 || attempt > 60, LT_ERR_OUT_OF_MEMORY,
                 "einsum: no contraction order or slicing keeps the execution under the memory "
                 "limit of %lld bytes (one slice needs %zu bytes of workspace)",
                 (long long)limit, impl->prog.ws_bytes);
    lt__program_free(&impl->prog);
    lt__program_init(&impl->prog, ctx);
    b->len = mark;
    if (b->text) b->text[mark] = '\0';
  }
  return keep_tree(b, impl);
}

/* NumPy's einsum result dtype: the inputs' promoted dtype (bool stays bool, i32 with i64 is
 * i64, an integer with f32 f64). */
static lt_dtype natural_dtype(int n, const lt_tensor *const *inputs) {
  return lt__plan_promoted(n, inputs);
}

static lt_status build(lt_plan *plan, einsum_build *b, const char *text,
                       const lt_tensor *const *inputs, const lt_tensor *d,
                       const lt_plan_options *opts) {
  int n = b->expr.n_inputs;
  /* Options carry unary ops for three operands (A, B, C); an einsum has any number, so rather
   * than apply them to some operands and silently not to others, einsum refuses them. */
  for (int k = 0; k < 3; k++)
    LT_RETURN_IF(opts->unary[k] != LT_UNARY_IDENTITY, LT_ERR_UNSUPPORTED,
                 "einsum: plan options set a unary op on operand %d; einsum plans apply none "
                 "(use lt_plan_contraction, or transform the operand with lt_unary first)",
                 k);
  b->out_dtype = d                                  ? d->dtype
                 : opts->output != LT_DTYPE_INVALID ? opts->output
                                                    : natural_dtype(n, inputs);
  LT_TRY(lt__plan_compute_dtype(opts, n, inputs, &b->compute));
  LT_TRY(lt__plan_check_float_to_int("einsum", b->compute, b->out_dtype));
  b->lowp_exact = opts->lowp == LT_LOWP_F32;
  LT_TRY(lt__einsum_canonicalize(&b->expr, inputs, d, &b->canon, b->out_shape));
  b->canon.out.dtype = b->out_dtype;
  if (d == NULL) {
    int64_t numel;
    LT_TRY(lt__check_shape(b->expr.rank_out, b->out_shape, b->out_dtype, &numel));
  }
  lt__einsum_impl *impl = lt__host_calloc(plan->ctx, 1, sizeof *impl);
  LT_RETURN_IF(impl == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for a plan");
  plan->impl = impl;
  plan->destroy_impl = einsum_destroy;
  lt__program_init(&impl->prog, plan->ctx);
  say(b, "einsum '%s': %d operand%s, compute %s, output %s\n", text, n, n == 1 ? "" : "s",
      lt_dtype_name(b->compute), lt_dtype_name(b->out_dtype));
  if (n == 1) {
    LT_RETURN_IF(opts && opts->n_path_pairs > 0, LT_ERR_INVALID_ARGUMENT,
                 "einsum: the explicit path has %lld pairs, but 1 operand takes 0",
                 (long long)opts->n_path_pairs);
    LT_TRY(lower_single(b, &impl->prog));
    say(b, "  step 1: %s\n",
        impl->prog.steps[impl->prog.n_steps - 1].kind == LT__STEP_REDUCE ? "reduction"
                                                                         : "permutation");
  } else {
    LT_TRY(plan_path(b, opts, impl));
  }
  say(b, "  workspace %zu bytes\n", impl->prog.ws_bytes);
  LT_RETURN_IF(b->text_oom, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory describing the plan");
  plan->workspace_bytes = impl->prog.ws_bytes;
  LT_TRY(lt__plan_set_description(plan, b->text ? b->text : ""));
  return LT_OK;
}

lt_status lt__einsum_check_input(const lt_tensor *t, int k) {
  if (t->tag == LT__HANDLE_TENSOR) return LT_OK;
  char what[32];
  snprintf(what, sizeof what, "einsum: input %d", k);
  return lt__check_tensor(t, what);
}

static lt_status check_inputs(int n_inputs, const lt_tensor *const *inputs, const lt_tensor *d,
                              lt_context **ctx) {
  LT_RETURN_IF(n_inputs < 1, LT_ERR_INVALID_ARGUMENT, "einsum: %d inputs (at least 1 needed)",
               n_inputs);
  LT_CHECK_ARG_NULL(inputs, "einsum", "inputs");
  for (int k = 0; k < n_inputs; k++) {
    LT_RETURN_IF(inputs[k] == NULL, LT_ERR_NULL_POINTER, "einsum: input %d is NULL", k);
    LT_TRY(lt__einsum_check_input(inputs[k], k));
    if (inputs[k]->storage->ctx != inputs[0]->storage->ctx) {
      char what[32];
      snprintf(what, sizeof what, "input %d", k);
      return lt__context_mismatch("einsum", what, inputs[k]->storage->ctx, "input 0",
                                  inputs[0]->storage->ctx);
    }
    LT_RETURN_IF(!lt__dtype_valid(inputs[k]->dtype), LT_ERR_DTYPE,
                 "einsum: input %d has an invalid dtype", k);
  }
  *ctx = inputs[0]->storage->ctx;
  if (d) {
    LT_TRY(lt__check_tensor(d, "einsum: the output"));
    if (d->storage->ctx != *ctx)
      return lt__context_mismatch("einsum", "the output", d->storage->ctx, "the inputs", *ctx);
    LT_RETURN_IF(lt__tensor_self_overlaps(d), LT_ERR_ALIASING,
                 "einsum: the output has overlapping elements (zero or clashing strides)");
  }
  return LT_OK;
}

static einsum_build *build_state_new(lt_context *ctx) {
  einsum_build *b = lt__host_calloc(ctx, 1, sizeof *b);
  if (b) b->ctx = b->expr.ctx = b->canon.ctx = ctx;
  return b;
}

static void build_state_free(einsum_build *b, int *ranks, int n) {
  lt_context *ctx = b->ctx;
  lt__path_free(&b->path);
  lt__einsum_canon_free(&b->canon);
  lt__einsum_expr_free(&b->expr);
  lt__host_free(ctx, b, sizeof *b);
  if (ranks) lt__host_free(ctx, ranks, sizeof(int) * (size_t)n);
}

/* Shared tail of both constructors: e is already filled in b. */
static lt_status plan_from_expr(einsum_build *b, const char *text, const lt_tensor *const *inputs,
                                const lt_tensor *d, const lt_plan_options *opts, lt_context *ctx,
                                lt_plan **out) {
  LT_TRY(lt__check_options(opts, "einsum"));
  if (opts == NULL) opts = lt__plan_options_default();
  int n = b->expr.n_inputs;
  lt_plan *plan;
  LT_TRY(lt__plan_alloc(ctx, LT__PLAN_EINSUM, n, &plan));
  lt_status st = build(plan, b, text, inputs, d, opts);
  lt__host_free(ctx, b->text, b->cap);
  b->text = NULL;
  b->len = b->cap = 0;
  if (st != LT_OK) {
    lt_plan_destroy(plan);
    return st;
  }
  plan->n_inputs_min = plan->n_inputs_max = n;
  for (int k = 0; k < n; k++)
    lt__layout_from_tensor(inputs[k], &plan->inputs[k]);
  if (d)
    lt__layout_from_tensor(d, &plan->output);
  else {
    plan->output.dtype = b->out_dtype;
    plan->output.rank = b->expr.rank_out;
    memcpy(plan->output.shape, b->out_shape, sizeof(int64_t) * (size_t)b->expr.rank_out);
    lt__contiguous_strides(b->expr.rank_out, b->out_shape, plan->output.strides);
  }
  plan->n_scalars = 2;
  plan->default_scalars[0] = 1.0;
  plan->default_scalars[1] = 0.0;
  plan->run = einsum_run;
  *out = plan;
  return LT_OK;
}

/* The planner's state and the operands' ranks, which the two front ends parse against. */
static lt_status build_begin(lt_context *ctx, int n_inputs, const lt_tensor *const *inputs,
                             einsum_build **b, int **ranks) {
  *b = build_state_new(ctx);
  LT_RETURN_IF(*b == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the planner's state");
  *ranks = lt__host_alloc(ctx, sizeof(int) * (size_t)n_inputs);
  if (*ranks == NULL) {
    build_state_free(*b, NULL, 0);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for %d operands", n_inputs);
  }
  for (int k = 0; k < n_inputs; k++)
    (*ranks)[k] = inputs[k]->rank;
  return LT_OK;
}

lt_status lt_plan_einsum(const char *expr, int n_inputs, const lt_tensor *const *inputs,
                         const lt_tensor *d, const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_CHECK_NULL(expr, "expr");
  lt_context *ctx;
  LT_TRY(check_inputs(n_inputs, inputs, d, &ctx));
  einsum_build *b;
  int *ranks;
  LT_TRY(build_begin(ctx, n_inputs, inputs, &b, &ranks));
  lt_status st = lt__einsum_parse(expr, n_inputs, ranks, &b->expr);
  if (st == LT_OK) st = plan_from_expr(b, expr, inputs, d, opts, ctx, out);
  build_state_free(b, ranks, n_inputs);
  return st;
}

lt_status lt_plan_einsum_modes(int n_inputs, const lt_tensor *const *inputs,
                               const int32_t *const *modes, int rank_out, const int32_t *modes_out,
                               const lt_tensor *d, const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  lt_context *ctx;
  LT_TRY(check_inputs(n_inputs, inputs, d, &ctx));
  LT_CHECK_NULL(modes, "modes");
  einsum_build *b;
  int *ranks;
  LT_TRY(build_begin(ctx, n_inputs, inputs, &b, &ranks));
  lt_status st = lt__einsum_from_modes(n_inputs, ranks, modes, rank_out, modes_out, &b->expr);
  if (st == LT_OK) st = plan_from_expr(b, "(integer labels)", inputs, d, opts, ctx, out);
  build_state_free(b, ranks, n_inputs);
  return st;
}

/* SPDX-License-Identifier: MIT */
/* The gradient tape: tracked tensors (variables, found by handle serial), recorded nodes, leaf
 * gradients, and the backward sweep. Nodes are appended in execution order, so walking them
 * backwards is a valid reverse topological order and no graph sort is needed. */
#include "autograd/autograd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lt_status check_tape(const lt_tape *tape, const char *fn) {
  return lt__handle_check(tape, LT__HANDLE_TAPE, fn, "tape");
}

void lt__ad_meta_of(const lt_tensor *t, lt__ad_meta *m) {
  m->dtype = t->dtype;
  m->rank = t->rank;
  memcpy(m->shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
}

static size_t hash_serial(uint64_t s) { return (size_t)(s * 0x9E3779B97F4A7C15ull >> 17); }

static int map_find(const lt_tape *tape, uint64_t serial) {
  if (tape->map_cap == 0) return -1;
  size_t mask = (size_t)tape->map_cap - 1;
  for (size_t i = hash_serial(serial) & mask;; i = (i + 1) & mask) {
    int v = tape->map[i];
    if (v == 0) return -1;
    if (tape->vars[v - 1].serial == serial) return v - 1;
  }
}

static void map_insert_raw(int *map, int cap, const lt__ad_var *vars, int v) {
  size_t mask = (size_t)cap - 1;
  size_t i = hash_serial(vars[v].serial) & mask;
  while (map[i] != 0)
    i = (i + 1) & mask;
  map[i] = v + 1;
}

/* Rebuilds the map for the current variables (after growth or after clear). */
lt_status lt__ad_map_rebuild(lt_tape *tape, int want) {
  int cap = 64;
  while (cap < 2 * want)
    cap *= 2;
  int *map = calloc((size_t)cap, sizeof *map);
  LT_RETURN_IF(map == NULL, LT_ERR_OUT_OF_MEMORY, "autograd: out of memory growing the tape");
  for (int v = 0; v < tape->n_vars; v++)
    if (tape->vars[v].serial != 0) map_insert_raw(map, cap, tape->vars, v);
  free(tape->map);
  tape->map = map;
  tape->map_cap = cap;
  return LT_OK;
}

int lt__ad_lookup(const lt_tape *tape, const lt_tensor *t) {
  if (tape == NULL || t == NULL) return -1;
  return map_find(tape, t->serial);
}

lt__ad_var *lt__ad_leaf_by_serial(lt_tape *tape, uint64_t serial) {
  int v = map_find(tape, serial);
  return v >= 0 && tape->vars[v].leaf ? &tape->vars[v] : NULL;
}

static lt_status add_var(lt_tape *tape, const lt_tensor *t, bool leaf, int node, int *out) {
  if (tape->n_vars == tape->cap_vars) {
    int cap = tape->cap_vars ? 2 * tape->cap_vars : 32;
    lt__ad_var *v = realloc(tape->vars, sizeof *v * (size_t)cap);
    LT_RETURN_IF(v == NULL, LT_ERR_OUT_OF_MEMORY, "autograd: out of memory growing the tape");
    tape->vars = v;
    tape->cap_vars = cap;
  }
  if (2 * (tape->n_vars + 1) > tape->map_cap) LT_TRY(lt__ad_map_rebuild(tape, tape->n_vars + 1));
  int v = tape->n_vars++;
  lt__ad_var *var = &tape->vars[v];
  memset(var, 0, sizeof *var);
  var->serial = t->serial;
  lt__ad_meta_of(t, &var->meta);
  var->leaf = leaf;
  var->node = node;
  map_insert_raw(tape->map, tape->map_cap, tape->vars, v);
  *out = v;
  return LT_OK;
}

lt_status lt_tape_create(lt_context *ctx, lt_tape **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_tape_create", "ctx"));
  lt_tape *tape = calloc(1, sizeof *tape);
  LT_RETURN_IF(tape == NULL, LT_ERR_OUT_OF_MEMORY, "lt_tape_create: out of memory");
  tape->tag = LT__HANDLE_TAPE;
  tape->ctx = ctx;
  tape->recording = true;
  lt__context_retain(ctx);
  *out = tape;
  return LT_OK;
}

static void node_release_saved(lt__ad_node *n) {
  for (int k = 0; k < n->n_saved; k++) {
    lt_tensor_destroy(n->saved[k]);
    n->saved[k] = NULL;
  }
  if (n->extra_free && n->extra) n->extra_free(n->extra);
  n->extra = NULL;
  n->freed = true;
}

void lt__ad_node_free(lt__ad_node *n) {
  if (!n->freed) node_release_saved(n);
  free(n->needs);
  free(n->in_var);
  free(n->in);
}

lt_status lt_tape_clear(lt_tape *tape) {
  LT_TRY(check_tape(tape, "lt_tape_clear"));
  for (int i = 0; i < tape->n_nodes; i++)
    lt__ad_node_free(&tape->nodes[i]);
  tape->n_nodes = 0;
  int w = 0;
  for (int v = 0; v < tape->n_vars; v++) {
    lt__ad_var *var = &tape->vars[v];
    if (var->leaf && var->serial != 0) {
      tape->vars[w++] = *var;
    } else {
      lt_tensor_destroy(var->grad);
    }
  }
  tape->n_vars = w;
  return lt__ad_map_rebuild(tape, w);
}

void lt_tape_destroy(lt_tape *tape) {
  if (!lt__handle_may_destroy(tape, LT__HANDLE_TAPE, "lt_tape_destroy")) return;
  for (int i = 0; i < tape->n_nodes; i++)
    lt__ad_node_free(&tape->nodes[i]);
  for (int v = 0; v < tape->n_vars; v++)
    lt_tensor_destroy(tape->vars[v].grad);
  free(tape->nodes);
  free(tape->vars);
  free(tape->map);
  lt_context *ctx = tape->ctx;
  lt__handle_kill(tape, LT__HANDLE_TAPE);
  lt__handle_retire(tape); /* quarantined: a second destroy is refused, not a crash */
  lt__context_release(ctx);
}

static bool dtype_floating(lt_dtype d) {
  return d == LT_F16 || d == LT_BF16 || d == LT_F32 || d == LT_F64;
}

lt_status lt_tape_requires_grad(lt_tape *tape, const lt_tensor *t, bool requires) {
  LT_TRY(check_tape(tape, "lt_tape_requires_grad"));
  LT_TRY(lt__check_tensor(t, "lt_tape_requires_grad: t"));
  if (t->storage->ctx != tape->ctx)
    return lt__context_mismatch("lt_tape_requires_grad", "t", t->storage->ctx, "the tape",
                                tape->ctx);
  int v = lt__ad_lookup(tape, t);
  if (!requires) {
    if (v >= 0) {
      LT_RETURN_IF(!tape->vars[v].leaf, LT_ERR_INVALID_ARGUMENT,
                   "lt_tape_requires_grad: t is the result of a recorded op, not a leaf (detach "
                   "it instead)");
      lt_tensor_destroy(tape->vars[v].grad);
      tape->vars[v].grad = NULL;
      tape->vars[v].serial = 0;
      LT_TRY(lt__ad_map_rebuild(tape, tape->n_vars));
    }
    return LT_OK;
  }
  LT_RETURN_IF(!dtype_floating(t->dtype), LT_ERR_DTYPE,
               "lt_tape_requires_grad: only floating tensors can require gradients, t is %s",
               lt_dtype_name(t->dtype));
  if (v >= 0) {
    LT_RETURN_IF(!tape->vars[v].leaf, LT_ERR_INVALID_ARGUMENT,
                 "lt_tape_requires_grad: t is the result of a recorded op, not a leaf");
    return LT_OK;
  }
  return add_var(tape, t, true, -1, &v);
}

lt_status lt_tape_is_tracked(const lt_tape *tape, const lt_tensor *t, bool *out) {
  LT_TRY(check_tape(tape, "lt_tape_is_tracked"));
  LT_TRY(lt__check_tensor(t, "lt_tape_is_tracked: t"));
  LT_CHECK_NULL(out, "out");
  *out = lt__ad_lookup(tape, t) >= 0;
  return LT_OK;
}

lt_status lt_tape_set_recording(lt_tape *tape, bool on, bool *previous) {
  LT_TRY(check_tape(tape, "lt_tape_set_recording"));
  if (previous) *previous = tape->recording;
  tape->recording = on;
  return LT_OK;
}

lt_status lt__ad_alias(const lt_tensor *t, lt_tensor **out) {
  return lt__tensor_wrap_storage(t->storage, t->dtype, t->rank, t->shape, t->strides, t->offset,
                                 out);
}

lt_status lt_tape_detach(lt_tape *tape, const lt_tensor *t, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(check_tape(tape, "lt_tape_detach"));
  LT_TRY(lt__check_tensor(t, "lt_tape_detach: t"));
  return lt__ad_alias(t, out);
}

/* The leaf variable of t for the gradient calls. */
static lt_status leaf_of(const lt_tape *tape, const lt_tensor *t, const char *fn, int *v) {
  LT_TRY(check_tape(tape, fn));
  char what[64];
  snprintf(what, sizeof what, "%s: t", fn);
  LT_TRY(lt__check_tensor(t, what));
  *v = lt__ad_lookup(tape, t);
  LT_RETURN_IF(*v < 0, LT_ERR_INVALID_ARGUMENT, "%s: t does not require a gradient on this tape",
               fn);
  LT_RETURN_IF(!tape->vars[*v].leaf, LT_ERR_INVALID_ARGUMENT,
               "%s: t is the result of a recorded op; gradients are kept for leaves only", fn);
  return LT_OK;
}

lt_status lt_tape_grad(const lt_tape *tape, const lt_tensor *t, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  int v;
  LT_TRY(leaf_of(tape, t, "lt_tape_grad", &v));
  if (tape->vars[v].grad == NULL) return LT_OK;
  return lt__ad_alias(tape->vars[v].grad, out);
}

/* A C-contiguous copy or alias of g with m's dtype (g has m's shape). */
static lt_status owned_grad(const lt_tensor *g, const lt__ad_meta *m, lt_tensor **out) {
  if (g->dtype == m->dtype && lt_tensor_is_contiguous(g)) {
    bool broadcast = false;
    for (int i = 0; i < g->rank; i++)
      broadcast |= g->strides[i] == 0 && g->shape[i] > 1;
    if (!broadcast) return lt__ad_alias(g, out);
  }
  return lt_tensor_contiguous(g, m->dtype, out);
}

lt_status lt_tape_set_grad(lt_tape *tape, const lt_tensor *t, const lt_tensor *grad) {
  int v;
  LT_TRY(leaf_of(tape, t, "lt_tape_set_grad", &v));
  lt_tensor *g = NULL;
  if (grad != NULL) {
    LT_TRY(lt__check_tensor(grad, "lt_tape_set_grad: grad"));
    /* the copy below stays on grad's context: the leaf's gradient would live on another one */
    if (grad->storage->ctx != tape->ctx)
      return lt__context_mismatch("lt_tape_set_grad", "grad", grad->storage->ctx, "the tape",
                                  tape->ctx);
    const lt__ad_meta *m = &tape->vars[v].meta;
    LT_RETURN_IF(grad->rank != m->rank ||
                     memcmp(grad->shape, m->shape, sizeof(int64_t) * (size_t)m->rank) != 0,
                 LT_ERR_SHAPE_MISMATCH, "lt_tape_set_grad: grad's shape differs from t's");
    LT_TRY(lt_tensor_contiguous(grad, m->dtype, &g));
  }
  lt_tensor_destroy(tape->vars[v].grad);
  tape->vars[v].grad = g;
  return LT_OK;
}

lt_status lt_tape_zero_grads(lt_tape *tape) {
  LT_TRY(check_tape(tape, "lt_tape_zero_grads"));
  for (int v = 0; v < tape->n_vars; v++) {
    lt_tensor_destroy(tape->vars[v].grad);
    tape->vars[v].grad = NULL;
  }
  return LT_OK;
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

lt_status lt_tape_saved_count(const lt_tape *tape, int64_t *count, size_t *bytes) {
  LT_TRY(check_tape(tape, "lt_tape_saved_count"));
  LT_CHECK_NULL(count, "count");
  int64_t c = 0;
  for (int i = 0; i < tape->n_nodes; i++)
    for (int k = 0; k < tape->nodes[i].n_saved; k++)
      c += tape->nodes[i].saved[k] != NULL;
  *count = c;
  if (bytes == NULL) return LT_OK;
  /* the memory held: each storage once, however many records saved a view of it */
  const lt__storage **st = malloc(sizeof *st * (size_t)(c ? c : 1));
  LT_RETURN_IF(st == NULL, LT_ERR_OUT_OF_MEMORY, "lt_tape_saved_count: out of memory");
  int64_t n = 0;
  for (int i = 0; i < tape->n_nodes; i++)
    for (int k = 0; k < tape->nodes[i].n_saved; k++)
      if (tape->nodes[i].saved[k]) st[n++] = tape->nodes[i].saved[k]->storage;
  qsort(st, (size_t)n, sizeof *st, cmp_ptr);
  size_t b = 0;
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || st[i] != st[i - 1]) b += st[i]->nbytes;
  free(st);
  *bytes = b;
  return LT_OK;
}

/* ---- recording ---- */

lt_status lt__ad_check_tape(const lt_tape *tape, const char *fn) {
  return tape == NULL ? LT_OK : check_tape(tape, fn);
}

bool lt__ad_should_record(const lt_tape *tape, int n, const lt_tensor *const *ins,
                          const lt_tensor *out) {
  if (tape == NULL || !tape->recording) return false;
  /* Integer and bool results carry no gradient: they are constants to the tape, as in PyTorch
   * (argmax, comparisons, astype to int), so a loss may use them. */
  if (out && !lt_dtype_is_float(out->dtype)) return false;
  for (int i = 0; i < n; i++)
    if (ins[i] && lt__ad_lookup(tape, ins[i]) >= 0) return true;
  return false;
}

lt_status lt__ad_record(lt_tape *tape, const lt__ad_rule *rule, int n, const lt_tensor *const *ins,
                        const lt_tensor *out, lt__ad_node **node) {
  if (tape->n_nodes == tape->cap_nodes) {
    int cap = tape->cap_nodes ? 2 * tape->cap_nodes : 32;
    lt__ad_node *nn = realloc(tape->nodes, sizeof *nn * (size_t)cap);
    LT_RETURN_IF(nn == NULL, LT_ERR_OUT_OF_MEMORY, "autograd: out of memory growing the tape");
    tape->nodes = nn;
    tape->cap_nodes = cap;
  }
  lt__ad_node *nd = &tape->nodes[tape->n_nodes];
  memset(nd, 0, sizeof *nd);
  nd->rule = rule;
  nd->n_in = n;
  nd->needs = calloc((size_t)n, sizeof *nd->needs);
  nd->in_var = calloc((size_t)n, sizeof *nd->in_var);
  nd->in = calloc((size_t)n, sizeof *nd->in);
  if (!nd->needs || !nd->in_var || !nd->in) {
    lt__ad_node_free(nd);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "autograd: out of memory recording '%s'", rule->name);
  }
  for (int i = 0; i < n; i++) {
    nd->in_var[i] = ins[i] ? lt__ad_lookup(tape, ins[i]) : -1;
    nd->needs[i] = nd->in_var[i] >= 0;
    if (ins[i]) lt__ad_meta_of(ins[i], &nd->in[i]);
  }
  lt__ad_meta_of(out, &nd->out);
  int v;
  lt_status st = add_var(tape, out, false, tape->n_nodes, &v);
  if (st != LT_OK) {
    lt__ad_node_free(nd);
    return st;
  }
  nd->out_var = v;
  tape->n_nodes++;
  *node = nd;
  return LT_OK;
}

void lt__ad_unrecord_last(lt_tape *tape) {
  lt__ad_node *nd = &tape->nodes[--tape->n_nodes];
  tape->vars[nd->out_var].serial = 0;
  lt__ad_node_free(nd);
  tape->n_vars--;
  (void)lt__ad_map_rebuild(tape, tape->n_vars);
}

lt_status lt__ad_save(lt__ad_node *node, int k, const lt_tensor *t, const char *what) {
  LT_TRY(lt__ad_alias(t, &node->saved[k]));
  node->saved_version[k] = atomic_load(&t->storage->version);
  node->saved_what[k] = what;
  if (k >= node->n_saved) node->n_saved = k + 1;
  return LT_OK;
}

/* ---- backward ---- */

static lt_status check_versions(const lt__ad_node *n) {
  for (int k = 0; k < n->n_saved; k++) {
    const lt_tensor *t = n->saved[k];
    if (t == NULL) continue;
    uint64_t now = atomic_load(&t->storage->version);
    LT_RETURN_IF(now != n->saved_version[k], LT_ERR_INVALID_ARGUMENT,
                 "autograd: the %s that '%s' saved for backward (%s, rank %d) was modified in "
                 "place after it was saved (version %llu, now %llu); compute on a copy or "
                 "detach it",
                 n->saved_what[k] ? n->saved_what[k] : "tensor", n->rule->name,
                 lt_dtype_name(t->dtype), t->rank, (unsigned long long)n->saved_version[k],
                 (unsigned long long)now);
  }
  return LT_OK;
}

/* Adds g into var's gradient (converting to its shape and dtype). */
static lt_status accumulate(lt__ad_var *var, const lt_tensor *g) {
  lt_tensor *s;
  LT_TRY(lt__ad_sum_to(g, &var->meta, &s));
  if (var->grad == NULL) {
    lt_status st = owned_grad(s, &var->meta, &var->grad);
    lt_tensor_destroy(s);
    return st;
  }
  lt_tensor *sum;
  lt_status st = lt__ad_ew(LT_BINARY_ADD, LT_BINARY_ADD, var->grad, LT_UNARY_IDENTITY, s,
                           LT_UNARY_IDENTITY, NULL, LT_UNARY_IDENTITY, NULL, &sum);
  lt_tensor_destroy(s);
  LT_TRY(st);
  lt_tensor_destroy(var->grad);
  var->grad = sum;
  return LT_OK;
}

/* Leaves' gradients before a backward, restored if it fails so that a failed backward changes
 * nothing the caller can see. */
static lt_status snapshot_leaves(lt_tape *tape, lt_tensor ***out) {
  lt_tensor **snap = calloc((size_t)tape->n_vars + 1, sizeof *snap);
  LT_RETURN_IF(snap == NULL, LT_ERR_OUT_OF_MEMORY, "lt_tape_backward: out of memory");
  for (int v = 0; v < tape->n_vars; v++) {
    if (!tape->vars[v].leaf || tape->vars[v].grad == NULL) continue;
    lt_status st = lt__ad_alias(tape->vars[v].grad, &snap[v]);
    if (st != LT_OK) {
      for (int u = 0; u < v; u++)
        lt_tensor_destroy(snap[u]);
      free(snap);
      return st;
    }
  }
  *out = snap;
  return LT_OK;
}

static lt_status run_backward(lt_tape *tape, int v0, const lt_tensor *g0) {
  lt__ad_var *root = &tape->vars[v0];
  LT_TRY(accumulate(root, g0));
  if (root->leaf) return LT_OK;
  lt_tensor *grads[LT__AD_MAX_INPUTS];
  for (int i = root->node; i >= 0; i--) {
    lt__ad_node *n = &tape->nodes[i];
    lt__ad_var *ov = &tape->vars[n->out_var];
    if (ov->grad == NULL) continue;
    LT_RETURN_IF(n->freed, LT_ERR_INVALID_ARGUMENT,
                 "lt_tape_backward: the graph through '%s' was already freed by a backward; "
                 "pass LT_BACKWARD_RETAIN_GRAPH to the first backward to run it twice",
                 n->rule->name);
    LT_RETURN_IF(n->rule->backward == NULL, LT_ERR_INVALID_ARGUMENT,
                 "lt_tape_backward: '%s' is not differentiable (its result carries no "
                 "gradient); detach it or leave it out of the loss",
                 n->rule->name);
    LT_TRY(check_versions(n));
    LT_RETURN_IF(n->n_in > LT__AD_MAX_INPUTS, LT_ERR_INTERNAL, "autograd: too many inputs");
    memset(grads, 0, sizeof grads);
    lt_status st = n->rule->backward(n, ov->grad, grads);
    for (int k = 0; k < n->n_in && st == LT_OK; k++)
      if (n->needs[k] && grads[k]) st = accumulate(&tape->vars[n->in_var[k]], grads[k]);
    for (int k = 0; k < n->n_in; k++)
      lt_tensor_destroy(grads[k]);
    LT_TRY(st);
    if (!ov->leaf) {
      lt_tensor_destroy(ov->grad);
      ov->grad = NULL;
    }
    n->visited = true;
  }
  return LT_OK;
}

lt_status lt_tape_backward(lt_tape *tape, const lt_tensor *output, const lt_tensor *grad_output,
                           uint32_t flags) {
  LT_TRY(check_tape(tape, "lt_tape_backward"));
  LT_TRY(lt__check_tensor(output, "lt_tape_backward: output"));
  LT_RETURN_IF((flags & ~(uint32_t)LT_BACKWARD_RETAIN_GRAPH) != 0, LT_ERR_INVALID_ARGUMENT,
               "lt_tape_backward: unknown flags 0x%x", flags);
  int v0 = lt__ad_lookup(tape, output);
  LT_RETURN_IF(v0 < 0, LT_ERR_INVALID_ARGUMENT,
               "lt_tape_backward: output is not tracked by this tape (no input of the ops that "
               "made it requires a gradient, they were not recorded, or a backward without "
               "LT_BACKWARD_RETAIN_GRAPH already freed its graph)");
  lt_tensor *g0 = NULL;
  if (grad_output == NULL) {
    LT_RETURN_IF(output->numel != 1, LT_ERR_INVALID_ARGUMENT,
                 "lt_tape_backward: output has %lld elements; a gradient for it is needed "
                 "unless it has one",
                 (long long)output->numel);
    LT_TRY(lt_tensor_full(tape->ctx, output->dtype, output->rank, output->shape, 1.0, &g0));
  } else {
    LT_TRY(lt__check_tensor(grad_output, "lt_tape_backward: grad_output"));
    if (grad_output->storage->ctx != tape->ctx)
      return lt__context_mismatch("lt_tape_backward", "grad_output", grad_output->storage->ctx,
                                  "the tape", tape->ctx);
    LT_TRY(lt_view_broadcast_to(grad_output, output->rank, output->shape, &g0));
  }
  lt_tensor **snap = NULL;
  lt_status st = snapshot_leaves(tape, &snap);
  if (st == LT_OK) {
    /* Frees saved tensors only once the whole sweep succeeded, so that a failure (say, an
     * in-place write found half-way) leaves the graph usable after the caller fixes it. */
    for (int i = 0; i < tape->n_nodes; i++)
      tape->nodes[i].visited = false;
    st = run_backward(tape, v0, g0);
    for (int v = 0; v < tape->n_vars; v++) {
      lt__ad_var *var = &tape->vars[v];
      if (!var->leaf) {
        lt_tensor_destroy(var->grad);
        var->grad = NULL;
      } else if (st != LT_OK) {
        lt_tensor_destroy(var->grad);
        var->grad = snap[v];
        snap[v] = NULL;
      }
      lt_tensor_destroy(snap[v]);
    }
    free(snap);
  }
  if (st == LT_OK && !(flags & LT_BACKWARD_RETAIN_GRAPH)) {
    for (int i = 0; i < tape->n_nodes; i++)
      if (tape->nodes[i].visited && !tape->nodes[i].freed) node_release_saved(&tape->nodes[i]);
    /* the walked graph's records go too (other graphs on the tape keep theirs) */
    st = lt__ad_prune(tape);
  }
  lt_tensor_destroy(g0);
  return st;
}

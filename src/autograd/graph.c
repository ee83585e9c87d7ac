/* SPDX-License-Identifier: MIT */
/* Pruning the tape, so that it holds only graphs something can still run backward through
 * (PyTorch frees a graph when backward walked it, or when its results die). A node is kept when
 * a kept node reads its result, or when it was not freed by a backward and its result's handle
 * was not forgotten. Nodes are in execution order, so one sweep from the last node back decides
 * every node; the kept nodes and variables are then renumbered in place. */
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>

lt_status lt__ad_prune(lt_tape *tape) {
  tape->n_forgotten = 0;
  if (tape->n_nodes == 0) return LT_OK;
  bool *read = calloc((size_t)tape->n_vars, sizeof *read);
  bool *keep = calloc((size_t)tape->n_nodes, sizeof *keep);
  int *vmap = malloc(sizeof *vmap * (size_t)tape->n_vars);
  int *nmap = malloc(sizeof *nmap * (size_t)tape->n_nodes);
  if (!read || !keep || !vmap || !nmap) { /* keeping everything is correct, only bigger */
    free(read);
    free(keep);
    free(vmap);
    free(nmap);
    return LT_OK;
  }
  for (int i = tape->n_nodes - 1; i >= 0; i--) {
    lt__ad_node *n = &tape->nodes[i];
    const lt__ad_var *ov = &tape->vars[n->out_var];
    keep[i] = read[n->out_var] || (!n->freed && !ov->forgotten);
    if (!keep[i]) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in_var[k] >= 0) read[n->in_var[k]] = true;
  }
  int w = 0;
  for (int i = 0; i < tape->n_nodes; i++) {
    nmap[i] = keep[i] ? w : -1;
    if (keep[i])
      tape->nodes[w++] = tape->nodes[i];
    else
      lt__ad_node_free(&tape->nodes[i]);
  }
  tape->n_nodes = w;
  w = 0;
  for (int v = 0; v < tape->n_vars; v++) {
    lt__ad_var *var = &tape->vars[v];
    bool drop = var->leaf ? var->serial == 0 && !read[v] : nmap[var->node] < 0;
    vmap[v] = drop ? -1 : w;
    if (drop) {
      lt_tensor_destroy(var->grad);
      continue;
    }
    if (!var->leaf) var->node = nmap[var->node];
    tape->vars[w++] = *var;
  }
  tape->n_vars = w;
  for (int i = 0; i < tape->n_nodes; i++) {
    lt__ad_node *n = &tape->nodes[i];
    n->out_var = vmap[n->out_var];
    for (int k = 0; k < n->n_in; k++) {
      /* a freed node may read a dropped result: backward stops at the freed node anyway */
      if (n->in_var[k] >= 0) n->in_var[k] = vmap[n->in_var[k]];
      if (n->in_var[k] < 0) n->needs[k] = false;
    }
  }
  free(read);
  free(keep);
  free(vmap);
  free(nmap);
  return lt__ad_map_rebuild(tape, tape->n_vars);
}

lt_status lt_tape_forget(lt_tape *tape, const lt_tensor *t) {
  LT_TRY(lt__handle_check(tape, LT__HANDLE_TAPE, "lt_tape_forget", "tape"));
  LT_TRY(lt__check_tensor(t, "lt_tape_forget: t"));
  int v = lt__ad_lookup(tape, t);
  if (v < 0) return LT_OK;
  lt__ad_var *var = &tape->vars[v];
  if (var->leaf) return lt_tape_requires_grad(tape, t, false);
  if (var->forgotten) return LT_OK;
  var->forgotten = true;
  /* pruning costs a sweep over the tape: amortised over as many forgotten results */
  if (++tape->n_forgotten >= 16 && 2 * tape->n_forgotten >= tape->n_nodes / 4)
    return lt__ad_prune(tape);
  return LT_OK;
}

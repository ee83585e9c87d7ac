/* SPDX-License-Identifier: MIT */
/* Contraction path: which search runs for which network, under the plan options' budget.
 * Cost model: a step costs the product of the extents of every label it touches (reported as
 * twice that in flops); the objective adds memory_weight times the elements each step writes.
 *
 * LT_PATH_AUTO: exact dynamic programming up to AUTO_DP_MAX operands; beyond, the matrix-chain
 * optimum when the network is a line, else the best of `trials` randomised greedy runs (the
 * first deterministic), improved by subtree reconfiguration; never worse than plain greedy or
 * the written order. From PART_MIN operands every other trial is a recursive bisection
 * (path_part.c) instead. Deterministic for a seed unless the time budget cuts the search short.
 *
 * Trees are compared by lt__tree_cost_less (log2 sums past the double range); the exact DP
 * and the subtree refinement compare plain doubles (a subtree's cost past 1e308 is left as is).
 * LT_PATH_PARTITION: the bisection trials alone, not refined. */
#include "core/error.h"
#include "einsum/einsum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_DP_MAX 10
#define OPTIMAL_DP_MAX 13
/* Bisection trials from this many operands (below, greedy and refinement already find the
 * optimum or near it) up to PART_MAX (each split scans its set per move: quadratic). */
#define PART_MIN 12
#define PART_MAX 4000

typedef struct cand_tree {
  int32_t (*ssa)[2];
  lt__tree_cost cost;
  bool found;
} cand_tree;

static void as_written(int n, int32_t (*ssa)[2]) {
  for (int s = 0; s < n - 1; s++) {
    ssa[s][0] = s == 0 ? 0 : n + s - 1;
    ssa[s][1] = s + 1;
  }
}

/* Keeps `c` in best when it exists and is cheaper. */
static lt_status offer(const lt__pnet *net, cand_tree *best, int32_t (*ssa)[2], bool found) {
  if (!found) return LT_OK;
  lt__tree_cost c;
  LT_TRY(lt__tree_eval(net, (const int32_t(*)[2])ssa, NULL, &c, NULL, NULL));
  if (net->limit > 0 && c.largest > net->limit) return LT_OK;
  if (!best->found || lt__tree_cost_less(&c, &best->cost)) {
    memcpy(best->ssa, ssa, sizeof(int32_t[2]) * (size_t)(net->n - 1));
    best->cost = c;
    best->found = true;
  }
  return LT_OK;
}

/* The search proper over net (its limit may be set), into best. */
/* One bisection tree with sampled parameters: imbalance log-uniform in [0.02, 0.5], exact
 * leaves of 4 to 10 operands, label weights perturbed by up to 50%. */
static lt_status partition_trial(const lt__pnet *net, lt__rng *rng, int32_t (*work)[2],
                                 cand_tree *best) {
  lt__part_params prm = {
      .imbalance = exp(log(0.02) + log(25.0) * lt__rng_uniform(rng)),
      .noise = 0.5 * lt__rng_uniform(rng),
      .cutoff = 4 + (int)(lt__rng_next(rng) % 7),
      .starts = 2,
  };
  bool found;
  LT_TRY(lt__path_partition(net, &prm, rng, work, &found));
  return offer(net, best, work, found);
}

static lt_status search_in(const lt__pnet *net, const lt_plan_options *opts, lt_path_algo algo,
                           int32_t (*work)[2], cand_tree *best, cand_tree *part_best) {
  int n = net->n;
  bool found;
  if (algo == LT_PATH_PARTITION && n >= 2) {
    lt__rng rng = {opts->path_seed};
    double start = lt__seconds();
    for (int t = 0; t < opts->path_trials; t++) {
      if (t > 0 && opts->path_seconds > 0 && lt__seconds() > start + opts->path_seconds) break;
      LT_TRY(partition_trial(net, &rng, work, best));
    }
    return LT_OK;
  }
  as_written(n, work);
  LT_TRY(offer(net, best, work, true));
  if (algo == LT_PATH_NONE || n < 3) return LT_OK;
  if (algo == LT_PATH_OPTIMAL && n <= OPTIMAL_DP_MAX) {
    LT_TRY(lt__path_dp(net, work, &found));
    return offer(net, best, work, found);
  }
  LT_TRY(lt__path_greedy(net, 1.0, 0.0, NULL, work, &found));
  LT_TRY(offer(net, best, work, found));
  if (algo == LT_PATH_GREEDY) return LT_OK;
  if (n <= AUTO_DP_MAX) {
    LT_TRY(lt__path_dp(net, work, &found));
    return offer(net, best, work, found);
  }
  bool chain;
  LT_TRY(lt__path_chain(net, work, &chain));
  LT_TRY(offer(net, best, work, chain));
  if (chain) return LT_OK;
  double start = lt__seconds();
  double deadline = opts->path_seconds > 0 ? start + opts->path_seconds : 0;
  lt__rng rng = {opts->path_seed};
  /* Trials alternate between the greedy family and recursive bisection (each family keeps its
   * own best, refined below), so that each gets half the trials whichever wins. */
  bool use_part = n >= PART_MIN && n <= PART_MAX;
  for (int t = 1; t < opts->path_trials; t++) {
    if (deadline > 0 && lt__seconds() > start + 0.5 * opts->path_seconds) break;
    if (use_part && t % 2 == 1) {
      LT_TRY(partition_trial(net, &rng, work, part_best));
      continue;
    }
    /* costmod in [0.5, 2] and temperature log-uniform in [0.01, 1], as cotengra samples */
    double costmod = 0.5 + 1.5 * lt__rng_uniform(&rng);
    double temperature = exp(log(0.01) + log(100.0) * lt__rng_uniform(&rng));
    LT_TRY(lt__path_greedy(net, costmod, temperature, &rng, work, &found));
    LT_TRY(offer(net, best, work, found));
  }
  /* Refinement with growing subtrees while the budget lasts: larger subtrees find what smaller
   * ones cannot, at a cost exponential in their size. Both families' bests get the first,
   * cheap round (a worse tree before refinement is often the better one after); the larger
   * rounds go to the better of the two only. */
  int first = n <= 300 ? 8 : 6;
  for (int f = 0; f < 2; f++) {
    cand_tree *c = f == 0 ? part_best : best, *other = f == 0 ? best : part_best;
    if (!c->found || (deadline > 0 && lt__seconds() > deadline)) continue;
    /* A family 4x behind the other before refinement has never caught up in our runs (the
     * bench's networks): its refinement time goes to the leader's larger rounds instead. */
    if (other->found && c->cost.log2_objective > other->cost.log2_objective + 2) continue;
    memcpy(work, c->ssa, sizeof(int32_t[2]) * (size_t)(n - 1));
    LT_TRY(lt__path_refine(net, work, first, deadline));
    LT_TRY(offer(net, c, work, true));
  }
  if (part_best->found) LT_TRY(offer(net, best, part_best->ssa, true));
  for (int sub = first + 2; best->found && sub <= 12; sub += 2) {
    if (deadline > 0 && lt__seconds() > deadline) break;
    memcpy(work, best->ssa, sizeof(int32_t[2]) * (size_t)(n - 1));
    LT_TRY(lt__path_refine(net, work, sub, deadline));
    LT_TRY(offer(net, best, work, true));
  }
  return LT_OK;
}

static lt_status search(const lt__pnet *net, const lt_plan_options *opts, lt_path_algo algo,
                        int32_t (*work)[2], cand_tree *best) {
  size_t bytes = sizeof(int32_t[2]) * (size_t)(net->n > 1 ? net->n - 1 : 1);
  cand_tree part_best = {.ssa = lt__host_alloc(net->ctx, bytes)};
  LT_RETURN_IF(part_best.ssa == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the path");
  lt_status st = search_in(net, opts, algo, work, best, &part_best);
  lt__host_free(net->ctx, part_best.ssa, bytes);
  return st;
}

void lt__path_free(lt__path *p) {
  lt_context *ctx = p->net.ctx;
  size_t steps = (size_t)(p->n > 1 ? p->n - 1 : 1);
  if (p->ssa) lt__host_free(ctx, p->ssa, sizeof(int32_t[2]) * steps);
  if (p->pos) lt__host_free(ctx, p->pos, sizeof(int64_t[2]) * steps);
  if (p->step_cost) lt__host_free(ctx, p->step_cost, sizeof(double) * steps);
  if (p->step_size) lt__host_free(ctx, p->step_size, sizeof(double) * steps);
  if (p->sliced) lt__host_free(ctx, p->sliced, sizeof(bool) * (size_t)(p->net.n_labels + 1));
  lt__pnet_free(&p->net);
  memset(p, 0, sizeof *p);
}

/* Step figures, positions and totals for the tree in p->ssa with p->sliced. */
static lt_status finish(lt__path *p) {
  lt__tree_cost c, plain;
  LT_TRY(lt__tree_eval(&p->net, (const int32_t(*)[2])p->ssa, p->sliced, &c, p->step_cost,
                       p->step_size));
  LT_TRY(lt__tree_eval(&p->net, (const int32_t(*)[2])p->ssa, NULL, &plain, NULL, NULL));
  p->cost = c.cost;
  p->largest = c.largest;
  p->slices = 1;
  p->n_sliced = 0;
  for (int l = 0; p->sliced && l < p->net.n_labels; l++)
    if (p->sliced[l]) p->slices *= p->net.extent[l], p->n_sliced++;
  p->overhead = plain.cost > 0 ? c.cost / plain.cost : 1.0;
  return lt__ssa_to_positions(p->net.ctx, p->n, (const int32_t(*)[2])p->ssa, p->pos);
}

lt_status lt__einsum_path(lt_context *ctx, const lt__einsum_canon *c, const lt_plan_options *opts,
                          size_t elem_bytes, lt__path *p) {
  memset(p, 0, sizeof *p);
  int n = c->n_inputs;
  p->n = n;
  const int32_t **modes = lt__host_alloc(ctx, sizeof(int32_t *) * (size_t)n);
  int *ranks = lt__host_alloc(ctx, sizeof(int) * (size_t)n);
  lt_status st = modes && ranks ? LT_OK : LT_ERR_OUT_OF_MEMORY;
  if (st == LT_OK) {
    for (int k = 0; k < n; k++)
      modes[k] = c->in[k].mode, ranks[k] = c->in[k].rank;
    st = lt__pnet_init(&p->net, ctx, n, c->n_labels, c->extent, ranks, modes, c->out.rank,
                       c->out.mode);
  } else {
    lt__error(st, "einsum: out of memory for the path search");
  }
  if (modes) lt__host_free(ctx, modes, sizeof(int32_t *) * (size_t)n);
  if (ranks) lt__host_free(ctx, ranks, sizeof(int) * (size_t)n);
  LT_TRY(st);
  p->net.mem_weight = opts->path_memory_weight;
  size_t steps = (size_t)(n > 1 ? n - 1 : 1);
  p->ssa = lt__host_alloc(ctx, sizeof(int32_t[2]) * steps);
  p->pos = lt__host_alloc(ctx, sizeof(int64_t[2]) * steps);
  p->step_cost = lt__host_alloc(ctx, sizeof(double) * steps);
  p->step_size = lt__host_alloc(ctx, sizeof(double) * steps);
  int32_t(*work)[2] = lt__host_alloc(ctx, sizeof(int32_t[2]) * steps);
  if (!p->ssa || !p->pos || !p->step_cost || !p->step_size || !work) {
    if (work) lt__host_free(ctx, work, sizeof(int32_t[2]) * steps);
    lt__path_free(p);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for a path of %d operands", n);
  }
  cand_tree best = {.ssa = p->ssa};
  double limit = opts->memory_limit > 0 ? (double)opts->memory_limit / (double)elem_bytes : 0;
  if (opts->n_path_pairs > 0 || opts->path_pairs_set) {
    st = lt__positions_to_ssa(ctx, n, opts->n_path_pairs, (const int64_t(*)[2])opts->path_pairs,
                              p->ssa);
    best.found = st == LT_OK;
  } else {
    st = search(&p->net, opts, opts->path, work, &best);
    /* Over the limit: also look for a tree that fits without slicing (used unless slicing the
     * unconstrained one is cheaper, decided when slicing). */
    if (st == LT_OK && limit > 0 && best.cost.largest > limit) {
      int32_t(*work2)[2] = lt__host_alloc(ctx, sizeof(int32_t[2]) * steps);
      cand_tree fit = {.ssa = work2};
      if (work2 == NULL) st = lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory");
      p->net.limit = limit;
      if (st == LT_OK) st = search(&p->net, opts, opts->path, work, &fit);
      p->net.limit = 0;
      if (st == LT_OK && fit.found) {
        bool *sl = lt__host_calloc(ctx, (size_t)p->net.n_labels + 1, sizeof(bool));
        bool ok = false;
        lt__tree_cost sc = {0};
        if (sl == NULL) st = lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory");
        if (st == LT_OK)
          st = lt__path_slice(&p->net, (const int32_t(*)[2])best.ssa, limit, sl, &ok);
        if (st == LT_OK && ok)
          st = lt__tree_eval(&p->net, (const int32_t(*)[2])best.ssa, sl, &sc, NULL, NULL);
        if (st == LT_OK && (!ok || !lt__tree_cost_less(&sc, &fit.cost)))
          memcpy(best.ssa, fit.ssa, sizeof(int32_t[2]) * steps);
        if (sl) lt__host_free(ctx, sl, sizeof(bool) * ((size_t)p->net.n_labels + 1));
      }
      if (work2) lt__host_free(ctx, work2, sizeof(int32_t[2]) * steps);
    }
  }
  if (st == LT_OK && n > 1) {
    int32_t(*naive)[2] = work;
    as_written(n, naive);
    lt__tree_cost nc;
    st = lt__tree_eval(&p->net, (const int32_t(*)[2])naive, NULL, &nc, NULL, NULL);
    p->naive_cost = nc.cost;
  }
  lt__host_free(ctx, work, sizeof(int32_t[2]) * steps);
  if (st == LT_OK && n > 1) st = finish(p);
  if (st != LT_OK) lt__path_free(p);
  return st;
}

lt_status lt__einsum_path_slice(lt__path *p, double target, int64_t limit_bytes) {
  if (p->sliced == NULL) {
    p->sliced = lt__host_calloc(p->net.ctx, (size_t)p->net.n_labels + 1, sizeof(bool));
    LT_RETURN_IF(p->sliced == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory slicing");
  }
  bool ok = false;
  LT_TRY(lt__path_slice(&p->net, (const int32_t(*)[2])p->ssa, target, p->sliced, &ok));
  LT_RETURN_IF(!ok, LT_ERR_OUT_OF_MEMORY,
               "einsum: no contraction order or slicing keeps the execution under the memory "
               "limit of %lld bytes",
               (long long)limit_bytes);
  return finish(p);
}

/* SPDX-License-Identifier: MIT */
/* Contraction-path search over a network of any size. The searches see only labels and
 * extents: a tensor is a sorted list of legs (label, how many original operands under it
 * hold the label); a label leaves a contraction's result once every holder is inside (and
 * the output lacks it). A contraction tree is written SSA style: inputs are ids 0..n-1,
 * step s contracts ids ssa[s][0] and ssa[s][1] into id n + s. */
#ifndef LT_EINSUM_PATH_H
#define LT_EINSUM_PATH_H

#include "core/object.h"

#include <stdint.h>

typedef struct lt__leg {
  int32_t label, count;
} lt__leg;

/* Growable leg storage from a context's allocator (ctx may be NULL: plain malloc). */
typedef struct lt__legpool {
  lt_context *ctx;
  lt__leg *data;
  size_t len, cap;
} lt__legpool;

typedef struct lt__pnet {
  lt_context *ctx;
  int n;           /* operands */
  int n_labels;    /* labels are 0..n_labels-1 */
  double *extent;  /* per label */
  int32_t *total;  /* per label: operands holding it, + 1 when the output has it */
  int64_t *leg_at; /* operand k's legs are legs[leg_at[k] .. leg_at[k+1]) */
  lt__leg *legs;
  size_t legs_bytes;
  double limit;      /* elements an intermediate may hold; 0 = no limit */
  double mem_weight; /* objective = cost + mem_weight * elements written */
} lt__pnet;

/* Builds a network from modes per operand (dense ids < n_labels, repeats allowed) and the
 * output's modes; frees with lt__pnet_free. */
lt_status lt__pnet_init(lt__pnet *net, lt_context *ctx, int n, int n_labels, const int64_t *extent,
                        const int *rank, const int32_t *const *modes, int rank_out,
                        const int32_t *modes_out);
void lt__pnet_free(lt__pnet *net);

/* Merges legs a and b into out (room for na + nb); returns the result's leg count. *size gets
 * the result's elements, *cost the product of every extent the step touches. */
int lt__legs_merge(const lt__pnet *net, const lt__leg *a, int na, const lt__leg *b, int nb,
                   lt__leg *out, double *size, double *cost);
double lt__legs_size(const lt__pnet *net, const lt__leg *a, int na);

lt_status lt__legpool_push(lt__legpool *p, const lt__leg *legs, int n, int64_t *at);
void lt__legpool_free(lt__legpool *p);

/* What a tree costs: sum of step costs (cost), of result elements (written), the largest
 * intermediate (the last step's result, the output, excluded), and the objective. Sums past
 * the double range read +inf; their log2 (exact to rounding at any size) orders such trees. */
typedef struct lt__tree_cost {
  double cost, written, largest, objective;
  double log2_cost, log2_objective;
} lt__tree_cost;

/* Whether a costs less than b (objective), correct beyond the double range. */
bool lt__tree_cost_less(const lt__tree_cost *a, const lt__tree_cost *b);
/* log2(2^a + 2^b), with -inf as zero. */
double lt__log2_add(double a, double b);

/* The product of the extents in the union of two label-sorted leg lists (a pairwise step's
 * cost), or with as_log2 the sum of their log2 (for steps past 2^1024). */
double lt__legs_union_extent(const lt__pnet *net, const lt__leg *a, int na, const lt__leg *b,
                             int nb, bool as_log2);

/* Evaluates an SSA tree of n-1 steps; sliced (may be NULL) marks labels run one value at a
 * time (their extent counts as 1, and the totals are multiplied by the slice count).
 * step_cost/step_size (may be NULL) receive per-step figures. */
lt_status lt__tree_eval(const lt__pnet *net, const int32_t (*ssa)[2], const bool *sliced,
                        lt__tree_cost *out, double *step_cost, double *step_size);

/* Random numbers for the searches (deterministic for a seed). */
typedef struct lt__rng {
  uint64_t s;
} lt__rng;
uint64_t lt__rng_next(lt__rng *r);
double lt__rng_uniform(lt__rng *r); /* in (0, 1) */

/* ---- algorithms (each writes n-1 SSA steps; *found false if none fits net->limit) ---- */

/* Exact optimum over every tree (outer products included) of k <= LT__DP_MAX items with the
 * given legs; writes k-1 steps over local ids 0..k-1 (results k..2k-2). */
#define LT__DP_MAX 14
lt_status lt__path_dp_items(const lt__pnet *net, int k, const lt__leg *const *legs,
                            const int *n_legs, int32_t (*ssa)[2], double *objective, bool *found);
/* Whole network by lt__path_dp_items (net->n <= LT__DP_MAX). */
lt_status lt__path_dp(const lt__pnet *net, int32_t (*ssa)[2], bool *found);
/* The matrix-chain optimum when the operands form a chain (each label on at most two
 * operands, the operands linked as a line); *is_chain false otherwise. O(n^3). */
lt_status lt__path_chain(const lt__pnet *net, int32_t (*ssa)[2], bool *is_chain);
/* Greedy: contracts the connected pair of lowest score size(ab) - costmod*(size(a)+size(b)),
 * perturbed by Gumbel noise of scale `temperature` (0: deterministic); then outer products,
 * smallest first. */
lt_status lt__path_greedy(const lt__pnet *net, double costmod, double temperature, lt__rng *rng,
                          int32_t (*ssa)[2], bool *found);
/* Recursive bisection (path_part.c): split the operands so that little log2-extent weight
 * crosses the cut, `starts` grown-and-refined tries per split with side sizes within
 * (1 +- imbalance)/2, label weights scaled by 1 + noise * U(0,1); groups of at most `cutoff`
 * (2..LT__DP_MAX) operands are solved exactly. Ignores net->limit (the caller checks). */
typedef struct lt__part_params {
  double imbalance, noise;
  int cutoff, starts;
} lt__part_params;
lt_status lt__path_partition(const lt__pnet *net, const lt__part_params *prm, lt__rng *rng,
                             int32_t (*ssa)[2], bool *found);
/* Improves a tree in place by re-solving subtrees of up to `subtree` leaves exactly, until a
 * pass gains nothing or `deadline` (lt__seconds clock; 0 = none) passes. */
lt_status lt__path_refine(const lt__pnet *net, int32_t (*ssa)[2], int subtree, double deadline);
/* Chooses labels to slice so that every intermediate holds at most `target` elements,
 * greedily by least total cost; sliced[] (n_labels) is filled. *ok false if impossible. */
lt_status lt__path_slice(const lt__pnet *net, const int32_t (*ssa)[2], double target, bool *sliced,
                         bool *ok);

/* Monotonic seconds. */
double lt__seconds(void);
/* NumPy-style positions (the result appended to the list) from SSA steps; pos has n-1 rows. */
lt_status lt__ssa_to_positions(lt_context *ctx, int n, const int32_t (*ssa)[2], int64_t (*pos)[2]);
/* SSA steps from NumPy-style positions, validated: LT_ERR_INVALID_ARGUMENT names the bad pair. */
lt_status lt__positions_to_ssa(lt_context *ctx, int n, int64_t n_pairs, const int64_t (*pos)[2],
                               int32_t (*ssa)[2]);

#endif

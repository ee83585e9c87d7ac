/* SPDX-License-Identifier: MIT */
/* Slicing (as cotengra's SliceFinder): when the best tree's largest intermediate exceeds the
 * memory target, fix some labels to one value at a time; every slice runs the same smaller
 * tree and the slices' results add up (or fill disjoint parts of the output). Labels are
 * chosen greedily: each round slices the label that shrinks the largest intermediate for the
 * least total cost over all slices. */
#include "core/error.h"
#include "einsum/path.h"

#include <math.h>
#include <string.h>

lt_status lt__path_slice(const lt__pnet *net, const int32_t (*ssa)[2], double target, bool *sliced,
                         bool *ok) {
  *ok = false;
  memset(sliced, 0, sizeof(bool) * (size_t)net->n_labels);
  lt__tree_cost now;
  LT_TRY(lt__tree_eval(net, ssa, sliced, &now, NULL, NULL));
  for (;;) {
    if (now.largest <= target) {
      *ok = true;
      return LT_OK;
    }
    int best = -1;
    lt__tree_cost best_cost = {0};
    for (int l = 0; l < net->n_labels; l++) {
      if (sliced[l] || net->extent[l] <= 1) continue;
      sliced[l] = true;
      lt__tree_cost c;
      lt_status st = lt__tree_eval(net, ssa, sliced, &c, NULL, NULL);
      sliced[l] = false;
      LT_TRY(st);
      if (!(c.largest < now.largest)) continue;
      bool better = best < 0 || lt__tree_cost_less(&c, &best_cost) ||
                    (!lt__tree_cost_less(&best_cost, &c) && c.largest < best_cost.largest);
      if (better) best = l, best_cost = c;
    }
    if (best < 0) return LT_OK;
    sliced[best] = true;
    now = best_cost;
  }
}

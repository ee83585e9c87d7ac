/* SPDX-License-Identifier: MIT */
/* Plan options of the einsum path search (issue 22): budget, seed, objective, explicit path. */
#include "core/error.h"
#include "ops/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

lt_status lt_plan_options_set_path_budget(lt_plan_options *opts, int trials, double seconds) {
  LT_TRY(
      lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_path_budget", "opts"));
  LT_RETURN_IF(trials < 1, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_path_budget: trials %d is below 1", trials);
  LT_RETURN_IF(!(seconds > 0) || !isfinite(seconds), LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_path_budget: seconds %g is not a positive number", seconds);
  opts->path_trials = trials;
  opts->path_seconds = seconds;
  return LT_OK;
}

lt_status lt_plan_options_set_path_seed(lt_plan_options *opts, uint64_t seed) {
  LT_TRY(lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_path_seed", "opts"));
  opts->path_seed = seed;
  return LT_OK;
}

lt_status lt_plan_options_set_path_cost(lt_plan_options *opts, double memory_weight) {
  LT_TRY(lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_path_cost", "opts"));
  LT_RETURN_IF(!(memory_weight >= 0) || !isfinite(memory_weight), LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_path_cost: memory weight %g is not a finite number >= 0",
               memory_weight);
  opts->path_memory_weight = memory_weight;
  return LT_OK;
}

lt_status lt_plan_options_set_explicit_path(lt_plan_options *opts, int64_t n_pairs,
                                            const int64_t (*pairs)[2]) {
  LT_TRY(
      lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_explicit_path", "opts"));
  LT_RETURN_IF(n_pairs < -1, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_explicit_path: n_pairs %lld is below -1", (long long)n_pairs);
  LT_RETURN_IF(n_pairs > 0 && pairs == NULL, LT_ERR_NULL_POINTER,
               "lt_plan_options_set_explicit_path: pairs is NULL");
  LT_RETURN_IF(n_pairs > (int64_t)(SIZE_MAX / 2 / sizeof(int64_t[2])), LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_explicit_path: n_pairs %lld is too large", (long long)n_pairs);
  int64_t(*copy)[2] = NULL;
  if (n_pairs > 0) {
    copy = malloc(sizeof(int64_t[2]) * (size_t)n_pairs);
    LT_RETURN_IF(copy == NULL, LT_ERR_OUT_OF_MEMORY,
                 "lt_plan_options_set_explicit_path: out of memory for %lld pairs",
                 (long long)n_pairs);
    memcpy(copy, pairs, sizeof(int64_t[2]) * (size_t)n_pairs);
  }
  free(opts->path_pairs);
  opts->path_pairs = copy;
  opts->n_path_pairs = n_pairs < 0 ? 0 : n_pairs;
  opts->path_pairs_set = n_pairs >= 0;
  return LT_OK;
}

/* SPDX-License-Identifier: MIT */
/* Einsum over ranks, two ways. lt_dist_einsum_sliced: every rank holds the small operands and
 * runs its share of a sliced plan's slices (lt_plan_execute_slices); one MPI_Allreduce sums.
 * lt_dist_einsum: distributed operands, rank 0's contraction path, one lt_dist_contract per
 * pairwise step. */
#include "dist/dist.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* "ab,bc->ac": letters and an explicit output only (labels are the letters' codes). */
static lt_status parse(const char *expr, int n, int32_t (*modes)[LT_MAX_RANK], int *ranks,
                       int32_t *out, int *rank_out) {
  static const char fn[] = "lt_dist_einsum";
  int k = 0, r = 0;
  bool in_out = false;
  for (const char *p = expr;; p++) {
    char ch = *p;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      if (r >= LT_MAX_RANK)
        return lt__dist_fail(LT_ERR_PARSE, "%s: more than %d labels in a term", fn, LT_MAX_RANK);
      if (in_out)
        out[r++] = ch;
      else if (k < n)
        modes[k][r++] = ch;
      else
        r++;
    } else if (ch == ',' || (ch == '-' && p[1] == '>') || ch == '\0') {
      if (in_out) {
        if (ch != '\0') return lt__dist_fail(LT_ERR_PARSE, "%s: '%c' after the output", fn, ch);
        *rank_out = r;
        return LT_OK;
      }
      if (k < n) ranks[k] = r;
      k++;
      r = 0;
      if (ch == '\0')
        return lt__dist_fail(LT_ERR_PARSE, "%s: \"%s\" has no explicit \"->\" output", fn, expr);
      if (ch == '-') {
        p++;
        in_out = true;
        if (k != n)
          return lt__dist_fail(LT_ERR_PARSE, "%s: \"%s\" has %d operands, %d tensors given", fn,
                               expr, k, n);
      }
    } else if (ch != ' ') {
      return lt__dist_fail(LT_ERR_PARSE, "%s: '%c' in \"%s\" (letters, ',' and '->' only)", fn, ch,
                           expr);
    }
  }
}

static bool has(const int32_t *m, int n, int32_t l) {
  for (int i = 0; i < n; i++)
    if (m[i] == l) return true;
  return false;
}

typedef struct dist_einsum_state {
  int n;
  int32_t (*modes)[LT_MAX_RANK];
  int *ranks;
  lt_dist_tensor **ops;
  bool *owned;
  int64_t (*pairs)[2];
} dist_einsum_state;

static void state_free(dist_einsum_state *s) {
  for (int i = 0; s->ops && s->owned && i < s->n; i++)
    if (s->owned[i]) lt_dist_tensor_destroy(s->ops[i]);
  free(s->modes);
  free(s->ranks);
  free(s->ops);
  free(s->owned);
  free(s->pairs);
}

/* One pairwise step: operands at positions i and j leave the list, their product is appended. */
static lt_status step(dist_einsum_state *s, int *count, int i, int j, const int32_t *out,
                      int rank_out) {
  int32_t keep[LT_MAX_RANK];
  int nk = 0;
  if (*count == 2) {
    memcpy(keep, out, sizeof(int32_t) * (size_t)rank_out);
    nk = rank_out;
  } else {
    for (int side = 0; side < 2; side++) {
      int o = side ? j : i;
      for (int m = 0; m < s->ranks[o]; m++) {
        int32_t l = s->modes[o][m];
        bool needed = has(out, rank_out, l);
        for (int q = 0; q < *count && !needed; q++)
          if (q != i && q != j && has(s->modes[q], s->ranks[q], l)) needed = true;
        if (needed && !has(keep, nk, l)) {
          if (nk == LT_MAX_RANK)
            return lt__dist_fail(LT_ERR_INVALID_ARGUMENT,
                                 "lt_dist_einsum: an intermediate of rank > %d", LT_MAX_RANK);
          keep[nk++] = l;
        }
      }
    }
  }
  lt_dist_tensor *c = NULL;
  LT_TRY_DIST(lt_dist_contract(s->ops[i], s->modes[i], s->ops[j], s->modes[j], nk, keep, &c));
  int lo = i < j ? i : j, hi = i < j ? j : i;
  if (s->owned[hi]) lt_dist_tensor_destroy(s->ops[hi]);
  if (s->owned[lo]) lt_dist_tensor_destroy(s->ops[lo]);
  for (int q = hi; q + 1 < *count; q++) {
    s->ops[q] = s->ops[q + 1], s->owned[q] = s->owned[q + 1], s->ranks[q] = s->ranks[q + 1];
    memcpy(s->modes[q], s->modes[q + 1], sizeof s->modes[q]);
  }
  (*count)--;
  for (int q = lo; q + 1 < *count; q++) {
    s->ops[q] = s->ops[q + 1], s->owned[q] = s->owned[q + 1], s->ranks[q] = s->ranks[q + 1];
    memcpy(s->modes[q], s->modes[q + 1], sizeof s->modes[q]);
  }
  (*count)--;
  s->ops[*count] = c;
  s->owned[*count] = true;
  s->ranks[*count] = nk;
  memcpy(s->modes[*count], keep, sizeof(int32_t) * (size_t)nk);
  (*count)++;
  return LT_OK;
}

lt_status lt_dist_einsum(const char *expr, int n_inputs, const lt_dist_tensor *const *inputs,
                         const lt_plan_options *opts, lt_dist_tensor **out) {
  static const char fn[] = "lt_dist_einsum";
  if (n_inputs < 1 || inputs == NULL || inputs[0] == NULL)
    return lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: no operands (or a NULL first operand)", fn);
  MPI_Comm comm = inputs[0]->comm;
  int me = inputs[0]->me;
  lt_status st =
      out && expr ? LT_OK
                  : lt__dist_fail(LT_ERR_NULL_POINTER, "%s: %s is NULL", fn, out ? "expr" : "out");
  if (out) *out = NULL;
  if (st == LT_OK && n_inputs < 2)
    st = lt__dist_fail(LT_ERR_UNSUPPORTED,
                       "%s: one operand (lt_dist_permute/lt_dist_reduce do that)", fn);
  dist_einsum_state s = {.n = n_inputs};
  int32_t mout[LT_MAX_RANK];
  int rank_out = 0;
  if (st == LT_OK) {
    s.modes = calloc((size_t)n_inputs, sizeof *s.modes);
    s.ranks = calloc((size_t)n_inputs, sizeof *s.ranks);
    s.ops = calloc((size_t)n_inputs, sizeof *s.ops);
    s.owned = calloc((size_t)n_inputs, sizeof *s.owned);
    s.pairs = calloc((size_t)n_inputs, sizeof *s.pairs);
    if (!s.modes || !s.ranks || !s.ops || !s.owned || !s.pairs)
      st = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  if (st == LT_OK) st = parse(expr, n_inputs, s.modes, s.ranks, mout, &rank_out);
  for (int i = 0; st == LT_OK && i < n_inputs; i++) {
    if (inputs[i] == NULL)
      st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: operand %d is NULL", fn, i);
    else if (inputs[i]->lay.rank != s.ranks[i])
      st = lt__dist_fail(LT_ERR_SHAPE_MISMATCH, "%s: operand %d has rank %d, the expression %d", fn,
                         i, inputs[i]->lay.rank, s.ranks[i]);
    else
      s.ops[i] = (lt_dist_tensor *)inputs[i];
  }
  /* rank 0's path for everyone: a search cut short by its time cap may differ between ranks */
  if (st == LT_OK && me == 0) {
    const int64_t **sh = calloc((size_t)n_inputs, sizeof *sh);
    const int32_t **md = calloc((size_t)n_inputs, sizeof *md);
    if (!sh || !md) st = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    for (int i = 0; st == LT_OK && i < n_inputs; i++)
      sh[i] = inputs[i]->lay.shape, md[i] = s.modes[i];
    if (st == LT_OK)
      st =
          lt_einsum_find_path(n_inputs, s.ranks, sh, md, rank_out, mout, opts, s.pairs, NULL, NULL);
    free(sh);
    free(md);
  }
  st = lt__dist_agree(comm, st);
  if (st == LT_OK)
    st = lt__dist_mpi(MPI_Bcast(s.pairs, 2 * (n_inputs - 1), MPI_INT64_T, 0, comm),
                      "lt_dist_einsum: MPI_Bcast of the path");
  int count = n_inputs;
  for (int p = 0; st == LT_OK && p < n_inputs - 1; p++)
    st = step(&s, &count, (int)s.pairs[p][0], (int)s.pairs[p][1], mout, rank_out);
  if (st == LT_OK) {
    *out = s.ops[0];
    s.owned[0] = false;
  }
  s.n = count;
  state_free(&s);
  return st;
}

lt_status lt_dist_einsum_sliced(MPI_Comm comm, const char *expr, int n_inputs,
                                const lt_tensor *const *inputs, const lt_plan_options *opts,
                                lt_tensor **out) {
  static const char fn[] = "lt_dist_einsum_sliced";
  int me = 0, nproc = 1;
  lt_status st = lt__dist_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  if (st == LT_OK) st = lt__dist_mpi(MPI_Comm_size(comm, &nproc), "MPI_Comm_size");
  if (st != LT_OK) return st;
  if (st == LT_OK && out == NULL) st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  if (out) *out = NULL;
  lt_plan *plan = NULL;
  lt_tensor *d = NULL;
  if (st == LT_OK) st = lt_plan_einsum(expr, n_inputs, inputs, NULL, opts, &plan);
  /* every rank must run the same slices of the same tree: compare with rank 0's */
  int64_t steps = 0;
  double slices = 1;
  if (st == LT_OK) st = lt_plan_einsum_n_steps(plan, &steps);
  if (st == LT_OK) st = lt_plan_einsum_slicing(plan, NULL, NULL, 0, &slices, NULL);
  int64_t *mine = calloc((size_t)(2 * steps + 2), sizeof(int64_t));
  int64_t *root = calloc((size_t)(2 * steps + 2), sizeof(int64_t));
  if (st == LT_OK && (!mine || !root))
    st = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  if (st == LT_OK) {
    mine[0] = steps;
    mine[1] = (int64_t)slices;
    for (int64_t k = 0; st == LT_OK && k < steps; k++)
      st = lt_plan_einsum_step(plan, k, &mine[2 + 2 * k], NULL, NULL, NULL);
    memcpy(root, mine, sizeof(int64_t) * (size_t)(2 * steps + 2));
  }
  MPI_Datatype mt = MPI_DATATYPE_NULL;
  if (st == LT_OK) st = lt_plan_create_output(plan, &d);
  if (st == LT_OK) {
    lt_dtype dt = lt_tensor_dtype(d);
    mt = dt == LT_BOOL ? MPI_DATATYPE_NULL : lt__dist_mpi_type(dt);
    if (mt == MPI_DATATYPE_NULL)
      st = lt__dist_fail(LT_ERR_DTYPE, "%s: no MPI sum for a %s result", fn, lt_dtype_name(dt));
  }
  st = lt__dist_agree(comm, st);
  /* the sizes agree once the plans do: the same expression and shapes give the same steps */
  int64_t len = 2 * steps + 2;
  int64_t root_len = len;
  if (st == LT_OK)
    st = lt__dist_mpi(MPI_Bcast(&root_len, 1, MPI_INT64_T, 0, comm),
                      "lt_dist_einsum_sliced: MPI_Bcast");
  if (st == LT_OK && root_len > len) {
    /* rank 0's tree is longer than ours: room for it, so that the broadcast still matches */
    int64_t *grown = realloc(root, sizeof(int64_t) * (size_t)root_len);
    if (grown == NULL) MPI_Abort(comm, 1); /* cannot join the broadcast: end the job, not hang */
    root = grown;
  }
  if (st == LT_OK)
    st = lt__dist_mpi(MPI_Bcast(root, (int)root_len, MPI_INT64_T, 0, comm),
                      "lt_dist_einsum_sliced: MPI_Bcast");
  if (st == LT_OK && (root_len != len || memcmp(root, mine, sizeof(int64_t) * (size_t)len) != 0))
    st = lt__dist_fail(LT_ERR_INTERNAL,
                       "%s: rank %d planned another path or slicing than rank 0 (a path search cut "
                       "short by its time budget; give an explicit path or a larger budget)",
                       fn, me);
  if (st == LT_OK) {
    int64_t total = mine[1], first = total * me / nproc, last = total * (me + 1) / nproc;
    double sc[2] = {1.0, 0.0};
    st = lt_plan_execute_slices(plan, first, last - first, inputs, n_inputs, sc, 2, d);
  }
  size_t bytes = d ? lt_tensor_nbytes(d) : 0;
  void *buf = st == LT_OK ? malloc(bytes + 1) : NULL;
  if (st == LT_OK && buf == NULL) st = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  if (st == LT_OK) st = lt_tensor_to_host(d, buf, bytes);
  if (st == LT_OK && lt_tensor_numel(d) > INT_MAX)
    st = lt__dist_fail(LT_ERR_UNSUPPORTED, "%s: a result of %lld elements is past MPI's count", fn,
                       (long long)lt_tensor_numel(d));
  st = lt__dist_agree(comm, st);
  if (st == LT_OK)
    st = lt__dist_mpi(MPI_Allreduce(MPI_IN_PLACE, buf, (int)lt_tensor_numel(d), mt, MPI_SUM, comm),
                      "lt_dist_einsum_sliced: MPI_Allreduce");
  if (st == LT_OK) {
    if (nproc > 1) lt__dist_count(bytes); /* alone, a rank receives nothing */
    st = lt_tensor_from_host(lt_tensor_context(d), lt_tensor_dtype(d), lt_tensor_rank(d),
                             lt_tensor_shape(d), NULL, buf, out);
  }
  free(buf);
  free(mine);
  free(root);
  lt_tensor_destroy(d);
  lt_plan_destroy(plan);
  return st;
}

/* SPDX-License-Identifier: MIT */
/* The reduction engine's inner walks: the reduced dims are the input's contiguous ones, so each
 * output reduces rows in chunks; few outputs split their reduced range between threads, and
 * reduced rows outside the kept space are read in memory order (row walk). See cpu_reduce.c. */
#include "backend/cpu/cpu_reduce.h"

/* Reduces linear positions [lo, hi) of the reduced space starting from input offset base. */
static void reduce_range(const reduce_job *j, int64_t base, int64_t lo, int64_t hi, partial *r) {
  if (lo >= hi) return; /* also an empty reduced space, whose extents may be 0 */
  const lt__cpu_nest *red = &j->red;
  int inner = red->rank - 1;
  int64_t len = red->rank ? red->shape[inner] : 1, st = red->rank ? red->strides[IN][inner] : 0;
  _Alignas(64) double buf[LT__CPU_CHUNK];
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, red, red->rank ? inner : 0, lo / len);
  /* One contiguous stream per output (and often from one output to the next): software
   * prefetch a fixed distance ahead. The hardware prefetchers alone left summing 2 KB rows at 0.7
   * of a plain read loop; 8 KB ahead brought it to 1.0-1.1. Rows apart from each other are not
   * prefetched past their end: that cost 10% on a reduction over the outer and inner dims. */
  int64_t ahead = red->rank == 1 && st == 1 ? PREFETCH_AHEAD : 0;
  /* Short rows apart from each other: the row NEXT_ROWS ahead is requested whole instead. */
  size_t es = lt_dtype_size(j->step->in.dtype);
  bool next_rows = red->rank > 1 && st == 1 && len * (int64_t)es <= SHORT_ROW_BYTES;
  lt__cpu_odometer later;
  if (next_rows) rows_ahead(&later, &it);
  int64_t col = lo % len, pos = lo;
  while (pos < hi) {
    if (next_rows && col == 0) prefetch_row_ahead(j, base, &later, len * (int64_t)es);
    int64_t n = len - col;
    if (n > hi - pos) n = hi - pos;
    if (n > LT__CPU_CHUNK) n = LT__CPU_CHUNK;
    const void *v = chunk_values(j, base + it.off[IN] + col * st, st, n, buf);
    if (j->is_arg)
      j->k->arg(v, n, pos, j->step->op == LT_REDUCE_ARGMAX, &r->value, &r->index, &r->nan);
    else
      r->value = fold(j->kind, r->value, j->k->reduce(v, n, j->kind, v == buf ? 0 : ahead));
    pos += n;
    col += n;
    if (col == len) {
      col = 0;
      lt__cpu_odometer_next(&it);
    }
  }
}

/* One output from its partial: the index for argmax/argmin, else the scaled total. */
static void finish(const reduce_job *j, const lt__cpu_odometer *kept, partial r) {
  double v = j->is_arg ? (double)r.index : r.value;
  if (!j->is_arg) scale_totals(j, &v, 1);
  const int64_t unit[3] = {0, 0, 0};
  store_outputs(j, kept->off, unit, &v, 1);
}

static partial start(const reduce_job *j) {
  partial r = {identity(j), -1, false};
  return r;
}

static void run_inner(void *arg, int64_t lo, int64_t hi) {
  const reduce_job *j = arg;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &j->kept, j->kept.rank, lo);
  for (int64_t o = lo; o < hi; o++) {
    partial r = start(j);
    reduce_range(j, it.off[IN], 0, j->n_red, &r);
    finish(j, &it, r);
    lt__cpu_odometer_next(&it);
  }
}

/* Row walk: the reduced dims but the inner one lie outside every kept dim in memory ((256, 512,
 * 512) summed over axes 0 and 2, NCHW summed over N, H and W), so the input is read in memory
 * order: for each outer reduced position, the task's outputs each fold one row into
 * j->partials. Each output's rows and chunks are folded in the inner walk's order (the same
 * bits); an output at a time jumped a whole outer step from row to row. */
static void run_row_walk(void *arg, int64_t lo, int64_t hi) {
  const reduce_job *j = arg;
  const lt__cpu_nest *red = &j->red;
  int inner = red->rank - 1;
  int64_t len = red->shape[inner], st = red->strides[IN][inner], rows = j->n_red / len;
  /* Rows of neighbouring outputs usually follow each other: prefetch past the row (4 KB pages
   * stop the hardware prefetchers). */
  int64_t ahead = st == 1 ? PREFETCH_AHEAD : 0;
  _Alignas(64) double buf[LT__CPU_CHUNK];
  for (int64_t o = lo; o < hi; o++)
    j->partials[o] = start(j);
  lt__cpu_odometer outer;
  lt__cpu_odometer_seek(&outer, red, inner, 0);
  for (int64_t row = 0; row < rows; row++) {
    lt__cpu_odometer it;
    lt__cpu_odometer_seek(&it, &j->kept, j->kept.rank, lo);
    for (int64_t o = lo; o < hi; o++) {
      int64_t base = it.off[IN] + outer.off[IN];
      partial *r = &j->partials[o];
      for (int64_t col = 0; col < len; col += LT__CPU_CHUNK) {
        int64_t n = len - col < LT__CPU_CHUNK ? len - col : LT__CPU_CHUNK;
        const void *v = chunk_values(j, base + col * st, st, n, buf);
        r->value = fold(j->kind, r->value, j->k->reduce(v, n, j->kind, v == buf ? 0 : ahead));
      }
      lt__cpu_odometer_next(&it);
    }
    lt__cpu_odometer_next(&outer);
  }
}

/* Outputs [lo, hi) from j->partials. */
static void run_finish(void *arg, int64_t lo, int64_t hi) {
  const reduce_job *j = arg;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &j->kept, j->kept.rank, lo);
  for (int64_t o = lo; o < hi; o++) {
    finish(j, &it, j->partials[o]);
    lt__cpu_odometer_next(&it);
  }
}

/* Split walk: task t reduces piece t % pieces of output t / pieces into j->partials[t]. */
static void run_pieces(void *arg, int64_t lo, int64_t hi) {
  const reduce_job *j = arg;
  for (int64_t t = lo; t < hi; t++) {
    int64_t o = t / j->pieces, p = t % j->pieces;
    lt__cpu_odometer it;
    lt__cpu_odometer_seek(&it, &j->kept, j->kept.rank, o);
    partial r = start(j);
    reduce_range(j, it.off[IN], j->n_red * p / j->pieces, j->n_red * (p + 1) / j->pieces, &r);
    j->partials[t] = r;
  }
}

static void combine_pieces(const reduce_job *j) {
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &j->kept, j->kept.rank, 0);
  for (int64_t o = 0; o < j->n_out; o++) {
    partial r = j->partials[o * j->pieces];
    for (int64_t p = 1; p < j->pieces; p++) {
      partial q = j->partials[o * j->pieces + p];
      if (j->is_arg)
        r = later_piece_arg(j, r, q);
      else
        r.value = fold(j->kind, r.value, q.value);
    }
    finish(j, &it, r);
    lt__cpu_odometer_next(&it);
  }
}

/* Whether run_row_walk applies: two or more reduced dims (not argmax's one), of which all but the
 * inner one step further than the whole kept space spans, and rows of ROW_WALK_BYTES or more
 * (shorter ones went 10-15% slower than an output at a time with rows prefetched whole). */
static bool rows_outside_kept(const reduce_job *j) {
  const lt__cpu_nest *kept = &j->kept, *red = &j->red;
  if (j->is_arg || red->rank < 2 || j->n_out < 2 || j->n_red == 0) return false;
  int64_t len = red->shape[red->rank - 1];
  if (len * (int64_t)lt_dtype_size(j->step->in.dtype) < ROW_WALK_BYTES) return false;
  int64_t span = abs64(red->strides[IN][red->rank - 1]) * len;
  for (int d = 0; d < kept->rank; d++)
    span += abs64(kept->strides[IN][d]) * (kept->shape[d] - 1);
  for (int d = 0; d < red->rank - 1; d++)
    if (abs64(red->strides[IN][d]) < span) return false;
  return true;
}

void lt__cpu_reduce_inner(lt_context *ctx, reduce_job *j, int64_t work) {
  j->pieces = 1;
  j->group = 0;
  j->lanes = 1;
  if (j->n_out < 64 && j->n_red >= 2 * SPLIT_MIN) {
    j->pieces = j->n_red / SPLIT_MIN;
    if (j->pieces > 64) j->pieces = 64;
    size_t bytes = sizeof(partial) * (size_t)(j->n_out * j->pieces);
    j->partials = lt__host_alloc(ctx, bytes);
    if (j->partials != NULL) {
      lt__cpu_parallel(ctx, j->n_out * j->pieces, work, run_pieces, j);
      combine_pieces(j);
      lt__host_free(ctx, j->partials, bytes);
      return;
    }
    j->pieces = 1; /* no memory for partials: reduce without splitting */
  }
  if (rows_outside_kept(j)) {
    size_t bytes = sizeof(partial) * (size_t)j->n_out;
    j->partials = lt__host_alloc(ctx, bytes);
    if (j->partials != NULL) {
      lt__cpu_parallel(ctx, j->n_out, work, run_row_walk, j);
      lt__cpu_parallel(ctx, j->n_out, j->n_out, run_finish, j);
      lt__host_free(ctx, j->partials, bytes);
      return;
    }
  }
  lt__cpu_parallel(ctx, j->n_out, work, run_inner, j);
}

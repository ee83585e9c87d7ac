/* SPDX-License-Identifier: MIT */
/* The reduction engine's outer walk: a kept dim is the input's contiguous one, so a chunk of
 * outputs accumulates whole input rows elementwise (flushed into double every few rows); with
 * groups, lanes or transposed tiles for the layouts described at each (see cpu_reduce.c). */
#include "backend/cpu/cpu_reduce.h"

/* With tiles: requests the first NEXT_TILES_BYTES of the n rows after the task's n rows (the
 * next task's, when the rows follow each other) while these are transposed. The transposes
 * read 128 rows a piece at a time, which the hardware prefetchers follow poorly: (N, 64)
 * summed over axis 1 went from 8.5 to 10.7 GB/s, argmax 5.4 -> 6.2, (N, 100) 1.1x; 64 KB
 * measured the same, 16 KB less. */
static void prefetch_next_rows(const reduce_job *j, int64_t base, int64_t n) {
  int64_t ks = j->kept.strides[IN][j->kept.rank - 1], size = (int64_t)j->k->size;
  int64_t bytes = n * ks * size;
  if (ks <= 0) return;
  if (bytes > NEXT_TILES_BYTES) bytes = NEXT_TILES_BYTES;
  lt__cpu_prefetch_span((const char *)j->step->in.mem + (base + j->red.offset[IN] + n * ks) * size,
                        bytes);
}

/* Reduced positions [0, rows) of the contiguous rows of n outputs along the kept inner dim, the
 * first starting at input offset off: `rows` rows of n values in buf (j->tile_rows). */
static const void *tile_values(const reduce_job *j, int64_t off, int64_t n, int64_t rows,
                               void *buf) {
  const lt__cpu_nest *kept = &j->kept;
  size_t es = j->k->size;
  lt__cpu_transpose_tile(buf, n, (const char *)j->step->in.mem + off * (int64_t)es,
                         kept->strides[IN][kept->rank - 1], rows, n, es, j->simd);
  return transformed(j, buf, rows * n, buf);
}

/* outer_rows for argmax/argmin: a running best row and its positions; total gets the
 * positions. With lanes (argmax's one reduced dim following the kept inner one in memory), a
 * step is a block of j->lanes contiguous rows. */
static void outer_args(const reduce_job *j, const lt__cpu_odometer *it, int64_t w0, int64_t n,
                       int64_t rlo, int64_t rhi, double *total, double *values) {
  const lt__cpu_nest *kept = &j->kept;
  int q = kept->rank - 1;
  _Alignas(64) double best[LT__CPU_CHUNK], buf[VALUES_MAX];
  int64_t idx[LT__CPU_CHUNK];
  int64_t base = it->off[IN] + w0 * kept->strides[IN][q];
  bool is_max = j->step->op == LT_REDUCE_ARGMAX;
  int64_t m = j->tile_rows ? j->tile_rows : j->lanes;
  int64_t st = m > 1 ? 1 : kept->strides[IN][q], size = (int64_t)j->k->size;
  /* With lanes or tiles the reduced space is one dim: block i starts i * m rows past its start
   * (tiles: i * m positions along the outputs' rows). */
  int64_t extent = m > 1 ? j->red.shape[0] : 0, row_stride = m > 1 ? j->red.strides[IN][0] : 0;
  lt__cpu_odometer r;
  lt__cpu_odometer_seek(&r, &j->red, m > 1 ? 0 : j->red.rank, rlo);
  if (j->tile_rows) prefetch_next_rows(j, base, n);
  for (int64_t i = rlo; i < rhi; i++) {
    int64_t pos = i * m, rows = m > 1 && extent - pos < m ? extent - pos : m;
    const char *v = j->tile_rows
                        ? tile_values(j, base + r.off[IN] + pos * row_stride, n, rows, buf)
                        : chunk_values(j, base + r.off[IN] + pos * row_stride, st, rows * n, buf);
    if (i == rlo) { /* the first row starts the running best */
      memcpy(best, v, (size_t)(n * size));
      for (int64_t w = 0; w < n; w++)
        idx[w] = pos;
      v += n * size;
      rows--;
      pos++;
    }
    j->k->arg_rows(best, idx, v, n, rows, pos, is_max);
    if (m == 1) lt__cpu_odometer_next(&r);
  }
  for (int64_t w = 0; w < n; w++)
    total[w] = (double)idx[w];
  if (values) j->k64->load(values, best, j->k->dtype, 0, 1, n);
}

/* Outputs [w0, w0 + n) along the kept inner dim at kept position `it` from their totals in the
 * compute type, when j->direct: finished there (the same bits as in double, see direct_finish)
 * and stored. Through double, a chunk of a mean over a 3-wide axis took four passes costing as
 * much as reading its input. */
static void store_direct(const reduce_job *j, const lt__cpu_odometer *it, int64_t w0, int64_t n,
                         void *acc) {
  const lt__cpu_nest *kept = &j->kept;
  const lt__reduce_step *s = j->step;
  int64_t st = kept->strides[OUT][kept->rank - 1];
  double count = s->op == LT_REDUCE_MEAN ? (double)j->n_red : 0;
  if (count != 0 || s->alpha != 1) j->k->scale_totals(acc, n, count, s->alpha);
  j->k->store(s->out.mem, s->out.dtype, it->off[OUT] + w0 * st, st, acc, n);
}

/* acc[0, n) = its m copies of n accumulators folded in order (the lanes of outer_rows). */
static void fold_lanes(const lt__cpu_kernels *k, void *acc, int64_t n, int64_t m,
                       lt__cpu_reduce_kind kind) {
  char *a = acc;
  for (int64_t c = 1; c < m; c++)
    k->accumulate(a, a + c * n * (int64_t)k->size, n, kind);
}

/* Outer walk, one task: outputs [w0, w0 + n) along the kept inner dim at kept position `it`,
 * accumulated over reduced positions [rlo, rhi) into total[0, n) (double); false when they were
 * stored already (store_direct). */
static bool outer_rows(const reduce_job *j, const lt__cpu_odometer *it, int64_t w0, int64_t n,
                       int64_t rlo, int64_t rhi, double *total) {
  if (j->is_arg) {
    outer_args(j, it, w0, n, rlo, rhi, total, j->pieces > 1 ? total + j->width : NULL);
    return true;
  }
  const lt__cpu_kernels *k = j->k, *k64 = j->k64;
  const lt__cpu_nest *kept = &j->kept;
  int q = kept->rank - 1;
  _Alignas(64) double acc[LT__CPU_CHUNK], wide[LT__CPU_CHUNK], buf[VALUES_MAX];
  int64_t base = it->off[IN] + w0 * kept->strides[IN][q];
  double init = identity(j);
  /* A step reduces one reduced position: a row of n values along the kept inner dim. With
   * groups, one position of the reduced dims but the last: n * group contiguous values. With
   * lanes (m > 1), a block of m positions of the reduced inner dim, which follows the kept
   * inner dim in memory: up to n * m contiguous values into n * m accumulators, m copies of the
   * n outputs folded at the end. With tiles (T > 0), a block of T positions of the reduced inner
   * dim, which runs along the outputs' rows: transposed into T rows of n values. Totals leave
   * the compute type every FLUSH_ROWS values per accumulator. */
  int64_t p = j->group ? j->group : 1, m = j->lanes, lanes = n * m, T = j->tile_rows;
  int64_t per_step = T ? T : p, flush = FLUSH_ROWS / per_step > 1 ? FLUSH_ROWS / per_step : 1;
  int64_t st = j->group || m > 1 ? 1 : kept->strides[IN][q], size = (int64_t)k->size;
  bool blocked = m > 1 || T > 0;
  int64_t blocks = blocked ? j->inner_blocks : 1;
  int64_t inner = blocked ? j->red.shape[j->red.rank - 1] : 0;
  _Alignas(64) double lane_totals[LT__CPU_CHUNK];
  double *sums = m > 1 ? lane_totals : total; /* running totals, one per accumulator */
  bool one_flush = rhi - rlo <= flush;        /* then the totals are acc itself */
  if (!one_flush) k64->fill(sums, lanes, init);
  if (T) prefetch_next_rows(j, base, n);
  k->fill(acc, lanes, init);
  lt__cpu_odometer r;
  lt__cpu_odometer_seek(&r, &j->red, j->group || blocked ? j->red.rank - 1 : j->red.rank,
                        rlo / blocks);
  int64_t b = rlo % blocks;
  /* Each row is a short piece of a long one: request the row NEXT_ROWS ahead (as above). */
  bool next_rows = st == 1 && m == 1;
  lt__cpu_odometer later;
  rows_ahead(&later, &r);
  int64_t row_bytes = n * p * (int64_t)lt_dtype_size(j->step->in.dtype);
  for (int64_t i = rlo; i < rhi; i++) {
    if (next_rows) prefetch_row_ahead(j, base, &later, row_bytes);
    if (T) {
      int64_t rows = inner - b * T < T ? inner - b * T : T;
      const char *v = tile_values(j, base + r.off[IN] + b * T, n, rows, buf);
      for (int64_t row = 0; row < rows; row++)
        k->accumulate(acc, v + row * n * size, n, j->kind);
    } else {
      int64_t count = m > 1 ? (inner - b * m < m ? inner - b * m : m) * n : n * p;
      const void *v = chunk_values(j, base + r.off[IN] + b * m * n, st, count, buf);
      if (j->group)
        k->accumulate_groups(acc, v, n, p, j->kind);
      else
        k->accumulate(acc, v, count, j->kind);
    }
    if (one_flush && i + 1 == rhi) {
      fold_lanes(k, acc, n, m, j->kind);
      if (j->direct) {
        store_direct(j, it, w0, n, acc);
        return false;
      }
      k64->load(total, acc, k->dtype, 0, 1, n);
    } else if (!one_flush && ((i + 1 - rlo) % flush == 0 || i + 1 == rhi)) {
      k64->load(wide, acc, k->dtype, 0, 1, lanes);
      k64->accumulate(sums, wide, lanes, j->kind);
      k->fill(acc, lanes, init);
    }
    if (++b == blocks) {
      b = 0;
      lt__cpu_odometer_next(&r);
    }
  }
  if (!one_flush && m > 1) {
    fold_lanes(k64, sums, n, m, j->kind);
    memcpy(total, sums, sizeof(double) * (size_t)n);
  }
  return true;
}

/* Stores totals of outputs [w0, w0 + n) along the kept inner dim at kept position `it` (a
 * chunk at a time: one output at a time cost more than reducing (3, 1000000) over its 3). */
static void outer_finish(const reduce_job *j, const lt__cpu_odometer *it, int64_t w0, int64_t n,
                         double *total) {
  const lt__cpu_nest *kept = &j->kept;
  int q = kept->rank - 1;
  int64_t off[3], st[3];
  for (int x = 0; x < 3; x++) {
    st[x] = kept->strides[x][q];
    off[x] = it->off[x] + w0 * st[x];
  }
  if (!j->is_arg) scale_totals(j, total, n);
  store_outputs(j, off, st, total, n);
}

/* Doubles per outer-walk task in j->outer_partials: the totals, or for argmax/argmin the
 * positions and then the best values. */
static int64_t partial_slot(const reduce_job *j) { return j->is_arg ? 2 * j->width : j->width; }

/* Folds the next piece of an argmax/argmin chunk (positions, then values; n outputs) into the
 * first, by later_piece_arg. */
static void fold_arg_piece(const reduce_job *j, double *total, const double *piece, int64_t n) {
  double *best = total + j->width;
  const double *value = piece + j->width;
  for (int64_t w = 0; w < n; w++) {
    partial r = {best[w], (int64_t)total[w], best[w] != best[w]};
    partial q = {value[w], (int64_t)piece[w], value[w] != value[w]};
    r = later_piece_arg(j, r, q);
    total[w] = (double)r.index;
    best[w] = r.value;
  }
}

/* Outer walk: task t = (chunk c = t / pieces, piece t % pieces), chunk c = (kept outer index,
 * `width` outputs along the kept inner dim). With one piece the task finishes its outputs;
 * with several, each piece reduces a slice of the reduced space into j->partials (so that few
 * wide rows still split between threads, each reading one contiguous slice). */
static void run_outer(void *arg, int64_t lo, int64_t hi) {
  const reduce_job *j = arg;
  const lt__cpu_nest *kept = &j->kept;
  int q = kept->rank - 1;
  _Alignas(64) double total[LT__CPU_CHUNK];
  for (int64_t t = lo; t < hi; t++) {
    int64_t c = t / j->pieces, piece = t % j->pieces;
    lt__cpu_odometer it;
    lt__cpu_odometer_seek(&it, kept, q, c / j->n_chunks);
    int64_t w0 = (c % j->n_chunks) * j->width;
    int64_t n = kept->shape[q] - w0 < j->width ? kept->shape[q] - w0 : j->width;
    int64_t rlo = j->steps * piece / j->pieces, rhi = j->steps * (piece + 1) / j->pieces;
    double *out = j->pieces > 1 ? j->outer_partials + t * partial_slot(j) : total;
    if (outer_rows(j, &it, w0, n, rlo, rhi, out) && j->pieces == 1)
      outer_finish(j, &it, w0, n, total);
  }
}

/* Folds the pieces of every chunk and stores the results. */
static void combine_outer(const reduce_job *j, int64_t n_chunks_total) {
  const lt__cpu_nest *kept = &j->kept;
  int q = kept->rank - 1;
  for (int64_t c = 0; c < n_chunks_total; c++) {
    lt__cpu_odometer it;
    lt__cpu_odometer_seek(&it, kept, q, c / j->n_chunks);
    int64_t w0 = (c % j->n_chunks) * j->width;
    int64_t n = kept->shape[q] - w0 < j->width ? kept->shape[q] - w0 : j->width;
    double *total = j->outer_partials + c * j->pieces * partial_slot(j);
    for (int64_t p = 1; p < j->pieces; p++) {
      const double *piece = total + p * partial_slot(j);
      if (j->is_arg)
        fold_arg_piece(j, total, piece, n);
      else
        for (int64_t w = 0; w < n; w++)
          total[w] = fold(j->kind, total[w], piece[w]);
    }
    outer_finish(j, &it, w0, n, total);
  }
}

/* The extent of the reduced inner dim when it is contiguous, at most GROUP_MAX long, and its
 * runs follow each other along the kept inner dim ((1000, 1000, 3) summed over its 3; (10,)*7
 * over its axes 0, 2, 4 and 6), for accumulate_groups; else 0. Reading such a run as `group`
 * strided rows cost 55% of the time in the strided loads, and as an output's short rows one call
 * per row. Runs of 17-31, and longer ones of min/max, read transposed tiles instead: as groups
 * (each reduced as a row) they ran at 0.8x the tiles' speed, sums of 32-200 at 1.2-1.4x. */
static int64_t contiguous_group(const reduce_job *j) {
  const lt__cpu_nest *kept = &j->kept, *red = &j->red;
  if (j->is_arg || red->rank == 0 || kept->rank == 0) return 0;
  int64_t run = red->shape[red->rank - 1];
  if (red->strides[IN][red->rank - 1] != 1 || run > GROUP_MAX) return 0;
  bool min_max = j->kind == LT__CPU_MIN || j->kind == LT__CPU_MAX;
  if (run > SHORT_GROUP_MAX && (run < LONG_GROUP_MIN || min_max)) return 0;
  return kept->strides[IN][kept->rank - 1] == run ? run : 0;
}

/* Copies m of the kept inner run per outer-walk step when the reduced inner dim follows the
 * kept one, contiguous, in memory (column sums of a tall matrix: (1000000, 64) over axis 0);
 * else 1. A step then reads up to LT__CPU_CHUNK contiguous values; one output at a time read
 * strided, each pass using a fraction of every line (0.35 GB/s, 0.08x NumPy), and a row of 64
 * outputs per step cost a call per 256 bytes. */
static int64_t interleaved_lanes(const reduce_job *j) {
  const lt__cpu_nest *kept = &j->kept, *red = &j->red;
  if (j->group || kept->rank == 0 || red->rank == 0) return 1;
  /* outer_args counts positions along one dim. Its rows are compared a vector at a time, so
   * narrower ones read strided an output at a time instead: (N, 3) ran at 1.6 GB/s in blocks,
   * 5 strided; (N, 8) at 5.8 and 4.0, (N, 64) at 7.9 and 0.9. */
  if (j->is_arg && (red->rank != 1 || kept->shape[kept->rank - 1] < ARG_LANES_MIN)) return 1;
  int64_t w = kept->shape[kept->rank - 1], e = red->shape[red->rank - 1];
  if (kept->strides[IN][kept->rank - 1] != 1 || red->strides[IN][red->rank - 1] != w ||
      w > LT__CPU_CHUNK / 2)
    return 1;
  return LT__CPU_CHUNK / w < e ? LT__CPU_CHUNK / w : e;
}

/* TILE_ROWS when the outer walk's steps should transpose tiles: the reduced inner dim is
 * contiguous, the kept inner one strided (row sums of (1000000, 64)), and the input's values are
 * the compute type's (transposes copy bits); else 0. A reduced position at a time read one value
 * per line fetched: that case ran at 2.6 GB/s, 0.4x NumPy. */
static int64_t transposed_tiles(const reduce_job *j) {
  const lt__cpu_nest *kept = &j->kept, *red = &j->red;
  if (j->group || j->lanes > 1 || kept->rank == 0 || red->rank == 0) return 0;
  if (j->is_arg && red->rank != 1) return 0; /* outer_args counts positions along one dim */
  if (j->step->in.dtype != j->k->dtype || (j->k->size != 4 && j->k->size != 8)) return 0;
  if (red->strides[IN][red->rank - 1] != 1 || kept->strides[IN][kept->rank - 1] == 1) return 0;
  return TILE_ROWS;
}

/* Whether the outer walk's totals can be finished in the compute type (store_direct) with the
 * bits of the finish in double (scale_totals, store_outputs): no C, a float mean's count exact
 * in float, and alpha's product rounded only once on the way to D. */
static bool direct_finish(const reduce_job *j) {
  const lt__reduce_step *s = j->step;
  if (j->is_arg || s->beta != 0) return false;
  if (s->op == LT_REDUCE_MEAN && s->compute == LT_F32 && j->n_red >= (1 << 24)) return false;
  return s->alpha == 1 || s->out.dtype == s->compute;
}

/* Whether the outer walk (chunks of outputs along the kept inner dim, a row per reduced
 * position) beats the inner walk (an output at a time, a call per reduced row): by kernel calls,
 * each of which costs about as much as reducing a few dozen elements, when one walk makes far
 * fewer ((1000, 1000, 3) summed over its 3: a million calls against three thousand); else the
 * walk that reads the input's contiguous dim. */
static bool outer_walk_pays(const reduce_job *j) {
  const lt__cpu_nest *kept = &j->kept, *red = &j->red;
  if (red->rank == 0 || j->lanes > 1) return true;
  int64_t p = j->group ? j->group : 1, most = LT__CPU_CHUNK / p;
  int64_t width = kept->shape[kept->rank - 1], row = red->shape[red->rank - 1];
  width = width < most ? width : most;
  row = row < LT__CPU_CHUNK ? row : LT__CPU_CHUNK;
  double inner_calls = (double)j->n_out * (double)((j->n_red + row - 1) / row);
  double outer_calls = (double)((j->n_out + width - 1) / width) * (double)(j->n_red / p);
  if (outer_calls * 4 < inner_calls) return true;
  if (inner_calls * 4 < outer_calls) return false;
  return abs64(kept->strides[IN][kept->rank - 1]) < abs64(red->strides[IN][red->rank - 1]);
}

bool lt__cpu_reduce_outer_applies(reduce_job *j) {
  const lt__cpu_nest *kept = &j->kept;
  j->lanes = 1;
  if (j->n_red > 0) {
    j->group = contiguous_group(j);
    j->lanes = interleaved_lanes(j);
  }
  return j->n_red > 0 && kept->rank > 0 && outer_walk_pays(j);
}

void lt__cpu_reduce_outer(lt_context *ctx, reduce_job *j, int64_t work) {
  const lt__cpu_nest *kept = &j->kept;
  int64_t w = kept->shape[kept->rank - 1];
  int threads = lt__cpu_threads(ctx);
  int64_t outer_count = lt__cpu_nest_count(kept, kept->rank - 1);
  j->steps = j->group ? j->n_red / j->group : j->n_red;
  j->tile_rows = transposed_tiles(j);
  int64_t most = j->group       ? LT__CPU_CHUNK / j->group
                 : j->tile_rows ? LT__CPU_TILE_MAX
                                : LT__CPU_CHUNK;
  j->width = w < most ? w : most;
  if (j->lanes > 1 || j->tile_rows) { /* blocks of `lanes` (w <= LT__CPU_CHUNK / 2) or tile rows */
    int64_t e = j->red.shape[j->red.rank - 1], per = j->lanes > 1 ? j->lanes : j->tile_rows;
    j->inner_blocks = (e + per - 1) / per;
    j->steps = j->n_red / e * j->inner_blocks;
  }
  if (j->tile_rows) j->simd = lt__cpu_isa_of(ctx)->simd;
  j->n_chunks = (w + j->width - 1) / j->width;
  int64_t chunks = outer_count * j->n_chunks;
  j->pieces = 1;
  if (chunks < 4 * threads && j->steps >= 4 * FLUSH_ROWS && chunks * j->width <= (1 << 20)) {
    j->pieces = (4 * threads + chunks - 1) / chunks;
    if (j->pieces > j->steps / FLUSH_ROWS) j->pieces = j->steps / FLUSH_ROWS; /* none empty */
    size_t bytes = sizeof(double) * (size_t)(chunks * j->pieces * partial_slot(j));
    j->outer_partials = lt__host_alloc(ctx, bytes);
    if (j->outer_partials != NULL) {
      lt__cpu_parallel(ctx, chunks * j->pieces, work, run_outer, j);
      combine_outer(j, chunks);
      lt__host_free(ctx, j->outer_partials, bytes);
      return;
    }
    j->pieces = 1; /* no memory for partials: no split */
  }
  j->direct = direct_finish(j);
  lt__cpu_parallel(ctx, chunks, work, run_outer, j);
}

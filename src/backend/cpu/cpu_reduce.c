/* The strided reduction engine. The kept space and the reduced space become two loop nests
 * (normalised as in cpu_map.c) and one of two walks runs, split across threads:
 *   - inner: the reduced dims are the input's contiguous ones, so each output element reduces
 *     rows in chunks (blocked, 16-32 accumulators per chunk, chunk totals in double); when there
 *     are few outputs, each output's reduced range is split between threads and the partial
 *     results are combined afterwards;
 *   - outer: a kept dim is the input's contiguous one, so a chunk of outputs accumulates whole
 *     input rows elementwise (flushed into double every few rows).
 * Every op is one of sum/prod/min/max after a pre-transform (opA, then square for SUMSQ and
 * abs for MAXABS); NaN handling is the same on both walks: min/max return NaN if any input
 * is NaN, argmax/argmin return the first NaN's index. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_transpose.h"
#include "backend/cpu/cpu_typed.h"
#include "core/object.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_ROWS 64        /* outer walk: rows accumulated in the compute type before a flush */
#define SPLIT_MIN 65536      /* inner walk: reduced elements per piece when splitting one output */
#define SHORT_ROW_BYTES 4096 /* inner walk: rows up to this long, apart, prefetched whole */
#define NEXT_ROWS 2          /* ... this many rows ahead */
#define PREFETCH_AHEAD 8192  /* inner walk: bytes prefetched ahead in a contiguous reduced space */
#define GROUP_MAX 256        /* outer walk: longest contiguous reduced run taken as groups */
#define SHORT_GROUP_MAX 16   /* ... runs up to this long for every op */
#define LONG_GROUP_MIN 32    /* ... longer ones from this long, for sums and products */
#define ROW_WALK_BYTES 1024  /* row walk: shortest reduced rows it takes */
#define ARG_LANES_MIN 8      /* outer walk: narrowest kept inner run argmax takes lanes for */
#define TILE_ROWS 32         /* outer walk, tiles: reduced positions transposed per step */
#define VALUES_MAX (TILE_ROWS * LT__CPU_TILE_MAX) /* values a step may hold */
#define NEXT_TILES_BYTES 32768 /* outer walk, tiles: bytes of the next task's rows prefetched */

enum { IN = 0, OUT = 1, C = 2 };

typedef struct partial {
  double value;
  int64_t index;
  bool nan;
} partial;

typedef struct reduce_job {
  const lt__reduce_step *step;
  const lt__cpu_kernels *k;
  const lt__cpu_kernels *k64; /* F64 kernels for totals (chosen once: the choice reads the env) */
  lt__cpu_reduce_kind kind;
  lt_unary_op pre; /* SQUARE for SUMSQ, ABS for MAXABS, IDENTITY otherwise */
  bool is_arg;
  lt__cpu_nest kept; /* operands IN, OUT, C */
  lt__cpu_nest red;  /* operand IN */
  int64_t n_out, n_red;
  int64_t pieces;         /* inner walk: pieces per output (1 = no split) */
  partial *partials;      /* n_out * pieces when pieces > 1 */
  int64_t width;          /* outer walk: outputs per task along the kept inner dim */
  double *outer_partials; /* outer walk split: chunks * pieces * partial_slot doubles */
  int64_t n_chunks;       /* outer walk: tasks per kept outer index */
  int64_t group;          /* outer walk: reduced inner run per output taken whole (0: rows) */
  int64_t steps;          /* outer walk: n_red, or n_red / group: accumulations per output */
  int64_t lanes;          /* outer walk: copies of the kept inner run per step (1: none) */
  int64_t tile_rows;      /* outer walk: reduced positions per transposed tile (0: no tiles) */
  int64_t inner_blocks;   /* ... with lanes or tiles: steps along the reduced inner dim */
  lt__cpu_simd simd;      /* ... with tiles: their transpose kernels */
  bool direct;            /* outer walk: totals in the compute type are the outputs as they are */
} reduce_job;

static double identity(const reduce_job *j) {
  switch (j->kind) {
  case LT__CPU_PROD: return 1.0;
  case LT__CPU_MIN: return INFINITY;
  case LT__CPU_MAX: return j->pre == LT_UNARY_ABS ? 0.0 : -INFINITY;
  default: return 0.0;
  }
}

static double fold(lt__cpu_reduce_kind kind, double a, double b) {
  switch (kind) {
  case LT__CPU_SUM: return a + b;
  case LT__CPU_PROD: return a * b;
  case LT__CPU_MIN: return (a != a || b != b) ? NAN : (b < a ? b : a);
  case LT__CPU_MAX: return (a != a || b != b) ? NAN : (b > a ? b : a);
  }
  return a;
}

/* n values v in the compute type after opA and the pre-transform (into buf where there are). */
static const void *transformed(const reduce_job *j, const void *v, int64_t n, void *buf) {
  if (j->step->unary != LT_UNARY_IDENTITY) {
    j->k->transform(buf, v, n, j->step->unary, 1.0);
    v = buf;
  }
  if (j->pre != LT_UNARY_IDENTITY) {
    j->k->transform(buf, v, n, j->pre, 1.0);
    v = buf;
  }
  return v;
}

/* The chunk's values after opA and the pre-transform, in the compute type. */
static const void *chunk_values(const reduce_job *j, int64_t off, int64_t stride, int64_t n,
                                void *buf) {
  const lt__operand *in = &j->step->in;
  const void *v;
  if (in->dtype == j->k->dtype && stride == 1) {
    v = (const char *)in->mem + off * (int64_t)j->k->size;
  } else {
    j->k->load(buf, in->mem, in->dtype, off, stride, n);
    v = buf;
  }
  return transformed(j, v, n, buf);
}

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

/* Requests the input row at `later` (offset base) in whole, then steps `later` on: short rows
 * apart from each other defeat the hardware prefetchers. */
static void prefetch_row_ahead(const reduce_job *j, int64_t base, lt__cpu_odometer *later,
                               int64_t bytes) {
  size_t es = lt_dtype_size(j->step->in.dtype);
  lt__cpu_prefetch_span((const char *)j->step->in.mem + (base + later->off[IN]) * (int64_t)es,
                        bytes);
  lt__cpu_odometer_next(later);
}

/* Sets `later` NEXT_ROWS rows past `it` (an odometer is over 500 bytes: copied only where
 * used, since a 2 KB row's reduction measured 10% of its time in these copies). */
static void rows_ahead(lt__cpu_odometer *later, const lt__cpu_odometer *it) {
  *later = *it;
  for (int i = 0; i < NEXT_ROWS; i++)
    lt__cpu_odometer_next(later);
}

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

/* Totals -> alpha * total (mean: divided by the count; in the compute type's precision), in
 * place, in one pass (three passes were a sixth of the time of summing (1000, 1000, 3) over its
 * 3). */
static void scale_totals(const reduce_job *j, double *v, int64_t n) {
  const lt__reduce_step *s = j->step;
  bool mean = s->op == LT_REDUCE_MEAN, f32 = s->compute == LT_F32;
  double count = (double)j->n_red, alpha = s->alpha;
  if (mean && j->n_red == 0) {
    for (int64_t i = 0; i < n; i++)
      v[i] = NAN;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double x = mean ? v[i] / count : v[i];
    v[i] = (f32 ? (double)(float)x : x) * alpha;
  }
}

/* v (+ beta * C unless an index) into n outputs: kept operand x starts at off[x], steps st[x]. */
static void store_outputs(const reduce_job *j, const int64_t *off, const int64_t *st, double *v,
                          int64_t n) {
  const lt__reduce_step *s = j->step;
  const lt__cpu_kernels *k64 = j->k64;
  if (!j->is_arg && s->beta != 0) {
    const lt__operand *c = s->has_c ? &s->c : &s->out;
    _Alignas(64) double cv[LT__CPU_CHUNK];
    k64->load(cv, c->mem, c->dtype, off[C], st[C], n);
    for (int64_t i = 0; i < n; i++)
      v[i] += s->beta * cv[i];
  }
  k64->store(s->out.mem, s->out.dtype, off[OUT], st[OUT], v, n);
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

/* Argmax/argmin of two pieces, r before q in position order: the earliest NaN, else the strictly
 * better value (ties keep r); a piece without a position (empty) never wins. */
static partial later_piece_arg(const reduce_job *j, partial r, partial q) {
  bool better = j->step->op == LT_REDUCE_ARGMAX ? q.value > r.value : q.value < r.value;
  return !r.nan && q.index >= 0 && (q.nan || r.index < 0 || better) ? q : r;
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

static void classify(reduce_job *j) {
  switch (j->step->op) {
  case LT_REDUCE_PROD: j->kind = LT__CPU_PROD; break;
  case LT_REDUCE_MIN: j->kind = LT__CPU_MIN; break;
  case LT_REDUCE_MAX: j->kind = LT__CPU_MAX; break;
  case LT_REDUCE_MAXABS:
    j->kind = LT__CPU_MAX;
    j->pre = LT_UNARY_ABS;
    break;
  case LT_REDUCE_SUMSQ:
    j->kind = LT__CPU_SUM;
    j->pre = LT_UNARY_SQUARE;
    break;
  case LT_REDUCE_ARGMAX:
  case LT_REDUCE_ARGMIN: j->is_arg = true; break;
  default: j->kind = LT__CPU_SUM; break;
  }
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

static void build_nests(reduce_job *j) {
  const lt__reduce_step *s = j->step;
  lt__cpu_nest_init(&j->kept, s->rank, s->shape, 3);
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  const lt__operand *ops[3] = {&s->in, &s->out, c};
  for (int q = 0; q < 3; q++) {
    j->kept.offset[q] = q == IN ? 0 : ops[q]->offset;
    if (s->rank) memcpy(j->kept.strides[q], ops[q]->strides, sizeof(int64_t) * (size_t)s->rank);
  }
  lt__cpu_nest_init(&j->red, s->red_rank, s->red_shape, 1);
  j->red.offset[IN] = s->in.offset;
  if (s->red_rank)
    memcpy(j->red.strides[IN], s->in_red_strides, sizeof(int64_t) * (size_t)s->red_rank);
  j->n_out = lt__cpu_nest_numel(&j->kept);
  j->n_red = lt__cpu_nest_numel(&j->red);
  lt__cpu_nest_squeeze(&j->kept);
  lt__cpu_nest_flip_negative(&j->kept, OUT);
  lt__cpu_nest_sort(&j->kept, OUT);
  lt__cpu_nest_fuse(&j->kept);
  if (j->n_red == 0) return;
  lt__cpu_nest_squeeze(&j->red);
  if (!j->is_arg) {
    /* Only the order of argmax's single dim matters (it reports positions). */
    lt__cpu_nest_flip_negative(&j->red, IN);
    lt__cpu_nest_sort(&j->red, IN);
    lt__cpu_nest_fuse(&j->red);
  }
  /* The kept walk starts at 0 for IN; the reduced walk carries the input's offset. */
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

lt_status lt__cpu_reduce(lt_context *ctx, const lt__reduce_step *s) {
  reduce_job j;
  memset(&j, 0, sizeof j);
  j.step = s;
  j.k = lt__cpu_kernels_widest(s->compute);
  j.k64 = lt__cpu_kernels_widest(LT_F64);
  classify(&j);
  build_nests(&j);
  if (j.n_out == 0) return LT_OK;
  int64_t work = j.n_out + j.n_red * j.n_out;
  const lt__cpu_nest *kept = &j.kept;
  j.lanes = 1;
  if (j.n_red > 0) {
    j.group = contiguous_group(&j);
    j.lanes = interleaved_lanes(&j);
  }
  if (j.n_red > 0 && kept->rank > 0 && outer_walk_pays(&j)) {
    int64_t w = kept->shape[kept->rank - 1];
    int threads = lt__cpu_threads(ctx);
    int64_t outer_count = lt__cpu_nest_count(kept, kept->rank - 1);
    j.steps = j.group ? j.n_red / j.group : j.n_red;
    j.tile_rows = transposed_tiles(&j);
    int64_t most = j.group       ? LT__CPU_CHUNK / j.group
                   : j.tile_rows ? LT__CPU_TILE_MAX
                                 : LT__CPU_CHUNK;
    j.width = w < most ? w : most;
    if (j.lanes > 1 || j.tile_rows) { /* blocks of `lanes` (w <= LT__CPU_CHUNK / 2) or tile rows */
      int64_t e = j.red.shape[j.red.rank - 1], per = j.lanes > 1 ? j.lanes : j.tile_rows;
      j.inner_blocks = (e + per - 1) / per;
      j.steps = j.n_red / e * j.inner_blocks;
    }
    if (j.tile_rows) j.simd = lt__cpu_simd_level();
    j.n_chunks = (w + j.width - 1) / j.width;
    int64_t chunks = outer_count * j.n_chunks;
    j.pieces = 1;
    if (chunks < 4 * threads && j.steps >= 4 * FLUSH_ROWS && chunks * j.width <= (1 << 20)) {
      j.pieces = (4 * threads + chunks - 1) / chunks;
      if (j.pieces > j.steps / FLUSH_ROWS) j.pieces = j.steps / FLUSH_ROWS; /* none empty */
      size_t bytes = sizeof(double) * (size_t)(chunks * j.pieces * partial_slot(&j));
      j.outer_partials = lt__host_alloc(ctx, bytes);
      if (j.outer_partials != NULL) {
        lt__cpu_parallel(ctx, chunks * j.pieces, work, run_outer, &j);
        combine_outer(&j, chunks);
        lt__host_free(ctx, j.outer_partials, bytes);
        return LT_OK;
      }
      j.pieces = 1; /* no memory for partials: no split */
    }
    j.direct = direct_finish(&j);
    lt__cpu_parallel(ctx, chunks, work, run_outer, &j);
    return LT_OK;
  }
  j.pieces = 1;
  j.group = 0;
  j.lanes = 1;
  if (j.n_out < 64 && j.n_red >= 2 * SPLIT_MIN) {
    j.pieces = j.n_red / SPLIT_MIN;
    if (j.pieces > 64) j.pieces = 64;
    size_t bytes = sizeof(partial) * (size_t)(j.n_out * j.pieces);
    j.partials = lt__host_alloc(ctx, bytes);
    if (j.partials != NULL) {
      lt__cpu_parallel(ctx, j.n_out * j.pieces, work, run_pieces, &j);
      combine_pieces(&j);
      lt__host_free(ctx, j.partials, bytes);
      return LT_OK;
    }
    j.pieces = 1; /* no memory for partials: reduce without splitting */
  }
  if (rows_outside_kept(&j)) {
    size_t bytes = sizeof(partial) * (size_t)j.n_out;
    j.partials = lt__host_alloc(ctx, bytes);
    if (j.partials != NULL) {
      lt__cpu_parallel(ctx, j.n_out, work, run_row_walk, &j);
      lt__cpu_parallel(ctx, j.n_out, j.n_out, run_finish, &j);
      lt__host_free(ctx, j.partials, bytes);
      return LT_OK;
    }
  }
  lt__cpu_parallel(ctx, j.n_out, work, run_inner, &j);
  return LT_OK;
}

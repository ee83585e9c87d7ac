/* SPDX-License-Identifier: MIT */
/* CPU gather and scatter-add steps (backend.h). Gather moves raw element bits, rows of the
 * iteration space split across threads. Scatter-add splits the positions off the scattered
 * axis across threads and walks that axis in order inside each, so every output element
 * receives its additions in one fixed order whatever the thread count (no atomics). */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_map.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_transpose.h"
#include "backend/cpu/cpu_typed.h"
#include "backend/index_error.h"
#include "core/dtype.h"
#include "core/error.h"

#include <stdatomic.h>
#include <string.h>

/* Rows: every dim but the last (the inner loop). */
typedef struct index_job {
  const lt__gather_step *g;
  const lt__scatter_step *s;
  int64_t rows;
  atomic_llong bad;  /* lowest iteration position with a bad index (INT64_MAX: none) */
  lt__cpu_nest nest; /* gather: in, out, index over the iteration space (rows: its outer dims) */
  bool stream;       /* gather of whole rows into an output too large to keep in the caches */
  lt__cpu_simd simd;
} index_job;

/* Gathered whole rows (take along a non-last axis): each source row starts at a random place,
 * too briefly read for the hardware prefetchers, so rows this many ahead are requested while
 * this one is copied (rows of at most ROW_PREFETCH_MAX bytes; longer ones the prefetchers
 * follow). 3, not 8 or 16: the same gain from a huge-page source (1.6x), and less loss where
 * the source has 4 KiB pages (a wrapped NumPy array: each prefetch then walks the page table). */
#define ROWS_AHEAD 3
#define ROW_PREFETCH_MAX 4096
#define GATHER_CHUNK 2048 /* bytes of a streamed output row gathered at a time */

static void note_bad(index_job *job, int64_t pos) {
  long long cur = atomic_load(&job->bad);
  while (pos < cur && !atomic_compare_exchange_weak(&job->bad, &cur, pos)) {
  }
}

/* The common element gather: unit-stride index and output rows (the source's stride along the
 * row is 0 when the gather runs along it), the index of a type known at compile time
 * (gather_unit_uint32_t_int64_t, ... for the four element sizes and I32 / I64 indices): the generic
 * loop's per-element index-type switch and stride products cost more than the memory traffic.
 * Returns the first bad column or -1. */
#define GATHER_UNIT(T, I)                                                                          \
  static int64_t gather_unit_##T##_##I(const T *in, int64_t si, int64_t as, T *out, const I *idx,  \
                                       int64_t n, int64_t ext) {                                   \
    for (int64_t c = 0; c < n; c++) {                                                              \
      int64_t j = idx[c];                                                                          \
      j += j < 0 ? ext : 0;                                                                        \
      if ((uint64_t)j >= (uint64_t)ext) return c;                                                  \
      out[c] = in[c * si + j * as];                                                                \
    }                                                                                              \
    return -1;                                                                                     \
  }
#define GATHER_UNIT_BOTH(T) GATHER_UNIT(T, int64_t) GATHER_UNIT(T, int32_t)
GATHER_UNIT_BOTH(uint8_t)
GATHER_UNIT_BOTH(uint16_t)
GATHER_UNIT_BOTH(uint32_t)
GATHER_UNIT_BOTH(uint64_t)

/* The gather inner loop for one element size: gather_row_u8, gather_row_u16, gather_row_u32,
 * gather_row_u64. Writes n elements to out_row (stride so) and returns the first bad column or
 * -1. An index constant along the row (take of whole rows) is read and checked once, and a
 * unit-stride row moves as one memcpy. */
#define GATHER_ROW(T)                                                                              \
  static int64_t gather_row_##T(const lt__gather_step *g, int64_t n, int64_t oi, void *out_row,    \
                                int64_t so, int64_t ox) {                                          \
    const T *in = (const T *)g->in.mem;                                                            \
    T *out = out_row;                                                                              \
    int64_t si = g->in.strides[g->rank - 1];                                                       \
    int64_t sx = g->index.strides[g->rank - 1], ext = g->axis_extent;                              \
    if (sx == 0) {                                                                                 \
      int64_t j = lt__load_index(g->index.mem, g->index.dtype, ox);                                \
      if (j < 0) j += ext;                                                                         \
      if (j < 0 || j >= ext) return 0;                                                             \
      const T *src = in + oi + j * g->axis_stride;                                                 \
      if (si == 1 && so == 1) {                                                                    \
        memcpy(out, src, (size_t)n * sizeof(T));                                                   \
      } else {                                                                                     \
        for (int64_t c = 0; c < n; c++)                                                            \
          out[c * so] = src[c * si];                                                               \
      }                                                                                            \
      return -1;                                                                                   \
    }                                                                                              \
    if (sx == 1 && so == 1 && g->index.dtype == LT_I64)                                            \
      return gather_unit_##T##_int64_t(in + oi, si, g->axis_stride, out,                           \
                                       (const int64_t *)g->index.mem + ox, n, ext);                \
    if (sx == 1 && so == 1 && g->index.dtype == LT_I32)                                            \
      return gather_unit_##T##_int32_t(in + oi, si, g->axis_stride, out,                           \
                                       (const int32_t *)g->index.mem + ox, n, ext);                \
    for (int64_t c = 0; c < n; c++) {                                                              \
      int64_t j = lt__load_index(g->index.mem, g->index.dtype, ox + c * sx);                       \
      if (j < 0) j += ext;                                                                         \
      if (j < 0 || j >= ext) return c;                                                             \
      out[c * so] = in[oi + c * si + j * g->axis_stride];                                          \
    }                                                                                              \
    return -1;                                                                                     \
  }
GATHER_ROW(uint8_t)
GATHER_ROW(uint16_t)
GATHER_ROW(uint32_t)
GATHER_ROW(uint64_t)

enum { GIN = 0, GOUT = 1, GIDX = 2 }; /* operand numbers in index_job.nest */

/* The source row of the row at odometer position `at`, or NULL for an index out of range. */
static const char *source_row(const lt__gather_step *g, int64_t in_off, int64_t index_off,
                              size_t es) {
  int64_t j = lt__load_index(g->index.mem, g->index.dtype, index_off);
  if (j < 0) j += g->axis_extent;
  if (j < 0 || j >= g->axis_extent) return NULL;
  return (const char *)g->in.mem + (in_off + j * g->axis_stride) * (int64_t)es;
}

/* One gathered row into place: streamed past the caches for outputs too large to keep. */
static void put_row(const index_job *job, char *dst, const char *src, int64_t bytes) {
  if (job->stream)
    lt__cpu_copy_stream(dst, src, (size_t)bytes, job->simd);
  else
    memcpy(dst, src, (size_t)bytes);
}

/* Rows whose index is constant along the row and whose source and output rows are unit-stride:
 * one copy per row (streamed past the caches for large outputs), the rows ROWS_AHEAD further
 * on prefetched. */
static void gather_whole_rows(index_job *job, int64_t lo, int64_t hi) {
  const lt__gather_step *g = job->g;
  size_t es = lt_dtype_size(g->out.dtype);
  int64_t n = g->shape[g->rank - 1], bytes = n * (int64_t)es;
  lt__cpu_odometer it, ahead;
  lt__cpu_odometer_seek(&it, &job->nest, g->rank - 1, lo);
  ahead = it;
  bool prefetch = bytes <= ROW_PREFETCH_MAX;
  int64_t r_ahead = lo;
  for (int64_t r = lo; r < hi; r++) {
    for (; prefetch && r_ahead < hi && r_ahead <= r + ROWS_AHEAD; r_ahead++) {
      const char *p = source_row(g, ahead.off[GIN], ahead.off[GIDX], es);
      if (p) lt__cpu_prefetch_span(p, bytes);
      lt__cpu_odometer_next(&ahead);
    }
    const char *src = source_row(g, it.off[GIN], it.off[GIDX], es);
    if (src == NULL) {
      note_bad(job, r * n);
      break;
    }
    put_row(job, (char *)g->out.mem + it.off[GOUT] * (int64_t)es, src, bytes);
    lt__cpu_odometer_next(&it);
  }
  if (job->stream) lt__cpu_stream_fence();
}

/* gather_whole_rows for a matrix (rank 2): row offsets by one multiply instead of two
 * odometers (a 256-byte row gather ran at 0.8 of the same loop written plainly; the per-row
 * bookkeeping was the difference). */
static void gather_matrix_rows(index_job *job, int64_t lo, int64_t hi) {
  const lt__gather_step *g = job->g;
  size_t es = lt_dtype_size(g->out.dtype);
  int64_t n = g->shape[1], bytes = n * (int64_t)es;
  int64_t si = g->in.strides[0], so = g->out.strides[0], sx = g->index.strides[0];
  int64_t in0 = g->in.offset, x0 = g->index.offset;
  bool prefetch = bytes <= ROW_PREFETCH_MAX;
  for (int64_t r = lo; r < hi; r++) {
    if (prefetch && r + ROWS_AHEAD < hi) {
      int64_t ra = r + ROWS_AHEAD;
      const char *p = source_row(g, in0 + ra * si, x0 + ra * sx, es);
      if (p) lt__cpu_prefetch_span(p, bytes);
    }
    const char *src = source_row(g, in0 + r * si, x0 + r * sx, es);
    if (src == NULL) {
      note_bad(job, r * n);
      break;
    }
    put_row(job, (char *)g->out.mem + (g->out.offset + r * so) * (int64_t)es, src, bytes);
  }
  if (job->stream) lt__cpu_stream_fence();
}

static void gather_rows(void *arg, int64_t lo, int64_t hi) {
  index_job *job = arg;
  const lt__gather_step *g = job->g;
  int last = g->rank - 1;
  if (g->index.strides[last] == 0 && g->in.strides[last] == 1 && g->out.strides[last] == 1) {
    if (g->rank == 2)
      gather_matrix_rows(job, lo, hi);
    else
      gather_whole_rows(job, lo, hi);
    return;
  }
  int64_t n = g->shape[last];
  size_t es = lt_dtype_size(g->out.dtype);
  int64_t si = g->in.strides[last], sx = g->index.strides[last], so = g->out.strides[last];
  /* An output too large for the caches gets its unit-stride rows gathered GATHER_CHUNK bytes at
   * a time into L1 and streamed out from there: no line of it is read before it is written. */
  bool stream = job->stream && so == 1 && n * (int64_t)es >= 64;
  _Alignas(64) char chunk_buf[GATHER_CHUNK];
  int64_t chunk = stream ? GATHER_CHUNK / (int64_t)es : n;
  char *out = g->out.mem;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &job->nest, last, lo);
  for (int64_t r = lo; r < hi; r++, lt__cpu_odometer_next(&it)) {
    for (int64_t c0 = 0; c0 < n; c0 += chunk) {
      int64_t cn = n - c0 < chunk ? n - c0 : chunk, oi = it.off[GIN] + c0 * si,
              ox = it.off[GIDX] + c0 * sx;
      char *dst = out + (it.off[GOUT] + c0 * so) * (int64_t)es, *to = stream ? chunk_buf : dst;
      int64_t bad = es == 1   ? gather_row_uint8_t(g, cn, oi, to, so, ox)
                    : es == 2 ? gather_row_uint16_t(g, cn, oi, to, so, ox)
                    : es == 4 ? gather_row_uint32_t(g, cn, oi, to, so, ox)
                              : gather_row_uint64_t(g, cn, oi, to, so, ox);
      if (bad >= 0) {
        note_bad(job, r * n + c0 + bad);
        if (stream) lt__cpu_stream_fence();
        return;
      }
      if (stream) lt__cpu_copy_stream(dst, chunk_buf, (size_t)(cn * (int64_t)es), job->simd);
    }
  }
  if (stream) lt__cpu_stream_fence();
}

static lt_status range_error(int rank, const int64_t *shape, const lt__operand *index, int64_t pos,
                             int64_t extent) {
  uint64_t v = lt__load_bits(index->mem, index->dtype, lt__index_offset(rank, shape, index, pos));
  return lt__index_range_error(rank, shape, pos, v, index->dtype, extent);
}

static lt_status cpu_gather(lt_context *ctx, const lt__gather_step *g) {
  int64_t total = 1;
  for (int d = 0; d < g->rank; d++)
    total *= g->shape[d];
  if (total == 0) return LT_OK;
  index_job job = {.g = g};
  atomic_init(&job.bad, INT64_MAX);
  job.rows = total / g->shape[g->rank - 1]; /* rank >= 1: the front end pads rank 0 */
  /* The odometer walks the rows in C order: the positions range errors report. */
  const lt__operand *ops[3] = {&g->in, &g->out, &g->index};
  lt__cpu_nest_init(&job.nest, g->rank, g->shape, 3);
  for (int q = 0; q < 3; q++) {
    job.nest.offset[q] = ops[q]->offset;
    memcpy(job.nest.strides[q], ops[q]->strides, sizeof(int64_t) * (size_t)g->rank);
  }
  job.stream = total * (int64_t)lt_dtype_size(g->out.dtype) >= STREAM_BYTES;
  job.simd = lt__cpu_isa_of(ctx)->simd;
  lt__cpu_parallel(ctx, job.rows, total, gather_rows, &job);
  int64_t bad = atomic_load(&job.bad);
  if (bad == INT64_MAX) return LT_OK;
  return range_error(g->rank, g->shape, &g->index, bad, g->axis_extent);
}

/* Scatter-add tasks: an outer position (the dims before the axis) times a chunk of up to
 * SCATTER_CHUNK inner positions (the dims after it). A task walks the axis in order with the
 * chunk innermost, so memory is read in rows while every output element still receives its
 * additions in increasing j, from one thread. */
#define SCATTER_CHUNK 256

/* parts > 1 when there are too few (outer, chunk) tasks to feed the threads: each task then
 * also owns a range of output positions along the axis and skips indices outside it, which
 * keeps each output element with one thread (and one order) at the cost of rereading INDEX. */
typedef struct scatter_geom {
  int64_t outer, inner, chunks, n, parts;
} scatter_geom;

/* out[at] += src[from], rounded to out's dtype (float + float in float is the correctly rounded
 * sum, as double-then-round would give). */
static void add_elem(const lt__scatter_step *s, int64_t at, int64_t from) {
  switch (s->out.dtype) {
  case LT_F32: ((float *)s->out.mem)[at] += ((const float *)s->src.mem)[from]; break;
  case LT_F64: ((double *)s->out.mem)[at] += ((const double *)s->src.mem)[from]; break;
  default:
    if (lt__dtype_is_int(s->out.dtype)) { /* wraps, as NumPy */
      uint64_t v = lt__load_bits(s->out.mem, s->out.dtype, at) +
                   lt__load_bits(s->src.mem, s->src.dtype, from);
      lt__store_bits(s->out.mem, s->out.dtype, at, v);
    } else {
      double v =
          lt__load_f64(s->out.mem, s->out.dtype, at) + lt__load_f64(s->src.mem, s->src.dtype, from);
      lt__store_f64(s->out.mem, s->out.dtype, at, v);
    }
  }
}

static void scatter_task(index_job *job, const scatter_geom *gm, int64_t task) {
  const lt__scatter_step *s = job->s;
  int ax = s->axis;
  int64_t part = task % gm->parts, ext = s->out_axis_extent;
  int64_t jlo = ext * part / gm->parts, jhi = ext * (part + 1) / gm->parts;
  task /= gm->parts;
  int64_t o = task / gm->chunks, i0 = (task % gm->chunks) * SCATTER_CHUNK;
  int64_t cnt = gm->inner - i0 < SCATTER_CHUNK ? gm->inner - i0 : SCATTER_CHUNK;
  int64_t base[3] = {s->src.offset, s->index.offset, s->out.offset}, rest = o;
  for (int d = ax - 1; d >= 0; d--) {
    int64_t i = rest % s->shape[d];
    rest /= s->shape[d];
    base[0] += i * s->src.strides[d];
    base[1] += i * s->index.strides[d];
    base[2] += i * s->out.strides[d];
  }
  int64_t offs[3][SCATTER_CHUNK];
  for (int64_t k = 0; k < cnt; k++) {
    int64_t p = i0 + k, v[3] = {base[0], base[1], base[2]};
    for (int d = s->rank - 1; d > ax; d--) {
      int64_t i = p % s->shape[d];
      p /= s->shape[d];
      v[0] += i * s->src.strides[d];
      v[1] += i * s->index.strides[d];
      v[2] += i * s->out.strides[d];
    }
    offs[0][k] = v[0];
    offs[1][k] = v[1];
    offs[2][k] = v[2];
  }
  int64_t ss = s->src.strides[ax], sx = s->index.strides[ax];
  /* One index per step along the axis (index_add's 1-D INDEX): read and checked once. */
  bool shared = true;
  for (int64_t k = 1; k < cnt && shared; k++)
    shared = offs[1][k] == offs[1][0];
  for (int64_t c = 0; c < gm->n; c++) {
    for (int64_t k = 0; k < cnt; k++) {
      int64_t j = lt__load_index(s->index.mem, s->index.dtype, offs[1][k] + c * sx);
      if (j < 0) j += ext;
      if (j < 0 || j >= ext) {
        note_bad(job, (o * gm->n + c) * gm->inner + i0 + k);
        return;
      }
      if (j < jlo || j >= jhi) {
        if (shared) break;
        continue;
      }
      if (shared) {
        for (int64_t q = 0; q < cnt; q++)
          add_elem(s, offs[2][q] + j * s->out_axis_stride, offs[0][q] + c * ss);
        break;
      }
      add_elem(s, offs[2][k] + j * s->out_axis_stride, offs[0][k] + c * ss);
    }
  }
}

typedef struct scatter_arg {
  index_job *job;
  scatter_geom gm;
} scatter_arg;

static void scatter_tasks(void *arg, int64_t lo, int64_t hi) {
  scatter_arg *a = arg;
  for (int64_t t = lo; t < hi; t++)
    scatter_task(a->job, &a->gm, t);
}

static lt_status cpu_scatter_add(lt_context *ctx, const lt__scatter_step *s) {
  scatter_geom gm = {.outer = 1, .inner = 1, .n = s->shape[s->axis]};
  for (int d = 0; d < s->rank; d++) {
    if (d < s->axis) gm.outer *= s->shape[d];
    if (d > s->axis) gm.inner *= s->shape[d];
  }
  int64_t total = gm.outer * gm.inner * gm.n;
  if (total == 0) return LT_OK;
  gm.chunks = (gm.inner + SCATTER_CHUNK - 1) / SCATTER_CHUNK;
  int64_t want = 2 * (int64_t)lt__cpu_threads(ctx), tasks = gm.outer * gm.chunks;
  gm.parts = tasks >= want ? 1 : (want + tasks - 1) / tasks;
  if (gm.parts > s->out_axis_extent) gm.parts = s->out_axis_extent > 0 ? s->out_axis_extent : 1;
  index_job job = {.s = s};
  atomic_init(&job.bad, INT64_MAX);
  scatter_arg arg = {&job, gm};
  lt__cpu_parallel(ctx, tasks * gm.parts, total, scatter_tasks, &arg);
  int64_t bad = atomic_load(&job.bad);
  if (bad == INT64_MAX) return LT_OK;
  return range_error(s->rank, s->shape, &s->index, bad, s->out_axis_extent);
}

const lt__index_ops lt__cpu_index_ops = {
    .gather = cpu_gather,
    .scatter_add = cpu_scatter_add,
    .sort = lt__cpu_sort,
};

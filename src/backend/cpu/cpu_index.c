/* CPU gather and scatter-add steps (backend.h). Gather moves raw element bits, rows of the
 * iteration space split across threads. Scatter-add splits the positions off the scattered
 * axis across threads and walks that axis in order inside each, so every output element
 * receives its additions in one fixed order whatever the thread count (no atomics). */
#include "backend/cpu/cpu.h"
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
  atomic_llong bad; /* lowest iteration position with a bad index (INT64_MAX: none) */
} index_job;

static void note_bad(index_job *job, int64_t pos) {
  long long cur = atomic_load(&job->bad);
  while (pos < cur && !atomic_compare_exchange_weak(&job->bad, &cur, pos)) {
  }
}

/* Offsets of operands at the start of `row` (C order over shape[0..dims)), skipping dim
 * `skip` (-1: none). */
static void row_offsets(int64_t row, int dims, const int64_t *shape, int skip, int n,
                        const lt__operand *const *ops, int64_t *offs) {
  for (int k = 0; k < n; k++)
    offs[k] = ops[k]->offset;
  for (int d = dims - 1; d >= 0; d--) {
    if (d == skip) continue;
    int64_t i = row % shape[d];
    row /= shape[d];
    for (int k = 0; k < n; k++)
      offs[k] += i * ops[k]->strides[d];
  }
}

/* The gather inner loop for one element size: gather_row_u8, gather_row_u16, gather_row_u32,
 * gather_row_u64. Returns the first bad column or -1. An index constant along the row (take
 * of whole rows) is read and checked once, and a unit-stride row moves as one memcpy. */
#define GATHER_ROW(T)                                                                              \
  static int64_t gather_row_##T(const lt__gather_step *g, int64_t n, int64_t oi, int64_t oo,     \
                                int64_t ox) {                                                      \
    const T *in = (const T *)g->in.mem;                                                            \
    T *out = (T *)g->out.mem;                                                                      \
    int64_t si = g->in.strides[g->rank - 1], so = g->out.strides[g->rank - 1];                    \
    int64_t sx = g->index.strides[g->rank - 1], ext = g->axis_extent;                            \
    if (sx == 0) {                                                                                 \
      int64_t j = lt__load_index(g->index.mem, g->index.dtype, ox);                                \
      if (j < 0) j += ext;                                                                         \
      if (j < 0 || j >= ext) return 0;                                                             \
      const T *src = in + oi + j * g->axis_stride;                                                 \
      if (si == 1 && so == 1) {                                                                    \
        memcpy(out + oo, src, (size_t)n * sizeof(T));                                              \
      } else {                                                                                     \
        for (int64_t c = 0; c < n; c++)                                                            \
          out[oo + c * so] = src[c * si];                                                          \
      }                                                                                            \
      return -1;                                                                                   \
    }                                                                                              \
    for (int64_t c = 0; c < n; c++) {                                                              \
      int64_t j = lt__load_index(g->index.mem, g->index.dtype, ox + c * sx);                       \
      if (j < 0) j += ext;                                                                         \
      if (j < 0 || j >= ext) return c;                                                             \
      out[oo + c * so] = in[oi + c * si + j * g->axis_stride];                                     \
    }                                                                                              \
    return -1;                                                                                     \
  }
GATHER_ROW(uint8_t)
GATHER_ROW(uint16_t)
GATHER_ROW(uint32_t)
GATHER_ROW(uint64_t)

static void gather_rows(void *arg, int64_t lo, int64_t hi) {
  index_job *job = arg;
  const lt__gather_step *g = job->g;
  const lt__operand *ops[3] = {&g->in, &g->out, &g->index};
  int64_t n = g->rank > 0 ? g->shape[g->rank - 1] : 1;
  size_t es = lt_dtype_size(g->out.dtype);
  for (int64_t r = lo; r < hi; r++) {
    int64_t o[3];
    row_offsets(r, g->rank - 1, g->shape, -1, 3, ops, o);
    int64_t bad = es == 1   ? gather_row_uint8_t(g, n, o[0], o[1], o[2])
                  : es == 2 ? gather_row_uint16_t(g, n, o[0], o[1], o[2])
                  : es == 4 ? gather_row_uint32_t(g, n, o[0], o[1], o[2])
                            : gather_row_uint64_t(g, n, o[0], o[1], o[2]);
    if (bad >= 0) {
      note_bad(job, r * n + bad);
      return;
    }
  }
}

static lt_status range_error(int rank, const int64_t *shape, const lt__operand *index, int64_t pos,
                             int64_t extent) {
  int64_t v = lt__load_index(index->mem, index->dtype, lt__index_offset(rank, shape, index, pos));
  return lt__index_range_error(rank, shape, pos, v, extent);
}

static lt_status cpu_gather(lt_context *ctx, const lt__gather_step *g) {
  int64_t total = 1;
  for (int d = 0; d < g->rank; d++)
    total *= g->shape[d];
  if (total == 0) return LT_OK;
  index_job job = {.g = g};
  atomic_init(&job.bad, INT64_MAX);
  job.rows = g->rank > 0 ? total / g->shape[g->rank - 1] : 1;
  lt__cpu_parallel(ctx, job.rows, total, gather_rows, &job);
  int64_t bad = atomic_load(&job.bad);
  if (bad == INT64_MAX) return LT_OK;
  return range_error(g->rank, g->shape, &g->index, bad, g->axis_extent);
}

/* One output element's running sum, rounded to the output dtype after every addition. */
static void scatter_line(index_job *job, int64_t line) {
  const lt__scatter_step *s = job->s;
  const lt__operand *ops[3] = {&s->src, &s->out, &s->index};
  int64_t o[3];
  row_offsets(line, s->rank, s->shape, s->axis, 3, ops, o);
  int64_t n = s->shape[s->axis], ext = s->out_axis_extent;
  int64_t ss = s->src.strides[s->axis], sx = s->index.strides[s->axis];
  bool exact = !lt__dtype_is_float(s->out.dtype);
  for (int64_t c = 0; c < n; c++) {
    int64_t j = lt__load_index(s->index.mem, s->index.dtype, o[2] + c * sx);
    if (j < 0) j += ext;
    if (j < 0 || j >= ext) {
      /* The C-order position of (line, c): re-insert c at dim `axis`. */
      int64_t inner = 1;
      for (int d = s->axis + 1; d < s->rank; d++)
        inner *= s->shape[d];
      note_bad(job, (line / inner * n + c) * inner + line % inner);
      return;
    }
    int64_t at = o[1] + j * s->out_axis_stride, from = o[0] + c * ss;
    if (exact) {
      int64_t *out = s->out.mem;
      out[at] = (int64_t)((uint64_t)out[at] + (uint64_t)lt__load_index(s->src.mem, LT_I64, from));
    } else {
      double v =
          lt__load_f64(s->out.mem, s->out.dtype, at) + lt__load_f64(s->src.mem, s->src.dtype, from);
      lt__store_f64(s->out.mem, s->out.dtype, at, v);
    }
  }
}

static void scatter_lines(void *arg, int64_t lo, int64_t hi) {
  for (int64_t l = lo; l < hi; l++)
    scatter_line(arg, l);
}

static lt_status cpu_scatter_add(lt_context *ctx, const lt__scatter_step *s) {
  int64_t total = 1;
  for (int d = 0; d < s->rank; d++)
    total *= s->shape[d];
  if (total == 0) return LT_OK;
  index_job job = {.s = s};
  atomic_init(&job.bad, INT64_MAX);
  lt__cpu_parallel(ctx, total / s->shape[s->axis], total, scatter_lines, &job);
  int64_t bad = atomic_load(&job.bad);
  if (bad == INT64_MAX) return LT_OK;
  return range_error(s->rank, s->shape, &s->index, bad, s->out_axis_extent);
}

const lt__index_ops lt__cpu_index_ops = {
    .gather = cpu_gather,
    .scatter_add = cpu_scatter_add,
    .sort = lt__cpu_sort,
};

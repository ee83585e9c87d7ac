/* The strided elementwise engine. A map step becomes a loop nest (size-1 dims dropped, dims
 * sorted so that the output is walked in memory order, contiguous dims fused) and runs one of
 * three ways, each split across the context's threads:
 *   - rows: the innermost dim in chunks through the compute-type kernels of cpu_typed.h
 *     (unit-stride operands of the compute dtype are used in place, others converted);
 *   - tiles: when the input's contiguous dim is not the output's (a permutation), tiles over
 *     the output's innermost dims and the input's, so both sides move whole cache lines;
 *   - bit copies: a permutation without arithmetic moves bits (register tile transposes of
 *     cpu_transpose.h, AVX-512 / AVX2 where present), with non-temporal stores for outputs past
 *     32 MiB: 128-row tiles, 64 input rows per task. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_transpose.h"
#include "backend/cpu/cpu_typed.h"

#include <string.h>

#define TILE 32                 /* tile edge in elements: 32x32 fits L1 for every dtype */
#define ROW_BLOCK 32768         /* inner elements per task, so a single long row still splits */
#define INTERLEAVED_BLOCK 2048  /* the same where rows interleave in memory (see run_rows) */
#define SHORT_INNER 16          /* computed rows shorter than this take a longer dim inside */
#define TILE_MIN_STRIDE 16      /* input stride along the output's inner dim worth tiling for */
#define STREAM_BYTES (32 << 20) /* outputs at least this large bypass the caches */
#define P_RUN 1024              /* input elements read contiguously per tile row, when dims allow */
#define STREAM_P_TILE LT__CPU_TILE_MAX /* streamed tiles: output rows per tile */
#define STREAM_Q_TASK 64               /* streamed tiles: input rows per task */
#define SMALL_BLOCK 32768              /* streamed tiles: next task's input prefetched up to this */
#define PREFETCH_AHEAD 8192            /* streamed rows: input bytes prefetched ahead */
#define STREAM_MIN_ROW 256             /* computed rows streamed only from this length */
#define SHORT_ROW_BYTES 512            /* bit-copy rows up to this long go a plane per call */
#define CACHED_BIT_TILE_BYTES 256      /* cached bit-copy tiles: row bytes, so 256 / esize */
#define SHIFTED_P_BYTES 256            /* shifted windows: input bytes per row per tile */

typedef struct map_job {
  const lt__map_step *step;
  const lt__cpu_kernels *k;
  lt__cpu_nest nest; /* operands 0..n_in-1 inputs, n_in the output */
  int out;           /* operand index of the output */
  bool bitcopy;
  size_t esize;      /* output element size */
  lt__cpu_simd simd; /* tile transpose kernels */
  bool stream;       /* output far larger than the caches: bit copies use non-temporal stores */
  bool stream_rows;  /* the same for computed rows: each chunk is streamed from an L1 buffer */
  bool shifted;      /* streamed tiles whose output rows are off the line grid (shifted_task) */
  int64_t n_blocks;  /* per outer index: row blocks (rows) or p tiles (tiles) */
  int64_t row_block; /* rows: inner elements per task */
  bool blocks_outer; /* rows: tasks take every row's block b before any block b + 1 */
  int64_t period;    /* rows: > 0 when some inputs repeat along the row (fold_periodic) */
  bool periodic[3];  /* ... those inputs, */
  int64_t period_stride[3];   /* ... with their stride within a period */
  int n_outer;                /* dims iterated by the odometer */
  int p_dims, q_dims;         /* tiles: dims in the p and q groups */
  int64_t p_extent, q_extent; /* tiles: positions in each group */
  int64_t tile_ps, tile_qs;   /* tiles: input stride of p, output stride of q */
} map_job;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

static const void *element(const void *mem, size_t esize, int64_t off) {
  return (const char *)mem + off * (int64_t)esize;
}

/* A periodic operand's values for row positions [pos, pos + n): its `period` values (stride
 * period_stride from off) repeated, starting at phase pos % period. */
static void periodic_values(const map_job *j, int k, int64_t off, int64_t pos, int64_t n,
                            void *buf) {
  const lt__operand *op = &j->step->in[k];
  int64_t p = j->period, phase = pos % p, ks = (int64_t)j->k->size;
  char *b = buf;
  j->k->load(b, op->mem, op->dtype, off + phase * j->period_stride[k], j->period_stride[k],
             min64(p - phase, n));
  if (phase && n > p - phase)
    j->k->load(b + (p - phase) * ks, op->mem, op->dtype, off, j->period_stride[k],
               min64(phase, n - (p - phase)));
  for (int64_t have = p; have < n; have *= 2) /* doubling copies of the first period */
    memcpy(b + have * ks, b, (size_t)(min64(have, n - have) * ks));
}

/* Operand k's values at row positions [pos, pos + n) in the compute type: in place when
 * possible, else into buf. */
static const void *operand_values(const map_job *j, int k, int64_t off, int64_t stride, int64_t pos,
                                  int64_t n, void *buf) {
  const lt__operand *op = &j->step->in[k];
  if (j->periodic[k]) {
    periodic_values(j, k, off, pos, n, buf);
    return buf;
  }
  if (op->dtype == j->k->dtype && stride == 1) return element(op->mem, j->k->size, off);
  j->k->load(buf, op->mem, op->dtype, off, stride, n);
  return buf;
}

/* s*u(values) of operand k, or the values themselves when that is the identity. */
static const void *prepared(const map_job *j, int k, int64_t off, int64_t stride, int64_t pos,
                            int64_t n, void *buf) {
  const lt__map_step *s = j->step;
  if (s->scalars[k] == 0.0) { /* a zero scalar's operand is not read: NaN in it stays out */
    j->k->fill(buf, n, 0.0);
    return buf;
  }
  const void *v = operand_values(j, k, off, stride, pos, n, buf);
  if (s->unary[k] == LT_UNARY_IDENTITY && s->scalars[k] == 1.0) return v;
  j->k->transform(buf, v, n, s->unary[k], s->scalars[k]);
  return buf;
}

/* One row segment, from row position pos: operand k starts at off[k] and steps by the inner
 * strides. */
static void map_row(const map_job *j, const int64_t *off, int64_t pos, int64_t len) {
  const lt__map_step *s = j->step;
  const lt__cpu_kernels *k = j->k;
  const lt__cpu_nest *nest = &j->nest;
  int inner = nest->rank - 1, n_in = s->n_in;
  int64_t st[4];
  for (int q = 0; q <= n_in; q++)
    st[q] = inner >= 0 ? nest->strides[q][inner] : 0;
  if (j->bitcopy && s->in[0].mem == s->out.mem && off[0] == off[n_in] && st[0] == st[n_in])
    return; /* an in-place copy onto itself */
  if (j->bitcopy && j->stream && st[0] == 1 && st[n_in] == 1) {
    lt__cpu_copy_stream((char *)s->out.mem + off[n_in] * (int64_t)j->esize,
                        element(s->in[0].mem, j->esize, off[0]), (size_t)len * j->esize, j->simd);
    return;
  }
  if (j->bitcopy && j->stream && st[n_in] == 1) { /* gathered through L1, then streamed */
    _Alignas(64) double buf[LT__CPU_CHUNK];
    int64_t chunk = LT__CPU_CHUNK * 8 / (int64_t)j->esize;
    for (int64_t c0 = 0; c0 < len; c0 += chunk) {
      int64_t n = min64(len - c0, chunk);
      lt__cpu_copy_gather(buf, element(s->in[0].mem, j->esize, off[0] + c0 * st[0]), st[0], n,
                          j->esize, j->simd);
      lt__cpu_copy_stream((char *)s->out.mem + (off[n_in] + c0) * (int64_t)j->esize, buf,
                          (size_t)n * j->esize, j->simd);
    }
    return;
  }
  if (j->bitcopy) {
    lt__cpu_copy_strided((char *)s->out.mem + off[n_in] * (int64_t)j->esize, st[n_in],
                         element(s->in[0].mem, j->esize, off[0]), st[0], len, j->esize);
    return;
  }
  _Alignas(64) double buf[4][LT__CPU_CHUNK];
  /* Streaming skips the read for ownership of every output line: a third less traffic for
   * D = A + B(broadcast), for one extra pass through L1. */
  bool stream = j->stream_rows && st[n_in] == 1 && len * (int64_t)j->esize >= STREAM_MIN_ROW;
  bool direct = s->out.dtype == k->dtype && st[n_in] == 1 && !stream;
  for (int64_t c0 = 0; c0 < len; c0 += LT__CPU_CHUNK) {
    int64_t n = len - c0 < LT__CPU_CHUNK ? len - c0 : LT__CPU_CHUNK;
    int64_t oo = off[n_in] + c0 * st[n_in];
    void *dst = direct ? (void *)((char *)s->out.mem + oo * (int64_t)k->size) : (void *)buf[3];
    int64_t o[3] = {0, 0, 0};
    for (int q = 0; q < n_in; q++) {
      o[q] = off[q] + c0 * st[q];
      /* As in the reductions: the hardware prefetchers alone leave 2 KB rows at 0.75 of a
       * streamed triad; prefetching the inputs 8 KB ahead brings them to 0.9-1.0. */
      size_t es = lt_dtype_size(s->in[q].dtype);
      if (stream && st[q] == 1)
        lt__cpu_prefetch_span((const char *)element(s->in[q].mem, es, o[q]) + PREFETCH_AHEAD,
                              n * (int64_t)es);
    }
    if (n_in == 0) {
      k->fill(dst, n, s->scalars[0]);
    } else if (n_in == 1) {
      const void *v = operand_values(j, 0, o[0], st[0], pos + c0, n, buf[0]);
      k->transform(dst, v, n, s->unary[0], s->scalars[0]);
    } else {
      const void *a = prepared(j, 0, o[0], st[0], pos + c0, n, buf[0]);
      const void *b = prepared(j, 1, o[1], st[1], pos + c0, n, buf[1]);
      if (n_in == 2) {
        k->combine(dst, a, b, n, s->op_ab);
      } else {
        /* ab goes to a buffer first: C may be the output itself (in place). */
        k->combine(buf[0], a, b, n, s->op_ab);
        const void *c = prepared(j, 2, o[2], st[2], pos + c0, n, buf[2]);
        k->combine(dst, buf[0], c, n, s->op_abc);
      }
    }
    if (stream) {
      const void *bits = buf[3];
      if (s->out.dtype != k->dtype) { /* operand buffers are free again */
        k->store(buf[0], s->out.dtype, 0, 1, buf[3], n);
        bits = buf[0];
      }
      lt__cpu_copy_stream((char *)s->out.mem + oo * (int64_t)j->esize, bits, (size_t)n * j->esize,
                          j->simd);
    } else if (!direct) {
      k->store(s->out.mem, s->out.dtype, oo, st[n_in], buf[3], n);
    }
  }
}

/* Streamed copies of short rows: each row starts in a new place, too briefly read for the
 * hardware prefetchers to catch up, so the next row is requested while this one is copied. */
static bool prefetch_next_rows(const map_job *j, int64_t len) {
  int r = j->nest.rank;
  return j->stream && j->n_blocks == 1 && r > 0 && j->nest.strides[0][r - 1] == 1 &&
         len * (int64_t)j->esize <= 4096;
}

static void prefetch_row(const map_job *j, int64_t off, int64_t len) {
  lt__cpu_prefetch_span(element(j->step->in[0].mem, j->esize, off), len * (int64_t)j->esize);
}

/* Task t is block t % n_blocks of row t / n_blocks, or with blocks_outer block t / rows of row
 * t % rows. */
static void run_rows(void *arg, int64_t lo, int64_t hi) {
  const map_job *j = arg;
  int64_t len = j->nest.rank ? j->nest.shape[j->nest.rank - 1] : 1;
  int64_t rows = lt__cpu_nest_count(&j->nest, j->n_outer);
  lt__cpu_odometer it, ahead;
  lt__cpu_odometer_seek(&it, &j->nest, j->n_outer, j->blocks_outer ? lo % rows : lo / j->n_blocks);
  bool prefetch = prefetch_next_rows(j, len);
  ahead = it;
  if (prefetch) prefetch_row(j, ahead.off[0], len);
  int64_t b = j->blocks_outer ? lo / rows : lo % j->n_blocks, row = lo % rows;
  for (int64_t t = lo; t < hi; t++) {
    if (prefetch && t + 1 < hi) {
      lt__cpu_odometer_next(&ahead);
      prefetch_row(j, ahead.off[0], len);
    }
    int64_t start = b * j->row_block, n = min64(len - start, j->row_block);
    int64_t off[4];
    for (int q = 0; q <= j->out; q++)
      off[q] = it.off[q] + start * (j->nest.rank ? j->nest.strides[q][j->nest.rank - 1] : 0);
    map_row(j, off, start, n);
    if (j->blocks_outer) {
      lt__cpu_odometer_next(&it);
      if (++row == rows) {
        row = 0;
        b++;
      }
    } else if (++b == j->n_blocks) {
      b = 0;
      lt__cpu_odometer_next(&it);
    }
  }
  if (j->stream || j->stream_rows) lt__cpu_stream_fence();
}

/* Short bit-copy rows, a plane of them per task: the per-row bookkeeping of run_rows (odometer,
 * operand set-up) would cost more than copying a few dozen bytes. */
static void run_planes(void *arg, int64_t lo, int64_t hi) {
  const map_job *j = arg;
  const lt__cpu_nest *nest = &j->nest;
  int r = nest->rank;
  int64_t rows = nest->shape[r - 2], len = nest->shape[r - 1], es = (int64_t)j->esize;
  const int64_t *si = nest->strides[0], *so = nest->strides[1];
  char *out = j->step->out.mem;
  const char *in = j->step->in[0].mem;
  bool onto_itself = in == out && si[r - 2] == so[r - 2] && si[r - 1] == so[r - 1];
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, nest, j->n_outer, lo);
  for (int64_t t = lo; t < hi; t++, lt__cpu_odometer_next(&it)) {
    if (onto_itself && it.off[0] == it.off[1]) continue; /* an in-place copy onto itself */
    for (int64_t i = 0; i < rows; i++) {
      char *dst = out + (it.off[1] + i * so[r - 2]) * es;
      const char *src = in + (it.off[0] + i * si[r - 2]) * es;
      if (so[r - 1] == 1 && si[r - 1] != 1)
        lt__cpu_copy_gather(dst, src, si[r - 1], len, (size_t)es, j->simd);
      else
        lt__cpu_copy_strided(dst, so[r - 1], src, si[r - 1], len, (size_t)es);
    }
  }
}

/* Tiles. The nest is arranged as [outer dims][p group][q group]: the q group is the output's
 * innermost dims (contiguous in the output: one linear position with the output stride qs),
 * the p group the input's innermost dims among the rest (contiguous in the input: stride ps).
 * Groups take several dims when the innermost one is short, so a tile still spans whole cache
 * lines on both sides (e.g. a full reversal whose last extent is 4). Element (p, q) of a tile
 * sits at input in_p*ps + in_q[q] and output out_p[p] + q*qs, with the two tables filled by
 * walking the group dims. */

/* Offsets of operand `op` for positions [lin, lin + n) of the group of dims [first, first+count).
 */
static void group_offsets(const lt__cpu_nest *nest, int first, int count, int op, int64_t lin,
                          int64_t n, int64_t *out) {
  if (count == 1) { /* the common case: no index arithmetic */
    int64_t stride = nest->strides[op][first];
    for (int64_t i = 0; i < n; i++)
      out[i] = (lin + i) * stride;
    return;
  }
  int64_t idx[LT_MAX_RANK], off = 0;
  for (int d = first + count - 1; d >= first; d--) {
    idx[d] = lin % nest->shape[d];
    lin /= nest->shape[d];
    off += idx[d] * nest->strides[op][d];
  }
  for (int64_t i = 0; i < n; i++) {
    out[i] = off;
    for (int d = first + count - 1; d >= first; d--) {
      if (++idx[d] < nest->shape[d]) {
        off += nest->strides[op][d];
        break;
      }
      off -= (nest->shape[d] - 1) * nest->strides[op][d];
      idx[d] = 0;
    }
  }
}

static void map_tile(const map_job *j, int64_t in_base, int64_t out_base, const int64_t *out_p,
                     const int64_t *in_q, int64_t p0, int64_t np, int64_t q0, int64_t nq) {
  const lt__map_step *s = j->step;
  int64_t ps = j->tile_ps, qs = j->tile_qs;
  if (j->bitcopy) { /* bits moved as they are, in tiles of up to LT__CPU_TILE_MAX rows */
    char *drow[LT__CPU_TILE_MAX];
    const char *srow[LT__CPU_TILE_MAX];
    char *out = (char *)s->out.mem;
    const char *in = s->in[0].mem;
    int64_t es = (int64_t)j->esize;
    for (int64_t ip = 0; ip < np; ip++)
      drow[ip] = out + (out_base + out_p[ip] + q0 * qs) * es;
    for (int64_t iq = 0; iq < nq; iq++)
      srow[iq] = in + (in_base + in_q[iq] + p0 * ps) * es;
    if (ps == 1 && qs == 1)
      lt__cpu_transpose_rows(drow, srow, np, nq, j->esize, j->simd, j->stream);
    else /* reversed or stepped rows: scalar */
      lt__cpu_transpose_rows_strided(drow, qs, srow, ps, np, nq, j->esize);
    return;
  }
  /* Arithmetic: through the TILE x TILE buffers (only cached_task's tiles come here). */
  const lt__cpu_kernels *k = j->k;
  int64_t ks = (int64_t)k->size;
  _Alignas(64) double a[TILE * TILE], b[TILE * TILE];
  for (int64_t iq = 0; iq < nq; iq++)
    k->load((char *)a + iq * np * ks, s->in[0].mem, s->in[0].dtype, in_base + in_q[iq] + p0 * ps,
            ps, np);
  k->transform(a, a, np * nq, s->unary[0], s->scalars[0]);
  lt__cpu_transpose_tile(b, nq, a, np, np, nq, k->size, j->simd);
  for (int64_t ip = 0; ip < np; ip++)
    k->store(s->out.mem, s->out.dtype, out_base + out_p[ip] + q0 * qs, qs, (char *)b + ip * nq * ks,
             nq);
}

/* Group offsets for the tiles of one task, kept between tasks: when a group fits one tile (the
 * usual case for short extents) its table is the same for every outer index. */
typedef struct tile_tables {
  int64_t q0, nq, p0, np; /* positions the tables hold; nq = np = 0: none yet */
  int64_t in_q[LT__CPU_TILE_MAX], out_p[LT__CPU_TILE_MAX];
} tile_tables;

static const int64_t *q_table(const map_job *j, tile_tables *tb, int64_t q0, int64_t nq) {
  if (tb->nq != nq || tb->q0 != q0) {
    group_offsets(&j->nest, j->n_outer + j->p_dims, j->q_dims, 0, q0, nq, tb->in_q);
    tb->q0 = q0;
    tb->nq = nq;
  }
  return tb->in_q;
}

static const int64_t *p_table(const map_job *j, tile_tables *tb, int64_t p0, int64_t np) {
  if (tb->np != np || tb->p0 != p0) {
    group_offsets(&j->nest, j->n_outer, j->p_dims, 1, p0, np, tb->out_p);
    tb->p0 = p0;
    tb->np = np;
  }
  return tb->out_p;
}

/* Streamed output: the task holds STREAM_Q_TASK input rows and reads them front to back (the
 * prefetchers follow them) while each tile row leaves as whole non-temporal lines, which need
 * no order. Tall tiles (STREAM_P_TILE output rows) keep the per-tile bookkeeping small. */
static void stream_task(const map_job *j, const int64_t *off, int64_t b, tile_tables *tb) {
  int64_t x0 = b * STREAM_Q_TASK, nqt = min64(j->q_extent - x0, STREAM_Q_TASK);
  const int64_t *in_q = q_table(j, tb, x0, nqt);
  for (int64_t p0 = 0; p0 < j->p_extent; p0 += STREAM_P_TILE) {
    int64_t np = min64(j->p_extent - p0, STREAM_P_TILE);
    const int64_t *out_p = p_table(j, tb, p0, np);
    for (int64_t qq = 0; qq < nqt; qq += TILE)
      map_tile(j, off[0], off[1], out_p, in_q + qq, p0, np, x0 + qq, min64(nqt - qq, TILE));
  }
}

/* Streamed output whose rows start off the 64-byte grid (a row length that is not a multiple
 * of a line, a view into a wider buffer). Fixed q blocks would leave every row's first and last
 * line in a block partly written by two tasks: stored in part with ordinary stores, read for
 * ownership, at a third of the speed of aligned rows ((8191, 8193) -> [1,0]: 7 GB/s against
 * 26). Instead each row takes the window of its block that starts on a line boundary of its
 * own, so that all its lines but the row's first and last are whole and streamed. The task
 * transposes one line of q positions before its block as well (input read twice: 1/4 more
 * reads, for no read for ownership) into an L1 buffer, which covers every row's shift. */
static void shifted_task(const map_job *j, const int64_t *off, int64_t b, tile_tables *tb) {
  enum { MAX_ROWS = SHIFTED_P_BYTES / 2 };
  _Alignas(64) char buf[MAX_ROWS * (STREAM_Q_TASK + 32) * 2]; /* rows * (block + line) */
  int64_t es = (int64_t)j->esize, line = 64 / es, ld = STREAM_Q_TASK + line;
  int64_t x0 = b * STREAM_Q_TASK, last = x0 + STREAM_Q_TASK >= j->q_extent;
  int64_t c_lo = x0 > line ? x0 - line : 0, c_hi = min64(j->q_extent, x0 + STREAM_Q_TASK);
  const int64_t *in_q = q_table(j, tb, c_lo, c_hi - c_lo);
  const char *in = (const char *)j->step->in[0].mem + off[0] * es;
  char *out = (char *)j->step->out.mem + off[1] * es;
  char *brow[MAX_ROWS];
  const char *srow[LT__CPU_TILE_MAX];
  int64_t pt = SHIFTED_P_BYTES / es;
  for (int64_t p = 0; p < pt; p++)
    brow[p] = buf + p * ld * es;
  for (int64_t p0 = 0; p0 < j->p_extent; p0 += pt) {
    int64_t np = min64(j->p_extent - p0, pt);
    const int64_t *out_p = p_table(j, tb, p0, np);
    for (int64_t c = 0; c < c_hi - c_lo; c++)
      srow[c] = in + (in_q[c] + p0) * es;
    lt__cpu_transpose_rows(brow, srow, np, c_hi - c_lo, j->esize, j->simd, false);
    for (int64_t p = 0; p < np; p++) {
      char *row = out + out_p[p] * es;
      int64_t shift = (int64_t)((uintptr_t)row & 63) / es;
      int64_t lo = x0 > shift ? x0 - shift : 0;
      int64_t hi = last ? j->q_extent : x0 + STREAM_Q_TASK - shift;
      lt__cpu_copy_stream(row + lo * es, brow[p] + (lo - c_lo) * es, (size_t)((hi - lo) * es),
                          j->simd);
    }
  }
}

/* Edge of the cached tiles: bit copies take 256-byte rows (a 64x64 float tile: a quarter of
 * the per-tile bookkeeping of 32x32, and 1.2-1.5x the speed on cache-resident matrices). */
static int64_t cached_tile(const map_job *j) {
  return j->bitcopy ? CACHED_BIT_TILE_BYTES / (int64_t)j->esize : TILE;
}

/* Cached output: the task holds a p block, so it writes TILE output rows sequentially. */
static void cached_task(const map_job *j, const int64_t *off, int64_t b, tile_tables *tb) {
  int64_t t = cached_tile(j);
  int64_t x0 = b * t, np = min64(j->p_extent - x0, t);
  const int64_t *out_p = p_table(j, tb, x0, np);
  for (int64_t q0 = 0; q0 < j->q_extent; q0 += t) {
    int64_t nq = min64(j->q_extent - q0, t);
    map_tile(j, off[0], off[1], out_p, q_table(j, tb, q0, nq), x0, np, q0, nq);
  }
}

/* Task = (outer index, block of one group's positions); it walks every block of the other. */
/* Whether a streamed task's input is one contiguous run of whole q rows (single-dim groups, q
 * rows following each other) short enough to be read in a strided order the prefetchers do
 * not follow well: then the next task's run is requested line by line while this one is
 * transposed. */
static bool prefetch_next_block(const map_job *j) {
  const lt__cpu_nest *nest = &j->nest;
  int64_t bytes = min64(j->q_extent, STREAM_Q_TASK) * j->p_extent * (int64_t)j->esize;
  return j->stream && !j->shifted && j->bitcopy && j->q_dims == 1 && j->p_dims == 1 &&
         nest->strides[0][nest->rank - 1] == j->p_extent && bytes <= SMALL_BLOCK;
}

static void prefetch_block(const map_job *j, const int64_t *off, int64_t b) {
  int64_t x0 = b * STREAM_Q_TASK, nqt = min64(j->q_extent - x0, STREAM_Q_TASK);
  int64_t es = (int64_t)j->esize;
  lt__cpu_prefetch_span((const char *)j->step->in[0].mem + (off[0] + x0 * j->p_extent) * es,
                        nqt * j->p_extent * es);
}

/* Task = (outer index, block of one group's positions); it walks every block of the other. */
static void run_tiles(void *arg, int64_t lo, int64_t hi) {
  const map_job *j = arg;
  lt__cpu_odometer it, ahead;
  lt__cpu_odometer_seek(&it, &j->nest, j->n_outer, lo / j->n_blocks);
  ahead = it;
  int64_t b = lo % j->n_blocks, b_ahead = b;
  bool prefetch = prefetch_next_block(j);
  tile_tables tb;
  tb.nq = tb.np = 0;
  for (int64_t t = lo; t < hi; t++) {
    if (prefetch && t + 1 < hi) {
      if (++b_ahead == j->n_blocks) {
        b_ahead = 0;
        lt__cpu_odometer_next(&ahead);
      }
      prefetch_block(j, ahead.off, b_ahead);
    }
    if (j->shifted)
      shifted_task(j, it.off, b, &tb);
    else if (j->stream)
      stream_task(j, it.off, b, &tb);
    else
      cached_task(j, it.off, b, &tb);
    if (++b == j->n_blocks) {
      b = 0;
      lt__cpu_odometer_next(&it);
    }
  }
  if (j->stream) lt__cpu_stream_fence();
}

/* Whether the q group should take the next output dim too: it is shorter than a tile, or (for
 * streamed output) its rows end inside a cache line, so that neighbouring rows, written by other
 * tasks, would share lines: a (60, 64, 128, 136) -> [3,2,1,0] ran at a third of the speed of a
 * (64, 64, 128, 136) one. */
static bool q_group_short(const map_job *j, int64_t qext) {
  return qext < TILE || (j->stream && qext * (int64_t)j->esize % 64 != 0);
}

/* Whether every output row of the tiles (q run at one p and outer index) starts on a 64-byte
 * line. */
static bool rows_on_line_grid(const map_job *j) {
  const lt__cpu_nest *nest = &j->nest;
  int64_t es = (int64_t)j->esize;
  if ((uintptr_t)((const char *)j->step->out.mem + nest->offset[1] * es) & 63) return false;
  for (int d = 0; d < nest->rank - j->q_dims; d++)
    if (nest->strides[1][d] * es % 64 != 0) return false;
  return true;
}

/* Chooses the tile groups of a one-input map (see above) and arranges the nest for them;
 * false when the rows already stream the input well enough. */
static bool plan_tiles(map_job *j) {
  lt__cpu_nest *nest = &j->nest;
  int r = nest->rank;
  if (r < 2) return false;
  /* The input's contiguous dim heads the p group; if it is the output's too, rows suffice. */
  int pdims[LT_MAX_RANK], pn = 1;
  pdims[0] = 0;
  for (int d = 1; d < r; d++)
    if (abs64(nest->strides[0][d]) < abs64(nest->strides[0][pdims[0]])) pdims[0] = d;
  if (pdims[0] == r - 1 || abs64(nest->strides[0][r - 1]) < TILE_MIN_STRIDE) return false;
  /* q group: output-innermost dims (the last ones: the nest is sorted by output stride), grown
   * while shorter than a tile and output-contiguous, stopping at the p dim. */
  int qn = 1;
  int64_t qext = nest->shape[r - 1];
  while (q_group_short(j, qext) && r - 1 - qn != pdims[0] &&
         nest->strides[1][r - 1 - qn] == nest->strides[1][r - qn] * nest->shape[r - qn]) {
    qext *= nest->shape[r - 1 - qn];
    qn++;
  }
  int64_t pext = nest->shape[pdims[0]];
  for (bool grew = true; grew && pext < P_RUN;) {
    grew = false;
    for (int d = 0; d < r - qn && !grew; d++) {
      bool used = false;
      for (int i = 0; i < pn; i++)
        used |= pdims[i] == d;
      int last = pdims[pn - 1];
      if (!used && nest->strides[0][d] == nest->strides[0][last] * nest->shape[last]) {
        pdims[pn++] = d;
        pext *= nest->shape[d];
        grew = true;
      }
    }
  }
  /* Arrange [outer][p group, outermost first][q group]: move each p dim just before the q
   * group, innermost p dim last. */
  for (int i = pn - 1; i >= 0; i--) {
    int d = pdims[i];
    lt__cpu_nest_move(nest, d, r - qn - 1);
    for (int k = 0; k < i; k++)
      if (pdims[k] > d) pdims[k]--;
  }
  j->p_dims = pn;
  j->q_dims = qn;
  j->p_extent = pext;
  j->q_extent = qext;
  j->tile_ps = nest->strides[0][r - qn - 1];
  j->tile_qs = nest->strides[1][r - 1];
  j->n_outer = r - pn - qn;
  j->n_blocks = j->stream ? (qext + STREAM_Q_TASK - 1) / STREAM_Q_TASK
                          : (pext + cached_tile(j) - 1) / cached_tile(j);
  j->shifted = j->stream && j->bitcopy && j->tile_ps == 1 && j->tile_qs == 1 &&
               lt__cpu_transpose_block(j->simd, j->esize) > 0 && !rows_on_line_grid(j);
  return true;
}

/* Streamed row copies walk the outer dims in the input's memory order instead of the output's:
 * non-temporal stores need no prefetching and may land anywhere, while the input's hardware
 * prefetchers want long runs ((512,256,512) -> [1,0,2], 2 KB rows: 0.80 -> 0.9 of memcpy). */
static void walk_input_order(lt__cpu_nest *nest) {
  int r = nest->rank;
  if (r < 2 || nest->strides[0][r - 1] != 1 || nest->strides[1][r - 1] != 1) return;
  lt__cpu_nest_sort_outer(nest, 0, r - 1);
  lt__cpu_nest_fuse(nest);
}

/* Whether other rows' elements lie between the elements of one row, in an input or the output (a
 * short input dim moved outward, as channels-last to channels-first images: (H, W, 3) -> (3, H,
 * W)): then each row reads lines that the next rows read again. Blocks outermost keep those lines
 * in cache: the input is read once instead of once per row ((1000, 1000, 8) -> [2,0,1]: 6 -> 14
 * GB/s). */
static bool interleaved_rows(const map_job *j) {
  const lt__cpu_nest *nest = &j->nest;
  int r = nest->rank;
  if (r < 2 || nest->shape[r - 1] <= INTERLEAVED_BLOCK) return false;
  for (int q = 0; q <= j->out; q++) {
    int64_t st = abs64(nest->strides[q][r - 1]), span = st * nest->shape[r - 1];
    for (int d = 0; d < r - 1 && st >= 2; d++)
      if (nest->strides[q][d] != 0 && abs64(nest->strides[q][d]) < span) return true;
  }
  return false;
}

/* A short inner dim that every operand either continues into the next dim (contiguously) or
 * repeats along it (stride 0 there: a per-channel bias (N, 3) + (3,)) becomes one long row in
 * which the repeating inputs are periodic: their values are laid out a chunk at a time, and the
 * other operands keep unit-stride rows (0.28 -> 0.8 of a triad; strided rows of widen_short_rows
 * reached 0.28). */
static void fold_periodic(map_job *j) {
  lt__cpu_nest *nest = &j->nest;
  int r = nest->rank;
  if (j->bitcopy || j->step->n_in < 2 || r < 2 || nest->shape[r - 1] >= SHORT_INNER) return;
  int64_t p = nest->shape[r - 1];
  bool any = false;
  for (int q = 0; q <= j->out; q++) {
    bool whole = nest->strides[q][r - 2] == p * nest->strides[q][r - 1];
    bool repeats = q < j->out && nest->strides[q][r - 2] == 0 && nest->strides[q][r - 1] != 0;
    if (!whole && !repeats) return;
    any |= repeats;
  }
  if (!any) return;
  for (int q = 0; q < j->out; q++) {
    j->periodic[q] = nest->strides[q][r - 2] == 0 && nest->strides[q][r - 1] != 0;
    j->period_stride[q] = j->periodic[q] ? nest->strides[q][r - 1] : 0;
    if (j->periodic[q]) nest->strides[q][r - 1] = 0; /* offsets do not move along the row */
  }
  nest->shape[r - 2] *= p;
  for (int q = 0; q <= j->out; q++)
    nest->strides[q][r - 2] = nest->strides[q][r - 1];
  nest->rank = r - 1;
  j->period = p;
}

/* A short inner dim (a few channels: (1000, 1000, 3) + (3,)) costs a row's set-up per few
 * elements: 0.5 GB/s. Computed maps walk the next dim innermost instead when it is longer
 * (strided rows, blocks outermost where they then interleave): 5-10x. */
static void widen_short_rows(lt__cpu_nest *nest) {
  int r = nest->rank;
  if (r >= 2 && nest->shape[r - 1] < SHORT_INNER && nest->shape[r - 2] > nest->shape[r - 1])
    lt__cpu_nest_move(nest, r - 2, r - 1);
}

/* A permutation without arithmetic whose compute dtype cannot lose bits: copy bits. */
static bool is_bitcopy(const lt__map_step *s) {
  if (s->n_in != 1 || s->unary[0] != LT_UNARY_IDENTITY || s->scalars[0] != 1.0) return false;
  if (s->in[0].dtype != s->out.dtype) return false;
  bool wide = s->out.dtype == LT_F64 || s->out.dtype == LT_I64;
  return !wide || s->compute == LT_F64;
}

lt_status lt__cpu_map(lt_context *ctx, const lt__map_step *step) {
  /* out = 0 * u(in) does not read in (as cuTENSOR): it is a fill with zero. */
  lt__map_step zero_fill;
  const lt__map_step *s = step;
  if (step->n_in == 1 && step->scalars[0] == 0.0) {
    zero_fill = *step;
    zero_fill.n_in = 0;
    s = &zero_fill;
  }
  map_job j;
  memset(&j, 0, sizeof j);
  j.step = s;
  j.k = lt__cpu_kernels_widest(s->compute);
  j.out = s->n_in;
  j.bitcopy = is_bitcopy(s);
  j.esize = lt_dtype_size(s->out.dtype);
  j.simd = lt__cpu_simd_level();
  lt__cpu_nest *nest = &j.nest;
  lt__cpu_nest_init(nest, s->rank, s->shape, s->n_in + 1);
  for (int q = 0; q <= s->n_in; q++) {
    const lt__operand *op = q < s->n_in ? &s->in[q] : &s->out;
    nest->offset[q] = op->offset;
    if (s->rank > 0) memcpy(nest->strides[q], op->strides, sizeof(int64_t) * (size_t)s->rank);
  }
  int64_t numel = lt__cpu_nest_numel(nest);
  if (numel == 0) return LT_OK;
  j.stream = j.bitcopy && numel * (int64_t)j.esize >= STREAM_BYTES;
  j.stream_rows = !j.bitcopy && numel * (int64_t)j.esize >= STREAM_BYTES;
  lt__cpu_nest_squeeze(nest);
  lt__cpu_nest_flip_negative(nest, j.out);
  lt__cpu_nest_sort(nest, j.out);
  lt__cpu_nest_fuse(nest);
  if (s->n_in == 1 && plan_tiles(&j)) {
    lt__cpu_parallel(ctx, lt__cpu_nest_count(nest, j.n_outer) * j.n_blocks, numel, run_tiles, &j);
    return LT_OK;
  }
  if (j.stream) walk_input_order(nest);
  if (!j.bitcopy) fold_periodic(&j);
  if (!j.bitcopy) widen_short_rows(nest);
  int64_t len = nest->rank ? nest->shape[nest->rank - 1] : 1;
  if (j.bitcopy && nest->rank >= 2 && len * (int64_t)j.esize <= SHORT_ROW_BYTES) {
    j.n_outer = nest->rank - 2;
    lt__cpu_parallel(ctx, lt__cpu_nest_count(nest, j.n_outer), numel, run_planes, &j);
    return LT_OK;
  }
  j.n_outer = nest->rank ? nest->rank - 1 : 0;
  j.blocks_outer = interleaved_rows(&j);
  j.row_block = j.blocks_outer ? INTERLEAVED_BLOCK : ROW_BLOCK;
  j.n_blocks = (len + j.row_block - 1) / j.row_block;
  lt__cpu_parallel(ctx, lt__cpu_nest_count(nest, j.n_outer) * j.n_blocks, numel, run_rows, &j);
  return LT_OK;
}

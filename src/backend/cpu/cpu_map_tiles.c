/* SPDX-License-Identifier: MIT */
/* The map engine's tiles: a permutation whose input's contiguous dim is not the output's is
 * walked in tiles over the output's innermost dims and the input's, so both sides move whole
 * cache lines. Bit copies go through the register transposes of cpu_transpose.h; outputs past
 * STREAM_BYTES leave with non-temporal stores (128-row tiles, 64 input rows per task, rows off
 * the line grid in windows of their own: shifted_task). */
#include "backend/cpu/cpu_map.h"

#define TILE 32            /* tile edge in elements: 32x32 fits L1 for every dtype */
#define TILE_MIN_STRIDE 16 /* input stride along the output's inner dim worth tiling for */
#define P_RUN 1024         /* input elements read contiguously per tile row, when dims allow */
#define STREAM_P_TILE LT__CPU_TILE_MAX /* streamed tiles: output rows per tile */
#define STREAM_Q_TASK 64               /* streamed tiles: input rows per task */
#define SMALL_BLOCK 32768              /* streamed tiles: next task's input prefetched up to this */
#define CACHED_BIT_TILE_BYTES 256      /* cached bit-copy tiles: row bytes, so 256 / esize */
#define SHIFTED_P_BYTES 256            /* shifted windows: input bytes per row per tile */

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

static void map_tile(const lt__cpu_map_job *j, int64_t in_base, int64_t out_base,
                     const int64_t *out_p, const int64_t *in_q, int64_t p0, int64_t np, int64_t q0,
                     int64_t nq) {
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
      lt__cpu_transpose_rows(drow, srow, np, nq, j->esize, j->simd,
                             j->stream ? LT__CPU_TR_STREAM | j->tile_read : 0);
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

static const int64_t *q_table(const lt__cpu_map_job *j, tile_tables *tb, int64_t q0, int64_t nq) {
  if (tb->nq != nq || tb->q0 != q0) {
    group_offsets(&j->nest, j->n_outer + j->p_dims, j->q_dims, 0, q0, nq, tb->in_q);
    tb->q0 = q0;
    tb->nq = nq;
  }
  return tb->in_q;
}

static const int64_t *p_table(const lt__cpu_map_job *j, tile_tables *tb, int64_t p0, int64_t np) {
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
static void stream_task(const lt__cpu_map_job *j, const int64_t *off, int64_t b, tile_tables *tb) {
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
static void shifted_task(const lt__cpu_map_job *j, const int64_t *off, int64_t b, tile_tables *tb) {
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
    lt__cpu_transpose_rows(brow, srow, np, c_hi - c_lo, j->esize, j->simd, j->tile_read);
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

/* Streamed output whose rows are short (one q block) and follow each other in the output (the
 * innermost p dim steps by the row length): TCCG's efbad -> abfde, rows of 43 floats. Row by row
 * (shifted_task) every row's ends are partial lines, written with ordinary stores and read for
 * ownership first; here the rows are transposed end to end into an L1 buffer and each run of
 * adjacent rows leaves as one span, all its lines but the ends whole and streamed. */
static void joined_task(const lt__cpu_map_job *j, const int64_t *off, tile_tables *tb) {
  _Alignas(64) char buf[SHIFTED_P_BYTES * STREAM_Q_TASK]; /* pt rows of q_extent elements */
  int64_t es = (int64_t)j->esize, nq = j->q_extent, row = nq * es;
  const int64_t *in_q = q_table(j, tb, 0, nq);
  const char *in = (const char *)j->step->in[0].mem + off[0] * es;
  char *out = (char *)j->step->out.mem + off[1] * es;
  char *brow[SHIFTED_P_BYTES / 2];
  const char *srow[LT__CPU_TILE_MAX];
  int64_t pt = SHIFTED_P_BYTES / es;
  for (int64_t p = 0; p < pt; p++)
    brow[p] = buf + p * row;
  for (int64_t p0 = 0; p0 < j->p_extent; p0 += pt) {
    int64_t np = min64(j->p_extent - p0, pt);
    const int64_t *out_p = p_table(j, tb, p0, np);
    for (int64_t c = 0; c < nq; c++)
      srow[c] = in + (in_q[c] + p0) * es;
    lt__cpu_transpose_rows(brow, srow, np, nq, j->esize, j->simd, j->tile_read);
    for (int64_t p = 0, run; p < np; p += run) {
      for (run = 1; p + run < np && out_p[p + run] == out_p[p] + run * nq; run++) {
      }
      lt__cpu_copy_stream(out + out_p[p] * es, brow[p], (size_t)(run * row), j->simd);
    }
  }
}

/* Edge of the cached tiles: bit copies take 256-byte rows (a 64x64 float tile: a quarter of
 * the per-tile bookkeeping of 32x32, and 1.2-1.5x the speed on cache-resident matrices), at
 * most LT__CPU_TILE_MAX (the row tables' size: 1-byte elements would make 256-row tiles, which
 * overran them and wrote a transposed u8 300 x 33 copy mostly wrong). */
static int64_t cached_tile(const lt__cpu_map_job *j) {
  return j->bitcopy ? min64(CACHED_BIT_TILE_BYTES / (int64_t)j->esize, LT__CPU_TILE_MAX) : TILE;
}

/* Cached output: the task holds a p block, so it writes TILE output rows sequentially. */
static void cached_task(const lt__cpu_map_job *j, const int64_t *off, int64_t b, tile_tables *tb) {
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
static bool prefetch_next_block(const lt__cpu_map_job *j) {
  const lt__cpu_nest *nest = &j->nest;
  int64_t bytes = min64(j->q_extent, STREAM_Q_TASK) * j->p_extent * (int64_t)j->esize;
  return j->stream && !j->shifted && j->bitcopy && j->q_dims == 1 && j->p_dims == 1 &&
         nest->strides[0][nest->rank - 1] == j->p_extent && bytes <= SMALL_BLOCK;
}

static void prefetch_block(const lt__cpu_map_job *j, const int64_t *off, int64_t b) {
  int64_t x0 = b * STREAM_Q_TASK, nqt = min64(j->q_extent - x0, STREAM_Q_TASK);
  int64_t es = (int64_t)j->esize;
  lt__cpu_prefetch_span((const char *)j->step->in[0].mem + (off[0] + x0 * j->p_extent) * es,
                        nqt * j->p_extent * es);
}

/* Task = (outer index, block of one group's positions); it walks every block of the other. */
void lt__cpu_map_run_tiles(void *arg, int64_t lo, int64_t hi) {
  const lt__cpu_map_job *j = arg;
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
    if (j->joined)
      joined_task(j, it.off, &tb);
    else if (j->shifted)
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
static bool q_group_short(const lt__cpu_map_job *j, int64_t qext) {
  return qext < TILE || (j->stream && qext * (int64_t)j->esize % 64 != 0);
}

/* Whether every output row of the tiles (q run at one p and outer index) starts on a 64-byte
 * line. */
static bool rows_on_line_grid(const lt__cpu_map_job *j) {
  const lt__cpu_nest *nest = &j->nest;
  int64_t es = (int64_t)j->esize;
  if ((uintptr_t)((const char *)j->step->out.mem + nest->offset[1] * es) & 63) return false;
  for (int d = 0; d < nest->rank - j->q_dims; d++)
    if (nest->strides[1][d] * es % 64 != 0) return false;
  return true;
}

/* Chooses the tile groups of a one-input map (see above) and arranges the nest for them;
 * false when the rows already stream the input well enough. */
bool lt__cpu_map_plan_tiles(lt__cpu_map_job *j) {
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
  j->joined = j->shifted && qext <= STREAM_Q_TASK && nest->strides[1][r - qn - 1] == qext;
  /* Input rows a multiple of 4 KB apart fall into the same cache sets, where lines requested
   * ahead evict the ones in use: 8192^2, 4096^2 and (64,64,128,128) -> [2,0,3,1] transposes
   * ran 0.86-0.92x with the requests, rows 32800 bytes apart 1.65x. Rows no longer than the
   * distance have nothing ahead to request. */
  int64_t row_gap = abs64(nest->strides[0][r - 1]) * (int64_t)j->esize;
  bool ahead = row_gap % 4096 != 0 && pext * (int64_t)j->esize > LT__CPU_TR_AHEAD_BYTES;
  j->tile_read = ahead ? LT__CPU_TR_AHEAD : 0;
  return true;
}

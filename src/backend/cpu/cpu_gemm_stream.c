/* SPDX-License-Identifier: MIT */
/* The streaming GEMM driver (cpu_gemm_stream.h): B, at most LT__CAPS_SMALL_K deep, is packed
 * once per block of up to STREAM_B_BYTES (so it stays in L2 for every row of C); threads then
 * take chunks of C's rows along its unit stride, pack that chunk of A (a few KiB, in L1) and
 * sweep it across B, writing each C tile once in place. There is no k blocking (k is small)
 * and no C block buffer: C's traffic, the bound at small k, is one write per element. A
 * batched step is one parallel region over (batch, chunk) pairs, with B packed once when it is
 * the same in every batch or for all batches up front when the copies are small; a thread
 * prefetches the A rows of its next chunk while it computes the current one. Where A's unit
 * stride lies on a row mode that is not C's (line mode), a task packs a chunk of rows for a
 * cache line's worth of that mode at once, one packed chunk per value, through tile transposes,
 * and stores each value's tiles at its own offset in C: A is read once, in lines, with no
 * permutation before the GEMM. */
#include "backend/cpu/cpu_gemm_stream.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_gemm_pack.h"
#include "core/object.h"

#include <stdlib.h>
#include <string.h>

/* Rows of C per task (a multiple of every kernel's MR): its packed A chunk (at most
 * STREAM_CHUNK x LT__CAPS_SMALL_K doubles, 32 KiB) and offsets live on the task's stack. */
#define STREAM_CHUNK 128
/* Packed B per block: held in L2 while every chunk of A sweeps across it. */
#define STREAM_B_BYTES (1u << 20)
/* C larger than this is stored past the caches (when beta == 0): it would only evict A and B.
 * Only whole lines go that way (chunk_rows, chunk_task). */
#define STREAM_LINE 64
#define STREAM_NT_BYTES (32u << 20)
/* Batched steps take the engine only when each GEMM's C has at least this many elements:
 * B is packed per GEMM, serially. */
#define STREAM_MIN_BATCH_ELEMS 16384
/* The least extent along C's unit stride the engine takes (two chunks). */
#define STREAM_MIN_UNIT_EXTENT (2 * STREAM_CHUNK)
/* Widest B (columns after the turn) packed for all batches up front (pack_task's offsets). */
#define STREAM_B_MAX_N 1024
/* Deepest k the engine takes when A is read by lines (line_task; else LT__CAPS_SMALL_K). */
#define STREAM_MAX_K 128
/* A task's packed A in line mode: lines x rows x k elements at most. */
#define LINE_PACK_BYTES (64u << 10)
/* Blocks of lines ahead that a line-mode task fetches into L2 while packing: a chunk reads
 * hundreds of lines per block, one per page, more streams than the hardware prefetchers track. */
#define LINE_AHEAD 2
/* Offsets farther apart than this many elements touch a cache line each. */
#define LINE_FAR 8

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* One GEMM of the step, turned (C^T = B^T A^T) so that C's rows run along its unit stride. */
typedef struct stream_gemm {
  const lt__gemm_stream *ks;
  int64_t m, n, k;
  const char *a, *b;
  char *c;
  int64_t rs_a, cs_a, rs_b, cs_b, rs_c, cs_c;
  const lt__gemm_group *ra, *ca, *rb, *cb, *rc, *cc;
  double alpha, beta;
  lt__cpu_simd simd;
} stream_gemm;

static bool rows_unit(int64_t rs, const lt__gemm_group *rows, int64_t m) {
  return rs == 1 || (m == 1 && rows->n == 0);
}

static const lt__gemm_stream *kernels_of(lt_context *ctx, lt_dtype dtype) {
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  return isa->gemm_stream ? isa->gemm_stream(dtype) : NULL;
}

/* Whether the engine runs the step as C^T = B^T A^T (C's rows are not along its unit stride). */
static bool turned(const lt__gemm_step *s) { return !rows_unit(s->c.rs, &s->c.rows, s->m); }

/* Line mode: the index in A's row group (the engine's A, whose rows run along C's unit stride)
 * of the mode with unit stride in A, where A's rows and k both lie far apart in A; -1 where A
 * is read as it is. Packing a chunk of such rows would touch a cache line per element and use
 * one element of it: TCCG's abcde-efbad-cf, whose C runs along e and A along d. Tasks then
 * take a chunk of rows for a line's worth of values of that mode at once (line_task). */
static int line_mode(const lt__gemm_group *ra, const lt__gemm_group *ka, int64_t s_k) {
  if (ra->n < 2 || llabs(ra->stride[ra->n - 1]) <= LINE_FAR) return -1;
  if (llabs(ka->n ? ka->stride[ka->n - 1] : s_k) <= LINE_FAR) return -1;
  for (int i = 0; i + 1 < ra->n; i++)
    if (ra->stride[i] == 1) return i;
  return -1;
}

static int step_line_mode(const lt__gemm_step *s) {
  return turned(s) ? line_mode(&s->b.cols, &s->b.rows, s->b.rs)
                   : line_mode(&s->a.rows, &s->a.cols, s->a.cs);
}

/* Rows and lines (values of the unit-stride mode) per line-mode task, whose packed A (lines x
 * rows, in MR-row panels, x k) fills at most LINE_PACK_BYTES: whole runs of C's rows (`run`
 * consecutive rows, 0: unknown) with whole cache lines where some fit; else one run with at
 * least half a line, so that no tile straddles two runs and a C line the run shares with the
 * next value of the mode is written by the same task (43-row runs in 32-row chunks: 0.8x); else
 * as many panels of whole lines as fit; else one panel of fewer lines. *lines is 0 when not
 * even two fit (k too deep). */
static void line_shape(const lt__gemm_stream *ks, int64_t k, int64_t run, int64_t *rows,
                       int *lines) {
  int64_t es = (int64_t)ks->esize, per_line = STREAM_LINE / es;
  int64_t fit = min64((int64_t)LINE_PACK_BYTES / (STREAM_LINE * k), STREAM_CHUNK);
  int64_t panels = run > 0 ? (run + ks->mr - 1) / ks->mr * ks->mr : 0;
  int64_t w_run = panels ? (int64_t)LINE_PACK_BYTES / (es * panels * k) : 0;
  if (run > 0 && panels <= fit) {
    *rows = fit / panels * run, *lines = (int)per_line;
  } else if (run > 0 && panels <= STREAM_CHUNK && 2 * w_run >= per_line) {
    *rows = run, *lines = (int)min64(w_run, per_line);
  } else if (fit >= ks->mr) {
    *rows = fit / ks->mr * ks->mr, *lines = (int)per_line;
  } else {
    int64_t w = (int64_t)LINE_PACK_BYTES / (es * ks->mr * k);
    *rows = ks->mr, *lines = w < 2 ? 0 : (int)min64(w, per_line);
  }
}

int64_t lt__cpu_gemm_line_max_k(lt_context *ctx, lt_dtype dtype) {
  const lt__gemm_stream *ks = kernels_of(ctx, dtype);
  if (!ks) return 0;
  int64_t k = STREAM_MAX_K, rows;
  int lines;
  for (line_shape(ks, k, 0, &rows, &lines); lines == 0; line_shape(ks, k, 0, &rows, &lines))
    k--;
  return k;
}

bool lt__cpu_gemm_stream_ok(lt_context *ctx, const lt__gemm_step *s) {
  if (s->k < 1 || s->k > STREAM_MAX_K || s->m < 1 || s->n < 1) return false;
  if (lt__gemm_ab_dtype(s) != s->dtype) return false; /* 16-bit A and B: packed engines only */
  const lt__gemm_stream *ks = kernels_of(ctx, s->dtype);
  if (!ks) return false;
  if (s->k > LT__CAPS_SMALL_K &&
      (step_line_mode(s) < 0 || s->k > lt__cpu_gemm_line_max_k(ctx, s->dtype)))
    return false;
  if (lt__cpu_gemm_batch_count(s) > 1 && s->m * s->n < STREAM_MIN_BATCH_ELEMS) return false;
  /* Threads split C's unit-stride extent into chunks: below two chunks one thread would do
   * all the work (a 1.6M x 20 C, k = 32, ran at half the packed engine's speed). Forced
   * (LT_GEMM_ENGINE=stream, the tests) the engine takes any extent. */
  const lt__cpu_state *st = ctx->backend_state;
  int64_t least = st->gemm_forced == LT__CPU_GEMM_STREAM ? 1 : STREAM_MIN_UNIT_EXTENT;
  if (rows_unit(s->c.rs, &s->c.rows, s->m)) return s->m >= least;
  return rows_unit(s->c.cs, &s->c.cols, s->n) && s->n >= least;
}

static stream_gemm gemm_of(const lt__gemm_step *s, const lt__gemm_stream *ks, lt__cpu_simd simd,
                           int64_t b) {
  int64_t oa, ob, oc;
  lt__cpu_gemm_batch_offsets(s, b, &oa, &ob, &oc);
  int64_t es = (int64_t)ks->esize;
  stream_gemm g = {ks,
                   s->m,
                   s->n,
                   s->k,
                   (const char *)s->a.mem + oa * es,
                   (const char *)s->b.mem + ob * es,
                   (char *)s->c.mem + oc * es,
                   s->a.rs,
                   s->a.cs,
                   s->b.rs,
                   s->b.cs,
                   s->c.rs,
                   s->c.cs,
                   &s->a.rows,
                   &s->a.cols,
                   &s->b.rows,
                   &s->b.cols,
                   &s->c.rows,
                   &s->c.cols,
                   s->alpha,
                   s->beta,
                   simd};
  if (turned(s)) {
    stream_gemm t = g;
    t.m = g.n, t.n = g.m;
    t.a = g.b, t.rs_a = g.cs_b, t.cs_a = g.rs_b;
    t.b = g.a, t.rs_b = g.cs_a, t.cs_b = g.rs_a;
    t.rs_c = g.cs_c, t.cs_c = g.rs_c;
    t.ra = g.cb, t.ca = g.rb, t.rb = g.ca, t.cb = g.ra, t.rc = g.cc, t.cc = g.rc;
    g = t;
  }
  return g;
}

/* Packs rows [first, first + count) x all k of a matrix (element (r, p) at x + roff + koff)
 * into k-major panels of r rows, gathering through offsets where a group is scattered. */
static void pack_rows(void *dst, const char *x, int64_t s_row, const lt__gemm_group *rows,
                      int64_t s_k, const lt__gemm_group *ks, int64_t first, int64_t count,
                      int64_t k, int r, size_t es, lt__cpu_simd simd, int64_t *roff_buf) {
  if (rows->n || ks->n) {
    int64_t koff[STREAM_MAX_K];
    lt__gemm_offsets(rows, s_row, first, count, roff_buf);
    lt__gemm_offsets(ks, s_k, 0, k, koff);
    lt__gemm_pack_scattered(dst, x, roff_buf, count, koff, k, r, es);
    return;
  }
  lt__gemm_pack(dst, x + first * s_row * (int64_t)es, s_row, s_k, count, k, r, es, simd);
}

/* Whether rows [i, i + lanes) of a tile are all there and consecutive in C. */
static bool whole_vector(const int64_t *roff, int64_t i, int64_t rows, int lanes) {
  if (i + lanes > rows) return false;
  for (int l = 1; l < lanes; l++)
    if (roff[i + l] != roff[i] + l) return false;
  return true;
}

/* Rows [*i0, *i0 + *rows) of C that chunk `chunk` of GEMM g covers. Chunk 0 holds the rows
 * before C's first row on a cache-line boundary (none when row 0 is on one), so that every
 * later chunk, and each register tile in it, starts a line (a tile is one or two lines). C
 * handed over from NumPy starts 16 bytes past a line: with tiles from row 0, no store there
 * could go past the cache, and streaming the vectors that happened to be aligned only made it
 * worse (half-line non-temporal stores beside ordinary ones: TCCG's abcdef-gdab-efgc 22 ms into
 * such a C, 30 ms with 32-byte alignment, 15 ms with line alignment or an aligned C). Only C
 * whose rows run consecutively for at least a chunk is shifted: where they run for one tile
 * (16 floats, then a jump), shifted tiles would straddle two runs and store element by
 * element (abcdef-efgc-gdab 0.88x). */
static void chunk_rows(const stream_gemm *g, int64_t chunk, int64_t *i0, int64_t *rows) {
  const lt__gemm_group *rc = g->rc;
  int64_t run = rc->n == 0 ? g->m : rc->stride[rc->n - 1] == 1 ? rc->extent[rc->n - 1] : 1;
  uintptr_t es = (uintptr_t)g->ks->esize, per_line = STREAM_LINE / es;
  uintptr_t at = (uintptr_t)g->c / es; /* row 0's offset is 0 in either form */
  int64_t head = run < STREAM_CHUNK ? 0 : (int64_t)((per_line - at % per_line) % per_line);
  if (head > g->m) head = g->m;
  if (chunk == 0) {
    *i0 = 0, *rows = head;
    return;
  }
  *i0 = head + (chunk - 1) * STREAM_CHUNK;
  *rows = *i0 < g->m ? min64(g->m - *i0, STREAM_CHUNK) : 0;
}

/* The A rows of the task a thread takes next, touched ahead (software prefetch) a few
 * segments per tile of the current task: with C streaming out and A arriving as up to
 * LT__CAPS_SMALL_K runs of a few hundred bytes per task, the hardware prefetchers do not keep
 * up, and a thread's packing would otherwise wait on DRAM with its FMA units idle (measured:
 * 1.6x on a 1.6M x 22 x 29 GEMM). A segment is one k index's rows (rows adjacent in A) or one
 * row's k values (k adjacent); A with neither adjacent is not prefetched. */
typedef struct prefetch_cursor {
  const char *base;
  const int64_t *seg_off; /* byte offset of segment i: seg_off[i] (row-wise) or i * seg_step */
  int64_t seg_step, seg_bytes, n_seg, next;
} prefetch_cursor;

static void prefetch_some(prefetch_cursor *pc, int64_t count) {
  for (; count > 0 && pc->next < pc->n_seg; count--, pc->next++) {
    const char *p = pc->base + (pc->seg_off ? pc->seg_off[pc->next] : pc->next * pc->seg_step);
    for (int64_t x = 0; x < pc->seg_bytes; x += 64)
      __builtin_prefetch(p + x);
  }
}

/* Line mode's split of the rows: A's unit-stride mode u with the row modes that nest onto it in
 * A (each one's stride the extent of those inside it) form a run, contiguous in A, of `extent`
 * values; row i of run value x lies at A + ra(i) + x and C + rc(i) + uc(x). The run becomes the
 * outermost index, so that a chunk of rows holds a few thousand cache lines (pages) of A that
 * its blocks of the run read in turn, line after line: with u alone (abcde-efbad-cf: d, 29
 * long, where d, a and b nest into 36163 values) a chunk's pages were left after a line each
 * and came back through the TLB and DRAM for the next value of a (2.7x slower). */
typedef struct line_group {
  lt__gemm_group ra, rc, uc;
  int64_t extent, m; /* the run's length; rows per run value */
} line_group;

/* A batch range of one block of C's columns: B packed for it (b_pack + batch * pack_step),
 * with the block's C column offsets (the same in every batch). Tasks are (batch, chunk of
 * rows) pairs, so that a batched step is one parallel region, not one per GEMM. */
typedef struct stream_job {
  const lt__gemm_step *s;
  const lt__gemm_stream *ks;
  lt__cpu_simd simd;
  int64_t batch0, chunks, n; /* first batch, chunks per batch, columns in the block */
  const char *b_pack;
  int64_t pack_step; /* bytes between batches' packed B; 0: shared */
  const int64_t *coff;
  bool nt;
  line_group lines;           /* line mode (line_task): A's rows split into runs */
  int64_t line_rows, ublocks; /* line mode: rows per task, blocks of lines per chunk */
  int line_w;                 /* line mode: lines per block */
} stream_job;

/* Sets pc up over task t's A rows (nothing when A is scattered both ways). */
static void prefetch_task(const stream_job *j, int64_t t, int64_t *roff_buf, prefetch_cursor *pc) {
  stream_gemm g = gemm_of(j->s, j->ks, j->simd, j->batch0 + t / j->chunks);
  int64_t es = (int64_t)j->ks->esize, i0, rows;
  chunk_rows(&g, t % j->chunks, &i0, &rows);
  *pc = (prefetch_cursor){.base = g.a};
  if (rows == 0) return;
  if (g.ca->n == 0 && rows_unit(g.rs_a, g.ra, rows) && g.ra->n == 0) {
    pc->base += i0 * es, pc->seg_step = g.cs_a * es, pc->seg_bytes = rows * es, pc->n_seg = g.k;
  } else if (g.ca->n == 0 && g.cs_a == 1) {
    lt__gemm_offsets(g.ra, g.rs_a, i0, rows, roff_buf);
    for (int64_t i = 0; i < rows; i++)
      roff_buf[i] *= es;
    pc->seg_off = roff_buf, pc->seg_bytes = g.k * es, pc->n_seg = rows;
  }
}

/* Store flags of each MR-row tile of a chunk whose C rows lie at roff. */
static void tile_flags(const stream_job *j, const int64_t *roff, int64_t rows, unsigned *flags) {
  const lt__gemm_stream *ks = j->ks;
  for (int64_t ir = 0, q = 0; ir < rows; ir += ks->mr, q++)
    flags[q] = (whole_vector(roff, ir, rows, ks->lanes) ? LT__STREAM_HALF0 : 0u) |
               (whole_vector(roff, ir + ks->lanes, rows, ks->lanes) ? LT__STREAM_HALF1 : 0u) |
               (j->nt && whole_vector(roff, ir, rows, ks->mr) ? LT__STREAM_NT : 0u);
}

/* Sweeps a packed chunk of A (its C rows at roff from c) across the job's block of packed B,
 * touching pc's next segments ahead as it goes. */
static void sweep(const stream_job *j, const stream_gemm *g, const char *a_pack, const char *b_pack,
                  char *c, const int64_t *roff, const unsigned *flags, int64_t rows,
                  prefetch_cursor *pc) {
  const lt__gemm_stream *ks = j->ks;
  int64_t es = (int64_t)ks->esize;
  int64_t tiles = (j->n + ks->nr - 1) / ks->nr * ((rows + ks->mr - 1) / ks->mr);
  int64_t per_tile = (pc->n_seg + tiles - 1) / tiles;
  for (int64_t jr = 0; jr < j->n; jr += ks->nr) {
    int n = (int)min64(ks->nr, j->n - jr);
    unsigned joined = n == ks->nr ? LT__STREAM_JOINED : 0u;
    for (int i = 1; i < n; i++)
      if (j->coff[jr + i] != j->coff[jr + i - 1] + ks->mr) joined = 0;
    for (int64_t ir = 0, q = 0; ir < rows; ir += ks->mr, q++) {
      prefetch_some(pc, per_tile);
      unsigned f = flags[q] & LT__STREAM_NT ? flags[q] | joined : flags[q];
      ks->kernel(g->k, a_pack + ir * g->k * es, b_pack + jr * g->k * es, c, roff + ir, j->coff + jr,
                 (int)min64(ks->mr, rows - ir), n, g->alpha, g->beta, f);
    }
  }
}

static void chunk_task(void *arg, int64_t lo, int64_t hi) {
  const stream_job *j = arg;
  const lt__gemm_stream *ks = j->ks;
  _Alignas(64) char a_pack[STREAM_CHUNK * LT__CAPS_SMALL_K * sizeof(double)];
  int64_t roff[STREAM_CHUNK], scratch[STREAM_CHUNK], ahead[STREAM_CHUNK];
  for (int64_t t = lo; t < hi; t++) {
    int64_t b = t / j->chunks;
    stream_gemm g = gemm_of(j->s, ks, j->simd, j->batch0 + b);
    int64_t i0, rows;
    chunk_rows(&g, t % j->chunks, &i0, &rows);
    if (rows == 0) continue;
    pack_rows(a_pack, g.a, g.rs_a, g.ra, g.cs_a, g.ca, i0, rows, g.k, ks->mr, ks->esize, g.simd,
              scratch);
    lt__gemm_offsets(g.rc, g.rs_c, i0, rows, roff);
    unsigned flags[STREAM_CHUNK / 8];
    tile_flags(j, roff, rows, flags);
    prefetch_cursor pc = {0};
    /* used up within this task; past the next GEMM's chunk 0 where that has no rows */
    for (int64_t u = t + 1; u < hi && u <= t + 2 && pc.n_seg == 0; u++)
      prefetch_task(j, u, ahead, &pc);
    sweep(j, &g, a_pack, j->b_pack + b * j->pack_step, g.c, roff, flags, rows, &pc);
  }
  if (j->nt) ks->fence();
}

static void line_rows_of(const stream_gemm *g, int u, line_group *lr) {
  const lt__gemm_group *ra = g->ra;
  lt__gemm_group rc = *g->rc;
  if (rc.n == 0) { /* C's rows nest into one stride: its modes' strides from A's extents */
    rc.n = ra->n;
    for (int i = ra->n - 1; i >= 0; i--) {
      rc.extent[i] = ra->extent[i];
      rc.stride[i] = i == ra->n - 1 ? g->rs_c : rc.stride[i + 1] * ra->extent[i + 1];
    }
  }
  bool in_run[LT__GEMM_GROUP_MODES] = {false};
  int run[LT__GEMM_GROUP_MODES], n_run = 0; /* innermost first */
  in_run[u] = true, run[n_run++] = u, lr->extent = ra->extent[u];
  for (bool grew = true; grew;) { /* the innermost row mode stays C's unit-stride rows */
    grew = false;
    for (int i = 0; i + 1 < ra->n; i++)
      if (!in_run[i] && ra->stride[i] == lr->extent) {
        in_run[i] = true, run[n_run++] = i, lr->extent *= ra->extent[i], grew = true;
      }
  }
  lr->m = g->m / lr->extent;
  lr->uc.n = n_run;
  for (int q = 0; q < n_run; q++)
    lr->uc.extent[q] = rc.extent[run[n_run - 1 - q]],
    lr->uc.stride[q] = rc.stride[run[n_run - 1 - q]];
  lr->ra.n = lr->rc.n = 0;
  for (int i = 0; i < ra->n; i++) {
    if (in_run[i]) continue;
    lr->ra.extent[lr->ra.n] = ra->extent[i], lr->ra.stride[lr->ra.n++] = ra->stride[i];
    lr->rc.extent[lr->rc.n] = rc.extent[i], lr->rc.stride[lr->rc.n++] = rc.stride[i];
  }
}

/* Line-mode tasks: (batch, chunk of rows, block of lines), the blocks of one chunk in turn, so
 * that the cache lines of A a chunk touches serve every block from L1/L2. Each line of the
 * block is packed as a matrix of its own (lt__gemm_pack_lines) and swept across B into C at
 * its value of u. */
static void line_task(void *arg, int64_t lo, int64_t hi) {
  const stream_job *j = arg;
  const lt__gemm_stream *ks = j->ks;
  _Alignas(64) char a_pack[LINE_PACK_BYTES];
  int64_t roff_a[STREAM_CHUNK], roff_c[STREAM_CHUNK], koff[STREAM_MAX_K];
  int64_t xoff[STREAM_LINE / sizeof(float)];
  unsigned flags[STREAM_CHUNK / 8];
  int64_t es = (int64_t)ks->esize, held = -1, rows = 0;
  stream_gemm g = gemm_of(j->s, ks, j->simd, j->batch0);
  const line_group *lr = &j->lines;
  lt__gemm_offsets(g.ca, g.cs_a, 0, g.k, koff);
  prefetch_cursor none = {0};
  for (int64_t t = lo; t < hi; t++) {
    int64_t b = t / j->chunks, chunk = t % j->chunks / j->ublocks;
    if (t / j->ublocks != held) { /* a new chunk: its rows' offsets */
      held = t / j->ublocks;
      g = gemm_of(j->s, ks, j->simd, j->batch0 + b);
      int64_t i0 = chunk * j->line_rows;
      rows = min64(j->line_rows, lr->m - i0);
      lt__gemm_offsets(&lr->ra, 0, i0, rows, roff_a);
      lt__gemm_offsets(&lr->rc, 0, i0, rows, roff_c);
      tile_flags(j, roff_c, rows, flags);
    }
    int64_t x0 = t % j->ublocks * j->line_w;
    int lines = (int)min64(j->line_w, lr->extent - x0);
    lt__gemm_offsets(&lr->uc, 0, x0, lines, xoff);
    int64_t step = (rows + ks->mr - 1) / ks->mr * ks->mr * g.k;
    lt__gemm_pack_lines(a_pack, step, g.a + x0 * es, roff_a, rows, koff, g.k, lines, ks->mr,
                        ks->esize, g.simd, LINE_AHEAD * j->line_w);
    for (int w = 0; w < lines; w++)
      sweep(j, &g, a_pack + w * step * es, j->b_pack + b * j->pack_step, g.c + xoff[w] * es, roff_c,
            flags, rows, &none);
  }
  if (j->nt) ks->fence();
}

/* Whether B as the engine sees it (after the turn in gemm_of) is the same matrix in every
 * batch, so that one packed copy serves all. */
static bool b_shared(const lt__gemm_step *s) {
  const lt__matrix *b = turned(s) ? &s->a : &s->b;
  for (int d = 0; d < s->batch_rank; d++)
    if (s->batch_shape[d] > 1 && b->batch_strides[d] != 0) return false;
  return true;
}

typedef struct pack_job {
  const lt__gemm_step *s;
  const lt__gemm_stream *ks;
  lt__cpu_simd simd;
  char *mem;
  int64_t pack_step;
} pack_job;

static void pack_task(void *arg, int64_t lo, int64_t hi) {
  const pack_job *p = arg;
  int64_t noff[STREAM_B_MAX_N];
  for (int64_t b = lo; b < hi; b++) {
    stream_gemm g = gemm_of(p->s, p->ks, p->simd, b);
    pack_rows(p->mem + b * p->pack_step, g.b, g.cs_b, g.cb, g.rs_b, g.rb, 0, g.n, g.k, p->ks->nr,
              p->ks->esize, p->simd, noff);
  }
}

bool lt__cpu_gemm_stream(lt_context *ctx, const lt__gemm_step *s) {
  if (!lt__cpu_gemm_stream_ok(ctx, s)) return false;
  const lt__gemm_stream *ks = kernels_of(ctx, s->dtype);
  lt__cpu_simd simd = lt__cpu_isa_of(ctx)->simd;
  int64_t nb = lt__cpu_gemm_batch_count(s), es = (int64_t)ks->esize;
  stream_gemm g0 = gemm_of(s, ks, simd, 0);
  int64_t nc = (int64_t)STREAM_B_BYTES / (g0.k * es) / ks->nr * ks->nr;
  if (nc < ks->nr) nc = ks->nr;
  nc = min64(nc, (g0.n + ks->nr - 1) / ks->nr * ks->nr);
  int64_t chunks = 1 + (g0.m + STREAM_CHUNK - 1) / STREAM_CHUNK; /* chunk_rows */
  int u = line_mode(g0.ra, g0.ca, g0.cs_a), line_w = 0;
  int64_t line_rows = 0, ublocks = 0;
  line_group lr;
  if (u >= 0) {
    line_rows_of(&g0, u, &lr);
    const lt__gemm_group *rc = &lr.rc;
    int64_t run = rc->n && rc->stride[rc->n - 1] == 1 ? rc->extent[rc->n - 1] : 0;
    line_shape(ks, g0.k, run, &line_rows, &line_w);
  }
  if (u >= 0 && line_w > 0) {
    ublocks = (lr.extent + line_w - 1) / line_w;
    chunks = (lr.m + line_rows - 1) / line_rows * ublocks;
  } else {
    u = -1;
  }
  if (u < 0 && g0.k > LT__CAPS_SMALL_K) return false; /* chunk_task's buffers hold small k */
  lt__cpu_range_fn task = u >= 0 ? line_task : chunk_task;
  size_t pack_bytes = (size_t)(nc * g0.k * es), off_bytes = (size_t)nc * sizeof(int64_t), got;
  /* Every batch's B packed up front (one region for the whole step) where B is one block
   * narrow enough for pack_task's offsets and all copies fit STREAM_B_BYTES; else B is packed
   * per batch and block, between regions. */
  bool one_block = g0.n <= nc && nc <= STREAM_B_MAX_N, shared = one_block && b_shared(s);
  bool all_packed = one_block && !shared && nb > 1 && (size_t)nb * pack_bytes <= STREAM_B_BYTES;
  size_t packs = all_packed ? (size_t)nb : 1;
  char *mem = lt__cpu_scratch_take(ctx, packs * pack_bytes + 2 * off_bytes, &got);
  if (mem == NULL) return false;
  int64_t *coff = (int64_t *)(mem + packs * pack_bytes), *noff = coff + nc;
  bool nt = s->beta == 0 && (double)s->m * (double)s->n * (double)(es * nb) > STREAM_NT_BYTES;
  stream_job job = {.s = s,
                    .ks = ks,
                    .simd = simd,
                    .chunks = chunks,
                    .b_pack = mem,
                    .coff = coff,
                    .nt = nt,
                    .line_rows = line_rows,
                    .ublocks = ublocks,
                    .line_w = line_w};
  if (u >= 0) job.lines = lr;
  if (shared || all_packed) {
    if (shared) {
      pack_rows(mem, g0.b, g0.cs_b, g0.cb, g0.rs_b, g0.rb, 0, g0.n, g0.k, ks->nr, ks->esize, simd,
                noff);
    } else {
      pack_job pj = {s, ks, simd, mem, (int64_t)pack_bytes};
      lt__cpu_parallel(ctx, nb, nb * g0.n * g0.k, pack_task, &pj);
      job.pack_step = (int64_t)pack_bytes;
    }
    lt__gemm_offsets(g0.cc, g0.cs_c, 0, g0.n, coff);
    job.n = g0.n;
    lt__cpu_parallel(ctx, nb * chunks, nb * g0.m * g0.n, task, &job);
  } else {
    for (int64_t b = 0; b < nb; b++) {
      stream_gemm g = gemm_of(s, ks, simd, b);
      for (int64_t jc = 0; jc < g.n; jc += nc) {
        int64_t bn = min64(nc, g.n - jc);
        pack_rows(mem, g.b, g.cs_b, g.cb, g.rs_b, g.rb, jc, bn, g.k, ks->nr, ks->esize, simd, noff);
        lt__gemm_offsets(g.cc, g.cs_c, jc, bn, coff);
        job.batch0 = b, job.n = bn;
        lt__cpu_parallel(ctx, chunks, g.m * bn, task, &job);
      }
    }
  }
  lt__cpu_scratch_give(ctx, mem, got);
  return true;
}

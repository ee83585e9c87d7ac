/* SPDX-License-Identifier: MIT */
/* The k-dot GEMM driver (cpu_gemm_kdot.h). The step is turned so that X (the kernel's MR side)
 * and Y (its NR side) pad C to the fewer register tiles; both are lists of rows with k the unit
 * stride. k is cut into ranges by the shape alone (so C has the same bits on any number of
 * threads); a thread takes whole ranges and runs each tile of vector dot products over one k
 * block's panels into its per-lane partial sums while the next block's rows are prefetched and
 * copied into the other panels between (or inside) the tiles, so that the memory traffic
 * overlaps the arithmetic. At a range's end the lanes are summed into the range's partial C;
 * the partials are summed in range order, in double, and alpha and beta applied once when C is
 * written through its own offsets (lt__cpu_gemm_sum_partials). */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_gemm_pack.h"
#include "backend/cpu/cpu_isa.h"
#include "core/object.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The least k the engine takes unless forced (LT_GEMM_ENGINE=kdot, the tests): below it the
 * packed engine's k-split (or OpenBLAS) is as fast, and C's partials cost more per flop. */
#define KDOT_MIN_K 4096
/* C elements at most: the per-lane partial sums (C x lanes) stay in L2 (256 KiB in f32), and
 * the arithmetic is light beside the memory traffic (at 128 x 64, k = 8192, the packed engine's
 * outer-product tiles were faster). */
#define KDOT_MAX_MN (64 * 64)
/* Ranges of k per GEMM at most, and k blocks per range at least: each range ends with a lane
 * sum of C and a partial C, and a thread's first block is packed before any arithmetic, so few
 * long ranges win (4 ran 1.05x faster than 8 and 1.12x faster than 16 on two cores); the count
 * depends on the shape only, never on the threads (C's bits do not either). */
#define KDOT_RANGES 4
#define KDOT_MIN_RANGE_BLOCKS 4

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

typedef struct kdot_job {
  const lt__gemm_kdot *ks;
  int64_t mx, ny, k, tx, ty; /* X rows, Y rows, depth; tiles along X and Y */
  const char *x, *y;
  const int64_t *xoff, *yoff;   /* element offsets of each row's k = 0 */
  const int64_t *cxoff, *cyoff; /* C's offsets along X and along Y */
  char *c;
  int64_t range_k, ranges;
  char *partials; /* range r's partial C: mx x ny, x fastest, at r * mx * ny elements */
  char *bufs;     /* `slots` per-thread buffers of buf_bytes each, claimed through `busy` */
  int slots;
  size_t buf_bytes;
  atomic_uint busy;
} kdot_job;

static const lt__gemm_kdot *kernels_of(lt_context *ctx, lt_dtype dtype) {
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  return isa->gemm_kdot ? isa->gemm_kdot(dtype) : NULL;
}

bool lt__cpu_gemm_kdot_ok(lt_context *ctx, const lt__gemm_step *s) {
  const lt__cpu_state *st = ctx->backend_state;
  /* Forced, any shape; else a long k, and no matrix-vector product (gemv streams the matrix
   * once, and a 3 x 8 tile would be a third full) */
  bool forced = st->gemm_forced == LT__CPU_GEMM_KDOT;
  int64_t least_k = forced ? 1 : KDOT_MIN_K, least_mn = forced ? 1 : 2;
  return s->k >= least_k && s->m >= least_mn && s->n >= least_mn && s->m * s->n <= KDOT_MAX_MN &&
         lt__gemm_ab_dtype(s) == s->dtype && lt__cpu_gemm_batch_count(s) == 1 && s->a.cs == 1 &&
         s->a.cols.n == 0 && s->b.rs == 1 && s->b.rows.n == 0 && kernels_of(ctx, s->dtype) != NULL;
}

/* Per-thread buffer: two pairs of X and Y panels of a k block, the per-lane partial sums of every
 * tile and their lane sums. */
static size_t buf_bytes(const lt__gemm_kdot *ks, int64_t tx, int64_t ty) {
  int64_t tile = (int64_t)ks->mr * ks->nr;
  return ks->esize * (size_t)(2 * (tx * ks->mr + ty * ks->nr) * ks->kc +
                              tx * ty * tile * ks->lanes + tx * ty * tile);
}

/* Jobs run on at most as many threads as there are buffers, so a free one is always there. */
static int claim(kdot_job *job) {
  for (int i = 0;; i = (i + 1) % job->slots) {
    unsigned busy = atomic_load(&job->busy);
    if (!(busy & (1u << i)) && atomic_compare_exchange_weak(&job->busy, &busy, busy | 1u << i))
      return i;
  }
}

/* Where row `row` of X then Y (one list, X's rows first) begins. */
static const char *row_of(const kdot_job *job, int64_t row) {
  int64_t es = (int64_t)job->ks->esize;
  return row < job->mx ? job->x + job->xoff[row] * es : job->y + job->yoff[row - job->mx] * es;
}

/* Packs rows [first, first + count) of X then Y of the k block at k0 (kc deep) into the panels
 * xp and yp, prefetching the rows that follow but the first (the kernel prefetches that). */
static void pack_rows(const kdot_job *job, char *xp, char *yp, int64_t k0, int64_t kc,
                      int64_t first, int64_t count) {
  const lt__gemm_kdot *ks = job->ks;
  int64_t es = (int64_t)ks->esize, steps = ks->kc / ks->lanes, total = job->mx + job->ny;
  for (int64_t row = first + count + 1; row < min64(first + 2 * count, total); row++)
    for (int64_t b = 0; b < kc * es; b += 64)
      __builtin_prefetch(row_of(job, row) + k0 * es + b, 0, 3);
  int64_t end = min64(first + count, total);
  if (first < job->mx)
    ks->pack(xp, job->x + k0 * es, job->xoff, first, min64(end, job->mx) - first, ks->mr, kc,
             steps);
  if (end > job->mx) {
    int64_t f = first > job->mx ? first - job->mx : 0;
    ks->pack(yp, job->y + k0 * es, job->yoff, f, end - job->mx - f, ks->nr, kc, steps);
  }
}

/* Range r's lane sums into its partial C. */
static void finish_range(const kdot_job *job, const char *acc, char *sums, int64_t r) {
  const lt__gemm_kdot *ks = job->ks;
  int64_t es = (int64_t)ks->esize, tile = (int64_t)ks->mr * ks->nr;
  ks->reduce(acc, job->tx * job->ty * tile, sums);
  char *part = job->partials + r * job->mx * job->ny * es;
  for (int64_t jt = 0; jt < job->ty; jt++)
    for (int64_t it = 0; it < job->tx; it++)
      for (int i = 0; i < ks->mr && it * ks->mr + i < job->mx; i++)
        for (int j = 0; j < ks->nr && jt * ks->nr + j < job->ny; j++) {
          int64_t from = ((jt * job->tx + it) * tile + i * ks->nr + j) * es;
          int64_t to = ((jt * ks->nr + j) * job->mx + it * ks->mr + i) * es;
          memcpy(part + to, sums + from, (size_t)es);
        }
}

/* Ranges [lo, hi) of k, each into its partial C: the k blocks of the ranges in turn, each block
 * multiplied from one pair of panels while the next block is packed into the other pair, a few
 * rows after each tile, so that its loads overlap the arithmetic. */
static void range_task(void *arg, int64_t lo, int64_t hi) {
  kdot_job *job = arg;
  const lt__gemm_kdot *ks = job->ks;
  int slot = claim(job);
  int64_t es = (int64_t)ks->esize, tile = (int64_t)ks->mr * ks->nr;
  int64_t xbytes = job->tx * ks->mr * ks->kc * es, ybytes = job->ty * ks->nr * ks->kc * es;
  char *xp[2], *yp[2];
  xp[0] = job->bufs + (size_t)slot * job->buf_bytes, yp[0] = xp[0] + xbytes;
  xp[1] = yp[0] + ybytes, yp[1] = xp[1] + xbytes;
  char *acc = yp[1] + ybytes;
  char *sums = acc + job->tx * job->ty * tile * ks->lanes * es;
  int64_t steps_max = ks->kc / ks->lanes, total = job->mx + job->ny;
  for (int b = 0; b < 2; b++) { /* the padding rows stay zero */
    ks->pack(xp[b], NULL, NULL, job->mx, job->tx * ks->mr - job->mx, ks->mr, 0, steps_max);
    ks->pack(yp[b], NULL, NULL, job->ny, job->ty * ks->nr - job->ny, ks->nr, 0, steps_max);
  }
  int64_t kbeg = lo * job->range_k, kend = min64(hi * job->range_k, job->k);
  int64_t calls = job->tx * job->ty, per_call = (total + calls - 1) / calls;
  pack_rows(job, xp[0], yp[0], kbeg, min64(ks->kc, kend - kbeg), 0, total);
  int cur = 0;
  for (int64_t k0 = kbeg; k0 < kend; k0 += ks->kc, cur ^= 1) {
    int64_t kc = min64(ks->kc, kend - k0), steps = (kc + ks->lanes - 1) / ks->lanes;
    int64_t kn = k0 + kc, kcn = min64(ks->kc, kend - kn), row = 0;
    bool first = k0 % job->range_k == 0;
    for (int64_t jt = 0; jt < job->ty; jt++)
      for (int64_t it = 0; it < job->tx; it++) {
        /* the next block's rows: one row per tile copied by the kernel itself where they
         * come one per tile in whole vectors, else packed after the tile */
        lt__kdot_side side = {NULL, 0, NULL, NULL, 0, 0};
        bool fused = per_call == 1 && kcn % ks->lanes == 0 && row < total;
        if (kcn > 0 && row + per_call < total)
          side.pf = row_of(job, row + per_call) + kn * es, side.pf_lines = (kcn * es + 63) / 64;
        if (fused) {
          bool in_x = row < job->mx;
          int64_t i = in_x ? row : row - job->mx, r = in_x ? ks->mr : ks->nr;
          side.src = row_of(job, row) + kn * es;
          side.dst = (in_x ? xp[cur ^ 1] : yp[cur ^ 1]) +
                     ((i / r) * steps_max * r + i % r) * ks->lanes * es;
          side.dst_stride = r * ks->lanes, side.vectors = kcn / ks->lanes;
        }
        ks->kernel(steps, xp[cur] + it * ks->mr * steps_max * ks->lanes * es,
                   yp[cur] + jt * ks->nr * steps_max * ks->lanes * es,
                   acc + (jt * job->tx + it) * tile * ks->lanes * es, first, &side);
        if (kcn > 0 && row < total) {
          if (!fused) pack_rows(job, xp[cur ^ 1], yp[cur ^ 1], kn, kcn, row, per_call);
          row += per_call;
        }
      }
    if (kn % job->range_k == 0 || kn == kend) finish_range(job, acc, sums, k0 / job->range_k);
  }
  atomic_fetch_and(&job->busy, ~(1u << slot));
}

bool lt__cpu_gemm_kdot(lt_context *ctx, const lt__gemm_step *s) {
  if (!lt__cpu_gemm_kdot_ok(ctx, s)) return false;
  const lt__gemm_kdot *ks = kernels_of(ctx, s->dtype);
  int64_t m = s->m, n = s->n, k = s->k, es = (int64_t)ks->esize;
  /* X = A's rows unless B's columns as X pad C to fewer tiles */
  bool swap = round_up(n, ks->mr) * round_up(m, ks->nr) < round_up(m, ks->mr) * round_up(n, ks->nr);
  int64_t range_k = round_up((k + KDOT_RANGES - 1) / KDOT_RANGES, ks->kc);
  if (range_k < KDOT_MIN_RANGE_BLOCKS * ks->kc) range_k = KDOT_MIN_RANGE_BLOCKS * ks->kc;
  int64_t ranges = (k + range_k - 1) / range_k;
  int threads = lt__cpu_threads(ctx);
  if (threads > 32) threads = 32;
  if (threads > ranges) threads = (int)ranges;
  kdot_job job = {.ks = ks, .k = k, .range_k = range_k, .ranges = ranges};
  job.mx = swap ? n : m, job.ny = swap ? m : n;
  job.tx = (job.mx + ks->mr - 1) / ks->mr, job.ty = (job.ny + ks->nr - 1) / ks->nr;
  job.buf_bytes = round_up((int64_t)buf_bytes(ks, job.tx, job.ty), 64);
  size_t part_bytes = (size_t)(ranges * m * n * es), got;
  size_t bytes = (size_t)threads * job.buf_bytes + part_bytes;
  char *mem = lt__cpu_scratch_take(ctx, bytes, &got);
  int64_t *off = malloc(sizeof(int64_t) * (size_t)(2 * (m + n)));
  if (!mem || !off) {
    lt__cpu_scratch_give(ctx, mem, got);
    free(off);
    return false;
  }
  int64_t oa, ob, oc;
  lt__cpu_gemm_batch_offsets(s, 0, &oa, &ob, &oc);
  int64_t *aoff = off, *boff = off + m, *croff = off + m + n, *ccoff = croff + m;
  lt__gemm_offsets(&s->a.rows, s->a.rs, 0, m, aoff);
  lt__gemm_offsets(&s->b.cols, s->b.cs, 0, n, boff);
  lt__gemm_offsets(&s->c.rows, s->c.rs, 0, m, croff);
  lt__gemm_offsets(&s->c.cols, s->c.cs, 0, n, ccoff);
  const char *a = (const char *)s->a.mem + oa * es, *b = (const char *)s->b.mem + ob * es;
  job.x = swap ? b : a, job.y = swap ? a : b;
  job.xoff = swap ? boff : aoff, job.yoff = swap ? aoff : boff;
  job.cxoff = swap ? ccoff : croff, job.cyoff = swap ? croff : ccoff;
  job.c = (char *)s->c.mem + oc * es;
  job.bufs = mem, job.slots = threads;
  job.partials = mem + (size_t)threads * job.buf_bytes;
  atomic_init(&job.busy, 0u);
  double flops = 2.0 * (double)m * (double)n * (double)k;
  lt__cpu_parallel_upto(ctx, threads, ranges, flops < 1e15 ? (int64_t)flops : (int64_t)1e15,
                        range_task, &job);
  lt__cpu_gemm_sum_partials(ctx, threads, ks->dtype, job.partials, ranges, job.mx, job.ny,
                            job.cxoff, job.cyoff, job.c, s->alpha, s->beta);
  lt__cpu_scratch_give(ctx, mem, got);
  free(off);
  return true;
}

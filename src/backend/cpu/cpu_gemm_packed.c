/* SPDX-License-Identifier: MIT */
/* The packed GEMM driver, in BLIS's loop order: for each nc-wide block of B columns and each
 * kc-deep slice of k, B's block is packed once (in parallel) and then every mc-tall block of A
 * is packed and multiplied against it, register tile by register tile. Packing reads any
 * strides, so transposed or strided operands cost one pass over the data, not a separate copy.
 *
 * Threads either share one GEMM (tasks are (A block, column range) pairs) or, for batches of
 * small GEMMs, take whole GEMMs each. All buffers are claimed before anything is written, so a
 * failed allocation leaves C untouched and the caller can fall back to OpenBLAS. */
#include "backend/cpu/cpu_gemm_packed.h"
#include "backend/cpu/cpu_gemm_pack.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

/* A batch is split across threads when it has at least this many GEMMs per thread, or when
 * each GEMM is below SPLIT_BATCH_MAX_FLOPS (too small to share well). */
#define SPLIT_BATCH_MIN_PER_THREAD 2
#define SPLIT_BATCH_MAX_FLOPS 1.0e8
/* Multiply tasks per thread when threads share one GEMM: enough to even out a slow core, and
 * short enough that a thread taking the last one late (a worker woken after an idle pause)
 * holds the others at the k block's end briefly. Each slot remembers the A block it holds, so
 * more tasks per A block repack nothing. */
#define TASKS_PER_THREAD 8
/* Below this many flops in a whole step, waking a second thread (tens of microseconds, once per
 * k block) costs more than it saves. */
#define SERIAL_MAX_FLOPS 8.0e6
#define MAX_SLOTS 32

/* One GEMM, oriented so that C's rows are its unit-stride direction whenever C has one. */
typedef struct gemm_problem {
  const lt__gemm_blocking *bk;
  int64_t m, n, k;
  const char *a, *b;
  char *c;
  int64_t rs_a, cs_a, rs_b, cs_b, rs_c, cs_c; /* in elements */
  /* Scattered row and column groups (n > 0) in place of the single strides above. */
  const lt__gemm_group *ra, *ca, *rb, *cb, *rc, *cc;
  double alpha, beta;
  lt__cpu_simd simd; /* tile transposes for packing */
  /* A and B of a 16-bit dtype (f16, bf16), converted while packing; src_es: their bytes. */
  bool src16, src_bf16;
  int64_t src_es;
  int64_t k0; /* first index along k of A and B (a k range of a k-split GEMM) */
  int64_t kc; /* depth of its k blocks (k_block) */
} gemm_problem;

/* Per-thread packing buffers, claimed by whichever thread runs a chunk of tasks. Jobs run on
 * at most `count` threads (lt__cpu_parallel_upto), so a free slot is always there. */
typedef struct gemm_slots {
  int count;
  atomic_uint busy;
  char *a_buf[MAX_SLOTS], *b_buf[MAX_SLOTS];
  size_t a_bytes[MAX_SLOTS], b_bytes[MAX_SLOTS];
  int64_t a_row[MAX_SLOTS]; /* first row of the A block packed in a_buf (shared GEMM), or -1 */
} gemm_slots;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
/* Panel elements along k for kc values of k (pairs of them in k-pair panels). */
static int64_t depth_of(const lt__gemm_blocking *bk, int64_t kc) {
  return bk->k_pairs ? (kc + 1) / 2 : kc;
}

/* Depth of the k blocks of a GEMM of depth k: k cut into equal blocks of at most bk->kc,
 * rounded up to a multiple of 8 (whole k pairs; every blocking's kc is one). With bk->kc-deep
 * blocks, k = 784 ran as 384 + 384 + 16: the last block paid a full C update and, shared
 * between threads, two meetings of the threads for 2% of the flops. Depends on k and the
 * blocking only (a k-split GEMM has the same bits on any number of threads). */
static int64_t k_block(const lt__gemm_blocking *bk, int64_t k) {
  int64_t blocks = (k + bk->kc - 1) / bk->kc;
  if (blocks <= 1) return bk->kc;
  int64_t kb = round_up((k + blocks - 1) / blocks, 8);
  return kb < bk->kc ? kb : bk->kc;
}

/* The problem of batch index b (row-major over batch_shape), transposed (C^T = B^T A^T) when C
 * is row-major, so that the micro-kernel's vector direction runs along C's unit stride, unless
 * the other orientation pads C to far fewer register tiles. */
static gemm_problem problem_of(const lt__gemm_step *s, const lt__gemm_blocking *bk,
                               lt__cpu_simd simd, int64_t b) {
  int64_t oa, ob, oc;
  lt__cpu_gemm_batch_offsets(s, b, &oa, &ob, &oc);
  int64_t es = (int64_t)lt_dtype_size(lt__gemm_ab_dtype(s)),
          es_c = (int64_t)lt_dtype_size(s->dtype);
  gemm_problem g = {.bk = bk,
                    .m = s->m,
                    .n = s->n,
                    .k = s->k,
                    .a = (const char *)s->a.mem + oa * es,
                    .b = (const char *)s->b.mem + ob * es,
                    .c = (char *)s->c.mem + oc * es_c,
                    .rs_a = s->a.rs,
                    .cs_a = s->a.cs,
                    .rs_b = s->b.rs,
                    .cs_b = s->b.cs,
                    .rs_c = s->c.rs,
                    .cs_c = s->c.cs,
                    .ra = &s->a.rows,
                    .ca = &s->a.cols,
                    .rb = &s->b.rows,
                    .cb = &s->b.cols,
                    .rc = &s->c.rows,
                    .cc = &s->c.cols,
                    .alpha = s->alpha,
                    .beta = s->beta,
                    .simd = simd,
                    .src16 = es == 2,
                    .src_bf16 = lt__gemm_ab_dtype(s) == LT_BF16,
                    .src_es = es,
                    .kc = k_block(bk, s->k)};
  /* A register tile is mr x nr (32 x 12 on AVX-512): a C of 10 columns and 128 rows, made
   * 10 x 128, pads 10 rows to 32 (3.3x the flops) where 128 x 10 pads 10 columns to 12. Such
   * a shape keeps the orientation with the smaller padded C even though its tiles are then
   * written element by element (a tenth of the kernel's time at k = 256), but only where that
   * halves the padded tiles: a 1.6M x 20 C (0.75x) ran 1.1x slower element by element. */
  bool swap = g.rs_c != 1 && g.cs_c == 1;
  int64_t keep = round_up(g.m, bk->mr) * round_up(g.n, bk->nr),
          swapped = round_up(g.n, bk->mr) * round_up(g.m, bk->nr);
  if (swap ? 2 * keep < swapped : 2 * swapped < keep) swap = !swap;
  if (swap) {
    gemm_problem t = g;
    t.m = g.n, t.n = g.m;
    t.a = g.b, t.rs_a = g.cs_b, t.cs_a = g.rs_b;
    t.b = g.a, t.rs_b = g.cs_a, t.cs_b = g.rs_a;
    t.rs_c = g.cs_c, t.cs_c = g.rs_c;
    t.ra = g.cb, t.ca = g.rb, t.rb = g.ca, t.cb = g.ra, t.rc = g.cc, t.cc = g.rc;
    g = t;
  }
  return g;
}

static const char *a_block(const gemm_problem *g, int64_t ic, int64_t pc) {
  return g->a + (ic * g->rs_a + pc * g->cs_a) * g->src_es;
}

static const char *b_block(const gemm_problem *g, int64_t pc, int64_t jc) {
  return g->b + (pc * g->rs_b + jc * g->cs_b) * g->src_es;
}

/* Largest blocks of any blocking (rows of an A block, depth, columns of a B block): the
 * scattered paths keep their offsets on the stack. */
#define MAX_MC 256
#define MAX_KC 1024
#define MAX_NC 3072

/* Rows per A block for k blocks kc deep: as many as fill the blocking's full-depth A block
 * (mc x kc of the blocking), so that a shallow GEMM takes taller blocks (up to MAX_MC) rather
 * than more of them. */
static int64_t a_block_rows(const lt__gemm_blocking *bk, int64_t kc) {
  int64_t rows = bk->mc * bk->kc / (kc > 0 ? kc : 1) / bk->mr * bk->mr;
  return rows < bk->mr ? bk->mr : rows > MAX_MC ? MAX_MC / bk->mr * bk->mr : rows;
}

static bool scattered(const lt__gemm_group *r, const lt__gemm_group *c) { return r->n || c->n; }

/* A 16-bit source goes through offset lists whatever its layout: the converting packers
 * (bk->pack16) find the unit-stride direction in them. */
static void pack16(const gemm_problem *g, char *buf, const char *base, const lt__gemm_group *gr,
                   int64_t s_row, int64_t r0, int64_t rows, const lt__gemm_group *gk, int64_t s_k,
                   int64_t pc, int64_t kc, int r) {
  int64_t roff[MAX_NC], koff[MAX_KC];
  lt__gemm_offsets(gr, s_row, r0, rows, roff);
  lt__gemm_offsets(gk, s_k, pc, kc, koff);
  lt__gemm_pack16_fn fn = g->bk->pack16 ? g->bk->pack16 : lt__gemm_pack16_portable;
  fn(buf, (const uint16_t *)base, g->src_bf16, roff, rows, koff, kc, r, g->bk->k_pairs);
}

/* Step between consecutive offsets when all n of them step evenly, else 0. */
static int64_t even_step(const int64_t *off, int n) {
  if (n < 2) return 1;
  int64_t step = off[1] - off[0];
  for (int i = 2; i < n; i++)
    if (off[i] - off[i - 1] != step) return 0;
  return step;
}

/* multiply_block for a scattered C: a tile whose rows and columns each step evenly (most of
 * them: a tile crosses a mode boundary only at the group's innermost extent) is written by the
 * micro-kernel in place; any other goes through a tile buffer and an element-wise update. */
static void multiply_block_scattered(const gemm_problem *g, const char *a_buf, const char *b_buf,
                                     int64_t ic, int64_t mc, int64_t jc, int64_t j0, int64_t j1,
                                     int64_t kc, double beta) {
  const lt__gemm_blocking *bk = g->bk;
  int64_t es = (int64_t)bk->esize, es_c = (int64_t)lt_dtype_size(bk->dtype), kd = depth_of(bk, kc);
  int64_t roff[MAX_MC], coff[MAX_NC];
  _Alignas(64) char tile[32 * 12 * 8]; /* the largest register tile */
  lt__gemm_offsets(g->rc, g->rs_c, ic, mc, roff);
  lt__gemm_offsets(g->cc, g->cs_c, jc + j0, j1 - j0, coff);
  for (int64_t jr = j0; jr < j1; jr += bk->nr)
    for (int64_t ir = 0; ir < mc; ir += bk->mr) {
      int m = (int)min64(bk->mr, mc - ir), n = (int)min64(bk->nr, j1 - jr);
      const int64_t *ro = roff + ir, *co = coff + (jr - j0);
      int64_t rs = even_step(ro, m), cs = even_step(co, n);
      const char *ap = a_buf + ir * kd * es, *bp = b_buf + jr * kd * es;
      if (rs != 0 && cs != 0) {
        bk->kernel(kd, ap, bp, g->c + (ro[0] + co[0]) * es_c, rs, cs, g->alpha, beta, m, n);
      } else {
        bk->kernel(kd, ap, bp, tile, 1, bk->mr, 1.0, 0.0, bk->mr, bk->nr);
        lt__gemm_scatter_update(g->c, ro, co, tile, bk->mr, m, n, g->alpha, beta, (size_t)es_c);
      }
    }
}

static void pack_a(const gemm_problem *g, char *buf, int64_t ic, int64_t mc, int64_t pc,
                   int64_t kc) {
  pc += g->k0;
  if (g->src16) {
    pack16(g, buf, g->a, g->ra, g->rs_a, ic, mc, g->ca, g->cs_a, pc, kc, g->bk->mr);
    return;
  }
  if (scattered(g->ra, g->ca)) {
    int64_t roff[MAX_MC], koff[MAX_KC];
    lt__gemm_offsets(g->ra, g->rs_a, ic, mc, roff);
    lt__gemm_offsets(g->ca, g->cs_a, pc, kc, koff);
    lt__gemm_pack_runs(buf, g->a, roff, mc, koff, kc, g->bk->mr, g->bk->esize, g->simd);
    return;
  }
  lt__gemm_pack(buf, a_block(g, ic, pc), g->rs_a, g->cs_a, mc, kc, g->bk->mr, g->bk->esize,
                g->simd);
}

/* Packs columns [j0, j0 + nj) of B's (pc, jc) block; j0 is a multiple of NR. */
static void pack_b(const gemm_problem *g, char *buf, int64_t pc, int64_t kc, int64_t jc, int64_t j0,
                   int64_t nj) {
  pc += g->k0;
  if (g->src16) {
    pack16(g, buf + j0 * depth_of(g->bk, kc) * (int64_t)g->bk->esize, g->b, g->cb, g->cs_b, jc + j0,
           nj, g->rb, g->rs_b, pc, kc, g->bk->nr);
    return;
  }
  if (scattered(g->rb, g->cb)) {
    int64_t noff[MAX_NC], koff[MAX_KC];
    lt__gemm_offsets(g->cb, g->cs_b, jc + j0, nj, noff);
    lt__gemm_offsets(g->rb, g->rs_b, pc, kc, koff);
    lt__gemm_pack_runs(buf + j0 * kc * (int64_t)g->bk->esize, g->b, noff, nj, koff, kc, g->bk->nr,
                       g->bk->esize, g->simd);
    return;
  }
  lt__gemm_pack(buf + j0 * kc * (int64_t)g->bk->esize, b_block(g, pc, jc + j0), g->cs_b, g->rs_b,
                nj, kc, g->bk->nr, g->bk->esize, g->simd);
}

/* C block (ic.., jc + j0..jc + j1) += packed A block x packed B columns [j0, j1). */
static void multiply_block(const gemm_problem *g, const char *a_buf, const char *b_buf, int64_t ic,
                           int64_t mc, int64_t jc, int64_t j0, int64_t j1, int64_t kc,
                           double beta) {
  const lt__gemm_blocking *bk = g->bk;
  int64_t es = (int64_t)bk->esize, es_c = (int64_t)lt_dtype_size(bk->dtype), kd = depth_of(bk, kc);
  if (scattered(g->rc, g->cc)) {
    multiply_block_scattered(g, a_buf, b_buf, ic, mc, jc, j0, j1, kc, beta);
    return;
  }
  for (int64_t jr = j0; jr < j1; jr += bk->nr)
    for (int64_t ir = 0; ir < mc; ir += bk->mr) {
      char *c = g->c + ((ic + ir) * g->rs_c + (jc + jr) * g->cs_c) * es_c;
      bk->kernel(kd, a_buf + ir * kd * es, b_buf + jr * kd * es, c, g->rs_c, g->cs_c, g->alpha,
                 beta, (int)min64(bk->mr, mc - ir), (int)min64(bk->nr, j1 - jr));
    }
}

/* The k loop runs once even when k == 0, so that C still becomes beta * C. */
#define FOR_K_BLOCKS(g, pc, kc)                                                                    \
  for (int64_t pc = 0, kc = min64((g)->k, (g)->kc); pc == 0 || pc < (g)->k;                        \
       pc += (g)->kc, kc = min64((g)->k - pc, (g)->kc))

static void gemm_serial(const gemm_problem *g, char *a_buf, char *b_buf) {
  const lt__gemm_blocking *bk = g->bk;
  for (int64_t jc = 0; jc < g->n; jc += bk->nc) {
    int64_t nc = min64(g->n - jc, bk->nc);
    FOR_K_BLOCKS(g, pc, kc) {
      double beta = pc == 0 ? g->beta : 1.0;
      pack_b(g, b_buf, pc, kc, jc, 0, nc);
      int64_t rows = a_block_rows(bk, g->kc);
      for (int64_t ic = 0; ic < g->m; ic += rows) {
        int64_t mc = min64(g->m - ic, rows);
        pack_a(g, a_buf, ic, mc, pc, kc);
        multiply_block(g, a_buf, b_buf, ic, mc, jc, 0, nc, kc, beta);
      }
    }
  }
}

static int claim_slot(gemm_slots *slots) {
  for (;;)
    for (int i = 0; i < slots->count; i++) {
      unsigned busy = atomic_load(&slots->busy);
      if (!(busy & (1u << i)) && atomic_compare_exchange_weak(&slots->busy, &busy, busy | 1u << i))
        return i;
    }
}

static void release_slot(gemm_slots *slots, int i) { atomic_fetch_and(&slots->busy, ~(1u << i)); }

/* Threads sharing one GEMM: the state of one (jc, pc) step, run as one job whose first
 * `panels` tasks pack B's block (one NR panel each) and whose others multiply (A block, column
 * range) pairs against it. One job rather than a packing job and a multiplying job halves the
 * points per k block where every thread waits for the slowest; a multiply task waits only for
 * the packing tasks still running on other threads (the pool hands tasks out in order, so a
 * thread reaching a multiply task has finished its own packing ones, and packing waits for
 * nothing: no cycle). */
typedef struct shared_step {
  const gemm_problem *g;
  gemm_slots *slots;
  char *b_buf;
  int64_t jc, nc, pc, kc;
  double beta;
  int64_t mc;                        /* rows per A block (a multiple of MR, a_block_rows at most) */
  int64_t n_col_ranges, range_width; /* multiply tasks are (A block, column range) pairs */
  int64_t panels;                    /* packing tasks */
  atomic_llong packed;               /* packing tasks finished */
} shared_step;

static void pack_b_panels(shared_step *st, int64_t lo, int64_t hi) {
  int64_t nr = st->g->bk->nr;
  int64_t j0 = lo * nr, j1 = min64(hi * nr, st->nc);
  pack_b(st->g, st->b_buf, st->pc, st->kc, st->jc, j0, j1 - j0);
  atomic_fetch_add_explicit(&st->packed, (long long)(hi - lo), memory_order_release);
}

static void multiply_tasks(const shared_step *st, int64_t lo, int64_t hi) {
  const gemm_problem *g = st->g;
  int slot = claim_slot(st->slots);
  char *a_buf = st->slots->a_buf[slot];
  int64_t *packed_ic = &st->slots->a_row[slot];
  for (int64_t t = lo; t < hi; t++) {
    int64_t ic = t / st->n_col_ranges * st->mc, mc = min64(g->m - ic, st->mc);
    int64_t j0 = t % st->n_col_ranges * st->range_width;
    int64_t j1 = min64(j0 + st->range_width, st->nc);
    if (j0 >= j1) continue;
    if (ic != *packed_ic) pack_a(g, a_buf, ic, mc, st->pc, st->kc), *packed_ic = ic;
    multiply_block(g, a_buf, st->b_buf, ic, mc, st->jc, j0, j1, st->kc, st->beta);
  }
  release_slot(st->slots, slot);
}

static void step_task(void *arg, int64_t lo, int64_t hi) {
  shared_step *st = arg;
  if (lo < st->panels) {
    int64_t end = min64(hi, st->panels);
    pack_b_panels(st, lo, end);
    lo = end;
  }
  if (lo >= hi) return;
  while (atomic_load_explicit(&st->packed, memory_order_acquire) < st->panels)
    sched_yield();
  multiply_tasks(st, lo - st->panels, hi - st->panels);
}

static int64_t work_of(double flops) { return flops < 1e15 ? (int64_t)flops : (int64_t)1e15; }

/* Splits `units` into `parts` near-equal runs: units per run (the last may be shorter). */
static int64_t even_split(int64_t units, int64_t parts) {
  if (parts > units) parts = units;
  return parts > 0 ? (units + parts - 1) / parts : units;
}

/* Threads meet at the end of every k block, so the tasks of one block are cut in equal sizes
 * and in a multiple of the thread count: with 7 blocks of A on 2 threads, one thread would
 * otherwise idle for a seventh of the time. */
static void gemm_shared(lt_context *ctx, const gemm_problem *g, gemm_slots *slots, char *b_buf,
                        int threads) {
  const lt__gemm_blocking *bk = g->bk;
  int64_t panels_m = (g->m + bk->mr - 1) / bk->mr, max_per_block = a_block_rows(bk, g->kc) / bk->mr;
  int64_t n_blocks_a = round_up((panels_m + max_per_block - 1) / max_per_block, threads);
  int64_t mc = even_split(panels_m, n_blocks_a) * bk->mr;
  n_blocks_a = (g->m + mc - 1) / mc;
  for (int64_t jc = 0; jc < g->n; jc += bk->nc) {
    int64_t nc = min64(g->n - jc, bk->nc);
    int64_t panels = (nc + bk->nr - 1) / bk->nr;
    int64_t ranges = ((int64_t)threads * TASKS_PER_THREAD + n_blocks_a - 1) / n_blocks_a;
    while (ranges < panels && n_blocks_a * ranges % threads != 0)
      ranges++;
    int64_t width = even_split(panels, ranges) * bk->nr;
    ranges = (nc + width - 1) / width;
    FOR_K_BLOCKS(g, pc, kc) {
      shared_step st = {.g = g,
                        .slots = slots,
                        .b_buf = b_buf,
                        .jc = jc,
                        .nc = nc,
                        .pc = pc,
                        .kc = kc,
                        .beta = pc == 0 ? g->beta : 1.0,
                        .mc = mc,
                        .n_col_ranges = ranges,
                        .range_width = width,
                        .panels = panels};
      atomic_init(&st.packed, 0);
      for (int i = 0; i < slots->count; i++)
        slots->a_row[i] = -1;
      double flops = 2.0 * (double)g->m * (double)nc * (double)kc;
      lt__cpu_parallel_upto(ctx, threads, panels + n_blocks_a * ranges,
                            work_of(flops + (double)(kc * nc)), step_task, &st);
    }
  }
}

/* Threads taking whole GEMMs of a batch. */
typedef struct batch_job {
  const lt__gemm_step *step;
  const lt__gemm_blocking *bk;
  lt__cpu_simd simd;
  gemm_slots *slots;
} batch_job;

static void batch_task(void *arg, int64_t lo, int64_t hi) {
  const batch_job *job = arg;
  int slot = claim_slot(job->slots);
  for (int64_t b = lo; b < hi; b++) {
    gemm_problem g = problem_of(job->step, job->bk, job->simd, b);
    gemm_serial(&g, job->slots->a_buf[slot], job->slots->b_buf[slot]);
  }
  release_slot(job->slots, slot);
}

static void slots_free(lt_context *ctx, gemm_slots *slots) {
  for (int i = 0; i < slots->count; i++) {
    lt__cpu_scratch_give(ctx, slots->a_buf[i], slots->a_bytes[i]);
    lt__cpu_scratch_give(ctx, slots->b_buf[i], slots->b_bytes[i]);
  }
}

/* `count` slots, each with an A block buffer and (if b_bytes) a B block buffer. */
static bool slots_take(lt_context *ctx, gemm_slots *slots, int count, size_t a_bytes,
                       size_t b_bytes) {
  slots->count = 0;
  atomic_init(&slots->busy, 0u);
  for (int i = 0; i < count; i++) {
    slots->a_buf[i] = lt__cpu_scratch_take(ctx, a_bytes, &slots->a_bytes[i]);
    slots->b_buf[i] = b_bytes ? lt__cpu_scratch_take(ctx, b_bytes, &slots->b_bytes[i]) : NULL;
    if (!b_bytes) slots->b_bytes[i] = 0;
    slots->count++;
    if (!slots->a_buf[i] || (b_bytes && !slots->b_buf[i])) {
      slots_free(ctx, slots);
      return false;
    }
  }
  return true;
}

/* k-split: a GEMM whose C is small beside a long k (the weight gradient of a contraction over a
 * large batch: 48 x 64 with k = 49152, where k is not the unit stride of both operands, else the
 * k-dot engine takes it) gives threads sharing it only a few tiles per k block, and
 * they meet twice per k block, so the barriers cost more than the work. Instead k is cut into
 * ranges, each multiplied whole (gemm_serial) into a private partial C, and the partials are
 * summed in range order, then alpha and beta applied once. Whether to split and where depends
 * only on the shape and the blocking, never on the thread count, so C has the same bits on any
 * number of threads. */
#define KSPLIT_MAX_MN (128 * 128) /* C elements at most */
#define KSPLIT_RANGES 16          /* ranges at most: threads beyond it idle */
#define KSPLIT_MIN_BLOCKS 2       /* k blocks per range at least */

typedef struct ksplit_job {
  const gemm_problem *g;
  gemm_slots *slots;
  char *partials; /* range r's m x n partial, column-major, at r * m * n elements */
  int64_t range_k, ranges;
} ksplit_job;

/* Values of k per range, or 0 when the step is not split. */
static int64_t ksplit_range_k(const gemm_problem *g, int64_t nb) {
  int64_t kc = g->bk->kc;
  if (nb != 1 || g->m * g->n > KSPLIT_MAX_MN || g->k < 2 * KSPLIT_MIN_BLOCKS * kc ||
      2.0 * (double)g->m * (double)g->n * (double)g->k < SERIAL_MAX_FLOPS)
    return 0;
  int64_t range_k = round_up((g->k + KSPLIT_RANGES - 1) / KSPLIT_RANGES, kc);
  return range_k < KSPLIT_MIN_BLOCKS * kc ? KSPLIT_MIN_BLOCKS * kc : range_k;
}

static void ksplit_task(void *arg, int64_t lo, int64_t hi) {
  const ksplit_job *job = arg;
  static const lt__gemm_group dense = {0};
  int slot = claim_slot(job->slots);
  for (int64_t r = lo; r < hi; r++) {
    gemm_problem p = *job->g;
    p.k0 = r * job->range_k;
    p.k = min64(job->range_k, job->g->k - p.k0);
    p.kc = k_block(p.bk, p.k);
    p.c = job->partials + r * p.m * p.n * (int64_t)lt_dtype_size(p.bk->dtype);
    p.rs_c = 1, p.cs_c = p.m, p.rc = p.cc = &dense;
    p.alpha = 1.0, p.beta = 0.0;
    gemm_serial(&p, job->slots->a_buf[slot], job->slots->b_buf[slot]);
  }
  release_slot(job->slots, slot);
}

/* Runs g k-split on up to `threads` threads; false, with C untouched, when out of memory. */
static bool gemm_ksplit(lt_context *ctx, const gemm_problem *g, int64_t range_k, int threads,
                        size_t a_bytes, size_t b_bytes) {
  int64_t ranges = (g->k + range_k - 1) / range_k;
  if (threads > ranges) threads = (int)ranges;
  size_t p_bytes = (size_t)(ranges * g->m * g->n) * lt_dtype_size(g->bk->dtype), p_got = 0;
  char *partials = lt__cpu_scratch_take(ctx, p_bytes, &p_got);
  int64_t *off = malloc(sizeof(int64_t) * (size_t)(g->m + g->n));
  gemm_slots slots;
  if (!partials || !off || !slots_take(ctx, &slots, threads, a_bytes, b_bytes)) {
    lt__cpu_scratch_give(ctx, partials, p_got);
    free(off);
    return false;
  }
  lt__gemm_offsets(g->rc, g->rs_c, 0, g->m, off);
  lt__gemm_offsets(g->cc, g->cs_c, 0, g->n, off + g->m);
  ksplit_job job = {g, &slots, partials, range_k, ranges};
  double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
  lt__cpu_parallel_upto(ctx, threads, ranges, work_of(flops), ksplit_task, &job);
  lt__cpu_gemm_sum_partials(ctx, threads, g->bk->dtype, partials, ranges, g->m, g->n, off,
                            off + g->m, g->c, g->alpha, g->beta);
  slots_free(ctx, &slots);
  lt__cpu_scratch_give(ctx, partials, p_got);
  free(off);
  return true;
}

bool lt__cpu_gemm_packed(lt_context *ctx, const lt__gemm_step *s, const lt__gemm_blocking *bk) {
  int64_t nb = lt__cpu_gemm_batch_count(s);
  if (nb == 0 || s->m == 0 || s->n == 0) return true;
  lt__cpu_simd simd = lt__cpu_isa_of(ctx)->simd;
  gemm_problem g0 = problem_of(s, bk, simd, 0);
  int64_t kc = depth_of(bk, min64(s->k > 0 ? s->k : 1, bk->kc));
  size_t a_bytes = (size_t)(round_up(min64(g0.m, MAX_MC), bk->mr) * kc) * bk->esize;
  size_t b_bytes = (size_t)(round_up(min64(g0.n, bk->nc), bk->nr) * kc) * bk->esize;
  double flops = 2.0 * (double)s->m * (double)s->n * (double)(s->k > 0 ? s->k : 1);
  int threads = lt__cpu_threads(ctx);
  if (threads > MAX_SLOTS) threads = MAX_SLOTS;
  if (flops * (double)nb < SERIAL_MAX_FLOPS) threads = 1;
  int64_t range_k = ksplit_range_k(&g0, nb);
  if (range_k > 0) return gemm_ksplit(ctx, &g0, range_k, threads, a_bytes, b_bytes);
  gemm_slots slots;
  bool split =
      threads > 1 && nb >= threads &&
      (nb >= (int64_t)threads * SPLIT_BATCH_MIN_PER_THREAD || flops < SPLIT_BATCH_MAX_FLOPS);
  if (threads == 1 || split) {
    if (!slots_take(ctx, &slots, threads, a_bytes, b_bytes)) return false;
    batch_job job = {s, bk, simd, &slots};
    lt__cpu_parallel_upto(ctx, threads, nb, work_of(flops * (double)nb), batch_task, &job);
    slots_free(ctx, &slots);
    return true;
  }
  size_t shared_bytes;
  char *b_buf = lt__cpu_scratch_take(ctx, b_bytes, &shared_bytes);
  if (!b_buf) return false;
  if (!slots_take(ctx, &slots, threads, a_bytes, 0)) {
    lt__cpu_scratch_give(ctx, b_buf, shared_bytes);
    return false;
  }
  for (int64_t b = 0; b < nb; b++) {
    gemm_problem g = problem_of(s, bk, simd, b);
    gemm_shared(ctx, &g, &slots, b_buf, threads);
  }
  slots_free(ctx, &slots);
  lt__cpu_scratch_give(ctx, b_buf, shared_bytes);
  return true;
}

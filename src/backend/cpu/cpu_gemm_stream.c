/* SPDX-License-Identifier: MIT */
/* The streaming GEMM driver (cpu_gemm_stream.h): B, at most LT__CAPS_SMALL_K deep, is packed
 * once per block of up to STREAM_B_BYTES (so it stays in L2 for every row of C); threads then
 * take chunks of C's rows along its unit stride, pack that chunk of A (a few KiB, in L1) and
 * sweep it across B, writing each C tile once in place. There is no k blocking (k is small)
 * and no C block buffer: C's traffic, the bound at small k, is one write per element. */
#include "backend/cpu/cpu_gemm_stream.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_gemm_pack.h"
#include "core/object.h"

#include <string.h>

/* Rows of C per task (a multiple of every kernel's MR): its packed A chunk (at most
 * STREAM_CHUNK x LT__CAPS_SMALL_K doubles, 32 KiB) and offsets live on the task's stack. */
#define STREAM_CHUNK 128
/* Packed B per block: held in L2 while every chunk of A sweeps across it. */
#define STREAM_B_BYTES (1u << 20)
/* C larger than this is stored past the caches (when beta == 0): it would only evict A and B. */
#define STREAM_NT_BYTES (32u << 20)
/* Batched steps take the engine only when each GEMM's C has at least this many elements:
 * B is packed per GEMM, serially. */
#define STREAM_MIN_BATCH_ELEMS 16384
/* The least extent along C's unit stride the engine takes (two chunks). */
#define STREAM_MIN_UNIT_EXTENT (2 * STREAM_CHUNK)

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

bool lt__cpu_gemm_stream_ok(lt_context *ctx, const lt__gemm_step *s) {
  if (s->k < 1 || s->k > LT__CAPS_SMALL_K || s->m < 1 || s->n < 1) return false;
  if (lt__gemm_ab_dtype(s) != s->dtype) return false; /* 16-bit A and B: packed engines only */
  if (!kernels_of(ctx, s->dtype)) return false;
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
  if (!rows_unit(g.rs_c, g.rc, g.m)) {
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
    int64_t koff[LT__CAPS_SMALL_K];
    lt__gemm_offsets(rows, s_row, first, count, roff_buf);
    lt__gemm_offsets(ks, s_k, 0, k, koff);
    lt__gemm_pack_scattered(dst, x, roff_buf, count, koff, k, r, es);
    return;
  }
  lt__gemm_pack(dst, x + first * s_row * (int64_t)es, s_row, s_k, count, k, r, es, simd);
}

/* A block of B's columns, packed, with its C column offsets. */
typedef struct stream_block {
  const stream_gemm *g;
  const char *b_pack;
  const int64_t *coff;
  int64_t n;
  bool nt;
} stream_block;

/* Whether rows [i, i + lanes) of a tile are all there and consecutive in C. */
static bool whole_vector(const int64_t *roff, int64_t i, int64_t rows, int lanes) {
  if (i + lanes > rows) return false;
  for (int l = 1; l < lanes; l++)
    if (roff[i + l] != roff[i] + l) return false;
  return true;
}

static void chunk_task(void *arg, int64_t lo, int64_t hi) {
  const stream_block *bl = arg;
  const stream_gemm *g = bl->g;
  const lt__gemm_stream *ks = g->ks;
  _Alignas(64) char a_pack[STREAM_CHUNK * LT__CAPS_SMALL_K * sizeof(double)];
  int64_t roff[STREAM_CHUNK], scratch[STREAM_CHUNK];
  int64_t es = (int64_t)ks->esize;
  for (int64_t t = lo; t < hi; t++) {
    int64_t i0 = t * STREAM_CHUNK, rows = min64(g->m - i0, STREAM_CHUNK);
    pack_rows(a_pack, g->a, g->rs_a, g->ra, g->cs_a, g->ca, i0, rows, g->k, ks->mr, ks->esize,
              g->simd, scratch);
    lt__gemm_offsets(g->rc, g->rs_c, i0, rows, roff);
    unsigned flags[STREAM_CHUNK / 8];
    for (int64_t ir = 0, q = 0; ir < rows; ir += ks->mr, q++)
      flags[q] = (whole_vector(roff, ir, rows, ks->lanes) ? LT__STREAM_HALF0 : 0u) |
                 (whole_vector(roff, ir + ks->lanes, rows, ks->lanes) ? LT__STREAM_HALF1 : 0u) |
                 (bl->nt ? LT__STREAM_NT : 0u);
    for (int64_t jr = 0; jr < bl->n; jr += ks->nr) {
      int n = (int)min64(ks->nr, bl->n - jr);
      for (int64_t ir = 0, q = 0; ir < rows; ir += ks->mr, q++)
        ks->kernel(g->k, a_pack + ir * g->k * es, bl->b_pack + jr * g->k * es, g->c, roff + ir,
                   bl->coff + jr, (int)min64(ks->mr, rows - ir), n, g->alpha, g->beta, flags[q]);
    }
  }
  if (bl->nt) ks->fence();
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
  size_t pack_bytes = (size_t)(nc * g0.k * es), off_bytes = (size_t)nc * sizeof(int64_t), got;
  char *mem = lt__cpu_scratch_take(ctx, pack_bytes + 2 * off_bytes, &got);
  if (mem == NULL) return false;
  int64_t *coff = (int64_t *)(mem + pack_bytes), *noff = coff + nc;
  bool nt = s->beta == 0 && (double)s->m * (double)s->n * (double)(es * nb) > STREAM_NT_BYTES;
  for (int64_t b = 0; b < nb; b++) {
    stream_gemm g = gemm_of(s, ks, simd, b);
    for (int64_t jc = 0; jc < g.n; jc += nc) {
      int64_t bn = min64(nc, g.n - jc);
      pack_rows(mem, g.b, g.cs_b, g.cb, g.rs_b, g.rb, jc, bn, g.k, ks->nr, ks->esize, simd, noff);
      lt__gemm_offsets(g.cc, g.cs_c, jc, bn, coff);
      stream_block bl = {&g, mem, coff, bn, nt};
      lt__cpu_parallel(ctx, (g.m + STREAM_CHUNK - 1) / STREAM_CHUNK, g.m * bn, chunk_task, &bl);
    }
  }
  lt__cpu_scratch_give(ctx, mem, got);
  return true;
}

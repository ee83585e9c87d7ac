/* SPDX-License-Identifier: MIT */
/* GEMM steps whose C is f16 or bf16 (c_dtype) under f32 compute. The engines write f32, so each
 * GEMM of the step runs into an f32 block of scratch and is rounded into C once, while the block
 * is still in the caches. A batch whose GEMMs' C fits in L2 is split across threads by whole
 * GEMMs, each thread with a block of its own; otherwise each GEMM in turn runs on all threads and
 * its block is rounded by rows in parallel. (The lowering used to put the whole f32 result in
 * workspace and round it in a separate pass: a round trip through memory that took ~20% of a
 * batched 64 x 256^3 bf16 product.) Results are those of the f32 engine rounded once, as
 * before. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_isa.h"
#include "core/error.h"
#include "core/object.h"

#include <stdatomic.h>

/* The largest f32 block of one GEMM's C that a thread keeps to itself (it stays in L2). */
#define SPLIT_MAX_BYTES ((size_t)512 * 1024)
#define MAX_BLOCKS 32

typedef struct store16_job {
  lt_context *ctx;
  const lt__gemm_step *s;
  int engine;
  const lt__cpu_kernels *kern;
  bool col_major; /* C's unit stride is down its columns: the block is column-major too */
  float *block[MAX_BLOCKS];
  atomic_uint busy;   /* blocks in use, one bit each */
  atomic_bool failed; /* a GEMM of batch_task's found no memory for its packing buffers */
} store16_job;

/* Row (or, column-major, column) r of GEMM b's C: its offset and element stride in C, and its
 * length. */
static void c_line(const store16_job *job, int64_t oc, int64_t r, int64_t *off, int64_t *stride,
                   int64_t *len) {
  const lt__gemm_step *s = job->s;
  *off = oc + r * (job->col_major ? s->c.cs : s->c.rs);
  *stride = job->col_major ? s->c.rs : s->c.cs;
  *len = job->col_major ? s->m : s->n;
}

/* Lines [lo, hi) of GEMM b: C's 16-bit values widened into the block (`load`), or the block
 * rounded into C. */
static void move_lines(const store16_job *job, int64_t oc, float *block, int64_t lo, int64_t hi,
                       bool load) {
  const lt__gemm_step *s = job->s;
  lt_dtype cd = lt__gemm_c_dtype(s);
  for (int64_t r = lo; r < hi; r++) {
    int64_t off, stride, len;
    c_line(job, oc, r, &off, &stride, &len);
    if (load)
      job->kern->load(block + r * len, s->c.mem, cd, off, stride, len);
    else
      job->kern->store(s->c.mem, cd, off, stride, block + r * len, len);
  }
}

/* GEMM b of the step as a single f32 GEMM into `block` (dense, C's orientation). */
static lt__gemm_step sub_step(const store16_job *job, int64_t b, float *block, int64_t *oc) {
  const lt__gemm_step *s = job->s;
  lt__gemm_step t = *s;
  int64_t oa, ob;
  lt__cpu_gemm_batch_offsets(s, b, &oa, &ob, oc);
  t.c_dtype = LT_DTYPE_INVALID;
  t.batch_rank = 0;
  t.a.offset = oa, t.b.offset = ob;
  t.c.mem = block, t.c.offset = 0;
  t.c.rows.n = t.c.cols.n = 0;
  t.c.rs = job->col_major ? 1 : s->n;
  t.c.cs = job->col_major ? s->m : 1;
  return t;
}

static int64_t lines_of(const store16_job *job) { return job->col_major ? job->s->n : job->s->m; }

/* Whole GEMMs [lo, hi), on a block claimed for this call (at most one call per thread runs at
 * a time, so MAX_BLOCKS >= threads blocks always leave one free). A GEMM inside a pool job
 * runs on the calling thread. */
static void batch_task(void *arg, int64_t lo, int64_t hi) {
  store16_job *job = arg;
  unsigned busy = atomic_load(&job->busy), i;
  for (;;) {
    i = (unsigned)__builtin_ctz(~busy);
    if (atomic_compare_exchange_weak(&job->busy, &busy, busy | 1u << i)) break;
  }
  lt__cpu_serial_enter();
  for (int64_t b = lo; b < hi && !atomic_load(&job->failed); b++) {
    int64_t oc;
    lt__gemm_step t = sub_step(job, b, job->block[i], &oc);
    if (job->s->beta != 0) move_lines(job, oc, job->block[i], 0, lines_of(job), true);
    if (lt__cpu_gemm_run(job->ctx, &t, job->engine) != LT_OK) {
      atomic_store(&job->failed, true);
      break;
    }
    move_lines(job, oc, job->block[i], 0, lines_of(job), false);
  }
  lt__cpu_serial_leave();
  atomic_fetch_and(&job->busy, ~(1u << i));
}

typedef struct lines_job {
  const store16_job *job;
  int64_t oc;
  bool load;
} lines_job;

static void lines_task(void *arg, int64_t lo, int64_t hi) {
  const lines_job *lj = arg;
  move_lines(lj->job, lj->oc, lj->job->block[0], lo, hi, lj->load);
}

bool lt__cpu_gemm_stores_16bit(lt_context *ctx) {
  (void)ctx;
  return true;
}

lt_status lt__cpu_gemm_store16(lt_context *ctx, const lt__gemm_step *s, int engine) {
  int64_t nb = lt__cpu_gemm_batch_count(s);
  store16_job job = {.ctx = ctx,
                     .s = s,
                     .engine = engine,
                     .kern = lt__cpu_isa_of(ctx)->kernels(LT_F32),
                     .col_major = s->c.cs != 1};
  atomic_init(&job.busy, 0u);
  atomic_init(&job.failed, false);
  size_t bytes = (size_t)s->m * (size_t)s->n * sizeof(float), got[MAX_BLOCKS];
  int threads = lt__cpu_threads(ctx);
  if (threads > MAX_BLOCKS) threads = MAX_BLOCKS;
  bool split = threads > 1 && nb >= 2 * (int64_t)threads && bytes <= SPLIT_MAX_BYTES;
  int blocks = split ? threads : 1;
  for (int i = 0; i < blocks; i++) {
    job.block[i] = lt__cpu_scratch_take(ctx, bytes, &got[i]);
    if (job.block[i] == NULL) {
      while (i-- > 0)
        lt__cpu_scratch_give(ctx, job.block[i], got[i]);
      return lt__error(LT_ERR_OUT_OF_MEMORY, "gemm: out of memory for a %lld x %lld f32 block of C",
                       (long long)s->m, (long long)s->n);
    }
  }
  lt_status st = LT_OK;
  if (split) {
    double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)nb;
    lt__cpu_parallel_upto(ctx, threads, nb, flops < 1e18 ? (int64_t)flops : (int64_t)1e18,
                          batch_task, &job);
    if (atomic_load(&job.failed))
      st = lt__error(LT_ERR_OUT_OF_MEMORY, "gemm: out of memory for packing buffers");
  } else {
    for (int64_t b = 0; b < nb && st == LT_OK; b++) {
      int64_t oc;
      lt__gemm_step t = sub_step(&job, b, job.block[0], &oc);
      lines_job lj = {&job, oc, true};
      int64_t work = s->m * s->n * 8;
      if (s->beta != 0) lt__cpu_parallel(ctx, lines_of(&job), work, lines_task, &lj);
      st = lt__cpu_gemm_run(ctx, &t, engine);
      lj.load = false;
      if (st == LT_OK) lt__cpu_parallel(ctx, lines_of(&job), work, lines_task, &lj);
    }
  }
  for (int i = 0; i < blocks; i++)
    lt__cpu_scratch_give(ctx, job.block[i], got[i]);
  return st;
}

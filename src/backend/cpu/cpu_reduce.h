/* SPDX-License-Identifier: MIT */
/* The reduction engine's shared pieces (cpu_reduce.c describes the engine): the job a
 * reduction step becomes, the tuning constants, and the helpers both walks use. The walks live
 * in cpu_reduce_inner.c (an output at a time, row walk, split outputs) and cpu_reduce_outer.c
 * (chunks of outputs along the kept inner dim); cpu_reduce.c builds the job and picks one. */
#ifndef LT_BACKEND_CPU_REDUCE_H
#define LT_BACKEND_CPU_REDUCE_H

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
  const lt__cpu_kernels *k64; /* F64 kernels for totals (of the context's ISA table) */
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

static inline double identity(const reduce_job *j) {
  switch (j->kind) {
  case LT__CPU_PROD: return 1.0;
  case LT__CPU_MIN: return INFINITY;
  case LT__CPU_MAX: return j->pre == LT_UNARY_ABS ? 0.0 : -INFINITY;
  default: return 0.0;
  }
}

static inline double fold(lt__cpu_reduce_kind kind, double a, double b) {
  switch (kind) {
  case LT__CPU_SUM: return a + b;
  case LT__CPU_PROD: return a * b;
  case LT__CPU_MIN: return (a != a || b != b) ? NAN : (b < a ? b : a);
  case LT__CPU_MAX: return (a != a || b != b) ? NAN : (b > a ? b : a);
  }
  return a;
}

/* n values v in the compute type after opA and the pre-transform (into buf where there are). */
static inline const void *transformed(const reduce_job *j, const void *v, int64_t n, void *buf) {
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
static inline const void *chunk_values(const reduce_job *j, int64_t off, int64_t stride, int64_t n,
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

/* Requests the input row at `later` (offset base) in whole, then steps `later` on: short rows
 * apart from each other defeat the hardware prefetchers. */
static inline void prefetch_row_ahead(const reduce_job *j, int64_t base, lt__cpu_odometer *later,
                                      int64_t bytes) {
  size_t es = lt_dtype_size(j->step->in.dtype);
  lt__cpu_prefetch_span((const char *)j->step->in.mem + (base + later->off[IN]) * (int64_t)es,
                        bytes);
  lt__cpu_odometer_next(later);
}

/* Sets `later` NEXT_ROWS rows past `it` (an odometer is over 500 bytes: copied only where
 * used, since a 2 KB row's reduction measured 10% of its time in these copies). */
static inline void rows_ahead(lt__cpu_odometer *later, const lt__cpu_odometer *it) {
  *later = *it;
  for (int i = 0; i < NEXT_ROWS; i++)
    lt__cpu_odometer_next(later);
}

/* Totals -> alpha * total (mean: divided by the count; in the compute type's precision), in
 * place, in one pass (three passes were a sixth of the time of summing (1000, 1000, 3) over its
 * 3). */
static inline void scale_totals(const reduce_job *j, double *v, int64_t n) {
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
static inline void store_outputs(const reduce_job *j, const int64_t *off, const int64_t *st,
                                 double *v, int64_t n) {
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

/* Argmax/argmin of two pieces, r before q in position order: the earliest NaN, else the strictly
 * better value (ties keep r); a piece without a position (empty) never wins. */
static inline partial later_piece_arg(const reduce_job *j, partial r, partial q) {
  bool better = j->step->op == LT_REDUCE_ARGMAX ? q.value > r.value : q.value < r.value;
  return !r.nan && q.index >= 0 && (q.nan || r.index < 0 || better) ? q : r;
}

static inline int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* Outer walk (cpu_reduce_outer.c): sets j->group and j->lanes, and says whether the outer
 * walk runs the job (then lt__cpu_reduce_outer does). */
bool lt__cpu_reduce_outer_applies(reduce_job *j);
void lt__cpu_reduce_outer(lt_context *ctx, reduce_job *j, int64_t work);
/* Inner walks (cpu_reduce_inner.c): everything the outer walk does not take. */
void lt__cpu_reduce_inner(lt_context *ctx, reduce_job *j, int64_t work);

/* Integer compute (cpu_reduce_int.c): exact, an output at a time. */
void lt__cpu_reduce_int(lt_context *ctx, reduce_job *j);

#endif

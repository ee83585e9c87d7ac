/* SPDX-License-Identifier: MIT */
/* The strided elementwise engine. A map step becomes a loop nest (size-1 dims dropped, dims
 * sorted so that the output is walked in memory order, contiguous dims fused) and runs one of
 * three ways, each split across the context's threads:
 *   - rows (here): the innermost dim in chunks through the compute-type kernels of cpu_typed.h
 *     (unit-stride operands of the compute dtype are used in place, others converted). A short
 *     inner dim folds into the next one, with periodic or stretched inputs, or gives way to
 *     it; rows that interleave in memory are taken block by block across rows;
 *   - planes (here): short bit-copy rows, a plane of them per task;
 *   - tiles (cpu_map_tiles.c): when the input's contiguous dim is not the output's. */
#include "backend/cpu/cpu_map.h"
#include "backend/common/map_rules.h"
#include "core/dtype.h"

#include <string.h>

#define ROW_BLOCK 32768        /* inner elements per task, so a single long row still splits */
#define INTERLEAVED_BLOCK 2048 /* the same where rows interleave in memory (see run_rows) */
#define SHORT_INNER 16         /* computed rows shorter than this take a longer dim inside */
#define FOLD_MAX 256           /* computed rows up to this long fold with repeating inputs */
#define PREFETCH_AHEAD 8192    /* streamed rows: input bytes prefetched ahead */
#define STREAM_MIN_ROW 256     /* computed rows streamed only from this length */
#define SHORT_ROW_BYTES 512    /* bit-copy rows up to this long go a plane per call */

static const void *element(const void *mem, size_t esize, int64_t off) {
  return (const char *)mem + off * (int64_t)esize;
}

/* A periodic operand's values for row positions [pos, pos + n): its `period` values (stride
 * fold_stride from off) repeated, starting at phase pos % period. */
static void periodic_values(const lt__cpu_map_job *j, int k, int64_t off, int64_t pos, int64_t n,
                            void *buf) {
  const lt__operand *op = &j->step->in[k];
  int64_t p = j->period, phase = pos % p, ks = (int64_t)j->k->size, st = j->fold_stride[k];
  char *b = buf;
  j->k->load(b, op->mem, op->dtype, off + phase * st, st, min64(p - phase, n));
  if (phase && n > p - phase)
    j->k->load(b + (p - phase) * ks, op->mem, op->dtype, off, st, min64(phase, n - (p - phase)));
  for (int64_t have = p; have < n; have *= 2) /* doubling copies of the first period */
    memcpy(b + have * ks, b, (size_t)(min64(have, n - have) * ks));
}

/* A stretched operand's values for row positions [pos, pos + n): value g (stride fold_stride
 * from off) held for positions [g * period, (g + 1) * period). */
static void stretched_values(const lt__cpu_map_job *j, int k, int64_t off, int64_t pos, int64_t n,
                             void *buf) {
  const lt__operand *op = &j->step->in[k];
  int64_t p = j->period, g = pos / p, phase = pos % p, count = (phase + n + p - 1) / p;
  _Alignas(64) double held[LT__CPU_CHUNK / 2 + 2]; /* count <= n / 2 + 2: p >= 2 */
  j->k->load(held, op->mem, op->dtype, off + g * j->fold_stride[k], j->fold_stride[k], count);
  j->k->stretch(buf, held, n, p, phase);
}

/* Operand k's values at row positions [pos, pos + n) in the compute type: in place when
 * possible, else into buf. */
static const void *operand_values(const lt__cpu_map_job *j, int k, int64_t off, int64_t stride,
                                  int64_t pos, int64_t n, void *buf) {
  const lt__operand *op = &j->step->in[k];
  if (j->fold[k] == LT__CPU_FOLD_PERIODIC) {
    periodic_values(j, k, off, pos, n, buf);
    return buf;
  }
  if (j->fold[k] == LT__CPU_FOLD_STRETCHED) {
    stretched_values(j, k, off, pos, n, buf);
    return buf;
  }
  if (op->dtype == j->k->dtype && stride == 1) return element(op->mem, j->k->size, off);
  j->k->load(buf, op->mem, op->dtype, off, stride, n);
  return buf;
}

/* s*u(values) of operand k, or the values themselves when that is the identity. */
static const void *prepared(const lt__cpu_map_job *j, int k, int64_t off, int64_t stride,
                            int64_t pos, int64_t n, void *buf) {
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
static void map_row(const lt__cpu_map_job *j, const int64_t *off, int64_t pos, int64_t len) {
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
      } else if (s->op_ab == LT_BINARY_WHERE) {
        const void *c = prepared(j, 2, o[2], st[2], pos + c0, n, buf[2]);
        k->select(dst, a, b, c, n);
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
static bool prefetch_next_rows(const lt__cpu_map_job *j, int64_t len) {
  int r = j->nest.rank;
  return j->stream && j->n_blocks == 1 && r > 0 && j->nest.strides[0][r - 1] == 1 &&
         len * (int64_t)j->esize <= 4096;
}

static void prefetch_row(const lt__cpu_map_job *j, int64_t off, int64_t len) {
  lt__cpu_prefetch_span(element(j->step->in[0].mem, j->esize, off), len * (int64_t)j->esize);
}

/* Task t is block t % n_blocks of row t / n_blocks, or with blocks_outer block t / rows of row
 * t % rows. */
static void run_rows(void *arg, int64_t lo, int64_t hi) {
  const lt__cpu_map_job *j = arg;
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
  const lt__cpu_map_job *j = arg;
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
static bool interleaved_rows(const lt__cpu_map_job *j) {
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

/* How input q runs along the short inner dim folded into the next one (extent p). */
static lt__cpu_fold fold_kind(const lt__cpu_nest *nest, int q, int64_t p) {
  int r = nest->rank;
  int64_t inner = nest->strides[q][r - 1], next = nest->strides[q][r - 2];
  if (next == p * inner) return LT__CPU_FOLD_NONE; /* continues (or a stride 0 on both) */
  if (next == 0) return LT__CPU_FOLD_PERIODIC;
  return inner == 0 ? LT__CPU_FOLD_STRETCHED : (lt__cpu_fold)-1;
}

/* A short inner dim that every operand either continues into the next dim (contiguously),
 * repeats along it (stride 0 there: a per-channel bias (N, 3) + (3,)) or holds (stride 0 along
 * it: (N, 3) + (N, 1)) becomes one long row in which the repeating inputs are periodic and the
 * holding ones stretched: their values are laid out a chunk at a time, and the other operands
 * keep unit-stride rows. (4096, 5461, 3) + (3,): 0.28 -> 1.0 of a streamed triad (strided rows of
 * widen_short_rows reached 0.28); (100, 100, 100, 10) + (100, 1, 100, 1): 5 -> 20 GB/s. Rows up
 * to FOLD_MAX long fold too: (64, 64, 64, 64) + (64, 1, 64, 1), rows of 64: 11 -> 44 GB/s. */
static void fold_short_rows(lt__cpu_map_job *j) {
  lt__cpu_nest *nest = &j->nest;
  int r = nest->rank;
  if (j->bitcopy || j->step->n_in < 2 || r < 2 || nest->shape[r - 1] > FOLD_MAX) return;
  int64_t p = nest->shape[r - 1];
  lt__cpu_fold kind[4];
  bool any = false;
  for (int q = 0; q <= j->out; q++) {
    kind[q] = fold_kind(nest, q, p);
    if (kind[q] == (lt__cpu_fold)-1 || (q == j->out && kind[q] != LT__CPU_FOLD_NONE)) return;
    any |= kind[q] != LT__CPU_FOLD_NONE;
  }
  if (!any) return;
  for (int q = 0; q < j->out; q++) {
    j->fold[q] = kind[q];
    j->fold_stride[q] = kind[q] == LT__CPU_FOLD_PERIODIC    ? nest->strides[q][r - 1]
                        : kind[q] == LT__CPU_FOLD_STRETCHED ? nest->strides[q][r - 2]
                                                            : 0;
    if (kind[q] != LT__CPU_FOLD_NONE) nest->strides[q][r - 1] = 0; /* offsets stay along the row */
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

/* Bits an integer or bool operand needs in lanes of the given signedness (0: it does not fit
 * any narrow lane: floats, or a signed value in unsigned lanes). */
static int lane_bits(lt_dtype d, bool signed_lanes) {
  if (d == LT_BOOL) return 8;
  bool sgn = d == LT_I8 || d == LT_I16 || d == LT_I32 || d == LT_I64;
  if (!lt__dtype_is_int(d) || (sgn && !signed_lanes)) return 0;
  int b = (int)lt_dtype_size(d) * 8;
  return sgn || !signed_lanes ? b : 2 * b; /* unsigned in signed lanes: one more bit */
}

/* Whether op computed at a narrow width gives the 64-bit result's bits: ring ops (+ - *,
 * *wraps set) modulo 2^W, and ops whose result never leaves its inputs' range. */
static bool native_op(lt_binary_op op, bool *wraps) {
  switch (op) {
  case LT_BINARY_ADD:
  case LT_BINARY_SUB:
  case LT_BINARY_MUL: *wraps = true; return true;
  case LT_BINARY_MIN:
  case LT_BINARY_MAX:
  case LT_BINARY_EQ:
  case LT_BINARY_NE:
  case LT_BINARY_LT:
  case LT_BINARY_LE:
  case LT_BINARY_GT:
  case LT_BINARY_GE:
  case LT_BINARY_LOGICAL_AND:
  case LT_BINARY_LOGICAL_OR:
  case LT_BINARY_LOGICAL_XOR:
  case LT_BINARY_BITWISE_AND:
  case LT_BINARY_BITWISE_OR:
  case LT_BINARY_BITWISE_XOR:
  case LT_BINARY_WHERE: return true;
  default: return false;
  }
}

/* The narrow compute (issue 18: i32 comparisons ran in 64-bit lanes at 0.28 of the copy limit)
 * for an integer step, or LT_DTYPE_INVALID: W bits, the widest any input needs, when every
 * input is an integer or bool of at most 32 bits with no scalar or unary op, every op is native
 * (native_op) and the output is an integer or bool that cannot tell the difference: no wider
 * than W when an op wraps (the 64-bit sum of two i8 is not the 8-bit one in an i16 output), and
 * not bool then either (2^W wraps to 0, which is false). Values are exact in W-bit lanes, so
 * comparisons, min/max and where agree at any output width. */
static lt_dtype narrow_compute(const lt__map_step *s) {
  if (!lt__cpu_compute_is_int(s->compute) || s->n_in == 0) return LT_DTYPE_INVALID;
  bool sgn = s->compute == LT_I64, wraps = false;
  int w = 8;
  for (int k = 0; k < s->n_in; k++) {
    int b = lane_bits(s->in[k].dtype, sgn);
    if (b == 0 || s->scalars[k] != 1.0 || s->unary[k] != LT_UNARY_IDENTITY) return LT_DTYPE_INVALID;
    w = b > w ? b : w;
  }
  if (w > 32) return LT_DTYPE_INVALID;
  if (s->n_in >= 2 && !native_op(s->op_ab, &wraps)) return LT_DTYPE_INVALID;
  if (s->n_in == 3 && !native_op(s->op_abc, &wraps)) return LT_DTYPE_INVALID;
  lt_dtype o = s->out.dtype;
  if (o != LT_BOOL && !lt__dtype_is_int(o)) return LT_DTYPE_INVALID;
  if (wraps && (o == LT_BOOL || (int)lt_dtype_size(o) * 8 > w)) return LT_DTYPE_INVALID;
  switch (w) {
  case 8: return sgn ? LT_I8 : LT_U8;
  case 16: return sgn ? LT_I16 : LT_U16;
  default: return sgn ? LT_I32 : LT_U32;
  }
}

lt_status lt__cpu_map(lt_context *ctx, const lt__map_step *step) {
  lt__map_step zero_fill;
  const lt__map_step *s = lt__map_without_zero_term(step, &zero_fill);
  lt__cpu_map_job j;
  memset(&j, 0, sizeof j);
  j.step = s;
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  lt_dtype narrow = narrow_compute(s);
  j.k = isa->kernels(narrow != LT_DTYPE_INVALID ? narrow : s->compute);
  j.out = s->n_in;
  j.bitcopy = lt__map_is_bitcopy(s);
  j.esize = lt_dtype_size(s->out.dtype);
  j.simd = isa->simd;
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
  if (s->n_in == 1 && lt__cpu_map_plan_tiles(&j)) {
    lt__cpu_parallel(ctx, lt__cpu_nest_count(nest, j.n_outer) * j.n_blocks, numel,
                     lt__cpu_map_run_tiles, &j);
    return LT_OK;
  }
  if (j.stream) walk_input_order(nest);
  if (!j.bitcopy) fold_short_rows(&j);
  if (!j.bitcopy && j.period == 0) widen_short_rows(nest); /* a folded row stays innermost */
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

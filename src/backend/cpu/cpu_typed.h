/* SPDX-License-Identifier: MIT */
/* Chunk kernels of the CPU engine, one table per compute dtype (F32, F64; I64 and U64 for exact
 * integers, cpu_typed_int.inc, whose reduction entries are NULL: cpu_reduce_int.c reduces them).
 * Every kernel works on short chunks (at most LT__CPU_CHUNK elements) in the compute type, so the
 * loops are simple enough for the compiler to vectorise; converting loads and stores are the only
 * place where storage dtypes differ. */
#ifndef LT_BACKEND_CPU_TYPED_H
#define LT_BACKEND_CPU_TYPED_H

#include "tensor.h"

#define LT__CPU_CHUNK 1024

/* The reductions the chunk kernels know; the others are pre-transforms of these. */
typedef enum lt__cpu_reduce_kind {
  LT__CPU_SUM,
  LT__CPU_PROD,
  LT__CPU_MIN,
  LT__CPU_MAX
} lt__cpu_reduce_kind;

typedef struct lt__cpu_kernels {
  lt_dtype dtype;
  size_t size;
  /* dst[i] = mem[off + i*stride] converted from `dtype` (stride 0 broadcasts). */
  void (*load)(void *dst, const void *mem, lt_dtype dtype, int64_t off, int64_t stride, int64_t n);
  /* mem[off + i*stride] = src[i] converted to `dtype`. */
  /* dst[i] = src[(phase + i) / p], i < n (values in the compute type, each held p positions). */
  void (*stretch)(void *dst, const void *src, int64_t n, int64_t p, int64_t phase);
  void (*store)(void *mem, lt_dtype dtype, int64_t off, int64_t stride, const void *src, int64_t n);
  void (*fill)(void *dst, int64_t n, double value);
  /* dst[i] = scale * op(src[i]); dst may equal src. */
  void (*transform)(void *dst, const void *src, int64_t n, lt_unary_op op, double scale);
  /* dst[i] = a[i] op b[i]; dst may equal a or b. */
  void (*combine)(void *dst, const void *a, const void *b, int64_t n, lt_binary_op op);
  /* dst[i] = cond[i] != 0 ? a[i] : b[i] (WHERE); dst may equal any input. */
  void (*select)(void *dst, const void *cond, const void *a, const void *b, int64_t n);
  /* Reduces x[0..n) (blocked, several accumulators); MIN/MAX give NaN if any x is NaN. */
  /* `ahead`: bytes past the data that will be read next, to prefetch (0: none). */
  double (*reduce)(const void *x, int64_t n, lt__cpu_reduce_kind kind, int64_t ahead);
  /* acc[i] = acc[i] kind x[i] (elementwise accumulation for reductions over outer dims). */
  void (*accumulate)(void *acc, const void *x, int64_t n, lt__cpu_reduce_kind kind);
  /* acc[i] = acc[i] kind x[i*p] kind ... kind x[i*p + p-1], the same bits as p accumulate calls
   * over the strided columns. */
  void (*accumulate_groups)(void *acc, const void *x, int64_t n, int64_t p,
                            lt__cpu_reduce_kind kind);
  /* acc[i] = alpha * (acc[i] / count) (count 0: no division), as the reduction engine's finish
   * in double would give it (for float: while count < 2^24). */
  void (*scale_totals)(void *acc, int64_t n, double count, double alpha);
  /* Argmax/argmin over x[0..n) continuing a running (best, index, nan) state; base is the
   * index of x[0]. NaN wins, first occurrence wins. */
  void (*arg)(const void *x, int64_t n, int64_t base, bool is_max, double *best, int64_t *index,
              bool *seen_nan);
  /* The same elementwise for the outer walk: `rows` consecutive rows of n values, row r at
   * x[r * n] and reduced position pos + r, against best[i] (at idx[i]) for n outputs at once. */
  void (*arg_rows)(void *best, int64_t *idx, const void *x, int64_t n, int64_t rows, int64_t pos,
                   bool is_max);
} lt__cpu_kernels;

/* Requests [p, p + bytes) into the caches, one prefetch per 64-byte line. Prefetches never
 * fault, so spans past the end of an array are safe. */
static inline void lt__cpu_prefetch_span(const void *p, int64_t bytes) {
  for (int64_t x = 0; x < bytes; x += 64)
    __builtin_prefetch((const char *)p + x);
}

/* The table for LT_F32 or LT_F64. Generated from cpu_typed.inc: load_f32, stretch_f32, store_f32,
 * fill_f32, transform_f32, combine_f32, reduce_f32, accumulate_f32, accumulate_groups_f32,
 * scale_totals_f32, arg_f32, arg_rows_f32 (with the static helpers to_i64_f32 and
 * reduce_lanes_f32) and the same with _f64. */
const lt__cpu_kernels *lt__cpu_kernels_for(lt_dtype compute);
/* The portable integer tables for LT_I64 / LT_U64 compute: kernels_i64, kernels_u64 with
 * load_i64, stretch_i64, store_i64, fill_i64, transform_i64, combine_i64, select_i64 and the
 * same with _u64 (cpu_typed_int_instances.inc); and the narrow ones (LT_I32 .. LT_U8:
 * kernels_i32 ... kernels_u8) for the map engine's native-width compute. */
const lt__cpu_kernels *lt__cpu_kernels_int(lt_dtype compute);
/* The same tables compiled for AVX2 / AVX-512 (the ISA tables' kernels() return them). */
const lt__cpu_kernels *lt__cpu_kernels_int_avx2(lt_dtype compute);
const lt__cpu_kernels *lt__cpu_kernels_int_avx512(lt_dtype compute);
static inline bool lt__cpu_compute_is_int(lt_dtype compute) {
  return compute == LT_I64 || compute == LT_U64;
}
/* Whether `compute` names an integer table: I64/U64 and the map engine's narrow widths (the
 * integer dtypes are LT_I64 .. LT_U64 in the pinned enum). */
static inline bool lt__cpu_table_is_int(lt_dtype compute) {
  return compute >= LT_I64 && compute <= LT_U64;
}
/* The same kernels compiled for AVX2 / AVX-512 (cpu_typed_avx*.c, only when built; the ISA
 * table of cpu_isa.c points at them where the CPU runs them). Results are identical on every
 * path. */
const lt__cpu_kernels *lt__cpu_kernels_avx2(lt_dtype compute);
const lt__cpu_kernels *lt__cpu_kernels_avx512(lt_dtype compute);

#endif

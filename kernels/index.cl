/* SPDX-License-Identifier: MIT */
/* Index steps (lt__gather_step, lt__scatter_step, lt__sort_step in src/backend/backend.h).
 * Options: LT_ELEM (the raw element type moved by gather and sort: uchar ushort uint ulong),
 * LT_INDEX (the index element type: char ... ulong, plus LT_INDEX_U64 for ulong), LT_OUT (dtype
 * token of the scatter output), LT_EXACT_INT (scatter-add and sort on integers and bool, no
 * float conversion; sort keys of type LT_KEY_T, long or ulong), LT_COMPUTE_F64, and LT_IN0
 * (dtype token of the sorted input). */
#ifndef LT_ELEM
#define LT_ELEM ulong
#endif
#ifndef LT_INDEX
#define LT_INDEX long
#endif
/* An index value as long; a ulong index beyond LONG_MAX (out of range anyway) reads as
 * LONG_MAX rather than wrapping to a valid negative index. */
#ifdef LT_INDEX_U64
#define LT_INDEX_VALUE(x) ((x) > (ulong)LONG_MAX ? LONG_MAX : (long)(x))
#else
#define LT_INDEX_VALUE(x) ((long)(x))
#endif
#ifdef cl_khr_int64_extended_atomics
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#endif

/* Records position e as bad: the lowest one when 64-bit atomics exist, else any of them. */
inline void lt_note_bad(volatile global long *bad, long e) {
#ifdef cl_khr_int64_extended_atomics
  atom_min(bad, e);
#else
  *bad = e;
#endif
}

/* desc: shape[rank], then strides of in, index, out (rank each). *bad starts at LONG_MAX. */
kernel void lt_gather(long n, int rank, constant const long *desc, global const LT_ELEM *in,
                      global const LT_INDEX *index, global LT_ELEM *out, long off_in,
                      long off_index, long off_out, long extent, long axis_stride,
                      volatile global long *bad) {
  for (long e = get_global_id(0); e < n; e += get_global_size(0)) {
    long o[3] = {off_in, off_index, off_out};
    lt_unravel(e, rank, desc, 3, o);
    long j = LT_INDEX_VALUE(index[o[1]]);
    if (j < 0) j += extent;
    if (j < 0 || j >= extent) {
      lt_note_bad(bad, e);
      continue;
    }
    out[o[2]] = in[o[0] + j * axis_stride];
  }
}

/* One work-item per line (a position off the scattered axis), walking the axis in order so
 * each output element receives its additions in one fixed order. desc: the line space's shape
 * [rank], then strides of src, index, out. line_len, src/index strides along the axis. */
kernel void lt_scatter_add(long lines, int rank, constant const long *desc,
                           global const LT_ST(LT_OUT) *src, global const LT_INDEX *index,
                           global LT_ST(LT_OUT) *out, long off_src, long off_index, long off_out,
                           long line_len, long src_step, long index_step, long extent,
                           long out_axis_stride, volatile global long *bad) {
  for (long l = get_global_id(0); l < lines; l += get_global_size(0)) {
    long o[3] = {off_src, off_index, off_out};
    lt_unravel(l, rank, desc, 3, o);
    for (long c = 0; c < line_len; c++) {
      long j = LT_INDEX_VALUE(index[o[1] + c * index_step]);
      if (j < 0) j += extent;
      if (j < 0 || j >= extent) {
        lt_note_bad(bad, l * line_len + c); /* the host maps (line, c) back to a position */
        break;
      }
      long at = o[2] + j * out_axis_stride, from = o[0] + c * src_step;
#ifdef LT_EXACT_INT
      out[at] = (LT_ST(LT_OUT))((ulong)out[at] + (ulong)src[from]); /* wraps as NumPy */
#else
      LT_STORE(LT_OUT, out, at, LT_LOAD(LT_OUT, out, at) + LT_LOAD(LT_OUT, src, from));
#endif
    }
  }
}

#ifdef LT_EXACT_INT
#ifndef LT_KEY_T
#define LT_KEY_T long
#endif
typedef LT_KEY_T key_t;
#define LT_KEY(p, i) ((key_t)(p)[i])
#define LT_BEFORE(x, y) ((x) < (y))
#else
typedef real_t key_t;
#define LT_KEY(p, i) LT_LOAD(LT_IN0, p, i)
/* Ascending with NaN greatest: ties and NaNs keep their positions (stable). */
#define LT_BEFORE(x, y) ((x) < (y) || (!isnan(x) && isnan(y)))
#endif

/* One work-item per row: a bottom-up stable merge sort of the row's positions through two
 * scratch arrays of n longs each (scratch holds rows_per_launch rows), then the first k
 * written as values (raw bits through in_raw, the same buffer as in) or positions.
 * desc: the row space's shape [rank], then strides of in and out. */
kernel void lt_sort(long rows, long row0, int rank, constant const long *desc,
                    global const LT_ST(LT_IN0) *in, global const LT_ELEM *in_raw,
                    global LT_ELEM *out_raw, global long *out_index, long off_in, long off_out,
                    long n, long k, long in_step, long out_step, int descending,
                    global long *scratch) {
  for (long r = get_global_id(0); r < rows; r += get_global_size(0)) {
    long o[2] = {off_in, off_out};
    lt_unravel(row0 + r, rank, desc, 2, o);
    global long *a = scratch + r * 2 * n, *b = a + n;
    for (long i = 0; i < n; i++) a[i] = i;
    for (long w = 1; w < n; w *= 2) {
      for (long lo = 0; lo < n; lo += 2 * w) {
        long mid = min(lo + w, n), hi = min(lo + 2 * w, n), i = lo, j = mid, t = lo;
        while (i < mid && j < hi) {
          key_t x = LT_KEY(in, o[0] + a[i] * in_step), y = LT_KEY(in, o[0] + a[j] * in_step);
          bool right_first = descending ? LT_BEFORE(x, y) : LT_BEFORE(y, x);
          b[t++] = right_first ? a[j++] : a[i++];
        }
        while (i < mid) b[t++] = a[i++];
        while (j < hi) b[t++] = a[j++];
      }
      global long *s = a;
      a = b;
      b = s;
    }
    for (long i = 0; i < k; i++) {
      if (out_index)
        out_index[o[1] + i * out_step] = a[i];
      else
        out_raw[o[1] + i * out_step] = in_raw[o[0] + a[i] * in_step];
    }
  }
}

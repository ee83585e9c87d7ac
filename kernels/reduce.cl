/* SPDX-License-Identifier: MIT */
/* Reduction steps (lt__reduce_step in src/backend/backend.h). Three kernels:
 *   lt_reduce_serial   one work-item per (output, chunk), adjacent items on adjacent outputs:
 *                      for short reductions, and for long ones whose kept dims are the
 *                      input's fastest (reads stay coalesced across the items);
 *   lt_reduce_tree     work-groups of LT_WG items reduce one chunk of one output each, with a
 *                      tree in local memory; one chunk per output writes the result directly,
 *                      several write partials;
 *   lt_reduce_final    the second pass: one work-item folds an output's partials in order.
 * The reduce op is a kernel argument (lt_reduce_op numbering); LT_ARG selects the ARGMAX /
 * ARGMIN flavour, whose output is i64. desc: kept shape[rank], out / c / in kept strides (rank
 * each), reduced shape[red_rank], in reduced strides (red_rank). */
#ifndef LT_WG
#define LT_WG 256
#endif
#ifndef LT_ARG
#define LT_ARG 0
#endif

#define LT_R_SUM 0
#define LT_R_PROD 1
#define LT_R_MIN 2
#define LT_R_MAX 3
#define LT_R_MEAN 4
#define LT_R_SUMSQ 5
#define LT_R_MAXABS 6
#define LT_R_ARGMAX 7
#define LT_R_ARGMIN 8
#define LT_NO_INDEX LONG_MAX

/* An empty MAXABS is 0; over integers a non-empty one starts at the lowest value, as the
 * wrapped |INT_MIN| of a narrow input is negative. */
inline real_t lt_red_identity(int op, long nred) {
  switch (op) {
  case LT_R_PROD: return 1;
  case LT_R_MIN:
  case LT_R_ARGMIN: return LT_REAL_MAX;
  case LT_R_MAX:
  case LT_R_ARGMAX: return LT_REAL_LOWEST;
#ifdef LT_INT
  case LT_R_MAXABS: return nred > 0 ? LT_REAL_LOWEST : 0;
#endif
  default: return 0;
  }
}

/* Folds (bv, bi) into (*av, *ai). For ARGMAX/ARGMIN: NaN wins, then the better value, ties
 * (and NaN against NaN) go to the lower index, so any folding order gives the first occurrence. */
inline void lt_red_fold(int op, real_t *av, long *ai, real_t bv, long bi) {
  switch (op) {
  case LT_R_PROD: *av = LT_MUL(*av, bv); return;
  case LT_R_MIN: *av = lt_min(*av, bv); return;
  case LT_R_MAX:
  case LT_R_MAXABS: *av = lt_max(*av, bv); return;
  case LT_R_ARGMAX:
  case LT_R_ARGMIN: {
    bool an = LT_ISNAN(*av), bn = LT_ISNAN(bv);
    bool take;
    if (an || bn) take = bn && (!an || bi < *ai);
    else if (bv == *av) take = bi < *ai;
    else take = op == LT_R_ARGMAX ? bv > *av : bv < *av;
    if (take) {
      *av = bv;
      *ai = bi;
    }
    return;
  }
  default: *av = LT_ADD(*av, bv); return;
  }
}

/* An integer input narrower than the 64-bit compute: a transformed value (opA, MAXABS's abs)
 * wraps to the input's width, as NumPy applies the transform in the input's dtype (|-128| is
 * -128 in int8, so max |x| of int8 [-128, 3] is 3). */
#ifdef LT_INT
#define LT_WRAP_i8(x) ((real_t)(char)(x))
#define LT_WRAP_i16(x) ((real_t)(short)(x))
#define LT_WRAP_i32(x) ((real_t)(int)(x))
#define LT_WRAP_u8(x) ((real_t)(uchar)(x))
#define LT_WRAP_u16(x) ((real_t)(ushort)(x))
#define LT_WRAP_u32(x) ((real_t)(uint)(x))
#define LT_WRAP_i64(x) (x)
#define LT_WRAP_u64(x) (x)
#define LT_WRAP_b8(x) (x)
#define LT_WRAP_IN(x) LT_CAT(LT_WRAP_, LT_IN0)(x)
#else
#define LT_WRAP_IN(x) (x)
#endif

/* The element value an input element contributes. */
inline real_t lt_red_element(int op, int unary, real_t x) {
  if (unary != 0) x = LT_WRAP_IN(lt_unary(unary, x)); /* 0: LT_UNARY_IDENTITY */
  if (op == LT_R_SUMSQ) return LT_MUL(x, x);
  if (op == LT_R_MAXABS) return LT_WRAP_IN(LT_ABS(x));
  return x;
}

/* Offset of reduced element r (row-major over the reduced dims). */
inline long lt_red_offset(long r, int rank, int red_rank, constant const long *desc) {
  long o = 0;
  lt_unravel(r, red_rank, desc + 4 * rank, 1, &o);
  return o;
}

#define LT_T(dt) LT_CAT(LT_T_, dt)
#define LT_RED_ARGS                                                                                \
  int rank, int red_rank, constant const long *desc, long nout, long nred, int op, int unary,    \
      global const LT_T(LT_IN0) *in, long off_in, global LT_T(LT_OUT) *out, long off_out,        \
      global const LT_T(LT_C) *c, long off_c, real_t alpha, real_t beta

/* Writes output element o from its reduced value (acc, arg). */
inline void lt_red_finish(LT_RED_ARGS, long o, real_t acc, long arg) {
  long offs[2] = {off_out, off_c};
  lt_unravel(o, rank, desc, 2, offs);
#if LT_ARG
  out[offs[0]] = arg == LT_NO_INDEX ? 0 : arg;
#else
#ifndef LT_INT /* integer compute never takes MEAN (the front end computes it in f64) */
  if (op == LT_R_MEAN) acc = nred ? acc / (real_t)nred : (real_t)NAN;
#endif
  real_t v = LT_MUL(alpha, acc);
  if (beta != 0) v = LT_ADD(v, LT_MUL(beta, LT_LOAD(LT_C, c, offs[1])));
  LT_STORE(LT_OUT, out, offs[0], v);
#endif
}

inline long lt_red_base(long o, int rank, constant const long *desc, long off_in) {
  long offs[3] = {0, 0, off_in};
  lt_unravel(o, rank, desc, 3, offs);
  return offs[2];
}

/* chunks > 1: partial values and indices go to part_v / part_i[o * chunks + chunk]. */
kernel void lt_reduce_serial(LT_RED_ARGS, long chunks, long chunk_len, global real_t *part_v,
                             global long *part_i) {
  for (long job = get_global_id(0); job < nout * chunks; job += get_global_size(0)) {
    long o = job % nout, ch = job / nout;
    long base = lt_red_base(o, rank, desc, off_in);
    real_t acc = lt_red_identity(op, nred);
    long arg = LT_NO_INDEX;
    long r_end = min(nred, (ch + 1) * chunk_len);
    for (long r = ch * chunk_len; r < r_end; r++) {
      real_t x = LT_LOAD(LT_IN0, in, base + lt_red_offset(r, rank, red_rank, desc));
      lt_red_fold(op, &acc, &arg, lt_red_element(op, unary, x), r);
    }
    if (chunks == 1) {
      lt_red_finish(rank, red_rank, desc, nout, nred, op, unary, in, off_in, out, off_out, c, off_c,
                    alpha, beta, o, acc, arg);
    } else {
      part_v[o * chunks + ch] = acc;
      part_i[o * chunks + ch] = arg;
    }
  }
}

/* chunks > 1: partial values and indices go to part_v / part_i[o * chunks + chunk]. */
kernel __attribute__((reqd_work_group_size(LT_WG, 1, 1))) void
lt_reduce_tree(LT_RED_ARGS, long chunks, long chunk_len, global real_t *part_v,
               global long *part_i) {
  local real_t sv[LT_WG];
  local long si[LT_WG];
  int lid = (int)get_local_id(0);
  for (long job = get_group_id(0); job < nout * chunks; job += get_num_groups(0)) {
    long o = job / chunks, ch = job % chunks;
    long base = lt_red_base(o, rank, desc, off_in);
    long r_end = min(nred, (ch + 1) * chunk_len);
    real_t acc = lt_red_identity(op, nred);
    long arg = LT_NO_INDEX;
    for (long r = ch * chunk_len + lid; r < r_end; r += LT_WG) {
      real_t x = LT_LOAD(LT_IN0, in, base + lt_red_offset(r, rank, red_rank, desc));
      lt_red_fold(op, &acc, &arg, lt_red_element(op, unary, x), r);
    }
    sv[lid] = acc;
    si[lid] = arg;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LT_WG / 2; s > 0; s >>= 1) {
      if (lid < s) {
        real_t v = sv[lid];
        long i = si[lid];
        lt_red_fold(op, &v, &i, sv[lid + s], si[lid + s]);
        sv[lid] = v;
        si[lid] = i;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
      if (chunks == 1) {
        lt_red_finish(rank, red_rank, desc, nout, nred, op, unary, in, off_in, out, off_out, c,
                      off_c, alpha, beta, o, sv[0], si[0]);
      } else {
        part_v[o * chunks + ch] = sv[0];
        part_i[o * chunks + ch] = si[0];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

kernel void lt_reduce_final(LT_RED_ARGS, long chunks, global const real_t *part_v,
                            global const long *part_i) {
  for (long o = get_global_id(0); o < nout; o += get_global_size(0)) {
    real_t acc = lt_red_identity(op, nred);
    long arg = LT_NO_INDEX;
    for (long ch = 0; ch < chunks; ch++)
      lt_red_fold(op, &acc, &arg, part_v[o * chunks + ch], part_i[o * chunks + ch]);
    lt_red_finish(rank, red_rank, desc, nout, nred, op, unary, in, off_in, out, off_out, c, off_c,
                  alpha, beta, o, acc, arg);
  }
}

/* SPDX-License-Identifier: MIT */
/* Elementwise map steps (lt__map_step in src/backend/backend.h): the generic strided kernel
 * and a tiled kernel for permutations that goes through local memory, so that both its reads
 * (along the input's fastest dim) and its writes (along the output's) are coalesced.
 * Options: LT_N_IN (0..3), dtype tokens LT_IN0..2 / LT_OUT, LT_COMPUTE_F64 / _I64 / _U64,
 * LT_RAW. */
#ifndef LT_N_IN
#define LT_N_IN 1
#endif
#ifndef LT_TILE
#define LT_TILE 32
#endif
#ifndef LT_TILE_ROWS
#define LT_TILE_ROWS 8
#endif

#ifdef LT_RAW
typedef LT_ST(LT_OUT) value_t;
#define LT_PUT(p, i, v) ((p)[i] = (v))
#else
typedef real_t value_t;
#define LT_PUT(p, i, v) LT_STORE(LT_OUT, p, i, v)
#endif

#define LT_MAP_ARGS                                                                                \
  global const LT_ST(LT_IN0) *in0, global const LT_ST(LT_IN1) *in1,                               \
      global const LT_ST(LT_IN2) *in2, global LT_ST(LT_OUT) *out, int u0, int u1, int u2,         \
      int op_ab, int op_abc, real_t s0, real_t s1, real_t s2, ulong fill
#define LT_MAP_PASS in0, in1, in2, out, u0, u1, u2, op_ab, op_abc, s0, s1, s2, fill

/* s * u(x) of one operand; a zero scalar's operand is not read, so NaN in it stays out. */
#define LT_TERM(s, u, T, p, o) ((s) == (real_t)0 ? (real_t)0 : LT_MUL((s), lt_unary((u), LT_LOAD(T, p, o))))

/* The value of one output element from its input elements at o0, o1, o2. */
inline value_t lt_map_value(LT_MAP_ARGS, long o0, long o1, long o2) {
#if LT_N_IN == 0
  return (value_t)fill; /* the host converted the scalar to the output's bits */
#elif defined(LT_RAW)
  return in0[o0];
#else
  real_t acc = LT_TERM(s0, u0, LT_IN0, in0, o0);
#if LT_N_IN >= 2
  if (LT_N_IN == 2 || op_ab != 26) acc = lt_binary(op_ab, acc, LT_TERM(s1, u1, LT_IN1, in1, o1));
#endif
#if LT_N_IN >= 3
  if (op_ab == 26) /* WHERE: A ? B : C, the unselected operand not read */
    return acc != 0 ? LT_TERM(s1, u1, LT_IN1, in1, o1) : LT_TERM(s2, u2, LT_IN2, in2, o2);
  acc = lt_binary(op_abc, acc, LT_TERM(s2, u2, LT_IN2, in2, o2));
#endif
  return acc;
#endif
}

/* desc: shape[rank], then strides of in0, in1, in2, out (rank each). Grid-stride loop. */
kernel void lt_map_strided(long n, int rank, constant const long *desc, LT_MAP_ARGS, long off0,
                           long off1, long off2, long offo) {
  for (long e = get_global_id(0); e < n; e += get_global_size(0)) {
    long o[4] = {off0, off1, off2, offo};
    lt_unravel(e, rank, desc, 4, o);
    LT_PUT(out, o[3], lt_map_value(LT_MAP_PASS, o[0], o[1], o[2]));
  }
}

/* One input. Dim a is the output's fastest dim, dim b the input's; the other dims form the
 * batch, desc = batch shape[brank], in0 batch strides, out batch strides. Each work-group
 * (LT_TILE x LT_TILE_ROWS items) moves LT_TILE x LT_TILE tiles, looping over tiles. */
kernel __attribute__((reqd_work_group_size(LT_TILE * LT_TILE_ROWS, 1, 1))) void
lt_map_tiled(long ext_a, long ext_b, long sa_in, long sb_in, long sa_out, long sb_out,
             long tiles_a, long tiles_b, long nbatch, int brank, constant const long *desc,
             LT_MAP_ARGS, long off0, long offo) {
  local value_t tile[LT_TILE][LT_TILE + 1];
  int tx = (int)get_local_id(0) % LT_TILE, ty = (int)get_local_id(0) / LT_TILE;
  long ntiles = tiles_a * tiles_b * nbatch;
  for (long t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
    long ta = t % tiles_a, rest = t / tiles_a;
    long tb = rest % tiles_b, bt = rest / tiles_b;
    long o[2] = {off0, offo};
    lt_unravel(bt, brank, desc, 2, o);
    long b = tb * LT_TILE + tx;
    for (int r = ty; r < LT_TILE; r += LT_TILE_ROWS) {
      long a = ta * LT_TILE + r;
      if (a < ext_a && b < ext_b)
        tile[r][tx] = lt_map_value(LT_MAP_PASS, o[0] + a * sa_in + b * sb_in, 0, 0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    long a = ta * LT_TILE + tx;
    for (int r = ty; r < LT_TILE; r += LT_TILE_ROWS) {
      long bb = tb * LT_TILE + r;
      if (a < ext_a && bb < ext_b) LT_PUT(out, o[1] + a * sa_out + bb * sb_out, tile[tx][r]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

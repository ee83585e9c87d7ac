/* Prepended by the host to every .cl file in kernels/ (so the .cl files do not #include it).
 * Specialisation by -D options, each with a default here:
 *   LT_FP64                 set by the host when the device has cl_khr_fp64
 *   LT_COMPUTE_F64          arithmetic in double (else float)
 *   LT_IN0 LT_IN1 LT_IN2 LT_OUT LT_C   operand dtype tokens: f16 bf16 f32 f64 i64
 *   LT_RAW                  operands move as raw bits (copies and fills, no arithmetic)
 * Index arithmetic is 64-bit (long) everywhere; strides are in elements and may be <= 0. */
#ifdef LT_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifdef LT_COMPUTE_F64
typedef double real_t;
#else
typedef float real_t;
#endif

#ifndef LT_IN0
#define LT_IN0 f32
#endif
#ifndef LT_IN1
#define LT_IN1 f32
#endif
#ifndef LT_IN2
#define LT_IN2 f32
#endif
#ifndef LT_OUT
#define LT_OUT f32
#endif
#ifndef LT_C
#define LT_C f32
#endif

#define LT_CAT_(a, b) a##b
#define LT_CAT(a, b) LT_CAT_(a, b)

/* Storage element types (LT_T_f16 ... LT_T_i64) and same-size raw bit types (LT_BITS_*). */
#define LT_T_f16 ushort
#define LT_T_bf16 ushort
#define LT_T_f32 float
#define LT_T_f64 double
#define LT_T_i64 long
#define LT_BITS_f16 ushort
#define LT_BITS_bf16 ushort
#define LT_BITS_f32 uint
#define LT_BITS_f64 ulong
#define LT_BITS_i64 ulong
#ifdef LT_RAW
#define LT_ST(dt) LT_CAT(LT_BITS_, dt)
#else
#define LT_ST(dt) LT_CAT(LT_T_, dt)
#endif

/* Converters, one pair per dtype: lt_load_f16 lt_load_bf16 lt_load_f32 lt_load_f64 lt_load_i64
 * and lt_store_f16 lt_store_bf16 lt_store_f32 lt_store_f64 lt_store_i64. Stores round as the
 * CPU backend does: f16/bf16 once to nearest even (from double through a float rounded to odd,
 * which leaves the second rounding exact), saturating for i64 (NaN -> 0). */
#ifdef LT_COMPUTE_F64
inline float lt_half_source(double v) {
  float f = convert_float_rtz(v);
  return ((double)f == v || isnan(v)) ? f : as_float(as_uint(f) | 1u);
}
#else
inline float lt_half_source(float v) { return v; }
#endif
#define LT_LOAD(dt, p, i) LT_CAT(lt_load_, dt)(p, i)
#define LT_STORE(dt, p, i, v) LT_CAT(lt_store_, dt)(p, i, v)

inline real_t lt_load_f16(global const ushort *p, long i) {
  return (real_t)vload_half(i, (global const half *)p);
}
inline void lt_store_f16(global ushort *p, long i, real_t v) {
  vstore_half_rte(lt_half_source(v), i, (global half *)p);
}
inline real_t lt_load_bf16(global const ushort *p, long i) {
  return (real_t)as_float((uint)p[i] << 16);
}
inline void lt_store_bf16(global ushort *p, long i, real_t v) {
  uint u = as_uint(lt_half_source(v));
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    p[i] = (ushort)((u >> 16) | 0x40u); /* quiet NaN */
    return;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  p[i] = (ushort)(u >> 16);
}
inline real_t lt_load_f32(global const float *p, long i) { return (real_t)p[i]; }
inline void lt_store_f32(global float *p, long i, real_t v) { p[i] = (float)v; }
#ifdef LT_FP64
inline real_t lt_load_f64(global const double *p, long i) { return (real_t)p[i]; }
inline void lt_store_f64(global double *p, long i, real_t v) { p[i] = (double)v; }
#endif
inline real_t lt_load_i64(global const long *p, long i) { return (real_t)p[i]; }
inline void lt_store_i64(global long *p, long i, real_t v) { p[i] = convert_long_sat(v); }

/* Unary and binary ops, numbered as lt_unary_op / lt_binary_op in include/tensor/ops.h. The op
 * is a kernel argument (uniform across the launch), so one program serves every op. */
inline real_t lt_unary(int op, real_t x) {
  switch (op) {
  case 1: return -x;
  case 2: return fabs(x);
  case 3: return sqrt(x);
  case 4: return exp(x);
  case 5: return log(x);
  case 6: return sin(x);
  case 7: return cos(x);
  case 8: return tanh(x);
  case 9: return (real_t)1 / ((real_t)1 + exp(-x));
  case 10: return x > 0 ? x : (isnan(x) ? x : (real_t)0);
  case 11: return (real_t)1 / x;
  case 12: return x * x;
  default: return x;
  }
}

/* MIN/MAX propagate NaN (a + b is NaN when either is). */
inline real_t lt_min(real_t a, real_t b) { return (isnan(a) || isnan(b)) ? a + b : (a < b ? a : b); }
inline real_t lt_max(real_t a, real_t b) { return (isnan(a) || isnan(b)) ? a + b : (a > b ? a : b); }

inline real_t lt_binary(int op, real_t a, real_t b) {
  switch (op) {
  case 0: return a + b;
  case 1: return a * b;
  case 2: return lt_min(a, b);
  case 3: return lt_max(a, b);
  case 4: return a - b;
  case 5: return a / b;
  case 6: return pow(a, b);
  default: return a;
  }
}

/* Row-major decomposition of `linear` over desc[0..rank) (the shape): adds index * stride to
 * offs[t] for each of `ntables` stride tables stored after the shape, rank values each. The
 * outermost dim needs no division, and 32-bit division (far cheaper than 64-bit on GPUs) is
 * used whenever the operands fit. */
inline void lt_unravel(long linear, int rank, constant const long *desc, int ntables,
                       long *offs) {
  for (int d = rank - 1; d > 0; d--) {
    long e = desc[d], i;
    if ((ulong)linear <= 0xffffffffu && (ulong)e <= 0xffffffffu) {
      uint l = (uint)linear, ue = (uint)e;
      i = (long)(l % ue);
      linear = (long)(l / ue);
    } else {
      i = linear % e;
      linear /= e;
    }
    for (int t = 0; t < ntables; t++) offs[t] += i * desc[(t + 1) * rank + d];
  }
  if (rank > 0)
    for (int t = 0; t < ntables; t++) offs[t] += linear * desc[(t + 1) * rank];
}

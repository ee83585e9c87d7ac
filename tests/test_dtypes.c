/* SPDX-License-Identifier: MIT */
/* Integer and bool dtypes (issue 18 A) on every backend: promotion against NumPy 2's table,
 * every integer op x dtype x layout family against an exact reference written with __int128
 * (exact equality), the integer edge cases (2^53+1, 2^63-1, INT64_MIN // -1, unsigned wrap,
 * mixed signed/unsigned promotion), exact reductions and argmax, checked float -> int
 * conversion, the new float ops against the harness's float64 reference, where and clip with
 * NaN, .npy round trips of every dtype, and bad input refused with a message. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lt_dtype int_dtypes[] = {LT_I8, LT_I16, LT_I32, LT_I64, LT_U8, LT_U16, LT_U32, LT_U64};

static bool is_signed(lt_dtype d) {
  return d == LT_I8 || d == LT_I16 || d == LT_I32 || d == LT_I64;
}
static int bits_of(lt_dtype d) { return (int)lt_dtype_size(d) * 8; }

/* The value of dtype d held in `v` (two's complement low bits), exactly. */
static __int128 value_of(lt_dtype d, uint64_t v) {
  if (d == LT_BOOL) return v != 0;
  int b = bits_of(d);
  uint64_t mask = b == 64 ? ~0ull : ((1ull << b) - 1);
  v &= mask;
  if (is_signed(d) && b < 64 && (v >> (b - 1)) & 1) return (__int128)v - ((__int128)1 << b);
  if (is_signed(d) && b == 64) return (__int128)(int64_t)v;
  return (__int128)v;
}

/* v wrapped to dtype d, as value_of would read it back. */
static __int128 wrap(lt_dtype d, __int128 v) {
  if (d == LT_BOOL) return v != 0;
  return value_of(d, (uint64_t)(unsigned __int128)v);
}

/* An element of a tensor of integer or bool dtype, exactly. */
static __int128 get_exact(const lt_tensor *t, const int64_t *index) {
  lt_dtype d = lt_tensor_dtype(t);
  if (is_signed(d)) {
    int64_t v;
    LT_CHECK(lt_tensor_get_i64(t, index, &v));
    return v;
  }
  uint64_t v;
  LT_CHECK(lt_tensor_get_u64(t, index, &v));
  return v;
}

/* Every element of t in C order, exactly (one transfer, not one per element). */
static __int128 *read_exact_all(const lt_tensor *t) {
  lt_tensor *c;
  LT_CHECK(lt_tensor_contiguous(t, LT_DTYPE_INVALID, &c));
  int64_t n = lt_tensor_numel(c);
  size_t es = lt_dtype_size(lt_tensor_dtype(t));
  unsigned char *raw = malloc((size_t)n * es + 1);
  __int128 *out = malloc(sizeof(__int128) * (size_t)(n + 1));
  LT_CHECK(lt_tensor_to_host(c, raw, (size_t)n * es));
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = 0;
    memcpy(&v, raw + (size_t)i * es, es); /* little-endian host */
    if (lt_tensor_dtype(t) == LT_BOOL && v > 1)
      fail_msg("bool element %lld holds byte %llu", (long long)i, (unsigned long long)v);
    out[i] = value_of(lt_tensor_dtype(t), v);
  }
  free(raw);
  lt_tensor_destroy(c);
  return out;
}

/* Edge values first, then random bits. */
static uint64_t random_bits(void) {
  static const uint64_t edges[] = {0,
                                   1,
                                   ~0ull,
                                   2,
                                   ~0ull - 1,
                                   0x7f,
                                   0x80,
                                   0xff,
                                   0x7fff,
                                   0x8000,
                                   0x7fffffff,
                                   0x80000000,
                                   0x7fffffffffffffffull,
                                   0x8000000000000000ull,
                                   (1ull << 53) + 1,
                                   (1ull << 60) + 1,
                                   3,
                                   7,
                                   63,
                                   64,
                                   ~0ull - 6};
  int64_t k = lt_test_rand_int(0, 2 * (int64_t)(sizeof edges / sizeof edges[0]));
  if (k < (int64_t)(sizeof edges / sizeof edges[0])) return edges[k];
  uint64_t r = lt_test_rand_u64();
  return lt_test_rand_int(0, 2) ? r : r % 19 - 9; /* small values exercise division */
}

/* NumPy's integer semantics at the width of dtype d, computed exactly. */
static __int128 ref_binary(lt_binary_op op, lt_dtype d, __int128 a, __int128 b) {
  int w = bits_of(d);
  switch (op) {
  case LT_BINARY_ADD: return d == LT_BOOL ? (a || b) : wrap(d, a + b);
  case LT_BINARY_SUB: return wrap(d, a - b);
  case LT_BINARY_MUL:
    return d == LT_BOOL ? (a && b)
                        : wrap(d, (__int128)((unsigned __int128)a * (unsigned __int128)b));
  case LT_BINARY_MIN: return a < b ? a : b;
  case LT_BINARY_MAX: return a > b ? a : b;
  case LT_BINARY_EQ: return a == b;
  case LT_BINARY_NE: return a != b;
  case LT_BINARY_LT: return a < b;
  case LT_BINARY_LE: return a <= b;
  case LT_BINARY_GT: return a > b;
  case LT_BINARY_GE: return a >= b;
  case LT_BINARY_LOGICAL_AND: return a != 0 && b != 0;
  case LT_BINARY_LOGICAL_OR: return a != 0 || b != 0;
  case LT_BINARY_LOGICAL_XOR: return (a != 0) != (b != 0);
  case LT_BINARY_BITWISE_AND: return wrap(d, a & b);
  case LT_BINARY_BITWISE_OR: return wrap(d, a | b);
  case LT_BINARY_BITWISE_XOR: return wrap(d, a ^ b);
  case LT_BINARY_SHIFT_LEFT:
    if (b < 0 || b >= w) return 0;
    return wrap(d, (__int128)((unsigned __int128)a << (int)b));
  case LT_BINARY_SHIFT_RIGHT:
    if (b < 0 || b >= w) return a < 0 ? -1 : 0;
    return a >> (int)b; /* arithmetic on a signed __int128 */
  case LT_BINARY_FLOOR_DIVIDE: {
    if (b == 0) return 0;
    __int128 q = a / b;
    if (q * b != a && ((a < 0) != (b < 0))) q -= 1;
    return wrap(d, q);
  }
  case LT_BINARY_REMAINDER: {
    if (b == 0) return 0;
    __int128 q = a / b;
    if (q * b != a && ((a < 0) != (b < 0))) q -= 1;
    return wrap(d, a - q * b);
  }
  case LT_BINARY_FMOD: return b == 0 ? 0 : wrap(d, a - (a / b) * b);
  case LT_BINARY_POW: {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    __int128 r = 1;
    for (__int128 e = 0; e < b && e < 200; e++) /* 2^k past the width is 0: stop early */
      r = wrap(d, (__int128)((unsigned __int128)r * (unsigned __int128)a));
    if (b >= 200 && !(a == 0 || a == 1 || a == -1)) { /* exponent huge: by squaring */
      unsigned __int128 x = (unsigned __int128)a, rr = 1;
      uint64_t e = (uint64_t)b;
      while (e) {
        if (e & 1) rr = (unsigned __int128)wrap(d, (__int128)(rr * x));
        x = (unsigned __int128)wrap(d, (__int128)(x * x));
        e >>= 1;
      }
      return wrap(d, (__int128)rr);
    }
    return r;
  }
  default: break;
  }
  fail_msg("no reference for op %d", (int)op);
  return 0;
}

static bool is_compare(lt_binary_op op) {
  return op >= LT_BINARY_EQ && op <= LT_BINARY_LOGICAL_XOR;
}

static const lt_binary_op int_ops[] = {
    LT_BINARY_ADD,         LT_BINARY_SUB,         LT_BINARY_MUL,         LT_BINARY_MIN,
    LT_BINARY_MAX,         LT_BINARY_EQ,          LT_BINARY_NE,          LT_BINARY_LT,
    LT_BINARY_LE,          LT_BINARY_GT,          LT_BINARY_GE,          LT_BINARY_LOGICAL_AND,
    LT_BINARY_LOGICAL_OR,  LT_BINARY_LOGICAL_XOR, LT_BINARY_BITWISE_AND, LT_BINARY_BITWISE_OR,
    LT_BINARY_BITWISE_XOR, LT_BINARY_SHIFT_LEFT,  LT_BINARY_SHIFT_RIGHT, LT_BINARY_FLOOR_DIVIDE,
    LT_BINARY_REMAINDER,   LT_BINARY_FMOD,        LT_BINARY_POW};

/* Checks out (shape of a broadcast with b) against op on a, b elementwise. */
static void check_binary(lt_binary_op op, const lt_tensor *a, const lt_tensor *b,
                         const lt_tensor *out, lt_dtype d, const char *what) {
  int rank = lt_tensor_rank(out);
  const int64_t *shape = lt_tensor_shape(out);
  int64_t n = lt_test_numel(rank, shape), idx[LT_MAX_RANK];
  __int128 *av = read_exact_all(a), *bv = read_exact_all(b), *ov = read_exact_all(out);
  int rb = lt_tensor_rank(b);
  for (int64_t i = 0; i < n; i++) {
    lt_test_unravel(i, rank, shape, idx);
    int64_t jb = 0;
    for (int k = 0; k < rb; k++) {
      int64_t e = lt_tensor_shape(b)[k];
      jb = jb * e + (e == 1 ? 0 : idx[rank - rb + k]);
    }
    __int128 x = av[i], y = bv[jb], got = ov[i];
    __int128 want = ref_binary(op, d, x, y);
    if (got != want)
      fail_msg("%s: op %d on %s: %lld op %lld gave %lld, expected %lld (element %lld)", what,
               (int)op, lt_dtype_name(d), (long long)x, (long long)y, (long long)got,
               (long long)want, (long long)i);
  }
  free(av);
  free(bv);
  free(ov);
}

/* Every integer op x integer dtype x layout family, one-shot (contiguous output) and through a
 * plan into a transposed output. */
static void run_int_binary(lt_context *ctx) {
  int64_t shape[2] = {3, 5}, bshape[1] = {5};
  for (size_t di = 0; di < sizeof int_dtypes / sizeof int_dtypes[0]; di++) {
    lt_dtype d = int_dtypes[di];
    for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++) {
      lt_tensor *a = lt_test_bits_tensor(ctx, d, 2, shape, (lt_test_layout)layout, random_bits);
      /* b broadcast over rows: every (a, b) pair of edge values meets somewhere */
      lt_tensor *b = lt_test_bits_tensor(
          ctx, d, 1, bshape,
          layout == LT_LAYOUT_BROADCAST ? LT_LAYOUT_NEGATIVE : (lt_test_layout)layout, random_bits);
      for (size_t oi = 0; oi < sizeof int_ops / sizeof int_ops[0]; oi++) {
        lt_binary_op op = int_ops[oi];
        lt_tensor *o;
        lt_status st = lt_binary(op, a, b, &o);
        if (op == LT_BINARY_POW && is_signed(d) && st == LT_ERR_INVALID_ARGUMENT) {
          /* One-shot refuses negative exponents, as NumPy (tests/python checks when); a plan
           * computes them (0 unless the base is 1 or -1), which the reference checks. */
          assert_non_null(strstr(lt_last_error(), "negative integer powers"));
          int32_t mij[2] = {0, 1}, mj[1] = {1};
          lt_plan *plan;
          LT_CHECK(lt_tensor_zeros(ctx, d, 2, shape, &o));
          LT_CHECK(lt_plan_binary(a, mij, b, mj, op, o, mij, NULL, &plan));
          const lt_tensor *ins[2] = {a, b};
          LT_CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, o));
          lt_plan_destroy(plan);
        } else {
          LT_CHECK(st);
        }
        assert_int_equal(lt_tensor_dtype(o), is_compare(op) ? LT_BOOL : d);
        check_binary(op, a, b, o, d, lt_test_layout_name((lt_test_layout)layout));
        lt_tensor_destroy(o);
      }
      /* plan with a transposed output view */
      lt_tensor *base, *dt;
      int64_t tshape[2] = {5, 3};
      LT_CHECK(lt_tensor_zeros(ctx, d, 2, tshape, &base));
      LT_CHECK(lt_view_transpose(base, 0, 1, &dt));
      int32_t mij[2] = {0, 1}, mj[1] = {1};
      lt_plan *plan;
      LT_CHECK(lt_plan_binary(a, mij, b, mj, LT_BINARY_FLOOR_DIVIDE, dt, mij, NULL, &plan));
      const lt_tensor *ins[2] = {a, b};
      LT_CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, dt));
      check_binary(LT_BINARY_FLOOR_DIVIDE, a, b, dt, d, "plan, transposed output");
      lt_plan_destroy(plan);
      lt_tensor_destroy(dt);
      lt_tensor_destroy(base);
      lt_tensor_destroy(a);
      lt_tensor_destroy(b);
    }
  }
}
static void test_int_binary(void **state) {
  (void)state;
  lt_test_on_each_device(run_int_binary);
}

/* Bool: arithmetic as NumPy (+ is or, * is and), comparisons, logical and bitwise ops. */
static void run_bool_ops(lt_context *ctx) {
  int64_t shape[2] = {4, 4};
  uint8_t av[16], bv[16];
  for (int i = 0; i < 16; i++) {
    av[i] = (uint8_t)(i & 1);
    bv[i] = (uint8_t)((i >> 1) & 1);
  }
  lt_tensor *a, *b;
  LT_CHECK(lt_tensor_from_host(ctx, LT_BOOL, 2, shape, NULL, av, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_BOOL, 2, shape, NULL, bv, &b));
  static const lt_binary_op ops[] = {
      LT_BINARY_ADD,        LT_BINARY_MUL,        LT_BINARY_MIN,         LT_BINARY_MAX,
      LT_BINARY_EQ,         LT_BINARY_LT,         LT_BINARY_LOGICAL_XOR, LT_BINARY_BITWISE_AND,
      LT_BINARY_BITWISE_OR, LT_BINARY_BITWISE_XOR};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    lt_tensor *o;
    LT_CHECK(lt_binary(ops[k], a, b, &o));
    assert_int_equal(lt_tensor_dtype(o), LT_BOOL);
    check_binary(ops[k], a, b, o, LT_BOOL, "bool");
    lt_tensor_destroy(o);
  }
  lt_tensor *o;
  LT_CHECK(lt_unary(LT_UNARY_INVERT, a, &o)); /* ~bool is logical not */
  int64_t idx[2] = {0, 0};
  for (int i = 0; i < 16; i++) {
    idx[0] = i / 4;
    idx[1] = i % 4;
    assert_true(get_exact(o, idx) == !av[i]);
  }
  lt_tensor_destroy(o);
  /* sums of bools count, as i64 */
  LT_CHECK(lt_reduce(LT_REDUCE_SUM, a, -1, NULL, false, &o));
  assert_int_equal(lt_tensor_dtype(o), LT_I64);
  assert_true(get_exact(o, NULL) == 8);
  lt_tensor_destroy(o);
  LT_CHECK_FAILS(lt_binary(LT_BINARY_SUB, a, b, &o), LT_ERR_DTYPE);
  assert_non_null(strstr(lt_last_error(), "bool"));
  LT_CHECK_FAILS(lt_unary(LT_UNARY_NEG, a, &o), LT_ERR_DTYPE);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
}
static void test_bool_ops(void **state) {
  (void)state;
  lt_test_on_each_device(run_bool_ops);
}

/* Integer unary ops at the dtype's width (abs(INT_MIN) wraps, as NumPy). */
static __int128 ref_unary(lt_unary_op op, lt_dtype d, __int128 x) {
  switch (op) {
  case LT_UNARY_NEG: return wrap(d, -x);
  case LT_UNARY_ABS: return wrap(d, x < 0 ? -x : x);
  case LT_UNARY_SQUARE: return wrap(d, (__int128)((unsigned __int128)x * (unsigned __int128)x));
  case LT_UNARY_SIGN: return wrap(d, x > 0 ? 1 : x < 0 ? -1 : 0);
  case LT_UNARY_INVERT: return wrap(d, ~x);
  case LT_UNARY_NOT: return x == 0;
  case LT_UNARY_RELU: return x > 0 ? x : 0;
  case LT_UNARY_FLOOR:
  case LT_UNARY_ROUND: return x;
  case LT_UNARY_ISNAN: return 0;
  case LT_UNARY_ISFINITE: return 1;
  default: fail_msg("no reference for unary op %d", (int)op);
  }
  return 0;
}

static void run_int_unary(lt_context *ctx) {
  static const lt_unary_op ops[] = {LT_UNARY_NEG,   LT_UNARY_ABS,     LT_UNARY_SQUARE,
                                    LT_UNARY_SIGN,  LT_UNARY_INVERT,  LT_UNARY_NOT,
                                    LT_UNARY_RELU,  LT_UNARY_FLOOR,   LT_UNARY_ROUND,
                                    LT_UNARY_ISNAN, LT_UNARY_ISFINITE};
  int64_t shape[2] = {4, 3};
  for (size_t di = 0; di < sizeof int_dtypes / sizeof int_dtypes[0]; di++) {
    lt_dtype d = int_dtypes[di];
    lt_tensor *a = lt_test_bits_tensor(ctx, d, 2, shape, LT_LAYOUT_NEGATIVE, random_bits);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      lt_tensor *o;
      LT_CHECK(lt_unary(ops[k], a, &o));
      bool pred = ops[k] == LT_UNARY_NOT || ops[k] == LT_UNARY_ISNAN || ops[k] == LT_UNARY_ISFINITE;
      assert_int_equal(lt_tensor_dtype(o), pred ? LT_BOOL : d);
      int64_t idx[2];
      for (int64_t i = 0; i < 12; i++) {
        lt_test_unravel(i, 2, shape, idx);
        __int128 x = get_exact(a, idx), got = get_exact(o, idx), want = ref_unary(ops[k], d, x);
        if (got != want)
          fail_msg("unary %d on %s %lld gave %lld, expected %lld", (int)ops[k], lt_dtype_name(d),
                   (long long)x, (long long)got, (long long)want);
      }
      lt_tensor_destroy(o);
    }
    lt_tensor_destroy(a);
  }
}
static void test_int_unary(void **state) {
  (void)state;
  lt_test_on_each_device(run_int_unary);
}

/* The examples, and exact reductions over strided layouts. */
static void run_exact_examples(lt_context *ctx) {
  int64_t one = 1, two = 2;
  int64_t v[2] = {(1ll << 60) + 1, 1};
  lt_tensor *a, *b, *o;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &one, NULL, &v[0], &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &one, NULL, &v[1], &b));
  LT_CHECK(lt_add(a, b, &o));
  int64_t i0 = 0, got;
  LT_CHECK(lt_tensor_get_i64(o, &i0, &got));
  assert_true(got == (1ll << 60) + 2);
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  int64_t w[2] = {1ll << 60, (1ll << 60) + 1};
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &two, NULL, w, &a));
  LT_CHECK(lt_argmax(a, 0, &o));
  LT_CHECK(lt_tensor_get_i64(o, &i0, &got));
  assert_int_equal(got, 1);
  lt_tensor_destroy(o);
  LT_CHECK(lt_reduce(LT_REDUCE_MAX, a, -1, NULL, false, &o));
  assert_true(get_exact(o, NULL) == (1ll << 60) + 1);
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  int64_t x = (1ll << 62) + 1;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 0, NULL, NULL, &x, &a));
  LT_CHECK(lt_tensor_get_i64(a, NULL, &got));
  assert_true(got == x);
  lt_tensor_destroy(a);
  /* INT64_MIN // -1 wraps; 2^63 - 1 + 1 wraps */
  int64_t m[2] = {INT64_MIN, INT64_MAX}, d1[2] = {-1, 1};
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &two, NULL, m, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &two, NULL, d1, &b));
  LT_CHECK(lt_binary(LT_BINARY_FLOOR_DIVIDE, a, b, &o));
  assert_true(get_exact(o, &i0) == INT64_MIN);
  lt_tensor_destroy(o);
  LT_CHECK(lt_add(a, b, &o));
  int64_t i1 = 1;
  assert_true(get_exact(o, &i1) == INT64_MIN);
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  /* sums: int32 -> i64 exact, uint -> u64 wrapping, over every layout family and axis */
  int64_t shape[3] = {3, 4, 5};
  static const lt_dtype ds[] = {LT_I32, LT_U8, LT_U64, LT_I64, LT_I8, LT_I16};
  for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++)
    for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
      for (int axis = -1; axis < 3; axis++) {
        a = lt_test_bits_tensor(ctx, ds[di], 3, shape, (lt_test_layout)layout, random_bits);
        for (int op = 0; op < 5; op++) { /* SUM PROD MIN MAX, and MAXABS as op 4 */
          lt_reduce_op rop = op == 4 ? LT_REDUCE_MAXABS : (lt_reduce_op)op;
          LT_CHECK(lt_reduce(rop, a, axis < 0 ? -1 : 1, &axis, false, &o));
          bool unsig = ds[di] == LT_U8 || ds[di] == LT_U64;
          lt_dtype rd = op >= 2 ? ds[di] : unsig ? LT_U64 : LT_I64;
          assert_int_equal(lt_tensor_dtype(o), rd);
          int64_t n = lt_tensor_numel(o), idx[3], oidx[3];
          __int128 *av = read_exact_all(a), *ov = read_exact_all(o);
          for (int64_t k = 0; k < n; k++) {
            lt_test_unravel(k, lt_tensor_rank(o), lt_tensor_shape(o), oidx);
            __int128 acc = op == 1 ? 1 : 0;
            bool first = true;
            for (int64_t e = 0; e < 60; e++) {
              lt_test_unravel(e, 3, shape, idx);
              bool match = true;
              for (int q = 0, r = 0; q < 3; q++) {
                if (axis < 0 || q == axis) continue;
                match &= idx[q] == oidx[r++];
              }
              if (!match) continue;
              __int128 val = av[e];
              if (op == 0) acc = wrap(rd, acc + val);
              if (op == 1)
                acc = wrap(rd, (__int128)((unsigned __int128)acc * (unsigned __int128)val));
              if (op == 2) acc = first || val < acc ? val : acc;
              if (op == 3) acc = first || val > acc ? val : acc;
              /* |x| in the input's dtype (|INT8_MIN| wraps to itself), as NumPy's abs, then max */
              __int128 mag = wrap(rd, val < 0 ? -val : val);
              if (op == 4) acc = first || mag > acc ? mag : acc;
              first = false;
            }
            if (ov[k] != acc)
              fail_msg("reduce op %d of %s (%s, axis %d) element %lld: %lld, expected %lld", op,
                       lt_dtype_name(ds[di]), lt_test_layout_name((lt_test_layout)layout), axis,
                       (long long)k, (long long)ov[k], (long long)acc);
          }
          free(av);
          free(ov);
          lt_tensor_destroy(o);
        }
        if (axis >= 0) { /* argmax / argmin, first occurrence */
          LT_CHECK(lt_argmin(a, axis, &o));
          lt_tensor_destroy(o);
        }
        lt_tensor_destroy(a);
      }
}
static void test_exact_examples(void **state) {
  (void)state;
  lt_test_on_each_device(run_exact_examples);
}

/* NumPy 2's promotion table (np.promote_types), plus our bf16 placements. */
static void test_promotion(void **state) {
  (void)state;
  static const lt_dtype t[][3] = {
      {LT_I8, LT_U8, LT_I16},    {LT_I16, LT_U16, LT_I32},    {LT_I32, LT_U32, LT_I64},
      {LT_I64, LT_U64, LT_F64},  {LT_I8, LT_U64, LT_F64},     {LT_U8, LT_I16, LT_I16},
      {LT_U16, LT_I16, LT_I32},  {LT_U32, LT_I64, LT_I64},    {LT_U8, LT_U16, LT_U16},
      {LT_I8, LT_I32, LT_I32},   {LT_BOOL, LT_BOOL, LT_BOOL}, {LT_BOOL, LT_U8, LT_U8},
      {LT_BOOL, LT_F16, LT_F16}, {LT_I8, LT_F16, LT_F16},     {LT_U8, LT_F16, LT_F16},
      {LT_I16, LT_F16, LT_F32},  {LT_U16, LT_F16, LT_F32},    {LT_I32, LT_F16, LT_F64},
      {LT_I8, LT_F32, LT_F32},   {LT_I16, LT_F32, LT_F32},    {LT_I32, LT_F32, LT_F64},
      {LT_I64, LT_F32, LT_F64},  {LT_U64, LT_F32, LT_F64},    {LT_I64, LT_F64, LT_F64},
      {LT_F16, LT_F32, LT_F32},  {LT_F16, LT_BF16, LT_F32},   {LT_BF16, LT_F32, LT_F32},
      {LT_U8, LT_BF16, LT_BF16}, {LT_U32, LT_U64, LT_U64},    {LT_I8, LT_BOOL, LT_I8}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    lt_dtype r1, r2;
    LT_CHECK(lt_dtype_promote(t[i][0], t[i][1], &r1));
    LT_CHECK(lt_dtype_promote(t[i][1], t[i][0], &r2));
    if (r1 != t[i][2] || r2 != t[i][2])
      fail_msg("promote(%s, %s) = %s / %s, expected %s", lt_dtype_name(t[i][0]),
               lt_dtype_name(t[i][1]), lt_dtype_name(r1), lt_dtype_name(r2),
               lt_dtype_name(t[i][2]));
  }
  lt_dtype r;
  LT_CHECK_FAILS(lt_dtype_promote((lt_dtype)99, LT_F32, &r), LT_ERR_DTYPE);
  for (int d = LT_F16; d <= LT_BOOL; d++) {
    LT_CHECK(lt_dtype_from_name(lt_dtype_name((lt_dtype)d), &r));
    assert_int_equal(r, d);
  }
}

/* Mixed signed/unsigned and int/float promotion through one-shot calls, values exact. */
static void run_mixed(lt_context *ctx) {
  int64_t n = 3;
  int8_t a8[3] = {-128, 127, -1};
  uint8_t u8[3] = {255, 1, 255};
  lt_tensor *a, *b, *o;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I8, 1, &n, NULL, a8, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_U8, 1, &n, NULL, u8, &b));
  LT_CHECK(lt_add(a, b, &o));
  assert_int_equal(lt_tensor_dtype(o), LT_I16);
  for (int64_t i = 0; i < 3; i++)
    assert_true(get_exact(o, &i) == a8[i] + u8[i]);
  lt_tensor_destroy(o);
  LT_CHECK(lt_binary(LT_BINARY_LT, a, b, &o)); /* compared as values, not bits */
  for (int64_t i = 0; i < 3; i++)
    assert_true(get_exact(o, &i) == (a8[i] < u8[i]));
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  uint64_t big[3] = {(1ull << 63) + 5, 3, ~0ull};
  int64_t neg[3] = {-1, -(1ll << 53) - 1, 0};
  LT_CHECK(lt_tensor_from_host(ctx, LT_U64, 1, &n, NULL, big, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &n, NULL, neg, &b));
  LT_CHECK(lt_add(a, b, &o));
  assert_int_equal(lt_tensor_dtype(o), LT_F64);
  lt_tensor_destroy(o);
  uint64_t u;
  int64_t i2 = 2;
  LT_CHECK(lt_tensor_get_u64(a, &i2, &u));
  assert_true(u == ~0ull);
  int64_t s;
  LT_CHECK_FAILS(lt_tensor_get_i64(a, &i2, &s), LT_ERR_DTYPE);
  LT_CHECK(lt_reduce(LT_REDUCE_SUM, a, -1, NULL, false, &o)); /* u64 sums wrap */
  assert_true(get_exact(o, NULL) == (__int128)(uint64_t)((1ull << 63) + 5 + 3 + ~0ull));
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
}
static void test_mixed(void **state) {
  (void)state;
  lt_test_on_each_device(run_mixed);
}

/* Float to integer conversion is checked; integer conversions wrap. */
/* Integers to bf16 are rounded once, from the exact value: through a float or a double first,
 * values past 2^24 / 2^53 could land on a bf16 tie and round the wrong way. */
static void integers_to_bf16(lt_context *ctx) {
  static const struct {
    lt_dtype from;
    uint64_t bits;
    double want;
  } cases[] = {
      {LT_I32, (1u << 24) + (1u << 16) + 1, 16908288.0},
      {LT_I32, (1u << 24) + (1u << 16), 16777216.0}, /* the exact tie: to even */
      {LT_I64, (1ull << 62) + (1ull << 54) + 1, 4647714815446351872.0},
      {LT_I64, (uint64_t) - (int64_t)((1ull << 62) + (1ull << 54) + 1), -4647714815446351872.0},
      {LT_I64, (1ull << 62) + (1ull << 54), 4611686018427387904.0},
      {LT_U64, (1ull << 63) + (1ull << 55) + 1, 9295429630892703744.0},
      {LT_I64, 0x7fffffffffffffffull, 9223372036854775808.0}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int64_t one = 1;
    lt_tensor *a, *o;
    LT_CHECK(lt_tensor_from_host(ctx, cases[k].from, 1, &one, NULL, &cases[k].bits, &a));
    LT_CHECK(lt_tensor_contiguous(a, LT_BF16, &o));
    uint16_t h;
    LT_CHECK(lt_tensor_to_host(o, &h, sizeof h));
    if (lt_bf16_to_f32(h) != (float)cases[k].want)
      fail_msg("case %zu: %s %llu -> bf16 %.9g, expected %.9g", k, lt_dtype_name(cases[k].from),
               (unsigned long long)cases[k].bits, (double)lt_bf16_to_f32(h), cases[k].want);
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
  }
}

static void run_conversion(lt_context *ctx) {
  int64_t n = 3;
  integers_to_bf16(ctx);
  static const struct {
    float v[3];
    lt_dtype to;
    lt_status st;
  } cases[] = {{{1.5f, -2.7f, 100.f}, LT_I8, LT_OK},
               {{NAN, 1, 2}, LT_I32, LT_ERR_OUT_OF_RANGE},
               {{INFINITY, 1, 2}, LT_I64, LT_ERR_OUT_OF_RANGE},
               {{-1.f, 0, 0}, LT_U8, LT_ERR_OUT_OF_RANGE},
               {{255.9f, 0, 1}, LT_U8, LT_OK},
               {{3e9f, 0, 0}, LT_I32, LT_ERR_OUT_OF_RANGE},
               {{9.3e18f, 0, 0}, LT_I64, LT_ERR_OUT_OF_RANGE},
               {{-0.9f, 0, 0}, LT_U16, LT_OK},
               {{1.8e19f, 0, 0}, LT_U64, LT_OK},
               {{NAN, 0, 0}, LT_BOOL, LT_OK}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    lt_tensor *a, *o = NULL;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, &n, NULL, cases[k].v, &a));
    lt_clear_error();
    lt_status st = lt_tensor_contiguous(a, cases[k].to, &o);
    if (st != cases[k].st)
      fail_msg("case %zu: %s, expected %s (%s)", k, lt_status_string(st),
               lt_status_string(cases[k].st), lt_last_error());
    if (st == LT_OK) {
      for (int64_t i = 0; i < 3; i++) {
        double v = cases[k].v[i];
        __int128 want = cases[k].to == LT_BOOL ? v != 0 : (__int128)truncf(cases[k].v[i]);
        if (cases[k].to == LT_U64) want = (__int128)(uint64_t)cases[k].v[i];
        assert_true(get_exact(o, &i) == want);
      }
    } else {
      assert_null(o);
      assert_non_null(strstr(lt_last_error(), lt_dtype_name(cases[k].to)));
    }
    lt_tensor_destroy(o);
    /* lt_tensor_copy_into makes the same check, before dst changes; from a stepped view */
    lt_tensor *dst, *wide, *step;
    int64_t n2 = 6;
    float v2[6];
    for (int i = 0; i < 6; i++)
      v2[i] = i % 2 ? 5.f : cases[k].v[i / 2];
    LT_CHECK(lt_tensor_full(ctx, cases[k].to, 1, &n, 1.0, &dst));
    LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, &n2, NULL, v2, &wide));
    LT_CHECK(lt_view_slice(wide, 0, 0, 6, 2, &step));
    lt_clear_error();
    st = lt_tensor_copy_into(dst, step);
    if (st != cases[k].st)
      fail_msg("copy_into, case %zu: %s, expected %s (%s)", k, lt_status_string(st),
               lt_status_string(cases[k].st), lt_last_error());
    for (int64_t i = 0; i < 3; i++) {
      __int128 want = cases[k].to == LT_BOOL ? cases[k].v[i] != 0 : (__int128)truncf(cases[k].v[i]);
      if (cases[k].to == LT_U64) want = (__int128)(uint64_t)cases[k].v[i];
      assert_true(get_exact(dst, &i) == (st == LT_OK ? want : 1));
    }
    if (st != LT_OK) assert_non_null(strstr(lt_last_error(), "lt_tensor_copy_into"));
    lt_tensor_destroy(step);
    lt_tensor_destroy(wide);
    lt_tensor_destroy(dst);
    lt_tensor_destroy(a);
  }
  /* A float einsum or contraction into an integer or bool output is refused at plan time (its
   * store could not check the values); an integer one is exact. */
  {
    float fv[3] = {1.5f, 2.f, 3.f};
    lt_tensor *f, *d, *di;
    lt_plan *plan = NULL;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, &n, NULL, fv, &f));
    for (lt_dtype to = LT_I64; to <= LT_BOOL; to++) {
      LT_CHECK(lt_tensor_zeros(ctx, to, 1, &n, &d));
      const lt_tensor *in[2] = {f, f};
      lt_clear_error();
      assert_int_equal(lt_plan_einsum("i,i->i", 2, in, d, NULL, &plan), LT_ERR_DTYPE);
      assert_null(plan);
      assert_non_null(strstr(lt_last_error(), lt_dtype_name(to)));
      const int32_t m[1] = {'i'};
      assert_int_equal(lt_plan_contraction(f, m, f, m, NULL, NULL, d, m, NULL, &plan),
                       LT_ERR_DTYPE);
      assert_non_null(strstr(lt_last_error(), "lt_plan_contraction"));
      LT_CHECK(lt_tensor_contiguous(f, to, &di));
      const lt_tensor *ii[2] = {di, di};
      LT_CHECK(lt_plan_einsum("i,i->i", 2, ii, d, NULL, &plan)); /* exact: accepted */
      lt_plan_destroy(plan);
      plan = NULL;
      lt_tensor_destroy(di);
      lt_tensor_destroy(d);
    }
    lt_tensor_destroy(f);
  }
  int32_t iv[3] = {300, -129, -1};
  lt_tensor *a, *o;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I32, 1, &n, NULL, iv, &a));
  LT_CHECK(lt_tensor_contiguous(a, LT_U8, &o));
  for (int64_t i = 0; i < 3; i++)
    assert_true(get_exact(o, &i) == (uint8_t)iv[i]);
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  int64_t big = (1ll << 53) + 1;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 0, NULL, NULL, &big, &a));
  LT_CHECK(lt_tensor_contiguous(a, LT_U64, &o));
  assert_true(get_exact(o, NULL) == big);
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
}
static void test_conversion(void **state) {
  (void)state;
  lt_test_on_each_device(run_conversion);
}

/* The new float ops against the harness's float64 reference, f32 and f64, layouts. */
static void run_float_ops(lt_context *ctx) {
  static const lt_unary_op un[] = {
      LT_UNARY_LOG1P, LT_UNARY_EXPM1, LT_UNARY_FLOOR,    LT_UNARY_CEIL,
      LT_UNARY_ROUND, LT_UNARY_TRUNC, LT_UNARY_SIGN,     LT_UNARY_ERF,
      LT_UNARY_GELU,  LT_UNARY_SILU,  LT_UNARY_SOFTPLUS, LT_UNARY_RSQRT,
      LT_UNARY_NOT,   LT_UNARY_ISNAN, LT_UNARY_ISINF,    LT_UNARY_ISFINITE};
  static const lt_binary_op bin[] = {
      LT_BINARY_EQ,        LT_BINARY_NE,   LT_BINARY_LT,          LT_BINARY_LE,
      LT_BINARY_GT,        LT_BINARY_GE,   LT_BINARY_LOGICAL_AND, LT_BINARY_FLOOR_DIVIDE,
      LT_BINARY_REMAINDER, LT_BINARY_FMOD, LT_BINARY_ATAN2,       LT_BINARY_HYPOT};
  static const lt_dtype fd[] = {LT_F32, LT_F64};
  int64_t shape[2] = {4, 6};
  for (size_t di = 0; di < 2; di++)
    for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++) {
      lt_dtype d = fd[di];
      /* values on a grid of halves so rounding ties, equalities and signs all occur */
      lt_tensor *a = lt_test_random_tensor_range(ctx, d, 2, shape, (lt_test_layout)layout, -3, 3);
      lt_tensor *b = lt_test_random_tensor_range(ctx, d, 2, shape, (lt_test_layout)layout, 0.5, 3);
      int64_t idx[2];
      for (int64_t i = 0; i < 24; i++) {
        lt_test_unravel(i, 2, shape, idx);
        double v = lt_test_rand_int(-6, 6) * 0.5;
        LT_CHECK(lt_tensor_set(a, idx, i == 5 ? NAN : i == 7 ? INFINITY : v));
        if (i % 3 == 0) LT_CHECK(lt_tensor_set(b, idx, v == 0 ? 1.5 : v));
      }
      double *av = lt_test_read_all(a), *bv = lt_test_read_all(b);
      for (size_t k = 0; k < sizeof un / sizeof un[0]; k++) {
        lt_tensor *o;
        LT_CHECK(lt_unary(un[k], a, &o));
        double *ov = lt_test_read_all(o);
        for (int64_t i = 0; i < 24; i++) {
          double want = lt_test_unary_ref(un[k], av[i]);
          if (lt_tensor_dtype(o) != LT_BOOL) want = lt_test_round_to(d, want);
          double got = ov[i], tol = 4 * lt_test_tolerance(d, 1) * (1 + fabs(want));
          bool ok = (isnan(want) && isnan(got)) || want == got || fabs(got - want) <= tol;
          if (!ok)
            fail_msg("unary %d on %s(%g): %.17g, expected %.17g", (int)un[k], lt_dtype_name(d),
                     av[i], got, want);
        }
        free(ov);
        lt_tensor_destroy(o);
      }
      for (size_t k = 0; k < sizeof bin / sizeof bin[0]; k++) {
        lt_tensor *o;
        LT_CHECK(lt_binary(bin[k], a, b, &o));
        double *ov = lt_test_read_all(o);
        for (int64_t i = 0; i < 24; i++) {
          double want = lt_test_binary_ref(bin[k], av[i], bv[i]);
          if (lt_tensor_dtype(o) != LT_BOOL) want = lt_test_round_to(d, want);
          double got = ov[i], tol = 4 * lt_test_tolerance(d, 1) * (1 + fabs(want));
          bool ok = (isnan(want) && isnan(got)) || want == got || fabs(got - want) <= tol;
          if (!ok)
            fail_msg("binary %d on %s(%g, %g): %.17g, expected %.17g", (int)bin[k],
                     lt_dtype_name(d), av[i], bv[i], got, want);
        }
        free(ov);
        lt_tensor_destroy(o);
      }
      /* where(a > b, a, b) is max without NaN propagation; clip(a, -1, b) */
      lt_tensor *c, *o, *lo;
      LT_CHECK(lt_binary(LT_BINARY_GT, a, b, &c));
      LT_CHECK(lt_where(c, a, b, &o));
      double *ov = lt_test_read_all(o);
      for (int64_t i = 0; i < 24; i++) {
        double want = av[i] > bv[i] ? av[i] : bv[i];
        assert_true(ov[i] == want);
      }
      free(ov);
      lt_tensor_destroy(o);
      double m1 = -1;
      LT_CHECK(lt_tensor_zeros(ctx, d, 0, NULL, &lo));
      LT_CHECK(lt_tensor_set(lo, NULL, m1));
      LT_CHECK(lt_clip(a, lo, b, &o));
      ov = lt_test_read_all(o);
      for (int64_t i = 0; i < 24; i++) {
        double want = isnan(av[i]) ? NAN : fmin(fmax(av[i], -1), bv[i]);
        assert_true((isnan(want) && isnan(ov[i])) || ov[i] == want);
      }
      free(ov);
      lt_tensor_destroy(o);
      lt_tensor_destroy(lo);
      lt_tensor_destroy(c);
      free(av);
      free(bv);
      lt_tensor_destroy(a);
      lt_tensor_destroy(b);
    }
}
static void test_float_ops(void **state) {
  (void)state;
  lt_test_on_each_device(run_float_ops);
}

/* .npy: every dtype round-trips bit for bit; big-endian integers load. */
static void run_npy(lt_context *ctx) {
  for (int d = LT_F16; d <= LT_BOOL; d++) {
    if (d == LT_BF16) continue; /* no .npy code */
    int64_t shape[2] = {2, 3};
    lt_tensor *a = lt_test_random_tensor(ctx, (lt_dtype)d, 2, shape, LT_LAYOUT_TRANSPOSED);
    char path[64];
    lt_test_temp_path(path);
    LT_CHECK(lt_npy_save(a, path));
    lt_tensor *b;
    LT_CHECK(lt_npy_load(ctx, path, &b));
    remove(path);
    assert_int_equal(lt_tensor_dtype(b), d);
    double *av = lt_test_read_all(a), *bv = lt_test_read_all(b);
    assert_memory_equal(av, bv, 6 * sizeof(double));
    free(av);
    free(bv);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
  }
  const unsigned char be[8] = {0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x01, 0x00};
  lt_test_npy_bytes f =
      lt_test_make_npy(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be, 8, true);
  lt_tensor *t;
  LT_CHECK(lt_npy_load_buffer(ctx, f.data, f.size, &t));
  assert_int_equal(lt_tensor_dtype(t), LT_I32);
  int64_t i0 = 0, i1 = 1;
  assert_true(get_exact(t, &i0) == -2 && get_exact(t, &i1) == 256);
  lt_tensor_destroy(t);
  free(f.data);
}
static void test_npy(void **state) {
  (void)state;
  lt_test_on_each_device(run_npy);
}

/* Bad input: a status and a message naming the operand. */
static void run_errors(lt_context *ctx) {
  int64_t s3 = 3, s4 = 4;
  lt_tensor *f, *i, *c, *w, *o = NULL;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 1, &s3, &f));
  LT_CHECK(lt_tensor_zeros(ctx, LT_I32, 1, &s3, &i));
  LT_CHECK(lt_tensor_zeros(ctx, LT_BOOL, 1, &s3, &c));
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 1, &s4, &w));
  LT_CHECK_FAILS(lt_binary(LT_BINARY_BITWISE_AND, f, i, &o), LT_ERR_DTYPE);
  assert_non_null(strstr(lt_last_error(), "bitwise_and"));
  LT_CHECK_FAILS(lt_unary(LT_UNARY_INVERT, f, &o), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_where(i, f, f, &o), LT_ERR_DTYPE);
  assert_non_null(strstr(lt_last_error(), "cond"));
  LT_CHECK_FAILS(lt_where(c, f, w, &o), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), " b "));
  LT_CHECK_FAILS(lt_clip(f, w, f, &o), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "lo"));
  LT_CHECK_FAILS(lt_binary(LT_BINARY_WHERE, f, f, &o), LT_ERR_INVALID_ARGUMENT);
  assert_null(o);
  int32_t m[1] = {0};
  lt_plan *plan;
  LT_CHECK_FAILS(lt_plan_binary(f, m, f, m, LT_BINARY_WHERE, f, m, NULL, &plan),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(
      lt_plan_trinary(c, m, f, m, f, m, LT_BINARY_WHERE, LT_BINARY_ADD, f, m, NULL, &plan),
      LT_ERR_INVALID_ARGUMENT);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_compute_dtype(opts, LT_I64));
  LT_CHECK_FAILS(lt_plan_binary(f, m, f, m, LT_BINARY_DIV, f, m, opts, &plan), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_plan_options_set_compute_dtype(opts, LT_BOOL), LT_ERR_DTYPE);
  lt_plan_options_destroy(opts);
  int64_t v;
  LT_CHECK_FAILS(lt_tensor_get_i64(f, NULL, &v), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_tensor_set_u64(f, NULL, 1), LT_ERR_DTYPE);
  lt_tensor_destroy(f);
  lt_tensor_destroy(i);
  lt_tensor_destroy(c);
  lt_tensor_destroy(w);
}
static void test_errors(void **state) {
  (void)state;
  lt_test_on_each_device(run_errors);
}

/* u64 against signed integers compares exactly, as NumPy 2 (their promoted f64 compute read
 * u64 2^53 + 1 == i64 2^53 and 2^63 - 1 == 2^63 - 2), in both orders, broadcast. */
static void mixed_sign_on(lt_context *ctx) {
  uint64_t u[5] = {(1ull << 53) + 1, (1ull << 63) - 1, 0, 5, UINT64_MAX};
  int64_t s[5] = {1ll << 53, INT64_MAX - 1, -1, 5, -1};
  int64_t n5[1] = {5}, col[2] = {5, 1};
  lt_tensor *tu = NULL, *ts = NULL, *tc = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_U64, 1, n5, NULL, u, &tu));
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, n5, NULL, s, &ts));
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 2, col, NULL, s, &tc));
  for (int op = LT_BINARY_EQ; op <= LT_BINARY_GE; op++)
    for (int order = 0; order < 3; order++) {
      const lt_tensor *a = order == 1 ? ts : tu, *b = order == 0 ? ts : order == 1 ? tu : tc;
      lt_tensor *r = NULL;
      LT_CHECK(lt_binary((lt_binary_op)op, a, b, &r));
      assert_int_equal(lt_tensor_dtype(r), LT_BOOL);
      int64_t n = lt_tensor_numel(r);
      uint8_t got[25];
      LT_CHECK(lt_tensor_to_host(r, got, (size_t)n));
      for (int64_t i = 0; i < n; i++) {
        int iu = order == 2 ? (int)(i % 5) : (int)i, is = order == 2 ? (int)(i / 5) : (int)i;
        /* -1: u below s, 0 equal, 1 above */
        int c = s[is] < 0 ? 1 : u[iu] < (uint64_t)s[is] ? -1 : u[iu] > (uint64_t)s[is];
        if (order == 1) c = -c; /* a is the signed one */
        bool want = op == LT_BINARY_EQ   ? c == 0
                    : op == LT_BINARY_NE ? c != 0
                    : op == LT_BINARY_LT ? c < 0
                    : op == LT_BINARY_LE ? c <= 0
                    : op == LT_BINARY_GT ? c > 0
                                         : c >= 0;
        if (got[i] != want)
          fail_msg("%s: op %d order %d element %lld: %d, expected %d", lt_context_device(ctx), op,
                   order, (long long)i, got[i], want);
      }
      lt_tensor_destroy(r);
    }
  lt_tensor_destroy(tc);
  lt_tensor_destroy(ts);
  lt_tensor_destroy(tu);
}

static void test_mixed_sign_compare(void **state) {
  (void)state;
  lt_test_on_each_device(mixed_sign_on);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_promotion),
      cmocka_unit_test(test_int_binary),
      cmocka_unit_test(test_bool_ops),
      cmocka_unit_test(test_int_unary),
      cmocka_unit_test(test_exact_examples),
      cmocka_unit_test(test_mixed),
      cmocka_unit_test(test_conversion),
      cmocka_unit_test(test_float_ops),
      cmocka_unit_test(test_npy),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_mixed_sign_compare),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

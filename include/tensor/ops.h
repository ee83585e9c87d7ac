/* SPDX-License-Identifier: MIT */
/* libtensor: operations over mode labels (cuTENSOR style), plans, and NumPy-style shortcuts. */
#ifndef LT_TENSOR_OPS_H
#define LT_TENSOR_OPS_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Unary transforms applied to an operand as it is read. */
typedef enum lt_unary_op {
  LT_UNARY_IDENTITY = 0,
  LT_UNARY_NEG = 1,
  LT_UNARY_ABS = 2,
  LT_UNARY_SQRT = 3,
  LT_UNARY_EXP = 4,
  LT_UNARY_LOG = 5,
  LT_UNARY_SIN = 6,
  LT_UNARY_COS = 7,
  LT_UNARY_TANH = 8,
  LT_UNARY_SIGMOID = 9,
  LT_UNARY_RELU = 10,
  LT_UNARY_RECIPROCAL = 11,
  LT_UNARY_SQUARE = 12,
  /* Issue 18 A. Float functions (LOG1P..RSQRT) on integer or bool operands compute in f64.
   * ROUND is half to even (as NumPy); FLOOR/CEIL/TRUNC/ROUND keep integers as they are. SIGN
   * gives -1/0/1 (NaN for NaN). GELU is the erf form. NOT (logical) and ISNAN/ISINF/ISFINITE
   * give 0/1 (a bool output in one-shot calls); INVERT is bitwise not (logical not on bool),
   * integers and bool only. ABS/NEG/SQUARE/SIGN/RECIPROCAL of integers stay integers
   * (wrapping; RECIPROCAL is 1/x in integer division, 0 for x = 0). */
  LT_UNARY_LOG1P = 13,
  LT_UNARY_EXPM1 = 14,
  LT_UNARY_FLOOR = 15,
  LT_UNARY_CEIL = 16,
  LT_UNARY_ROUND = 17,
  LT_UNARY_TRUNC = 18,
  LT_UNARY_SIGN = 19,
  LT_UNARY_ERF = 20,
  LT_UNARY_GELU = 21,
  LT_UNARY_SILU = 22,
  LT_UNARY_SOFTPLUS = 23,
  LT_UNARY_RSQRT = 24,
  LT_UNARY_NOT = 25,
  LT_UNARY_INVERT = 26,
  LT_UNARY_ISNAN = 27,
  LT_UNARY_ISINF = 28,
  LT_UNARY_ISFINITE = 29,
  /* Issue 20 B (the array API's elementwise functions). TAN..LOG10 are float functions (integer
   * and bool operands compute in f64), as C's tan, asin, acos, atan, sinh, cosh, asinh, acosh,
   * atanh, log2 and log10. SIGNBIT gives 0/1 (a bool output in one-shot calls): 1 when the sign
   * bit is set, also for -0.0 and a negative NaN; for integers, x < 0. */
  LT_UNARY_TAN = 30,
  LT_UNARY_ASIN = 31,
  LT_UNARY_ACOS = 32,
  LT_UNARY_ATAN = 33,
  LT_UNARY_SINH = 34,
  LT_UNARY_COSH = 35,
  LT_UNARY_ASINH = 36,
  LT_UNARY_ACOSH = 37,
  LT_UNARY_ATANH = 38,
  LT_UNARY_LOG2 = 39,
  LT_UNARY_LOG10 = 40,
  LT_UNARY_SIGNBIT = 41
} lt_unary_op;

/* Binary combinations. MIN/MAX propagate NaN. */
typedef enum lt_binary_op {
  LT_BINARY_ADD = 0,
  LT_BINARY_MUL = 1,
  LT_BINARY_MIN = 2,
  LT_BINARY_MAX = 3,
  LT_BINARY_SUB = 4,
  LT_BINARY_DIV = 5,
  LT_BINARY_POW = 6,
  /* Issue 18 A. Comparisons and logical ops give 0/1 (a bool output in one-shot calls); they
   * compare in the promoted dtype. Integer FLOOR_DIVIDE/REMAINDER follow NumPy's floor
   * semantics (remainder has the divisor's sign); division by zero gives 0 and INT64_MIN // -1
   * wraps to INT64_MIN, never a trap. Float FLOOR_DIVIDE/REMAINDER are NumPy's divmod; FMOD is
   * C's fmod (truncated; integers: 0 for a zero divisor). BITWISE_* and shifts take integers
   * (and bool, except shifts) only; a shift by a negative count or by the width or more gives 0
   * (-1 for a negative value shifted right), as NumPy. POW of integers is exact (wrapping);
   * a negative exponent gives 0 unless the base is 1 or -1. DIV of integers is true division
   * (f64). WHERE is only for lt_plan_trinary (op_ab and op_abc both WHERE): D = A ? B : C with
   * A of dtype bool. */
  LT_BINARY_EQ = 7,
  LT_BINARY_NE = 8,
  LT_BINARY_LT = 9,
  LT_BINARY_LE = 10,
  LT_BINARY_GT = 11,
  LT_BINARY_GE = 12,
  LT_BINARY_LOGICAL_AND = 13,
  LT_BINARY_LOGICAL_OR = 14,
  LT_BINARY_LOGICAL_XOR = 15,
  LT_BINARY_BITWISE_AND = 16,
  LT_BINARY_BITWISE_OR = 17,
  LT_BINARY_BITWISE_XOR = 18,
  LT_BINARY_SHIFT_LEFT = 19,
  LT_BINARY_SHIFT_RIGHT = 20,
  LT_BINARY_FLOOR_DIVIDE = 21,
  LT_BINARY_REMAINDER = 22,
  LT_BINARY_FMOD = 23,
  LT_BINARY_ATAN2 = 24,
  LT_BINARY_HYPOT = 25,
  LT_BINARY_WHERE = 26,
  /* Issue 20 B. Float functions (integer and bool operands compute in f64): COPYSIGN is C's
   * copysign (the magnitude of A with the sign bit of B); LOGADDEXP is log(exp(A) + exp(B))
   * without overflow (NumPy's formula: A + log 2 when A == B, so two equal infinities stay). */
  LT_BINARY_COPYSIGN = 27,
  LT_BINARY_LOGADDEXP = 28
} lt_binary_op;

/* Reductions. Empty: SUM/SUMSQ 0, PROD 1, MIN +inf, MAX -inf, MAXABS 0, MEAN NaN. ARGMAX and
 * ARGMIN reduce exactly one mode into an LT_I64 output (first occurrence; NaN wins). */
typedef enum lt_reduce_op {
  LT_REDUCE_SUM = 0,
  LT_REDUCE_PROD = 1,
  LT_REDUCE_MIN = 2,
  LT_REDUCE_MAX = 3,
  LT_REDUCE_MEAN = 4,
  LT_REDUCE_SUMSQ = 5,
  LT_REDUCE_MAXABS = 6,
  LT_REDUCE_ARGMAX = 7,
  LT_REDUCE_ARGMIN = 8
} lt_reduce_op;

/* Contraction path algorithms for einsum. */
typedef enum lt_path_algo {
  LT_PATH_AUTO = 0,    /* exact up to 10 operands; matrix chains exact; else sampled greedy
                          trials refined by subtree reconfiguration (see einsum.h budget) */
  LT_PATH_GREEDY = 1,  /* cheapest pair first */
  LT_PATH_OPTIMAL = 2, /* exhaustive (dynamic programming) up to 13 operands, else as AUTO */
  LT_PATH_NONE = 3,    /* left to right, as written */
  /* issue 22: recursive bisection alone (the best of the budget's trials, not refined; AUTO
     samples it among its trials from 12 operands): to compare and study the searches */
  LT_PATH_PARTITION = 4
} lt_path_algo;

/* Plan options: an opaque object with setters, so the ABI can grow. */
LT_API lt_status lt_plan_options_create(lt_plan_options **out);
/* Destroys plan options (plans made with them keep their own copy). NULL ok. */
LT_API void lt_plan_options_destroy(lt_plan_options *opts);
/* Arithmetic precision: LT_F32, LT_F64, LT_I64 or LT_U64. Default: the inputs' promoted dtype
 * (lt_dtype_promote) decides: F64 if that is F64, F32 for the other floats, I64 for integers
 * and bool (U64 when that is U64), and F64 for integers and bool under a float function (DIV,
 * ATAN2, HYPOT, SQRT, EXP, ...). Integer compute is exact; its scalars (alpha, beta, gamma) are
 * rounded to integers. Contractions and einsum of integers and bool alone compute in I64 (U64
 * when they promote to u64), exactly and wrapping modulo 2^64 as NumPy's integer einsum and
 * matmul (bool results: any nonzero product, NumPy's or-of-ands); with a float operand, F64 if
 * any operand is F64 or exact, else F32. Einsum's default output dtype is the operands'
 * promoted dtype (bool einsum gives bool). */
LT_API lt_status lt_plan_options_set_compute_dtype(lt_plan_options *opts, lt_dtype dtype);
/* Unary transform of operand `operand` (0 = A, 1 = B, 2 = C) applied when it is read. */
LT_API lt_status lt_plan_options_set_unary(lt_plan_options *opts, int operand, lt_unary_op op);
/* Path algorithm for einsum plans. */
LT_API lt_status lt_plan_options_set_path(lt_plan_options *opts, lt_path_algo algo);
/* Upper bound on workspace bytes the einsum path may use (0 = unlimited); einsum slices labels
 * (runs them one value at a time) when no order fits (lt_plan_einsum_slicing reports it). */
LT_API lt_status lt_plan_options_set_memory_limit(lt_plan_options *opts, int64_t bytes);
/* Output dtype for plans that allocate their output (einsum one-shot). */
LT_API lt_status lt_plan_options_set_output_dtype(lt_plan_options *opts, lt_dtype dtype);

/* How contractions and einsum multiply f16 and bf16 operands under f32 compute. Both modes
 * accumulate in f32 and round to the output dtype once. */
typedef enum lt_lowp_compute {
  /* Default: the fastest units the device has. On CPUs with AVX512-BF16, bf16 x bf16 products
   * run on vdpbf16ps (products exact, sums in f32, but subnormal inputs and results flushed to
   * zero); f16, and bf16 elsewhere, are widened to f32 exactly while packing. */
  LT_LOWP_FAST = 0,
  /* IEEE f32 arithmetic throughout (subnormals kept): bf16 is widened to f32 as f16 is. */
  LT_LOWP_F32 = 1
} lt_lowp_compute;
/* Selects the lt_lowp_compute mode of contraction and einsum plans (default LT_LOWP_FAST).
 * Returns LT_ERR_INVALID_HANDLE for a bad opts, LT_ERR_INVALID_ARGUMENT for an unknown mode. */
LT_API lt_status lt_plan_options_set_lowp_compute(lt_plan_options *opts, lt_lowp_compute mode);

/* Plan constructors. Tensors given here only describe layouts (dtype, shape, strides, context);
 * their data is not read and they are not retained. Modes are int32 labels, one per axis. A
 * plan validates everything at creation; executing it with tensors of the same layouts
 * (offsets may differ) fails only as lt_plan_execute lists. In elementwise plans a zero
 * scalar's operand is not read: its term is 0 even where the operand holds NaN or Inf. */

/* D[md] = alpha * opA(A[ma]). Inputs {A}; scalars {alpha}. */
LT_API lt_status lt_plan_permutation(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *d,
                                     const int32_t *modes_d, const lt_plan_options *opts,
                                     lt_plan **out);
/* D = alpha*opA(A) op_ab beta*opB(B), inputs broadcast over modes they lack (or extent 1).
 * Inputs {A, B}; scalars {alpha, beta}. */
LT_API lt_status lt_plan_binary(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *b,
                                const int32_t *modes_b, lt_binary_op op_ab, const lt_tensor *d,
                                const int32_t *modes_d, const lt_plan_options *opts, lt_plan **out);
/* D = (alpha*opA(A) op_ab beta*opB(B)) op_abc gamma*opC(C). Inputs {A, B, C}; scalars
 * {alpha, beta, gamma}. */
LT_API lt_status lt_plan_trinary(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *b,
                                 const int32_t *modes_b, const lt_tensor *c, const int32_t *modes_c,
                                 lt_binary_op op_ab, lt_binary_op op_abc, const lt_tensor *d,
                                 const int32_t *modes_d, const lt_plan_options *opts,
                                 lt_plan **out);
/* D = alpha * reduce(opA(A)) + beta * C over A's modes absent from D. C may be NULL (then
 * beta*D is added when beta != 0) and must have D's shape. Inputs {A} or {A, C}; scalars
 * {alpha, beta}. beta = 0 never reads C or D. */
LT_API lt_status lt_plan_reduction(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *c,
                                   const int32_t *modes_c, lt_reduce_op op, const lt_tensor *d,
                                   const int32_t *modes_d, const lt_plan_options *opts,
                                   lt_plan **out);
/* D = alpha * opA(A) . opB(B) + beta * C over shared modes (in both inputs and D: batch; in
 * both inputs only: contracted). C as in lt_plan_reduction. Inputs {A, B} or {A, B, C};
 * scalars {alpha, beta}. */
LT_API lt_status lt_plan_contraction(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *b,
                                     const int32_t *modes_b, const lt_tensor *c,
                                     const int32_t *modes_c, const lt_tensor *d,
                                     const int32_t *modes_d, const lt_plan_options *opts,
                                     lt_plan **out);

/* Runs a plan. `inputs` and `scalars` as each constructor says; scalars NULL means alpha =
 * beta = gamma = 1 for elementwise plans and alpha = 1, beta = 0 otherwise. Fails with
 * LT_ERR_INVALID_ARGUMENT (input or scalar count), LT_ERR_NULL_POINTER / LT_ERR_INVALID_HANDLE
 * (a missing or destroyed plan or tensor), LT_ERR_LAYOUT_MISMATCH (dtype, shape or strides
 * other than the plan's), LT_ERR_CONTEXT_MISMATCH (a tensor on another context),
 * LT_ERR_ALIASING (the output overlaps an input; elementwise plans allow an output that is
 * exactly one of their inputs, element for element, for in-place updates), LT_ERR_OUT_OF_MEMORY
 * (workspace) and LT_ERR_DEVICE (the device failed); nothing is written on a failure detected
 * before the run starts. */
LT_API lt_status lt_plan_execute(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                                 const double *scalars, int n_scalars, lt_tensor *d);
/* Allocates a C-contiguous tensor with the plan's output layout. */
LT_API lt_status lt_plan_create_output(const lt_plan *plan, lt_tensor **out);
/* Bytes of temporary memory one execution allocates. */
LT_API lt_status lt_plan_workspace_size(const lt_plan *plan, size_t *bytes);
/* Human-readable description (for einsum: the path, each step's flops and how it runs). The
 * string is owned by the plan. */
LT_API const char *lt_plan_describe(const lt_plan *plan);
/* Destroys a plan. NULL ok. */
LT_API void lt_plan_destroy(lt_plan *plan);

/* One-shot versions with NumPy-style positional semantics (broadcast by trailing alignment).
 * Result dtypes as NumPy 2: lt_dtype_promote of the inputs for arithmetic (bool - bool and
 * -bool refused with LT_ERR_DTYPE; POW, FLOOR_DIVIDE, REMAINDER, FMOD and shifts of bools give
 * i8; SQUARE of bool gives i8; SIGN of bool is refused), LT_BOOL for comparisons (exact also
 * for u64 against signed integers, whose plans compare in f64: lt_binary takes three exact
 * passes for them), logical ops,
 * NOT and ISNAN/ISINF/ISFINITE, f64 for DIV of integers or bools, and for ATAN2, HYPOT and the
 * float functions the smallest float holding the input (i8/u8/bool -> f16, i16/u16 -> f32,
 * wider -> f64). lt_binary(LT_BINARY_POW) of integers with a negative exponent anywhere in b is
 * LT_ERR_INVALID_ARGUMENT, as NumPy (a plan computes it as described above). Reductions:
 * SUM/PROD/SUMSQ of signed integers and bool give i64, of unsigned u64 (SUMSQ squares in that
 * 64-bit type; a plan's opA and MAXABS's abs work in the input's width, as NumPy's); MIN/MAX/
 * MAXABS keep the dtype; MEAN of integers f64. */

/* out = a op b, a new tensor. */
LT_API lt_status lt_binary(lt_binary_op op, const lt_tensor *a, const lt_tensor *b,
                           lt_tensor **out);
/* lt_binary(LT_BINARY_ADD, ...). */
LT_API lt_status lt_add(const lt_tensor *a, const lt_tensor *b, lt_tensor **out);
/* lt_binary(LT_BINARY_SUB, ...). */
LT_API lt_status lt_sub(const lt_tensor *a, const lt_tensor *b, lt_tensor **out);
/* lt_binary(LT_BINARY_MUL, ...). */
LT_API lt_status lt_mul(const lt_tensor *a, const lt_tensor *b, lt_tensor **out);
/* lt_binary(LT_BINARY_DIV, ...). */
LT_API lt_status lt_div(const lt_tensor *a, const lt_tensor *b, lt_tensor **out);
/* out = op(a), a new tensor. */
LT_API lt_status lt_unary(lt_unary_op op, const lt_tensor *a, lt_tensor **out);
/* Reduces `n_axes` axes (n_axes = -1: all) of a; keepdims as in NumPy. */
LT_API lt_status lt_reduce(lt_reduce_op op, const lt_tensor *a, int n_axes, const int *axes,
                           bool keepdims, lt_tensor **out);
/* Index of the max/min along `axis`, as LT_I64. */
LT_API lt_status lt_argmax(const lt_tensor *a, int axis, lt_tensor **out);
/* Index of the min along `axis`, as LT_I64 (first occurrence; NaN wins). */
LT_API lt_status lt_argmin(const lt_tensor *a, int axis, lt_tensor **out);
/* --- issue 18 A: where, clip, exact elements --- */
/* out = cond ? a : b, broadcast as lt_binary; cond must be LT_BOOL; the result dtype is
 * lt_dtype_promote(a, b). */
LT_API lt_status lt_where(const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b,
                          lt_tensor **out);
/* out = minimum(maximum(a, lo), hi), broadcast; NaN in any operand gives NaN (as NumPy).
 * The result dtype is the promotion of the three. */
LT_API lt_status lt_clip(const lt_tensor *a, const lt_tensor *lo, const lt_tensor *hi,
                         lt_tensor **out);
/* lt_where written into `out`, an existing tensor (any strides; it may be one of the inputs,
 * element for element, but not overlap one otherwise) whose shape cond, a and b broadcast to
 * (trailing alignment, as NumPy's out=). The select runs in lt_dtype_promote(a, b) and the
 * result is converted to out's dtype as lt_plan_trinary stores it. Fails with
 * LT_ERR_SHAPE_MISMATCH (an operand does not broadcast to out), LT_ERR_DTYPE (cond not bool),
 * LT_ERR_CONTEXT_MISMATCH, LT_ERR_ALIASING and the lt_plan_execute failures; out is then
 * unchanged unless the device failed. */
LT_API lt_status lt_where_into(const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b,
                               lt_tensor *out);
/* lt_clip written into `out`, as lt_where_into (computed in the promotion of a, lo and hi;
 * in place with out = a allowed). Fails as lt_where_into, but for the cond check. */
LT_API lt_status lt_clip_into(const lt_tensor *a, const lt_tensor *lo, const lt_tensor *hi,
                              lt_tensor *out);

/* Materialised permutation: a C-contiguous copy of a with axes reordered. */
LT_API lt_status lt_permute(const lt_tensor *a, const int *axes, lt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif

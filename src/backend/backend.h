/* SPDX-License-Identifier: MIT */
/* The backend interface: memory plus a few strided primitives. The front end lowers every
 * operation into these steps; a backend never sees einsum strings, modes or plans. */
#ifndef LT_BACKEND_H
#define LT_BACKEND_H

#include "tensor.h"

/* One operand of a step: a storage handle, an element offset, a dtype, and one stride (in
 * elements, may be 0 or negative) per dimension of the step's iteration space. */
typedef struct lt__operand {
  void *mem;      /* backend memory handle (host pointer on the CPU, cl_mem on OpenCL) */
  int64_t offset; /* elements from the start of mem to the operand's first element */
  lt_dtype dtype;
  int64_t strides[LT_MAX_RANK];
} lt__operand;

/* Elementwise map over `shape` (rank 0 = one element):
 *   n_in 0: out = s0
 *   n_in 1: out = s0*u0(in0)
 *   n_in 2: out = (s0*u0(in0)) op_ab (s1*u1(in1))
 *   n_in 3: out = ((s0*u0(in0)) op_ab (s1*u1(in1))) op_abc (s2*u2(in2))
 * computed in `compute` (F32 or F64). A zero scalar's term is 0 and its operand is not read
 * (NaN or Inf there does not leak in, as in cuTENSOR). Permutation, copy, conversion and fill are
 * maps. The output never has zero strides over a dimension of extent > 1 and does not partially
 * overlap any input (the front end guarantees it). */
typedef struct lt__map_step {
  int rank;
  int64_t shape[LT_MAX_RANK];
  int n_in;
  lt__operand in[3];
  lt__operand out;
  lt_unary_op unary[3];
  lt_binary_op op_ab, op_abc;
  double scalars[3];
  lt_dtype compute;
} lt__map_step;

/* Reduction: for each index of the kept space (rank/shape), reduce u(in) over the reduced space
 * (red_rank/red_shape), then out = alpha*r + beta*c (beta == 0: c is never read; has_c false:
 * c means out itself). in.strides covers the kept dims, in_red_strides the reduced ones.
 * ARGMAX/ARGMIN: red_rank == 1, out is LT_I64, alpha/beta ignored. MEAN divides by the
 * reduced count (NaN when 0). */
typedef struct lt__reduce_step {
  int rank;
  int64_t shape[LT_MAX_RANK];
  int red_rank;
  int64_t red_shape[LT_MAX_RANK];
  lt__operand in;
  int64_t in_red_strides[LT_MAX_RANK];
  lt__operand out;
  bool has_c;
  lt__operand c; /* strides over the kept dims */
  lt_unary_op unary;
  lt_reduce_op op;
  double alpha, beta;
  lt_dtype compute;
} lt__reduce_step;

/* Most modes one GEMM row or column group may scatter over (lt__gemm_group). */
#define LT__GEMM_GROUP_MODES 8

/* A GEMM row (or column) index spanning several tensor modes whose strides do not nest into
 * one: index r's offset is the sum of its digits in `extent` (outermost first) times `stride`.
 * n == 0: a single stride (the matrix's rs or cs) instead. */
typedef struct lt__gemm_group {
  int n;
  int64_t extent[LT__GEMM_GROUP_MODES], stride[LT__GEMM_GROUP_MODES];
} lt__gemm_group;

/* One matrix of a GEMM: element (r, c) at mem[offset + r*rs + c*cs], or through the scattered
 * groups `rows` / `cols` where their n > 0 (only for a backend whose gemm_takes_any_strides
 * said yes); batch strides separate. */
typedef struct lt__matrix {
  void *mem;
  int64_t offset;
  int64_t rs, cs;
  lt__gemm_group rows, cols;
  int64_t batch_strides[LT_MAX_RANK];
} lt__matrix;

/* Batched GEMM: C[b] = alpha * A[b] (m x k) * B[b] (k x n) + beta * C[b] for every index b of
 * the batch space, all operands of `dtype` (F32 or F64), except that A and B may both be F16 or
 * both BF16 (ab_dtype) with dtype F32 where the backend's gemm_takes_16bit said yes: they are
 * then converted exactly while packing, or, for BF16 unless `exact`, multiplied by bf16
 * dot-product instructions (exact products, f32 sums; subnormal inputs and results flushed to
 * zero). The front end guarantees that C's
 * elements do not overlap each other, and that each matrix has rs == 1 or cs == 1 (a BLAS
 * layout) unless the backend's gemm_takes_any_strides said yes when the plan was made; a backend
 * that ever says yes must then run any strides, whatever it would say at execution.
 * beta == 0: C is never read. C may be F16 or BF16 (c_dtype) with dtype F32 where the
 * backend's gemm_stores_16bit said yes: a plain matrix (no scattered groups), rounded once from
 * the f32 result. */
typedef struct lt__gemm_step {
  lt_dtype dtype;
  lt_dtype ab_dtype; /* A's and B's dtype; LT_DTYPE_INVALID (a zeroed step): `dtype` */
  lt_dtype c_dtype;  /* C's dtype; LT_DTYPE_INVALID (a zeroed step): `dtype` */
  bool exact;        /* 16-bit A and B: IEEE f32 arithmetic only (no flushing dot products) */
  /* Which of the backend's GEMM engines runs the step, as its gemm_choose set it when the plan
   * was made (0: the backend chooses when the step runs). */
  int engine;
  int64_t m, n, k;
  int batch_rank;
  int64_t batch_shape[LT_MAX_RANK];
  lt__matrix a, b, c;
  double alpha, beta;
} lt__gemm_step;

/* The dtype of a GEMM step's A and B. */
static inline lt_dtype lt__gemm_ab_dtype(const lt__gemm_step *s) {
  return s->ab_dtype != LT_DTYPE_INVALID ? s->ab_dtype : s->dtype;
}

/* The dtype of a GEMM step's C. */
static inline lt_dtype lt__gemm_c_dtype(const lt__gemm_step *s) {
  return s->c_dtype != LT_DTYPE_INVALID ? s->c_dtype : s->dtype;
}

/* Direct contraction for small problems (no packing, no BLAS): for every index of the first
 * out_rank dims of `shape`, out = alpha * sum over the remaining dims of u_a(a) * u_b(b)
 * + beta * c (has_c false: c means out; beta == 0: never read). Strides of a and b cover all
 * `rank` dims; out and c only the first out_rank. Inputs of any dtype; computed in `compute`.
 * Optional: a backend may leave it NULL, and the front end then lowers through gemm. */
typedef struct lt__contract_step {
  int rank, out_rank;
  int64_t shape[LT_MAX_RANK];
  lt__operand a, b, out, c;
  bool has_c;
  double alpha, beta;
  lt_dtype compute;
} lt__contract_step;

/* ---- Row operations and random fills (issue 18 C: vocabulary math) ---- */

/* What a row step computes per row. SOFTMAX, LOG_SOFTMAX, CUMSUM and CUMPROD write a whole row
 * (out has row strides); LOGSUMEXP, VAR and STD write one value per row. */
typedef enum lt__row_op {
  LT__ROW_SOFTMAX,
  LT__ROW_LOG_SOFTMAX,
  LT__ROW_LOGSUMEXP,
  LT__ROW_VAR,
  LT__ROW_STD,
  LT__ROW_CUMSUM,
  LT__ROW_CUMPROD
} lt__row_op;

/* For each index of the kept space (rank/shape), one row over the row space (row_rank/
 * row_shape, read in row-major order: scans accumulate in that order, so CUMSUM and CUMPROD
 * have row_rank <= 1). in.strides and out.strides cover the kept dims; in_row_strides and
 * out_row_strides the row dims (out's only for whole-row ops). Computed in `compute` (F32 or
 * F64). VAR/STD divide by max(n - ddof, 0). Softmax family: stable (shifted by the row max);
 * a row whose max is infinite is shifted by 0 instead, so logsumexp of all -inf is -inf and
 * softmax of it NaN. The output never overlaps the input. */
typedef struct lt__row_step {
  int rank;
  int64_t shape[LT_MAX_RANK];
  int row_rank;
  int64_t row_shape[LT_MAX_RANK];
  lt__operand in, out;
  int64_t in_row_strides[LT_MAX_RANK];
  int64_t out_row_strides[LT_MAX_RANK];
  lt__row_op op;
  double ddof;
  lt_dtype compute;
} lt__row_step;

/* Distributions of a random fill, numbered as LT_RNG_* in kernels/philox.h. */
typedef enum lt__rng_dist {
  LT__RNG_UNIFORM = 0,  /* a + (b - a) * u, u in [0, 1) */
  LT__RNG_NORMAL = 1,   /* a + b * z */
  LT__RNG_INTEGERS = 2, /* low + [0, range) */
  LT__RNG_BERNOULLI = 3 /* 1 with probability threshold / 2^32, else 0 */
} lt__rng_dist;

/* Random fill of out over `shape`: element i (row-major over shape) takes the value
 * kernels/philox.h defines for (seed, stream, block = offset + i / G, lane i % G). Uniforms
 * are computed in float for F16/BF16/F32 outputs and in double for F64; normals in double;
 * integers exactly (an I64 output is written without passing through double). */
typedef struct lt__rng_step {
  int rank;
  int64_t shape[LT_MAX_RANK];
  lt__operand out;
  lt__rng_dist dist;
  uint64_t seed, stream, offset;
  double a, b;
  int64_t low;
  uint64_t range;     /* integers */
  uint64_t threshold; /* Bernoulli */
} lt__rng_step;

/* One Adam/AdamW update of a parameter in a single pass over its n elements (optional; the
 * front end otherwise runs it as several maps). p, g, m and v each hold n contiguous elements
 * of `dtype` (F32 or F64) from their offsets and do not overlap; g is only read. Per element,
 * computed in dtype in this order:
 *   d = l2 != 0 ? g + l2*p : g;  m = b1*m + c1*d;  v = b2*v + c2*(d*d);
 *   p = decay*p - step * m / (sqrt(v) + eps) */
typedef struct lt__adam_step {
  int64_t n;
  lt_dtype dtype;
  void *p, *g, *m, *v; /* memory handles */
  int64_t p_off, g_off, m_off, v_off;
  double l2, b1, c1, b2, c2, decay, step, eps;
} lt__adam_step;

/* What the front end's lowering needs to know about a backend's speed and limits. Figures are
 * modelled seconds: only their ratios choose between plans. */
typedef struct lt__backend_caps {
  /* Up to this many flops a contraction runs in the backend's direct kernel (when it has one). */
  double direct_max_flops;
  /* Largest m, n, k and leading dimension one GEMM step may have. */
  int64_t gemm_index_max;
  double gemm_flops; /* large-GEMM rate, flop/s */
  /* The rates, as fractions of gemm_flops, of a GEMM whose operands have no BLAS layout (the
   * engine that takes any strides runs it), and of GEMMs with k <= LT__CAPS_SMALL_K on a BLAS
   * layout and on any strides; 0: as gemm_flops (unmeasured). Engines differ most there:
   * BLAS blocking is built for large k. */
  double strided_gemm_share, small_k_gemm_share, strided_small_k_gemm_share;
  double copy_seconds; /* per element copied by a permuting map */
  /* The same for operands larger than LT__CAPS_BIG_COPY_BYTES, whose copies go through DRAM;
   * 0: as copy_seconds. */
  double big_copy_seconds;
  double call_seconds; /* per GEMM call */
  /* Memory handles are host pointers: host memory can be wrapped, pointed into, and compared
   * by address across storages (core asks this instead of naming a device). */
  bool host_memory;
} lt__backend_caps;

/* Copies of operands past this size are priced at caps.big_copy_seconds. */
#define LT__CAPS_BIG_COPY_BYTES (16LL << 20)

/* Largest k priced with the small-k GEMM rates. */
#define LT__CAPS_SMALL_K 32

/* The cost figures lower/pair.c applied to every backend before they became caps, shared by
 * the backends until each measures its own (changing them changes plans). */
#define LT__CAPS_UNMEASURED_COSTS                                                                  \
  .direct_max_flops = 32768.0, .gemm_index_max = 2147483647LL /* BLAS int */, .gemm_flops = 50e9,  \
  .copy_seconds = 1e-9, .call_seconds = 2e-6

/* ---- index steps (gather, scatter-add, sort): issue 18 B ---- */

/* Gather: for every index `it` of the iteration space (rank/shape),
 *   j = index[it] (+ axis_extent when negative); out[it] = in[in(it) + j * axis_stride]
 * where in.strides are in's strides over the iteration space without its gathered axis.
 * Elements move as raw bits (in and out share a dtype). An index outside [-axis_extent,
 * axis_extent) is never used to read: the step returns LT_ERR_OUT_OF_RANGE with the index's
 * value and position in the message (its iteration-space position, C order), and the output's
 * contents are then unspecified. Index dtypes: the integer dtypes lt__index_dtype accepts. */
typedef struct lt__gather_step {
  int rank;
  int64_t shape[LT_MAX_RANK];
  lt__operand in, index, out;
  int64_t axis_extent, axis_stride;
} lt__gather_step;

/* Scatter-add: for every index `it` of the iteration space (the source's), in C order along
 * dim `axis` (sequential, so the result does not depend on threads):
 *   j = index[it] (wrapped as in gather); out[out(it) + j * out_axis_stride] += src[it]
 * out.strides cover the iteration space with 0 over `axis`; different positions off `axis` never
 * share an output element (the front end guarantees it). Each addition is rounded to out's
 * dtype (as NumPy's add.at); integer outputs add exactly. Range errors as in gather (nothing
 * is added once a bad index is met on that row; other rows may be complete). */
typedef struct lt__scatter_step {
  int rank, axis;
  int64_t shape[LT_MAX_RANK];
  lt__operand src, index, out;
  int64_t out_axis_extent, out_axis_stride;
} lt__scatter_step;

/* Sort along one axis: for every index of the outer space (rank/shape), the n elements
 * in[in(it) + i * in_axis_stride] are ordered stably (ties keep their order), ascending with
 * NaN last, or descending with NaN first; the first k of them are written to out (positions
 * out(it) + r * out_axis_stride), as values (out has in's dtype) or, when `indices`, as their
 * positions i (LT_I64). */
typedef struct lt__sort_step {
  int rank;
  int64_t shape[LT_MAX_RANK];
  int64_t n, k;
  lt__operand in, out;
  int64_t in_axis_stride, out_axis_stride;
  bool descending, indices;
} lt__sort_step;

/* Index dtypes gather/scatter accept: the integer dtypes, signed and unsigned (not bool). */
static inline bool lt__index_dtype(lt_dtype d) { return d >= LT_I64 && d <= LT_U64; }
/* Element i of a host buffer of an index dtype, as int64 (exact; a u64 value beyond INT64_MAX,
 * out of range for any axis, reads as INT64_MAX). */
static inline int64_t lt__load_index(const void *base, lt_dtype d, int64_t i) {
  switch (d) {
  case LT_I8: return ((const int8_t *)base)[i];
  case LT_I16: return ((const int16_t *)base)[i];
  case LT_I32: return ((const int32_t *)base)[i];
  case LT_U8: return ((const uint8_t *)base)[i];
  case LT_U16: return ((const uint16_t *)base)[i];
  case LT_U32: return ((const uint32_t *)base)[i];
  case LT_U64: {
    uint64_t v = ((const uint64_t *)base)[i];
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
  }
  default: return ((const int64_t *)base)[i];
  }
}

/* Optional index primitives, NULL when a backend lacks them (the front end then refuses the op
 * with LT_ERR_UNSUPPORTED). */
typedef struct lt__index_ops {
  lt_status (*gather)(lt_context *ctx, const lt__gather_step *step);
  lt_status (*scatter_add)(lt_context *ctx, const lt__scatter_step *step);
  lt_status (*sort)(lt_context *ctx, const lt__sort_step *step);
} lt__index_ops;

typedef struct lt__backend {
  const char *name;
  /* Device memory of `bytes` (may be 0); *mem != NULL on success. */
  lt_status (*mem_alloc)(lt_context *ctx, size_t bytes, void **mem);
  void (*mem_free)(lt_context *ctx, void *mem, size_t bytes);
  lt_status (*mem_write)(lt_context *ctx, void *mem, size_t offset, const void *src, size_t bytes);
  lt_status (*mem_read)(lt_context *ctx, void *mem, size_t offset, void *dst, size_t bytes);
  lt_status (*map)(lt_context *ctx, const lt__map_step *step);
  lt_status (*reduce)(lt_context *ctx, const lt__reduce_step *step);
  lt_status (*gemm)(lt_context *ctx, const lt__gemm_step *step);
  lt_status (*contract)(lt_context *ctx, const lt__contract_step *step); /* optional */
  lt_status (*adam)(lt_context *ctx, const lt__adam_step *step);         /* optional */
  /* Optional: true when gemm runs matrices with no unit stride (packing them itself) fast
   * enough that the front end should not copy them into a BLAS layout first. */
  bool (*gemm_takes_any_strides)(lt_context *ctx);
  /* Optional: true when gemm takes F16 or BF16 A and B with F32 compute (lt__gemm_step), so
   * that the front end need not convert them into F32 workspace first. */
  bool (*gemm_takes_16bit)(lt_context *ctx);
  /* Optional: true when gemm stores an F16 or BF16 C under F32 compute (lt__gemm_step), so
   * that the front end need not stage the result in F32 workspace and round it in a second
   * pass. */
  bool (*gemm_stores_16bit)(lt_context *ctx);
  /* Optional: the deepest k (0: none) at which gemm reads an input of `dtype` whose one unit
   * stride lies on a free mode other than the innermost of its group (the output's unit mode),
   * a cache line of that mode at a time for many rows, so that the front end need not permute
   * it first (TCCG's abcde-efbad-cf: C runs along e, A along d). Holds where the output has its
   * unit stride on that innermost mode and the GEMM has no batch of small ones. */
  int64_t (*gemm_line_max_k)(lt_context *ctx, lt_dtype dtype);
  /* Optional: picks the engine for a GEMM step once, when the plan is made (step->engine; the
   * operands' memory is not bound yet), and returns its name for plan descriptions. */
  const char *(*gemm_choose)(lt_context *ctx, lt__gemm_step *step);
  /* Optional: true when the engine gemm_choose would pick runs the step without allocating
   * (no packing scratch), so that the front end may send a contraction below
   * caps.direct_max_flops to GEMM instead of the direct kernel without breaking a plan's memory
   * limit. NULL: such contractions stay direct. */
  bool (*gemm_in_place)(lt_context *ctx, const lt__gemm_step *step);
  /* Row operations (softmax family, var/std, scans) and random fills (issue 18 C). */
  lt_status (*rows)(lt_context *ctx, const lt__row_step *step);
  lt_status (*rng)(lt_context *ctx, const lt__rng_step *step);
  lt_status (*synchronize)(lt_context *ctx);
  /* Optional: a plan touching about `work` elements starts; a backend with sleeping worker
   * threads wakes them now, so that they are ready for its first parallel job. */
  void (*warm)(lt_context *ctx, int64_t work);
  /* Frees the backend state (ctx->backend_state) when the context dies. */
  void (*release)(lt_context *ctx);
  lt__backend_caps caps;
  /* Index primitives (gather, scatter-add, sort); NULL: none. */
  const lt__index_ops *index;
  /* Optional: caps with cost figures measured on this machine (the rest as in caps), for the
   * lowering's model; may run steps on ctx the first time. */
  const lt__backend_caps *(*measured_caps)(lt_context *ctx);
} lt__backend;

/* One backend as the registry (registry.c) lists it. Device strings are "<prefix>", or
 * "<prefix>:..." when takes_suffix. Device indices are local to the backend. */
typedef struct lt__backend_desc {
  const char *prefix;
  bool takes_suffix;
  const char *forms; /* the accepted device strings, for messages: "\"cpu\"" */
  /* Set when the backend was left out of this build: why (open and the rest are NULL). */
  const char *missing;
  lt_status (*device_count)(int *count);
  lt_status (*device_string)(int index, lt_device_prop prop, const char **out);
  lt_status (*device_int)(int index, lt_device_prop prop, int64_t *out);
  /* Fills ctx->backend, ctx->backend_state and ctx->device for the device string. */
  lt_status (*open)(lt_context *ctx, const char *device);
} lt__backend_desc;

/* The backends of this build, in device-index order (registry.c). */
int lt__backend_count(void);
const lt__backend_desc *lt__backend_at(int i);

#endif

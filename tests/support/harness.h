/* SPDX-License-Identifier: MIT */
/* Shared test harness: devices, seeded random data, layout families, float64 reference
 * reads, poisoned and guarded outputs, tolerances. Every test_*.c uses it. */
#ifndef LT_TEST_HARNESS_H
#define LT_TEST_HARNESS_H

#include "tensor.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

/* Fails the current test with the library's message when a call does not return LT_OK. */
#define LT_CHECK(call)                                                                             \
  do {                                                                                             \
    lt_status lt_check_st = (call);                                                                \
    if (lt_check_st != LT_OK)                                                                      \
      fail_msg("%s returned %s: %s", #call, lt_status_string(lt_check_st), lt_last_error());       \
  } while (0)

/* Asserts a specific failure status and that a message was set. */
#define LT_CHECK_FAILS(call, status)                                                               \
  do {                                                                                             \
    lt_clear_error();                                                                              \
    lt_status lt_check_st = (call);                                                                \
    if (lt_check_st != (status))                                                                   \
      fail_msg("%s returned %s, expected %s (%s)", #call, lt_status_string(lt_check_st),           \
               lt_status_string(status), lt_last_error());                                         \
    assert_true(lt_last_error()[0] != '\0');                                                       \
  } while (0)

/* ---- devices: every test runs on each backend present ---- */

/* Device strings to test: "cpu" always, "opencl" if a context opens (LT_TEST_DEVICES overrides
 * with a comma-separated list). Returns the count. */
int lt_test_devices(const char *out[8]);
/* Runs fn on a fresh context of each device of lt_test_devices, the random generator reset to
 * the test seed once, before the first device. */
void lt_test_on_each_device(void (*fn)(lt_context *ctx));
/* True under `tools/test.sh --valgrind` or `--tsan` (LT_TEST_INSTRUMENTED=1): tests whose point
 * needs sizes those tools make too slow skip, and say so; the ASan run covers them. */
bool lt_test_instrumented(void);
/* A CPU context made with the environment variable `var` (read when a context opens, e.g.
 * LT_CPU_ISA) set to value (NULL: unset); the variable is unset again afterwards. */
lt_context *lt_test_cpu_context_with(const char *var, const char *value);
/* The same for LT_GEMM_ENGINE = engine (NULL: unset, the measured choice). */
lt_context *lt_test_cpu_context_with_engine(const char *engine);
/* Whether the GEMM engines with x86 SIMD kernels only (stream, small) run here: an x86 build on
 * an AVX2+FMA CPU, and LT_CPU_ISA not forcing the portable baseline. */
bool lt_test_has_x86_gemm_kernels(void);

/* ---- random numbers (fixed, printed seed; LT_TEST_SEED overrides) ---- */

uint64_t lt_test_seed(void);
void lt_test_rng_reset(uint64_t seed);
uint64_t lt_test_rand_u64(void);
/* Uniform integer in [lo, hi]. */
int64_t lt_test_rand_int(int64_t lo, int64_t hi);
/* Uniform double in [lo, hi). */
double lt_test_rand_double(double lo, double hi);

/* ---- layout families for inputs and outputs ---- */

typedef enum lt_test_layout {
  LT_LAYOUT_CONTIGUOUS = 0,
  LT_LAYOUT_TRANSPOSED, /* a permuted view of a contiguous buffer */
  LT_LAYOUT_STEPPED,    /* sliced with steps > 1 inside a larger buffer */
  LT_LAYOUT_NEGATIVE,   /* every axis flipped (negative strides) */
  LT_LAYOUT_BROADCAST,  /* extents of 1 broadcast with zero strides (inputs only) */
  LT_LAYOUT_COUNT
} lt_test_layout;

const char *lt_test_layout_name(lt_test_layout layout);

/* A tensor of the given shape and layout family on ctx, filled with random values in
 * [-1, 1) (never all zero). For LT_LAYOUT_BROADCAST, some axes become zero-stride views. */
lt_tensor *lt_test_random_tensor(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                                 lt_test_layout layout);
/* Like lt_test_random_tensor with values in [lo, hi) (never exactly 0). */
lt_tensor *lt_test_random_tensor_range(lt_context *ctx, lt_dtype dtype, int rank,
                                       const int64_t *shape, lt_test_layout layout, double lo,
                                       double hi);

/* A tensor of an integer or bool dtype in a layout family holding bits() truncated to the
 * dtype's width, set exactly (bool: the lowest bit), for the exact-integer tests. */
lt_tensor *lt_test_bits_tensor(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                               lt_test_layout layout, uint64_t (*bits)(void));

/* A guarded output: `view` is a strided view (of the given layout family, never broadcast)
 * inside a larger `base` buffer poisoned with NaN. lt_test_output_check_guard fails the test if
 * anything outside the view was written. */
typedef struct lt_test_output {
  lt_tensor *base;
  lt_tensor *view;
  double *base_before; /* host copy of the base as f64 */
} lt_test_output;

void lt_test_output_make(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                         lt_test_layout layout, lt_test_output *out);
void lt_test_output_check_guard(const lt_test_output *out);
void lt_test_output_free(lt_test_output *out);

/* Every element of t as double, in C order (caller frees). */
double *lt_test_read_all(const lt_tensor *t);
/* Snapshot of an input so lt_test_check_unchanged can verify it was not modified. */
double *lt_test_snapshot(const lt_tensor *t);
void lt_test_check_unchanged(const lt_tensor *t, const double *snapshot);

/* ---- tolerances, stated in one place ---- */

/* Relative tolerance for a result computed in `dtype` from `terms` summed terms. */
double lt_test_tolerance(lt_dtype dtype, int64_t terms);
/* Compares got vs want (n values); NaN matches NaN, inf matches same inf; fails with the first
 * mismatching index. `scale` is added to |want| in the error bound. */
void lt_test_assert_close(const double *got, const double *want, int64_t n, double rtol,
                          const char *what);

/* Multi-index helpers for naive references. */
int64_t lt_test_numel(int rank, const int64_t *shape);
/* Converts a C-order linear index into a multi-index. */
void lt_test_unravel(int64_t linear, int rank, const int64_t *shape, int64_t *index);

/* ---- resources ---- */

/* An allocator for lt_context_create_with_allocator that fails once `budget` allocations were
 * made (budget < 0: never) and counts live blocks, to check failure paths and leaks. */
typedef struct lt_test_alloc {
  int budget;
  int live;
  int calls;
} lt_test_alloc;
void *lt_test_alloc_fn(size_t bytes, size_t align, void *user);
void lt_test_free_fn(void *ptr, size_t bytes, void *user);

/* A .npy byte stream written by hand, independently of the library: magic + version +
 * little-endian header length (2 bytes for v1, 4 for v2/v3) + dict + data. The dict is padded
 * with spaces and '\n' to a 16-byte multiple when `pad` is set. The caller frees data. */
typedef struct lt_test_npy_bytes {
  unsigned char *data;
  size_t size;
} lt_test_npy_bytes;
lt_test_npy_bytes lt_test_make_npy(int major, const char *dict, const void *data, size_t data_len,
                                   bool pad);

/* Creates an empty temporary file and writes its path into buf (caller removes it). */
void lt_test_temp_path(char buf[64]);
/* ---- mode-label references (naive float64) ---- */

/* C-order linear index into a tensor with modes `modes_t` (read with lt_test_read_all) of the
 * element addressed by index_d over modes_d; modes absent from d or of extent 1 read index 0. */
int64_t lt_test_mode_index(int rank_t, const int64_t *shape_t, const int32_t *modes_t, int rank_d,
                           const int32_t *modes_d, const int64_t *index_d);
/* Reference semantics of unary and binary ops in float64 (MIN/MAX propagate NaN). */
double lt_test_unary_ref(lt_unary_op op, double x);
double lt_test_binary_ref(lt_binary_op op, double a, double b);
/* Rounds a float64 reference to what a dtype can hold (overflow to +-inf, f32/f16/bf16
 * rounding), so that values past the dtype's range compare as infinities. */
double lt_test_round_to(lt_dtype dtype, double v);
/* Fisher-Yates shuffle of n int32 values. */
void lt_test_shuffle(int32_t *v, int n);

#endif

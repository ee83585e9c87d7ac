/* SPDX-License-Identifier: MIT */
/* Handle checks: every call that takes a handle refuses one that was destroyed, destroyed
 * twice, or is of another kind, with LT_ERR_INVALID_HANDLE and a message naming the call (the
 * destroyed handles sit in the library's quarantine, so nothing here reads freed memory: ASan
 * and valgrind check that). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void expect_invalid(lt_status st, const char *call, const char *needle) {
  if (st != LT_ERR_INVALID_HANDLE)
    fail_msg("%s: got %s (%s), expected LT_ERR_INVALID_HANDLE", call, lt_status_string(st),
             lt_last_error());
  if (strstr(lt_last_error(), needle) == NULL)
    fail_msg("%s: message '%s' does not mention '%s'", call, lt_last_error(), needle);
}

/* The valid operands every call gets besides the one under test. */
typedef struct fixture {
  lt_context *ctx;
  lt_tensor *a, *b, *d; /* 2x2 f32 */
  lt_plan *plan;        /* D = A + B over (i, j) */
} fixture;

static const int32_t mij[2] = {1, 2};
static const int64_t s22[2] = {2, 2};

/* Each call takes `x` in one tensor position; the others are the fixture's. */
typedef lt_status (*tensor_call)(lt_tensor *x, const fixture *f);
typedef struct named_call {
  const char *name;
  tensor_call call;
  lt_status live_status; /* what the call returns for a live 2x2 tensor */
} named_call;

static void release(lt_tensor *t) { lt_tensor_destroy(t); }

/* Runs a plan constructor and destroys what it made. */
#define PLAN_CALL(expr)                                                                            \
  lt_plan *p = NULL;                                                                               \
  lt_status st = (expr);                                                                           \
  lt_plan_destroy(p);                                                                              \
  return st

#define OUT_CALL(expr)                                                                             \
  lt_tensor *o = NULL;                                                                             \
  lt_status st = (expr);                                                                           \
  release(o);                                                                                      \
  return st

static lt_status c_to_host(lt_tensor *x, const fixture *f) {
  (void)f;
  float buf[4];
  return lt_tensor_to_host(x, buf, sizeof buf);
}
static lt_status c_get(lt_tensor *x, const fixture *f) {
  (void)f;
  int64_t idx[2] = {0, 0};
  double v;
  return lt_tensor_get(x, idx, &v);
}
static lt_status c_set(lt_tensor *x, const fixture *f) {
  (void)f;
  int64_t idx[2] = {0, 0};
  return lt_tensor_set(x, idx, 1.0);
}
static lt_status c_host_pointer(lt_tensor *x, const fixture *f) {
  (void)f;
  void *p;
  return lt_tensor_host_pointer(x, &p);
}
static lt_status c_reshape(lt_tensor *x, const fixture *f) {
  (void)f;
  int64_t s[1] = {4};
  OUT_CALL(lt_view_reshape(x, 1, s, &o));
}
static lt_status c_permute(lt_tensor *x, const fixture *f) {
  (void)f;
  int axes[2] = {1, 0};
  OUT_CALL(lt_view_permute(x, axes, &o));
}
static lt_status c_transpose(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_view_transpose(x, 0, 1, &o));
}
static lt_status c_slice(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_view_slice(x, 0, 0, 1, 1, &o));
}
static lt_status c_select(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_view_select(x, 0, 0, &o));
}
static lt_status c_broadcast(lt_tensor *x, const fixture *f) {
  (void)f;
  int64_t s[3] = {3, 2, 2};
  OUT_CALL(lt_view_broadcast_to(x, 3, s, &o));
}
static lt_status c_unsqueeze(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_view_unsqueeze(x, 0, &o));
}
static lt_status c_squeeze(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_view_squeeze(x, 0, &o));
}
static lt_status c_flip(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_view_flip(x, 0, &o));
}
static lt_status c_diagonal(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_view_diagonal(x, 0, 0, 1, &o));
}
static lt_status c_as_strided(lt_tensor *x, const fixture *f) {
  (void)f;
  int64_t strides[2] = {2, 1};
  OUT_CALL(lt_view_as_strided(x, 2, s22, strides, 0, &o));
}
static lt_status c_contiguous(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_tensor_contiguous(x, LT_DTYPE_INVALID, &o));
}
static lt_status c_tensor_reshape(lt_tensor *x, const fixture *f) {
  (void)f;
  int64_t s[1] = {4};
  OUT_CALL(lt_tensor_reshape(x, 1, s, &o));
}
static lt_status c_copy_dst(lt_tensor *x, const fixture *f) { return lt_tensor_copy_into(x, f->a); }
static lt_status c_copy_src(lt_tensor *x, const fixture *f) { return lt_tensor_copy_into(f->d, x); }
static lt_status c_to_context(lt_tensor *x, const fixture *f) {
  OUT_CALL(lt_tensor_to_context(x, f->ctx, &o));
}
static lt_status c_npy_save(lt_tensor *x, const fixture *f) {
  (void)f;
  char path[64];
  lt_test_temp_path(path);
  lt_status st = lt_npy_save(x, path);
  remove(path);
  return st;
}
static lt_status c_plan_perm_a(lt_tensor *x, const fixture *f) {
  PLAN_CALL(lt_plan_permutation(x, mij, f->d, mij, NULL, &p));
}
static lt_status c_plan_perm_d(lt_tensor *x, const fixture *f) {
  PLAN_CALL(lt_plan_permutation(f->a, mij, x, mij, NULL, &p));
}
static lt_status c_plan_binary_b(lt_tensor *x, const fixture *f) {
  PLAN_CALL(lt_plan_binary(f->a, mij, x, mij, LT_BINARY_ADD, f->d, mij, NULL, &p));
}
static lt_status c_plan_trinary_c(lt_tensor *x, const fixture *f) {
  PLAN_CALL(lt_plan_trinary(f->a, mij, f->b, mij, x, mij, LT_BINARY_ADD, LT_BINARY_MUL, f->d, mij,
                            NULL, &p));
}
static lt_status c_plan_reduction_c(lt_tensor *x, const fixture *f) {
  PLAN_CALL(lt_plan_reduction(f->a, mij, x, mij, LT_REDUCE_SUM, f->d, mij, NULL, &p));
}
static lt_status c_plan_contraction_b(lt_tensor *x, const fixture *f) {
  lt_plan *p = NULL;
  int32_t mjk[2] = {2, 3}, mik[2] = {1, 3};
  lt_status st = lt_plan_contraction(f->a, mij, x, mjk, NULL, NULL, f->d, mik, NULL, &p);
  lt_plan_destroy(p);
  return st;
}
static lt_status c_plan_contraction_c(lt_tensor *x, const fixture *f) {
  lt_plan *p = NULL;
  int32_t mjk[2] = {2, 3}, mik[2] = {1, 3};
  lt_status st = lt_plan_contraction(f->a, mij, f->b, mjk, x, mik, f->d, mik, NULL, &p);
  lt_plan_destroy(p);
  return st;
}
static lt_status c_execute_input(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[2] = {f->a, x};
  return lt_plan_execute(f->plan, in, 2, NULL, 0, f->d);
}
static lt_status c_execute_output(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[2] = {f->a, f->b};
  return lt_plan_execute(f->plan, in, 2, NULL, 0, x);
}
static lt_status c_plan_einsum(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[2] = {f->a, x};
  PLAN_CALL(lt_plan_einsum("ij,jk->ik", 2, in, NULL, NULL, &p));
}
static lt_status c_plan_einsum_out(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[2] = {f->a, f->b};
  PLAN_CALL(lt_plan_einsum("ij,jk->ik", 2, in, x, NULL, &p));
}
static lt_status c_plan_einsum_modes(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[1] = {x};
  const int32_t *modes[1] = {mij};
  (void)f;
  PLAN_CALL(lt_plan_einsum_modes(1, in, modes, 2, mij, NULL, NULL, &p));
}
static lt_status c_einsum(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[2] = {x, f->b};
  OUT_CALL(lt_einsum("ij,jk->ik", 2, in, NULL, &o));
}
static lt_status c_einsum_into(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[2] = {f->a, f->b};
  return lt_einsum_into("ij,jk->ik", 2, in, NULL, x);
}
static lt_status c_einsum_modes(lt_tensor *x, const fixture *f) {
  const lt_tensor *in[1] = {x};
  const int32_t *modes[1] = {mij};
  (void)f;
  OUT_CALL(lt_einsum_modes(1, in, modes, 2, mij, NULL, &o));
}
static lt_status c_binary_a(lt_tensor *x, const fixture *f) {
  OUT_CALL(lt_binary(LT_BINARY_ADD, x, f->b, &o));
}
static lt_status c_add_b(lt_tensor *x, const fixture *f) { OUT_CALL(lt_add(f->a, x, &o)); }
static lt_status c_sub(lt_tensor *x, const fixture *f) { OUT_CALL(lt_sub(x, f->b, &o)); }
static lt_status c_mul(lt_tensor *x, const fixture *f) { OUT_CALL(lt_mul(x, f->b, &o)); }
static lt_status c_div(lt_tensor *x, const fixture *f) { OUT_CALL(lt_div(f->a, x, &o)); }
static lt_status c_unary(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_unary(LT_UNARY_EXP, x, &o));
}
static lt_status c_reduce(lt_tensor *x, const fixture *f) {
  (void)f;
  int axes[1] = {0};
  OUT_CALL(lt_reduce(LT_REDUCE_SUM, x, 1, axes, false, &o));
}
static lt_status c_argmax(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_argmax(x, 0, &o));
}
static lt_status c_argmin(lt_tensor *x, const fixture *f) {
  (void)f;
  OUT_CALL(lt_argmin(x, 0, &o));
}
static lt_status c_permute_op(lt_tensor *x, const fixture *f) {
  (void)f;
  int axes[2] = {1, 0};
  OUT_CALL(lt_permute(x, axes, &o));
}

#define CALL(fn)                                                                                   \
  { #fn, fn, LT_OK }
static const named_call tensor_calls[] = {
    CALL(c_to_host),
    CALL(c_get),
    CALL(c_set),
    CALL(c_host_pointer),
    CALL(c_reshape),
    CALL(c_permute),
    CALL(c_transpose),
    CALL(c_slice),
    CALL(c_select),
    CALL(c_broadcast),
    CALL(c_unsqueeze),
    {"c_squeeze", c_squeeze, LT_ERR_INVALID_ARGUMENT /* no axis of extent 1 */},
    CALL(c_flip),
    CALL(c_diagonal),
    CALL(c_as_strided),
    CALL(c_contiguous),
    CALL(c_tensor_reshape),
    CALL(c_copy_dst),
    CALL(c_copy_src),
    CALL(c_to_context),
    CALL(c_npy_save),
    CALL(c_plan_perm_a),
    CALL(c_plan_perm_d),
    CALL(c_plan_binary_b),
    CALL(c_plan_trinary_c),
    CALL(c_plan_reduction_c),
    CALL(c_plan_contraction_b),
    CALL(c_plan_contraction_c),
    CALL(c_execute_input),
    CALL(c_execute_output),
    CALL(c_plan_einsum),
    CALL(c_plan_einsum_out),
    CALL(c_plan_einsum_modes),
    CALL(c_einsum),
    CALL(c_einsum_into),
    CALL(c_einsum_modes),
    CALL(c_binary_a),
    CALL(c_add_b),
    CALL(c_sub),
    CALL(c_mul),
    CALL(c_div),
    CALL(c_unary),
    CALL(c_reduce),
    CALL(c_argmax),
    CALL(c_argmin),
    CALL(c_permute_op),
};

static void fixture_make(lt_context *ctx, fixture *f) {
  f->ctx = ctx;
  f->a = lt_test_random_tensor(ctx, LT_F32, 2, s22, LT_LAYOUT_CONTIGUOUS);
  f->b = lt_test_random_tensor(ctx, LT_F32, 2, s22, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s22, &f->d));
  LT_CHECK(lt_plan_binary(f->a, mij, f->b, mij, LT_BINARY_ADD, f->d, mij, NULL, &f->plan));
}

static void fixture_free(fixture *f) {
  lt_plan_destroy(f->plan);
  lt_tensor_destroy(f->a);
  lt_tensor_destroy(f->b);
  lt_tensor_destroy(f->d);
}

/* Each call succeeds with a live tensor (so the refusals below are about the handle), then
 * refuses a destroyed one and a plan passed as a tensor. */
static void check_tensor_calls(lt_context *ctx) {
  fixture f;
  fixture_make(ctx, &f);
  for (size_t i = 0; i < sizeof tensor_calls / sizeof tensor_calls[0]; i++) {
    const named_call *c = &tensor_calls[i];
    lt_tensor *x = lt_test_random_tensor(ctx, LT_F32, 2, s22, LT_LAYOUT_CONTIGUOUS);
    lt_status st = c->call(x, &f);
    /* host_pointer refuses a tensor that is not on the host for another reason. */
    if (st != c->live_status && st != LT_ERR_UNSUPPORTED)
      fail_msg("%s with a live tensor: %s (%s)", c->name, lt_status_string(st), lt_last_error());
    lt_tensor_destroy(x);
    expect_invalid(c->call(x, &f), c->name, "already destroyed");
    expect_invalid(c->call((lt_tensor *)f.plan, &f), c->name, "is a plan handle, not a tensor");
  }
  fixture_free(&f);
}

static void test_destroyed_tensors(void **state) {
  (void)state;
  lt_test_on_each_device(check_tensor_calls);
}

/* Accessors return their "none" value and leave the message. */
static void check_accessors(lt_context *ctx) {
  lt_tensor *x = lt_test_random_tensor(ctx, LT_F32, 2, s22, LT_LAYOUT_CONTIGUOUS);
  assert_int_equal(lt_tensor_rank(x), 2);
  lt_tensor_destroy(x);
  lt_clear_error();
  assert_int_equal(lt_tensor_rank(x), 0);
  assert_non_null(
      strstr(lt_last_error(), "lt_tensor_rank: tensor (a tensor) was already destroyed"));
  assert_int_equal(lt_tensor_dtype(x), LT_DTYPE_INVALID);
  assert_null(lt_tensor_shape(x));
  assert_null(lt_tensor_strides(x));
  assert_int_equal(lt_tensor_numel(x), 0);
  assert_int_equal(lt_tensor_nbytes(x), 0);
  assert_int_equal(lt_tensor_offset(x), 0);
  assert_null(lt_tensor_context(x));
  assert_false(lt_tensor_is_contiguous(x));
  assert_false(lt_tensor_shares_storage(x, x));
}

static void test_accessors(void **state) {
  (void)state;
  lt_test_on_each_device(check_accessors);
}

/* A second destroy does nothing (the storage's other views keep working) and says why. */
static void check_double_destroy(lt_context *ctx) {
  lt_tensor *x = lt_test_random_tensor(ctx, LT_F32, 2, s22, LT_LAYOUT_CONTIGUOUS), *v;
  LT_CHECK(lt_view_transpose(x, 0, 1, &v));
  lt_tensor_destroy(x);
  lt_clear_error();
  lt_tensor_destroy(x); /* would drop the storage's last reference under v */
  assert_non_null(strstr(lt_last_error(), "lt_tensor_destroy: the handle (a tensor) was already"));
  int64_t idx[2] = {1, 0};
  double got;
  LT_CHECK(lt_tensor_get(v, idx, &got)); /* v still reads valid storage */
  lt_tensor_destroy(v);

  fixture f;
  fixture_make(ctx, &f);
  lt_plan *p = f.plan;
  f.plan = NULL;
  lt_plan_destroy(p);
  lt_clear_error();
  lt_plan_destroy(p);
  assert_non_null(strstr(lt_last_error(), "lt_plan_destroy: the handle (a plan) was already"));
  const lt_tensor *in[2] = {f.a, f.b};
  expect_invalid(lt_plan_execute(p, in, 2, NULL, 0, f.d), "lt_plan_execute", "already destroyed");
  size_t ws;
  expect_invalid(lt_plan_workspace_size(p, &ws), "lt_plan_workspace_size", "already destroyed");
  lt_tensor *o = NULL;
  expect_invalid(lt_plan_create_output(p, &o), "lt_plan_create_output", "already destroyed");
  assert_null(o);
  assert_null(lt_plan_describe(p));
  /* A tensor passed as a plan, and to a destroy of the wrong kind. */
  expect_invalid(lt_plan_execute((const lt_plan *)f.a, in, 2, NULL, 0, f.d), "lt_plan_execute",
                 "is a tensor handle, not a plan");
  lt_plan_destroy((lt_plan *)f.a);
  assert_non_null(strstr(lt_last_error(), "is a tensor handle, not a plan"));
  LT_CHECK(lt_tensor_get(f.a, idx, &got)); /* the tensor survived */
  fixture_free(&f);
}

static void test_double_destroy(void **state) {
  (void)state;
  lt_test_on_each_device(check_double_destroy);
}

/* Bad values given to a live object: the message names the setter (it did not). */
static void expect_named(lt_status st, lt_status want, const char *msg) {
  assert_int_equal(st, want);
  if (strcmp(lt_last_error(), msg) != 0)
    fail_msg("message '%s', expected '%s'", lt_last_error(), msg);
}

static void test_plan_options(void **state) {
  (void)state;
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  expect_named(lt_plan_options_set_compute_dtype(opts, LT_I8), LT_ERR_DTYPE,
               "lt_plan_options_set_compute_dtype: compute dtype must be f32, f64, i64 or u64, "
               "not i8");
  expect_named(lt_plan_options_set_unary(opts, 3, LT_UNARY_EXP), LT_ERR_OUT_OF_RANGE,
               "lt_plan_options_set_unary: operand index 3 is outside [0, 2] (A, B, C)");
  expect_named(lt_plan_options_set_unary(opts, 0, (lt_unary_op)999), LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_unary: unknown unary op code 999");
  expect_named(lt_plan_options_set_path(opts, (lt_path_algo)99), LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_path: unknown path algorithm 99");
  expect_named(lt_plan_options_set_memory_limit(opts, -1), LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_memory_limit: memory limit -1 is negative");
  expect_named(lt_plan_options_set_output_dtype(opts, (lt_dtype)99), LT_ERR_DTYPE,
               "lt_plan_options_set_output_dtype: invalid output dtype 99");
  const char *s = NULL;
  int64_t v = 0;
  int count = 0;
  LT_CHECK(lt_device_count(&count));
  assert_int_equal(lt_device_string(count, LT_DEVICE_NAME, &s), LT_ERR_OUT_OF_RANGE);
  assert_non_null(strstr(lt_last_error(), "lt_device_string: device index"));
  expect_named(lt_device_int(0, LT_DEVICE_NAME, &v), LT_ERR_INVALID_ARGUMENT,
               "lt_device_int: device property 1 is not an integer property");
  lt_plan_options_destroy(opts);
  expect_invalid(lt_plan_options_set_compute_dtype(opts, LT_F64), "set_compute_dtype",
                 "lt_plan_options_set_compute_dtype: opts (a plan options object) was already");
  expect_invalid(lt_plan_options_set_unary(opts, 0, LT_UNARY_EXP), "set_unary", "destroyed");
  expect_invalid(lt_plan_options_set_path(opts, LT_PATH_GREEDY), "set_path", "destroyed");
  expect_invalid(lt_plan_options_set_memory_limit(opts, 1), "set_memory_limit", "destroyed");
  expect_invalid(lt_plan_options_set_output_dtype(opts, LT_F32), "set_output_dtype", "destroyed");
  lt_clear_error();
  lt_plan_options_destroy(opts);
  assert_non_null(strstr(lt_last_error(), "already destroyed"));

  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  fixture f;
  fixture_make(ctx, &f);
  lt_plan *p = NULL;
  expect_invalid(lt_plan_binary(f.a, mij, f.b, mij, LT_BINARY_ADD, f.d, mij, opts, &p),
                 "lt_plan_binary", "lt_plan_binary: opts (a plan options object) was already");
  int32_t mk[1] = {3};
  expect_invalid(lt_plan_reduction(f.a, mij, NULL, NULL, LT_REDUCE_SUM, f.d, mij, opts, &p),
                 "lt_plan_reduction", "destroyed");
  (void)mk;
  const lt_tensor *in[2] = {f.a, f.b};
  expect_invalid(lt_plan_einsum("ij,jk->ik", 2, in, NULL, opts, &p), "lt_plan_einsum", "destroyed");
  lt_tensor *o = NULL;
  expect_invalid(lt_einsum("ij,jk->ik", 2, in, opts, &o), "lt_einsum", "destroyed");
  expect_invalid(lt_plan_einsum("ij,jk->ik", 2, in, NULL, (const lt_plan_options *)f.a, &p),
                 "lt_plan_einsum", "is a tensor handle, not a plan options object");
  assert_null(p);
  assert_null(o);
  fixture_free(&f);
  lt_context_destroy(ctx);
}

/* The user's context handle dies at lt_context_destroy even while tensors keep the object
 * alive: those tensors still work, the handle is refused, and a second destroy cannot drop a
 * reference that a tensor holds. */
static void check_context(const char *device) {
  lt_context *ctx;
  LT_CHECK(lt_context_create(device, &ctx));
  lt_tensor *x = lt_test_random_tensor(ctx, LT_F32, 2, s22, LT_LAYOUT_CONTIGUOUS);
  lt_context_destroy(ctx);
  lt_clear_error();
  lt_context_destroy(ctx);
  assert_non_null(strstr(lt_last_error(), "lt_context_destroy: the context was already destroyed"));
  lt_tensor *o = NULL;
  expect_invalid(lt_tensor_empty(ctx, LT_F32, 2, s22, &o), "lt_tensor_empty", "already destroyed");
  expect_invalid(lt_tensor_zeros(ctx, LT_F32, 2, s22, &o), "lt_tensor_zeros", "already destroyed");
  expect_invalid(lt_tensor_full(ctx, LT_F32, 2, s22, 1.0, &o), "lt_tensor_full", "destroyed");
  float host[4] = {1, 2, 3, 4};
  expect_invalid(lt_tensor_from_host(ctx, LT_F32, 2, s22, NULL, host, &o), "lt_tensor_from_host",
                 "destroyed");
  expect_invalid(lt_tensor_wrap_host(ctx, LT_F32, 2, s22, NULL, host, NULL, NULL, &o),
                 "lt_tensor_wrap_host", "destroyed");
  expect_invalid(lt_tensor_to_context(x, ctx, &o), "lt_tensor_to_context", "destroyed");
  expect_invalid(lt_npy_load(ctx, "/nonexistent.npy", &o), "lt_npy_load", "destroyed");
  expect_invalid(lt_npy_load_buffer(ctx, host, sizeof host, &o), "lt_npy_load_buffer", "destroyed");
  expect_invalid(lt_context_set_num_threads(ctx, 2), "lt_context_set_num_threads", "destroyed");
  expect_invalid(lt_context_synchronize(ctx), "lt_context_synchronize", "destroyed");
  expect_invalid(lt_context_clear_cache(ctx), "lt_context_clear_cache", "destroyed");
  assert_null(lt_context_device(ctx));
  assert_int_equal(lt_context_num_threads(ctx), 0);
  assert_null(o);
  /* The tensor keeps working on its (still alive) context. */
  lt_tensor *y = NULL;
  LT_CHECK(lt_add(x, x, &y));
  double got;
  int64_t idx[2] = {1, 1};
  LT_CHECK(lt_tensor_get(y, idx, &got));
  lt_tensor_destroy(y);
  lt_tensor_destroy(x); /* the last reference: the context object goes now */
  lt_clear_error();
  lt_context_destroy(ctx);
  assert_non_null(strstr(lt_last_error(), "already destroyed"));
  expect_invalid(lt_tensor_empty(ctx, LT_F32, 2, s22, &o), "lt_tensor_empty", "destroyed");
  /* A tensor passed as a context. */
  LT_CHECK(lt_context_create(device, &ctx));
  x = lt_test_random_tensor(ctx, LT_F32, 2, s22, LT_LAYOUT_CONTIGUOUS);
  expect_invalid(lt_tensor_empty((lt_context *)x, LT_F32, 2, s22, &o), "lt_tensor_empty",
                 "is a tensor handle, not a context");
  lt_context_destroy((lt_context *)x);
  assert_non_null(strstr(lt_last_error(), "is a tensor handle, not a context"));
  LT_CHECK(lt_tensor_get(x, idx, &got));
  lt_tensor_destroy(x);
  lt_context_destroy(ctx);
}

static void test_context(void **state) {
  (void)state;
  const char *devs[8];
  int n = lt_test_devices(devs);
  for (int i = 0; i < n; i++)
    check_context(devs[i]);
}

/* A pointer to memory that never was a handle. */
static void test_stray_pointer(void **state) {
  (void)state;
  uint64_t junk[64] = {0x1234567890abcdefull};
  lt_tensor *o = NULL;
  lt_status st = lt_tensor_empty((lt_context *)junk, LT_F32, 2, s22, &o);
  expect_invalid(st, "lt_tensor_empty", "is not a context handle");
  int axes[1] = {0};
  st = lt_reduce(LT_REDUCE_SUM, (const lt_tensor *)junk, 1, axes, false, &o);
  expect_invalid(st, "lt_reduce", "is not a tensor handle");
  lt_tensor_destroy((lt_tensor *)junk);
  assert_non_null(strstr(lt_last_error(), "is not a tensor handle"));
  assert_null(o);
}

/* Every lt_ad_* call checks its tape before anything runs: a destroyed tape used to compute
 * and return LT_OK as if none had been given, and another kind of handle was read as a tape
 * (UBSan: an invalid bool load). One call from each file that defines them. */
typedef lt_status (*ad_call)(lt_tape *tape, const lt_tensor *a, lt_tensor **out);
static lt_status ad_unary(lt_tape *tp, const lt_tensor *a, lt_tensor **o) {
  return lt_ad_unary(tp, LT_UNARY_EXP, a, o);
}
static lt_status ad_reduce(lt_tape *tp, const lt_tensor *a, lt_tensor **o) {
  return lt_ad_reduce(tp, LT_REDUCE_SUM, a, -1, NULL, false, o);
}
static lt_status ad_einsum(lt_tape *tp, const lt_tensor *a, lt_tensor **o) {
  return lt_ad_einsum(tp, "ij->ji", 1, &a, o);
}
static lt_status ad_reshape(lt_tape *tp, const lt_tensor *a, lt_tensor **o) {
  int64_t four = 4;
  return lt_ad_reshape(tp, a, 1, &four, o);
}
static lt_status ad_softmax(lt_tape *tp, const lt_tensor *a, lt_tensor **o) {
  return lt_ad_softmax(tp, a, -1, NULL, o);
}
static lt_status ad_stack(lt_tape *tp, const lt_tensor *a, lt_tensor **o) {
  return lt_ad_stack(tp, 1, &a, 0, o);
}

static void test_tape_argument(void **state) {
  (void)state;
  static const struct {
    const char *name;
    ad_call call;
  } calls[] = {{"lt_ad_unary", ad_unary},     {"lt_ad_reduce", ad_reduce},
               {"lt_ad_einsum", ad_einsum},   {"lt_ad_reshape", ad_reshape},
               {"lt_ad_softmax", ad_softmax}, {"lt_ad_stack", ad_stack}};
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *a;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s22, &a));
  lt_tape *live, *dead;
  LT_CHECK(lt_tape_create(ctx, &live));
  LT_CHECK(lt_tape_create(ctx, &dead));
  lt_tape_destroy(dead);
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    lt_tensor *o = (lt_tensor *)1;
    expect_invalid(calls[i].call(dead, a, &o), calls[i].name,
                   "tape (a tape) was already destroyed");
    assert_non_null(strstr(lt_last_error(), calls[i].name));
    o = NULL;
    expect_invalid(calls[i].call((lt_tape *)a, a, &o), calls[i].name,
                   "tape is a tensor handle, not a tape");
    assert_null(o);
    /* no tape and a live one still compute */
    LT_CHECK(calls[i].call(NULL, a, &o));
    lt_tensor_destroy(o);
    LT_CHECK(calls[i].call(live, a, &o));
    lt_tensor_destroy(o);
  }
  lt_tape_destroy(live);
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
}

/* A closed HDF5 file is a destroyed handle like any other: a second close or a later call is
 * LT_ERR_INVALID_HANDLE (it read freed memory before; ASan and valgrind check it). */
static void test_h5_file_handle(void **state) {
  (void)state;
  if (!lt_h5_available()) skip();
  char path[64];
  lt_test_temp_path(path);
  lt_h5_file *f;
  LT_CHECK(lt_h5_open(path, LT_H5_CREATE, &f));
  LT_CHECK(lt_h5_attr_set_int64(f, "/", "n", 3));
  LT_CHECK(lt_h5_close(f));
  expect_invalid(lt_h5_close(f), "lt_h5_close", "file (a HDF5 file) was already destroyed");
  assert_non_null(strstr(lt_last_error(), "lt_h5_close"));
  size_t need = 0;
  expect_invalid(lt_h5_list(f, NULL, 0, &need), "lt_h5_list", "already destroyed");
  int64_t v = 0;
  expect_invalid(lt_h5_attr_get_int64(f, "/", "n", &v), "lt_h5_attr_get_int64",
                 "already destroyed");
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = NULL;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s22, &t));
  expect_invalid(lt_h5_write(f, "/x", t, NULL, 0, 0), "lt_h5_write", "already destroyed");
  expect_invalid(lt_h5_list((lt_h5_file *)t, NULL, 0, &need), "lt_h5_list",
                 "file is a tensor handle, not a HDF5 file");
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f)); /* the file itself is intact */
  LT_CHECK(lt_h5_attr_get_int64(f, "/", "n", &v));
  assert_int_equal(v, 3);
  LT_CHECK(lt_h5_close(f));
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_destroyed_tensors), cmocka_unit_test(test_accessors),
      cmocka_unit_test(test_double_destroy),    cmocka_unit_test(test_plan_options),
      cmocka_unit_test(test_context),           cmocka_unit_test(test_stray_pointer),
      cmocka_unit_test(test_tape_argument),     cmocka_unit_test(test_h5_file_handle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

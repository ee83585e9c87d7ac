/* SPDX-License-Identifier: MIT */
/* Failure injection: a context allocator that fails exactly the N-th allocation. For every
 * representative call, N sweeps over every allocation the call makes: the call must return
 * LT_ERR_OUT_OF_MEMORY with a message (or succeed once N is past its last allocation), leave
 * its out-parameter NULL, leave the caller's objects bytewise intact and usable, and leak
 * nothing (the hook counts live blocks and bytes and checks every free's size). */
#include "harness.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the failing allocator ---- */

typedef struct hook {
  atomic_llong calls;   /* allocations attempted so far */
  atomic_llong fail_at; /* 1-based allocation number that returns NULL; 0 = none */
  atomic_llong live_blocks, live_bytes;
  atomic_int bad_free; /* a free whose size differs from the allocation's */
} hook;

#define HOOK_HEADER 64 /* keeps the user block 64-byte aligned */

static void *hook_alloc(size_t bytes, size_t align, void *user) {
  hook *h = user;
  long long n = atomic_fetch_add(&h->calls, 1) + 1;
  if (n == atomic_load(&h->fail_at)) return NULL;
  if (align > HOOK_HEADER || bytes > SIZE_MAX / 2) return NULL;
  size_t total = (HOOK_HEADER + bytes + HOOK_HEADER - 1) / HOOK_HEADER * HOOK_HEADER;
  unsigned char *p = aligned_alloc(HOOK_HEADER, total);
  if (p == NULL) return NULL;
  memcpy(p, &bytes, sizeof bytes);
  atomic_fetch_add(&h->live_blocks, 1);
  atomic_fetch_add(&h->live_bytes, (long long)bytes);
  return p + HOOK_HEADER;
}

static void hook_free(void *ptr, size_t bytes, void *user) {
  hook *h = user;
  if (ptr == NULL) return;
  unsigned char *p = (unsigned char *)ptr - HOOK_HEADER;
  size_t recorded;
  memcpy(&recorded, p, sizeof recorded);
  if (recorded != bytes) atomic_store(&h->bad_free, 1);
  atomic_fetch_sub(&h->live_blocks, 1);
  atomic_fetch_sub(&h->live_bytes, (long long)recorded);
  free(p);
}

static void hook_reset(hook *h) {
  atomic_store(&h->calls, 0);
  atomic_store(&h->fail_at, 0);
  atomic_store(&h->live_blocks, 0);
  atomic_store(&h->live_bytes, 0);
  atomic_store(&h->bad_free, 0);
}

static void hook_check_clean(hook *h, const char *what, long long n) {
  if (atomic_load(&h->bad_free)) fail_msg("%s (N=%lld): a free passed the wrong size", what, n);
  if (atomic_load(&h->live_blocks) != 0 || atomic_load(&h->live_bytes) != 0)
    fail_msg("%s (N=%lld): %lld blocks / %lld bytes leaked", what, n,
             (long long)atomic_load(&h->live_blocks), (long long)atomic_load(&h->live_bytes));
}

/* ---- scenarios: inputs made without failures, one call under injection ---- */

#define MAX_INPUTS 48 /* the einsum chain below */

typedef struct fixture {
  lt_context *ctx;
  lt_tensor *in[MAX_INPUTS];
  double *snap[MAX_INPUTS];
  int n_in;
  lt_tensor *out; /* result of a call that creates a tensor */
  lt_plan *plan;  /* result of a call that creates a plan */
  void *aux;      /* scenario data (host buffers) */
  int released;   /* wrap_host release callback count */
} fixture;

typedef struct scenario {
  const char *name;
  void (*setup)(fixture *f);
  lt_status (*run)(fixture *f);
  bool every_device; /* also swept on OpenCL (context creation there is slow: a subset) */
} scenario;

static void add_input(fixture *f, lt_tensor *t) {
  f->snap[f->n_in] = lt_test_snapshot(t);
  f->in[f->n_in++] = t;
}

static void add_random(fixture *f, int rank, const int64_t *shape, lt_test_layout layout) {
  add_input(f, lt_test_random_tensor(f->ctx, LT_F32, rank, shape, layout));
}

static void setup_matrix(fixture *f) {
  const int64_t shape[3] = {3, 4, 5};
  add_random(f, 3, shape, LT_LAYOUT_TRANSPOSED);
}

static void setup_three(fixture *f) {
  const int64_t a[2] = {3, 4}, b[2] = {4, 5}, c[2] = {5, 2};
  add_random(f, 2, a, LT_LAYOUT_TRANSPOSED);
  add_random(f, 2, b, LT_LAYOUT_NEGATIVE);
  add_random(f, 2, c, LT_LAYOUT_STEPPED);
}

static void setup_none(fixture *f) {}

static const int64_t shape345[3] = {3, 4, 5};

static lt_status run_empty(fixture *f) {
  return lt_tensor_empty(f->ctx, LT_F32, 3, shape345, &f->out);
}
static lt_status run_full(fixture *f) {
  return lt_tensor_full(f->ctx, LT_F64, 3, shape345, 2.5, &f->out);
}
static lt_status run_from_host_strided(fixture *f) {
  static double data[2 * 3 * 4 * 5];
  for (int i = 0; i < 120; i++)
    data[i] = i + 1;
  const int64_t strides[3] = {40, 10, 2}; /* every second element: needs a gather buffer */
  return lt_tensor_from_host(f->ctx, LT_F64, 3, shape345, strides, data, &f->out);
}
static void on_release(void *data, void *user) { ((fixture *)user)->released++; }
static lt_status run_wrap_host(fixture *f) {
  static float data[60];
  lt_status st =
      lt_tensor_wrap_host(f->ctx, LT_F32, 3, shape345, NULL, data, on_release, f, &f->out);
  if (st != LT_OK) assert_int_equal(f->released, 0); /* never released on failure */
  return st;
}
static lt_status run_reshape_view(fixture *f) {
  const int64_t shape[4] = {3, 1, 4, 5};
  return lt_view_reshape(f->in[0], 4, shape, &f->out);
}
static lt_status run_permute(fixture *f) {
  return lt_view_permute(f->in[0], (const int[]){2, 0, 1}, &f->out);
}
static lt_status run_slice(fixture *f) { return lt_view_slice(f->in[0], 1, 3, 0, -2, &f->out); }
static lt_status run_broadcast(fixture *f) {
  const int64_t shape[4] = {2, 3, 4, 5};
  return lt_view_broadcast_to(f->in[0], 4, shape, &f->out);
}
static lt_status run_diagonal(fixture *f) { return lt_view_diagonal(f->in[0], 1, 1, 2, &f->out); }
static lt_status run_as_strided(fixture *f) {
  const int64_t shape[2] = {2, 3}, strides[2] = {0, 2};
  return lt_view_as_strided(f->in[0], 2, shape, strides, 1, &f->out);
}
static lt_status run_contiguous(fixture *f) {
  return lt_tensor_contiguous(f->in[0], LT_F64, &f->out);
}
static lt_status run_reshape_copy(fixture *f) {
  const int64_t shape[1] = {60};
  return lt_tensor_reshape(f->in[0], 1, shape, &f->out);
}
static lt_status run_to_host(fixture *f) {
  float buf[60];
  return lt_tensor_to_host(f->in[0], buf, sizeof buf);
}
static lt_status run_to_context(fixture *f) {
  return lt_tensor_to_context(f->in[0], f->ctx, &f->out);
}

/* copy_into from a partially overlapping view of the destination (goes through a temporary):
 * on failure the destination must be unchanged, which the intact check verifies. */
static void setup_overlap(fixture *f) {
  const int64_t shape[1] = {40};
  add_random(f, 1, shape, LT_LAYOUT_CONTIGUOUS);
}
static lt_status run_copy_into_overlap(fixture *f) {
  lt_tensor *dst = NULL, *src = NULL;
  lt_status st = lt_view_slice(f->in[0], 0, 0, 30, 1, &dst);
  if (st == LT_OK) st = lt_view_slice(f->in[0], 0, 5, 35, 1, &src);
  if (st == LT_OK) st = lt_tensor_copy_into(dst, src);
  lt_tensor_destroy(src);
  lt_tensor_destroy(dst);
  if (st == LT_OK) { /* the intact check compares against the new contents */
    free(f->snap[0]);
    f->snap[0] = NULL;
  }
  return st;
}

/* ---- operations and einsum ---- */

static lt_status run_plan_binary(fixture *f) {
  const int32_t ma[3] = {0, 1, 2}, mb[2] = {1, 2}, md[3] = {0, 1, 2};
  lt_tensor *b = NULL, *d = NULL;
  const int64_t shape[2] = {4, 5};
  lt_status st = lt_tensor_empty(f->ctx, LT_F32, 2, shape, &b);
  if (st == LT_OK) st = lt_tensor_empty(f->ctx, LT_F32, 3, shape345, &d);
  if (st == LT_OK) st = lt_plan_binary(f->in[0], ma, b, mb, LT_BINARY_ADD, d, md, NULL, &f->plan);
  lt_tensor_destroy(b);
  lt_tensor_destroy(d);
  return st;
}
static lt_status run_plan_reduction(fixture *f) {
  const int32_t ma[3] = {0, 1, 2}, md[1] = {1};
  lt_tensor *d = NULL;
  const int64_t shape[1] = {4};
  lt_status st = lt_tensor_empty(f->ctx, LT_F32, 1, shape, &d);
  if (st == LT_OK)
    st = lt_plan_reduction(f->in[0], ma, NULL, NULL, LT_REDUCE_SUM, d, md, NULL, &f->plan);
  lt_tensor_destroy(d);
  return st;
}
static lt_status run_plan_einsum(fixture *f) {
  return lt_plan_einsum("ij,jk,kl->il", 3, (const lt_tensor *const *)f->in, NULL, NULL, &f->plan);
}
/* Plan, output and one execution (which may allocate a workspace). */
static lt_status run_plan_einsum_execute(fixture *f) {
  lt_status st = run_plan_einsum(f);
  if (st == LT_OK) st = lt_plan_create_output(f->plan, &f->out);
  if (st == LT_OK)
    st = lt_plan_execute(f->plan, (const lt_tensor *const *)f->in, 3, NULL, 0, f->out);
  if (st != LT_OK) { /* a composite call: undo the steps that succeeded */
    lt_tensor_destroy(f->out);
    lt_plan_destroy(f->plan);
    f->out = NULL;
    f->plan = NULL;
  }
  return st;
}
static lt_status run_einsum(fixture *f) {
  return lt_einsum("ij,jk,kl->il", 3, (const lt_tensor *const *)f->in, NULL, &f->out);
}
/* The same call a second time: the plan comes from the context's cache, filled in setup. */
static void setup_three_cached(fixture *f) {
  setup_three(f);
  LT_CHECK(run_einsum(f));
  lt_tensor_destroy(f->out);
  f->out = NULL;
}
static lt_status run_einsum_modes(fixture *f) {
  const int32_t ma[2] = {10, -1}, mb[2] = {-1, 7}, mc[2] = {7, 300}, md[2] = {300, 10};
  const int32_t *modes[3] = {ma, mb, mc};
  return lt_einsum_modes(3, (const lt_tensor *const *)f->in, modes, 2, md, NULL, &f->out);
}
static lt_status run_plan_contraction(fixture *f) {
  const int32_t ma[2] = {'i', 'j'}, mb[2] = {'j', 'k'}, md[2] = {'k', 'i'};
  lt_tensor *d = NULL;
  const int64_t shape[2] = {5, 3};
  lt_status st = lt_tensor_empty(f->ctx, LT_F32, 2, shape, &d);
  if (st == LT_OK)
    st = lt_plan_contraction(f->in[0], ma, f->in[1], mb, NULL, NULL, d, md, NULL, &f->plan);
  lt_tensor_destroy(d);
  return st;
}

/* A chain of MAX_INPUTS 2x2 matrices ("ab,bc,...->aW"): a greedy path, a description that
 * outgrows its first buffer and a cache key too long for the stack buffer. */
static void setup_chain(fixture *f) {
  static char expr[4 * MAX_INPUTS + 8];
  const char *letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const lt_test_layout layouts[3] = {LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_TRANSPOSED,
                                     LT_LAYOUT_NEGATIVE};
  const int64_t shape[2] = {2, 2};
  size_t n = 0;
  for (int k = 0; k < MAX_INPUTS; k++) {
    add_random(f, 2, shape, layouts[k % 3]);
    if (k) expr[n++] = ',';
    expr[n++] = letters[k];
    expr[n++] = letters[k + 1];
  }
  snprintf(expr + n, sizeof expr - n, "->%c%c", letters[0], letters[MAX_INPUTS]);
  f->aux = expr;
}
/* Into a fresh output made under injection too (the inputs stay bytewise intact). */
static lt_status run_einsum_into_chain(fixture *f) {
  lt_tensor *d = NULL;
  const int64_t shape[2] = {2, 2};
  lt_status st = lt_tensor_empty(f->ctx, LT_F32, 2, shape, &d);
  if (st == LT_OK)
    st = lt_einsum_into(f->aux, MAX_INPUTS, (const lt_tensor *const *)f->in, NULL, d);
  lt_tensor_destroy(d);
  return st;
}
static lt_status run_einsum_trace(fixture *f) {
  return lt_einsum("iji->j", 1, (const lt_tensor *const *)f->in, NULL, &f->out);
}
static void setup_trace(fixture *f) {
  const int64_t shape[3] = {3, 4, 3};
  add_random(f, 3, shape, LT_LAYOUT_STEPPED);
}
static lt_status run_add(fixture *f) { return lt_add(f->in[0], f->in[1], &f->out); }
static void setup_pair(fixture *f) {
  const int64_t a[3] = {3, 4, 5}, b[2] = {4, 5};
  add_random(f, 3, a, LT_LAYOUT_NEGATIVE);
  add_random(f, 2, b, LT_LAYOUT_BROADCAST);
}
static lt_status run_reduce(fixture *f) {
  const int axes[2] = {0, 2};
  return lt_reduce(LT_REDUCE_MAX, f->in[0], 2, axes, false, &f->out);
}

/* A valid version-1.0 .npy file: a big-endian float64 array of shape (3, 4) in Fortran order,
 * so a loader has every reason to allocate a temporary. */
static void setup_npy(fixture *f) {
  static unsigned char file[128 + 96];
  const char *dict = "{'descr': '>f8', 'fortran_order': True, 'shape': (3, 4), }";
  memset(file, ' ', 128);
  memcpy(file, "\x93NUMPY\x01\x00", 8);
  file[8] = 128 - 10;
  file[9] = 0;
  memcpy(file + 10, dict, strlen(dict));
  file[127] = '\n';
  for (int i = 0; i < 12; i++) {
    double v = 0.25 * (i + 1);
    unsigned char b[8];
    memcpy(b, &v, 8);
    for (int k = 0; k < 8; k++)
      file[128 + 8 * i + k] = b[7 - k];
  }
  f->aux = file;
}
static lt_status run_npy(fixture *f) {
  lt_status st = lt_npy_load_buffer(f->ctx, f->aux, 128 + 96, &f->out);
  if (st == LT_OK) {
    /* Element (1, 2) sits at Fortran position 1 + 2*3 = 7, value 0.25 * 8. */
    double v;
    LT_CHECK(lt_tensor_get(f->out, (const int64_t[]){1, 2}, &v));
    assert_true(v == 2.0);
  }
  return st;
}

/* ---- the sweep ---- */

static void fixture_free(fixture *f) {
  for (int i = 0; i < f->n_in; i++) {
    lt_tensor_destroy(f->in[i]);
    free(f->snap[i]);
  }
  lt_tensor_destroy(f->out);
  lt_plan_destroy(f->plan);
  f->out = NULL;
  f->plan = NULL;
}

/* Inputs bytewise unchanged (unless the call legitimately wrote them) and still usable. */
static void check_intact(fixture *f) {
  for (int i = 0; i < f->n_in; i++) {
    if (f->snap[i]) lt_test_check_unchanged(f->in[i], f->snap[i]);
    lt_tensor *c = NULL;
    LT_CHECK(lt_tensor_contiguous(f->in[i], LT_DTYPE_INVALID, &c));
    lt_tensor_destroy(c);
  }
}

/* Returns the number of allocations the call makes. */
static long long sweep(const scenario *sc, const char *device) {
  hook h;
  for (long long n = 1;; n++) {
    hook_reset(&h);
    fixture f = {0};
    LT_CHECK(lt_context_create_with_allocator(device, hook_alloc, hook_free, &h, &f.ctx));
    sc->setup(&f);
    long long before = atomic_load(&h.calls);
    atomic_store(&h.fail_at, before + n);
    lt_clear_error();
    lt_status st = sc->run(&f);
    bool injected = atomic_load(&h.calls) >= before + n;
    atomic_store(&h.fail_at, 0);
    long long made = atomic_load(&h.calls) - before;
    if (st != LT_OK) {
      if (st != LT_ERR_OUT_OF_MEMORY)
        fail_msg("%s: allocation %lld of the call failed and it returned %s (%s)", sc->name, n,
                 lt_status_string(st), lt_last_error());
      if (!injected) fail_msg("%s: out of memory without an injected failure", sc->name);
      if (lt_last_error()[0] == '\0') fail_msg("%s: out of memory without a message", sc->name);
      if (f.out != NULL || f.plan != NULL)
        fail_msg("%s: failed but set its out-parameter", sc->name);
      check_intact(&f);
      /* The library is still consistent: the same call now succeeds. */
      LT_CHECK(sc->run(&f));
    }
    check_intact(&f);
    fixture_free(&f);
    lt_context_destroy(f.ctx);
    hook_check_clean(&h, sc->name, n);
    if (!injected) {
      printf("[alloc] %-8s %-32s %3lld allocations swept\n", device, sc->name, made);
      return made;
    }
  }
}

static void run_scenarios(const scenario *list, size_t count) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (size_t i = 0; i < count; i++) {
    for (int d = 0; d < ndev; d++)
      if (d == 0 || list[i].every_device) sweep(&list[i], devs[d]);
  }
}

static void sweep_context_creation(const char *device) {
  hook h;
  for (long long n = 1;; n++) {
    hook_reset(&h);
    atomic_store(&h.fail_at, n);
    lt_context *ctx = (lt_context *)&h; /* must be overwritten with NULL on failure */
    lt_status st = lt_context_create_with_allocator(device, hook_alloc, hook_free, &h, &ctx);
    bool injected = atomic_load(&h.calls) >= n;
    if (st != LT_OK) {
      assert_int_equal(st, LT_ERR_OUT_OF_MEMORY);
      assert_null(ctx);
    } else {
      lt_tensor *t = NULL; /* usable */
      atomic_store(&h.fail_at, 0);
      LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 0, NULL, &t));
      lt_tensor_destroy(t);
    }
    lt_context_destroy(ctx);
    hook_check_clean(&h, "lt_context_create", n);
    if (!injected) {
      printf("[alloc] %-8s %-32s %3lld allocations swept\n", device, "lt_context_create", n - 1);
      return;
    }
  }
}

static void test_context_creation(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++)
    sweep_context_creation(devs[d]);
}

static void test_tensors_and_views(void **state) {
  const scenario list[] = {
      {"lt_tensor_empty", setup_none, run_empty, false},
      {"lt_tensor_full", setup_none, run_full, true},
      {"lt_tensor_from_host(strided)", setup_none, run_from_host_strided, false},
      {"lt_tensor_wrap_host", setup_none, run_wrap_host, false},
      {"lt_view_reshape", setup_matrix, run_reshape_view, false},
      {"lt_view_permute", setup_matrix, run_permute, false},
      {"lt_view_slice", setup_matrix, run_slice, false},
      {"lt_view_broadcast_to", setup_matrix, run_broadcast, false},
      {"lt_view_diagonal", setup_matrix, run_diagonal, false},
      {"lt_view_as_strided", setup_matrix, run_as_strided, false},
  };
  run_scenarios(list, sizeof list / sizeof list[0]);
}

static void test_copies(void **state) {
  const scenario list[] = {
      {"lt_tensor_contiguous", setup_matrix, run_contiguous, true},
      {"lt_tensor_reshape(copy)", setup_matrix, run_reshape_copy, false},
      {"lt_tensor_to_host(strided)", setup_matrix, run_to_host, true},
      {"lt_tensor_to_context", setup_matrix, run_to_context, false},
      {"lt_tensor_copy_into(overlap)", setup_overlap, run_copy_into_overlap, true},
  };
  run_scenarios(list, sizeof list / sizeof list[0]);
}

static void test_operations(void **state) {
  const scenario list[] = {
      {"lt_plan_binary", setup_matrix, run_plan_binary, false},
      {"lt_plan_reduction", setup_matrix, run_plan_reduction, false},
      {"lt_add", setup_pair, run_add, true},
      {"lt_reduce(max)", setup_matrix, run_reduce, true},
      {"lt_plan_einsum(3 operands)", setup_three, run_plan_einsum, false},
      {"lt_plan_einsum+execute", setup_three, run_plan_einsum_execute, true},
      {"lt_einsum(3 operands)", setup_three, run_einsum, true},
      {"lt_einsum(cache hit)", setup_three_cached, run_einsum, true},
      {"lt_einsum_modes(3 operands)", setup_three, run_einsum_modes, false},
      {"lt_einsum_into(48-matrix chain)", setup_chain, run_einsum_into_chain, false},
      {"lt_plan_contraction", setup_three, run_plan_contraction, false},
      {"lt_einsum(iji->j)", setup_trace, run_einsum_trace, false},
      {"lt_npy_load_buffer", setup_npy, run_npy, false},
  };
  run_scenarios(list, sizeof list / sizeof list[0]);
}

int main(void) {
  lt_test_rng_reset(lt_test_seed());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_context_creation),
      cmocka_unit_test(test_tensors_and_views),
      cmocka_unit_test(test_copies),
      cmocka_unit_test(test_operations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

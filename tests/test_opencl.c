/* SPDX-License-Identifier: MIT */
/* OpenCL backend specifics: device listing and selection, transfers, views handed to kernels,
 * each backend step (map, reduce, gemm) against the CPU backend, cl object leaks (counted by
 * interposing the ICD loader's create/release calls), and LT_KERNEL_DIR with a broken kernel.
 * Exits 77 (skipped) where no OpenCL device opens. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include "core/object.h" /* white-box: backend steps are run directly on both backends */
#include "harness.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if __has_include(<CL/cl.h>)
#include <CL/cl.h>
#define LT_TEST_HAVE_CL 1
#endif

/* ---- cl object accounting: these definitions interpose the ICD loader's (the library
 * resolves them to the executable first) and forward to it. ---- */

static long cl_live, cl_created;

#ifdef LT_TEST_HAVE_CL
#define FORWARD(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
#define TRACK_CREATE(obj)                                                                          \
  do {                                                                                             \
    if (obj) {                                                                                     \
      __atomic_add_fetch(&cl_live, 1, __ATOMIC_SEQ_CST);                                           \
      __atomic_add_fetch(&cl_created, 1, __ATOMIC_SEQ_CST);                                        \
    }                                                                                              \
  } while (0)
#define TRACK_RELEASE(err)                                                                         \
  do {                                                                                             \
    if ((err) == CL_SUCCESS) __atomic_sub_fetch(&cl_live, 1, __ATOMIC_SEQ_CST);                    \
  } while (0)

cl_context CL_API_CALL clCreateContext(const cl_context_properties *props, cl_uint n,
                                       const cl_device_id *devs,
                                       void(CL_CALLBACK *notify)(const char *, const void *, size_t,
                                                                 void *),
                                       void *user, cl_int *err) {
  cl_context c = FORWARD(clCreateContext)(props, n, devs, notify, user, err);
  TRACK_CREATE(c);
  return c;
}
cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context c, cl_device_id d,
                                                  cl_command_queue_properties p, cl_int *err) {
  cl_command_queue q = FORWARD(clCreateCommandQueue)(c, d, p, err);
  TRACK_CREATE(q);
  return q;
}
cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags f, size_t size, void *host,
                                  cl_int *err) {
  cl_mem m = FORWARD(clCreateBuffer)(c, f, size, host, err);
  TRACK_CREATE(m);
  return m;
}
cl_program CL_API_CALL clCreateProgramWithSource(cl_context c, cl_uint n, const char **src,
                                                 const size_t *len, cl_int *err) {
  cl_program p = FORWARD(clCreateProgramWithSource)(c, n, src, len, err);
  TRACK_CREATE(p);
  return p;
}
cl_program CL_API_CALL clCreateProgramWithBinary(cl_context c, cl_uint n, const cl_device_id *d,
                                                 const size_t *len, const unsigned char **bin,
                                                 cl_int *status, cl_int *err) {
  cl_program p = FORWARD(clCreateProgramWithBinary)(c, n, d, len, bin, status, err);
  TRACK_CREATE(p);
  return p;
}
cl_kernel CL_API_CALL clCreateKernel(cl_program p, const char *name, cl_int *err) {
  cl_kernel k = FORWARD(clCreateKernel)(p, name, err);
  TRACK_CREATE(k);
  return k;
}
cl_int CL_API_CALL clReleaseContext(cl_context c) {
  cl_int e = FORWARD(clReleaseContext)(c);
  TRACK_RELEASE(e);
  return e;
}
cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q) {
  cl_int e = FORWARD(clReleaseCommandQueue)(q);
  TRACK_RELEASE(e);
  return e;
}
cl_int CL_API_CALL clReleaseMemObject(cl_mem m) {
  cl_int e = FORWARD(clReleaseMemObject)(m);
  TRACK_RELEASE(e);
  return e;
}
cl_int CL_API_CALL clReleaseProgram(cl_program p) {
  cl_int e = FORWARD(clReleaseProgram)(p);
  TRACK_RELEASE(e);
  return e;
}
cl_int CL_API_CALL clReleaseKernel(cl_kernel k) {
  cl_int e = FORWARD(clReleaseKernel)(k);
  TRACK_RELEASE(e);
  return e;
}
#endif

/* ---- helpers ---- */

static const lt_dtype all_dtypes[] = {LT_F16, LT_BF16, LT_F32, LT_F64, LT_I64};

static lt_context *open_device(const char *device) {
  lt_context *ctx = NULL;
  LT_CHECK(lt_context_create(device, &ctx));
  return ctx;
}

/* Identical random contents of `dtype` on a CPU and an OpenCL context: converted on the CPU,
 * then moved as raw bytes. Integers for i64 (values in [-1000, 1000]), else [-1, 1). */
static void random_pair(lt_context *cpu, lt_context *ocl, lt_dtype dtype, int rank,
                        const int64_t *shape, lt_tensor **on_cpu, lt_tensor **on_ocl) {
  int64_t n = lt_test_numel(rank, shape);
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    v[i] = lt_test_rand_double(-1.0, 1.0);
    if (dtype == LT_I64) v[i] = floor(v[i] * 1000.0);
  }
  lt_tensor *f64 = NULL;
  LT_CHECK(lt_tensor_from_host(cpu, LT_F64, rank, shape, NULL, v, &f64));
  LT_CHECK(lt_tensor_contiguous(f64, dtype, on_cpu));
  LT_CHECK(lt_tensor_to_context(*on_cpu, ocl, on_ocl));
  lt_tensor_destroy(f64);
  free(v);
}

static double host_value(const unsigned char *buf, lt_dtype dtype, int64_t i) {
  size_t es = lt_dtype_size(dtype);
  uint16_t h;
  float f;
  double d;
  int64_t q;
  switch (dtype) {
  case LT_F16: memcpy(&h, buf + i * (int64_t)es, 2); return lt_f16_to_f32(h);
  case LT_BF16: memcpy(&h, buf + i * (int64_t)es, 2); return lt_bf16_to_f32(h);
  case LT_F32: memcpy(&f, buf + i * (int64_t)es, 4); return f;
  case LT_F64: memcpy(&d, buf + i * (int64_t)es, 8); return d;
  default: memcpy(&q, buf + i * (int64_t)es, 8); return (double)q;
  }
}

/* Values of a C-contiguous tensor read as raw bytes (no kernel involved), as doubles. */
static double *dense_values(const lt_tensor *t) {
  assert_true(lt_tensor_is_contiguous(t));
  size_t bytes = lt_tensor_nbytes(t);
  int64_t n = lt_tensor_numel(t);
  unsigned char *raw = malloc(bytes ? bytes : 1);
  LT_CHECK(lt_tensor_to_host(t, raw, bytes));
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++)
    v[i] = host_value(raw, lt_tensor_dtype(t), i);
  free(raw);
  return v;
}

/* Both dense tensors hold the same values within rtol (0: exactly; NaN matches NaN). */
static void assert_same(const lt_tensor *want, const lt_tensor *got, double rtol,
                        const char *what) {
  assert_int_equal(lt_tensor_numel(want), lt_tensor_numel(got));
  double *w = dense_values(want), *g = dense_values(got);
  lt_test_assert_close(g, w, lt_tensor_numel(want), rtol, what);
  free(w);
  free(g);
}

/* ---- devices ---- */

static void test_device_listing(void **state) {
  int count = 0;
  LT_CHECK(lt_device_count(&count));
  assert_true(count >= 2); /* the CPU and at least the device that opened */
  const char *first_gpu = NULL, *first = NULL;
  for (int i = 1; i < count; i++) {
    const char *id, *name, *vendor, *type;
    int64_t mem, units, fp64, fp16;
    LT_CHECK(lt_device_string(i, LT_DEVICE_ID, &id));
    LT_CHECK(lt_device_string(i, LT_DEVICE_NAME, &name));
    LT_CHECK(lt_device_string(i, LT_DEVICE_VENDOR, &vendor));
    LT_CHECK(lt_device_string(i, LT_DEVICE_TYPE, &type));
    LT_CHECK(lt_device_int(i, LT_DEVICE_GLOBAL_MEMORY, &mem));
    LT_CHECK(lt_device_int(i, LT_DEVICE_COMPUTE_UNITS, &units));
    LT_CHECK(lt_device_int(i, LT_DEVICE_FP64, &fp64));
    LT_CHECK(lt_device_int(i, LT_DEVICE_FP16, &fp16));
    int p = -1, d = -1, used = 0;
    assert_int_equal(sscanf(id, "opencl:%d:%d%n", &p, &d, &used), 2);
    assert_int_equal((size_t)used, strlen(id));
    assert_true(name[0] != '\0' && vendor[0] != '\0');
    assert_true(strcmp(type, "cpu") == 0 || strcmp(type, "gpu") == 0 ||
                strcmp(type, "accelerator") == 0 || strcmp(type, "other") == 0);
    assert_true(mem > 0 && units > 0);
    assert_true((fp64 == 0 || fp64 == 1) && (fp16 == 0 || fp16 == 1));
    if (!first) first = id;
    if (!first_gpu && strcmp(type, "gpu") == 0) first_gpu = id;
    lt_context *ctx = open_device(id);
    assert_string_equal(lt_context_device(ctx), id);
    lt_context_destroy(ctx);
    const char *s;
    LT_CHECK_FAILS(lt_device_string(i, LT_DEVICE_FP64, &s), LT_ERR_INVALID_ARGUMENT);
  }
  /* "opencl" is the first GPU, else the first device. */
  lt_context *ctx = open_device("opencl");
  assert_string_equal(lt_context_device(ctx), first_gpu ? first_gpu : first);
  lt_context_destroy(ctx);
  const char *s;
  LT_CHECK_FAILS(lt_device_string(count, LT_DEVICE_ID, &s), LT_ERR_OUT_OF_RANGE);
}

static void test_device_string_errors(void **state) {
  const char *bad[] = {"opencl:99:0", "opencl:0:99",  "opencl:x",    "opencl:0",
                       "opencl:0:",   "opencl:0:0:0", "opencl:-1:0", "opencl: 0:0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lt_context *ctx = (lt_context *)&ctx; /* must come back NULL */
    LT_CHECK_FAILS(lt_context_create(bad[i], &ctx), LT_ERR_NO_DEVICE);
    assert_null(ctx);
    assert_non_null(strstr(lt_last_error(), bad[i]));
  }
}

/* ---- transfers and views ---- */

static void test_transfers(void **state) {
  lt_context *cpu = open_device("cpu"), *ocl = open_device("opencl");
  int64_t shape[3] = {4, 5, 7};
  for (size_t k = 0; k < sizeof all_dtypes / sizeof all_dtypes[0]; k++) {
    lt_tensor *a = NULL, *b = NULL, *back = NULL, *ta = NULL, *tb = NULL, *ca = NULL;
    random_pair(cpu, ocl, all_dtypes[k], 3, shape, &a, &b);
    LT_CHECK(lt_tensor_to_context(b, cpu, &back));
    assert_string_equal(lt_context_device(lt_tensor_context(b)), lt_context_device(ocl));
    assert_same(a, back, 0, "round trip");
    lt_tensor_destroy(back);
    /* A strided device view comes back gathered in C order. */
    int axes[3] = {2, 0, 1};
    LT_CHECK(lt_view_permute(a, axes, &ta));
    LT_CHECK(lt_view_permute(b, axes, &tb));
    LT_CHECK(lt_tensor_to_context(tb, cpu, &back));
    LT_CHECK(lt_tensor_contiguous(ta, LT_DTYPE_INVALID, &ca));
    assert_same(ca, back, 0, "strided view to cpu");
    /* Single elements through get/set at an offset. */
    int64_t idx[3] = {3, -1, 2};
    double want = all_dtypes[k] == LT_I64 ? -7.0 : 0.75, v;
    LT_CHECK(lt_tensor_set(b, idx, want));
    LT_CHECK(lt_tensor_get(b, idx, &v));
    assert_true(v == want);
    lt_tensor_destroy(ca);
    lt_tensor_destroy(back);
    lt_tensor_destroy(ta);
    lt_tensor_destroy(tb);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
  }
  LT_CHECK(lt_context_synchronize(ocl));
  lt_context_destroy(ocl);
  lt_context_destroy(cpu);
}

/* View recipes applied identically on both backends; each names its base shape. */
typedef struct recipe {
  const char *name;
  int rank;
  int64_t shape[3];
} recipe;

static const recipe recipes[] = {
    {"permute 201 (tiled)", 3, {6, 7, 40}},
    {"transpose 2d (tiled, many tiles)", 2, {70, 90}},
    {"permute 102", 3, {6, 7, 40}},
    {"negative steps", 3, {6, 7, 40}},
    {"flip + transpose", 3, {6, 9, 12}},
    {"broadcast", 3, {6, 7, 40}},
    {"diagonal", 3, {6, 7, 40}},
    {"size 0", 3, {6, 7, 40}},
    {"rank 0", 3, {6, 7, 40}},
    {"size 1 dims", 3, {1, 33, 1}},
};

static void apply_recipe(int r, const lt_tensor *base, lt_tensor **out) {
  lt_tensor *t1 = NULL, *t2 = NULL;
  switch (r) {
  case 0: LT_CHECK(lt_view_permute(base, (int[]){2, 0, 1}, out)); break;
  case 1: LT_CHECK(lt_view_transpose(base, 0, 1, out)); break;
  case 2: LT_CHECK(lt_view_permute(base, (int[]){1, 0, 2}, out)); break;
  case 3:
    LT_CHECK(lt_view_slice(base, 2, 38, 1, -3, &t1));
    LT_CHECK(lt_view_slice(t1, 0, 1, 6, 2, out));
    break;
  case 4:
    LT_CHECK(lt_view_flip(base, 1, &t1));
    LT_CHECK(lt_view_transpose(t1, 0, 2, out));
    break;
  case 5:
    LT_CHECK(lt_view_select(base, 1, 3, &t1));
    LT_CHECK(lt_view_unsqueeze(t1, 1, &t2));
    LT_CHECK(lt_view_broadcast_to(t2, 3, (int64_t[]){6, 5, 40}, out));
    break;
  case 6: LT_CHECK(lt_view_diagonal(base, 1, 0, 1, out)); break;
  case 7: LT_CHECK(lt_view_slice(base, 1, 3, 3, 1, out)); break;
  case 8:
    LT_CHECK(lt_view_select(base, 0, 4, &t1));
    LT_CHECK(lt_view_select(t1, 0, 2, &t2));
    lt_tensor_destroy(t1);
    t1 = NULL;
    LT_CHECK(lt_view_select(t2, 0, 17, out));
    break;
  default: LT_CHECK(lt_view_transpose(base, 0, 2, out)); break;
  }
  lt_tensor_destroy(t1);
  lt_tensor_destroy(t2);
}

/* Contiguous copies with dtype conversion of every view recipe: the map step (strided and
 * tiled kernels, offsets, negative and zero strides) against the CPU backend, bit-exact. */
static void test_views_and_conversions(void **state) {
  lt_context *cpu = open_device("cpu"), *ocl = open_device("opencl");
  for (int r = 0; r < (int)(sizeof recipes / sizeof recipes[0]); r++)
    for (size_t i = 0; i < sizeof all_dtypes / sizeof all_dtypes[0]; i++)
      for (size_t o = 0; o < sizeof all_dtypes / sizeof all_dtypes[0]; o++) {
        lt_tensor *a = NULL, *b = NULL, *va = NULL, *vb = NULL, *ca = NULL, *cb = NULL;
        random_pair(cpu, ocl, all_dtypes[i], recipes[r].rank, recipes[r].shape, &a, &b);
        apply_recipe(r, a, &va);
        apply_recipe(r, b, &vb);
        LT_CHECK(lt_tensor_contiguous(va, all_dtypes[o], &ca));
        LT_CHECK(lt_tensor_contiguous(vb, all_dtypes[o], &cb));
        char what[128];
        snprintf(what, sizeof what, "%s %s -> %s", recipes[r].name, lt_dtype_name(all_dtypes[i]),
                 lt_dtype_name(all_dtypes[o]));
        assert_same(ca, cb, 0, what);
        lt_tensor_destroy(ca);
        lt_tensor_destroy(cb);
        lt_tensor_destroy(va);
        lt_tensor_destroy(vb);
        lt_tensor_destroy(a);
        lt_tensor_destroy(b);
      }
  lt_context_destroy(ocl);
  lt_context_destroy(cpu);
}

/* copy_into a strided, offset output view inside a NaN-poisoned base, broadcasting the
 * source: the whole base must match the CPU's (so nothing outside the view was written). */
static void test_copy_into_views(void **state) {
  lt_context *ctx[2] = {open_device("cpu"), open_device("opencl")};
  lt_tensor *src[2], *base[2], *dst[2], *t[2], *res[2];
  int64_t sshape[2] = {1, 24}, bshape[3] = {5, 30, 9};
  random_pair(ctx[0], ctx[1], LT_F32, 2, sshape, &src[0], &src[1]);
  for (int k = 0; k < 2; k++) {
    LT_CHECK(lt_tensor_full(ctx[k], LT_F64, 3, bshape, NAN, &base[k]));
    LT_CHECK(lt_view_slice(base[k], 1, 28, 4, -1, &t[k])); /* 24 rows, reversed */
    LT_CHECK(lt_view_select(t[k], 2, 6, &dst[k]));         /* (5, 24) at an offset */
    lt_tensor_destroy(t[k]);
    LT_CHECK(lt_tensor_copy_into(dst[k], src[k]));
    LT_CHECK(lt_tensor_contiguous(base[k], LT_DTYPE_INVALID, &res[k]));
  }
  assert_same(res[0], res[1], 0, "copy_into");
  for (int k = 0; k < 2; k++) {
    lt_tensor_destroy(res[k]);
    lt_tensor_destroy(dst[k]);
    lt_tensor_destroy(base[k]);
    lt_tensor_destroy(src[k]);
    lt_context_destroy(ctx[k]);
  }
}

static bool is_float_dtype(lt_dtype d) {
  return d == LT_F16 || d == LT_BF16 || d == LT_F32 || d == LT_F64;
}

static void test_fill(void **state) {
  lt_context *cpu = open_device("cpu"), *ocl = open_device("opencl");
  const double values[] = {1.5, -2.25e10,  1152921504606846977.0 /* 2^60 + 1 */,
                           NAN, -INFINITY, 1e-30};
  int64_t shape[2] = {3, 50};
  for (size_t k = 0; k < sizeof all_dtypes / sizeof all_dtypes[0]; k++)
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
      lt_tensor *a = NULL, *b = NULL;
      /* Integer dtypes refuse NaN, infinities and values past their range, on both devices. */
      lt_status sa = lt_tensor_full(cpu, all_dtypes[k], 2, shape, values[v], &a);
      lt_status sb = lt_tensor_full(ocl, all_dtypes[k], 2, shape, values[v], &b);
      assert_int_equal(sa, sb);
      if (sa != LT_OK) {
        assert_int_equal(sa, LT_ERR_OUT_OF_RANGE);
        assert_false(is_float_dtype(all_dtypes[k]) || all_dtypes[k] == LT_BOOL);
        continue;
      }
      assert_same(a, b, 0, "fill");
      lt_tensor_destroy(a);
      lt_tensor_destroy(b);
    }
  lt_context_destroy(ocl);
  lt_context_destroy(cpu);
}

/* ---- backend steps run directly (the ops front end lowers to exactly these) ---- */

static void operand_of(const lt_tensor *t, const int *axes, int n, lt__operand *op) {
  memset(op, 0, sizeof *op);
  op->mem = t->storage->mem;
  op->offset = t->offset;
  op->dtype = t->dtype;
  for (int i = 0; i < n; i++)
    op->strides[i] = t->strides[axes[i]];
}

/* Elementwise map with three inputs, unary ops and scalars over broadcast/transposed views. */
static void test_map_step(void **state) {
  lt_context *ctx[2] = {open_device("cpu"), open_device("opencl")};
  const lt_binary_op ops[][2] = {{LT_BINARY_ADD, LT_BINARY_MUL},
                                 {LT_BINARY_MIN, LT_BINARY_MAX},
                                 {LT_BINARY_SUB, LT_BINARY_DIV},
                                 {LT_BINARY_POW, LT_BINARY_ADD}};
  const lt_unary_op un[][3] = {{LT_UNARY_IDENTITY, LT_UNARY_NEG, LT_UNARY_ABS},
                               {LT_UNARY_SQRT, LT_UNARY_EXP, LT_UNARY_LOG},
                               {LT_UNARY_SIN, LT_UNARY_COS, LT_UNARY_TANH},
                               {LT_UNARY_SIGMOID, LT_UNARY_RELU, LT_UNARY_RECIPROCAL},
                               {LT_UNARY_SQUARE, LT_UNARY_ABS, LT_UNARY_IDENTITY}};
  const lt_dtype computes[] = {LT_F32, LT_F64};
  int64_t shape[3] = {9, 10, 37};
  lt_tensor *in[3][2], *out[2];
  random_pair(ctx[0], ctx[1], LT_F32, 3, shape, &in[0][0], &in[0][1]);
  random_pair(ctx[0], ctx[1], LT_F16, 3, (int64_t[]){37, 10, 9}, &in[1][0], &in[1][1]);
  random_pair(ctx[0], ctx[1], LT_F64, 2, (int64_t[]){10, 1}, &in[2][0], &in[2][1]);
  /* A NaN in input 0 checks that MIN/MAX propagate it. */
  for (int k = 0; k < 2; k++)
    LT_CHECK(lt_tensor_set(in[0][k], (int64_t[]){4, 5, 6}, NAN));
  for (size_t c = 0; c < 2; c++)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
      for (size_t u = 0; u < sizeof un / sizeof un[0]; u++)
        for (int n_in = 0; n_in <= 3; n_in++) {
          for (int k = 0; k < 2; k++) {
            LT_CHECK(lt_tensor_full(ctx[k], c ? LT_F64 : LT_F32, 3, shape, NAN, &out[k]));
            lt__map_step s;
            memset(&s, 0, sizeof s);
            s.rank = 3;
            memcpy(s.shape, shape, sizeof shape);
            s.n_in = n_in;
            operand_of(in[0][k], (int[]){0, 1, 2}, 3, &s.in[0]);
            operand_of(in[1][k], (int[]){2, 1, 0}, 3, &s.in[1]); /* transposed */
            s.in[2].mem = in[2][k]->storage->mem;                /* broadcast over 0 and 2 */
            s.in[2].dtype = LT_F64;
            s.in[2].strides[1] = 1;
            operand_of(out[k], (int[]){0, 1, 2}, 3, &s.out);
            memcpy(s.unary, un[u], sizeof s.unary);
            s.op_ab = ops[o][0];
            s.op_abc = ops[o][1];
            s.scalars[0] = 1.25;
            s.scalars[1] = -0.5;
            s.scalars[2] = 2.0;
            s.compute = computes[c];
            LT_CHECK(ctx[k]->backend->map(ctx[k], &s));
          }
          char what[96];
          snprintf(what, sizeof what, "map n_in %d ops %zu unary %zu compute %s", n_in, o, u,
                   lt_dtype_name(computes[c]));
          assert_same(out[0], out[1], c ? 1e-10 : 1e-4, what);
          lt_tensor_destroy(out[0]);
          lt_tensor_destroy(out[1]);
        }
  for (int k = 0; k < 2; k++) {
    for (int j = 0; j < 3; j++)
      lt_tensor_destroy(in[j][k]);
    lt_context_destroy(ctx[k]);
  }
}

typedef struct reduce_case {
  int64_t shape[3];
  int n_keep;      /* the first n_keep axes are kept, the rest reduced */
  bool kept_inner; /* stored with the axes reversed, so kept axes are the fastest in memory */
} reduce_case;

/* Every reduce op over serial, tree and two-pass shapes (and an empty reduction), with
 * alpha/beta, a separate C, unary ops and a NaN, against the CPU backend. */
static void test_reduce_step(void **state) {
  lt_context *ctx[2] = {open_device("cpu"), open_device("opencl")};
  const reduce_case cases[] = {
      {{5, 30, 40}, 1, false},  /* nout 5, nred 1200: two passes */
      {{1, 3, 1100}, 0, false}, /* nout 1: two passes */
      {{40, 600, 1}, 1, false}, /* tree, one pass */
      {{7, 6, 5}, 2, false},    /* serial */
      {{4, 0, 3}, 1, false},    /* empty reductions: identities */
      {{8, 1, 3000}, 1, true},  /* kept dim fastest: serial over outputs, two passes */
      {{5, 700, 1}, 2, true},   /* kept dims fastest, one reduced dim */
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_ARGMIN; op++)
      for (int variant = 0; variant < 3; variant++) {
        const reduce_case *rc = &cases[ci];
        bool arg = op >= LT_REDUCE_ARGMAX;
        /* Arg reductions take exactly one reduced dim: reduce the last axis only. */
        int n_keep = arg ? 2 : rc->n_keep;
        lt_dtype in_dt = variant == 1 ? LT_F16 : LT_F32, out_dt = arg ? LT_I64 : LT_F64;
        lt_dtype compute = variant == 2 ? LT_F64 : LT_F32;
        lt_tensor *in[2], *view[2], *out[2], *cc[2];
        if (rc->kept_inner) {
          int64_t rev[3] = {rc->shape[2], rc->shape[1], rc->shape[0]};
          lt_tensor *stored[2];
          random_pair(ctx[0], ctx[1], in_dt, 3, rev, &stored[0], &stored[1]);
          for (int k = 0; k < 2; k++) {
            LT_CHECK(lt_view_permute(stored[k], (int[]){2, 1, 0}, &in[k]));
            lt_tensor_destroy(stored[k]);
          }
        } else {
          random_pair(ctx[0], ctx[1], in_dt, 3, rc->shape, &in[0], &in[1]);
        }
        int64_t oshape[3];
        for (int d = 0; d < n_keep; d++)
          oshape[d] = rc->shape[d];
        random_pair(ctx[0], ctx[1], LT_F32, n_keep, oshape, &cc[0], &cc[1]);
        int64_t nan_at[3];
        lt_test_unravel(17, 3, rc->shape, nan_at);
        for (int k = 0; k < 2; k++) {
          if (variant == 0 && lt_tensor_numel(in[k]) > 17 && is_float_dtype(in_dt))
            LT_CHECK(lt_tensor_set(in[k], nan_at, NAN));
          LT_CHECK(lt_view_flip(in[k], 2, &view[k])); /* negative reduced strides */
          LT_CHECK(lt_tensor_full(ctx[k], out_dt, n_keep, oshape,
                                  is_float_dtype(out_dt) ? NAN : 77.0, &out[k]));
          lt__reduce_step s;
          memset(&s, 0, sizeof s);
          s.rank = n_keep;
          s.red_rank = 3 - n_keep;
          for (int d = 0; d < 3; d++) {
            if (d < n_keep) {
              s.shape[d] = rc->shape[d];
              s.in.strides[d] = view[k]->strides[d];
            } else {
              s.red_shape[d - n_keep] = rc->shape[d];
              s.in_red_strides[d - n_keep] = view[k]->strides[d];
            }
          }
          s.in.mem = view[k]->storage->mem;
          s.in.offset = view[k]->offset;
          s.in.dtype = in_dt;
          operand_of(out[k], (int[]){0, 1, 2}, n_keep, &s.out);
          s.has_c = variant != 1;
          operand_of(cc[k], (int[]){0, 1, 2}, n_keep, &s.c);
          s.unary = variant == 2 ? LT_UNARY_EXP : LT_UNARY_IDENTITY;
          s.op = (lt_reduce_op)op;
          s.alpha = variant == 0 ? 1.0 : 0.5;
          s.beta = variant == 0 ? 0.0 : -1.5;
          if (variant == 1) {
            /* has_c false and beta != 0: the output's own values are read; give it some. */
            lt_tensor_destroy(out[k]);
            LT_CHECK(lt_tensor_full(ctx[k], out_dt, n_keep, oshape, 0.25, &out[k]));
            operand_of(out[k], (int[]){0, 1, 2}, n_keep, &s.out);
          }
          s.compute = compute;
          LT_CHECK(ctx[k]->backend->reduce(ctx[k], &s));
        }
        int64_t nred =
            lt_tensor_numel(in[0]) / (lt_tensor_numel(out[0]) ? lt_tensor_numel(out[0]) : 1);
        char what[96];
        snprintf(what, sizeof what, "reduce case %zu op %d variant %d", ci, op, variant);
        assert_same(out[0], out[1],
                    arg ? 0 : lt_test_tolerance(in_dt == LT_F16 ? LT_F32 : compute, nred) * 4,
                    what);
        for (int k = 0; k < 2; k++) {
          lt_tensor_destroy(cc[k]);
          lt_tensor_destroy(out[k]);
          lt_tensor_destroy(view[k]);
          lt_tensor_destroy(in[k]);
        }
      }
  lt_context_destroy(ctx[1]);
  lt_context_destroy(ctx[0]);
}

/* ARGMAX/ARGMIN with ties and NaN: first occurrence, NaN wins; checked against a naive loop. */
static void test_argmax_ties(void **state) {
  lt_context *ocl = open_device("opencl");
  const int64_t n = 3000;
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int nan_at = -1; nan_at < (int)n; nan_at += 1001) {
    for (int64_t i = 0; i < n; i++)
      v[i] = (double)lt_test_rand_int(0, 9);
    if (nan_at >= 0) v[nan_at] = NAN;
    lt_tensor *t = NULL, *out = NULL;
    LT_CHECK(lt_tensor_from_host(ocl, LT_F64, 1, &n, NULL, v, &t));
    for (int op = LT_REDUCE_ARGMAX; op <= LT_REDUCE_ARGMIN; op++) {
      int64_t want = 0;
      for (int64_t i = 0; i < n; i++) {
        if (v[want] != v[want]) break;
        if (v[i] != v[i] || (op == LT_REDUCE_ARGMAX ? v[i] > v[want] : v[i] < v[want])) want = i;
      }
      LT_CHECK(lt_tensor_full(ocl, LT_I64, 0, NULL, -7, &out));
      lt__reduce_step s;
      memset(&s, 0, sizeof s);
      s.red_rank = 1;
      s.red_shape[0] = n;
      s.in_red_strides[0] = 1;
      s.in.mem = t->storage->mem;
      s.in.dtype = LT_F64;
      s.out.mem = out->storage->mem;
      s.out.dtype = LT_I64;
      s.op = (lt_reduce_op)op;
      s.alpha = 1;
      s.compute = LT_F64;
      LT_CHECK(ocl->backend->reduce(ocl, &s));
      double got;
      LT_CHECK(lt_tensor_get(out, NULL, &got));
      assert_int_equal((int64_t)got, want);
      lt_tensor_destroy(out);
    }
    lt_tensor_destroy(t);
  }
  free(v);
  lt_context_destroy(ocl);
}

typedef struct gemm_case {
  int64_t m, n, k, batch;
  bool a_t, b_t, c_t, b_broadcast; /* *_t: stored transposed (column-major) */
  double alpha, beta;
} gemm_case;

/* Naive float64 reference of one GEMM case over dense host copies of the operands. */
static void gemm_reference(const gemm_case *g, const double *a, const double *b, double *c) {
  for (int64_t bt = 0; bt < g->batch; bt++)
    for (int64_t r = 0; r < g->m; r++)
      for (int64_t col = 0; col < g->n; col++) {
        double acc = 0;
        for (int64_t kk = 0; kk < g->k; kk++) {
          const double *ab = a + bt * g->m * g->k,
                       *bb = b + (g->b_broadcast ? 0 : bt) * g->k * g->n;
          acc += ab[g->a_t ? kk * g->m + r : r * g->k + kk] *
                 bb[g->b_t ? col * g->k + kk : kk * g->n + col];
        }
        double *at = c + bt * g->m * g->n + (g->c_t ? col * g->m + r : r * g->n + col);
        *at = g->alpha * acc + (g->beta != 0 ? g->beta * *at : 0.0);
      }
}

/* Batched GEMM with row/column-major operands, broadcast batch strides and beta == 0 over a
 * NaN-poisoned C, against a naive float64 loop. */
static void test_gemm_step(void **state) {
  lt_context *cpu = open_device("cpu"), *ocl = open_device("opencl");
  const gemm_case cases[] = {
      {1, 1, 1, 1, false, false, false, false, 1, 0},
      {70, 65, 33, 1, false, false, false, false, 1, 0},
      {70, 65, 33, 3, true, false, false, false, 0.5, -1.5},
      {5, 130, 17, 2, false, true, true, true, -1, 0},
      {64, 64, 64, 2, true, true, false, false, 1, 1},
      {9, 7, 0, 2, false, false, true, false, 2, 0.5},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int dt = 0; dt < 2; dt++) {
      const gemm_case *g = &cases[ci];
      lt_dtype dtype = dt ? LT_F64 : LT_F32;
      lt_tensor *a[2], *b[2], *c[2];
      int64_t ash[3] = {g->batch, g->a_t ? g->k : g->m, g->a_t ? g->m : g->k};
      int64_t bsh[3] = {g->b_broadcast ? 1 : g->batch, g->b_t ? g->n : g->k, g->b_t ? g->k : g->n};
      int64_t csh[3] = {g->batch, g->c_t ? g->n : g->m, g->c_t ? g->m : g->n};
      random_pair(cpu, ocl, dtype, 3, ash, &a[0], &a[1]);
      random_pair(cpu, ocl, dtype, 3, bsh, &b[0], &b[1]);
      if (g->beta != 0) {
        random_pair(cpu, ocl, dtype, 3, csh, &c[0], &c[1]);
      } else {
        LT_CHECK(lt_tensor_full(cpu, dtype, 3, csh, NAN, &c[0]));
        LT_CHECK(lt_tensor_full(ocl, dtype, 3, csh, NAN, &c[1]));
      }
      lt__gemm_step s;
      memset(&s, 0, sizeof s);
      s.dtype = dtype;
      s.m = g->m;
      s.n = g->n;
      s.k = g->k;
      s.batch_rank = 1;
      s.batch_shape[0] = g->batch;
      const lt_tensor *x[3] = {a[1], b[1], c[1]};
      lt__matrix *mx[3] = {&s.a, &s.b, &s.c};
      bool tr[3] = {g->a_t, g->b_t, g->c_t};
      for (int j = 0; j < 3; j++) {
        mx[j]->mem = x[j]->storage->mem;
        mx[j]->offset = x[j]->offset;
        mx[j]->rs = tr[j] ? 1 : x[j]->strides[1];
        mx[j]->cs = tr[j] ? x[j]->strides[1] : 1;
        mx[j]->batch_strides[0] = x[j]->shape[0] == 1 ? 0 : x[j]->strides[0];
      }
      s.alpha = g->alpha;
      s.beta = g->beta;
      LT_CHECK(ocl->backend->gemm(ocl, &s));
      double *av = dense_values(a[0]), *bv = dense_values(b[0]), *want = dense_values(c[0]);
      double *got = dense_values(c[1]);
      gemm_reference(g, av, bv, want);
      char what[64];
      snprintf(what, sizeof what, "gemm case %zu %s", ci, lt_dtype_name(dtype));
      lt_test_assert_close(got, want, lt_tensor_numel(c[0]), lt_test_tolerance(dtype, g->k), what);
      free(av);
      free(bv);
      free(want);
      free(got);
      for (int k = 0; k < 2; k++) {
        lt_tensor_destroy(a[k]);
        lt_tensor_destroy(b[k]);
        lt_tensor_destroy(c[k]);
      }
    }
  lt_context_destroy(ocl);
  lt_context_destroy(cpu);
}

/* Direct contraction: out[i,j] = alpha * sum_k,l a[i,k,l] * b[l,j,k] + beta * c[i,j], mixed
 * dtypes, zero strides, an empty contracted dim and beta == 0 over NaN, against the CPU. */
static void test_contract_step(void **state) {
  lt_context *ctx[2] = {open_device("cpu"), open_device("opencl")};
  const int64_t kext[2] = {7, 0};
  for (int z = 0; z < 2; z++)
    for (int variant = 0; variant < 2; variant++) {
      int64_t ash[3] = {5, kext[z], 3}, bsh[3] = {3, 6, kext[z]}, osh[2] = {5, 6};
      lt_tensor *a[2], *b[2], *c[2], *out[2];
      random_pair(ctx[0], ctx[1], LT_F16, 3, ash, &a[0], &a[1]);
      random_pair(ctx[0], ctx[1], LT_F64, 3, bsh, &b[0], &b[1]);
      random_pair(ctx[0], ctx[1], LT_F32, 2, osh, &c[0], &c[1]);
      for (int k = 0; k < 2; k++) {
        if (variant == 0) LT_CHECK(lt_tensor_set(c[k], (int64_t[]){2, 3}, NAN)); /* unread */
        LT_CHECK(lt_tensor_full(ctx[k], LT_F32, 2, osh, NAN, &out[k]));
        lt__contract_step s;
        memset(&s, 0, sizeof s);
        s.rank = 4;
        s.out_rank = 2;
        int64_t shape[4] = {5, 6, kext[z], 3};
        memcpy(s.shape, shape, sizeof shape);
        operand_of(a[k], (int[]){0, 1, 1, 2}, 4, &s.a);
        s.a.strides[1] = 0; /* a does not vary along j */
        operand_of(b[k], (int[]){0, 1, 2, 0}, 4, &s.b);
        s.b.strides[0] = 0; /* nor b along i */
        operand_of(out[k], (int[]){0, 1}, 2, &s.out);
        operand_of(c[k], (int[]){0, 1}, 2, &s.c);
        s.has_c = true;
        s.alpha = 0.75;
        s.beta = variant ? -2.0 : 0.0;
        s.compute = variant ? LT_F64 : LT_F32;
        LT_CHECK(ctx[k]->backend->contract(ctx[k], &s));
      }
      assert_same(out[0], out[1], lt_test_tolerance(LT_F32, 21), "contract");
      for (int k = 0; k < 2; k++) {
        lt_tensor_destroy(a[k]);
        lt_tensor_destroy(b[k]);
        lt_tensor_destroy(c[k]);
        lt_tensor_destroy(out[k]);
      }
    }
  lt_context_destroy(ctx[1]);
  lt_context_destroy(ctx[0]);
}

/* ---- errors, leaks, kernel directory ---- */

/* A device without fp64 (simulated with LT_OPENCL_NO_FP64): f64 arithmetic is
 * LT_ERR_UNSUPPORTED with a clear message; f32 work, fills and raw f64 copies still run. */
static void test_no_fp64_device(void **state) {
  setenv("LT_OPENCL_NO_FP64", "1", 1);
  lt_context *ocl = open_device("opencl");
  unsetenv("LT_OPENCL_NO_FP64");
  int64_t shape[2] = {4, 6};
  lt_tensor *f64 = NULL, *f32 = NULL, *t = NULL, *out = (lt_tensor *)&out;
  LT_CHECK(lt_tensor_full(ocl, LT_F64, 2, shape, 2.5, &f64));
  LT_CHECK(lt_tensor_full(ocl, LT_F32, 2, shape, 1.5, &f32));
  LT_CHECK(lt_view_transpose(f64, 0, 1, &t));
  LT_CHECK(lt_tensor_contiguous(t, LT_DTYPE_INVALID, &out)); /* raw copy: no arithmetic */
  double v;
  LT_CHECK(lt_tensor_get(out, (int64_t[]){5, 3}, &v));
  assert_true(v == 2.5);
  lt_tensor_destroy(out);
  out = (lt_tensor *)&out;
  LT_CHECK_FAILS(lt_tensor_contiguous(f32, LT_F64, &out), LT_ERR_UNSUPPORTED);
  assert_null(out);
  assert_non_null(strstr(lt_last_error(), "float64"));
  assert_non_null(strstr(lt_last_error(), lt_context_device(ocl)));
  LT_CHECK_FAILS(lt_tensor_contiguous(t, LT_F32, &out), LT_ERR_UNSUPPORTED); /* loads f64 */
  LT_CHECK(lt_tensor_contiguous(f32, LT_F16, &out));
  LT_CHECK(lt_tensor_get(out, (int64_t[]){3, 5}, &v));
  assert_true(v == 1.5);
  lt_tensor_destroy(out);
  lt_tensor_destroy(t);
  lt_tensor_destroy(f32);
  lt_tensor_destroy(f64);
  lt_context_destroy(ocl);
}

static void test_allocation_too_large(void **state) {
  lt_context *ocl = open_device("opencl");
  int64_t shape[2] = {1 << 30, 1 << 20}; /* 2^53 bytes of f64 */
  lt_tensor *t = (lt_tensor *)&t;
  LT_CHECK_FAILS(lt_tensor_empty(ocl, LT_F64, 2, shape, &t), LT_ERR_OUT_OF_MEMORY);
  assert_null(t);
  assert_non_null(strstr(lt_last_error(), "opencl:"));
  lt_context_destroy(ocl);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A kernel directory whose map.cl does not compile: LT_ERR_BUILD with the build log; a missing
 * file: LT_ERR_IO. The context (and a fresh one after restoring) still works. */
static void test_kernel_dir_override(void **state) {
  char dir[] = "/tmp/lt_kernels_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/common.h", dir);
  write_file(path, "/* empty */\n");
  snprintf(path, sizeof path, "%s/map.cl", dir);
  write_file(path, "kernel void lt_map_strided(global float *p) { p[0] = undeclared_marker_x; }\n");
  const char *old = getenv("LT_KERNEL_DIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("LT_KERNEL_DIR", dir, 1);
  lt_context *ocl = open_device("opencl");
  lt_tensor *t = NULL;
  int64_t shape[1] = {10};
  LT_CHECK_FAILS(lt_tensor_full(ocl, LT_F32, 1, shape, 1.0, &t), LT_ERR_BUILD);
  assert_null(t);
  const char *msg = lt_last_error();
  assert_non_null(strstr(msg, "clBuildProgram: CL_BUILD_PROGRAM_FAILURE"));
  assert_non_null(strstr(msg, "map.cl"));
  assert_non_null(strstr(msg, "undeclared_marker_x")); /* from the compiler's log */
  /* A file the directory lacks. */
  lt_tensor *a = NULL;
  LT_CHECK(lt_tensor_empty(ocl, LT_F32, 1, shape, &a));
  lt__reduce_step s;
  memset(&s, 0, sizeof s);
  s.rank = 1;
  s.shape[0] = 10;
  s.in.mem = s.out.mem = a->storage->mem;
  s.in.dtype = s.out.dtype = LT_F32;
  s.in.strides[0] = s.out.strides[0] = 1;
  s.compute = LT_F32;
  s.alpha = 1;
  LT_CHECK_FAILS(ocl->backend->reduce(ocl, &s), LT_ERR_IO);
  assert_non_null(strstr(lt_last_error(), "reduce.cl"));
  if (saved)
    setenv("LT_KERNEL_DIR", saved, 1);
  else
    unsetenv("LT_KERNEL_DIR");
  free(saved);
  /* Failed builds are not cached: the same context builds the real kernel now. */
  LT_CHECK(lt_tensor_full(ocl, LT_F32, 1, shape, 1.0, &t));
  double v;
  LT_CHECK(lt_tensor_get(t, (int64_t[]){9}, &v));
  assert_true(v == 1.0);
  lt_tensor_destroy(t);
  lt_tensor_destroy(a);
  lt_context_destroy(ocl);
  snprintf(path, sizeof path, "%s/map.cl", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/common.h", dir);
  unlink(path);
  rmdir(dir);
}

/* Embedded kernels (no LT_KERNEL_DIR) build and run. */
static void test_embedded_kernels(void **state) {
  const char *old = getenv("LT_KERNEL_DIR");
  char *saved = old ? strdup(old) : NULL;
  unsetenv("LT_KERNEL_DIR");
  lt_context *ocl = open_device("opencl");
  lt_tensor *t = NULL;
  int64_t shape[2] = {3, 4};
  LT_CHECK(lt_tensor_full(ocl, LT_BF16, 2, shape, -3.0, &t));
  double v;
  LT_CHECK(lt_tensor_get(t, (int64_t[]){2, 3}, &v));
  assert_true(v == -3.0);
  lt_tensor_destroy(t);
  lt_context_destroy(ocl);
  if (saved) setenv("LT_KERNEL_DIR", saved, 1);
  free(saved);
}

/* Every cl object the library creates is released once its context and tensors are gone. */
static void test_no_leaked_cl_objects(void **state) {
#ifdef LT_TEST_HAVE_CL
  long live_before = __atomic_load_n(&cl_live, __ATOMIC_SEQ_CST);
  long created_before = __atomic_load_n(&cl_created, __ATOMIC_SEQ_CST);
  lt_context *cpu = open_device("cpu"), *ocl = open_device("opencl");
  lt_tensor *a = NULL, *b = NULL, *t = NULL, *c = NULL;
  int64_t shape[3] = {4, 40, 50};
  random_pair(cpu, ocl, LT_F32, 3, shape, &a, &b);
  LT_CHECK(lt_view_transpose(b, 1, 2, &t));
  LT_CHECK(lt_tensor_contiguous(t, LT_F64, &c)); /* tiled map, a build, descriptor buffers */
  lt_tensor_destroy(a);
  lt_tensor_destroy(t);
  lt_context_destroy(ocl); /* tensors still hold the context */
  long created = __atomic_load_n(&cl_created, __ATOMIC_SEQ_CST) - created_before;
  assert_true(created >= 5); /* context, queue, buffers, program, kernel: interposition works */
  lt_tensor_destroy(b);
  lt_tensor_destroy(c);
  lt_context_destroy(cpu);
  assert_int_equal(__atomic_load_n(&cl_live, __ATOMIC_SEQ_CST), live_before);
#else
  skip();
#endif
}

int main(void) {
  lt_test_rng_reset(lt_test_seed());
  lt_context *probe = NULL;
  if (lt_context_create("opencl", &probe) != LT_OK) {
    fprintf(stderr, "no OpenCL device: %s\n", lt_last_error());
    return 77;
  }
  lt_context_destroy(probe);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_leaked_cl_objects),
      cmocka_unit_test(test_device_listing),
      cmocka_unit_test(test_device_string_errors),
      cmocka_unit_test(test_transfers),
      cmocka_unit_test(test_fill),
      cmocka_unit_test(test_views_and_conversions),
      cmocka_unit_test(test_copy_into_views),
      cmocka_unit_test(test_map_step),
      cmocka_unit_test(test_reduce_step),
      cmocka_unit_test(test_argmax_ties),
      cmocka_unit_test(test_gemm_step),
      cmocka_unit_test(test_contract_step),
      cmocka_unit_test(test_allocation_too_large),
      cmocka_unit_test(test_no_fp64_device),
      cmocka_unit_test(test_kernel_dir_override),
      cmocka_unit_test(test_embedded_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* `tensor demo`: a guided tour of the library on built-in data, printing what each step did. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include "tool.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every tensor the demo makes, destroyed at the end whatever happens. */
typedef struct demo {
  lt_context *ctx;
  lt_tensor *tensors[32];
  int count;
} demo;

static lt_tensor *keep(demo *d, lt_tensor *t) {
  if (d->count < 32) d->tensors[d->count++] = t;
  return t;
}

static void print_values(const double *v, int rank, const int64_t *shape, int depth, int64_t *pos) {
  if (depth == rank) {
    printf("%.8g", v[(*pos)++]);
    return;
  }
  printf("[");
  for (int64_t i = 0; i < shape[depth]; i++) {
    if (i) printf(depth == rank - 1 ? ", " : ",\n%*s", depth + 5, "");
    print_values(v, rank, shape, depth + 1, pos);
  }
  printf("]");
}

/* "name  f32 (2, 3) strides (3, 1) offset 0" and the values, NumPy style. */
static lt_status show(const char *name, const lt_tensor *t) {
  int rank = lt_tensor_rank(t);
  printf("  %s: %s ", name, lt_dtype_name(lt_tensor_dtype(t)));
  tool_print_dims(stdout, rank, lt_tensor_shape(t));
  printf(" strides ");
  tool_print_dims(stdout, rank, lt_tensor_strides(t));
  printf(" offset %lld%s\n    ", (long long)lt_tensor_offset(t),
         lt_tensor_is_contiguous(t) ? " (contiguous)" : "");
  lt_tensor *f64 = NULL;
  lt_status st = lt_tensor_contiguous(t, LT_F64, &f64);
  if (st != LT_OK) return st;
  double values[64]; /* the demo's tensors are small */
  st = lt_tensor_to_host(f64, values, sizeof values);
  lt_tensor_destroy(f64);
  if (st != LT_OK) return st;
  int64_t pos = 0;
  print_values(values, rank, lt_tensor_shape(t), 0, &pos);
  printf("\n");
  return LT_OK;
}

#define DEMO_TRY(what, call)                                                                       \
  do {                                                                                             \
    lt_status demo_st = (call);                                                                    \
    if (demo_st != LT_OK) return tool_fail("demo", what, demo_st);                                 \
  } while (0)

static int demo_create(demo *d, lt_tensor **a, lt_tensor **v) {
  printf("\n1. Create a 2x3 float32 tensor from host data, and a 3-vector:\n");
  static const float data[6] = {1, 2, 3, 4, 5, 6};
  static const float row[3] = {10, 20, 30};
  int64_t shape[2] = {2, 3}, vshape[1] = {3};
  DEMO_TRY("lt_tensor_from_host", lt_tensor_from_host(d->ctx, LT_F32, 2, shape, NULL, data, a));
  keep(d, *a);
  DEMO_TRY("lt_tensor_from_host", lt_tensor_from_host(d->ctx, LT_F32, 1, vshape, NULL, row, v));
  keep(d, *v);
  DEMO_TRY("show", show("a", *a));
  DEMO_TRY("show", show("v", *v));
  return 0;
}

static int demo_views(demo *d, lt_tensor *a, lt_tensor *v, lt_tensor **at, lt_tensor **vb) {
  printf("\n2. Views share a's memory (no copy), they only change shape/strides/offset:\n");
  lt_tensor *rev = NULL, *rows = NULL;
  DEMO_TRY("lt_view_transpose", lt_view_transpose(a, 0, 1, at));
  keep(d, *at);
  DEMO_TRY("show", show("a.T = lt_view_transpose(a, 0, 1)", *at));
  DEMO_TRY("lt_view_slice", lt_view_slice(a, 1, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, -1, &rev));
  keep(d, rev);
  DEMO_TRY("show", show("a[:, ::-1] = lt_view_slice(a, 1, DEFAULT, DEFAULT, -1)", rev));
  DEMO_TRY("lt_view_slice", lt_view_slice(a, 0, 1, 2, 1, &rows));
  keep(d, rows);
  DEMO_TRY("show", show("a[1:2] = lt_view_slice(a, 0, 1, 2, 1)", rows));
  int64_t shape[2] = {2, 3};
  DEMO_TRY("lt_view_broadcast_to", lt_view_broadcast_to(v, 2, shape, vb));
  keep(d, *vb);
  DEMO_TRY("show", show("broadcast_to(v, (2, 3)): zero stride on axis 0", *vb));
  printf("  a.T shares a's storage: %s\n", lt_tensor_shares_storage(a, *at) ? "yes" : "no");
  return 0;
}

static int demo_copies(demo *d, lt_tensor *at) {
  printf("\n3. Copies materialise any layout, converting dtype (round to nearest even):\n");
  static const double odd[6] = {0.1, 0.25, 1.0 / 3.0, 1000.5, 65504, 70000};
  int64_t shape[1] = {6};
  lt_tensor *x = NULL, *h = NULL, *b = NULL, *c = NULL, *dst = NULL;
  DEMO_TRY("lt_tensor_contiguous", lt_tensor_contiguous(at, LT_F64, &c));
  keep(d, c);
  DEMO_TRY("show", show("lt_tensor_contiguous(a.T, f64)", c));
  DEMO_TRY("lt_tensor_from_host", lt_tensor_from_host(d->ctx, LT_F64, 1, shape, NULL, odd, &x));
  keep(d, x);
  DEMO_TRY("show", show("x", x));
  DEMO_TRY("lt_tensor_contiguous", lt_tensor_contiguous(x, LT_F16, &h));
  keep(d, h);
  DEMO_TRY("show", show("lt_tensor_contiguous(x, f16): 70000 overflows to inf", h));
  DEMO_TRY("lt_tensor_contiguous", lt_tensor_contiguous(x, LT_BF16, &b));
  keep(d, b);
  DEMO_TRY("show", show("lt_tensor_contiguous(x, bf16)", b));
  int64_t s2[2] = {3, 2};
  DEMO_TRY("lt_tensor_zeros", lt_tensor_zeros(d->ctx, LT_F16, 2, s2, &dst));
  keep(d, dst);
  DEMO_TRY("lt_tensor_copy_into", lt_tensor_copy_into(dst, at));
  DEMO_TRY("show", show("lt_tensor_copy_into(f16 zeros (3, 2), a.T)", dst));
  return 0;
}

static int demo_npy(demo *d, lt_tensor *at) {
  printf("\n4. Save a.T (a strided view) as .npy and load it back:\n");
  char path[256];
  const char *dir = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/tensor-demo-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    fprintf(stderr, "tensor demo: cannot create a temporary file in %s\n",
            dir && *dir ? dir : "/tmp");
    return 1;
  }
  close(fd);
  lt_tensor *back = NULL;
  lt_status st = lt_npy_save(at, path);
  if (st == LT_OK) st = lt_npy_load(d->ctx, path, &back);
  remove(path);
  if (st != LT_OK) return tool_fail("demo", "npy round trip", st);
  keep(d, back);
  printf("  lt_npy_save(a.T, \"%s\"), then lt_npy_load:\n", path);
  DEMO_TRY("show", show("loaded", back));
  return 0;
}

static int demo_ops(demo *d, lt_tensor *a, lt_tensor *at, lt_tensor *vb) {
  printf("\n5. Operations: elementwise with broadcasting, reductions, einsum:\n");
  lt_tensor *sum = NULL, *row_sums = NULL, *product = NULL;
  DEMO_TRY("lt_add", lt_add(a, vb, &sum));
  keep(d, sum);
  DEMO_TRY("show", show("lt_add(a, broadcast v)", sum));
  int axes[1] = {1};
  DEMO_TRY("lt_reduce", lt_reduce(LT_REDUCE_SUM, a, 1, axes, false, &row_sums));
  keep(d, row_sums);
  DEMO_TRY("show", show("lt_reduce(SUM, a, axis 1)", row_sums));
  const lt_tensor *inputs[2] = {a, at};
  DEMO_TRY("lt_einsum", lt_einsum("ij,jk->ik", 2, inputs, NULL, &product));
  keep(d, product);
  DEMO_TRY("show", show("lt_einsum(\"ij,jk->ik\", a, a.T)", product));
  return 0;
}

int tool_demo(int argc, char **argv) {
  if (tool_wants_help(argc, argv)) {
    printf("usage: tensor demo\n\nRuns a short tour of libtensor on built-in data: creating "
           "tensors, zero-copy\nviews (transpose, slices, broadcasting), copies with dtype "
           "conversion, a .npy\nround trip through a temporary file, elementwise "
           "operations,\nreductions, einsum, and a short training run through the gradient tape. "
           "The device is LT_DEVICE "
           "(default cpu).\n");
    return 0;
  }
  if (argc > 1) return tool_usage_error("demo", "takes no arguments");
  demo d = {NULL, {NULL}, 0};
  lt_status st = lt_context_create(NULL, &d.ctx);
  if (st != LT_OK) return tool_fail("demo", "opening a context", st);
  printf("libtensor %s demo on device \"%s\"\n", lt_version(), lt_context_device(d.ctx));
  lt_tensor *a = NULL, *v = NULL, *at = NULL, *vb = NULL;
  int rc = demo_create(&d, &a, &v);
  if (rc == 0) rc = demo_views(&d, a, v, &at, &vb);
  if (rc == 0) rc = demo_copies(&d, at);
  if (rc == 0) rc = demo_npy(&d, at);
  if (rc == 0) rc = demo_ops(&d, a, at, vb);
  if (rc == 0) rc = tool_demo_train(d.ctx);
  if (rc == 0) printf("\ndone.\n");
  for (int i = 0; i < d.count; i++)
    lt_tensor_destroy(d.tensors[i]);
  lt_context_destroy(d.ctx);
  return rc;
}

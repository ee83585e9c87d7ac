/* SPDX-License-Identifier: MIT */
/* `tensor info FILE.npy`: dtype, shape, strides and min/max/mean of a .npy file. */
#include "tool.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct summary {
  double min, max, mean;
  int64_t nans;
} summary;

/* Statistics over the finite-or-infinite elements (NaNs are counted, not compared). */
static void summarize(const double *v, int64_t n, summary *s) {
  s->min = INFINITY;
  s->max = -INFINITY;
  s->nans = 0;
  double sum = 0.0, carry = 0.0; /* Kahan summation keeps the mean accurate for long files */
  for (int64_t i = 0; i < n; i++) {
    if (isnan(v[i])) {
      s->nans++;
      continue;
    }
    if (v[i] < s->min) s->min = v[i];
    if (v[i] > s->max) s->max = v[i];
    double y = v[i] - carry, t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
  int64_t counted = n - s->nans;
  s->mean = counted ? sum / (double)counted : NAN;
}

/* Integers and bools: min and max exactly (a float64 copy rounds those past 2^53). */
static int print_exact_range(const lt_tensor *t, const summary *s) {
  int64_t n = lt_tensor_numel(t);
  lt_dtype d = lt_tensor_dtype(t);
  bool is_unsigned = d == LT_U8 || d == LT_U16 || d == LT_U32 || d == LT_U64;
  lt_tensor *c = NULL;
  int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
  lt_status st =
      v ? lt_tensor_contiguous(t, is_unsigned ? LT_U64 : LT_I64, &c) : LT_ERR_OUT_OF_MEMORY;
  if (st == LT_OK) st = lt_tensor_to_host(c, v, sizeof(int64_t) * (size_t)n);
  lt_tensor_destroy(c);
  if (st != LT_OK) {
    free(v);
    return tool_fail("info", "reading the elements", st);
  }
  if (is_unsigned) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < n; i++) {
      uint64_t x = (uint64_t)v[i];
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
    printf("min:     %llu\nmax:     %llu\n", (unsigned long long)lo, (unsigned long long)hi);
  } else {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
    }
    printf("min:     %lld\nmax:     %lld\n", (long long)lo, (long long)hi);
  }
  char mean[32]; /* the shortest digits that read back as the double, as NumPy prints it */
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(mean, sizeof mean, "%.*g", digits, s->mean);
    if (strtod(mean, NULL) == s->mean) break;
  }
  printf("mean:    %s\n", mean);
  free(v);
  return 0;
}

static int print_statistics(const lt_tensor *t) {
  int64_t n = lt_tensor_numel(t);
  if (n == 0) {
    printf("min:     n/a (no elements)\nmax:     n/a\nmean:    n/a\n");
    return 0;
  }
  lt_tensor *f64 = NULL;
  lt_status st = lt_tensor_contiguous(t, LT_F64, &f64);
  double *v = st == LT_OK ? malloc(sizeof(double) * (size_t)n) : NULL;
  if (st == LT_OK && v == NULL) {
    lt_tensor_destroy(f64);
    fprintf(stderr, "tensor info: out of memory reading %lld elements\n", (long long)n);
    return 1;
  }
  if (st == LT_OK) st = lt_tensor_to_host(f64, v, sizeof(double) * (size_t)n);
  lt_tensor_destroy(f64);
  if (st != LT_OK) {
    free(v);
    return tool_fail("info", "reading the elements", st);
  }
  summary s;
  summarize(v, n, &s);
  free(v);
  lt_dtype d = lt_tensor_dtype(t);
  if (d != LT_F16 && d != LT_BF16 && d != LT_F32 && d != LT_F64) return print_exact_range(t, &s);
  if (s.nans == n) {
    printf("min:     nan\nmax:     nan\nmean:    nan\n");
  } else {
    printf("min:     %.9g\nmax:     %.9g\nmean:    %.9g\n", s.min, s.max, s.mean);
  }
  if (s.nans) printf("nans:    %lld (not included above)\n", (long long)s.nans);
  return 0;
}

int tool_info(int argc, char **argv) {
  if (tool_wants_help(argc, argv)) {
    printf("usage: tensor info FILE.npy | FILE.h5 | FILE.h5:/path/to/dataset\n\nLoads a .npy file "
           "(format 1-3, any float, integer or bool dtype, either "
           "byte order, C or\nFortran order) and prints its dtype, shape, strides (of the "
           "loaded, C-ordered\ntensor, in elements) and the min, max and mean of its "
           "elements.\nAn HDF5 file alone is listed (as `tensor ls`); FILE.h5:/path reads that "
           "dataset and prints\nhow it is stored (dtype, byte order, chunks, filters) and the "
           "same statistics.\n");
    return 0;
  }
  if (argc != 2) return tool_usage_error("info", "expects exactly one FILE.npy argument");
  char h5_file[4096];
  const char *h5_dataset;
  if (tool_is_h5_file(argv[1]) || tool_h5_split(argv[1], h5_file, sizeof h5_file, &h5_dataset))
    return tool_info_h5(argv[1], print_statistics);
  lt_context *ctx = NULL;
  lt_status st = lt_context_create(NULL, &ctx);
  if (st != LT_OK) return tool_fail("info", "opening a context", st);
  lt_tensor *t = NULL;
  st = lt_npy_load(ctx, argv[1], &t);
  if (st != LT_OK) {
    lt_context_destroy(ctx);
    return tool_fail("info", "loading", st);
  }
  printf("file:    %s\n", argv[1]);
  printf("dtype:   %s\n", lt_dtype_name(lt_tensor_dtype(t)));
  printf("shape:   ");
  tool_print_dims(stdout, lt_tensor_rank(t), lt_tensor_shape(t));
  printf("\nstrides: ");
  tool_print_dims(stdout, lt_tensor_rank(t), lt_tensor_strides(t));
  printf(" (elements)\nsize:    %lld elements, %zu bytes\n", (long long)lt_tensor_numel(t),
         lt_tensor_nbytes(t));
  int rc = print_statistics(t);
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  return rc;
}

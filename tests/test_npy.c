/* SPDX-License-Identifier: MIT */
/* .npy files: round trips of every dtype, layout, version, byte order and memory order (the
 * byte streams are written by hand here, independently of the library), and every family of
 * malformed input, each with its status and message, on every backend. */
#define _POSIX_C_SOURCE 200809L /* truncate, access */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const lt_dtype npy_dtypes[] = {LT_F16, LT_F32, LT_F64, LT_I64};
static const char *npy_codes[] = {"f2", "f4", "f8", "i8"};

/* ---- building byte streams by hand ---- */

static bool host_little(void) {
  uint16_t one = 1;
  return *(unsigned char *)&one == 1;
}

/* Native bytes of a value stored as dtype. */
static void encode(lt_dtype dtype, double v, unsigned char *out) {
  uint16_t h;
  float f;
  int64_t i;
  switch (dtype) {
  case LT_F16:
    h = lt_f32_to_f16((float)v);
    memcpy(out, &h, 2);
    break;
  case LT_F32:
    f = (float)v;
    memcpy(out, &f, 4);
    break;
  case LT_I64:
    i = (int64_t)v;
    memcpy(out, &i, 8);
    break;
  default: memcpy(out, &v, 8); break;
  }
}

static void reverse(unsigned char *p, size_t n) {
  for (size_t a = 0, b = n - 1; a < b; a++, b--) {
    unsigned char t = p[a];
    p[a] = p[b];
    p[b] = t;
  }
}

static void format_shape(int rank, const int64_t *shape, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < rank; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
  snprintf(buf + n, cap - n, rank == 1 ? ",)" : ")");
}

/* ---- round trips of hand-written streams ---- */

/* Writes random values of `shape` as a .npy stream with the given version/order/byte order,
 * loads it, and compares the tensor's C-order bytes with the expected native bytes. */
static void check_hand_written(lt_context *ctx, int di, int major, char order, bool fortran,
                               int rank, const int64_t *shape) {
  lt_dtype dtype = npy_dtypes[di];
  size_t es = lt_dtype_size(dtype);
  int64_t n = lt_test_numel(rank, shape);
  unsigned char *c_order = calloc((size_t)n + 1, es), *file = calloc((size_t)n + 1, es);
  int64_t idx[LT_MAX_RANK];
  for (int64_t k = 0; k < n; k++) {
    double v = dtype == LT_I64 ? (double)lt_test_rand_int(-1000000, 1000000)
                               : lt_test_rand_double(-100.0, 100.0);
    if (v == 0.0) v = 3.0;
    encode(dtype, v, c_order + k * (int64_t)es);
    /* Position of C-order element k in the file's memory order. */
    lt_test_unravel(k, rank, shape, idx);
    int64_t pos = 0;
    if (fortran)
      for (int d = rank - 1; d >= 0; d--)
        pos = pos * shape[d] + idx[d];
    else
      pos = k;
    unsigned char *dst = file + pos * (int64_t)es;
    memcpy(dst, c_order + k * (int64_t)es, es);
    bool big = order == '>' || (order == '|' && !host_little());
    if (big == host_little()) reverse(dst, es);
  }
  char shape_text[1600], dict[1800];
  format_shape(rank, shape, shape_text, sizeof shape_text);
  snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': %s, 'shape': %s, }", order,
           npy_codes[di], fortran ? "True" : "False", shape_text);
  lt_test_npy_bytes b = lt_test_make_npy(major, dict, file, (size_t)n * es, true);
  lt_tensor *t = NULL;
  LT_CHECK(lt_npy_load_buffer(ctx, b.data, b.size, &t));
  assert_int_equal(lt_tensor_dtype(t), dtype);
  assert_int_equal(lt_tensor_rank(t), rank);
  for (int d = 0; d < rank; d++)
    assert_int_equal(lt_tensor_shape(t)[d], shape[d]);
  assert_true(lt_tensor_is_contiguous(t));
  unsigned char *got = calloc((size_t)n + 1, es);
  LT_CHECK(lt_tensor_to_host(t, got, (size_t)n * es));
  if (memcmp(got, c_order, (size_t)n * es) != 0)
    fail_msg("npy v%d %c%s fortran=%d %s: loaded elements differ", major, order, npy_codes[di],
             fortran, shape_text);
  lt_tensor_destroy(t);
  free(got);
  free(b.data);
  free(c_order);
  free(file);
}

static void test_hand_written_streams(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed());
  static const int64_t shapes[][4] = {{0}, {5}, {3, 4}, {2, 3, 4}, {2, 0, 3}, {1, 1, 1}};
  static const int ranks[] = {0, 1, 2, 3, 3, 3};
  static const char orders[] = {'<', '>', '|'};
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    for (int di = 0; di < 4; di++)
      for (int major = 1; major <= 3; major++)
        for (int o = 0; o < 3; o++)
          for (int f = 0; f < 2; f++)
            for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; s++)
              check_hand_written(ctx, di, major, orders[o], f, ranks[s], shapes[s]);
    /* Rank 64 and 20-digit-free long shapes still parse. */
    int64_t big[LT_MAX_RANK];
    for (int i = 0; i < LT_MAX_RANK; i++)
      big[i] = (i % 7 == 0) ? 2 : 1;
    check_hand_written(ctx, 1, 1, '<', false, LT_MAX_RANK, big);
    check_hand_written(ctx, 2, 2, '>', true, LT_MAX_RANK, big);
    lt_context_destroy(ctx);
  }
}

/* Unusual but valid spellings: double quotes, no padding, no trailing comma, keys in any
 * order, Python 2 'L' extents, native '=' and no byte order prefix. */
static void test_header_spellings(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  float data[6] = {1, 2, 3, 4, 5, 6};
  static const char *dicts[] = {
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "{'shape': (2,3), 'descr': '<f4', 'fortran_order': False}",
      "{'descr':'<f4','fortran_order':False,'shape':(2L, 3L),}",
      "  {'descr': '=f4', 'fortran_order': False, 'shape': (2, 3,), }  \n",
      "{'descr': 'f4', 'fortran_order': False, 'shape': (2, 3)}\r\n"};
  for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
    lt_test_npy_bytes b = lt_test_make_npy(1, dicts[i], data, sizeof data, false);
    lt_tensor *t = NULL;
    LT_CHECK(lt_npy_load_buffer(ctx, b.data, b.size, &t));
    float got[6];
    LT_CHECK(lt_tensor_to_host(t, got, sizeof got));
    assert_memory_equal(got, data, sizeof data);
    lt_tensor_destroy(t);
    free(b.data);
  }
  lt_context_destroy(ctx);
}

/* ---- save + load round trips through files, every dtype and layout ---- */

static lt_tensor *random_of(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                            lt_test_layout layout) {
  if (dtype != LT_I64) return lt_test_random_tensor(ctx, dtype, rank, shape, layout);
  /* Integers: random values that need all 64 bits (beyond double precision). */
  int64_t n = lt_test_numel(rank, shape);
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++)
    v[i] = (int64_t)(lt_test_rand_u64() | 1);
  lt_tensor *t = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, rank, shape, NULL, v, &t));
  free(v);
  if (layout == LT_LAYOUT_NEGATIVE && rank > 0) {
    lt_tensor *f = NULL;
    LT_CHECK(lt_view_flip(t, 0, &f));
    lt_tensor_destroy(t);
    t = f;
  }
  return t;
}

static void test_save_load_roundtrip(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 1);
  static const int64_t shapes[][3] = {{0}, {7}, {3, 5}, {2, 3, 4}, {3, 0, 2}};
  static const int ranks[] = {0, 1, 2, 3, 3};
  char path[64];
  lt_test_temp_path(path);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    for (int di = 0; di < 4; di++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
        for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; s++) {
          lt_dtype dtype = npy_dtypes[di];
          lt_tensor *t = random_of(ctx, dtype, ranks[s], shapes[s], (lt_test_layout)layout);
          size_t nb = lt_tensor_nbytes(t);
          unsigned char *want = malloc(nb + 1), *got = malloc(nb + 1);
          LT_CHECK(lt_tensor_to_host(t, want, nb));
          LT_CHECK(lt_npy_save(t, path));
          lt_tensor *u = NULL;
          LT_CHECK(lt_npy_load(ctx, path, &u));
          assert_int_equal(lt_tensor_dtype(u), dtype);
          assert_int_equal(lt_tensor_rank(u), ranks[s]);
          for (int k = 0; k < ranks[s]; k++)
            assert_int_equal(lt_tensor_shape(u)[k], shapes[s][k]);
          LT_CHECK(lt_tensor_to_host(u, got, nb));
          if (memcmp(got, want, nb) != 0)
            fail_msg("%s %s rank %d: saved and loaded elements differ", lt_dtype_name(dtype),
                     lt_test_layout_name((lt_test_layout)layout), ranks[s]);
          lt_tensor_destroy(u);
          lt_tensor_destroy(t);
          free(want);
          free(got);
        }
    lt_context_destroy(ctx);
  }
  remove(path);
}

/* The written file is exactly what NumPy writes: v1.0, '<' descr, 64-aligned data. */
static void test_saved_bytes(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  double v[6] = {1.5, -2.0, 3.25, 4.0, -5.5, 6.0};
  int64_t shape[2] = {2, 3};
  lt_tensor *t, *tt;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 2, shape, NULL, v, &t));
  LT_CHECK(lt_view_transpose(t, 0, 1, &tt));
  char path[64];
  lt_test_temp_path(path);
  LT_CHECK(lt_npy_save(tt, path));
  FILE *f = fopen(path, "rb");
  unsigned char buf[256];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  remove(path);
  assert_int_equal(n, 128 + 48);
  assert_memory_equal(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
  const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";
  assert_memory_equal(buf + 10, dict, strlen(dict));
  for (size_t i = 10 + strlen(dict); i < 127; i++)
    assert_int_equal(buf[i], ' ');
  assert_int_equal(buf[127], '\n');
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) {
      unsigned char e[8];
      memcpy(e, &v[j * 3 + i], 8);
      if (!host_little()) reverse(e, 8);
      assert_memory_equal(buf + 128 + (i * 2 + j) * 8, e, 8);
    }
  lt_tensor_destroy(tt);
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
}

/* ---- malformed input ---- */

typedef struct bad_case {
  const char *name;
  int major;
  const char *dict;
  size_t data_len;
  const char *message; /* substring of lt_last_error() */
} bad_case;

static const bad_case bad_dicts[] = {
    {"not a dict", 1, "['descr', '<f4']", 0, "must be a dict"},
    {"missing descr", 1, "{'fortran_order': False, 'shape': (2,)}", 8, "lacks the key 'descr'"},
    {"missing fortran_order", 1, "{'descr': '<f4', 'shape': (2,)}", 8,
     "lacks the key 'fortran_order'"},
    {"missing shape", 1, "{'descr': '<f4', 'fortran_order': False}", 8, "lacks the key 'shape'"},
    {"unknown key", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8,
     "unknown key 'x'"},
    {"repeated key", 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
     8, "repeats key 'descr'"},
    {"missing colon", 1, "{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", 8,
     "expected ':'"},
    {"unterminated string", 2, "{'descr': '<f4", 0, "unterminated string"},
    /* longer than any descr: still unterminated, not "too long" */
    {"unterminated long string", 2,
     "{'descr': '<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
     0, "unterminated string"},
    {"escape", 1, "{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,)}", 8, "escape"},
    {"bad bool", 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8, "True or False"},
    {"bool prefix", 1, "{'descr': '<f4', 'fortran_order': Trueish, 'shape': (2,)}", 8,
     "True or False"},
    {"shape not tuple", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8,
     "must be a tuple"},
    {"shape is int", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", 8, "not a tuple"},
    {"shape unclosed", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, ", 0,
     "expected an integer"},
    {"shape separator", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2; 3)}", 0,
     "expected ',' or ')'"},
    {"negative extent", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", 0,
     "axis 1 is negative"},
    {"extent overflow", 1,
     "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0,
     "overflows 64 bits"},
    {"product overflow", 1,
     "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}", 0,
     "shape overflows"},
    {"byte overflow", 3,
     "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}", 0,
     "shape overflows"},
    {"overflow hidden by zero", 1,
     "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296)}", 0,
     "shape overflows"},
    {"unsupported descr c8", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}", 16,
     "unsupported descr '<c8'"},
    {"unsupported descr c16", 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,)}", 16,
     "unsupported descr"},
    {"unsupported descr V8", 1, "{'descr': '|V8', 'fortran_order': False, 'shape': (1,)}", 8,
     "unsupported descr"},
    {"structured descr", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 8,
     "descr must be a quoted"},
    {"junk after dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 8,
     "after the dict"},
    {"missing comma", 1, "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", 8,
     "expected ',' or '}'"},
    {"truncated data", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 20,
     "truncated data"},
    {"trailing data", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 28,
     "trailing data after 24 bytes"},
    {"data for empty", 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3)}", 8,
     "needs 0 bytes"},
};

static void check_bad(lt_context *ctx, const unsigned char *data, size_t size, lt_status status,
                      const char *message, const char *what) {
  lt_tensor *t = (lt_tensor *)&t; /* non-NULL: failure must reset it */
  lt_clear_error();
  lt_status st = lt_npy_load_buffer(ctx, data, size, &t);
  if (st != status)
    fail_msg("%s: returned %s (%s), expected %s", what, lt_status_string(st), lt_last_error(),
             lt_status_string(status));
  assert_null(t);
  if (strstr(lt_last_error(), message) == NULL)
    fail_msg("%s: message \"%s\" lacks \"%s\"", what, lt_last_error(), message);
}

static void test_malformed_dicts(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  unsigned char data[64];
  for (int i = 0; i < 64; i++)
    data[i] = (unsigned char)(i * 37 + 1);
  for (size_t i = 0; i < sizeof bad_dicts / sizeof bad_dicts[0]; i++) {
    const bad_case *c = &bad_dicts[i];
    lt_test_npy_bytes b = lt_test_make_npy(c->major, c->dict, data, c->data_len, true);
    check_bad(ctx, b.data, b.size, LT_ERR_FORMAT, c->message, c->name);
    free(b.data);
  }
  /* Rank 65. */
  char dict[512] = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; i++)
    strcat(dict, "1, ");
  strcat(dict, ")}");
  lt_test_npy_bytes b = lt_test_make_npy(1, dict, data, 4, true);
  check_bad(ctx, b.data, b.size, LT_ERR_FORMAT, "more than 64 axes", "rank 65");
  free(b.data);
  /* A NUL inside the header. */
  b = lt_test_make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", data, 4, true);
  b.data[20] = '\0';
  check_bad(ctx, b.data, b.size, LT_ERR_FORMAT, "NUL", "NUL byte");
  free(b.data);
  lt_context_destroy(ctx);
}

static void test_malformed_preamble(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}";
  float data[2] = {1, 2};
  lt_test_npy_bytes good = lt_test_make_npy(1, dict, data, sizeof data, true);
  check_bad(ctx, good.data, 0, LT_ERR_FORMAT, "truncated", "empty");
  check_bad(ctx, good.data, 5, LT_ERR_FORMAT, "truncated", "5 bytes");
  check_bad(ctx, good.data, 9, LT_ERR_FORMAT, "preamble", "9 bytes of v1");
  check_bad(ctx, good.data, 30, LT_ERR_FORMAT, "truncated header", "header cut");
  check_bad(ctx, good.data, good.size - 1, LT_ERR_FORMAT, "truncated data", "data cut");
  /* Every prefix of a valid file fails cleanly. */
  for (size_t n = 0; n < good.size; n++)
    check_bad(ctx, good.data, n, LT_ERR_FORMAT, "truncated", "prefix");

  unsigned char *copy = malloc(good.size);
  memcpy(copy, good.data, good.size);
  copy[1] = 'X';
  check_bad(ctx, copy, good.size, LT_ERR_FORMAT, "wrong magic", "magic");
  memcpy(copy, "PK\x03\x04", 4); /* an .npz (zip) handed to the .npy loader */
  check_bad(ctx, copy, good.size, LT_ERR_FORMAT, "wrong magic", "zip");
  memcpy(copy, good.data, good.size);
  copy[6] = 4;
  check_bad(ctx, copy, good.size, LT_ERR_FORMAT, "version 4.0", "version 4");
  copy[6] = 0;
  check_bad(ctx, copy, good.size, LT_ERR_FORMAT, "version 0.0", "version 0");
  copy[6] = 1;
  copy[7] = 1;
  check_bad(ctx, copy, good.size, LT_ERR_FORMAT, "version 1.1", "version 1.1");
  copy[7] = 0;
  copy[8] = 0xff; /* v1 header length 0xff?? beyond the buffer */
  copy[9] = 0xff;
  check_bad(ctx, copy, good.size, LT_ERR_FORMAT, "truncated header", "v1 long header");
  free(copy);
  free(good.data);

  /* v2 with a 16 MiB header length: refused before anything is read. */
  lt_test_npy_bytes huge = lt_test_make_npy(2, dict, data, sizeof data, true);
  huge.data[8] = 0;
  huge.data[9] = 0;
  huge.data[10] = 0;
  huge.data[11] = 1;
  check_bad(ctx, huge.data, huge.size, LT_ERR_FORMAT, "exceeds the limit", "huge header");
  huge.data[11] = 0xff; /* 4 GiB - ... */
  check_bad(ctx, huge.data, huge.size, LT_ERR_FORMAT, "exceeds the limit", "4 GiB header");
  free(huge.data);
  lt_context_destroy(ctx);
}

/* Random corruption of a valid stream: every outcome is LT_OK or LT_ERR_FORMAT, never a crash,
 * a leak or another status (ASan/valgrind runs of this test catch the rest). */
static void test_corruption_fuzz(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_test_rng_reset(lt_test_seed() + 2);
  double data[6] = {1, 2, 3, 4, 5, 6};
  lt_test_npy_bytes good = lt_test_make_npy(
      1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", data, sizeof data, true);
  unsigned char *copy = malloc(good.size);
  int ok = 0;
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(copy, good.data, good.size);
    int flips = (int)lt_test_rand_int(1, 3);
    for (int k = 0; k < flips; k++) {
      size_t pos = (size_t)lt_test_rand_int(0, (int64_t)good.size - 1 - 48); /* header bytes */
      copy[pos] = (unsigned char)lt_test_rand_int(0, 255);
    }
    size_t size = good.size;
    if (lt_test_rand_int(0, 1)) size -= (size_t)lt_test_rand_int(1, 8);
    lt_tensor *t = NULL;
    lt_status st = lt_npy_load_buffer(ctx, copy, size, &t);
    if (st != LT_OK && st != LT_ERR_FORMAT)
      fail_msg("iteration %d: unexpected %s (%s)", iter, lt_status_string(st), lt_last_error());
    if (st == LT_OK)
      ok++;
    else
      assert_null(t);
    lt_tensor_destroy(t);
  }
  assert_true(ok > 0 && ok < 3000); /* the fuzzer exercised both outcomes */
  free(copy);
  free(good.data);
  lt_context_destroy(ctx);
}

/* ---- files, arguments and dtype refusal ---- */

static void test_file_errors(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = NULL;
  LT_CHECK_FAILS(lt_npy_load(ctx, "/nonexistent/dir/x.npy", &t), LT_ERR_IO);
  assert_non_null(strstr(lt_last_error(), "/nonexistent/dir/x.npy"));
  assert_null(t);
  LT_CHECK_FAILS(lt_npy_load(ctx, "/tmp", &t), LT_ERR_IO);
  /* A format error from a file names the file. */
  char path[64];
  lt_test_temp_path(path);
  FILE *f = fopen(path, "wb");
  fputs("not a numpy file", f);
  fclose(f);
  LT_CHECK_FAILS(lt_npy_load(ctx, path, &t), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), path));
  assert_non_null(strstr(lt_last_error(), "wrong magic"));

  /* Files larger than the header buffer: whole, cut short, with trailing bytes, and a header
   * announcing far more data than the file has (refused before any allocation). */
  int64_t big_shape[2] = {300, 500};
  lt_tensor *big = lt_test_random_tensor(ctx, LT_F32, 2, big_shape, LT_LAYOUT_TRANSPOSED);
  LT_CHECK(lt_npy_save(big, path));
  LT_CHECK(lt_npy_load(ctx, path, &t));
  double *want = lt_test_read_all(big), *got = lt_test_read_all(t);
  assert_memory_equal(want, got, sizeof(double) * 150000);
  free(want);
  free(got);
  lt_tensor_destroy(t);
  lt_tensor_destroy(big);
  f = fopen(path, "r+b");
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  fputs("xyz", f);
  fclose(f);
  LT_CHECK_FAILS(lt_npy_load(ctx, path, &t), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "needs 600000 bytes, the file holds 600003"));
  assert_int_equal(truncate(path, 128 + 599999), 0);
  LT_CHECK_FAILS(lt_npy_load(ctx, path, &t), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "truncated data"));
  assert_non_null(strstr(lt_last_error(), "holds 599999"));
  lt_test_npy_bytes claim = lt_test_make_npy(
      1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }", NULL, 0, true);
  f = fopen(path, "wb");
  fwrite(claim.data, 1, claim.size, f);
  fputs("12345678", f);
  fclose(f);
  free(claim.data);
  LT_CHECK_FAILS(lt_npy_load(ctx, path, &t), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "truncated data"));
  /* An endless device is refused by its first bytes. */
  if (access("/dev/zero", R_OK) == 0) {
    LT_CHECK_FAILS(lt_npy_load(ctx, "/dev/zero", &t), LT_ERR_FORMAT);
    assert_non_null(strstr(lt_last_error(), "wrong magic"));
  }

  int64_t shape[2] = {2, 2};
  lt_tensor *b16 = NULL, *f32 = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_BF16, 2, shape, 1.5, &b16));
  LT_CHECK_FAILS(lt_npy_save(b16, path), LT_ERR_DTYPE);
  assert_non_null(strstr(lt_last_error(), "bf16"));
  /* The refused save did not touch the existing file. */
  LT_CHECK_FAILS(lt_npy_load(ctx, path, &t), LT_ERR_FORMAT);
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, 1.5, &f32));
  LT_CHECK_FAILS(lt_npy_save(f32, "/nonexistent/dir/x.npy"), LT_ERR_IO);
  LT_CHECK_FAILS(lt_npy_save(f32, "/tmp"), LT_ERR_IO);

  /* NULL arguments. */
  LT_CHECK_FAILS(lt_npy_load(NULL, path, &t), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_npy_load(ctx, NULL, &t), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_npy_load(ctx, path, NULL), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_npy_load_buffer(NULL, "x", 1, &t), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_npy_load_buffer(ctx, NULL, 1, &t), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_npy_load_buffer(ctx, "x", 1, NULL), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_npy_save(NULL, path), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_npy_save(f32, NULL), LT_ERR_NULL_POINTER);
  remove(path);
  lt_tensor_destroy(b16);
  lt_tensor_destroy(f32);
  lt_context_destroy(ctx);
}

/* ---- allocation failures: each is LT_ERR_OUT_OF_MEMORY and leaks nothing ---- */

static void test_allocation_failures(void **state) {
  double data[24];
  for (int i = 0; i < 24; i++)
    data[i] = i + 0.5;
  lt_test_npy_bytes b = lt_test_make_npy(
      3, "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3, 4), }", data, sizeof data, true);
  char path[64];
  lt_test_temp_path(path);
  FILE *f = fopen(path, "wb");
  fwrite(b.data, 1, b.size, f);
  fclose(f);
  for (int mode = 0; mode < 3; mode++) {
    bool succeeded = false;
    for (int budget = 0; !succeeded && budget < 64; budget++) {
      lt_test_alloc a = {-1, 0, 0};
      lt_context *ctx;
      LT_CHECK(
          lt_context_create_with_allocator("cpu", lt_test_alloc_fn, lt_test_free_fn, &a, &ctx));
      a.budget = budget;
      lt_tensor *t = NULL;
      lt_status st;
      if (mode == 0)
        st = lt_npy_load_buffer(ctx, b.data, b.size, &t);
      else if (mode == 1)
        st = lt_npy_load(ctx, path, &t);
      else {
        a.budget = -1;
        LT_CHECK(lt_npy_load(ctx, path, &t));
        a.budget = budget;
        st = lt_npy_save(t, path);
      }
      if (st == LT_OK)
        succeeded = true;
      else if (st != LT_ERR_OUT_OF_MEMORY)
        fail_msg("mode %d budget %d: %s (%s)", mode, budget, lt_status_string(st), lt_last_error());
      else if (mode < 2)
        assert_null(t);
      lt_tensor_destroy(t);
      lt_context_destroy(ctx);
      assert_int_equal(a.live, 0);
    }
    assert_true(succeeded);
  }
  remove(path);
  free(b.data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_written_streams), cmocka_unit_test(test_header_spellings),
      cmocka_unit_test(test_save_load_roundtrip),  cmocka_unit_test(test_saved_bytes),
      cmocka_unit_test(test_malformed_dicts),      cmocka_unit_test(test_malformed_preamble),
      cmocka_unit_test(test_corruption_fuzz),      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

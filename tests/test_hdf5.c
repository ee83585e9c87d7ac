/* SPDX-License-Identifier: MIT */
/* HDF5 files: every dtype and layout written by the library and read back by HDF5's own C API
 * (an independent reader), files written by HDF5's C API (big-endian, chunked, compressed) read
 * by the library and compared with a naive float64 slab reference, hyperslabs with steps of both
 * signs, strided destinations (guarded), slab writes, attributes, and every error family, on
 * every backend. Without HDF5 in the build every function must refuse with
 * LT_ERR_UNSUPPORTED. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef LT_TEST_HAVE_HDF5
#include <hdf5.h>

/* ---- reference files through HDF5's C API ---- */

/* Writes `data` (C order, doubles) as a dataset of file type `ftype` (converted by HDF5). */
static void ref_write(const char *file, const char *name, hid_t ftype, int rank,
                      const hsize_t *dims, const hsize_t *chunks, int gzip, const double *data) {
  hid_t f = access(file, F_OK) == 0 ? H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT)
                                    : H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunks) H5Pset_chunk(dcpl, rank, chunks);
  if (gzip) H5Pset_shuffle(dcpl), H5Pset_deflate(dcpl, (unsigned)gzip);
  hid_t d = H5Dcreate2(f, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  assert_true(d >= 0);
  assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(f);
}

/* Reads a whole dataset as doubles (caller frees); *n gets the element count. */
static double *ref_read(const char *file, const char *name, int64_t *n) {
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  assert_true(d >= 0);
  hid_t space = H5Dget_space(d);
  *n = H5Sget_simple_extent_npoints(space);
  double *v = malloc(sizeof(double) * (size_t)(*n ? *n : 1));
  assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

static double *random_doubles(int64_t n, bool integers) {
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++)
    v[i] = integers ? (double)lt_test_rand_int(-100, 100) : lt_test_rand_double(-8, 8);
  return v;
}

/* Every dtype of the table, from its name (so dtypes added later are covered too). */
static int all_dtypes(lt_dtype out[64]) {
  int n = 0;
  for (int d = 1; d < 64; d++)
    if (lt_dtype_name((lt_dtype)d)) out[n++] = (lt_dtype)d;
  return n;
}

static bool is_float(lt_dtype d) { return lt_dtype_name(d)[0] == 'f' || d == LT_BF16; }

/* ---- writes: every dtype, layout, chunking and filter, read back by HDF5 itself ---- */

static void roundtrip_on(lt_context *ctx) {
  char path[64];
  lt_test_temp_path(path);
  lt_dtype dtypes[64];
  int nd = all_dtypes(dtypes);
  const int64_t shape[3] = {5, 1, 7};
  lt_h5_file *f = NULL;
  LT_CHECK(lt_h5_open(path, LT_H5_CREATE, &f));
  int written = 0;
  char names[256][48];
  double *want[256];
  for (int i = 0; i < nd; i++)
    for (int layout = 0; layout < LT_LAYOUT_BROADCAST; layout++)
      for (int mode = (layout + i) % 3; mode < 3; mode += 3) { /* each dtype meets every mode */
        bool ints = !is_float(dtypes[i]);
        lt_tensor *t = lt_test_random_tensor_range(ctx, dtypes[i], 3, shape, layout,
                                                   ints ? -100 : -4, ints ? 100 : 4);
        snprintf(names[written], 48, "/g%d/%s_%d_%d", mode, lt_dtype_name(dtypes[i]), layout, mode);
        const int64_t chunks[3] = {2, 1, 3};
        LT_CHECK(lt_h5_write(f, names[written], t, mode == 1 ? chunks : NULL, mode == 2 ? 6 : 0,
                             mode == 2 ? LT_H5_SHUFFLE : 0));
        /* Read back by the library too, in the dtype written. */
        lt_tensor *back = NULL;
        LT_CHECK(lt_h5_read(f, names[written], ctx, LT_DTYPE_INVALID, &back));
        assert_int_equal(lt_tensor_dtype(back), dtypes[i]);
        want[written] = lt_test_read_all(t);
        double *got = lt_test_read_all(back);
        lt_test_assert_close(got, want[written], 35, 0.0, names[written]);
        free(got);
        lt_tensor_destroy(back);
        lt_tensor_destroy(t);
        written++;
      }
  /* Nothing is at the final path before close: the target is a temporary until then. */
  LT_CHECK(lt_h5_close(f));
  for (int k = 0; k < written; k++) {
    int64_t n;
    double *got = ref_read(path, names[k], &n);
    assert_int_equal(n, 35);
    lt_test_assert_close(got, want[k], n, 0.0, names[k]);
    free(got);
    free(want[k]);
  }
  /* Chunks and filters reached the file. */
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  char desc[256];
  int64_t chunk[3];
  int kind;
  LT_CHECK(lt_h5_stat(f, "/g2/f32_0_2", &kind, NULL, NULL, NULL, chunk, desc, sizeof desc));
  assert_int_equal(kind, LT_H5_DATASET);
  assert_non_null(strstr(desc, "shuffle+deflate(6)"));
  LT_CHECK(lt_h5_stat(f, "/g1/f32_2_1", NULL, NULL, NULL, NULL, chunk, desc, sizeof desc));
  assert_true(chunk[0] == 2 && chunk[1] == 1 && chunk[2] == 3);
  LT_CHECK(lt_h5_close(f));
  unlink(path);
}

static void test_roundtrip(void **state) { lt_test_on_each_device(roundtrip_on); }

/* ---- slabs of reference files ---- */

typedef struct slab_case {
  int64_t start[3], stop[3], step[3];
} slab_case;

/* Naive reference: the slab of a C-ordered array of `dims`, elements in slab C order. */
static int64_t ref_slab(const double *all, const int64_t *dims, const slab_case *c, double *out,
                        int64_t *shape) {
  int64_t idx[3][64], cnt[3];
  for (int a = 0; a < 3; a++) {
    cnt[a] = 0;
    for (int64_t i = c->start[a]; c->step[a] > 0 ? i < c->stop[a] : i > c->stop[a]; i += c->step[a])
      idx[a][cnt[a]++] = i;
    shape[a] = cnt[a];
  }
  int64_t n = 0;
  for (int64_t i = 0; i < cnt[0]; i++)
    for (int64_t j = 0; j < cnt[1]; j++)
      for (int64_t k = 0; k < cnt[2]; k++)
        out[n++] = all[(idx[0][i] * dims[1] + idx[1][j]) * dims[2] + idx[2][k]];
  return n;
}

/* A random slice of an axis of extent n: positive or negative step, sometimes empty. Steps up
 * to 6 make some slabs too sparse for the library's dense bounding-box read (box over 64 times
 * the slab), so both of its read paths are taken. */
static void random_slice(int64_t n, int64_t *b, int64_t *e, int64_t *k) {
  *k = lt_test_rand_int(1, 6) * (lt_test_rand_int(0, 2) == 0 ? -1 : 1);
  if (*k > 0) {
    *b = lt_test_rand_int(0, n);
    *e = lt_test_rand_int(*b, n);
  } else {
    *b = lt_test_rand_int(-1, n - 1);
    *e = lt_test_rand_int(-1, *b);
  }
}

static const char *ref_file;
static double *ref_all;
static const int64_t ref_dims[3] = {9, 6, 11};

static void slabs_on(lt_context *ctx) {
  lt_h5_file *f = NULL;
  LT_CHECK(lt_h5_open(ref_file, LT_H5_READ, &f));
  const char *names[] = {"/be_f64", "/le_f32_chunked_gzip", "/be_i64_chunked", "/f16"};
  for (int trial = 0; trial < 40; trial++) {
    slab_case c;
    for (int a = 0; a < 3; a++)
      random_slice(ref_dims[a], &c.start[a], &c.stop[a], &c.step[a]);
    double want[9 * 6 * 11];
    int64_t shape[3];
    int64_t n = ref_slab(ref_all, ref_dims, &c, want, shape);
    const char *name = names[trial % 4];
    lt_tensor *t = NULL;
    LT_CHECK(lt_h5_read_slab(f, name, 3, c.start, c.stop, c.step, ctx, LT_DTYPE_INVALID, &t));
    assert_memory_equal(lt_tensor_shape(t), shape, sizeof shape);
    double *got = lt_test_read_all(t);
    /* f32/f16 files hold the reference rounded: compare at their precision. */
    double tol = strstr(name, "f16") ? 1e-3 : strstr(name, "f32") ? 1e-7 : 0.0;
    for (int64_t i = 0; i < n && strstr(name, "i64"); i++)
      want[i] = trunc(want[i]);
    lt_test_assert_close(got, want, n, tol, name);
    free(got);
    /* The same slab into a guarded strided destination of each layout, converted to f64. */
    for (int layout = 0; layout < LT_LAYOUT_BROADCAST; layout++) {
      lt_test_output o;
      lt_test_output_make(ctx, LT_F64, 3, shape, layout, &o);
      LT_CHECK(lt_h5_read_into(f, name, 3, c.start, c.stop, c.step, o.view));
      got = lt_test_read_all(o.view);
      lt_test_assert_close(got, want, n, tol, "read_into");
      free(got);
      lt_test_output_check_guard(&o);
      lt_test_output_free(&o);
    }
    lt_tensor_destroy(t);
  }
  LT_CHECK(lt_h5_close(f));
}

static void test_slabs(void **state) {
  char path[64];
  lt_test_temp_path(path);
  unlink(path);
  ref_file = path;
  int64_t n = ref_dims[0] * ref_dims[1] * ref_dims[2];
  ref_all = random_doubles(n, false);
  hsize_t dims[3] = {9, 6, 11}, chunks[3] = {4, 3, 5};
  ref_write(path, "be_f64", H5T_IEEE_F64BE, 3, dims, NULL, 0, ref_all);
  ref_write(path, "le_f32_chunked_gzip", H5T_IEEE_F32LE, 3, dims, chunks, 4, ref_all);
  ref_write(path, "be_i64_chunked", H5T_STD_I64BE, 3, dims, chunks, 0, ref_all);
  hid_t half = H5Tcopy(H5T_IEEE_F32BE);
  H5Tset_fields(half, 15, 10, 5, 0, 10);
  H5Tset_size(half, 2);
  H5Tset_ebias(half, 15);
  ref_write(path, "f16", half, 3, dims, chunks, 0, ref_all);
  H5Tclose(half);
  lt_test_on_each_device(slabs_on);
  /* Again with blocks of a few rows (a row of these slabs is 88-1584 bytes; a slab whose row
   * does not fit a block is read directly): the library's block loop over a stepped slab. */
  setenv("LT_H5_BLOCK_BYTES", "2000", 1);
  lt_test_on_each_device(slabs_on);
  unsetenv("LT_H5_BLOCK_BYTES");
  free(ref_all);
  unlink(path);
}

/* ---- slab writes, rank 0, size 0 ---- */

static void write_slab_on(lt_context *ctx) {
  char path[64];
  lt_test_temp_path(path);
  const int64_t dims[3] = {6, 5, 4};
  double *all = random_doubles(120, false);
  lt_h5_file *f = NULL;
  lt_tensor *t = NULL;
  LT_CHECK(lt_h5_open(path, LT_H5_CREATE, &f));
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 3, dims, NULL, all, &t));
  LT_CHECK(lt_h5_write(f, "/d", t, NULL, 0, 0));
  lt_tensor_destroy(t);
  for (int trial = 0; trial < 12; trial++) {
    slab_case c;
    for (int a = 0; a < 3; a++)
      random_slice(dims[a], &c.start[a], &c.stop[a], &c.step[a]);
    int64_t shape[3];
    double scratch[120];
    ref_slab(all, dims, &c, scratch, shape);
    lt_tensor *v = lt_test_random_tensor(ctx, LT_F64, 3, shape, trial % LT_LAYOUT_BROADCAST);
    double *vals = lt_test_read_all(v);
    LT_CHECK(lt_h5_write_slab(f, "/d", 3, c.start, c.stop, c.step, v));
    /* Reference update of `all`, element by element in slab order. */
    int64_t n = 0;
    for (int64_t i = 0; i < shape[0]; i++)
      for (int64_t j = 0; j < shape[1]; j++)
        for (int64_t k = 0; k < shape[2]; k++)
          all[((c.start[0] + i * c.step[0]) * dims[1] + c.start[1] + j * c.step[1]) * dims[2] +
              c.start[2] + k * c.step[2]] = vals[n++];
    free(vals);
    lt_tensor_destroy(v);
  }
  /* Rank 0 and size 0 datasets. */
  lt_tensor *s = NULL, *z = NULL, *back = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 2.5, &s));
  LT_CHECK(lt_h5_write(f, "scalar", s, NULL, 9, LT_H5_SHUFFLE));
  const int64_t zero_shape[2] = {0, 3};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, zero_shape, &z));
  LT_CHECK(lt_h5_write(f, "empty", z, NULL, 4, 0));
  LT_CHECK(lt_h5_read(f, "scalar", ctx, LT_F64, &back));
  assert_int_equal(lt_tensor_rank(back), 0);
  double v;
  LT_CHECK(lt_tensor_get(back, NULL, &v));
  assert_true(v == 2.5);
  lt_tensor_destroy(back);
  LT_CHECK(lt_h5_read(f, "empty", ctx, LT_DTYPE_INVALID, &back));
  assert_int_equal(lt_tensor_numel(back), 0);
  assert_int_equal(lt_tensor_shape(back)[1], 3);
  lt_tensor_destroy(back);
  lt_tensor_destroy(s);
  lt_tensor_destroy(z);
  LT_CHECK(lt_h5_close(f));
  int64_t n;
  double *got = ref_read(path, "/d", &n);
  lt_test_assert_close(got, all, 120, 0.0, "write_slab");
  free(got);
  free(all);
  unlink(path);
}

static void test_write_slab(void **state) { lt_test_on_each_device(write_slab_on); }

/* ---- attributes ---- */

static void test_attributes(void **state) {
  char path[64];
  lt_test_temp_path(path);
  lt_h5_file *f = NULL;
  LT_CHECK(lt_h5_open(path, LT_H5_CREATE, &f));
  LT_CHECK(lt_h5_attr_set_double(f, "/", "x", -1.25));
  LT_CHECK(lt_h5_attr_set_int64(f, "/", "n", INT64_MIN + 1));
  LT_CHECK(lt_h5_attr_set_string(f, "/", "s", "h\xc3\xa9llo"));
  LT_CHECK(lt_h5_attr_set_double(f, "/", "x", 3.5)); /* replaces */
  LT_CHECK(lt_h5_close(f));
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  double d;
  int64_t i;
  char buf[16];
  size_t need;
  LT_CHECK(lt_h5_attr_get_double(f, "/", "x", &d));
  assert_true(d == 3.5);
  LT_CHECK(lt_h5_attr_get_int64(f, "/", "n", &i));
  assert_true(i == INT64_MIN + 1);
  LT_CHECK(lt_h5_attr_get_string(f, "/", "s", buf, sizeof buf, &need));
  assert_string_equal(buf, "h\xc3\xa9llo");
  assert_int_equal(need, 7);
  LT_CHECK(lt_h5_attr_list(f, "/", buf, sizeof buf, &need));
  assert_string_equal(buf, "i n\ns s\nf x\n");
  LT_CHECK_FAILS(lt_h5_attr_get_int64(f, "/", "x", &i), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_h5_attr_get_double(f, "/", "s", &d), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_h5_attr_get_double(f, "/", "missing", &d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_attr_set_double(f, "/", "y", 1), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_attr_get_double(f, "/nothing", "x", &d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_h5_close(f));
  unlink(path);
}

/* To and from bool, libtensor converts (nonzero and NaN are true): HDF5 has no path from
 * numbers to h5py's bool enum, and h5py's registered one kept the byte 2 in a bool. A u64
 * attribute past INT64_MAX is refused (HDF5 saturated it). */
static void test_bool_conversions(void **state) {
  char path[64];
  lt_test_temp_path(path);
  hsize_t four[1] = {4};
  double ints[4] = {0, 2, -1, 1}, floats[4] = {0, NAN, 0.5, -0.0};
  ref_write(path, "i", H5T_STD_I32LE, 1, four, NULL, 0, ints);
  ref_write(path, "f", H5T_IEEE_F64LE, 1, four, NULL, 0, floats);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_h5_file *f = NULL;
  LT_CHECK(lt_h5_open(path, LT_H5_READ_WRITE, &f));
  static const char *names[2] = {"/i", "/f"};
  static const uint8_t want[2][4] = {{0, 1, 1, 1}, {0, 1, 1, 0}};
  for (int k = 0; k < 2; k++) {
    lt_tensor *b = NULL;
    LT_CHECK(lt_h5_read(f, names[k], ctx, LT_BOOL, &b));
    uint8_t got[4];
    LT_CHECK(lt_tensor_to_host(b, got, sizeof got));
    assert_memory_equal(got, want[k], 4);
    /* into a strided bool destination too */
    int64_t eight[1] = {8};
    lt_tensor *wide = NULL, *every2 = NULL;
    LT_CHECK(lt_tensor_zeros(ctx, LT_BOOL, 1, eight, &wide));
    LT_CHECK(lt_view_slice(wide, 0, 0, 8, 2, &every2));
    LT_CHECK(lt_h5_read_into(f, names[k], 0, NULL, NULL, NULL, every2));
    uint8_t all[8];
    LT_CHECK(lt_tensor_to_host(wide, all, sizeof all));
    for (int i = 0; i < 4; i++)
      assert_true(all[2 * i] == want[k][i] && all[2 * i + 1] == 0);
    lt_tensor_destroy(every2);
    lt_tensor_destroy(wide);
    lt_tensor_destroy(b);
  }
  /* bools into the i32 dataset, i64 values into a bool one */
  lt_tensor *b = NULL, *bools = NULL, *back = NULL;
  LT_CHECK(lt_h5_read(f, "/f", ctx, LT_BOOL, &bools));
  LT_CHECK(lt_h5_write(f, "/b", bools, NULL, 0, 0));
  LT_CHECK(lt_h5_write_slab(f, "/i", 1, NULL, NULL, NULL, bools));
  int64_t n4[1] = {4};
  int64_t vals[4] = {7, 0, -3, 256};
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, n4, NULL, vals, &b));
  LT_CHECK(lt_h5_write_slab(f, "/b", 1, NULL, NULL, NULL, b));
  LT_CHECK(lt_h5_close(f));
  int64_t n;
  double *i_back = ref_read(path, "i", &n);
  for (int i = 0; i < 4; i++)
    assert_true(i_back[i] == want[1][i]);
  free(i_back);
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  LT_CHECK(lt_h5_read(f, "/b", ctx, LT_DTYPE_INVALID, &back));
  uint8_t got[4], want_b[4] = {1, 0, 1, 1};
  LT_CHECK(lt_tensor_to_host(back, got, sizeof got));
  assert_memory_equal(got, want_b, 4);
  LT_CHECK(lt_h5_close(f));
  /* a u64 attribute */
  hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), sp = H5Screate(H5S_SCALAR);
  uint64_t big = UINT64_MAX, small = 5;
  hid_t a1 = H5Acreate2(h, "big", H5T_STD_U64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  hid_t a2 = H5Acreate2(h, "small", H5T_STD_U64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(H5Awrite(a1, H5T_NATIVE_UINT64, &big) >= 0);
  assert_true(H5Awrite(a2, H5T_NATIVE_UINT64, &small) >= 0);
  H5Aclose(a1), H5Aclose(a2), H5Sclose(sp), H5Fclose(h);
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  int64_t v;
  LT_CHECK_FAILS(lt_h5_attr_get_int64(f, "/", "big", &v), LT_ERR_OUT_OF_RANGE);
  LT_CHECK(lt_h5_attr_get_int64(f, "/", "small", &v));
  assert_true(v == 5);
  LT_CHECK(lt_h5_close(f));
  lt_tensor_destroy(back);
  lt_tensor_destroy(bools);
  lt_tensor_destroy(b);
  lt_context_destroy(ctx);
  unlink(path);
}

/* The listing names links: an object under two hard links, soft links (not dangling ones). */
static void test_list_links(void **state) {
  char path[64];
  lt_test_temp_path(path);
  hsize_t two[1] = {2};
  double v[2] = {1, 2};
  ref_write(path, "x", H5T_IEEE_F64LE, 1, two, NULL, 0, v);
  hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t g = H5Gcreate2(h, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(H5Lcreate_hard(h, "x", h, "g/y", H5P_DEFAULT, H5P_DEFAULT) >= 0);
  assert_true(H5Lcreate_soft("/x", h, "soft", H5P_DEFAULT, H5P_DEFAULT) >= 0);
  assert_true(H5Lcreate_soft("/g", h, "gsoft", H5P_DEFAULT, H5P_DEFAULT) >= 0);
  assert_true(H5Lcreate_soft("/nowhere", h, "dangling", H5P_DEFAULT, H5P_DEFAULT) >= 0);
  H5Gclose(g), H5Fclose(h);
  lt_h5_file *f = NULL;
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  char buf[256];
  size_t need;
  LT_CHECK(lt_h5_list(f, buf, sizeof buf, &need));
  assert_string_equal(buf, "/g/\n/g/y\n/gsoft/\n/soft\n/x\n");
  /* a buffer too small: an empty string and an error naming the size (it was OK with the
   * entries that fitted and no NUL) */
  char small[8];
  memset(small, 'X', sizeof small);
  LT_CHECK_FAILS(lt_h5_list(f, small, sizeof small, NULL), LT_ERR_INVALID_ARGUMENT);
  assert_int_equal(small[0], '\0');
  assert_non_null(strstr(lt_last_error(), "needs 27"));
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = NULL;
  LT_CHECK(lt_h5_read(f, "/gsoft/y", ctx, LT_DTYPE_INVALID, &t));
  assert_int_equal(lt_tensor_numel(t), 2);
  lt_tensor_destroy(t);
  LT_CHECK(lt_h5_close(f));
  lt_context_destroy(ctx);
  unlink(path);
}

/* lt_h5_discard drops a file being created: the target keeps its old contents. */
static void test_discard(void **state) {
  char path[64];
  lt_test_temp_path(path);
  hsize_t two[1] = {2};
  double v[2] = {1, 2};
  ref_write(path, "old", H5T_IEEE_F64LE, 1, two, NULL, 0, v);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = NULL;
  int64_t n3[1] = {3};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 1, n3, &t));
  lt_h5_file *f = NULL;
  LT_CHECK(lt_h5_open(path, LT_H5_CREATE, &f));
  LT_CHECK(lt_h5_write(f, "/new", t, NULL, 0, 0));
  LT_CHECK(lt_h5_discard(f));
  LT_CHECK(lt_h5_discard(NULL));
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  char buf[64];
  size_t need;
  LT_CHECK(lt_h5_list(f, buf, sizeof buf, &need));
  assert_string_equal(buf, "/old\n");
  LT_CHECK_FAILS(lt_h5_discard((lt_h5_file *)t), LT_ERR_INVALID_HANDLE);
  LT_CHECK(lt_h5_close(f));
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  unlink(path);
}

/* ---- errors ---- */

static void test_errors(void **state) {
  lt_context *ctx = NULL;
  LT_CHECK(lt_context_create("cpu", &ctx));
  char path[64], junk[64];
  lt_test_temp_path(path);
  lt_test_temp_path(junk);
  lt_h5_file *f = NULL;
  lt_tensor *t = NULL;
  LT_CHECK_FAILS(lt_h5_open("/nonexistent/dir/x.h5", LT_H5_READ, &f), LT_ERR_IO);
  assert_null(f);
  assert_non_null(strstr(lt_last_error(), "/nonexistent/dir/x.h5"));
  LT_CHECK_FAILS(lt_h5_open(junk, LT_H5_READ, &f), LT_ERR_FORMAT); /* empty: not HDF5 */
  LT_CHECK_FAILS(lt_h5_open(path, (lt_h5_mode)7, &f), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_list(NULL, NULL, 0, NULL), LT_ERR_NULL_POINTER);
  /* A compound dataset, written by HDF5 itself. */
  hid_t h = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t ct = H5Tcreate(H5T_COMPOUND, 16);
  H5Tinsert(ct, "a", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(ct, "b", 8, H5T_NATIVE_DOUBLE);
  hsize_t two = 2;
  hid_t sp = H5Screate_simple(1, &two, NULL);
  H5Dclose(H5Dcreate2(h, "rec", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  hid_t u16 = H5Tcopy(H5T_STD_U16LE);
  H5Dclose(H5Dcreate2(h, "u16", u16, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Tclose(u16);
  H5Sclose(sp);
  H5Tclose(ct);
  H5Fclose(h);
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  LT_CHECK_FAILS(lt_h5_read(f, "rec", ctx, LT_DTYPE_INVALID, &t), LT_ERR_DTYPE);
  assert_non_null(strstr(lt_last_error(), "rec"));
  assert_non_null(strstr(lt_last_error(), "compound"));
  if (lt_dtype_from_name("u16", &(lt_dtype){0}) != LT_OK) {
    LT_CHECK_FAILS(lt_h5_read(f, "u16", ctx, LT_DTYPE_INVALID, &t), LT_ERR_DTYPE);
    LT_CHECK(lt_h5_read(f, "u16", ctx, LT_F64, &t)); /* with a dtype: converted */
    lt_tensor_destroy(t);
  }
  LT_CHECK_FAILS(lt_h5_read(f, "missing", ctx, LT_DTYPE_INVALID, &t), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_read(f, "/a/b/c", ctx, LT_DTYPE_INVALID, &t), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_read(f, "/", ctx, LT_DTYPE_INVALID, &t), LT_ERR_INVALID_ARGUMENT);
  int64_t b = 0, e = 3, k = 1, zero = 0;
  LT_CHECK_FAILS(lt_h5_read_slab(f, "u16", 1, &b, &e, &k, ctx, LT_F64, &t), LT_ERR_OUT_OF_RANGE);
  LT_CHECK_FAILS(lt_h5_read_slab(f, "u16", 1, &b, NULL, &zero, ctx, LT_F64, &t),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_read_slab(f, "u16", 2, NULL, NULL, NULL, ctx, LT_F64, &t),
                 LT_ERR_INVALID_ARGUMENT);
  const int64_t three = 3;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 1, &three, &t));
  LT_CHECK_FAILS(lt_h5_read_into(f, "u16", 1, NULL, NULL, NULL, t), LT_ERR_SHAPE_MISMATCH);
  LT_CHECK_FAILS(lt_h5_write(f, "new", t, NULL, 0, 0), LT_ERR_INVALID_ARGUMENT); /* read-only */
  LT_CHECK(lt_h5_close(f));
  /* Write errors leave the file as it was. */
  LT_CHECK(lt_h5_open(path, LT_H5_READ_WRITE, &f));
  LT_CHECK_FAILS(lt_h5_write(f, "u16", t, NULL, 0, 0), LT_ERR_INVALID_ARGUMENT); /* exists */
  const int64_t bad_chunk = 4;
  LT_CHECK_FAILS(lt_h5_write(f, "x", t, &bad_chunk, 0, 0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_write(f, "x", t, NULL, 10, 0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_write(f, "x/", t, NULL, 0, 0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_write(f, "x", t, NULL, 0, 64), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_h5_write_slab(f, "rec", 1, NULL, NULL, NULL, t), LT_ERR_DTYPE);
  LT_CHECK(lt_h5_write(f, "u16", t, NULL, 0, LT_H5_REPLACE)); /* replaced: now f64 zeros */
  char list[128];
  LT_CHECK(lt_h5_list(f, list, sizeof list, NULL));
  assert_string_equal(list, "/rec\n/u16\n"); /* no temporary link left */
  LT_CHECK(lt_h5_close(f));
  lt_tensor_destroy(t);
  /* Truncated copies of a valid file: an error, never a crash. */
  FILE *in = fopen(path, "rb");
  unsigned char bytes[8192];
  size_t size = fread(bytes, 1, sizeof bytes, in);
  fclose(in);
  for (size_t cut = 0; cut < size; cut += size / 7 + 1) {
    FILE *out = fopen(junk, "wb");
    fwrite(bytes, 1, cut, out);
    fclose(out);
    if (lt_h5_open(junk, LT_H5_READ, &f) != LT_OK) continue;
    lt_status st = lt_h5_read(f, "u16", ctx, LT_DTYPE_INVALID, &t);
    if (st == LT_OK) lt_tensor_destroy(t);
    lt_h5_close(f);
  }
  unlink(junk);
  unlink(path);
  lt_context_destroy(ctx);
}

/* A file created over an old one replaces it only when closed successfully. */
static void test_atomic_create(void **state) {
  lt_context *ctx = NULL;
  LT_CHECK(lt_context_create("cpu", &ctx));
  char path[64];
  lt_test_temp_path(path);
  FILE *old = fopen(path, "wb");
  fputs("old contents", old);
  fclose(old);
  lt_h5_file *f = NULL;
  lt_tensor *t = NULL;
  LT_CHECK(lt_h5_open(path, LT_H5_CREATE, &f));
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 1.0, &t));
  LT_CHECK(lt_h5_write(f, "a", t, NULL, 0, 0));
  char buf[32] = "";
  FILE *in = fopen(path, "rb");
  assert_non_null(fgets(buf, sizeof buf, in));
  fclose(in);
  assert_string_equal(buf, "old contents");
  LT_CHECK(lt_h5_close(f));
  LT_CHECK(lt_h5_open(path, LT_H5_READ, &f));
  LT_CHECK(lt_h5_close(f));
  lt_tensor_destroy(t);
  unlink(path);
  lt_context_destroy(ctx);
}
#endif

/* Without HDF5 (and with it: the NULL-handle paths) nothing crashes and statuses are exact. */
static void test_availability(void **state) {
  lt_h5_file *f = (lt_h5_file *)1;
  assert_int_equal(lt_h5_close(NULL), LT_OK);
  if (lt_h5_available()) {
    LT_CHECK_FAILS(lt_h5_open(NULL, LT_H5_READ, &f), LT_ERR_NULL_POINTER);
    assert_null(f);
    return;
  }
  LT_CHECK_FAILS(lt_h5_open("x.h5", LT_H5_READ, &f), LT_ERR_UNSUPPORTED);
  assert_null(f);
  assert_non_null(strstr(lt_last_error(), "LT_WITH_HDF5=OFF"));
  LT_CHECK_FAILS(lt_h5_list(NULL, NULL, 0, NULL), LT_ERR_UNSUPPORTED);
  LT_CHECK_FAILS(lt_h5_write(NULL, "x", NULL, NULL, 0, 0), LT_ERR_UNSUPPORTED);
  LT_CHECK_FAILS(lt_h5_attr_get_double(NULL, "/", "x", NULL), LT_ERR_UNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_availability),
#ifdef LT_TEST_HAVE_HDF5
      cmocka_unit_test(test_roundtrip),        cmocka_unit_test(test_slabs),
      cmocka_unit_test(test_write_slab),       cmocka_unit_test(test_attributes),
      cmocka_unit_test(test_errors),           cmocka_unit_test(test_atomic_create),
      cmocka_unit_test(test_bool_conversions), cmocka_unit_test(test_list_links),
      cmocka_unit_test(test_discard),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

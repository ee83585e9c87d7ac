/* SPDX-License-Identifier: MIT */
/* Reading datasets and hyperslabs into tensors: straight into CPU memory through an HDF5 memory
 * hyperslab when the tensor's strides allow it, else through one contiguous host buffer. */
#include "core/checked.h"
#include "core/error.h"
#include "core/object.h"
#include "io/h5.h"

#include <stdlib.h>
#include <string.h>

lt_status lt__h5_slab_parse(const char *who, hid_t space, int rank, const int64_t *start,
                            const int64_t *stop, const int64_t *step, lt__h5_slab *s) {
  LT_RETURN_IF(H5Sget_simple_extent_type(space) == H5S_NULL, LT_ERR_UNSUPPORTED,
               "%s: the dataset has a null dataspace (no shape, no elements)", who);
  int ds_rank = H5Sget_simple_extent_ndims(space);
  LT_RETURN_IF(ds_rank < 0 || ds_rank > LT_MAX_RANK, LT_ERR_UNSUPPORTED,
               "%s: the dataset's rank %d is not supported", who, ds_rank);
  LT_RETURN_IF(rank != ds_rank, LT_ERR_INVALID_ARGUMENT,
               "%s: %d axes given for a dataset of rank %d", who, rank, ds_rank);
  hsize_t dims[LT_MAX_RANK];
  H5Sget_simple_extent_dims(space, dims, NULL);
  s->rank = rank;
  s->numel = 1;
  for (int a = 0; a < rank; a++) {
    LT_RETURN_IF(dims[a] > (hsize_t)INT64_MAX, LT_ERR_OVERFLOW,
                 "%s: axis %d has %llu elements, past int64", who, a, (unsigned long long)dims[a]);
    int64_t n = (int64_t)dims[a];
    int64_t b = start ? start[a] : LT_SLICE_DEFAULT, e = stop ? stop[a] : LT_SLICE_DEFAULT;
    int64_t k = step ? step[a] : 1;
    LT_RETURN_IF(k == 0, LT_ERR_INVALID_ARGUMENT, "%s: step must not be zero (axis %d)", who, a);
    LT_RETURN_IF(k == INT64_MIN, LT_ERR_OVERFLOW, "%s: step overflows (axis %d)", who, a);
    if (b == LT_SLICE_DEFAULT) b = k > 0 ? 0 : n - 1;
    if (e == LT_SLICE_DEFAULT) e = k > 0 ? n : -1;
    int64_t lo = k > 0 ? 0 : -1, hi = k > 0 ? n : n - 1;
    LT_RETURN_IF(b < lo || b > hi, LT_ERR_OUT_OF_RANGE,
                 "%s: start %lld is outside [%lld, %lld] for axis %d", who, (long long)b,
                 (long long)lo, (long long)hi, a);
    LT_RETURN_IF(e < lo || e > hi, LT_ERR_OUT_OF_RANGE,
                 "%s: stop %lld is outside [%lld, %lld] for axis %d", who, (long long)e,
                 (long long)lo, (long long)hi, a);
    int64_t count = 0;
    if (k > 0 && e > b) count = (e - b - 1) / k + 1;
    if (k < 0 && e < b) count = (b - e - 1) / (-k) + 1;
    /* Backwards, the same elements read forwards start at the last one reached. */
    s->flip[a] = k < 0 && count > 1;
    s->start[a] = (hsize_t)(count == 0 ? 0 : k > 0 ? b : b + (count - 1) * k);
    s->stride[a] = (hsize_t)(k > 0 ? k : -k);
    s->count[a] = (hsize_t)count;
    s->shape[a] = count;
    s->dims[a] = n;
    LT_RETURN_IF(lt__mul_overflow(s->numel, count, &s->numel), LT_ERR_OVERFLOW,
                 "%s: the slab's element count overflows int64", who);
  }
  return LT_OK;
}

hid_t lt__h5_slab_select(hid_t space, const lt__h5_slab *s) {
  hid_t sel = H5Scopy(space);
  if (sel < 0) return -1;
  bool all = true;
  for (int a = 0; a < s->rank; a++)
    all = all && s->start[a] == 0 && (s->stride[a] == 1 || s->count[a] <= 1) &&
          (int64_t)s->count[a] == s->dims[a];
  herr_t e = s->numel == 0 ? H5Sselect_none(sel)
             : all         ? H5Sselect_all(sel)
                   : H5Sselect_hyperslab(sel, H5S_SELECT_SET, s->start, s->stride, s->count, NULL);
  if (e < 0) {
    H5Sclose(sel);
    return -1;
  }
  return sel;
}

hid_t lt__h5_space(int rank, const int64_t *shape) {
  if (rank == 0) return H5Screate(H5S_SCALAR);
  hsize_t dims[LT_MAX_RANK];
  for (int i = 0; i < rank; i++)
    dims[i] = (hsize_t)shape[i];
  return H5Screate_simple(rank, dims, NULL);
}

/* A memory dataspace addressing `rank` axes of extents shape and element strides from one base
 * address, when the strides nest: each axis' stride is a multiple of the next one's and spans
 * its extent (a slice of a C-ordered block). The dense dimensions are chosen so that axis k's
 * stride is the product of those after it; the innermost stride becomes the hyperslab's step.
 * -1 (no HDF5 error) when the layout does not nest. */
hid_t lt__h5_mem_space(int rank, const int64_t *shape, const int64_t *strides) {
  int64_t n[LT_MAX_RANK], st[LT_MAX_RANK];
  int m = 0;
  for (int i = 0; i < rank; i++)
    if (shape[i] != 1) n[m] = shape[i], st[m++] = strides[i];
  for (int k = 0; k < m; k++)
    if (st[k] <= 0) return -1;
  hsize_t dims[LT_MAX_RANK], step[LT_MAX_RANK], count[LT_MAX_RANK], zero[LT_MAX_RANK] = {0};
  /* C-contiguous: one flat run, which HDF5 copies (or reads) in one piece. */
  int64_t expect = 1;
  bool flat = true;
  for (int k = m - 1; k >= 0; k--) {
    flat = flat && st[k] == expect;
    expect *= n[k];
  }
  /* Contiguous: the tensor's own shape, all selected, so that HDF5 sees a memory selection of
   * the file selection's shape and copies whole runs (a flattened one is mapped element by
   * element through chunks, ten times slower). */
  if (flat || m == 0) {
    hid_t space = lt__h5_space(rank, shape);
    if (space >= 0 && H5Sselect_all(space) < 0) {
      H5Sclose(space);
      return -1;
    }
    return space;
  }
  if (m == 1) {
    dims[0] = (hsize_t)((n[0] - 1) * st[0] + 1);
    step[0] = (hsize_t)st[0];
    count[0] = (hsize_t)n[0];
  }
  for (int k = 0; k < m && m > 1; k++) {
    step[k] = 1;
    count[k] = (hsize_t)n[k];
    if (k == 0) {
      dims[k] = (hsize_t)n[k];
    } else if (k < m - 1) {
      if (st[k - 1] % st[k] != 0 || n[k] > st[k - 1] / st[k]) return -1;
      dims[k] = (hsize_t)(st[k - 1] / st[k]);
    } else {
      if ((n[k] - 1) * st[k] + 1 > st[k - 1]) return -1;
      dims[k] = (hsize_t)st[k - 1];
      step[k] = (hsize_t)st[k];
    }
  }
  hid_t space = H5Screate_simple(m, dims, NULL);
  if (space >= 0 && H5Sselect_hyperslab(space, H5S_SELECT_SET, zero, step, count, NULL) < 0) {
    H5Sclose(space);
    return -1;
  }
  return space;
}

/* The dtype to read in: the requested one, else the dataset's (LT_ERR_DTYPE when it has none,
 * naming the dataset and its type). */
static lt_status read_dtype(const char *who, const lt_h5_file *f, const char *path, hid_t type,
                            lt_dtype want, lt_dtype *out, lt_dtype *file_dtype) {
  char desc[160];
  lt_dtype have = lt__h5_dtype_of(type, desc, sizeof desc);
  *file_dtype = have;
  LT_RETURN_IF(!lt__h5_is_numeric(type), LT_ERR_DTYPE,
               "%s: dataset '%s' in '%s' has type %s, which cannot be read as a tensor", who, path,
               f->path, desc);
  LT_RETURN_IF(want == LT_DTYPE_INVALID && have == LT_DTYPE_INVALID, LT_ERR_DTYPE,
               "%s: dataset '%s' in '%s' has type %s", who, path, f->path, desc);
  *out = want == LT_DTYPE_INVALID ? have : want;
  LT_RETURN_IF(lt_dtype_name(*out) == NULL, LT_ERR_DTYPE, "%s: invalid dtype %d", who, (int)want);
  return LT_OK;
}

/* Reads the selected elements of d into host memory at base laid out as (rank, shape,
 * strides), or into a contiguous block when strides is NULL. LT_ERR_NOT_VIEWABLE (no message)
 * when the strides do not fit one memory dataspace. */
static lt_status read_host(const char *who, lt_h5_file *f, const char *path, hid_t d, hid_t filesel,
                           lt_dtype dtype, int rank, const int64_t *shape, const int64_t *strides,
                           void *base) {
  int64_t contiguous[LT_MAX_RANK];
  if (strides == NULL) {
    lt__contiguous_strides(rank, shape, contiguous);
    strides = contiguous;
  }
  hid_t mem = lt__h5_mem_space(rank, shape, strides);
  if (mem < 0) return LT_ERR_NOT_VIEWABLE;
  hid_t type = lt__h5_mem_type(dtype);
  lt_status st = LT_OK;
  if (type < 0 || H5Dread(d, type, mem, filesel, H5P_DEFAULT, base) < 0)
    st = lt__h5_fail(LT_ERR_FORMAT, who, "cannot read dataset", f, path);
  if (type >= 0) H5Tclose(type);
  H5Sclose(mem);
  return st;
}

/* The shared body of the reads: the dataset, its slab and the file selection. */
typedef struct slab_read {
  hid_t d, space, sel, type;
  lt__h5_slab slab;
} slab_read;

static void slab_read_close(slab_read *r) {
  if (r->sel >= 0) H5Sclose(r->sel);
  if (r->space >= 0) H5Sclose(r->space);
  if (r->type >= 0) H5Tclose(r->type);
  if (r->d >= 0) H5Dclose(r->d);
}

static lt_status slab_read_open(const char *who, lt_h5_file *f, const char *path, int rank,
                                bool whole, const int64_t *start, const int64_t *stop,
                                const int64_t *step, slab_read *r) {
  *r = (slab_read){.d = -1, .space = -1, .sel = -1, .type = -1};
  LT_TRY(lt__h5_open_dataset(who, f, path, &r->d));
  r->space = H5Dget_space(r->d);
  r->type = H5Dget_type(r->d);
  if (r->space < 0 || r->type < 0)
    return lt__h5_fail(LT_ERR_FORMAT, who, "cannot read the shape of", f, path);
  if (whole) rank = H5Sget_simple_extent_ndims(r->space);
  LT_TRY_PREFIXED(lt__h5_slab_parse(who, r->space, rank, start, stop, step, &r->slab), path);
  r->sel = lt__h5_slab_select(r->space, &r->slab);
  if (r->sel < 0) return lt__h5_fail(LT_ERR_FORMAT, who, "cannot select in", f, path);
  return LT_OK;
}

/* Output rows [i0, i0 + nb) of axis 0: their dense bounding box (step 1 on every axis) read
 * into the host buffer tmp, then every step-th element of each axis copied into dst. */
static lt_status read_dense_block(const char *who, lt_h5_file *f, const char *path, slab_read *r,
                                  lt_tensor *dst, int64_t i0, int64_t nb, void *tmp) {
  const lt__h5_slab *s = &r->slab;
  hsize_t start[LT_MAX_RANK], ones[LT_MAX_RANK], count[LT_MAX_RANK];
  int64_t shape[LT_MAX_RANK];
  for (int a = 0; a < s->rank; a++) {
    int64_t n = a == 0 ? nb : (int64_t)s->count[a];
    start[a] = s->start[a] + (a == 0 ? (hsize_t)i0 * s->stride[0] : 0);
    ones[a] = 1;
    shape[a] = (n - 1) * (int64_t)s->stride[a] + 1;
    count[a] = (hsize_t)shape[a];
  }
  hid_t sel = H5Scopy(r->space), mem = lt__h5_space(s->rank, shape);
  hid_t type = lt__h5_mem_type(dst->dtype);
  lt_status st = LT_OK;
  if (sel < 0 || mem < 0 || type < 0 ||
      H5Sselect_hyperslab(sel, H5S_SELECT_SET, start, ones, count, NULL) < 0 ||
      H5Dread(r->d, type, mem, sel, H5P_DEFAULT, tmp) < 0)
    st = lt__h5_fail(LT_ERR_FORMAT, who, "cannot read dataset", f, path);
  if (type >= 0) H5Tclose(type);
  if (mem >= 0) H5Sclose(mem);
  if (sel >= 0) H5Sclose(sel);
  lt_context *ctx = dst->storage->ctx;
  lt_tensor *box = NULL, *rows = NULL;
  if (st == LT_OK)
    st = ctx->backend->caps.host_memory
             ? lt_tensor_wrap_host(ctx, dst->dtype, s->rank, shape, NULL, tmp, NULL, NULL, &box)
             : lt_tensor_from_host(ctx, dst->dtype, s->rank, shape, NULL, tmp, &box);
  for (int a = 0; a < s->rank && st == LT_OK; a++) {
    lt_tensor *picked = NULL;
    st = lt_view_slice(box, a, 0, LT_SLICE_DEFAULT, (int64_t)s->stride[a], &picked);
    lt_tensor_destroy(box);
    box = picked;
  }
  if (st == LT_OK) st = lt_view_slice(dst, 0, i0, i0 + nb, 1, &rows);
  if (st == LT_OK) st = lt_tensor_copy_into(rows, box);
  lt_tensor_destroy(rows);
  lt_tensor_destroy(box);
  return st;
}

/* Steps make HDF5 gather element by element (tens of MB/s, and worse across chunks): reading
 * the dense bounding box in blocks of leading rows of at most `block_bytes` and thinning it in
 * memory is many times faster. Used while the box holds at most 64 times the slab's elements,
 * beyond which the extra bytes outweigh the gain. */
/* 16 MiB per block; LT_H5_BLOCK_BYTES overrides it (the tests make blocks tiny to cover the
 * block loop on small data). */
static size_t block_bytes(void) {
  const char *env = getenv("LT_H5_BLOCK_BYTES");
  long long v = env ? atoll(env) : 0;
  return v > 0 ? (size_t)v : (size_t)16 << 20;
}

/* Dense blocks pay when the slab is stepped and its bounding box at most 64 times its size, and
 * hold at least one row of axis 0 each: a slab whose rows are bigger than a block (a short
 * axis 0) would take a block of the whole box, up to 64 times the slab (148 MB for a 2 MB
 * read), so it is read directly. */
static bool dense_pays(const lt__h5_slab *s, size_t esize) {
  double box = 1, row = (double)esize * (double)s->stride[0];
  bool stepped = false;
  for (int a = 0; a < s->rank; a++) {
    box *= s->count[a] > 1 ? (double)s->stride[a] : 1.0;
    stepped = stepped || (s->count[a] > 1 && s->stride[a] > 1);
    if (a > 0) row *= (double)((s->count[a] - 1) * s->stride[a] + 1);
  }
  return stepped && box <= 64 && row <= (double)block_bytes();
}

static lt_status read_dense_blocks(const char *who, lt_h5_file *f, const char *path, slab_read *r,
                                   lt_tensor *dst) {
  const lt__h5_slab *s = &r->slab;
  int64_t row = (int64_t)s->stride[0]; /* dense elements per output row of axis 0 */
  for (int a = 1; a < s->rank; a++)
    row *= ((int64_t)s->count[a] - 1) * (int64_t)s->stride[a] + 1;
  size_t esize = lt_dtype_size(dst->dtype);
  int64_t rows = (int64_t)s->count[0];
  int64_t per_block = (int64_t)(block_bytes() / esize) / row;
  if (per_block < 1) per_block = 1;
  if (per_block > rows) per_block = rows;
  int64_t box = (per_block - 1) * (int64_t)s->stride[0] + 1;
  for (int a = 1; a < s->rank; a++)
    box *= ((int64_t)s->count[a] - 1) * (int64_t)s->stride[a] + 1;
  size_t bytes = (size_t)box * esize;
  lt_context *ctx = dst->storage->ctx;
  void *tmp = lt__host_alloc(ctx, bytes);
  LT_RETURN_IF(tmp == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes) reading '%s'", who,
               bytes, path);
  lt_status st = LT_OK;
  for (int64_t i0 = 0; i0 < rows && st == LT_OK; i0 += per_block)
    st = read_dense_block(who, f, path, r, dst, i0, rows - i0 < per_block ? rows - i0 : per_block,
                          tmp);
  lt__host_free(ctx, tmp, bytes);
  return st;
}

/* Reads r's slab into dst (the slab's shape, elements in increasing file order). */
static lt_status read_slab_into(const char *who, lt_h5_file *f, const char *path, slab_read *r,
                                lt_tensor *dst) {
  if (r->slab.numel == 0) return LT_OK;
  if (r->slab.rank > 0 && dense_pays(&r->slab, lt_dtype_size(dst->dtype)))
    return read_dense_blocks(who, f, path, r, dst);
  void *base = NULL;
  const lt__backend *be = dst->storage->ctx->backend;
  if (be->caps.host_memory && lt_tensor_host_pointer(dst, &base) == LT_OK) {
    lt_status st = read_host(who, f, path, r->d, r->sel, dst->dtype, dst->rank, dst->shape,
                             dst->strides, base);
    if (st != LT_ERR_NOT_VIEWABLE) return st;
  }
  /* Devices and layouts HDF5 cannot address: one contiguous host buffer, then a copy. */
  lt_context *ctx = dst->storage->ctx;
  size_t bytes = (size_t)r->slab.numel * lt_dtype_size(dst->dtype);
  void *buf = lt__host_alloc(ctx, bytes);
  LT_RETURN_IF(buf == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes) reading '%s'", who,
               bytes, path);
  lt_tensor *tmp = NULL;
  lt_status st =
      read_host(who, f, path, r->d, r->sel, dst->dtype, dst->rank, dst->shape, NULL, buf);
  if (st == LT_OK)
    st = lt_tensor_from_host(ctx, dst->dtype, dst->rank, dst->shape, NULL, buf, &tmp);
  if (st == LT_OK) st = lt_tensor_copy_into(dst, tmp);
  lt_tensor_destroy(tmp);
  lt__host_free(ctx, buf, bytes);
  return st;
}

lt_status lt__h5_flipped(const lt__h5_slab *s, const lt_tensor *t, lt_tensor **out) {
  lt_tensor *v = NULL;
  LT_TRY(lt_view_as_strided(t, t->rank, t->shape, t->strides, t->offset, &v));
  for (int a = 0; a < s->rank; a++) {
    if (!s->flip[a]) continue;
    lt_tensor *w = NULL;
    lt_status st = lt_view_flip(v, a, &w);
    lt_tensor_destroy(v);
    LT_TRY(st);
    v = w;
  }
  *out = v;
  return LT_OK;
}

static lt_status read_new(const char *who, lt_h5_file *f, const char *path, bool whole, int rank,
                          const int64_t *start, const int64_t *stop, const int64_t *step,
                          lt_context *ctx, lt_dtype dtype, lt_tensor **out) {
  LT_CHECK_ARG_NULL(out, who, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, who, "ctx"));
  LT_TRY(lt__h5_enter(who, f));
  slab_read r;
  lt_tensor *t = NULL, *flipped = NULL;
  lt_dtype have = LT_DTYPE_INVALID, moved = LT_DTYPE_INVALID;
  lt_status st = slab_read_open(who, f, path, rank, whole, start, stop, step, &r);
  if (st == LT_OK) st = read_dtype(who, f, path, r.type, dtype, &dtype, &have);
  if (st == LT_OK) moved = lt__h5_transfer_dtype(have, dtype);
  if (st == LT_OK) st = lt_tensor_empty(ctx, moved, r.slab.rank, r.slab.shape, &t);
  if (st == LT_OK) st = read_slab_into(who, f, path, &r, t);
  if (st == LT_OK) st = lt__h5_flipped(&r.slab, t, moved == dtype ? out : &flipped);
  if (st == LT_OK && moved != dtype) st = lt_tensor_contiguous(flipped, dtype, out);
  lt_tensor_destroy(flipped);
  lt_tensor_destroy(t);
  slab_read_close(&r);
  lt__h5_leave();
  return st;
}

lt_status lt_h5_read(lt_h5_file *f, const char *path, lt_context *ctx, lt_dtype dtype,
                     lt_tensor **out) {
  return read_new("lt_h5_read", f, path, true, 0, NULL, NULL, NULL, ctx, dtype, out);
}

lt_status lt_h5_read_slab(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                          const int64_t *stop, const int64_t *step, lt_context *ctx, lt_dtype dtype,
                          lt_tensor **out) {
  return read_new("lt_h5_read_slab", f, path, false, rank, start, stop, step, ctx, dtype, out);
}

lt_status lt_h5_read_into(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                          const int64_t *stop, const int64_t *step, lt_tensor *dst) {
  const char *who = "lt_h5_read_into";
  LT_TRY(lt__check_tensor(dst, "lt_h5_read_into: dst"));
  LT_RETURN_IF(lt__tensor_self_overlaps(dst), LT_ERR_ALIASING,
               "%s: dst has elements that overlap (zero or clashing strides)", who);
  LT_TRY(lt__h5_enter(who, f));
  slab_read r;
  bool whole = start == NULL && stop == NULL && step == NULL;
  lt_tensor *v = NULL, *moved = NULL;
  lt_status st = slab_read_open(who, f, path, rank, whole, start, stop, step, &r);
  lt_dtype ignored, have = LT_DTYPE_INVALID;
  if (st == LT_OK) st = read_dtype(who, f, path, r.type, dst->dtype, &ignored, &have);
  if (st == LT_OK && (dst->rank != r.slab.rank ||
                      memcmp(dst->shape, r.slab.shape, sizeof(int64_t) * (size_t)dst->rank) != 0))
    st = lt__error(LT_ERR_SHAPE_MISMATCH,
                   "%s: dst has rank %d and %lld elements, the slab of '%s' rank %d and %lld "
                   "elements (shapes must be equal)",
                   who, dst->rank, (long long)dst->numel, path, r.slab.rank,
                   (long long)r.slab.numel);
  lt_dtype via = st == LT_OK ? lt__h5_transfer_dtype(have, dst->dtype) : dst->dtype;
  if (st == LT_OK && via != dst->dtype) /* read in the file's dtype, then convert into dst */
    st = lt_tensor_empty(dst->storage->ctx, via, dst->rank, dst->shape, &moved);
  if (st == LT_OK) st = lt__h5_flipped(&r.slab, moved ? moved : dst, &v);
  if (st == LT_OK) st = read_slab_into(who, f, path, &r, v);
  if (st == LT_OK && moved) st = lt_tensor_copy_into(dst, moved);
  lt_tensor_destroy(v);
  lt_tensor_destroy(moved);
  slab_read_close(&r);
  lt__h5_leave();
  return st;
}

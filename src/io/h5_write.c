/* SPDX-License-Identifier: MIT */
/* Writing tensors as new datasets (complete before they are linked under their name) and into
 * hyperslabs of existing ones. */
#include "core/error.h"
#include "core/object.h"
#include "io/h5.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes t's elements (forward order of `filesel`) into d: straight from CPU memory when the
 * strides nest, else from a contiguous host copy. `memtype` is t's dtype's HDF5 type. */
static lt_status write_elements(const char *who, lt_h5_file *f, const char *path, hid_t d,
                                hid_t filesel, const lt_tensor *t) {
  if (t->numel == 0) return LT_OK;
  hid_t type = lt__h5_mem_type(t->dtype);
  LT_RETURN_IF(type < 0, LT_ERR_DTYPE, "%s: dtype %s has no HDF5 type", who,
               lt_dtype_name(t->dtype));
  void *base = NULL, *copy = NULL;
  size_t bytes = lt_tensor_nbytes(t);
  lt_context *ctx = t->storage->ctx;
  hid_t mem = -1;
  if (ctx->backend->caps.host_memory && lt_tensor_host_pointer(t, &base) == LT_OK)
    mem = lt__h5_mem_space(t->rank, t->shape, t->strides);
  lt_status st = LT_OK;
  if (mem < 0) {
    copy = lt__host_alloc(ctx, bytes);
    st = copy ? lt_tensor_to_host(t, copy, bytes)
              : lt__error(LT_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", who, bytes);
    int64_t flat = t->numel;
    base = copy;
    if (st == LT_OK && (mem = lt__h5_space(1, &flat)) < 0)
      st = lt__h5_fail(LT_ERR_IO, who, "cannot describe memory for", f, path);
  }
  if (st == LT_OK && H5Dwrite(d, type, mem, filesel, H5P_DEFAULT, base) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot write", f, path);
  if (mem >= 0) H5Sclose(mem);
  H5Tclose(type);
  lt__host_free(ctx, copy, bytes);
  return st;
}

/* Chunk shape for a filtered dataset given none: whole rows of the trailing axes, halving the
 * leading ones until a chunk holds at most 1 MiB (HDF5's chunk cache default). */
static void auto_chunks(const lt_tensor *t, hsize_t *chunk) {
  size_t bytes = lt_dtype_size(t->dtype);
  for (int i = 0; i < t->rank; i++) {
    chunk[i] = (hsize_t)t->shape[i];
    bytes *= chunk[i];
  }
  for (int i = 0; i < t->rank && bytes > ((size_t)1 << 20); i++)
    while (chunk[i] > 1 && bytes > ((size_t)1 << 20)) {
      bytes = bytes / chunk[i] * ((chunk[i] + 1) / 2);
      chunk[i] = (chunk[i] + 1) / 2;
    }
}

static hid_t creation_plist(const lt_tensor *t, const int64_t *chunks, int level, uint32_t flags) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  bool filtered = level > 0 || (flags & LT_H5_SHUFFLE);
  /* A scalar or empty dataset has no chunks to compress. */
  if (dcpl < 0 || t->rank == 0 || t->numel == 0 || (!chunks && !filtered)) return dcpl;
  hsize_t chunk[LT_MAX_RANK];
  if (chunks)
    for (int i = 0; i < t->rank; i++)
      chunk[i] = (hsize_t)chunks[i];
  else
    auto_chunks(t, chunk);
  bool ok = H5Pset_chunk(dcpl, t->rank, chunk) >= 0;
  if (ok && (flags & LT_H5_SHUFFLE)) ok = H5Pset_shuffle(dcpl) >= 0;
  if (ok && level > 0) ok = H5Pset_deflate(dcpl, (unsigned)level) >= 0;
  if (!ok) {
    H5Pclose(dcpl);
    return -1;
  }
  return dcpl;
}

static lt_status check_write_args(const char *who, const lt_h5_file *f, const char *path,
                                  const lt_tensor *t, const int64_t *chunks, int level,
                                  uint32_t flags) {
  LT_TRY(lt__check_tensor(t, "lt_h5_write: t"));
  LT_CHECK_ARG_NULL(path, who, "path");
  LT_TRY(lt__h5_check_writable(who, f));
  size_t len = strlen(path);
  LT_RETURN_IF(len == 0 || path[len - 1] == '/' || strstr(path, "//"), LT_ERR_INVALID_ARGUMENT,
               "%s: '%s' is not a dataset path ('/group/name')", who, path);
  LT_RETURN_IF(flags & ~(uint32_t)(LT_H5_SHUFFLE | LT_H5_REPLACE), LT_ERR_INVALID_ARGUMENT,
               "%s: unknown flags 0x%x", who, flags & ~(uint32_t)(LT_H5_SHUFFLE | LT_H5_REPLACE));
  LT_RETURN_IF(level < 0 || level > 9, LT_ERR_INVALID_ARGUMENT,
               "%s: gzip level %d is outside [0, 9]", who, level);
  for (int i = 0; chunks && i < t->rank && t->numel > 0; i++)
    LT_RETURN_IF(chunks[i] < 1 || chunks[i] > t->shape[i], LT_ERR_INVALID_ARGUMENT,
                 "%s: chunk extent %lld of axis %d is outside [1, %lld]", who, (long long)chunks[i],
                 i, (long long)t->shape[i]);
  return LT_OK;
}

/* "<group>/.lt-tmp.<name>.<pid>-<n>": beside the final link, so that the rename is one move. */
static char *temp_link(const char *path) {
  static atomic_uint counter;
  const char *slash = strrchr(path, '/');
  size_t dir = slash ? (size_t)(slash - path) + 1 : 0, len = strlen(path) + 64;
  char *out = malloc(len);
  if (out)
    snprintf(out, len, "%.*s.lt-tmp.%s.%ld-%u", (int)dir, path, path + dir, (long)getpid(),
             atomic_fetch_add(&counter, 1));
  return out;
}

/* Creates, fills and flushes the dataset under `tmp`; removes it again on failure. */
static lt_status write_temp(const char *who, lt_h5_file *f, const char *path, const char *tmp,
                            const lt_tensor *t, hid_t dcpl) {
  hid_t type = lt__h5_mem_type(t->dtype), space = lt__h5_space(t->rank, t->shape);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), d = -1;
  lt_status st = LT_OK;
  if (type < 0 || space < 0 || lcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot prepare", f, path);
  else if ((d = H5Dcreate2(f->fid, tmp, type, space, lcpl, dcpl, H5P_DEFAULT)) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot create dataset", f, path);
  if (st == LT_OK) st = write_elements(who, f, path, d, H5S_ALL, t);
  if (d >= 0 && H5Dclose(d) < 0 && st == LT_OK)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot write", f, path);
  if (st == LT_OK && H5Fflush(f->fid, H5F_SCOPE_LOCAL) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot flush", f, path);
  if (st != LT_OK && d >= 0) {
    H5Ldelete(f->fid, tmp, H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
  }
  if (lcpl >= 0) H5Pclose(lcpl);
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  return st;
}

static lt_status write_dataset(const char *who, lt_h5_file *f, const char *path, const lt_tensor *t,
                               const int64_t *chunks, int level, uint32_t flags) {
  bool exists = lt__h5_exists(f->fid, path);
  LT_RETURN_IF(exists && !(flags & LT_H5_REPLACE), LT_ERR_INVALID_ARGUMENT,
               "%s: '%s' already exists in '%s' (LT_H5_REPLACE replaces it)", who, path, f->path);
  if (exists) {
    H5O_info_t info;
    LT_RETURN_IF(H5Oget_info_by_name(f->fid, path, &info, H5P_DEFAULT) < 0 ||
                     info.type != H5O_TYPE_DATASET,
                 LT_ERR_INVALID_ARGUMENT, "%s: '%s' in '%s' exists and is not a dataset", who, path,
                 f->path);
  }
  hid_t dcpl = creation_plist(t, chunks, level, flags);
  if (dcpl < 0) return lt__h5_fail(LT_ERR_IO, who, "cannot set chunks/filters for", f, path);
  char *tmp = temp_link(path);
  lt_status st = tmp ? write_temp(who, f, path, tmp, t, dcpl)
                     : lt__error(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
  /* The old dataset goes only once the new one is complete. */
  if (st == LT_OK && exists && H5Ldelete(f->fid, path, H5P_DEFAULT) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot replace", f, path);
  if (st == LT_OK && H5Lmove(f->fid, tmp, f->fid, path, H5P_DEFAULT, H5P_DEFAULT) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot link", f, path);
  if (st != LT_OK && tmp && lt__h5_exists(f->fid, tmp)) H5Ldelete(f->fid, tmp, H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  free(tmp);
  H5Pclose(dcpl);
  return st;
}

lt_status lt_h5_write(lt_h5_file *f, const char *path, const lt_tensor *t, const int64_t *chunks,
                      int gzip_level, uint32_t flags) {
  const char *who = "lt_h5_write";
  LT_TRY(lt__h5_enter(who, f));
  lt_status st = check_write_args(who, f, path, t, chunks, gzip_level, flags);
  if (st == LT_OK) st = write_dataset(who, f, path, t, chunks, gzip_level, flags);
  lt__h5_leave();
  return st;
}

lt_status lt_h5_write_slab(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                           const int64_t *stop, const int64_t *step, const lt_tensor *t) {
  const char *who = "lt_h5_write_slab";
  LT_TRY(lt__check_tensor(t, "lt_h5_write_slab: t"));
  LT_TRY(lt__h5_enter(who, f));
  hid_t d = -1, space = -1, type = -1, sel = -1;
  lt__h5_slab s;
  lt_tensor *v = NULL;
  lt_status st = lt__h5_check_writable(who, f);
  if (st == LT_OK) st = lt__h5_open_dataset(who, f, path, &d);
  if (st == LT_OK && ((space = H5Dget_space(d)) < 0 || (type = H5Dget_type(d)) < 0))
    st = lt__h5_fail(LT_ERR_FORMAT, who, "cannot read the shape of", f, path);
  if (st == LT_OK && !lt__h5_is_numeric(type)) {
    char desc[160];
    lt__h5_dtype_of(type, desc, sizeof desc);
    st = lt__error(LT_ERR_DTYPE, "%s: dataset '%s' in '%s' has type %s", who, path, f->path, desc);
  }
  if (st == LT_OK) st = lt__h5_slab_parse(who, space, rank, start, stop, step, &s);
  if (st == LT_OK &&
      (t->rank != s.rank || memcmp(t->shape, s.shape, sizeof(int64_t) * (size_t)s.rank) != 0))
    st = lt__error(LT_ERR_SHAPE_MISMATCH,
                   "%s: t has rank %d and %lld elements, the slab of '%s' rank %d and %lld "
                   "elements (shapes must be equal)",
                   who, t->rank, (long long)t->numel, path, s.rank, (long long)s.numel);
  if (st == LT_OK && (sel = lt__h5_slab_select(space, &s)) < 0)
    st = lt__h5_fail(LT_ERR_FORMAT, who, "cannot select in", f, path);
  lt_tensor *moved = NULL; /* to or from bool: converted by libtensor (lt__h5_transfer_dtype) */
  lt_dtype via =
      st == LT_OK ? lt__h5_transfer_dtype(lt__h5_dtype_of(type, NULL, 0), t->dtype) : t->dtype;
  if (st == LT_OK && via != t->dtype) st = lt_tensor_contiguous(t, via, &moved);
  if (st == LT_OK) st = lt__h5_flipped(&s, moved ? moved : t, &v);
  if (st == LT_OK) st = write_elements(who, f, path, d, sel, v);
  lt_tensor_destroy(v);
  lt_tensor_destroy(moved);
  if (sel >= 0) H5Sclose(sel);
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  if (d >= 0) H5Dclose(d);
  lt__h5_leave();
  return st;
}

/* SPDX-License-Identifier: MIT */
/* .npy load and save: bytes <-> tensors (byte order and Fortran order handled on the host). */
#include "io/npy.h"
#include "core/error.h"
#include "core/object.h"
#include "io/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void swap_elements(unsigned char *data, size_t bytes, size_t esize) {
  for (size_t i = 0; i + esize <= bytes; i += esize)
    for (size_t a = i, b = i + esize - 1; a < b; a++, b--) {
      unsigned char tmp = data[a];
      data[a] = data[b];
      data[b] = tmp;
    }
}

/* Column-major strides: the first axis varies fastest. */
static void fortran_strides(int rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = 0; i < rank; i++) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

/* Builds the tensor from the data that follows a parsed header. `data` is swapped in place
 * when `writable`, else through a temporary copy. */
static lt_status tensor_from_data(lt_context *ctx, const lt__npy_header *h,
                                  const unsigned char *data, bool writable, lt_tensor **out) {
  unsigned char *swapped = NULL;
  if (h->swap && h->data_bytes > 0) {
    if (writable) {
      swap_elements((unsigned char *)data, h->data_bytes, lt_dtype_size(h->dtype));
    } else {
      swapped = lt__host_alloc(ctx, h->data_bytes);
      LT_RETURN_IF(swapped == NULL, LT_ERR_OUT_OF_MEMORY,
                   "npy: out of memory (%zu bytes) converting the byte order", h->data_bytes);
      memcpy(swapped, data, h->data_bytes);
      swap_elements(swapped, h->data_bytes, lt_dtype_size(h->dtype));
      data = swapped;
    }
  }
  int64_t strides[LT_MAX_RANK];
  if (h->fortran) fortran_strides(h->rank, h->shape, strides);
  lt_status st =
      lt_tensor_from_host(ctx, h->dtype, h->rank, h->shape, h->fortran ? strides : NULL, data, out);
  lt__host_free(ctx, swapped, h->data_bytes);
  return st;
}

lt_status lt_npy_load_buffer(lt_context *ctx, const void *bytes, size_t size, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_npy_load_buffer", "ctx"));
  LT_CHECK_NULL(bytes, "bytes");
  lt__npy_header h;
  LT_TRY(lt__npy_parse_header(bytes, size, &h));
  LT_TRY(lt__npy_check_data_size(&h, size - h.data_offset));
  return tensor_from_data(ctx, &h, (const unsigned char *)bytes + h.data_offset, false, out);
}

/* Reads up to n bytes; fewer only at the end of the file or on an error (ferror tells). */
static size_t read_up_to(FILE *f, unsigned char *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    size_t k = fread(buf + got, 1, n - got, f);
    if (k == 0) break;
    got += k;
  }
  return got;
}

static lt_status read_error(const char *path) {
  return lt__error(LT_ERR_IO, "npy: cannot read '%s': %s", path, strerror(errno));
}

/* True if the stream has at least one more byte (which is consumed). */
static bool more_follows(FILE *f) { return fgetc(f) != EOF; }

/* Reads h's data into a buffer that grows with what actually arrives, so that a short stream
 * claiming a huge shape reports truncated data instead of asking for the claimed size. A
 * regular file's size was checked already: its buffer is allocated whole. */
static lt_status read_data(lt_context *ctx, FILE *f, const char *path, const lt__npy_header *h,
                           const unsigned char *head, size_t in_prefix, bool sized,
                           unsigned char **out) {
  const size_t chunk = (size_t)1 << 24;
  size_t cap = sized || h->data_bytes < chunk ? h->data_bytes : chunk;
  unsigned char *data = lt__host_alloc(ctx, cap);
  LT_RETURN_IF(data == NULL, LT_ERR_OUT_OF_MEMORY, "npy: out of memory (%zu bytes) for the data",
               cap);
  memcpy(data, head, in_prefix);
  size_t have = in_prefix;
  for (;;) {
    have += read_up_to(f, data + have, cap - have);
    if (ferror(f) || have < cap || cap == h->data_bytes) break;
    size_t grown = cap > h->data_bytes / 2 ? h->data_bytes : cap * 2;
    unsigned char *bigger = lt__host_realloc(ctx, data, cap, grown);
    if (bigger == NULL) {
      lt__host_free(ctx, data, cap);
      return lt__error(LT_ERR_OUT_OF_MEMORY,
                       "npy: out of memory (%zu bytes) for the data after reading %zu", grown,
                       have);
    }
    data = bigger;
    cap = grown;
  }
  lt_status st = LT_OK;
  if (ferror(f))
    st = read_error(path);
  else if (have < h->data_bytes)
    st = lt__npy_check_data_size(h, have);
  else if (more_follows(f))
    st = lt__npy_trailing_data(h);
  if (st != LT_OK) {
    lt__host_free(ctx, data, cap);
    return st;
  }
  *out = data;
  return LT_OK;
}

/* Reads the header first (bounded), then exactly the data it announces and one byte more (to
 * refuse trailing data without reading an endless stream to its end): a file is never held
 * twice in memory, and a bad header fails before any data is read. */
static lt_status load_stream(lt_context *ctx, FILE *f, const char *path, lt_tensor **out) {
  unsigned char *prefix = lt__host_alloc(ctx, LT__NPY_MAX_PREFIX);
  LT_RETURN_IF(prefix == NULL, LT_ERR_OUT_OF_MEMORY, "npy: out of memory reading the header");
  size_t got = read_up_to(f, prefix, LT__NPY_MAX_PREFIX);
  lt__npy_header h = {0};
  lt_status st = ferror(f) ? read_error(path) : lt__npy_parse_header(prefix, got, &h);
  size_t in_prefix = st == LT_OK ? got - h.data_offset : 0;
  struct stat info;
  bool sized = fstat(fileno(f), &info) == 0 && S_ISREG(info.st_mode);
  /* A regular file's size tells truncated or trailing data exactly, before any allocation. */
  if (st == LT_OK && sized)
    st = lt__npy_check_data_size(
        &h, (uint64_t)info.st_size < h.data_offset ? 0 : (uint64_t)info.st_size - h.data_offset);
  else if (st == LT_OK && in_prefix > h.data_bytes)
    st = lt__npy_trailing_data(&h);
  unsigned char *data = NULL;
  if (st == LT_OK)
    st = read_data(ctx, f, path, &h, prefix + h.data_offset, in_prefix, sized, &data);
  lt__host_free(ctx, prefix, LT__NPY_MAX_PREFIX);
  if (st == LT_OK) st = tensor_from_data(ctx, &h, data, true, out);
  lt__host_free(ctx, data, h.data_bytes);
  return st;
}

lt_status lt_npy_load(lt_context *ctx, const char *path, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_npy_load", "ctx"));
  LT_CHECK_NULL(path, "path");
  FILE *f = fopen(path, "rb");
  LT_RETURN_IF(f == NULL, LT_ERR_IO, "npy: cannot open '%s': %s", path, strerror(errno));
  lt_status st = load_stream(ctx, f, path, out);
  fclose(f);
  /* Every other message leaves the file to this prefix; I/O errors name it already. */
  if (st != LT_OK && st != LT_ERR_IO) lt__error_prefix(path);
  return st;
}

static lt_status write_file(const char *path, const char *header, size_t header_len,
                            const void *data, size_t data_len, unsigned flags) {
  lt__atomic_file f;
  LT_TRY(lt__atomic_open("lt_npy_save", path, &f));
  lt_status st = lt__atomic_write(&f, "lt_npy_save", header, header_len);
  if (st == LT_OK) st = lt__atomic_write(&f, "lt_npy_save", data, data_len);
  if (st != LT_OK) {
    lt__atomic_abort(&f);
    return st;
  }
  return lt__atomic_commit(&f, "lt_npy_save", flags);
}

lt_status lt_npy_save_with_flags(const lt_tensor *t, const char *path, uint32_t flags) {
  LT_TRY(lt__check_tensor(t, "lt_npy_save: tensor"));
  LT_CHECK_ARG_NULL(path, "lt_npy_save", "path");
  LT_RETURN_IF(flags & ~(unsigned)LT_SAVE_FSYNC, LT_ERR_INVALID_ARGUMENT,
               "lt_npy_save: unknown flags 0x%x", flags & ~(unsigned)LT_SAVE_FSYNC);
  char header[LT__NPY_FORMAT_CAP];
  size_t header_len;
  LT_TRY(lt__npy_format_header(t->dtype, t->rank, t->shape, header, &header_len));
  lt_context *ctx = t->storage->ctx;
  size_t bytes = lt_tensor_nbytes(t);
  unsigned char *data = lt__host_alloc(ctx, bytes);
  LT_RETURN_IF(data == NULL, LT_ERR_OUT_OF_MEMORY, "lt_npy_save: out of memory (%zu bytes)", bytes);
  lt_status st = lt_tensor_to_host(t, data, bytes);
  if (st == LT_OK) {
    if (!lt__host_is_little_endian()) swap_elements(data, bytes, lt_dtype_size(t->dtype));
    st = write_file(path, header, header_len, data, bytes, flags);
  }
  lt__host_free(ctx, data, bytes);
  return st;
}

lt_status lt_npy_save(const lt_tensor *t, const char *path) {
  return lt_npy_save_with_flags(t, path, LT_SAVE_DEFAULT);
}

/* .npy load and save: bytes <-> tensors (byte order and Fortran order handled on the host). */
#include "io/npy.h"
#include "core/error.h"
#include "core/object.h"

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
  LT_CHECK_NULL(ctx, "ctx");
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

/* Counts (and discards) what is left in the file, to report trailing bytes exactly. */
static uint64_t count_rest(FILE *f) {
  unsigned char chunk[4096];
  uint64_t n = 0;
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
    n += k;
  return n;
}

static lt_status read_error(FILE *f, const char *path) {
  return lt__error(LT_ERR_IO, "npy: cannot read '%s': %s", path, strerror(errno));
}

/* Reads the header first (bounded), then exactly the data it announces: a file is never held
 * twice in memory, and a bad header fails before any data is read. */
static lt_status load_stream(lt_context *ctx, FILE *f, const char *path, lt_tensor **out) {
  unsigned char *prefix = lt__host_alloc(ctx, LT__NPY_MAX_PREFIX);
  LT_RETURN_IF(prefix == NULL, LT_ERR_OUT_OF_MEMORY, "npy: out of memory reading '%s'", path);
  size_t got = read_up_to(f, prefix, LT__NPY_MAX_PREFIX);
  lt__npy_header h = {0};
  lt_status st = ferror(f) ? read_error(f, path) : lt__npy_parse_header(prefix, got, &h);
  size_t in_prefix = st == LT_OK ? got - h.data_offset : 0;
  if (st == LT_OK && in_prefix > h.data_bytes)
    st = lt__npy_check_data_size(&h, in_prefix + count_rest(f));
  struct stat info;
  /* A regular file's size tells a truncated file before a huge buffer is allocated. */
  if (st == LT_OK && fstat(fileno(f), &info) == 0 && S_ISREG(info.st_mode) &&
      (uint64_t)info.st_size < h.data_offset + (uint64_t)h.data_bytes)
    st = lt__npy_check_data_size(&h, (uint64_t)info.st_size - h.data_offset);
  unsigned char *data = NULL;
  if (st == LT_OK) {
    data = lt__host_alloc(ctx, h.data_bytes);
    if (data == NULL)
      st = lt__error(LT_ERR_OUT_OF_MEMORY, "npy: out of memory (%zu bytes) for the data of '%s'",
                     h.data_bytes, path);
  }
  if (st == LT_OK) {
    memcpy(data, prefix + h.data_offset, in_prefix);
    size_t n = in_prefix + read_up_to(f, data + in_prefix, h.data_bytes - in_prefix);
    uint64_t extra = ferror(f) ? 0 : count_rest(f);
    st = ferror(f) ? read_error(f, path) : lt__npy_check_data_size(&h, n + extra);
  }
  lt__host_free(ctx, prefix, LT__NPY_MAX_PREFIX);
  if (st == LT_OK) st = tensor_from_data(ctx, &h, data, true, out);
  lt__host_free(ctx, data, h.data_bytes);
  return st;
}

lt_status lt_npy_load(lt_context *ctx, const char *path, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_CHECK_NULL(ctx, "ctx");
  LT_CHECK_NULL(path, "path");
  FILE *f = fopen(path, "rb");
  LT_RETURN_IF(f == NULL, LT_ERR_IO, "npy: cannot open '%s': %s", path, strerror(errno));
  lt_status st = load_stream(ctx, f, path, out);
  fclose(f);
  /* Format and memory errors name the file; I/O errors already do. */
  if (st != LT_OK && st != LT_ERR_IO) lt__error_prefix(path);
  return st;
}

static lt_status write_file(const char *path, const char *header, size_t header_len,
                            const void *data, size_t data_len) {
  FILE *f = fopen(path, "wb");
  LT_RETURN_IF(f == NULL, LT_ERR_IO, "npy: cannot create '%s': %s", path, strerror(errno));
  bool ok = fwrite(header, 1, header_len, f) == header_len;
  if (ok && data_len) ok = fwrite(data, 1, data_len, f) == data_len;
  int saved = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok) return LT_OK;
  remove(path); /* never leave a truncated file that looks like a tensor */
  return lt__error(LT_ERR_IO, "npy: cannot write '%s': %s", path, strerror(saved));
}

lt_status lt_npy_save(const lt_tensor *t, const char *path) {
  LT_TRY(lt__check_tensor(t, "lt_npy_save: tensor"));
  LT_CHECK_NULL(path, "path");
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
    st = write_file(path, header, header_len, data, bytes);
  }
  lt__host_free(ctx, data, bytes);
  return st;
}

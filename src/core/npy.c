/* .npy load and save: bytes <-> tensors (byte order and Fortran order handled on the host). */
#include "core/npy.h"
#include "core/error.h"
#include "core/object.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

lt_status lt_npy_load_buffer(lt_context *ctx, const void *bytes, size_t size, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_CHECK_NULL(ctx, "ctx");
  LT_CHECK_NULL(bytes, "bytes");
  lt__npy_header h;
  LT_TRY(lt__npy_parse_header(bytes, size, &h));
  const unsigned char *data = (const unsigned char *)bytes + h.data_offset;
  unsigned char *swapped = NULL;
  if (h.swap && h.data_bytes > 0) {
    swapped = lt__host_alloc(ctx, h.data_bytes);
    LT_RETURN_IF(swapped == NULL, LT_ERR_OUT_OF_MEMORY,
                 "npy: out of memory (%zu bytes) converting the byte order", h.data_bytes);
    memcpy(swapped, data, h.data_bytes);
    swap_elements(swapped, h.data_bytes, lt_dtype_size(h.dtype));
    data = swapped;
  }
  int64_t strides[LT_MAX_RANK];
  if (h.fortran) fortran_strides(h.rank, h.shape, strides);
  lt_status st =
      lt_tensor_from_host(ctx, h.dtype, h.rank, h.shape, h.fortran ? strides : NULL, data, out);
  lt__host_free(ctx, swapped, h.data_bytes);
  return st;
}

/* Reads a whole file into a host buffer (works for pipes too: no size is trusted). */
static lt_status read_file(lt_context *ctx, const char *path, unsigned char **out, size_t *size,
                           size_t *cap) {
  FILE *f = fopen(path, "rb");
  LT_RETURN_IF(f == NULL, LT_ERR_IO, "npy: cannot open '%s': %s", path, strerror(errno));
  size_t n = 0, c = 0;
  unsigned char *buf = NULL;
  lt_status st = LT_OK;
  for (;;) {
    if (n == c) {
      size_t nc = c ? c * 2 : 65536;
      unsigned char *nb = nc > c ? lt__host_alloc(ctx, nc) : NULL;
      if (nb == NULL) {
        st = lt__error(LT_ERR_OUT_OF_MEMORY, "npy: out of memory reading '%s'", path);
        break;
      }
      if (n) memcpy(nb, buf, n);
      lt__host_free(ctx, buf, c);
      buf = nb;
      c = nc;
    }
    size_t got = fread(buf + n, 1, c - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) st = lt__error(LT_ERR_IO, "npy: cannot read '%s': %s", path, strerror(errno));
      break;
    }
  }
  fclose(f);
  if (st != LT_OK) {
    lt__host_free(ctx, buf, c);
    return st;
  }
  *out = buf;
  *size = n;
  *cap = c;
  return LT_OK;
}

lt_status lt_npy_load(lt_context *ctx, const char *path, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_CHECK_NULL(ctx, "ctx");
  LT_CHECK_NULL(path, "path");
  unsigned char *buf = NULL;
  size_t size = 0, cap = 0;
  LT_TRY(read_file(ctx, path, &buf, &size, &cap));
  lt_status st = lt_npy_load_buffer(ctx, buf, size, out);
  lt__host_free(ctx, buf, cap);
  if (st != LT_OK) lt__error_prefix(path);
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

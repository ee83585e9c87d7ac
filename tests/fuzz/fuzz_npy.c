/* SPDX-License-Identifier: MIT */
/* Fuzz target: the .npy reader on arbitrary bytes (lt_npy_load_buffer), and the same bytes as a
 * stream (lt_npy_load on a pipe, the path that cannot know the size in advance). Malformed
 * input must be a status with a message and no tensor; accepted input must describe a tensor
 * whose data really was in the buffer, and reading every element must work; the stream must
 * agree with the buffer. A loader that trusts a header's shape before checking the payload size
 * runs into libFuzzer's malloc limit. */
#include "fuzz_input.h"
#include "tensor.h"

#include <stdio.h>
#include <unistd.h>

/* Loads `data` through a pipe (filled before reading starts: it fits the pipe's buffer). */
static lt_status load_from_pipe(lt_context *ctx, const uint8_t *data, size_t size, int64_t *numel) {
  int fds[2];
  if (pipe(fds) != 0) abort();
  if (size && write(fds[1], data, size) != (ssize_t)size) abort();
  close(fds[1]);
  char path[32];
  snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
  lt_tensor *t = NULL;
  lt_status st = lt_npy_load(ctx, path, &t);
  close(fds[0]);
  *numel = t ? lt_tensor_numel(t) : -1;
  FUZZ_ASSERT((st == LT_OK) == (t != NULL), "stream: status %s with tensor %p",
              lt_status_string(st), (void *)t);
  lt_tensor_destroy(t);
  return st;
}

static bool accepted_failure(lt_status st) {
  return st == LT_ERR_FORMAT || st == LT_ERR_DTYPE || st == LT_ERR_OVERFLOW ||
         st == LT_ERR_UNSUPPORTED || st == LT_ERR_INVALID_ARGUMENT || st == LT_ERR_OUT_OF_MEMORY;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lt_context *ctx;
  if (ctx == NULL && lt_context_create(NULL, &ctx) != LT_OK) abort();
  lt_tensor *t = (lt_tensor *)&ctx; /* must become NULL on failure */
  lt_clear_error();
  lt_status st = lt_npy_load_buffer(ctx, data, size, &t);
  if (size <= 65536) {
    int64_t stream_numel;
    lt_status sst = load_from_pipe(ctx, data, size, &stream_numel);
    FUZZ_ASSERT((sst == LT_OK) == (st == LT_OK), "buffer: %s, the same bytes as a stream: %s",
                lt_status_string(st), lt_status_string(sst));
    FUZZ_ASSERT(st != LT_OK || stream_numel == lt_tensor_numel(t), "stream read another shape");
  }
  if (st != LT_OK) {
    FUZZ_ASSERT(accepted_failure(st), "unexpected status %s", lt_status_string(st));
    FUZZ_ASSERT(t == NULL, "failed but set *out");
    FUZZ_ASSERT(lt_last_error()[0] != '\0', "failed without a message");
    return 0;
  }
  FUZZ_ASSERT(size >= 10 && memcmp(data, "\x93NUMPY", 6) == 0, "accepted a file without magic");
  size_t nbytes = lt_tensor_nbytes(t);
  FUZZ_ASSERT(nbytes + 10 <= size, "a tensor of %zu bytes from a %zu-byte file", nbytes, size);
  lt_dtype dtype = lt_tensor_dtype(t);
  /* Every dtype .npy can name (issue 18 A added the integers and bool); bfloat16 it cannot. */
  FUZZ_ASSERT(lt_dtype_name(dtype) != NULL && dtype != LT_BF16, "dtype %d", (int)dtype);
  void *buf = malloc(nbytes ? nbytes : 1);
  FUZZ_ASSERT(lt_tensor_to_host(t, buf, nbytes) == LT_OK, "to_host of a loaded tensor");
  free(buf);
  /* Extents whose product (zeros aside) overflows f64 bytes are refused by every constructor,
   * even for an empty tensor: converting a wide empty f16 tensor to f64 may honestly fail. */
  int64_t product = 8;
  bool f64_fits = true;
  for (int d = 0; d < lt_tensor_rank(t); d++) {
    int64_t e = lt_tensor_shape(t)[d];
    if (e > 0 && __builtin_mul_overflow(product, e, &product)) f64_fits = false;
  }
  lt_tensor *c = NULL;
  lt_status cst = lt_tensor_contiguous(t, LT_F64, &c);
  FUZZ_ASSERT(cst == LT_OK || (!f64_fits && cst == LT_ERR_OVERFLOW),
              "conversion of a loaded tensor: %s", lt_status_string(cst));
  lt_tensor_destroy(c);
  lt_tensor_destroy(t);
  return 0;
}

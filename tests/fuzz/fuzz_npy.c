/* Fuzz target: the .npy reader on arbitrary bytes (lt_npy_load_buffer). Malformed input must
 * be a status with a message and no tensor; accepted input must describe a tensor whose data
 * really was in the buffer, and reading every element must work. A loader that trusts a
 * header's shape before checking the payload size runs into libFuzzer's malloc limit. */
#include "fuzz_input.h"
#include "tensor.h"

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
  FUZZ_ASSERT(dtype == LT_F16 || dtype == LT_F32 || dtype == LT_F64 || dtype == LT_I64, "dtype %d",
              (int)dtype);
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

/* Fuzz target: the .npy reader on arbitrary bytes (lt_npy_load_buffer). Malformed input must
 * be a status with a message and no tensor; accepted input must describe a tensor whose data
 * really was in the buffer, and reading every element must work. A loader that trusts a
 * header's shape before checking the payload size runs into libFuzzer's malloc limit. */
#include "fuzz_input.h"
#include "optional_api.h"

static bool accepted_failure(lt_status st) {
  return st == LT_ERR_FORMAT || st == LT_ERR_DTYPE || st == LT_ERR_OVERFLOW ||
         st == LT_ERR_UNSUPPORTED || st == LT_ERR_INVALID_ARGUMENT || st == LT_ERR_OUT_OF_MEMORY;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lt_context *ctx;
  if (ctx == NULL && lt_context_create("cpu", &ctx) != LT_OK) abort();
  if (!LT_HAVE(lt_npy_load_buffer)) return 0; /* not in this libtensor yet */
  lt_tensor *t = (lt_tensor *)&ctx;           /* must become NULL on failure */
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
  lt_tensor *c = NULL;
  FUZZ_ASSERT(lt_tensor_contiguous(t, LT_F64, &c) == LT_OK, "conversion of a loaded tensor");
  lt_tensor_destroy(c);
  lt_tensor_destroy(t);
  return 0;
}

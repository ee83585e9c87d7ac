/* SPDX-License-Identifier: MIT */
/* Fuzz target: arbitrary bytes as an HDF5 file (written to a temporary file, since HDF5 opens
 * paths), opened read-only; every object listed is described, read whole (in its own dtype and
 * converted to f64), read as a stepped slab, and its attributes listed and read. Malformed input
 * must be a status with a message and no tensor; an accepted read must have the shape the
 * description announced. Without HDF5 in the build every call is LT_ERR_UNSUPPORTED.
 *
 * The checks cover libtensor's layer; HDF5's own decoder (an uninstrumented system library)
 * is fuzzed only through it, and a crash inside libhdf5 is reported upstream, not fixed here. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "fuzz_input.h"
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool accepted_failure(lt_status st) {
  return st == LT_ERR_FORMAT || st == LT_ERR_DTYPE || st == LT_ERR_IO || st == LT_ERR_UNSUPPORTED ||
         st == LT_ERR_INVALID_ARGUMENT || st == LT_ERR_OUT_OF_MEMORY || st == LT_ERR_OVERFLOW;
}

static void check_failure(lt_status st, const char *what) {
  FUZZ_ASSERT(accepted_failure(st), "%s: unexpected status %s (%s)", what, lt_status_string(st),
              lt_last_error());
  FUZZ_ASSERT(lt_last_error()[0] != '\0', "%s: failed without a message", what);
}

static void check_read(lt_status st, lt_tensor *t, int rank, const int64_t *shape, bool slab) {
  if (st != LT_OK) {
    FUZZ_ASSERT(t == NULL, "read failed but set *out");
    check_failure(st, "read");
    return;
  }
  FUZZ_ASSERT(lt_tensor_rank(t) == rank, "read rank %d, described %d", lt_tensor_rank(t), rank);
  for (int i = 0; i < rank; i++) {
    int64_t want = slab ? (shape[i] + 1) / 2 : shape[i];
    FUZZ_ASSERT(lt_tensor_shape(t)[i] == want, "axis %d: read %lld, expected %lld", i,
                (long long)lt_tensor_shape(t)[i], (long long)want);
  }
  lt_tensor_destroy(t);
}

static void attributes(lt_h5_file *f, const char *path) {
  char names[1024];
  size_t need = 0;
  lt_status st = lt_h5_attr_list(f, path, names, sizeof names, &need);
  if (need > sizeof names) return; /* refused as too small for the buffer */
  if (st != LT_OK) return check_failure(st, "attr_list");
  char *state = NULL;
  for (char *line = strtok_r(names, "\n", &state); line; line = strtok_r(NULL, "\n", &state)) {
    if (strlen(line) < 2) continue;
    double d;
    char s[64];
    /* LT_FUZZ_HDF5_SKIP_STRINGS steers around libhdf5's broken global-heap reads
     * (upstream/README.md) so that a session can reach the rest. */
    if (line[0] == 's' && getenv("LT_FUZZ_HDF5_SKIP_STRINGS")) continue;
    need = 0;
    st = line[0] == 's' ? lt_h5_attr_get_string(f, path, line + 2, s, sizeof s, &need)
                        : lt_h5_attr_get_double(f, path, line + 2, &d);
    if (st != LT_OK && need <= sizeof s) check_failure(st, "attribute");
  }
}

static void object(lt_context *ctx, lt_h5_file *f, const char *path) {
  attributes(f, path);
  int kind = -1, rank = -1;
  lt_dtype dtype;
  int64_t shape[LT_MAX_RANK], chunk[LT_MAX_RANK];
  char desc[256];
  lt_status st = lt_h5_stat(f, path, &kind, &dtype, &rank, shape, chunk, desc, sizeof desc);
  if (st != LT_OK) return check_failure(st, "stat");
  if (kind != LT_H5_DATASET) return;
  int64_t numel = 1;
  for (int i = 0; i < rank; i++)
    if (__builtin_mul_overflow(numel, shape[i], &numel)) numel = INT64_MAX;
  if (numel > (1 << 20)) return; /* a huge claimed shape: the read would allocate it */
  for (int mode = 0; mode < 3; mode++) {
    lt_tensor *t = (lt_tensor *)ctx; /* must become NULL on failure */
    int64_t step[LT_MAX_RANK];
    for (int i = 0; i < rank; i++)
      step[i] = 2;
    st = mode == 0   ? lt_h5_read(f, path, ctx, LT_DTYPE_INVALID, &t)
         : mode == 1 ? lt_h5_read(f, path, ctx, LT_F64, &t)
                     : lt_h5_read_slab(f, path, rank, NULL, NULL, step, ctx, LT_F64, &t);
    check_read(st, t, rank, shape, mode == 2);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lt_context *ctx;
  static char path[64];
  if (ctx == NULL) {
    if (lt_context_create(NULL, &ctx) != LT_OK) abort();
    snprintf(path, sizeof path, "/tmp/lt_fuzz_hdf5_%ld.h5", (long)getpid());
  }
  FILE *out = fopen(path, "wb");
  if (out == NULL || (size && fwrite(data, 1, size, out) != size)) abort();
  fclose(out);
  lt_clear_error();
  lt_h5_file *f = (lt_h5_file *)&ctx; /* must become NULL on failure */
  lt_status st = lt_h5_open(path, LT_H5_READ, &f);
  if (st != LT_OK) {
    FUZZ_ASSERT(f == NULL, "open failed but set *out");
    check_failure(st, "open");
    unlink(path);
    return 0;
  }
  char list[4096];
  size_t need = 0;
  st = lt_h5_list(f, list, sizeof list, &need);
  if (st != LT_OK && need <= sizeof list) {
    check_failure(st, "list");
  } else if (st == LT_OK) {
    object(ctx, f, "/");
    int n = 0;
    char *state = NULL;
    for (char *line = strtok_r(list, "\n", &state); line && n < 16;
         line = strtok_r(NULL, "\n", &state), n++)
      object(ctx, f, line);
  }
  st = lt_h5_close(f);
  if (st != LT_OK) check_failure(st, "close");
  unlink(path);
  return 0;
}

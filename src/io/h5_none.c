/* SPDX-License-Identifier: MIT */
/* The HDF5 functions of a build without HDF5 (LT_WITH_HDF5=OFF or no libhdf5-dev): exported all
 * the same, so that the ABI does not depend on the build option, each refusing with
 * LT_ERR_UNSUPPORTED. */
#include "core/error.h"
#include "tensor/hdf5.h"

#define LT__H5_NONE(fn)                                                                            \
  return lt__error(LT_ERR_UNSUPPORTED,                                                             \
                   "%s: HDF5: this libtensor was built without HDF5 (LT_WITH_HDF5=OFF)", fn)

bool lt_h5_available(void) { return false; }

lt_status lt_h5_open(const char *path, lt_h5_mode mode, lt_h5_file **out) {
  if (out) *out = NULL;
  LT__H5_NONE("lt_h5_open");
}
lt_status lt_h5_close(lt_h5_file *f) {
  if (f == NULL) return LT_OK;
  LT__H5_NONE("lt_h5_close");
}
lt_status lt_h5_discard(lt_h5_file *f) {
  if (f == NULL) return LT_OK;
  LT__H5_NONE("lt_h5_discard");
}
lt_status lt_h5_list(lt_h5_file *f, char *buf, size_t cap, size_t *needed) {
  LT__H5_NONE("lt_h5_list");
}
lt_status lt_h5_stat(lt_h5_file *f, const char *path, int *kind, lt_dtype *dtype, int *rank,
                     int64_t *shape, int64_t *chunk, char *desc, size_t cap) {
  LT__H5_NONE("lt_h5_stat");
}
lt_status lt_h5_read(lt_h5_file *f, const char *path, lt_context *ctx, lt_dtype dtype,
                     lt_tensor **out) {
  if (out) *out = NULL;
  LT__H5_NONE("lt_h5_read");
}
lt_status lt_h5_read_slab(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                          const int64_t *stop, const int64_t *step, lt_context *ctx, lt_dtype dtype,
                          lt_tensor **out) {
  if (out) *out = NULL;
  LT__H5_NONE("lt_h5_read_slab");
}
lt_status lt_h5_read_into(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                          const int64_t *stop, const int64_t *step, lt_tensor *dst) {
  LT__H5_NONE("lt_h5_read_into");
}
lt_status lt_h5_write(lt_h5_file *f, const char *path, const lt_tensor *t, const int64_t *chunks,
                      int gzip_level, uint32_t flags) {
  LT__H5_NONE("lt_h5_write");
}
lt_status lt_h5_write_slab(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                           const int64_t *stop, const int64_t *step, const lt_tensor *t) {
  LT__H5_NONE("lt_h5_write_slab");
}
lt_status lt_h5_attr_set_double(lt_h5_file *f, const char *path, const char *name, double value) {
  LT__H5_NONE("lt_h5_attr_set_double");
}
lt_status lt_h5_attr_set_int64(lt_h5_file *f, const char *path, const char *name, int64_t value) {
  LT__H5_NONE("lt_h5_attr_set_int64");
}
lt_status lt_h5_attr_set_string(lt_h5_file *f, const char *path, const char *name,
                                const char *value) {
  LT__H5_NONE("lt_h5_attr_set_string");
}
lt_status lt_h5_attr_get_double(lt_h5_file *f, const char *path, const char *name, double *value) {
  LT__H5_NONE("lt_h5_attr_get_double");
}
lt_status lt_h5_attr_get_int64(lt_h5_file *f, const char *path, const char *name, int64_t *value) {
  LT__H5_NONE("lt_h5_attr_get_int64");
}
lt_status lt_h5_attr_get_string(lt_h5_file *f, const char *path, const char *name, char *buf,
                                size_t cap, size_t *needed) {
  LT__H5_NONE("lt_h5_attr_get_string");
}
lt_status lt_h5_attr_list(lt_h5_file *f, const char *path, char *buf, size_t cap, size_t *needed) {
  LT__H5_NONE("lt_h5_attr_list");
}

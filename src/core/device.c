/* Device enumeration: the CPU is device 0, OpenCL devices (if built) follow. */
#include "core/error.h"
#include "core/object.h"

#include <unistd.h>

lt_status lt_device_count(int *count) {
  LT_CHECK_NULL(count, "count");
  *count = 1;
#ifdef LT_HAVE_OPENCL
  int n = 0;
  if (lt__opencl_device_count(&n) == LT_OK) *count += n;
#endif
  return LT_OK;
}

static lt_status check_index(int index) {
  int count = 0;
  LT_TRY(lt_device_count(&count));
  LT_RETURN_IF(index < 0 || index >= count, LT_ERR_OUT_OF_RANGE,
               "device index %d is outside [0, %d)", index, count);
  return LT_OK;
}

lt_status lt_device_string(int index, lt_device_prop prop, const char **out) {
  LT_CHECK_NULL(out, "out");
  LT_TRY(check_index(index));
  if (index > 0) {
#ifdef LT_HAVE_OPENCL
    return lt__opencl_device_string(index - 1, prop, out);
#endif
  }
  switch (prop) {
  case LT_DEVICE_ID: *out = "cpu"; return LT_OK;
  case LT_DEVICE_NAME: *out = "host CPU (OpenBLAS + libtensor threads)"; return LT_OK;
  case LT_DEVICE_VENDOR: *out = "host"; return LT_OK;
  case LT_DEVICE_TYPE: *out = "cpu"; return LT_OK;
  default:
    return lt__error(LT_ERR_INVALID_ARGUMENT, "device property %d is not a string property",
                     (int)prop);
  }
}

lt_status lt_device_int(int index, lt_device_prop prop, int64_t *out) {
  LT_CHECK_NULL(out, "out");
  LT_TRY(check_index(index));
  if (index > 0) {
#ifdef LT_HAVE_OPENCL
    return lt__opencl_device_int(index - 1, prop, out);
#endif
  }
  switch (prop) {
  case LT_DEVICE_GLOBAL_MEMORY: {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *out = (pages > 0 && page > 0) ? (int64_t)pages * page : 0;
    return LT_OK;
  }
  case LT_DEVICE_COMPUTE_UNITS: {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *out = n > 0 ? n : 1;
    return LT_OK;
  }
  case LT_DEVICE_FP64: *out = 1; return LT_OK;
  case LT_DEVICE_FP16: *out = 0; return LT_OK;
  default:
    return lt__error(LT_ERR_INVALID_ARGUMENT, "device property %d is not an integer property",
                     (int)prop);
  }
}

/* OpenCL backend (not yet implemented: reports no device). */
#include "backend/backend.h"
#include "core/error.h"

lt_status lt__opencl_device_count(int *count) {
  *count = 0;
  return LT_OK;
}

lt_status lt__opencl_device_string(int index, lt_device_prop prop, const char **out) {
  return lt__error(LT_ERR_NO_DEVICE, "no OpenCL device %d", index);
}

lt_status lt__opencl_device_int(int index, lt_device_prop prop, int64_t *out) {
  return lt__error(LT_ERR_NO_DEVICE, "no OpenCL device %d", index);
}

lt_status lt__opencl_open(lt_context *ctx, const char *device) {
  return lt__error(LT_ERR_NO_DEVICE, "device '%s': the OpenCL backend is not implemented yet",
                   device);
}

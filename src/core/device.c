/* SPDX-License-Identifier: MIT */
/* Device enumeration over the backend registry: the CPU is device 0, OpenCL devices (if built)
 * follow. */
#include "core/error.h"
#include "core/object.h"

/* Devices of the registry's backends, numbered in table order; a backend whose enumeration
 * fails contributes none. */
static int backend_devices(const lt__backend_desc *b) {
  int n = 0;
  if (b->device_count == NULL || b->device_count(&n) != LT_OK || n < 0) return 0;
  return n;
}

lt_status lt_device_count(int *count) {
  LT_CHECK_NULL(count, "count");
  *count = 0;
  for (int i = 0; i < lt__backend_count(); i++)
    *count += backend_devices(lt__backend_at(i));
  return LT_OK;
}

/* The backend holding global device `index`, and the index within it. */
static lt_status find_device(int index, const lt__backend_desc **backend, int *local) {
  int count = 0;
  LT_TRY(lt_device_count(&count));
  LT_RETURN_IF(index < 0 || index >= count, LT_ERR_OUT_OF_RANGE,
               "device index %d is outside [0, %d)", index, count);
  for (int i = 0; i < lt__backend_count(); i++) {
    const lt__backend_desc *b = lt__backend_at(i);
    int n = backend_devices(b);
    if (index < n) {
      *backend = b;
      *local = index;
      return LT_OK;
    }
    index -= n;
  }
  return lt__error(LT_ERR_OUT_OF_RANGE, "device index %d is outside [0, %d)", index, count);
}

lt_status lt_device_string(int index, lt_device_prop prop, const char **out) {
  LT_CHECK_NULL(out, "out");
  const lt__backend_desc *b = NULL;
  int local = 0;
  LT_TRY_PREFIXED(find_device(index, &b, &local), "lt_device_string");
  LT_TRY_PREFIXED(b->device_string(local, prop, out), "lt_device_string");
  return LT_OK;
}

lt_status lt_device_int(int index, lt_device_prop prop, int64_t *out) {
  LT_CHECK_NULL(out, "out");
  const lt__backend_desc *b = NULL;
  int local = 0;
  LT_TRY_PREFIXED(find_device(index, &b, &local), "lt_device_int");
  LT_TRY_PREFIXED(b->device_int(local, prop, out), "lt_device_int");
  return LT_OK;
}

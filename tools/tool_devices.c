/* SPDX-License-Identifier: MIT */
/* `tensor devices`: every device the library can open, with its properties. */
#include "tool.h"

static void print_memory(int64_t bytes) {
  if (bytes >= (INT64_C(1) << 30))
    printf("%.1f GiB\n", (double)bytes / (double)(INT64_C(1) << 30));
  else
    printf("%.1f MiB\n", (double)bytes / (double)(1 << 20));
}

static int print_device(int index) {
  const char *id, *name, *vendor, *type;
  int64_t memory, units, fp64;
  lt_status st;
  if ((st = lt_device_string(index, LT_DEVICE_ID, &id)) != LT_OK ||
      (st = lt_device_string(index, LT_DEVICE_NAME, &name)) != LT_OK ||
      (st = lt_device_string(index, LT_DEVICE_VENDOR, &vendor)) != LT_OK ||
      (st = lt_device_string(index, LT_DEVICE_TYPE, &type)) != LT_OK ||
      (st = lt_device_int(index, LT_DEVICE_GLOBAL_MEMORY, &memory)) != LT_OK ||
      (st = lt_device_int(index, LT_DEVICE_COMPUTE_UNITS, &units)) != LT_OK ||
      (st = lt_device_int(index, LT_DEVICE_FP64, &fp64)) != LT_OK)
    return tool_fail("devices", "querying a device", st);
  printf("device %d: %s\n", index, id);
  printf("  name:          %s\n", name);
  printf("  vendor:        %s\n", vendor);
  printf("  type:          %s\n", type);
  printf("  memory:        ");
  print_memory(memory);
  printf("  compute units: %lld\n", (long long)units);
  printf("  fp64:          %s\n", fp64 ? "yes" : "no");
  return 0;
}

int tool_devices(int argc, char **argv) {
  if (tool_wants_help(argc, argv)) {
    printf("usage: tensor devices\n\nLists the devices libtensor can use (the CPU is device 0,\n"
           "OpenCL devices follow) with id, name, vendor, type, memory, compute units and\n"
           "float64 support. An id is what lt_context_create and LT_DEVICE accept.\n");
    return 0;
  }
  if (argc > 1) return tool_usage_error("devices", "takes no arguments");
  int count = 0;
  lt_status st = lt_device_count(&count);
  if (st != LT_OK) return tool_fail("devices", "counting devices", st);
  for (int i = 0; i < count; i++) {
    if (i) printf("\n");
    if (print_device(i) != 0) return 1;
  }
  return 0;
}

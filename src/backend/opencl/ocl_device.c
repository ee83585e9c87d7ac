/* SPDX-License-Identifier: MIT */
/* Device enumeration through the ICD loader, once per process, and the device properties
 * reported by lt_device_string / lt_device_int. */
#include "backend/opencl/ocl.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

#define LT_OCL_MAX_DEVICES 64

static lt__ocl_device devices[LT_OCL_MAX_DEVICES];
static int device_count;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static const char *type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

/* Reads the properties of one device; false if the driver refuses any of them. */
static bool describe(cl_platform_id p, cl_device_id d, int pi, int di, lt__ocl_device *out) {
  cl_device_type type;
  cl_ulong mem, alloc, local;
  cl_uint units;
  size_t wg;
  cl_device_fp_config fp64 = 0;
  char ext[8192] = "", profile[64] = "";
  if (clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof out->name, out->name, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_VENDOR, sizeof out->vendor, out->vendor, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) != CL_SUCCESS)
    return false;
  /* An extension list longer than the buffer only loses the fp16 flag. */
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL) != CL_SUCCESS) ext[0] = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) != CL_SUCCESS)
    fp64 = 0;
  /* A profile the driver will not name is taken as embedded: refusing is safer than wrong
   * integers. */
  if (clGetDeviceInfo(d, CL_DEVICE_PROFILE, sizeof profile, profile, NULL) != CL_SUCCESS)
    profile[0] = 0;
  out->platform = p;
  out->device = d;
  out->platform_index = pi;
  out->device_index = di;
  snprintf(out->id, sizeof out->id, "opencl:%d:%d", pi, di);
  out->type = type_name(type);
  out->global_memory = (int64_t)mem;
  out->max_alloc = (int64_t)alloc;
  out->local_memory = (int64_t)local;
  out->compute_units = units;
  out->max_work_group = (int64_t)wg;
  out->fp64 = fp64 != 0 || strstr(ext, "cl_khr_fp64") != NULL;
  out->fp16 = strstr(ext, "cl_khr_fp16") != NULL;
  out->int64 = strcmp(profile, "FULL_PROFILE") == 0 || strstr(ext, "cles_khr_int64") != NULL;
  return true;
}

static void enumerate(void) {
  cl_uint np = 0;
  cl_platform_id platforms[16];
  if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS) return;
  if (np > 16) np = 16;
  for (cl_uint p = 0; p < np; p++) {
    cl_device_id ids[LT_OCL_MAX_DEVICES];
    cl_uint nd = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, LT_OCL_MAX_DEVICES, ids, &nd) !=
        CL_SUCCESS)
      continue;
    if (nd > LT_OCL_MAX_DEVICES) nd = LT_OCL_MAX_DEVICES;
    for (cl_uint d = 0; d < nd && device_count < LT_OCL_MAX_DEVICES; d++)
      if (describe(platforms[p], ids[d], (int)p, (int)d, &devices[device_count])) device_count++;
  }
}

const lt__ocl_device *lt__ocl_devices(int *count) {
  pthread_once(&devices_once, enumerate);
  *count = device_count;
  return device_count ? devices : NULL;
}

lt_status lt__opencl_device_count(int *count) {
  lt__ocl_devices(count);
  return LT_OK;
}

static lt_status device_at(int index, const lt__ocl_device **out) {
  int n;
  const lt__ocl_device *all = lt__ocl_devices(&n);
  LT_RETURN_IF(index < 0 || index >= n, LT_ERR_NO_DEVICE,
               "no OpenCL device with index %d (%d found)", index, n);
  *out = &all[index];
  return LT_OK;
}

lt_status lt__opencl_device_string(int index, lt_device_prop prop, const char **out) {
  const lt__ocl_device *d = NULL;
  LT_TRY(device_at(index, &d));
  switch (prop) {
  case LT_DEVICE_ID: *out = d->id; return LT_OK;
  case LT_DEVICE_NAME: *out = d->name; return LT_OK;
  case LT_DEVICE_VENDOR: *out = d->vendor; return LT_OK;
  case LT_DEVICE_TYPE: *out = d->type; return LT_OK;
  default:
    return lt__error(LT_ERR_INVALID_ARGUMENT, "device property %d is not a string property",
                     (int)prop);
  }
}

lt_status lt__opencl_device_int(int index, lt_device_prop prop, int64_t *out) {
  const lt__ocl_device *d = NULL;
  LT_TRY(device_at(index, &d));
  switch (prop) {
  case LT_DEVICE_GLOBAL_MEMORY: *out = d->global_memory; return LT_OK;
  case LT_DEVICE_COMPUTE_UNITS: *out = d->compute_units; return LT_OK;
  case LT_DEVICE_FP64: *out = d->fp64; return LT_OK;
  case LT_DEVICE_FP16: *out = d->fp16; return LT_OK;
  default:
    return lt__error(LT_ERR_INVALID_ARGUMENT, "device property %d is not an integer property",
                     (int)prop);
  }
}

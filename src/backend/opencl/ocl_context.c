/* SPDX-License-Identifier: MIT */
/* OpenCL contexts: device selection from the device string, the cl_context and in-order
 * queue, synchronisation and teardown. Every call is ordered on the one queue; reads back to
 * the host block, so errors of earlier asynchronous kernels surface there or at synchronize. */
#include "backend/opencl/ocl.h"
#include "core/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses a non-negative decimal index ending at ':' or '\0'; advances *s. */
static bool parse_index(const char **s, int *out) {
  const char *p = *s;
  long v = 0;
  if (!isdigit((unsigned char)*p)) return false;
  while (isdigit((unsigned char)*p)) {
    v = v * 10 + (*p++ - '0');
    if (v > 1000000) return false;
  }
  *out = (int)v;
  *s = p;
  return true;
}

static lt_status select_device(const char *device, const lt__ocl_device **out) {
  int n;
  const lt__ocl_device *all = lt__ocl_devices(&n);
  LT_RETURN_IF(n == 0, LT_ERR_NO_DEVICE,
               "device '%s': no OpenCL platform or device found (is an ICD such as "
               "pocl-opencl-icd installed?)",
               device);
  if (device[6] == '\0') {
    for (int i = 0; i < n; i++)
      if (strcmp(all[i].type, "gpu") == 0) {
        *out = &all[i];
        return LT_OK;
      }
    *out = &all[0];
    return LT_OK;
  }
  const char *s = device + 7;
  int p, d;
  LT_RETURN_IF(!parse_index(&s, &p) || *s++ != ':' || !parse_index(&s, &d) || *s != '\0',
               LT_ERR_NO_DEVICE, "device '%s': expected \"opencl:P:D\" with decimal indices",
               device);
  for (int i = 0; i < n; i++)
    if (all[i].platform_index == p && all[i].device_index == d) {
      *out = &all[i];
      return LT_OK;
    }
  return lt__error(LT_ERR_NO_DEVICE,
                   "device '%s': no OpenCL device %d on platform %d (%d device%s found; "
                   "lt_device_string lists their ids)",
                   device, d, p, n, n == 1 ? "" : "s");
}

static lt_status ocl_synchronize(lt_context *ctx) {
  lt__ocl_state *st = lt__ocl(ctx);
  LT_CL_TRY(clFinish(st->queue), "clFinish");
  return LT_OK;
}

static void state_free(lt_context *ctx, lt__ocl_state *st) {
  if (st->queue) {
    clFinish(st->queue);
    lt__ocl_programs_release(st);
    clReleaseCommandQueue(st->queue);
  }
  if (st->context) clReleaseContext(st->context);
  pthread_mutex_destroy(&st->lock);
  lt__host_free(ctx, st, sizeof *st);
}

static void ocl_release(lt_context *ctx) {
  if (ctx->backend_state) state_free(ctx, ctx->backend_state);
  ctx->backend_state = NULL;
}

static const lt__backend opencl_backend = {
    .name = "opencl",
    .mem_alloc = lt__ocl_mem_alloc,
    .mem_free = lt__ocl_mem_free,
    .mem_write = lt__ocl_mem_write,
    .mem_read = lt__ocl_mem_read,
    .map = lt__ocl_map,
    .reduce = lt__ocl_reduce,
    .gemm = lt__ocl_gemm,
    .contract = lt__ocl_contract,
    .rows = lt__ocl_rows,
    .rng = lt__ocl_rng,
    .synchronize = ocl_synchronize,
    .release = ocl_release,
    /* The figures lower/pair.c used for every backend before they became caps; they should be
     * measured per device (a GPU's GEMM rate and launch cost differ from a CPU's). */
    /* host_memory false: cl_mem handles, even where the device is the CPU. */
    .caps = {LT__CAPS_UNMEASURED_COSTS, .host_memory = false},
    .index = &lt__ocl_index_ops,
};

static lt_status create_queue(lt__ocl_state *st) {
  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)st->dev->platform,
                                   0};
  st->context = clCreateContext(props, 1, &st->dev->device, NULL, NULL, &err);
  LT_CL_TRY(err, "clCreateContext");
  st->queue = clCreateCommandQueue(st->context, st->dev->device, 0, &err);
  if (err != CL_SUCCESS) st->queue = NULL;
  LT_CL_TRY(err, "clCreateCommandQueue");
  return LT_OK;
}

static lt_status opencl_open(lt_context *ctx, const char *device) {
  const lt__ocl_device *dev = NULL;
  LT_TRY(select_device(device, &dev));
  lt__ocl_state *st = lt__host_alloc(ctx, sizeof *st);
  LT_RETURN_IF(st == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory opening '%s'", device);
  memset(st, 0, sizeof *st);
  atomic_init(&st->released, 0);
  st->dev = dev;
  const char *no_fp64 = getenv("LT_OPENCL_NO_FP64");
  st->fp64 = dev->fp64 && !(no_fp64 && *no_fp64 && strcmp(no_fp64, "0") != 0);
  const char *no_int64 = getenv("LT_OPENCL_NO_INT64");
  st->int64 = dev->int64 && !(no_int64 && *no_int64 && strcmp(no_int64, "0") != 0);
  pthread_mutex_init(&st->lock, NULL);
  lt_status s = create_queue(st);
  if (s != LT_OK) {
    lt__error_prefix(dev->id);
    state_free(ctx, st);
    return s;
  }
  snprintf(ctx->device, sizeof ctx->device, "%s", dev->id);
  ctx->backend = &opencl_backend;
  ctx->backend_state = st;
  return LT_OK;
}

/* OpenCL's entry in the backend registry (backend/registry.c). */
const lt__backend_desc lt__opencl_backend_desc = {
    .prefix = "opencl",
    .takes_suffix = true,
    .forms = "\"opencl\" or \"opencl:P:D\"",
    .device_count = lt__opencl_device_count,
    .device_string = lt__opencl_device_string,
    .device_int = lt__opencl_device_int,
    .open = opencl_open,
};

/* SPDX-License-Identifier: MIT */
/* Kernel arguments, small constant buffers and NDRange launches, each CL call checked. */
#include "backend/opencl/ocl.h"
#include "core/dtype.h"

#include "core/error.h"
#include <math.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

lt_status lt__ocl_arg_bytes(cl_kernel k, cl_uint i, size_t size, const void *v) {
  LT_CL_TRY(clSetKernelArg(k, i, size, v), "clSetKernelArg");
  return LT_OK;
}

lt_status lt__ocl_arg_mem(cl_kernel k, cl_uint i, void *mem) {
  cl_mem m = mem;
  return lt__ocl_arg_bytes(k, i, sizeof m, &m);
}

lt_status lt__ocl_arg_long(cl_kernel k, cl_uint i, int64_t v) {
  cl_long x = v;
  return lt__ocl_arg_bytes(k, i, sizeof x, &x);
}

lt_status lt__ocl_arg_int(cl_kernel k, cl_uint i, int v) {
  cl_int x = v;
  return lt__ocl_arg_bytes(k, i, sizeof x, &x);
}

const char *lt__ocl_compute_define(lt_dtype compute) {
  switch (compute) {
  case LT_F64: return " -DLT_COMPUTE_F64";
  case LT_I64: return " -DLT_COMPUTE_I64";
  case LT_U64: return " -DLT_COMPUTE_U64";
  default: return "";
  }
}

lt_status lt__ocl_arg_real(cl_kernel k, cl_uint i, lt_dtype compute, double v) {
  if (compute == LT_F64) return lt__ocl_arg_bytes(k, i, sizeof v, &v);
  if (compute == LT_I64 || compute == LT_U64) { /* integer compute rounds its scalars */
    cl_ulong bits = compute == LT_I64 ? (cl_ulong)lt__f64_to_i64(nearbyint(v))
                                      : (cl_ulong)lt__f64_to_u64(nearbyint(v));
    return lt__ocl_arg_bytes(k, i, sizeof bits, &bits);
  }
  cl_float f = (cl_float)v;
  return lt__ocl_arg_bytes(k, i, sizeof f, &f);
}

lt_status lt__ocl_const_buffer(lt__ocl_state *st, const int64_t *values, size_t n, cl_mem *out) {
  cl_int err;
  static const int64_t zero = 0;
  /* An empty table still needs a valid buffer argument. */
  *out = clCreateBuffer(st->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        sizeof(int64_t) * (n ? n : 1), (void *)(n ? values : &zero), &err);
  LT_CL_TRY(err, "clCreateBuffer");
  return LT_OK;
}

lt_status lt__ocl_launch(lt__ocl_state *st, cl_kernel k, cl_uint dims, const size_t *global,
                         const size_t *local) {
  size_t g[3];
  for (cl_uint d = 0; d < dims; d++) {
    g[d] = global[d] ? global[d] : 1;
    if (local) g[d] = (g[d] + local[d] - 1) / local[d] * local[d];
  }
  LT_CL_TRY(clEnqueueNDRangeKernel(st->queue, k, dims, NULL, g, local, 0, NULL, NULL),
            "clEnqueueNDRangeKernel");
  return LT_OK;
}

const char *lt__ocl_dtype_token(lt_dtype dtype) {
  switch (dtype) {
  case LT_F16: return "f16";
  case LT_BF16: return "bf16";
  case LT_F32: return "f32";
  case LT_F64: return "f64";
  case LT_I64: return "i64";
  case LT_I8: return "i8";
  case LT_I16: return "i16";
  case LT_I32: return "i32";
  case LT_U8: return "u8";
  case LT_U16: return "u16";
  case LT_U32: return "u32";
  case LT_U64: return "u64";
  case LT_BOOL: return "b8";
  default: return "invalid";
  }
}

lt_status lt__ocl_require_dtype(const lt__ocl_state *st, lt_dtype dtype, const char *what) {
  LT_RETURN_IF(dtype == LT_F64 && !st->fp64, LT_ERR_UNSUPPORTED,
               "device %s (%s) has no float64 support (cl_khr_fp64): cannot %s in f64", st->dev->id,
               st->dev->name, what);
  LT_RETURN_IF(lt__dtype_is_exact(dtype) && !st->int64, LT_ERR_UNSUPPORTED,
               "device %s (%s) is an embedded-profile device without 64-bit integers "
               "(cles_khr_int64), which exact integer and bool kernels need: cannot %s %s",
               st->dev->id, st->dev->name, what, lt_dtype_name(dtype));
  return LT_OK;
}

lt_status lt__ocl_append(char *buf, size_t size, const char *fmt, ...) {
  size_t used = strlen(buf);
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(buf + used, size - used, fmt, args);
  va_end(args);
  LT_RETURN_IF(n < 0 || (size_t)n >= size - used, LT_ERR_INTERNAL,
               "OpenCL build options exceed %zu bytes", size);
  return LT_OK;
}

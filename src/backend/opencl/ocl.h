/* SPDX-License-Identifier: MIT */
/* OpenCL backend internals shared by the ocl_*.c files (never included by the front end). */
#ifndef LT_BACKEND_OPENCL_OCL_H
#define LT_BACKEND_OPENCL_OCL_H

#include "backend/backend.h"
#include "core/object.h"

#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>

/* One enumerated device: its handles and the properties lt_device_string/int report. */
typedef struct lt__ocl_device {
  cl_platform_id platform;
  cl_device_id device;
  int platform_index, device_index;
  char id[32], name[128], vendor[128];
  const char *type; /* "cpu", "gpu", "accelerator", "other" */
  int64_t global_memory, max_alloc, compute_units;
  int64_t max_work_group;
  int64_t local_memory;
  bool fp64, fp16;
  /* 64-bit integers: every full-profile device; an embedded-profile one with cles_khr_int64. */
  bool int64;
} lt__ocl_device;

/* One built program and its single kernel, cached per context by (file, kernel, options). */
typedef struct lt__ocl_program {
  struct lt__ocl_program *next;
  char *key; /* "file\nkernel\noptions" */
  cl_program program;
  cl_kernel kernel;
} lt__ocl_program;

/* ctx->backend_state of an OpenCL context. `lock` serialises kernel argument setting and
 * enqueueing (a cl_kernel is not thread-safe), and guards the program cache. */
typedef struct lt__ocl_state {
  const lt__ocl_device *dev;
  cl_context context;
  cl_command_queue queue;
  pthread_mutex_t lock;
  lt__ocl_program *programs;
  /* The device's fp64, unless LT_OPENCL_NO_FP64 is set when the context opens (a testing aid
   * that makes any device behave like a GPU without cl_khr_fp64). */
  bool fp64;
  /* The device's int64, unless LT_OPENCL_NO_INT64 is set when the context opens (a testing
   * aid: any device then refuses integer work as an embedded-profile device without 64-bit
   * integers must). */
  bool int64;
  /* Bytes of buffers released since the queue last finished (lt__ocl_mem_free). */
  atomic_size_t released;
} lt__ocl_state;

/* The enumerated devices (built once per process); NULL with *count 0 if there are none. */
const lt__ocl_device *lt__ocl_devices(int *count);
/* Device enumeration for the registry entry (ocl_context.c); indices are OpenCL-local. */
lt_status lt__opencl_device_count(int *count);
lt_status lt__opencl_device_string(int index, lt_device_prop prop, const char **out);
lt_status lt__opencl_device_int(int index, lt_device_prop prop, int64_t *out);

/* Releases a buffer of `bytes` (its size, or 0 for a small one); finishes the queue once
 * enough has been released since it last finished, as some runtimes free nothing before. */
void lt__ocl_release(lt__ocl_state *st, cl_mem mem, size_t bytes);

/* Name of a CL error code ("CL_OUT_OF_RESOURCES"). */
const char *lt__cl_error_name(cl_int err);
/* Maps a failed CL call to a status and sets the message "<call>: <CL name>". */
lt_status lt__cl_error(cl_int err, const char *call);
#define LT_CL_TRY(err, call)                                                                       \
  do {                                                                                             \
    cl_int lt__cl_err = (err);                                                                     \
    if (lt__cl_err != CL_SUCCESS) return lt__cl_error(lt__cl_err, call);                           \
  } while (0)

/* Kernel for (file, kernel, options) on the context's device, built on first use (caller holds
 * the state lock). Build failures are LT_ERR_BUILD with the build log in the message. */
lt_status lt__ocl_kernel(lt__ocl_state *st, const char *file, const char *kernel,
                         const char *options, cl_kernel *out);
void lt__ocl_programs_release(lt__ocl_state *st);

/* Process-wide binary cache (ocl_binary_cache.c): a built program for (device, options,
 * source hash), or NULL; and storing one after a source build. */
uint64_t lt__ocl_source_hash(const char *const *parts, int n);
cl_program lt__ocl_program_from_cache(lt__ocl_state *st, uint64_t hash, const char *options);
void lt__ocl_program_to_cache(lt__ocl_state *st, cl_program p, uint64_t hash, const char *options);

/* Kernel argument helpers (each checks the CL return code). */
lt_status lt__ocl_arg_mem(cl_kernel k, cl_uint i, void *mem);
lt_status lt__ocl_arg_long(cl_kernel k, cl_uint i, int64_t v);
lt_status lt__ocl_arg_int(cl_kernel k, cl_uint i, int v);
/* The -D option selecting a compute dtype's arithmetic in kernels/common.h ("" for F32). */
const char *lt__ocl_compute_define(lt_dtype compute);
lt_status lt__ocl_arg_real(cl_kernel k, cl_uint i, lt_dtype compute, double v);
lt_status lt__ocl_arg_bytes(cl_kernel k, cl_uint i, size_t size, const void *v);
/* A read-only device buffer holding `n` int64 values (a step's shapes and strides); the caller
 * releases it after enqueueing (OpenCL keeps it alive while the kernel needs it). */
lt_status lt__ocl_const_buffer(lt__ocl_state *st, const int64_t *values, size_t n, cl_mem *out);
/* Enqueues a 1-, 2- or 3-D NDRange (global sizes are rounded up to the local sizes). */
lt_status lt__ocl_launch(lt__ocl_state *st, cl_kernel k, cl_uint dims, const size_t *global,
                         const size_t *local);

/* The token kernels/common.h uses for a dtype: "f16", "bf16", "f32", "f64", "i64". */
const char *lt__ocl_dtype_token(lt_dtype dtype);
/* Checks that the device can compute in / load `dtype` (fp64 needs cl_khr_fp64; integers and
 * bool need 64-bit integers, which the kernels compute them in). */
lt_status lt__ocl_require_dtype(const lt__ocl_state *st, lt_dtype dtype, const char *what);
/* Appends printf-style text to a NUL-terminated options buffer (truncation is an internal
 * error). */
lt_status lt__ocl_append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Step kernels (ocl_map.c, ocl_reduce.c, ocl_gemm.c, ocl_contract.c). */
lt_status lt__ocl_map(lt_context *ctx, const lt__map_step *step);
lt_status lt__ocl_reduce(lt_context *ctx, const lt__reduce_step *step);
lt_status lt__ocl_gemm(lt_context *ctx, const lt__gemm_step *step);
lt_status lt__ocl_contract(lt_context *ctx, const lt__contract_step *step);
/* Gather, scatter-add and sort (ocl_index.c). */
extern const lt__index_ops lt__ocl_index_ops;
/* Row steps (ocl_rows.c) and random fills (ocl_random.c). */
lt_status lt__ocl_rows(lt_context *ctx, const lt__row_step *step);
lt_status lt__ocl_rng(lt_context *ctx, const lt__rng_step *step);

/* Memory (ocl_memory.c). */
lt_status lt__ocl_mem_alloc(lt_context *ctx, size_t bytes, void **mem);
void lt__ocl_mem_free(lt_context *ctx, void *mem, size_t bytes);
lt_status lt__ocl_mem_write(lt_context *ctx, void *mem, size_t offset, const void *src,
                            size_t bytes);
lt_status lt__ocl_mem_read(lt_context *ctx, void *mem, size_t offset, void *dst, size_t bytes);

static inline lt__ocl_state *lt__ocl(lt_context *ctx) { return ctx->backend_state; }

#endif

/* SPDX-License-Identifier: MIT */
/* libtensor: devices and contexts. */
#ifndef LT_TENSOR_CONTEXT_H
#define LT_TENSOR_CONTEXT_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* User allocator hooks: must return memory aligned to at least `align` bytes, or NULL. */
typedef void *(*lt_alloc_fn)(size_t bytes, size_t align, void *user);
/* Frees a block of `bytes` bytes that lt_alloc_fn returned. */
typedef void (*lt_free_fn)(void *ptr, size_t bytes, void *user);

/* Device properties for lt_device_string / lt_device_int. */
typedef enum lt_device_prop {
  LT_DEVICE_ID = 0,            /* string: "cpu", "opencl:P:D" (usable with lt_context_create) */
  LT_DEVICE_NAME = 1,          /* string */
  LT_DEVICE_VENDOR = 2,        /* string */
  LT_DEVICE_TYPE = 3,          /* string: "cpu", "gpu", "accelerator", "other" */
  LT_DEVICE_GLOBAL_MEMORY = 4, /* int: bytes */
  LT_DEVICE_COMPUTE_UNITS = 5, /* int */
  LT_DEVICE_FP64 = 6,          /* int: 1 if float64 arithmetic is supported */
  LT_DEVICE_FP16 = 7           /* int: 1 if half arithmetic is supported natively */
} lt_device_prop;

/* Number of devices: the CPU is device 0, OpenCL devices follow. */
LT_API lt_status lt_device_count(int *count);
/* A string property of device `index`; the string lives as long as the library. */
LT_API lt_status lt_device_string(int index, lt_device_prop prop, const char **out);
/* An integer property of device `index`. */
LT_API lt_status lt_device_int(int index, lt_device_prop prop, int64_t *out);

/* Opens a context on "cpu", "opencl" (first GPU, else first device), "opencl:P:D"; NULL means
 * the environment variable LT_DEVICE, else "cpu". */
LT_API lt_status lt_context_create(const char *device, lt_context **out);
/* Like lt_context_create, with host allocations routed through alloc/free (either may be NULL
 * only if both are). */
LT_API lt_status lt_context_create_with_allocator(const char *device, lt_alloc_fn alloc,
                                                  lt_free_fn free, void *user, lt_context **out);
/* Releases the caller's reference; the context lives on while tensors or plans use it. NULL ok. */
LT_API void lt_context_destroy(lt_context *ctx);
/* The device id string of a context ("cpu", "opencl:0:0"); NULL for NULL. */
LT_API const char *lt_context_device(const lt_context *ctx);
/* Sets the number of worker threads for CPU kernels (0 = LT_NUM_THREADS or all cores). */
LT_API lt_status lt_context_set_num_threads(lt_context *ctx, int threads);
/* Number of worker threads the context uses (the default resolved: LT_NUM_THREADS or cores). */
LT_API int lt_context_num_threads(const lt_context *ctx);
/* Waits for all queued work; reports errors of asynchronous work. */
LT_API lt_status lt_context_synchronize(lt_context *ctx);
/* Drops every cached plan of the context (einsum one-shot cache) and gives back the freed host
 * blocks it keeps for reuse (up to 16 blocks of 64 KiB to 1 GiB, 1 GiB in all, default
 * allocator only: a block reused skips the page zeroing a fresh one costs on first touch). */
LT_API lt_status lt_context_clear_cache(lt_context *ctx);

/* Memory figures of a context: bytes its allocations hold now (*in_use) and the most they held
 * since creation or the last lt_context_reset_peak_memory (*peak). Counted: everything from
 * the context's host allocator (CPU tensors, plan workspaces, GEMM packing buffers, plans)
 * and device buffers of backends without host memory (OpenCL tensors and workspaces). Either
 * pointer may be NULL. LT_ERR_INVALID_HANDLE for a bad context. */
LT_API lt_status lt_context_memory(const lt_context *ctx, int64_t *in_use, int64_t *peak);
/* Restarts the peak at the bytes held now. */
LT_API lt_status lt_context_reset_peak_memory(lt_context *ctx);

#ifdef __cplusplus
}
#endif
#endif

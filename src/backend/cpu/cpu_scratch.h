/* SPDX-License-Identifier: MIT */
/* Reusable scratch buffers for CPU kernels (GEMM packing). Page-faulting fresh multi-megabyte
 * buffers on every call would cost more than a medium GEMM, so buffers given back are kept, a
 * few at a time, until the context dies. */
#ifndef LT_BACKEND_CPU_SCRATCH_H
#define LT_BACKEND_CPU_SCRATCH_H

#include "tensor.h"

#include <pthread.h>

#define LT__CPU_SCRATCH_SLOTS 8

typedef struct lt__cpu_scratch {
  pthread_mutex_t lock;
  void *mem[LT__CPU_SCRATCH_SLOTS];
  size_t bytes[LT__CPU_SCRATCH_SLOTS];
} lt__cpu_scratch;

void lt__cpu_scratch_init(lt__cpu_scratch *s);
/* Frees every kept buffer through the context's allocator. */
void lt__cpu_scratch_release(lt_context *ctx, lt__cpu_scratch *s);
/* A 64-byte aligned buffer of at least `bytes` (its real size in *got), or NULL when out of
 * memory. Thread safe. */
void *lt__cpu_scratch_take(lt_context *ctx, size_t bytes, size_t *got);
/* Returns a buffer from lt__cpu_scratch_take (NULL is ignored). */
void lt__cpu_scratch_give(lt_context *ctx, void *mem, size_t bytes);

#endif

/* SPDX-License-Identifier: MIT */
/* The fused optimiser update of the CPU backend (lt__adam_step): one pass per parameter instead
 * of the front end's four or five maps. */
#ifndef LT_BACKEND_CPU_OPTIM_H
#define LT_BACKEND_CPU_OPTIM_H

#include "backend/backend.h"

/* Updates elements [lo, hi) of a step. */
typedef void (*lt__cpu_adam_fn)(const lt__adam_step *s, int64_t lo, int64_t hi);

/* The AVX-512 build of the loop for F32 or F64 (only in builds with the x86 ISA kernels). */
lt__cpu_adam_fn lt__cpu_adam_kernel_avx512(lt_dtype dtype);

/* The backend's adam: the loop of the context's instruction set, split across its threads. */
lt_status lt__cpu_adam(lt_context *ctx, const lt__adam_step *step);

#endif

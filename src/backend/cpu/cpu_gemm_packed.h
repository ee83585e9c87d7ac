/* SPDX-License-Identifier: MIT */
/* GEMM on the library's own packed micro-kernels (BLIS loop order), beside the OpenBLAS path. */
#ifndef LT_BACKEND_CPU_GEMM_PACKED_H
#define LT_BACKEND_CPU_GEMM_PACKED_H

#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_gemm_kernel.h"

/* Runs the whole batched step on `bk`'s kernels; any strides are accepted. Returns false, with
 * nothing written, when the packing buffers cannot be allocated (the caller falls back). */
bool lt__cpu_gemm_packed(lt_context *ctx, const lt__gemm_step *step, const lt__gemm_blocking *bk);

#endif

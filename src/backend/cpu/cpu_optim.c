/* SPDX-License-Identifier: MIT */
/* The portable build of cpu_optim.inc, and the backend's adam: chunks of the parameter split
 * across the context's threads, each run by the loop of the context's instruction set. */
#include "backend/cpu/cpu_optim.h"
#include "backend/cpu/cpu.h"
#include "core/error.h"

#define ADAM_ISA
#include "backend/cpu/cpu_optim.inc"

/* Elements per task: large enough that a task outweighs its dispatch, small enough that two
 * threads share a 200k-element layer evenly. */
#define ADAM_CHUNK 8192

typedef struct adam_job {
  const lt__adam_step *s;
  lt__cpu_adam_fn fn;
} adam_job;

static void adam_range(void *arg, int64_t lo, int64_t hi) {
  const adam_job *j = arg;
  int64_t n = j->s->n, a = lo * ADAM_CHUNK, b = hi * ADAM_CHUNK < n ? hi * ADAM_CHUNK : n;
  if (a < b) j->fn(j->s, a, b);
}

lt_status lt__cpu_adam(lt_context *ctx, const lt__adam_step *step) {
  LT_RETURN_IF(step->dtype != LT_F32 && step->dtype != LT_F64, LT_ERR_INTERNAL,
               "cpu adam: dtype %s", lt_dtype_name(step->dtype));
  adam_job j = {step, step->dtype == LT_F64 ? adam_f64 : adam_f32};
#if defined(LT_HAVE_X86_ISA_KERNELS)
  if (lt__cpu_isa_of(ctx)->simd == LT__CPU_SIMD_AVX512) /* avx512 and avx512bf16 levels */
    j.fn = lt__cpu_adam_kernel_avx512(step->dtype);
#endif
  /* work: 7 element reads and writes per element, a division and a square root */
  lt__cpu_parallel(ctx, (step->n + ADAM_CHUNK - 1) / ADAM_CHUNK, 8 * step->n, adam_range, &j);
  return LT_OK;
}

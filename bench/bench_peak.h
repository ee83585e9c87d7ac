/* SPDX-License-Identifier: MIT */
/* The machine's floating-point limit, measured: independent FMA chains on every thread, in the
 * widest vector unit the CPU has (AVX-512, else AVX2+FMA, else none measured). The loop bodies
 * come from one macro: fma_loop_avx512 and fma_loop_avx2. */
#ifndef LT_BENCH_PEAK_H
#define LT_BENCH_PEAK_H

#include <pthread.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LT_PEAK_HAVE_X86 1

/* 12 independent accumulators cover the FMA latency x throughput of current cores. */
#define LT_DEFINE_FMA_LOOP(name, isa, vec, set1, fmadd, lanes)                                     \
  __attribute__((target(isa))) static double name(long iters) {                                    \
    vec acc[12], x = set1(1.0000001f), y = set1(0.999f);                                           \
    for (int i = 0; i < 12; i++)                                                                   \
      acc[i] = set1((float)i);                                                                     \
    for (long it = 0; it < iters; it++) {                                                          \
      for (int i = 0; i < 12; i++)                                                                 \
        acc[i] = fmadd(acc[i], x, y);                                                              \
      __asm__ volatile("" : "+x"(x));                                                              \
    }                                                                                              \
    float sink[lanes];                                                                             \
    volatile float keep = 0;                                                                       \
    for (int i = 0; i < 12; i++) {                                                                 \
      __builtin_memcpy(sink, &acc[i], sizeof sink);                                                \
      keep += sink[0];                                                                             \
    }                                                                                              \
    (void)keep;                                                                                    \
    return 2.0 * 12.0 * (double)(lanes) * (double)iters;                                           \
  }
LT_DEFINE_FMA_LOOP(fma_loop_avx512, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, 16)
LT_DEFINE_FMA_LOOP(fma_loop_avx2, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, 8)
#undef LT_DEFINE_FMA_LOOP
#endif

typedef struct lt_peak_job {
  double flops, seconds;
} lt_peak_job;

static void *lt_peak_thread(void *arg) {
  lt_peak_job *job = arg;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
#ifdef LT_PEAK_HAVE_X86
  long iters = 40000000;
  job->flops = __builtin_cpu_supports("avx512f") ? fma_loop_avx512(iters)
               : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                   ? fma_loop_avx2(iters)
                   : 0.0;
#else
  job->flops = 0.0;
#endif
  clock_gettime(CLOCK_MONOTONIC, &t1);
  job->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  return NULL;
}

/* f32 GFLOP/s of `threads` threads together in one try. */
static double lt_fma_peak_once(int threads) {
  lt_peak_job jobs[64];
  pthread_t tid[64];
  if (threads > 64) threads = 64;
  for (int i = 0; i < threads; i++)
    pthread_create(&tid[i], NULL, lt_peak_thread, &jobs[i]);
  double total = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(tid[i], NULL);
    total += jobs[i].flops / jobs[i].seconds / 1e9;
  }
  return total;
}

/* f32 GFLOP/s of `threads` threads together (f64 is half), 0 when not measurable here. A peak
 * is a maximum, so the best of a few tries: a shared machine only ever lowers it. */
static double lt_fma_peak_gflops(int threads) {
  double best = 0;
  for (int i = 0; i < 5; i++) {
    double g = lt_fma_peak_once(threads);
    best = g > best ? g : best;
  }
  return best;
}

#endif

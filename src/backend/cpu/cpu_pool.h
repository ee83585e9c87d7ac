/* SPDX-License-Identifier: MIT */
/* A small persistent thread pool for the CPU kernels. Idle workers sleep on a condition
 * variable, so they never compete with OpenBLAS's threads while a GEMM runs. */
#ifndef LT_BACKEND_CPU_POOL_H
#define LT_BACKEND_CPU_POOL_H

#include <stdint.h>

typedef struct lt__cpu_pool lt__cpu_pool;

/* Runs tasks [lo, hi) of a job; called once per chunk, from any thread. */
typedef void (*lt__cpu_range_fn)(void *arg, int64_t lo, int64_t hi);

/* A pool of `threads` - 1 workers (the caller is the last thread); NULL when out of memory or
 * threads <= 1. */
lt__cpu_pool *lt__cpu_pool_create(int threads);
void lt__cpu_pool_destroy(lt__cpu_pool *pool);
/* Wakes workers that sleep (idle past the spin window) so that they spin, ready, while the
 * caller does serial work before its first job: a worker woken by the job itself arrives
 * 10-100 us late after an idle pause (more on a hypervisor that descheduled its vCPU), and the
 * caller then runs the job's first chunks alone. Costs nothing while workers are awake. */
void lt__cpu_pool_warm(lt__cpu_pool *pool);
/* Runs fn over chunks of [0, n_tasks) on at most `threads` threads (the calling thread is one);
 * runs serially when the pool is NULL or busy with another caller's job. */
void lt__cpu_pool_run(lt__cpu_pool *pool, int threads, int64_t n_tasks, lt__cpu_range_fn fn,
                      void *arg);

#endif

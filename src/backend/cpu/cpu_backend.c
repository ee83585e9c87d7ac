/* SPDX-License-Identifier: MIT */
/* CPU backend: host memory through the context allocator; kernels in the other cpu_*.c files. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_optim.h"
#include "core/error.h"
#include "core/object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Below this many elements a kernel runs on the calling thread: waking workers costs more. */
#define PARALLEL_MIN_WORK 32768

/* Large tensors ask for transparent huge pages before the first touch: permutations and
 * strided reductions touch many pages at once, and 4 KiB pages make them TLB-bound. */
static void advise_huge_pages(void *mem, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (bytes < 2 * huge) return;
  uintptr_t lo = ((uintptr_t)mem + huge - 1) & ~(huge - 1);
  uintptr_t hi = ((uintptr_t)mem + bytes) & ~(huge - 1);
  if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advisory: failure is harmless */
#else
  (void)mem;
  (void)bytes;
#endif
}

static lt_status cpu_mem_alloc(lt_context *ctx, size_t bytes, void **mem) {
  *mem = lt__host_alloc(ctx, bytes);
  LT_RETURN_IF(*mem == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", bytes);
  advise_huge_pages(*mem, bytes);
  return LT_OK;
}

static void cpu_mem_free(lt_context *ctx, void *mem, size_t bytes) {
  lt__host_free(ctx, mem, bytes);
}

static lt_status cpu_mem_write(lt_context *ctx, void *mem, size_t offset, const void *src,
                               size_t bytes) {
  if (bytes) memcpy((char *)mem + offset, src, bytes);
  return LT_OK;
}

static lt_status cpu_mem_read(lt_context *ctx, void *mem, size_t offset, void *dst, size_t bytes) {
  if (bytes) memcpy(dst, (const char *)mem + offset, bytes);
  return LT_OK;
}

static lt_status cpu_synchronize(lt_context *ctx) { return LT_OK; }

static void cpu_release(lt_context *ctx) {
  lt__cpu_state *st = ctx->backend_state;
  if (st == NULL) return;
  lt__cpu_pool_destroy(st->pool);
  lt__cpu_scratch_release(ctx, &st->scratch);
  pthread_mutex_destroy(&st->pool_lock);
  lt__host_free(ctx, st, sizeof *st);
  ctx->backend_state = NULL;
}

/* The pool, built on first use for max(threads, default) threads and never rebuilt (another
 * thread may be running on it), so later requests for more threads are capped at its size. */
static lt__cpu_pool *pool_for(lt__cpu_state *st, int threads) {
  pthread_mutex_lock(&st->pool_lock);
  if (st->pool_threads == 0) {
    int n = threads > st->default_threads ? threads : st->default_threads;
    st->pool = lt__cpu_pool_create(n);
    st->pool_threads = st->pool ? n : 1;
  }
  lt__cpu_pool *pool = st->pool;
  pthread_mutex_unlock(&st->pool_lock);
  return pool;
}

const lt__cpu_isa *lt__cpu_isa_of(const lt_context *ctx) {
  const lt__cpu_state *st = ctx->backend_state;
  return st->isa;
}

/* Nonzero while this thread runs a task of a pool job that calls an engine itself: the engine
 * then takes its one-thread path (a nested job would run on this thread anyway). */
static _Thread_local int serial_depth;

void lt__cpu_serial_enter(void) { serial_depth++; }

void lt__cpu_serial_leave(void) { serial_depth--; }

int lt__cpu_threads(const lt_context *ctx) {
  const lt__cpu_state *st = ctx->backend_state;
  if (serial_depth > 0) return 1;
  return ctx->num_threads > 0 ? ctx->num_threads : st->default_threads;
}

void lt__cpu_parallel(lt_context *ctx, int64_t n_tasks, int64_t work, lt__cpu_range_fn fn,
                      void *arg) {
  lt__cpu_parallel_upto(ctx, lt__cpu_threads(ctx), n_tasks, work, fn, arg);
}

void lt__cpu_parallel_upto(lt_context *ctx, int max_threads, int64_t n_tasks, int64_t work,
                           lt__cpu_range_fn fn, void *arg) {
  lt__cpu_state *st = ctx->backend_state;
  int threads = lt__cpu_threads(ctx);
  if (max_threads < threads) threads = max_threads;
  int64_t worth = work / PARALLEL_MIN_WORK;
  if (worth < threads) threads = (int)(worth > 1 ? worth : 1);
  if (threads <= 1 || n_tasks <= 1) {
    if (n_tasks > 0) fn(arg, 0, n_tasks);
    return;
  }
  lt__cpu_pool_run(pool_for(st, threads), threads, n_tasks, fn, arg);
}

/* Parallel work is coming (the ops layer calls this as a plan starts): the pool's sleeping
 * workers start spinning while the plan does its serial first steps. */
static void cpu_warm(lt_context *ctx, int64_t work) {
  lt__cpu_state *st = ctx->backend_state;
  int threads = lt__cpu_threads(ctx);
  if (threads > 1 && work / PARALLEL_MIN_WORK >= 2) lt__cpu_pool_warm(pool_for(st, threads));
}

static const lt__backend cpu_backend = {
    .name = "cpu",
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .mem_write = cpu_mem_write,
    .mem_read = cpu_mem_read,
    .map = lt__cpu_map,
    .reduce = lt__cpu_reduce,
    .gemm = lt__cpu_gemm,
    .contract = lt__cpu_contract,
    .gemm_takes_any_strides = lt__cpu_gemm_takes_any_strides,
    .gemm_takes_16bit = lt__cpu_gemm_takes_16bit,
    .gemm_stores_16bit = lt__cpu_gemm_stores_16bit,
    .gemm_line_max_k = lt__cpu_gemm_line_max_k,
    .gemm_choose = lt__cpu_gemm_choose,
    .gemm_in_place = lt__cpu_gemm_in_place,
    .measured_caps = lt__cpu_measured_caps,
    .rows = lt__cpu_rows,
    .adam = lt__cpu_adam,
    .rng = lt__cpu_rng,
    .synchronize = cpu_synchronize,
    .warm = cpu_warm,
    .release = cpu_release,
    /* Placeholders for what measured_caps does not measure (direct_max_flops, call_seconds). */
    .caps = {LT__CAPS_UNMEASURED_COSTS, .host_memory = true},
    .index = &lt__cpu_index_ops,
};

static lt_status cpu_open(lt_context *ctx, const char *device) {
  (void)device;
  lt__cpu_state *st = lt__host_alloc(ctx, sizeof *st);
  LT_RETURN_IF(st == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory creating the CPU backend state");
  memset(st, 0, sizeof *st);
  pthread_mutex_init(&st->pool_lock, NULL);
  lt__cpu_scratch_init(&st->scratch);
  st->default_threads = lt__default_threads();
  st->isa = lt__cpu_isa_select();
  st->gemm_forced = lt__cpu_gemm_engine_from_env();
  snprintf(ctx->device, sizeof ctx->device, "cpu");
  ctx->backend = &cpu_backend;
  ctx->backend_state = st;
  return LT_OK;
}

static lt_status cpu_device_count(int *count) {
  *count = 1;
  return LT_OK;
}

static lt_status cpu_device_string(int index, lt_device_prop prop, const char **out) {
  (void)index;
  switch (prop) {
  case LT_DEVICE_ID: *out = "cpu"; return LT_OK;
#ifdef LT_HAVE_OPENBLAS
  case LT_DEVICE_NAME: *out = "host CPU (OpenBLAS + libtensor threads)"; return LT_OK;
#else
  case LT_DEVICE_NAME: *out = "host CPU (libtensor threads)"; return LT_OK;
#endif
  case LT_DEVICE_VENDOR: *out = "host"; return LT_OK;
  case LT_DEVICE_TYPE: *out = "cpu"; return LT_OK;
  default:
    return lt__error(LT_ERR_INVALID_ARGUMENT, "device property %d is not a string property",
                     (int)prop);
  }
}

static lt_status cpu_device_int(int index, lt_device_prop prop, int64_t *out) {
  (void)index;
  switch (prop) {
  case LT_DEVICE_GLOBAL_MEMORY: {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *out = (pages > 0 && page > 0) ? (int64_t)pages * page : 0;
    return LT_OK;
  }
  case LT_DEVICE_COMPUTE_UNITS: {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *out = n > 0 ? n : 1;
    return LT_OK;
  }
  case LT_DEVICE_FP64: *out = 1; return LT_OK;
  case LT_DEVICE_FP16: *out = 0; return LT_OK;
  default:
    return lt__error(LT_ERR_INVALID_ARGUMENT, "device property %d is not an integer property",
                     (int)prop);
  }
}

/* The CPU's entry in the backend registry (backend/registry.c). */
const lt__backend_desc lt__cpu_backend_desc = {
    .prefix = "cpu",
    .forms = "\"cpu\"",
    .device_count = cpu_device_count,
    .device_string = cpu_device_string,
    .device_int = cpu_device_int,
    .open = cpu_open,
};

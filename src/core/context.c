/* SPDX-License-Identifier: MIT */
/* Contexts: a device's backend, allocator hooks, thread count and plan cache. */
#include "core/error.h"
#include "core/object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The registry's backend whose prefix names `device` ("cpu", "opencl", "opencl:P:D"). */
static lt_status context_open_backend(lt_context *ctx, const char *device) {
  char forms[256] = "";
  int n = lt__backend_count();
  for (int i = 0; i < n; i++) {
    const lt__backend_desc *b = lt__backend_at(i);
    size_t len = strlen(b->prefix);
    if (strncmp(device, b->prefix, len) == 0 &&
        (device[len] == '\0' || (b->takes_suffix && device[len] == ':'))) {
      if (b->missing) return lt__error(LT_ERR_NO_DEVICE, "device '%s': %s", device, b->missing);
      return b->open(ctx, device);
    }
    size_t used = strlen(forms);
    snprintf(forms + used, sizeof forms - used, "%s%s", i == 0 ? "" : ", ", b->forms);
  }
  return lt__error(LT_ERR_NO_DEVICE, "unknown device '%s' (expected %s)", device, forms);
}

/* Whether a new context keeps freed large blocks for reuse. Never under AddressSanitizer, and
 * not with LT_BLOCK_CACHE=0 (the valgrind stage): a block held for reuse is memory the checkers
 * cannot see freed, so a use after free of it would go unreported. */
static bool block_cache_wanted(void) {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
  const char *v = getenv("LT_BLOCK_CACHE");
  return v == NULL || strcmp(v, "0") != 0;
#endif
}

lt_status lt_context_create_with_allocator(const char *device, lt_alloc_fn alloc,
                                           lt_free_fn free_fn, void *user, lt_context **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_RETURN_IF((alloc == NULL) != (free_fn == NULL), LT_ERR_INVALID_ARGUMENT,
               "lt_context_create_with_allocator: alloc and free must both be set or both NULL");
  if (device == NULL) {
    device = getenv("LT_DEVICE");
    if (device == NULL || device[0] == '\0') device = "cpu";
  }
  /* The context itself comes from the user allocator too, so failure injection reaches it. */
  lt_context *ctx = alloc ? alloc(sizeof *ctx, 64, user) : calloc(1, sizeof *ctx);
  LT_RETURN_IF(ctx == NULL, LT_ERR_OUT_OF_MEMORY, "lt_context_create: out of memory");
  memset(ctx, 0, sizeof *ctx);
  ctx->tag = LT__HANDLE_CONTEXT;
  atomic_init(&ctx->user_released, false);
  atomic_init(&ctx->refcount, 1);
  ctx->user_alloc = alloc;
  ctx->user_free = free_fn;
  ctx->user_data = user;
  ctx->block_cache_on = block_cache_wanted();
  pthread_mutex_init(&ctx->cache_lock, NULL);
  pthread_mutex_init(&ctx->block_lock, NULL);
  lt_status st = context_open_backend(ctx, device);
  if (st != LT_OK) {
    pthread_mutex_destroy(&ctx->cache_lock);
    pthread_mutex_destroy(&ctx->block_lock);
    if (free_fn)
      free_fn(ctx, sizeof *ctx, user);
    else
      free(ctx);
    return st;
  }
  *out = ctx;
  return LT_OK;
}

lt_status lt_context_create(const char *device, lt_context **out) {
  LT_CHECK_NULL(out, "out"); /* named as this call, not the one it forwards to */
  return lt_context_create_with_allocator(device, NULL, NULL, NULL, out);
}

lt_status lt__context_mismatch(const char *call, const char *a, const lt_context *ca, const char *b,
                               const lt_context *cb) {
  if (strcmp(ca->device, cb->device) != 0)
    return lt__error(LT_ERR_CONTEXT_MISMATCH, "%s: %s lives on '%s' but %s on '%s'", call, a,
                     ca->device, b, cb->device);
  return lt__error(LT_ERR_CONTEXT_MISMATCH,
                   "%s: %s and %s belong to two different '%s' contexts; the objects of one call "
                   "must share one context",
                   call, a, b, ca->device);
}

/* The block cache (lt_context.block_mem): blocks of at least BLOCK_MIN bytes, at most
 * BLOCK_TOTAL bytes held in all, the oldest given back first. Only exact sizes are reused, so
 * a loop over same-shaped tensors hits and nothing else pays for it. BLOCK_MIN is below glibc's
 * first mmap threshold and trim threshold (128 KiB): an MLP training step (784-256-10, batch
 * 128) allocates and frees a dozen blocks of 128 KiB to 784 KiB, which glibc gave back to the
 * kernel (trimmed or unmapped) and took again, page faults and all, in every step; 16 slots
 * hold a step's worth. */
#define BLOCK_MIN ((size_t)64 << 10)
#define BLOCK_TOTAL ((size_t)1 << 30)

static size_t block_round(size_t bytes) { return (bytes + 63) / 64 * 64; }

static bool block_cacheable(const lt_context *ctx, size_t rounded) {
  return ctx && ctx->block_cache_on && !ctx->user_alloc && rounded >= BLOCK_MIN &&
         rounded <= BLOCK_TOTAL;
}

static void *block_take(lt_context *ctx, size_t rounded) {
  void *p = NULL;
  pthread_mutex_lock(&ctx->block_lock);
  for (int i = 0; i < LT__BLOCK_CACHE_SLOTS && !p; i++)
    if (ctx->block_mem[i] && ctx->block_bytes[i] == rounded) {
      p = ctx->block_mem[i];
      ctx->block_mem[i] = NULL;
    }
  pthread_mutex_unlock(&ctx->block_lock);
  return p;
}

/* Keeps p for reuse, giving back the oldest blocks that no longer fit (outside the lock). */
static void block_put(lt_context *ctx, void *p, size_t rounded) {
  void *evicted[LT__BLOCK_CACHE_SLOTS];
  int n_evicted = 0;
  pthread_mutex_lock(&ctx->block_lock);
  size_t total = rounded;
  for (int i = 0; i < LT__BLOCK_CACHE_SLOTS; i++)
    if (ctx->block_mem[i]) total += ctx->block_bytes[i];
  /* Slot 0 is the oldest: evict from the front while over budget or out of slots. */
  while (ctx->block_mem[LT__BLOCK_CACHE_SLOTS - 1] || total > BLOCK_TOTAL) {
    if (ctx->block_mem[0]) {
      evicted[n_evicted++] = ctx->block_mem[0];
      total -= ctx->block_bytes[0];
    }
    memmove(&ctx->block_mem[0], &ctx->block_mem[1], sizeof(void *) * (LT__BLOCK_CACHE_SLOTS - 1));
    memmove(&ctx->block_bytes[0], &ctx->block_bytes[1],
            sizeof(size_t) * (LT__BLOCK_CACHE_SLOTS - 1));
    ctx->block_mem[LT__BLOCK_CACHE_SLOTS - 1] = NULL;
  }
  /* Packed to the front: the first empty slot after the last used one. */
  int slot = LT__BLOCK_CACHE_SLOTS - 1;
  while (slot > 0 && !ctx->block_mem[slot - 1])
    slot--;
  ctx->block_mem[slot] = p;
  ctx->block_bytes[slot] = rounded;
  pthread_mutex_unlock(&ctx->block_lock);
  for (int i = 0; i < n_evicted; i++)
    free(evicted[i]);
}

static void block_cache_flush(lt_context *ctx) {
  void *held[LT__BLOCK_CACHE_SLOTS];
  pthread_mutex_lock(&ctx->block_lock);
  for (int i = 0; i < LT__BLOCK_CACHE_SLOTS; i++) {
    held[i] = ctx->block_mem[i];
    ctx->block_mem[i] = NULL;
  }
  pthread_mutex_unlock(&ctx->block_lock);
  for (int i = 0; i < LT__BLOCK_CACHE_SLOTS; i++)
    free(held[i]);
}

void lt__context_retain(lt_context *ctx) { atomic_fetch_add(&ctx->refcount, 1); }

void lt__context_release(lt_context *ctx) {
  if (ctx == NULL || atomic_fetch_sub(&ctx->refcount, 1) != 1) return;
  if (ctx->plan_cache && ctx->plan_cache_destroy) ctx->plan_cache_destroy(ctx->plan_cache);
  if (ctx->backend && ctx->backend->release) ctx->backend->release(ctx);
  block_cache_flush(ctx);
  pthread_mutex_destroy(&ctx->cache_lock);
  pthread_mutex_destroy(&ctx->block_lock);
  lt__handle_kill(ctx, LT__HANDLE_CONTEXT);
  if (ctx->user_free)
    ctx->user_free(ctx, sizeof *ctx, ctx->user_data);
  else
    lt__handle_retire(ctx);
}

lt_status lt__check_context(const lt_context *ctx, const char *fn, const char *what) {
  LT_RETURN_IF(ctx == NULL, LT_ERR_NULL_POINTER, "%s: the context (%s) is NULL", fn, what);
  LT_TRY(lt__handle_check(ctx, LT__HANDLE_CONTEXT, fn, what));
  /* Tensors and plans keep the object alive after the user's destroy; the handle is gone. */
  LT_RETURN_IF(atomic_load(&ctx->user_released), LT_ERR_INVALID_HANDLE,
               "%s: %s (a context) was already destroyed", fn, what);
  return LT_OK;
}

void lt__handle_free(lt_context *ctx, void *h, size_t bytes) {
  if (ctx && ctx->user_free)
    ctx->user_free(h, bytes, ctx->user_data);
  else
    lt__handle_retire(h);
}

void lt_context_destroy(lt_context *ctx) {
  if (!lt__handle_may_destroy(ctx, LT__HANDLE_CONTEXT, "lt_context_destroy")) return;
  if (atomic_exchange(&ctx->user_released, true)) {
    lt__error(LT_ERR_INVALID_HANDLE, "lt_context_destroy: the context was already destroyed");
    return;
  }
  lt__context_release(ctx);
}

const char *lt_context_device(const lt_context *ctx) {
  return lt__check_context(ctx, "lt_context_device", "ctx") == LT_OK ? ctx->device : NULL;
}

lt_status lt_context_set_num_threads(lt_context *ctx, int threads) {
  LT_TRY(lt__check_context(ctx, "lt_context_set_num_threads", "ctx"));
  LT_RETURN_IF(threads < 0 || threads > 1024, LT_ERR_INVALID_ARGUMENT,
               "lt_context_set_num_threads: %d threads is outside [0, 1024]", threads);
  ctx->num_threads = threads;
  return LT_OK;
}

int lt__default_threads(void) {
  const char *env = getenv("LT_NUM_THREADS");
  if (env && *env) {
    long n = strtol(env, NULL, 10);
    if (n >= 1 && n <= 1024) return (int)n;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores >= 1 ? (int)(cores > 1024 ? 1024 : cores) : 1;
}

int lt_context_num_threads(const lt_context *ctx) {
  if (lt__check_context(ctx, "lt_context_num_threads", "ctx") != LT_OK) return 0;
  return ctx->num_threads > 0 ? ctx->num_threads : lt__default_threads();
}

lt_status lt_context_synchronize(lt_context *ctx) {
  LT_TRY(lt__check_context(ctx, "lt_context_synchronize", "ctx"));
  return ctx->backend->synchronize ? ctx->backend->synchronize(ctx) : LT_OK;
}

lt_status lt_context_clear_cache(lt_context *ctx) {
  LT_TRY(lt__check_context(ctx, "lt_context_clear_cache", "ctx"));
  pthread_mutex_lock(&ctx->cache_lock);
  if (ctx->plan_cache && ctx->plan_cache_destroy) ctx->plan_cache_destroy(ctx->plan_cache);
  ctx->plan_cache = NULL;
  pthread_mutex_unlock(&ctx->cache_lock);
  block_cache_flush(ctx);
  return LT_OK;
}

static void mem_count(lt_context *ctx, int64_t delta) {
  int64_t now = atomic_fetch_add(&ctx->mem_in_use, delta) + delta;
  int64_t peak = atomic_load(&ctx->mem_peak);
  while (now > peak && !atomic_compare_exchange_weak(&ctx->mem_peak, &peak, now)) {
  }
}

static void *host_alloc_raw(lt_context *ctx, size_t bytes) {
  if (ctx && ctx->user_alloc) return ctx->user_alloc(bytes, 64, ctx->user_data);
  /* Small requests always get their class's size, so that any of them can join the lists. */
  size_t small = lt__small_block_bytes(bytes);
  if (small) {
    void *p = ctx && ctx->block_cache_on ? lt__small_block_take(small) : NULL;
    return p ? p : aligned_alloc(64, small);
  }
  size_t rounded = block_round(bytes);
  if (rounded < bytes) return NULL;
  if (block_cacheable(ctx, rounded)) {
    void *p = block_take(ctx, rounded);
    if (p) return p;
  }
  void *p = aligned_alloc(64, rounded);
  if (p == NULL && ctx) { /* the cached blocks may be what is missing */
    block_cache_flush(ctx);
    p = aligned_alloc(64, rounded);
  }
  return p;
}

void *lt__host_alloc(lt_context *ctx, size_t bytes) {
  if (bytes == 0) bytes = 1;
  void *p = host_alloc_raw(ctx, bytes);
  if (p && ctx) mem_count(ctx, (int64_t)bytes);
  return p;
}

lt_status lt__device_alloc(lt_context *ctx, size_t bytes, void **mem) {
  LT_TRY(ctx->backend->mem_alloc(ctx, bytes, mem));
  /* host-memory backends allocate through lt__host_alloc, counted there */
  if (!ctx->backend->caps.host_memory) mem_count(ctx, (int64_t)bytes);
  return LT_OK;
}

void lt__device_free(lt_context *ctx, void *mem, size_t bytes) {
  ctx->backend->mem_free(ctx, mem, bytes);
  if (!ctx->backend->caps.host_memory) mem_count(ctx, -(int64_t)bytes);
}

lt_status lt_context_memory(const lt_context *ctx, int64_t *in_use, int64_t *peak) {
  LT_TRY(lt__check_context(ctx, "lt_context_memory", "ctx"));
  lt_context *c = (lt_context *)ctx;
  if (in_use) *in_use = atomic_load(&c->mem_in_use);
  if (peak) *peak = atomic_load(&c->mem_peak);
  return LT_OK;
}

lt_status lt_context_reset_peak_memory(lt_context *ctx) {
  LT_TRY(lt__check_context(ctx, "lt_context_reset_peak_memory", "ctx"));
  atomic_store(&ctx->mem_peak, atomic_load(&ctx->mem_in_use));
  return LT_OK;
}

void lt__host_free(lt_context *ctx, void *ptr, size_t bytes) {
  if (ptr == NULL) return;
  if (bytes == 0) bytes = 1;
  if (ctx) mem_count(ctx, -(int64_t)bytes);
  size_t small = lt__small_block_bytes(bytes);
  if (ctx && ctx->user_free)
    ctx->user_free(ptr, bytes, ctx->user_data);
  else if (small && ctx && ctx->block_cache_on && lt__small_block_put(ptr, small))
    return;
  else if (block_cacheable(ctx, block_round(bytes)))
    block_put(ctx, ptr, block_round(bytes));
  else
    free(ptr);
}

void *lt__host_calloc(lt_context *ctx, size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  void *p = lt__host_alloc(ctx, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *lt__host_realloc(lt_context *ctx, void *ptr, size_t old_bytes, size_t new_bytes) {
  void *grown = lt__host_alloc(ctx, new_bytes);
  if (grown == NULL) return NULL;
  if (ptr) memcpy(grown, ptr, old_bytes < new_bytes ? old_bytes : new_bytes);
  lt__host_free(ctx, ptr, old_bytes);
  return grown;
}

/* SPDX-License-Identifier: MIT */
/* Per-context cache of one-shot einsum plans, keyed by the bytes of (expression, layouts,
 * dtypes, options). Thread safe: lookups and inserts hold ctx->cache_lock; plans are immutable,
 * so several threads may execute one at once. Entries in use when the cache is cleared are
 * destroyed by their last user. Cached plans hold no context reference (the cache lives
 * inside the context); the context's own teardown destroys them. The cache, its entries and
 * their keys come from the context's allocator. */
#include "core/error.h"
#include "einsum/einsum.h"

#include <stdlib.h>
#include <string.h>

/* Plans kept per context; the least recently used one goes first. */
#define CACHE_CAPACITY 256

typedef struct cache_entry {
  struct cache_entry *prev, *next;
  uint64_t hash;
  size_t key_len;
  unsigned char *key;
  lt_plan *plan;
  int users;     /* executions in flight (under the lock) */
  bool orphaned; /* removed from the cache while in use */
} cache_entry;

typedef struct plan_cache {
  lt_context *ctx;
  cache_entry *head, *tail; /* most recently used first */
  int count;
} plan_cache;

/* FNV-1a over 8-byte words (then the tail bytes): every one-shot call hashes its key (a few
 * hundred bytes), and byte by byte the chain of dependent multiplies cost ~0.3 us. */
static uint64_t hash_bytes(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, sizeof w);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

/* Destroys a cached plan; it holds no context reference of its own, so lend it one. */
static void entry_free(lt_context *ctx, cache_entry *e) {
  lt__context_retain(ctx);
  lt_plan_destroy(e->plan);
  lt__host_free(ctx, e->key, e->key_len);
  lt__host_free(ctx, e, sizeof *e);
}

static void unlink_entry(plan_cache *c, cache_entry *e) {
  if (e->prev)
    e->prev->next = e->next;
  else
    c->head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    c->tail = e->prev;
  e->prev = e->next = NULL;
  c->count--;
}

static void push_front(plan_cache *c, cache_entry *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head) c->head->prev = e;
  c->head = e;
  if (c->tail == NULL) c->tail = e;
  c->count++;
}

/* Removes every entry: idle ones now, busy ones when their last user lets go. Called with
 * the lock held, or from the context's teardown (refcount 0: the extra reference taken here
 * keeps entry_free from re-entering the teardown). */
static void plan_cache_destroy(void *p) {
  plan_cache *c = p;
  lt_context *ctx = c->ctx;
  lt__context_retain(ctx);
  while (c->head) {
    cache_entry *e = c->head;
    unlink_entry(c, e);
    if (e->users > 0)
      e->orphaned = true;
    else
      entry_free(ctx, e);
  }
  atomic_fetch_sub(&ctx->refcount, 1);
  lt__host_free(ctx, c, sizeof *c);
}

static cache_entry *find(plan_cache *c, uint64_t hash, const void *key, size_t len) {
  for (cache_entry *e = c->head; e; e = e->next)
    if (e->hash == hash && e->key_len == len && memcmp(e->key, key, len) == 0) return e;
  return NULL;
}

static plan_cache *cache_of(lt_context *ctx) {
  if (ctx->plan_cache == NULL) {
    plan_cache *c = lt__host_calloc(ctx, 1, sizeof *c);
    if (c == NULL) return NULL;
    c->ctx = ctx;
    ctx->plan_cache = c;
    ctx->plan_cache_destroy = plan_cache_destroy;
  }
  return ctx->plan_cache;
}

/* Takes a hit (or a fresh insert) for the caller: most recent, one more user. */
static cache_entry *use(plan_cache *c, cache_entry *e) {
  if (c->head != e) {
    unlink_entry(c, e);
    push_front(c, e);
  }
  e->users++;
  return e;
}

static void evict_idle(plan_cache *c) {
  for (cache_entry *e = c->tail; e && c->count > CACHE_CAPACITY;) {
    cache_entry *prev = e->prev;
    if (e->users == 0) {
      unlink_entry(c, e);
      entry_free(c->ctx, e);
    }
    e = prev;
  }
}

lt_status lt__plan_cache_acquire(lt_context *ctx, const void *key, size_t key_len,
                                 lt__plan_builder build, const void *arg, void **entry,
                                 const lt_plan **plan) {
  uint64_t h = hash_bytes(key, key_len);
  pthread_mutex_lock(&ctx->cache_lock);
  plan_cache *c = cache_of(ctx);
  cache_entry *e = c ? find(c, h, key, key_len) : NULL;
  if (e) use(c, e);
  pthread_mutex_unlock(&ctx->cache_lock);
  LT_RETURN_IF(c == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the plan cache");
  if (e == NULL) {
    /* Build outside the lock; if another thread inserted the same plan meanwhile, use its. */
    lt_plan *fresh;
    LT_TRY(build(arg, &fresh));
    cache_entry *n = lt__host_alloc(ctx, sizeof *n);
    unsigned char *k = lt__host_alloc(ctx, key_len);
    if (n == NULL || k == NULL) {
      lt__host_free(ctx, n, sizeof *n);
      lt__host_free(ctx, k, key_len);
      lt_plan_destroy(fresh);
      return lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the plan cache");
    }
    memcpy(k, key, key_len);
    *n = (cache_entry){.hash = h, .key_len = key_len, .key = k, .plan = fresh};
    lt__context_release(ctx); /* the cache's plans hold no context reference */
    pthread_mutex_lock(&ctx->cache_lock);
    c = cache_of(ctx);
    e = c ? find(c, h, key, key_len) : NULL;
    if (e) {
      use(c, e);
      entry_free(ctx, n);
    } else if (c) {
      push_front(c, n);
      e = use(c, n);
      evict_idle(c);
    } else {
      entry_free(ctx, n);
    }
    pthread_mutex_unlock(&ctx->cache_lock);
    LT_RETURN_IF(e == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the plan cache");
  }
  *entry = e;
  *plan = e->plan;
  return LT_OK;
}

void lt__plan_cache_release(lt_context *ctx, void *entry) {
  cache_entry *e = entry;
  pthread_mutex_lock(&ctx->cache_lock);
  bool orphan_done = --e->users == 0 && e->orphaned;
  pthread_mutex_unlock(&ctx->cache_lock);
  if (orphan_done) entry_free(ctx, e);
}

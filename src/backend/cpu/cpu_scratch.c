/* SPDX-License-Identifier: MIT */
/* A small cache of scratch buffers: take the smallest kept buffer that fits, else allocate;
 * give back into a free slot, else replace the smallest kept buffer if the new one is larger. */
#include "backend/cpu/cpu_scratch.h"
#include "backend/cpu/cpu.h"
#include "core/object.h"

void lt__cpu_scratch_init(lt__cpu_scratch *s) {
  pthread_mutex_init(&s->lock, NULL);
  for (int i = 0; i < LT__CPU_SCRATCH_SLOTS; i++)
    s->mem[i] = NULL, s->bytes[i] = 0;
}

void lt__cpu_scratch_release(lt_context *ctx, lt__cpu_scratch *s) {
  for (int i = 0; i < LT__CPU_SCRATCH_SLOTS; i++)
    if (s->mem[i]) lt__host_free(ctx, s->mem[i], s->bytes[i]);
  pthread_mutex_destroy(&s->lock);
}

static lt__cpu_scratch *scratch_of(lt_context *ctx) {
  return &((lt__cpu_state *)ctx->backend_state)->scratch;
}

void *lt__cpu_scratch_take(lt_context *ctx, size_t bytes, size_t *got) {
  lt__cpu_scratch *s = scratch_of(ctx);
  int best = -1;
  pthread_mutex_lock(&s->lock);
  for (int i = 0; i < LT__CPU_SCRATCH_SLOTS; i++)
    if (s->mem[i] && s->bytes[i] >= bytes && (best < 0 || s->bytes[i] < s->bytes[best])) best = i;
  void *mem = NULL;
  if (best >= 0) {
    mem = s->mem[best], *got = s->bytes[best];
    s->mem[best] = NULL, s->bytes[best] = 0;
  }
  pthread_mutex_unlock(&s->lock);
  if (mem) return mem;
  *got = bytes > 0 ? bytes : 1;
  return lt__host_alloc(ctx, *got);
}

void lt__cpu_scratch_give(lt_context *ctx, void *mem, size_t bytes) {
  if (mem == NULL) return;
  lt__cpu_scratch *s = scratch_of(ctx);
  pthread_mutex_lock(&s->lock);
  int slot = -1; /* an empty slot, else the one holding the smallest buffer */
  for (int i = 0; i < LT__CPU_SCRATCH_SLOTS && (slot < 0 || s->mem[slot] != NULL); i++)
    if (slot < 0 || s->mem[i] == NULL || s->bytes[i] < s->bytes[slot]) slot = i;
  if (s->mem[slot] != NULL && s->bytes[slot] >= bytes) slot = -1;
  void *evict = NULL;
  size_t evict_bytes = 0;
  if (slot >= 0) {
    evict = s->mem[slot], evict_bytes = s->bytes[slot];
    s->mem[slot] = mem, s->bytes[slot] = bytes;
  } else {
    evict = mem, evict_bytes = bytes;
  }
  pthread_mutex_unlock(&s->lock);
  if (evict) lt__host_free(ctx, evict, evict_bytes);
}

// SPDX-License-Identifier: MIT
/* Per-thread free lists of small 64-byte-aligned host blocks (lt__host_alloc's fast path).
 *
 * A one-shot call on a small tensor allocates and frees a dozen small blocks (tensor and
 * storage objects, the plan, its layouts and kernels' state, the result's data); glibc's
 * aligned_alloc serves them through _int_memalign, and the mix of sizes makes free consolidate
 * its fast bins, which together cost about a fifth of such a call. Blocks here come in
 * power-of-two classes from 64 B to 8 KiB; each thread keeps up to SMALL_KEEP freed blocks per
 * class without a lock, and gives them back to the C library when it exits. A block freed on
 * another thread than the one that allocated it simply joins that thread's lists. */
#include <pthread.h>
#include <stdlib.h>

#include "object.h"

#define SMALL_CLASSES 8 /* 64 B << 0 .. 64 B << 7 = 8 KiB */
#define SMALL_KEEP 32

typedef struct small_lists {
  void *head[SMALL_CLASSES]; /* a freed block's first word links to the next */
  int count[SMALL_CLASSES];
} small_lists;

static pthread_key_t lists_key;
static pthread_once_t lists_once = PTHREAD_ONCE_INIT;
static bool key_ok;
static _Thread_local small_lists *lists;

static void release_lists(void *p) {
  small_lists *l = p;
  for (int c = 0; c < SMALL_CLASSES; c++)
    while (l->head[c]) {
      void *next = *(void **)l->head[c];
      free(l->head[c]);
      l->head[c] = next;
    }
  free(l);
  lists = NULL;
}

static void make_key(void) { key_ok = pthread_key_create(&lists_key, release_lists) == 0; }

/* This thread's lists, made on first use (NULL when they cannot be: then nothing is kept). */
static small_lists *my_lists(void) {
  if (lists) return lists;
  pthread_once(&lists_once, make_key);
  if (!key_ok) return NULL;
  small_lists *l = calloc(1, sizeof *l);
  if (l && pthread_setspecific(lists_key, l) != 0) {
    free(l);
    l = NULL;
  }
  return lists = l;
}

static int class_of(size_t bytes) {
  int c = 0;
  while (c < SMALL_CLASSES && ((size_t)64 << c) < bytes)
    c++;
  return c < SMALL_CLASSES ? c : -1;
}

size_t lt__small_block_bytes(size_t bytes) {
  int c = class_of(bytes);
  return c < 0 ? 0 : (size_t)64 << c;
}

void *lt__small_block_take(size_t class_bytes) {
  small_lists *l = lists; /* none yet: nothing was freed on this thread */
  int c = class_of(class_bytes);
  if (l == NULL || c < 0 || l->head[c] == NULL) return NULL;
  void *p = l->head[c];
  l->head[c] = *(void **)p;
  l->count[c]--;
  return p;
}

bool lt__small_block_put(void *p, size_t class_bytes) {
  int c = class_of(class_bytes);
  small_lists *l = c < 0 ? NULL : my_lists();
  if (l == NULL || l->count[c] >= SMALL_KEEP) return false;
  *(void **)p = l->head[c];
  l->head[c] = p;
  l->count[c]++;
  return true;
}

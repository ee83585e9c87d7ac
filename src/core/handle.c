/* SPDX-License-Identifier: MIT */
/* Handle tags and the quarantine of destroyed handles (see handle.h for why). */
#include "core/handle.h"
#include "core/error.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic(void *) quarantine[LT__HANDLE_QUARANTINE];
static atomic_uint quarantine_next;

static uint32_t read_tag(const void *h) {
  uint32_t tag;
  memcpy(&tag, h, sizeof tag);
  return tag;
}

/* The kind's noun (every one takes "a"), or NULL for a tag that is no kind's. */
static const char *kind_name(uint32_t tag) {
  switch (tag) {
  case LT__HANDLE_CONTEXT: return "context";
  case LT__HANDLE_TENSOR: return "tensor";
  case LT__HANDLE_PLAN: return "plan";
  case LT__HANDLE_PLAN_OPTIONS: return "plan options object";
  case LT__HANDLE_RNG: return "random generator";
  case LT__HANDLE_TAPE: return "tape";
  case LT__HANDLE_OPTIMIZER: return "optimizer";
  case LT__HANDLE_H5_FILE: return "HDF5 file";
  default: return NULL;
  }
}

/* The message for a handle that is not a live `kind`; `who` names the argument ("lt_add: a"). */
static lt_status invalid(const void *h, lt__handle_kind kind, const char *who) {
  uint32_t tag = read_tag(h);
  const char *want = kind_name(kind);
  if (tag == LT__HANDLE_DEAD(kind))
    return lt__error(LT_ERR_INVALID_HANDLE, "%s (a %s) was already destroyed", who, want);
  const char *other = kind_name(tag);
  if (other)
    return lt__error(LT_ERR_INVALID_HANDLE, "%s is a %s handle, not a %s", who, other, want);
  const char *dead = kind_name(LT__HANDLE_DEAD(tag));
  if (dead)
    return lt__error(LT_ERR_INVALID_HANDLE, "%s is a destroyed %s handle, not a %s", who, dead,
                     want);
  return lt__error(LT_ERR_INVALID_HANDLE,
                   "%s is not a %s handle (a stray pointer, or one destroyed long ago)", who, want);
}

lt_status lt__handle_check(const void *h, lt__handle_kind kind, const char *fn, const char *what) {
  if (h != NULL && read_tag(h) == (uint32_t)kind) return LT_OK;
  char who[160];
  snprintf(who, sizeof who, "%s%s%s", fn, *fn ? ": " : "", what);
  if (h == NULL) return lt__error(LT_ERR_NULL_POINTER, "%s is NULL", who);
  return invalid(h, kind, who);
}

void lt__handle_kill(void *h, lt__handle_kind kind) {
  uint32_t dead = LT__HANDLE_DEAD(kind);
  memcpy(h, &dead, sizeof dead);
}

void lt__handle_retire(void *h) {
  unsigned slot = atomic_fetch_add(&quarantine_next, 1) % LT__HANDLE_QUARANTINE;
  free(atomic_exchange(&quarantine[slot], h));
}

bool lt__handle_may_destroy(const void *h, lt__handle_kind kind, const char *fn) {
  if (h == NULL || read_tag(h) == (uint32_t)kind) return h != NULL;
  char who[128];
  snprintf(who, sizeof who, "%s: the handle", fn);
  invalid(h, kind, who);
  return false;
}

/* Leaves nothing behind for leak checkers when the library is unloaded or the program ends. */
__attribute__((destructor)) static void drain_quarantine(void) {
  for (int i = 0; i < LT__HANDLE_QUARANTINE; i++)
    free(atomic_exchange(&quarantine[i], NULL));
}

/* SPDX-License-Identifier: MIT */
/* Handle tags: every opaque handle (context, tensor, plan, plan options) starts with a tag
 * that names its type while it lives and a "destroyed" value afterwards, so that a stale,
 * doubly destroyed or wrong-type handle is refused with LT_ERR_INVALID_HANDLE instead of being
 * dereferenced as whatever its memory holds now.
 *
 * Why a quarantine: reading the tag of freed memory is itself undefined (and glibc's free
 * overwrites the first bytes of a block), so handles freed through the default allocator are
 * kept, tagged dead, in a small ring and only returned to malloc when pushed out by later
 * destroys (or when the library is unloaded). A handle destroyed within the last
 * LT__HANDLE_QUARANTINE destroys is therefore always recognised as destroyed; an older one is
 * recognised only while its memory has not been reused. Handles of a context with a user
 * allocator go back to that allocator at once (its owner may tear it down after the context):
 * their tags are cleared first, which catches the same mistakes while the user's allocator has
 * not reused the block. */
#ifndef LT_CORE_HANDLE_H
#define LT_CORE_HANDLE_H

#include "tensor.h"

#include <stdint.h>
#include <string.h>

/* Tags are ASCII-ish constants so that a core dump shows which object a pointer was. */
typedef enum lt__handle_kind {
  LT__HANDLE_CONTEXT = 0x4c544358,      /* "LTCX" */
  LT__HANDLE_TENSOR = 0x4c545453,       /* "LTTS" */
  LT__HANDLE_PLAN = 0x4c54504c,         /* "LTPL" */
  LT__HANDLE_PLAN_OPTIONS = 0x4c54504f, /* "LTPO" */
  LT__HANDLE_RNG = 0x4c545247,          /* "LTRG" */
  LT__HANDLE_TAPE = 0x4c545450,         /* "LTTP" (autograd) */
  LT__HANDLE_OPTIMIZER = 0x4c544f50,    /* "LTOP" (autograd) */
  LT__HANDLE_H5_FILE = 0x4c544835,      /* "LTH5" (io: lt_h5_file) */
} lt__handle_kind;

/* What a destroyed handle's tag is set to: the live tag with its top byte replaced, so that the
 * message can still say which kind of object it was. */
#define LT__HANDLE_DEAD(kind) ((uint32_t)(kind) ^ 0xdd000000u)

#define LT__HANDLE_QUARANTINE 256

/* LT_OK if `h` points at a live handle of `kind`; LT_ERR_NULL_POINTER for NULL and
 * LT_ERR_INVALID_HANDLE (destroyed, another kind of handle, or not a libtensor handle)
 * otherwise, with a message naming `fn` and `what` ("lt_add", "a"). `h` must point at readable
 * memory of at least 4 bytes unless it is NULL (the header states what stays undefined). With
 * fn "" the message names `what` alone. */
lt_status lt__handle_check(const void *h, lt__handle_kind kind, const char *fn, const char *what);

/* True if h is a live handle of kind (no message): the fast path of every check (inline: plan
 * execution checks several handles per call). */
static inline bool lt__handle_live(const void *h, lt__handle_kind kind) {
  uint32_t tag;
  if (h == NULL) return false;
  memcpy(&tag, h, sizeof tag);
  return tag == (uint32_t)kind;
}

/* Marks a handle destroyed (its tag becomes LT__HANDLE_DEAD(kind)). */
void lt__handle_kill(void *h, lt__handle_kind kind);

/* Frees a killed handle block that came from the default allocator (lt__host_alloc without a
 * user allocator, or malloc): it goes into the quarantine ring, and the block it displaces, if
 * any, is freed. */
void lt__handle_retire(void *h);

/* Guards a void destroy: true if `h` is a live handle of `kind` and may be destroyed; for
 * anything else (a second destroy, a wrong type) it records LT_ERR_INVALID_HANDLE's message in
 * lt_last_error() and returns false, and the destroy does nothing. */
bool lt__handle_may_destroy(const void *h, lt__handle_kind kind, const char *fn);

#endif

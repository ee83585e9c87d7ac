/* SPDX-License-Identifier: MIT */
/* Internal error reporting: statuses are raised where the cause is known, forwarded unchanged. */
#ifndef LT_CORE_ERROR_H
#define LT_CORE_ERROR_H

#include "tensor.h"

/* Records `fmt` as this thread's last error and returns `status`. */
lt_status lt__error(lt_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current thread's message with "prefix: " (context for a forwarded error). */
void lt__error_prefix(const char *prefix);
/* Replaces the message's leading "from: " with "to: ", for a public function whose failure
 * came from another public function it called (the caller never called that one). */
void lt__error_rename(const char *from, const char *to);

#define LT_RETURN_IF(cond, status, ...)                                                            \
  do {                                                                                             \
    if (cond) return lt__error((status), __VA_ARGS__);                                             \
  } while (0)

#define LT_TRY(call)                                                                               \
  do {                                                                                             \
    lt_status lt__try_status = (call);                                                             \
    if (lt__try_status != LT_OK) return lt__try_status;                                            \
  } while (0)

/* Like LT_TRY for a shared check whose message does not know the public call: names it. */
#define LT_TRY_PREFIXED(call, prefix)                                                              \
  do {                                                                                             \
    lt_status lt__try_status = (call);                                                             \
    if (lt__try_status != LT_OK) {                                                                 \
      lt__error_prefix(prefix);                                                                    \
      return lt__try_status;                                                                       \
    }                                                                                              \
  } while (0)

/* Like LT_TRY but jumps to a cleanup label with the status stored in `st`. */
#define LT_TRY_GOTO(st, call, label)                                                               \
  do {                                                                                             \
    (st) = (call);                                                                                 \
    if ((st) != LT_OK) goto label;                                                                 \
  } while (0)

#define LT_CHECK_NULL(ptr, what)                                                                   \
  LT_RETURN_IF((ptr) == NULL, LT_ERR_NULL_POINTER, "%s: %s is NULL", __func__, what)
/* The same for helpers shared by several public functions: their own name would mislead, so the
 * message names the argument under the given prefix ("einsum", ...) or alone (prefix ""). */
#define LT_CHECK_ARG_NULL(ptr, prefix, what)                                                       \
  LT_RETURN_IF((ptr) == NULL, LT_ERR_NULL_POINTER, "%s%s%s is NULL", prefix,                       \
               *(prefix) ? ": " : "", what)

#endif

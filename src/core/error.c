/* SPDX-License-Identifier: MIT */
/* Status names and the thread-local last-error message. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[2048];

lt_status lt__error(lt_status status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, args);
  va_end(args);
  return status;
}

void lt__error_prefix(const char *prefix) {
  char old[sizeof last_error];
  memcpy(old, last_error, sizeof old);
  size_t n = strlen(prefix);
  if (n > sizeof last_error / 2) n = sizeof last_error / 2;
  memcpy(last_error, prefix, n);
  memcpy(last_error + n, ": ", 2);
  size_t rest = sizeof last_error - n - 3;
  strncpy(last_error + n + 2, old, rest);
  last_error[sizeof last_error - 1] = '\0';
}

void lt__error_rename(const char *from, const char *to) {
  size_t n = strlen(from);
  if (strncmp(last_error, from, n) != 0 || strncmp(last_error + n, ": ", 2) != 0) return;
  char rest[sizeof last_error];
  snprintf(rest, sizeof rest, "%s", last_error + n);
  snprintf(last_error, sizeof last_error, "%s%s", to, rest);
}

const char *lt_last_error(void) { return last_error; }

void lt_clear_error(void) { last_error[0] = '\0'; }

/* For libraries built on the public API (libtensor_mpi), whose failures must reach the same
 * lt_last_error() as the library's own. */
lt_status lt_set_last_error(lt_status status, const char *message) {
  return lt__error(status, "%s", message ? message : "");
}

const char *lt_status_string(lt_status status) {
  switch (status) {
#define LT_STATUS_NAME_CASE(name, value, text)                                                     \
  case name: return #name;
    LT_STATUS_TABLE(LT_STATUS_NAME_CASE)
#undef LT_STATUS_NAME_CASE
  }
  return "LT_UNKNOWN_STATUS";
}

#define LT_STR2(x) #x
#define LT_STR(x) LT_STR2(x)

const char *lt_version(void) {
  return LT_STR(LT_VERSION_MAJOR) "." LT_STR(LT_VERSION_MINOR) "." LT_STR(LT_VERSION_PATCH);
}

int lt_version_number(void) {
  return LT_VERSION_MAJOR * 10000 + LT_VERSION_MINOR * 100 + LT_VERSION_PATCH;
}

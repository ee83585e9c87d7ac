/* SPDX-License-Identifier: MIT */
/* Helpers shared by the verbs: help detection, one-line errors, shape printing, timing. */
#define _POSIX_C_SOURCE 200809L
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int tool_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  return 0;
}

int tool_fail(const char *verb, const char *what, lt_status status) {
  const char *msg = lt_last_error();
  fprintf(stderr, "tensor %s: %s: %s%s%s\n", verb, what, lt_status_string(status),
          msg[0] ? ": " : "", msg);
  return 1;
}

int tool_usage_error(const char *verb, const char *message) {
  fprintf(stderr, "tensor %s: %s (try `tensor %s --help`)\n", verb, message, verb);
  return 2;
}

void tool_print_dims(FILE *f, int rank, const int64_t *dims) {
  fputc('(', f);
  for (int i = 0; i < rank; i++)
    fprintf(f, "%s%lld", i ? ", " : "", (long long)dims[i]);
  fputs(rank == 1 ? ",)" : ")", f);
}

double tool_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool tool_write_file(const char *path, const char *data, size_t len) {
  struct stat st;
  bool exists = stat(path, &st) == 0;
  char temp[PATH_MAX];
  bool direct = exists && !S_ISREG(st.st_mode);
  if (!direct &&
      snprintf(temp, sizeof temp, "%s.tmp-%ld", path, (long)getpid()) >= (int)sizeof temp) {
    errno = ENAMETOOLONG;
    return false;
  }
  int fd = direct ? open(path, O_WRONLY | O_CLOEXEC)
                  : open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  bool ok = true;
  for (size_t done = 0; ok && done < len;) {
    ssize_t k = write(fd, data + done, len - done);
    if (k < 0 && errno == EINTR) continue;
    ok = k > 0;
    if (ok) done += (size_t)k;
  }
  int saved = errno;
  ok = close(fd) == 0 && ok;
  if (ok && !direct) ok = rename(temp, path) == 0;
  if (!ok) {
    saved = errno ? errno : saved;
    if (!direct) unlink(temp);
    errno = saved;
  }
  return ok;
}

/* Helpers shared by the verbs: help detection, one-line errors, shape printing, timing. */
#define _POSIX_C_SOURCE 200809L
#include "tool.h"

#include <string.h>
#include <time.h>

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

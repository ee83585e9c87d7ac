/* Shared declarations of the `tensor` tool's verbs and their small helpers. */
#ifndef LT_TOOL_H
#define LT_TOOL_H

#include "tensor.h"

#include <stdio.h>

typedef struct tool_verb {
  const char *name;
  const char *help;
  int (*run)(int argc, char **argv); /* argv[0] is the verb */
} tool_verb;

int tool_version(int argc, char **argv);
int tool_devices(int argc, char **argv);
int tool_info(int argc, char **argv);
int tool_demo(int argc, char **argv);
/* The demo's last step: a short training run (tool_demo_train.c). */
int tool_demo_train(lt_context *ctx);

/* True if argv asks for help (--help or -h anywhere). */
int tool_wants_help(int argc, char **argv);
/* Prints "tensor VERB: what: STATUS: message" on stderr; returns the exit code 1. */
int tool_fail(const char *verb, const char *what, lt_status status);
/* Prints "tensor VERB: message" on stderr (usage errors); returns the exit code 2. */
int tool_usage_error(const char *verb, const char *message);
/* Writes "(2, 3)" for a shape (or strides) of `rank` entries. */
void tool_print_dims(FILE *f, int rank, const int64_t *dims);
/* Monotonic wall-clock time in seconds. */
double tool_seconds(void);
/* Writes len bytes to path the way the library saves (a temporary beside a regular target,
 * renamed over it when complete; devices and FIFOs written in place, never removed): false with
 * errno set on failure, the old file intact. */
bool tool_write_file(const char *path, const char *data, size_t len);
int tool_einsum(int argc, char **argv);
int tool_bench(int argc, char **argv);

#endif

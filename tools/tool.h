/* Shared declarations of the `tensor` tool's verbs. */
#ifndef LT_TOOL_H
#define LT_TOOL_H

#include "tensor.h"

typedef struct tool_verb {
  const char *name;
  const char *help;
  int (*run)(int argc, char **argv); /* argv[0] is the verb */
} tool_verb;

int tool_version(int argc, char **argv);
int tool_einsum(int argc, char **argv);
int tool_bench(int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/* `tensor version`: library version. */
#include "tool.h"

int tool_version(int argc, char **argv) {
  if (tool_wants_help(argc, argv)) {
    printf("usage: tensor version\n\nPrints the version of the loaded libtensor.\n");
    return 0;
  }
  if (argc > 1) return tool_usage_error("version", "takes no arguments");
  printf("libtensor %s\n", lt_version());
  return 0;
}

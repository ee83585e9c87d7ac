/* `tensor version`: library version and build features. */
#include "tool.h"

#include <stdio.h>
#include <string.h>

int tool_version(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--help") == 0) {
    printf("usage: tensor version\n\nPrints the version of the loaded libtensor.\n");
    return 0;
  }
  printf("libtensor %s\n", lt_version());
  return 0;
}

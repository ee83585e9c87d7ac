/* SPDX-License-Identifier: MIT */
/* `tensor`: command-line front end of libtensor. Each verb lives in its own tool_*.c file. */
#include "tool.h"

#include <stdio.h>
#include <string.h>

static const tool_verb verbs[] = {
    {"version", "print the library version", tool_version},
    {"devices", "list the devices (CPU, OpenCL) and their properties", tool_devices},
    {"info", "dtype, shape, strides and min/max/mean of a .npy file or HDF5 dataset", tool_info},
    {"ls", "list the groups and datasets of an HDF5 file", tool_ls},
    {"demo", "a guided tour of the library on built-in data", tool_demo},
    {"einsum", "evaluate an einsum expression on .npy files and HDF5 datasets", tool_einsum},
    {"bench", "run the benchmarks and print their ratios to the machine's limits", tool_bench},
};

static void usage(FILE *f) {
  fprintf(f, "usage: tensor VERB [ARGS...]\n\nverbs:\n");
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
  fprintf(f, "\n`tensor VERB --help` describes a verb.\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
    return tool_version(1, argv + 1);
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (strcmp(argv[1], verbs[i].name) == 0) return verbs[i].run(argc - 1, argv + 1);
  fprintf(stderr, "tensor: unknown verb '%s' (try `tensor --help`)\n", argv[1]);
  return 2;
}

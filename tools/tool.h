/* SPDX-License-Identifier: MIT */
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

/* HDF5 (tool_h5.c). FILE.h5:/dataset arguments: true (file and dataset split out) when the
 * part before a ":/" is an HDF5 file or has an HDF5 suffix (.h5, .hdf5, .he5, .hdf). */
bool tool_h5_split(const char *arg, char *file, size_t cap, const char **dataset);
/* True if the file starts with HDF5's signature. */
bool tool_is_h5_file(const char *path);
/* Loads FILE.npy or FILE.h5:/dataset. */
lt_status tool_load(lt_context *ctx, const char *arg, lt_tensor **out);
/* Saves to FILE.npy or FILE.h5:/dataset (added to an existing HDF5 file, replacing a dataset
 * of that name; a new file is created). */
lt_status tool_save(const lt_tensor *t, const char *arg);
int tool_ls(int argc, char **argv);
/* `tensor info` of an HDF5 file (the listing) or FILE.h5:/dataset (description + statistics). */
int tool_info_h5(const char *arg, int (*statistics)(const lt_tensor *t));
int tool_bench(int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/* HDF5 in the `tensor` tool: FILE.h5:/dataset operands (load, save), `tensor ls FILE.h5`, and
 * `tensor info FILE.h5[:/path]`. */
#include "tool.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const unsigned char h5_magic[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* The signature stands at byte 0, or after a user block at 512, 1024, 2048, ... (HDF5's file
 * format: its superblock is searched at 0 and at every power of two from 512). */
bool tool_is_h5_file(const char *path) {
  unsigned char head[8];
  FILE *f = fopen(path, "rb");
  if (f == NULL) return false;
  bool yes = false;
  for (long at = 0; !yes && at >= 0 && at < (1L << 40); at = at ? 2 * at : 512) {
    if (fseek(f, at, SEEK_SET) != 0 || fread(head, 1, 8, f) != 8) break;
    yes = memcmp(head, h5_magic, 8) == 0;
  }
  fclose(f);
  return yes;
}

static bool has_h5_suffix(const char *path, size_t len) {
  static const char *suffixes[] = {".h5", ".hdf5", ".he5", ".hdf"};
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    size_t n = strlen(suffixes[i]);
    if (len >= n && strncmp(path + len - n, suffixes[i], n) == 0) return true;
  }
  return false;
}

bool tool_h5_split(const char *arg, char *file, size_t cap, const char **dataset) {
  const char *colon = strstr(arg, ":/");
  /* The last ":/" whose left side names an HDF5 file (file names may hold ":/" too). */
  for (const char *c = colon; c; c = strstr(c + 1, ":/")) {
    size_t len = (size_t)(c - arg);
    if (len + 1 > cap) break;
    memcpy(file, arg, len);
    file[len] = '\0';
    if (tool_is_h5_file(file) || has_h5_suffix(file, len)) {
      *dataset = c + 1;
      return true;
    }
  }
  return false;
}

lt_status tool_load(lt_context *ctx, const char *arg, lt_tensor **out) {
  char file[4096];
  const char *dataset;
  if (!tool_h5_split(arg, file, sizeof file, &dataset)) return lt_npy_load(ctx, arg, out);
  lt_h5_file *f = NULL;
  lt_status st = lt_h5_open(file, LT_H5_READ, &f);
  if (st == LT_OK) st = lt_h5_read(f, dataset, ctx, LT_DTYPE_INVALID, out);
  if (f) lt_h5_close(f);
  return st;
}

lt_status tool_save(const lt_tensor *t, const char *arg) {
  char file[4096];
  const char *dataset;
  if (!tool_h5_split(arg, file, sizeof file, &dataset)) return lt_npy_save(t, arg);
  lt_h5_file *f = NULL;
  /* An existing file gains (or replaces) the dataset, and one that is no HDF5 file is refused
   * by the open (never replaced); a new one is created atomically. */
  lt_status st = lt_h5_open(file, access(file, F_OK) == 0 ? LT_H5_READ_WRITE : LT_H5_CREATE, &f);
  if (st == LT_OK) st = lt_h5_write(f, dataset, t, NULL, 0, LT_H5_REPLACE);
  lt_status cst = f ? lt_h5_close(f) : LT_OK;
  return st != LT_OK ? st : cst;
}

/* Prints every object of the file with its description, one per line. */
static int list_file(const char *verb, const char *path) {
  lt_h5_file *f = NULL;
  lt_status st = lt_h5_open(path, LT_H5_READ, &f);
  if (st != LT_OK) return tool_fail(verb, "opening", st);
  size_t need = 0;
  char *text = NULL;
  st = lt_h5_list(f, NULL, 0, &need);
  if (st == LT_OK && (text = malloc(need)) == NULL) st = LT_ERR_OUT_OF_MEMORY;
  if (st == LT_OK) st = lt_h5_list(f, text, need, &need);
  int rc = 0;
  for (char *line = text, *next; st == LT_OK && line && *line; line = next) {
    next = strchr(line, '\n');
    *next++ = '\0';
    int kind = 0, rank = 0;
    int64_t shape[LT_MAX_RANK];
    char desc[512] = "";
    st = lt_h5_stat(f, line, &kind, NULL, &rank, shape, NULL, desc, sizeof desc);
    if (st != LT_OK) break;
    printf("%-30s ", line);
    if (kind == LT_H5_DATASET) {
      tool_print_dims(stdout, rank, shape);
      printf(" %s\n", desc);
    } else {
      printf("%s\n", desc);
    }
  }
  if (st != LT_OK) rc = tool_fail(verb, "listing", st);
  free(text);
  lt_h5_close(f);
  return rc;
}

int tool_ls(int argc, char **argv) {
  if (tool_wants_help(argc, argv)) {
    printf("usage: tensor ls FILE.h5\n\nLists the groups (ending in '/') and datasets of an HDF5 "
           "file: path, shape, dtype\nand byte order, chunking and filters.\n");
    return 0;
  }
  if (argc != 2) return tool_usage_error("ls", "expects exactly one FILE.h5 argument");
  return list_file("ls", argv[1]);
}

int tool_info_h5(const char *arg, int (*statistics)(const lt_tensor *t)) {
  char file[4096];
  const char *dataset;
  if (!tool_h5_split(arg, file, sizeof file, &dataset)) return list_file("info", arg);
  lt_h5_file *f = NULL;
  lt_context *ctx = NULL;
  lt_tensor *t = NULL;
  char desc[512] = "";
  lt_status st = lt_h5_open(file, LT_H5_READ, &f);
  if (st == LT_OK) st = lt_h5_stat(f, dataset, NULL, NULL, NULL, NULL, NULL, desc, sizeof desc);
  if (st == LT_OK) st = lt_context_create(NULL, &ctx);
  if (st == LT_OK) st = lt_h5_read(f, dataset, ctx, LT_DTYPE_INVALID, &t);
  lt_h5_close(f);
  int rc;
  if (st != LT_OK) {
    rc = tool_fail("info", "reading", st);
  } else {
    printf("file:    %s\ndataset: %s\nstored:  %s\n", file, dataset, desc);
    printf("dtype:   %s\nshape:   ", lt_dtype_name(lt_tensor_dtype(t)));
    tool_print_dims(stdout, lt_tensor_rank(t), lt_tensor_shape(t));
    printf("\nsize:    %lld elements, %zu bytes\n", (long long)lt_tensor_numel(t),
           lt_tensor_nbytes(t));
    rc = statistics(t);
  }
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  return rc;
}

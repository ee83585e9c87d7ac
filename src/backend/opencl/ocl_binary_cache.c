/* SPDX-License-Identifier: MIT */
/* Process-wide cache of program binaries, keyed by device, build options and a hash of the
 * full source text. Compiling OpenCL C from source costs tens to hundreds of milliseconds per
 * program (PoCL runs clang every time), and every context needs its own cl_program; rebuilding
 * from the cached binary skips the front end. Host memory only: no cl object outlives a context. */
#include "backend/opencl/ocl.h"

#include <stdlib.h>
#include <string.h>

typedef struct binary_entry {
  struct binary_entry *next;
  const lt__ocl_device *dev;
  uint64_t hash;
  size_t size;
  char *options;
  unsigned char *bytes;
} binary_entry;

static binary_entry *entries;
static pthread_mutex_t entries_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t lt__ocl_source_hash(const char *const *parts, int n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (int i = 0; i < n; i++)
    for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
      h = (h ^ *p) * 1099511628211ull;
  return h;
}

static binary_entry *find(const lt__ocl_device *dev, uint64_t hash, const char *options) {
  for (binary_entry *e = entries; e; e = e->next)
    if (e->dev == dev && e->hash == hash && strcmp(e->options, options) == 0) return e;
  return NULL;
}

cl_program lt__ocl_program_from_cache(lt__ocl_state *st, uint64_t hash, const char *options) {
  pthread_mutex_lock(&entries_lock);
  binary_entry *e = find(st->dev, hash, options);
  cl_program p = NULL;
  if (e) {
    const unsigned char *bin = e->bytes;
    cl_int err, status;
    p = clCreateProgramWithBinary(st->context, 1, &st->dev->device, &e->size, &bin, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS) {
      if (p) clReleaseProgram(p);
      p = NULL;
    }
  }
  pthread_mutex_unlock(&entries_lock);
  if (p && clBuildProgram(p, 1, &st->dev->device, options, NULL, NULL) != CL_SUCCESS) {
    clReleaseProgram(p); /* a stale binary: the caller builds from source */
    p = NULL;
  }
  return p;
}

void lt__ocl_program_to_cache(lt__ocl_state *st, cl_program p, uint64_t hash, const char *options) {
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return;
  binary_entry *e = calloc(1, sizeof *e);
  if (e) {
    e->bytes = malloc(size);
    e->options = strdup(options);
  }
  unsigned char *bin = e ? e->bytes : NULL;
  if (!e || !e->bytes || !e->options ||
      clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
    if (e) {
      free(e->bytes);
      free(e->options);
    }
    free(e);
    return; /* caching is an optimisation only */
  }
  e->dev = st->dev;
  e->hash = hash;
  e->size = size;
  pthread_mutex_lock(&entries_lock);
  if (find(st->dev, hash, options)) {
    free(e->bytes);
    free(e->options);
    free(e);
  } else {
    e->next = entries;
    entries = e;
  }
  pthread_mutex_unlock(&entries_lock);
}

/* SPDX-License-Identifier: MIT */
/* OpenCL C sources embedded at build time from kernels/ (cmake/EmbedKernels.cmake). */
#ifndef LT_OPENCL_KERNEL_SOURCES_H
#define LT_OPENCL_KERNEL_SOURCES_H

#include <stddef.h>

typedef struct lt__kernel_source {
  const char *name; /* file name in kernels/, e.g. "map.cl" */
  const char *text;
  size_t size;
} lt__kernel_source;

/* Terminated by an entry with name == NULL. */
extern const lt__kernel_source lt__kernel_sources[];

#endif

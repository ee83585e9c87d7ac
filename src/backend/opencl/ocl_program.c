/* SPDX-License-Identifier: MIT */
/* Kernel programs: sources from the embedded copy of kernels/ (or from $LT_KERNEL_DIR while
 * developing kernels), specialised by -D options, built lazily and cached per context by
 * (file, kernel, options). kernels/common.h is prepended to every file. */
#include "backend/opencl/kernel_sources.h"
#include "backend/opencl/ocl.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads `name` from $LT_KERNEL_DIR into a malloc'd string. */
static lt_status read_kernel_file(const char *dir, const char *name, char **out) {
  char path[4096];
  LT_RETURN_IF(snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path, LT_ERR_IO,
               "LT_KERNEL_DIR: path of %s is too long", name);
  FILE *f = fopen(path, "rb");
  LT_RETURN_IF(f == NULL, LT_ERR_IO, "LT_KERNEL_DIR: cannot open %s", path);
  char *text = NULL;
  size_t len = 0;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) != NULL) {
      len = fread(text, 1, (size_t)n, f);
      if (len != (size_t)n) {
        free(text);
        text = NULL;
      }
    }
  }
  fclose(f);
  LT_RETURN_IF(text == NULL, LT_ERR_IO, "LT_KERNEL_DIR: cannot read %s", path);
  text[len] = '\0';
  *out = text;
  return LT_OK;
}

/* The text of kernel file `name` (malloc'd copy). */
static lt_status kernel_text_one(const char *name, char **out) {
  const char *dir = getenv("LT_KERNEL_DIR");
  if (dir && *dir) return read_kernel_file(dir, name, out);
  for (const lt__kernel_source *k = lt__kernel_sources; k->name; k++)
    if (strcmp(k->name, name) == 0) {
      *out = malloc(k->size + 1);
      LT_RETURN_IF(*out == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory loading %s", name);
      memcpy(*out, k->text, k->size + 1);
      return LT_OK;
    }
  return lt__error(LT_ERR_INTERNAL, "kernel file %s is not embedded in the library", name);
}

/* `name` may join several kernel files with '+' ("philox.h+random.cl"): their texts are
 * concatenated in order, so a header shared with the C code (kernels/philox.h) is compiled
 * into the kernels that need it without an #include path on the device compiler. */
static lt_status kernel_text(const char *name, char **out) {
  const char *plus = strchr(name, '+');
  if (plus == NULL) return kernel_text_one(name, out);
  char first[64];
  size_t len = (size_t)(plus - name);
  LT_RETURN_IF(len >= sizeof first, LT_ERR_INTERNAL, "kernel file name %s is too long", name);
  memcpy(first, name, len);
  first[len] = '\0';
  char *a = NULL, *b = NULL;
  LT_TRY(kernel_text_one(first, &a));
  lt_status s = kernel_text(plus + 1, &b);
  char *joined = s == LT_OK ? malloc(strlen(a) + strlen(b) + 2) : NULL;
  if (s == LT_OK && joined == NULL)
    s = lt__error(LT_ERR_OUT_OF_MEMORY, "out of memory loading %s", name);
  if (joined) sprintf(joined, "%s\n%s", a, b);
  free(a);
  free(b);
  *out = joined;
  return s;
}

static lt_status build_log_error(lt__ocl_state *st, cl_program prog, cl_int err, const char *file,
                                 const char *options) {
  char log[1536] = "";
  size_t n = 0;
  if (clGetProgramBuildInfo(prog, st->dev->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &n) !=
      CL_SUCCESS) {
    /* A log longer than the buffer: fetch it whole and keep the head. */
    char *all = n ? malloc(n + 1) : NULL;
    if (all && clGetProgramBuildInfo(prog, st->dev->device, CL_PROGRAM_BUILD_LOG, n, all, NULL) ==
                   CL_SUCCESS) {
      all[n] = '\0';
      snprintf(log, sizeof log, "%s", all);
    }
    free(all);
  }
  return lt__error(err == CL_BUILD_PROGRAM_FAILURE ? LT_ERR_BUILD : LT_ERR_DEVICE,
                   "clBuildProgram: %s building %s with '%s'; build log:\n%s",
                   lt__cl_error_name(err), file, options, log);
}

static lt_status build(lt__ocl_state *st, const char *file, const char *kernel, const char *options,
                       lt__ocl_program *p) {
  char *common = NULL, *body = NULL;
  LT_TRY(kernel_text("common.h", &common));
  lt_status s = kernel_text(file, &body);
  if (s != LT_OK) {
    free(common);
    return s;
  }
  const char *parts[3] = {common, "\n", body};
  char opts[2048] = "";
  s = lt__ocl_append(opts, sizeof opts, "-cl-std=CL1.2 %s%s", st->fp64 ? "-DLT_FP64 " : "",
                     options);
  uint64_t hash = lt__ocl_source_hash(parts, 3);
  if (s == LT_OK) p->program = lt__ocl_program_from_cache(st, hash, opts);
  cl_int err = CL_SUCCESS;
  if (s == LT_OK && p->program == NULL) {
    p->program = clCreateProgramWithSource(st->context, 3, parts, NULL, &err);
    if (err != CL_SUCCESS) p->program = NULL;
    if (err == CL_SUCCESS) {
      err = clBuildProgram(p->program, 1, &st->dev->device, opts, NULL, NULL);
      if (err != CL_SUCCESS)
        s = build_log_error(st, p->program, err, file, opts);
      else
        lt__ocl_program_to_cache(st, p->program, hash, opts);
    } else {
      s = lt__cl_error(err, "clCreateProgramWithSource");
    }
  }
  free(common);
  free(body);
  if (s != LT_OK) return s;
  p->kernel = clCreateKernel(p->program, kernel, &err);
  if (err != CL_SUCCESS) p->kernel = NULL;
  LT_CL_TRY(err, "clCreateKernel");
  return LT_OK;
}

static void program_free(lt__ocl_program *p) {
  if (p->kernel) clReleaseKernel(p->kernel);
  if (p->program) clReleaseProgram(p->program);
  free(p->key);
  free(p);
}

/* Kernel sources, keys and cached programs use plain malloc, not the context's allocator: they
 * are device infrastructure (built once per context, kept for its lifetime, shared by every
 * plan), not per-call memory that failure injection needs to reach. */
lt_status lt__ocl_kernel(lt__ocl_state *st, const char *file, const char *kernel,
                         const char *options, cl_kernel *out) {
  size_t len = strlen(file) + strlen(kernel) + strlen(options) + 3;
  char *key = malloc(len);
  LT_RETURN_IF(key == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory building %s", file);
  snprintf(key, len, "%s\n%s\n%s", file, kernel, options);
  for (lt__ocl_program *p = st->programs; p; p = p->next)
    if (strcmp(p->key, key) == 0) {
      free(key);
      *out = p->kernel;
      return LT_OK;
    }
  lt__ocl_program *p = calloc(1, sizeof *p);
  if (p == NULL) {
    free(key);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "out of memory building %s", file);
  }
  p->key = key;
  lt_status s = build(st, file, kernel, options, p);
  if (s != LT_OK) {
    program_free(p);
    return s;
  }
  p->next = st->programs;
  st->programs = p;
  *out = p->kernel;
  return LT_OK;
}

void lt__ocl_programs_release(lt__ocl_state *st) {
  while (st->programs) {
    lt__ocl_program *next = st->programs->next;
    program_free(st->programs);
    st->programs = next;
  }
}

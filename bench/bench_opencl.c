/* SPDX-License-Identifier: MIT */
/* OpenCL device benchmark: the device's own limits measured in the same run (buffer copy
 * bandwidth through clEnqueueCopyBuffer, f32 multiply-add peak from a register-only kernel),
 * then libtensor's device kernels as ratios to them: copies and permutations (map steps),
 * reductions and batched GEMM (backend steps, exactly as the front end lowers to them).
 * Medians of several runs, each ended by lt_context_synchronize.
 *   bench_opencl [device] [--quick]      device: "opencl" (first GPU, else first device) or
 *                                        "opencl:P:D"; --quick: small sizes (smoke test) */
#define _POSIX_C_SOURCE 200809L
#include "bench_timing.h"
#include "core/object.h" /* white-box: reduce and gemm steps run directly */
#include "tensor.h"

#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 7

static void die(const char *what, const char *detail) {
  fprintf(stderr, "bench_opencl: %s: %s\n", what, detail);
  exit(1);
}

static void check(lt_status st, const char *what) {
  if (st != LT_OK) die(what, lt_last_error());
}

static void check_cl(cl_int err, const char *what) {
  if (err != CL_SUCCESS) {
    char code[32];
    snprintf(code, sizeof code, "CL error %d", (int)err);
    die(what, code);
  }
}

/* ---- the device's own limits, on a cl_context of our own ---- */

typedef struct device_limits {
  double copy_gbs;   /* bytes read + written per second / 1e9 */
  double fma_gflops; /* f32, 2 flops per multiply-add */
} device_limits;

static cl_device_id find_device(const char *id) {
  int p = -1, d = -1;
  if (sscanf(id, "opencl:%d:%d", &p, &d) != 2) die("device id", id);
  cl_platform_id platforms[16];
  cl_uint np = 0, nd = 0;
  check_cl(clGetPlatformIDs(16, platforms, &np), "clGetPlatformIDs");
  if ((cl_uint)p >= np) die("platform", id);
  cl_device_id devs[64];
  check_cl(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd), "clGetDeviceIDs");
  if ((cl_uint)d >= nd) die("device", id);
  return devs[d];
}

static const char *fma_source =
    "kernel void peak(global float *out, float a, float b) {\n"
    "  float x0 = get_global_id(0), x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;\n"
    "  float x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;\n"
    "  for (int i = 0; i < 256; i++) {\n"
    "    x0 = mad(x0, a, b); x1 = mad(x1, a, b); x2 = mad(x2, a, b); x3 = mad(x3, a, b);\n"
    "    x4 = mad(x4, a, b); x5 = mad(x5, a, b); x6 = mad(x6, a, b); x7 = mad(x7, a, b);\n"
    "  }\n"
    "  out[get_global_id(0)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n"
    "}\n";

static device_limits measure_limits(cl_device_id dev, size_t bytes, size_t fma_items) {
  device_limits lim;
  cl_int err;
  cl_context c = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  check_cl(err, "clCreateContext");
  cl_command_queue q = clCreateCommandQueue(c, dev, 0, &err);
  check_cl(err, "clCreateCommandQueue");
  cl_mem src = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &err);
  check_cl(err, "clCreateBuffer");
  cl_mem dst = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &err);
  check_cl(err, "clCreateBuffer");
  float zero = 0;
  check_cl(clEnqueueFillBuffer(q, src, &zero, sizeof zero, 0, bytes, 0, NULL, NULL), "fill");
  double t[RUNS];
  for (int r = -1; r < RUNS; r++) {
    double t0 = bench_now();
    check_cl(clEnqueueCopyBuffer(q, src, dst, 0, 0, bytes, 0, NULL, NULL), "clEnqueueCopyBuffer");
    check_cl(clFinish(q), "clFinish");
    if (r >= 0) t[r] = bench_now() - t0;
  }
  lim.copy_gbs = 2.0 * (double)bytes / bench_median(t, RUNS) / 1e9;

  cl_program p = clCreateProgramWithSource(c, 1, &fma_source, NULL, &err);
  check_cl(err, "clCreateProgramWithSource");
  check_cl(clBuildProgram(p, 1, &dev, NULL, NULL, NULL), "clBuildProgram");
  cl_kernel k = clCreateKernel(p, "peak", &err);
  check_cl(err, "clCreateKernel");
  cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, fma_items * sizeof(float), NULL, &err);
  check_cl(err, "clCreateBuffer");
  float a = 0.999f, b = 0.001f;
  check_cl(clSetKernelArg(k, 0, sizeof out, &out), "clSetKernelArg");
  check_cl(clSetKernelArg(k, 1, sizeof a, &a), "clSetKernelArg");
  check_cl(clSetKernelArg(k, 2, sizeof b, &b), "clSetKernelArg");
  for (int r = -1; r < RUNS; r++) {
    double t0 = bench_now();
    check_cl(clEnqueueNDRangeKernel(q, k, 1, NULL, &fma_items, NULL, 0, NULL, NULL), "launch");
    check_cl(clFinish(q), "clFinish");
    if (r >= 0) t[r] = bench_now() - t0;
  }
  lim.fma_gflops = 2.0 * 8 * 256 * (double)fma_items / bench_median(t, RUNS) / 1e9;
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseMemObject(src);
  clReleaseMemObject(dst);
  clReleaseCommandQueue(q);
  clReleaseContext(c);
  return lim;
}

/* ---- libtensor on the device ---- */

typedef void (*bench_fn)(lt_context *ctx, void *arg);

static double time_median(lt_context *ctx, bench_fn fn, void *arg) {
  double t[RUNS];
  fn(ctx, arg); /* warm-up: builds the program */
  check(lt_context_synchronize(ctx), "synchronize");
  for (int r = 0; r < RUNS; r++) {
    double t0 = bench_now();
    fn(ctx, arg);
    check(lt_context_synchronize(ctx), "synchronize");
    t[r] = bench_now() - t0;
  }
  return bench_median(t, RUNS);
}

static void run_contiguous(lt_context *ctx, void *arg) {
  lt_tensor *out = NULL;
  check(lt_tensor_contiguous(arg, LT_DTYPE_INVALID, &out), "lt_tensor_contiguous");
  lt_tensor_destroy(out);
}

typedef struct reduce_arg {
  lt__reduce_step step;
} reduce_arg;

static void run_reduce(lt_context *ctx, void *arg) {
  check(ctx->backend->reduce(ctx, &((reduce_arg *)arg)->step), "reduce");
}

static void run_gemm(lt_context *ctx, void *arg) { check(ctx->backend->gemm(ctx, arg), "gemm"); }

static lt_tensor *device_tensor(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape) {
  lt_tensor *t = NULL;
  check(lt_tensor_full(ctx, dtype, rank, shape, 0.5, &t), "lt_tensor_full");
  return t;
}

static void report_bw(const char *what, double bytes, double seconds, const device_limits *lim) {
  double gbs = bytes / seconds / 1e9;
  printf("  %-44s %10.2f GB/s   %5.2f x copy\n", what, gbs, gbs / lim->copy_gbs);
}

static void bench_permutations(lt_context *ctx, int64_t n, const device_limits *lim) {
  int64_t side = (int64_t)sqrt((double)n);
  int64_t shape2[2] = {side, side};
  lt_tensor *a = device_tensor(ctx, LT_F32, 2, shape2), *v = NULL;
  double bytes = 2.0 * (double)(side * side) * 4;
  report_bw("copy (contiguous f32, map step)", bytes, time_median(ctx, run_contiguous, a), lim);
  check(lt_view_transpose(a, 0, 1, &v), "transpose");
  char what[64];
  snprintf(what, sizeof what, "transpose %lldx%lld f32 (tiled)", (long long)side, (long long)side);
  report_bw(what, bytes, time_median(ctx, run_contiguous, v), lim);
  lt_tensor_destroy(v);
  lt_tensor_destroy(a);
  int64_t shape3[3] = {64, 64, n / 4096};
  a = device_tensor(ctx, LT_F32, 3, shape3);
  check(lt_view_permute(a, (int[]){2, 0, 1}, &v), "permute");
  snprintf(what, sizeof what, "permute (2,0,1) of 64x64x%lld f32", (long long)shape3[2]);
  report_bw(what, 2.0 * (double)lt_tensor_numel(a) * 4, time_median(ctx, run_contiguous, v), lim);
  lt_tensor_destroy(v);
  lt_tensor_destroy(a);
}

/* Sums of an (rows x cols) f32 matrix: over everything, along rows, along columns. */
static void bench_reductions(lt_context *ctx, int64_t n, const device_limits *lim) {
  int64_t cols = 4096, rows = n / cols, shape[2] = {rows, cols};
  lt_tensor *a = device_tensor(ctx, LT_F32, 2, shape);
  lt_tensor *out = device_tensor(ctx, LT_F32, 1, rows > cols ? &rows : &cols);
  const char *names[3] = {"sum of all (two passes)", "row sums (reduce last axis)",
                          "column sums (reduce first axis)"};
  for (int kind = 0; kind < 3; kind++) {
    reduce_arg r;
    memset(&r, 0, sizeof r);
    lt__reduce_step *s = &r.step;
    s->in.mem = a->storage->mem;
    s->in.dtype = LT_F32;
    s->out.mem = out->storage->mem;
    s->out.dtype = LT_F32;
    s->op = LT_REDUCE_SUM;
    s->alpha = 1;
    s->compute = LT_F32;
    if (kind == 0) {
      s->red_rank = 2;
      memcpy(s->red_shape, shape, sizeof shape);
      s->in_red_strides[0] = cols;
      s->in_red_strides[1] = 1;
    } else {
      s->rank = s->red_rank = 1;
      s->shape[0] = kind == 1 ? rows : cols;
      s->red_shape[0] = kind == 1 ? cols : rows;
      s->in.strides[0] = kind == 1 ? cols : 1;
      s->in_red_strides[0] = kind == 1 ? 1 : cols;
      s->out.strides[0] = 1;
    }
    report_bw(names[kind], (double)n * 4, time_median(ctx, run_reduce, &r), lim);
  }
  lt_tensor_destroy(out);
  lt_tensor_destroy(a);
}

static void bench_gemm(lt_context *ctx, lt_dtype dtype, int64_t n, int64_t batch,
                       const device_limits *lim) {
  int64_t shape[3] = {batch, n, n};
  lt_tensor *a = device_tensor(ctx, dtype, 3, shape), *b = device_tensor(ctx, dtype, 3, shape);
  lt_tensor *c = device_tensor(ctx, dtype, 3, shape);
  lt__gemm_step s;
  memset(&s, 0, sizeof s);
  s.dtype = dtype;
  s.m = s.n = s.k = n;
  s.batch_rank = 1;
  s.batch_shape[0] = batch;
  lt_tensor *x[3] = {a, b, c};
  lt__matrix *mx[3] = {&s.a, &s.b, &s.c};
  for (int j = 0; j < 3; j++) {
    mx[j]->mem = x[j]->storage->mem;
    mx[j]->rs = n;
    mx[j]->cs = 1;
    mx[j]->batch_strides[0] = n * n;
  }
  s.alpha = 1;
  s.beta = 0;
  double t = time_median(ctx, run_gemm, &s);
  double gflops = 2.0 * (double)(n * n) * (double)n * (double)batch / t / 1e9;
  char what[64];
  snprintf(what, sizeof what, "GEMM %s %lldx%lldx%lld, batch %lld", lt_dtype_name(dtype),
           (long long)n, (long long)n, (long long)n, (long long)batch);
  printf("  %-44s %10.2f GFLOP/s %5.2f x f32 FMA peak\n", what, gflops, gflops / lim->fma_gflops);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_tensor_destroy(c);
}

static void list_devices(void) {
  int count = 0;
  check(lt_device_count(&count), "lt_device_count");
  for (int i = 0; i < count; i++) {
    const char *id, *name, *type;
    int64_t mem, units, fp64;
    check(lt_device_string(i, LT_DEVICE_ID, &id), "device");
    check(lt_device_string(i, LT_DEVICE_NAME, &name), "device");
    check(lt_device_string(i, LT_DEVICE_TYPE, &type), "device");
    check(lt_device_int(i, LT_DEVICE_GLOBAL_MEMORY, &mem), "device");
    check(lt_device_int(i, LT_DEVICE_COMPUTE_UNITS, &units), "device");
    check(lt_device_int(i, LT_DEVICE_FP64, &fp64), "device");
    printf("  %-12s %-4s %3lld CUs %7.1f GiB fp64=%lld  %s\n", id, type, (long long)units,
           (double)mem / 1073741824.0, (long long)fp64, name);
  }
}

int main(int argc, char **argv) {
  const char *device = "opencl";
  int quick = 0;
  /* `tensor bench --quick` sets LT_BENCH_QUICK for every benchmark it runs. */
  const char *env_quick = getenv("LT_BENCH_QUICK");
  if (env_quick && *env_quick && strcmp(env_quick, "0") != 0) quick = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else
      device = argv[i];
  }
  printf("devices:\n");
  list_devices();
  lt_context *ctx = NULL;
  check(lt_context_create(device, &ctx), device);
  int64_t fp64 = 0;
  int count = 0, dev_index = -1;
  check(lt_device_count(&count), "lt_device_count");
  for (int i = 1; i < count; i++) {
    const char *id;
    if (lt_device_string(i, LT_DEVICE_ID, &id) == LT_OK && strcmp(id, lt_context_device(ctx)) == 0)
      dev_index = i;
  }
  if (dev_index > 0) lt_device_int(dev_index, LT_DEVICE_FP64, &fp64);
  /* Elements per operand: 64 Mi f32 (256 MiB) on a real device, 1 Mi for --quick. */
  int64_t n = quick ? (1 << 20) : (1 << 26);
  device_limits lim =
      measure_limits(find_device(lt_context_device(ctx)), (size_t)n * 4, quick ? 1 << 14 : 1 << 22);
  printf("\n%s, %lld MiB operands, medians of %d runs:\n", lt_context_device(ctx),
         (long long)(n * 4 >> 20), RUNS);
  printf("  %-44s %10.2f GB/s   (read + write)\n", "device copy (clEnqueueCopyBuffer)",
         lim.copy_gbs);
  printf("  %-44s %10.2f GFLOP/s\n", "device f32 multiply-add peak (register kernel)",
         lim.fma_gflops);
  bench_permutations(ctx, n, &lim);
  bench_reductions(ctx, n, &lim);
  bench_gemm(ctx, LT_F32, quick ? 256 : 4096, 1, &lim);
  bench_gemm(ctx, LT_F32, quick ? 64 : 256, quick ? 16 : 64, &lim);
  if (fp64) bench_gemm(ctx, LT_F64, quick ? 256 : 2048, 1, &lim);
  lt_context_destroy(ctx);
  return 0;
}

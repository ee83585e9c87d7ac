/* SPDX-License-Identifier: MIT */
/* Device memory: one cl_mem per storage; host transfers block, so the caller's buffer may be
 * reused as soon as they return. */
#include "backend/opencl/ocl.h"
#include "core/error.h"

lt_status lt__ocl_mem_alloc(lt_context *ctx, size_t bytes, void **mem) {
  lt__ocl_state *st = lt__ocl(ctx);
  *mem = NULL;
  LT_RETURN_IF((int64_t)bytes > st->dev->max_alloc, LT_ERR_OUT_OF_MEMORY,
               "%s: %zu bytes exceed the device's largest allocation (%lld bytes)", st->dev->id,
               bytes, (long long)st->dev->max_alloc);
  /* OpenCL refuses empty buffers; an empty tensor still needs a distinct handle. */
  size_t size = bytes ? bytes : 64;
  cl_int err;
  cl_mem m = clCreateBuffer(st->context, CL_MEM_READ_WRITE, size, NULL, &err);
  LT_CL_TRY(err, "clCreateBuffer");
  *mem = m;
  return LT_OK;
}

/* Released buffers a runtime may keep until the queue next finishes: PoCL held every one while
 * no call synchronised (a loop of x * x on 2 MB tensors that never read a result grew by 2 MB a
 * call, to gigabytes), so the queue is finished once this much has been released since. A
 * small buffer counts as a page. */
#define RELEASED_SYNC_BYTES ((size_t)64 << 20)
#define RELEASED_MIN_BYTES ((size_t)4096)

void lt__ocl_release(lt__ocl_state *st, cl_mem mem, size_t bytes) {
  if (!mem) return;
  clReleaseMemObject(mem);
  if (bytes < RELEASED_MIN_BYTES) bytes = RELEASED_MIN_BYTES;
  size_t before = atomic_fetch_add(&st->released, bytes);
  if (before < RELEASED_SYNC_BYTES && before + bytes >= RELEASED_SYNC_BYTES) {
    clFinish(st->queue);
    atomic_store(&st->released, 0);
  }
}

void lt__ocl_mem_free(lt_context *ctx, void *mem, size_t bytes) {
  /* The runtime defers the release until the queued kernels using it are done. */
  lt__ocl_release(lt__ocl(ctx), (cl_mem)mem, bytes);
}

lt_status lt__ocl_mem_write(lt_context *ctx, void *mem, size_t offset, const void *src,
                            size_t bytes) {
  if (bytes == 0) return LT_OK;
  lt__ocl_state *st = lt__ocl(ctx);
  cl_int err =
      clEnqueueWriteBuffer(st->queue, (cl_mem)mem, CL_TRUE, offset, bytes, src, 0, NULL, NULL);
  LT_CL_TRY(err, "clEnqueueWriteBuffer");
  return LT_OK;
}

lt_status lt__ocl_mem_read(lt_context *ctx, void *mem, size_t offset, void *dst, size_t bytes) {
  if (bytes == 0) return LT_OK;
  lt__ocl_state *st = lt__ocl(ctx);
  cl_int err =
      clEnqueueReadBuffer(st->queue, (cl_mem)mem, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
  LT_CL_TRY(err, "clEnqueueReadBuffer");
  return LT_OK;
}

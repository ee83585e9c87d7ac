/* CPU backend: host memory through the context allocator; kernels in the other cpu_*.c files. */
#include "backend/cpu/cpu.h"
#include "core/error.h"
#include "core/object.h"

#include <string.h>

static lt_status cpu_mem_alloc(lt_context *ctx, size_t bytes, void **mem) {
  *mem = lt__host_alloc(ctx, bytes);
  LT_RETURN_IF(*mem == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", bytes);
  return LT_OK;
}

static void cpu_mem_free(lt_context *ctx, void *mem, size_t bytes) {
  lt__host_free(ctx, mem, bytes);
}

static lt_status cpu_mem_write(lt_context *ctx, void *mem, size_t offset, const void *src,
                               size_t bytes) {
  if (bytes) memcpy((char *)mem + offset, src, bytes);
  return LT_OK;
}

static lt_status cpu_mem_read(lt_context *ctx, void *mem, size_t offset, void *dst,
                              size_t bytes) {
  if (bytes) memcpy(dst, (const char *)mem + offset, bytes);
  return LT_OK;
}

static lt_status cpu_synchronize(lt_context *ctx) { return LT_OK; }

static void cpu_release(lt_context *ctx) {}

static const lt__backend cpu_backend = {
    .name = "cpu",
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .mem_write = cpu_mem_write,
    .mem_read = cpu_mem_read,
    .map = lt__cpu_map,
    .reduce = lt__cpu_reduce,
    .gemm = lt__cpu_gemm,
    .contract = lt__cpu_contract,
    .synchronize = cpu_synchronize,
    .release = cpu_release,
};

lt_status lt__cpu_open(lt_context *ctx) {
  ctx->backend = &cpu_backend;
  ctx->backend_state = NULL;
  return LT_OK;
}

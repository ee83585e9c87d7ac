/* SPDX-License-Identifier: MIT */
/* Internal layout of the opaque handles: context, storage, tensor. */
#ifndef LT_CORE_OBJECT_H
#define LT_CORE_OBJECT_H

#include "backend/backend.h"
#include "core/handle.h"
#include "tensor.h"

#include <pthread.h>
#include <stdatomic.h>

#define LT__BLOCK_CACHE_SLOTS 16

struct lt_context {
  uint32_t tag;              /* LT__HANDLE_CONTEXT while alive (core/handle.h) */
  atomic_bool user_released; /* lt_context_destroy was called: the user's handle is gone */
  atomic_int refcount;       /* the user's handle + every storage and plan on it */
  const lt__backend *backend;
  void *backend_state;
  char device[64];
  lt_alloc_fn user_alloc;
  lt_free_fn user_free;
  void *user_data;
  int num_threads;
  /* One-shot plan cache, owned by the einsum layer (it installs the destructor). */
  pthread_mutex_t cache_lock;
  void *plan_cache;
  void (*plan_cache_destroy)(void *cache);
  /* Bytes held through the context (host allocator, and device buffers of backends without
   * host memory), and the most held since creation or lt_context_reset_peak_memory. */
  _Atomic int64_t mem_in_use, mem_peak;
  /* Large host blocks freed by the library and kept for the next allocation of the same size
   * (context.c: a fresh block costs the kernel's page zeroing on first touch, which took as
   * long as a softmax or a normal fill of the block itself). Default allocator only. */
  bool block_cache_on; /* LT_BLOCK_CACHE, read at creation (context.c) */
  pthread_mutex_t block_lock;
  void *block_mem[LT__BLOCK_CACHE_SLOTS];
  size_t block_bytes[LT__BLOCK_CACHE_SLOTS];
};

typedef struct lt__storage {
  atomic_int refcount; /* one per tensor handle using it */
  lt_context *ctx;
  void *mem; /* backend handle */
  size_t nbytes;
  bool owned; /* false for wrapped host memory */
  lt_release_fn release;
  void *release_data; /* the pointer the user wrapped */
  void *release_user;
  /* Bumped by every write through the library (plan outputs, copy_into, set), so that the
   * autograd layer can tell that a tensor it saved for backward was modified in place. */
  atomic_uint_fast64_t version;
} lt__storage;

struct lt_tensor {
  uint32_t tag; /* LT__HANDLE_TENSOR while alive (core/handle.h) */
  lt__storage *storage;
  lt_dtype dtype;
  int rank;
  int64_t offset; /* elements from storage->mem */
  int64_t numel;
  int64_t shape[LT_MAX_RANK];
  int64_t strides[LT_MAX_RANK];
  /* Unique per handle in the process (never reused, unlike the address), so that the autograd
   * layer can key its records by handle without holding a reference. */
  uint64_t serial;
};

/* Marks a storage as written (see lt__storage.version). */
static inline void lt__storage_touch(lt__storage *s) { atomic_fetch_add(&s->version, 1); }

/* Worker threads when the context sets none: LT_NUM_THREADS, else the online cores. */
int lt__default_threads(void);

/* LT_ERR_CONTEXT_MISMATCH for objects `a` and `b` of one call on different contexts, with a
 * message that tells them apart even when both are, say, 'cpu' contexts. */
lt_status lt__context_mismatch(const char *call, const char *a, const lt_context *ca, const char *b,
                               const lt_context *cb);

/* Context references (tensors, storages and plans hold one). */
void lt__context_retain(lt_context *ctx);
void lt__context_release(lt_context *ctx);

/* Host allocation through the context's allocator (or malloc), 64-byte aligned. */
void *lt__host_alloc(lt_context *ctx, size_t bytes);
void lt__host_free(lt_context *ctx, void *ptr, size_t bytes);
/* Small blocks (core/small_blocks.c): the power-of-two class size (64 B .. 8 KiB) that
 * lt__host_alloc gives a request of `bytes` without a user allocator, 0 above the classes; a
 * freed block of that class kept by this thread (NULL: none); keeps a freed block of that class
 * for this thread's next request (false: the caller frees it). */
size_t lt__small_block_bytes(size_t bytes);
void *lt__small_block_take(size_t class_bytes);
bool lt__small_block_put(void *p, size_t class_bytes);
/* Zeroed lt__host_alloc of count * size bytes (NULL on overflow); free that many bytes. */
void *lt__host_calloc(lt_context *ctx, size_t count, size_t size);
/* Moves a block of old_bytes into a new one of new_bytes (copying the smaller of the two);
 * on failure returns NULL and leaves the old block as it was. */
void *lt__host_realloc(lt_context *ctx, void *ptr, size_t old_bytes, size_t new_bytes);

/* Device memory through ctx's backend, counted in the context's memory figures. */
lt_status lt__device_alloc(lt_context *ctx, size_t bytes, void **mem);
void lt__device_free(lt_context *ctx, void *mem, size_t bytes);

/* Allocates storage of `bytes` on ctx's device. */
lt_status lt__storage_create(lt_context *ctx, size_t bytes, lt__storage **out);
void lt__storage_release(lt__storage *s);

/* New handle over `storage` (retained) with the given layout; no bounds check. */
lt_status lt__tensor_wrap_storage(lt__storage *storage, lt_dtype dtype, int rank,
                                  const int64_t *shape, const int64_t *strides, int64_t offset,
                                  lt_tensor **out);
/* Fresh C-contiguous tensor of the given shape on ctx (checked sizes). */
lt_status lt__tensor_new(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                         lt_tensor **out);
/* LT_ERR_OUT_OF_RANGE (naming `api`) when an integer dtype cannot hold the truncation of
 * value, or value is NaN; LT_OK for float dtypes. */
lt_status lt__check_int_value(const char *api, lt_dtype dtype, double value);
/* Validates a shape (rank range, non-negative extents, element count and bytes fit). */
lt_status lt__check_shape(int rank, const int64_t *shape, lt_dtype dtype, int64_t *numel);
/* C-order strides of shape. */
void lt__contiguous_strides(int rank, const int64_t *shape, int64_t *strides);
/* Lowest and highest element offsets a layout reaches (relative to its first element). */
void lt__layout_extent(int rank, const int64_t *shape, const int64_t *strides, int64_t *lo,
                       int64_t *hi);
/* Lowest and highest element offsets (offset included) a layout reaches, overflow-checked over
 * every axis of extent >= 1 even when another axis is empty, so that any index arithmetic on
 * the layout (and on views derived from it) stays within int64. LT_ERR_OVERFLOW names `fn`. */
lt_status lt__check_layout_span(const char *fn, int rank, const int64_t *shape,
                                const int64_t *strides, int64_t offset, int64_t *lo, int64_t *hi);
/* Fills an operand from a tensor, with its strides over its own axes. */
void lt__operand_from_tensor(const lt_tensor *t, lt__operand *op);
/* Validates that t is a live tensor handle for `what` ("lt_add: a"): LT_ERR_NULL_POINTER or
 * LT_ERR_INVALID_HANDLE otherwise. */
lt_status lt__check_tensor(const lt_tensor *t, const char *what);
/* Validates a context handle the caller passed (live, and not destroyed by the caller). */
lt_status lt__check_context(const lt_context *ctx, const char *fn, const char *what);
/* Frees a handle block allocated with lt__host_alloc(ctx) after lt__handle_kill: through the
 * user allocator at once, else through the quarantine (core/handle.h says why). */
void lt__handle_free(lt_context *ctx, void *h, size_t bytes);
/* Normalises a possibly negative axis against rank (axis in [-rank, rank)). */
lt_status lt__normalize_axis(int axis, int rank, const char *what, int *out);

/* Overlap analysis between the memory of two tensors: views of one storage, or host memory
 * wrapped by several storages (compared by address). */
typedef enum lt__overlap {
  LT__OVERLAP_NONE = 0,   /* disjoint memory */
  LT__OVERLAP_SAME = 1,   /* identical layout: same first element, shape, strides, dtype */
  LT__OVERLAP_PARTIAL = 2 /* may share elements in a different arrangement */
} lt__overlap;
lt__overlap lt__tensor_overlap(const lt_tensor *a, const lt_tensor *b);
/* True if a and b start at the same element of the same memory. */
bool lt__tensor_same_start(const lt_tensor *a, const lt_tensor *b);
/* True if two different indices of t address the same element (zero or clashing strides). */
bool lt__tensor_self_overlaps(const lt_tensor *t);

#endif

/* SPDX-License-Identifier: MIT */
/* DLPack import and export: tensors shared zero-copy with other libraries' host memory. */
#include "core/error.h"
#include "core/object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dtypes map through their names ("f32", "bf16", "i64", "u8", "bool"), so every dtype the table
 * gains is exchanged without touching this file. */
static const struct {
  const char *prefix;
  uint8_t code;
} dl_kinds[] = {{"bf", kDLBfloat}, {"f", kDLFloat}, {"i", kDLInt}, {"u", kDLUInt}};

static lt_status dtype_to_dl(lt_dtype dtype, DLDataType *out) {
  const char *name = lt_dtype_name(dtype);
  LT_RETURN_IF(name == NULL, LT_ERR_DTYPE, "dlpack: invalid dtype %d", (int)dtype);
  out->lanes = 1;
  out->bits = (uint8_t)(8 * lt_dtype_size(dtype));
  if (strcmp(name, "bool") == 0) {
    out->code = kDLBool;
    return LT_OK;
  }
  for (size_t i = 0; i < sizeof dl_kinds / sizeof dl_kinds[0]; i++) {
    size_t n = strlen(dl_kinds[i].prefix);
    if (strncmp(name, dl_kinds[i].prefix, n) == 0 && atoi(name + n) == out->bits) {
      out->code = dl_kinds[i].code;
      return LT_OK;
    }
  }
  return lt__error(LT_ERR_DTYPE, "dlpack: dtype %s has no DLPack equivalent", name);
}

static lt_status dtype_from_dl(DLDataType dt, lt_dtype *out) {
  LT_RETURN_IF(dt.lanes != 1, LT_ERR_DTYPE, "dlpack: vector dtypes (lanes = %u) are not supported",
               (unsigned)dt.lanes);
  char name[16] = "";
  if (dt.code == kDLBool && dt.bits == 8) snprintf(name, sizeof name, "bool");
  for (size_t i = 0; i < sizeof dl_kinds / sizeof dl_kinds[0]; i++)
    if (dl_kinds[i].code == dt.code)
      snprintf(name, sizeof name, "%s%u", dl_kinds[i].prefix, (unsigned)dt.bits);
  if (name[0] != '\0' && lt_dtype_from_name(name, out) == LT_OK &&
      lt_dtype_size(*out) * 8 == dt.bits)
    return LT_OK;
  lt_clear_error();
  return lt__error(LT_ERR_DTYPE, "dlpack: dtype (code %u, %u bits) has no libtensor equivalent",
                   (unsigned)dt.code, (unsigned)dt.bits);
}

static bool host_device(DLDeviceType type) {
  return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost;
}

/* ---- import ---- */

static void release_versioned(void *data, void *user) {
  (void)data;
  DLManagedTensorVersioned *m = user;
  if (m->deleter) m->deleter(m);
}

static void release_legacy(void *data, void *user) {
  (void)data;
  DLManagedTensor *m = user;
  if (m->deleter) m->deleter(m);
}

/* Wraps (or copies, then releases) the producer's tensor. On failure nothing is released. */
static lt_status import(lt_context *ctx, const DLTensor *dl, bool readonly, uint32_t flags,
                        lt_release_fn release, void *managed, lt_tensor **out) {
  LT_RETURN_IF(flags & ~(uint32_t)LT_DLPACK_COPY, LT_ERR_INVALID_ARGUMENT,
               "lt_tensor_from_dlpack: unknown flags 0x%x", (unsigned)flags);
  LT_RETURN_IF(dl->ndim < 0 || dl->ndim > LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
               "lt_tensor_from_dlpack: ndim %d is outside [0, %d]", (int)dl->ndim, LT_MAX_RANK);
  LT_RETURN_IF(dl->ndim > 0 && dl->shape == NULL, LT_ERR_NULL_POINTER,
               "lt_tensor_from_dlpack: shape is NULL for ndim %d", (int)dl->ndim);
  lt_dtype dtype;
  LT_TRY(dtype_from_dl(dl->dtype, &dtype));
  LT_RETURN_IF(!host_device(dl->device.device_type), LT_ERR_UNSUPPORTED,
               "lt_tensor_from_dlpack: device type %d is not host memory (only kDLCPU, "
               "kDLCUDAHost and kDLROCMHost tensors can be imported; copy it to the host first)",
               (int)dl->device.device_type);
  bool host_ctx = ctx->backend->caps.host_memory;
  bool copy = readonly || (flags & LT_DLPACK_COPY);
  LT_RETURN_IF(!host_ctx && !copy, LT_ERR_UNSUPPORTED,
               "lt_tensor_from_dlpack: context '%s' cannot address host memory; pass "
               "LT_DLPACK_COPY to copy the tensor onto it",
               ctx->device);
  /* an offset that wraps around the address space points before the data (ASan: a read of
   * the bytes below it), whatever the producer's memory is */
  LT_RETURN_IF(dl->data != NULL && dl->byte_offset > UINTPTR_MAX - (uintptr_t)dl->data,
               LT_ERR_INVALID_ARGUMENT,
               "lt_tensor_from_dlpack: byte_offset %llu wraps around the address space from data "
               "%p",
               (unsigned long long)dl->byte_offset, dl->data);
  char *data = dl->data ? (char *)dl->data + dl->byte_offset : NULL;
  lt_status st = copy ? lt_tensor_from_host(ctx, dtype, dl->ndim, dl->shape, dl->strides, data, out)
                      : lt_tensor_wrap_host(ctx, dtype, dl->ndim, dl->shape, dl->strides, data,
                                            release, managed, out);
  if (st == LT_OK && copy) release(data, managed);
  if (st != LT_OK)
    lt__error_rename(copy ? "lt_tensor_from_host" : "lt_tensor_wrap_host", "lt_tensor_from_dlpack");
  return st;
}

lt_status lt_tensor_from_dlpack(lt_context *ctx, DLManagedTensorVersioned *managed, uint32_t flags,
                                lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_tensor_from_dlpack", "ctx"));
  LT_CHECK_NULL(managed, "managed");
  LT_RETURN_IF(managed->version.major != DLPACK_MAJOR_VERSION, LT_ERR_UNSUPPORTED,
               "lt_tensor_from_dlpack: DLPack version %u.%u is not supported (major version %d)",
               (unsigned)managed->version.major, (unsigned)managed->version.minor,
               DLPACK_MAJOR_VERSION);
  bool readonly = (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return import(ctx, &managed->dl_tensor, readonly, flags, release_versioned, managed, out);
}

lt_status lt_tensor_from_dlpack_legacy(lt_context *ctx, DLManagedTensor *managed, uint32_t flags,
                                       lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_tensor_from_dlpack_legacy", "ctx"));
  LT_CHECK_NULL(managed, "managed");
  return import(ctx, &managed->dl_tensor, false, flags, release_legacy, managed, out);
}

/* ---- export ---- */

/* One allocation per export: the managed struct first (so a deleter's `self` is the block),
 * then the handle that keeps the storage alive and the shape and strides DLTensor points at. */
typedef struct export_block {
  union {
    DLManagedTensorVersioned v;
    DLManagedTensor legacy;
  } head;
  lt_tensor *keep;
  int64_t shape[LT_MAX_RANK];
  int64_t strides[LT_MAX_RANK];
} export_block;

static void block_free(export_block *b) {
  lt_tensor_destroy(b->keep);
  free(b);
}

static void delete_versioned(DLManagedTensorVersioned *self) { block_free((export_block *)self); }
static void delete_legacy(DLManagedTensor *self) { block_free((export_block *)self); }

/* A new block whose `keep` shares t's storage (or holds a host copy of a device tensor). */
static lt_status export_block_new(const lt_tensor *t, uint32_t flags, const char *fn,
                                  export_block **out, DLTensor *dl) {
  *out = NULL;
  LT_RETURN_IF(flags & ~(uint32_t)(LT_DLPACK_COPY | LT_DLPACK_READ_ONLY), LT_ERR_INVALID_ARGUMENT,
               "%s: unknown flags 0x%x", fn, (unsigned)flags);
  DLDataType dt;
  LT_TRY(dtype_to_dl(t->dtype, &dt));
  bool host = t->storage->ctx->backend->caps.host_memory;
  LT_RETURN_IF(!host && !(flags & LT_DLPACK_COPY), LT_ERR_UNSUPPORTED,
               "%s: the tensor lives on '%s', not in host memory; pass LT_DLPACK_COPY to export "
               "a host copy",
               fn, t->storage->ctx->device);
  export_block *b = calloc(1, sizeof *b);
  LT_RETURN_IF(b == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  lt_status st;
  if (flags & LT_DLPACK_COPY) {
    lt_context *cpu = NULL;
    st =
        host ? lt_tensor_contiguous(t, LT_DTYPE_INVALID, &b->keep) : lt_context_create("cpu", &cpu);
    if (st == LT_OK && !host) st = lt_tensor_to_context(t, cpu, &b->keep);
    lt_context_destroy(cpu); /* the copy keeps its context alive */
  } else {
    st = lt__tensor_wrap_storage(t->storage, t->dtype, t->rank, t->shape, t->strides, t->offset,
                                 &b->keep);
  }
  void *data = NULL;
  if (st == LT_OK) st = lt_tensor_host_pointer(b->keep, &data);
  if (st != LT_OK) {
    block_free(b);
    return st;
  }
  const lt_tensor *k = b->keep;
  memcpy(b->shape, k->shape, sizeof(int64_t) * (size_t)k->rank);
  memcpy(b->strides, k->strides, sizeof(int64_t) * (size_t)k->rank);
  memset(dl, 0, sizeof *dl);
  dl->data = data;
  dl->device.device_type = kDLCPU;
  dl->device.device_id = 0;
  dl->ndim = k->rank;
  dl->dtype = dt;
  dl->shape = b->shape;
  dl->strides = b->strides;
  dl->byte_offset = 0;
  *out = b;
  return LT_OK;
}

lt_status lt_tensor_to_dlpack(const lt_tensor *t, uint32_t flags, DLManagedTensorVersioned **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(t, "lt_tensor_to_dlpack: tensor"));
  export_block *b;
  DLTensor dl;
  LT_TRY(export_block_new(t, flags, "lt_tensor_to_dlpack", &b, &dl));
  DLManagedTensorVersioned *m = &b->head.v;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = b;
  m->deleter = delete_versioned;
  m->flags = ((flags & LT_DLPACK_READ_ONLY) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0) |
             ((flags & LT_DLPACK_COPY) ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
  m->dl_tensor = dl;
  *out = m;
  return LT_OK;
}

lt_status lt_tensor_to_dlpack_legacy(const lt_tensor *t, uint32_t flags, DLManagedTensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(t, "lt_tensor_to_dlpack_legacy: tensor"));
  LT_RETURN_IF(flags & LT_DLPACK_READ_ONLY, LT_ERR_INVALID_ARGUMENT,
               "lt_tensor_to_dlpack_legacy: a legacy DLManagedTensor has no read-only flag; use "
               "lt_tensor_to_dlpack");
  export_block *b;
  DLTensor dl;
  LT_TRY(export_block_new(t, flags, "lt_tensor_to_dlpack_legacy", &b, &dl));
  DLManagedTensor *m = &b->head.legacy;
  m->manager_ctx = b;
  m->deleter = delete_legacy;
  m->dl_tensor = dl;
  *out = m;
  return LT_OK;
}

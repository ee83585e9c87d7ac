/* SPDX-License-Identifier: MIT */
/* libtensor: DLPack interop (zero-copy exchange with NumPy, PyTorch, JAX, CuPy, ...). */
/* The DLPack structs are declared below under the names and layout of DLPack 1.x's dlpack.h
 * (https://github.com/dmlc/dlpack), behind dlpack.h's own include guard DLPACK_DLPACK_H_. So:
 * - include this header alone and the DLPack types come from here;
 * - include the real <dlpack/dlpack.h> (version 1.0 or later) BEFORE tensor.h and its
 *   declarations are used (ours are skipped); include it AFTER and it is skipped instead. Either
 *   way there is exactly one definition, with the same layout.
 * A dlpack.h older than 1.0 (no DLManagedTensorVersioned) included first stops the build. */
#ifndef LT_TENSOR_DLPACK_H
#define LT_TENSOR_DLPACK_H

#include "base.h"

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

/* The DLPack major version these declarations follow. */
#define DLPACK_MAJOR_VERSION 1
/* The DLPack minor version these declarations follow. */
#define DLPACK_MINOR_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* The DLPack ABI version of a managed tensor (major changes break the layout). */
typedef struct {
  /* Major version (1 for this layout). */
  uint32_t major;
  /* Minor version. */
  uint32_t minor;
} DLPackVersion;

/* Device kinds (DLPack's numbering). */
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17
} DLDeviceType;

/* Where a tensor's memory lives. */
typedef struct {
  /* The kind of device (kDLCPU for host memory). */
  DLDeviceType device_type;
  /* Which device of that kind (0 for the CPU). */
  int32_t device_id;
} DLDevice;

/* Element kinds (DLPack's numbering). */
typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
} DLDataTypeCode;

/* An element type: kind, width and vector lanes (libtensor uses lanes = 1). */
typedef struct {
  /* A DLDataTypeCode. */
  uint8_t code;
  /* Bits per lane (8, 16, 32, 64). */
  uint8_t bits;
  /* Vector lanes per element. */
  uint16_t lanes;
} DLDataType;

/* A strided tensor as DLPack describes it (borrowed pointers, no ownership). */
typedef struct {
  /* Base address; element [0,...,0] is at data + byte_offset. */
  void *data;
  /* The memory's device. */
  DLDevice device;
  /* Number of axes. */
  int32_t ndim;
  /* Element type. */
  DLDataType dtype;
  /* ndim extents. */
  int64_t *shape;
  /* ndim strides in elements, or NULL for C order. */
  int64_t *strides;
  /* Bytes from data to element [0,...,0]. */
  uint64_t byte_offset;
} DLTensor;

/* The legacy (pre-1.0) managed tensor: no version, no flags. (Declared in two steps, which
 * dlpack.h does in one: the same type.) */
typedef struct DLManagedTensor DLManagedTensor;
/* The legacy managed tensor's layout. */
struct DLManagedTensor {
  /* The tensor. */
  DLTensor dl_tensor;
  /* The producer's private state. */
  void *manager_ctx;
  /* Called once by the consumer when it no longer needs the tensor. */
  void (*deleter)(struct DLManagedTensor *self);
};

/* Flag: the consumer must not write the tensor. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
/* Flag: the producer made a copy for this exchange. */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
/* Flag: sub-byte elements are padded to whole bytes. */
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/* The DLPack 1.x managed tensor (see the struct). */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
/* A DLPack 1.x managed tensor: versioned, with flags (read-only, copied). */
struct DLManagedTensorVersioned {
  /* The DLPack version of this struct. */
  DLPackVersion version;
  /* The producer's private state. */
  void *manager_ctx;
  /* Called once by the consumer when it no longer needs the tensor. */
  void (*deleter)(struct DLManagedTensorVersioned *self);
  /* DLPACK_FLAG_BITMASK_* bits. */
  uint64_t flags;
  /* The tensor. */
  DLTensor dl_tensor;
};

#ifdef __cplusplus
}
#endif
#endif /* DLPACK_DLPACK_H_ */

#if DLPACK_MAJOR_VERSION < 1
#error "libtensor needs dlpack.h 1.0 or later (DLManagedTensorVersioned)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* How a DLPack exchange treats the data (an OR of these; unknown bits are
 * LT_ERR_INVALID_ARGUMENT). */
typedef enum lt_dlpack_flags {
  LT_DLPACK_DEFAULT = 0,
  /* Import: copy the elements into a new tensor on ctx instead of sharing them (the producer's
   * deleter then runs before the call returns). Export: hand out a fresh C-contiguous copy,
   * marked DLPACK_FLAG_BITMASK_IS_COPIED. */
  LT_DLPACK_COPY = 1,
  /* Export: mark the tensor DLPACK_FLAG_BITMASK_READ_ONLY (the consumer must not write). */
  LT_DLPACK_READ_ONLY = 2
} lt_dlpack_flags;

/* Imports a DLPack 1.x tensor. Zero-copy when ctx can address the memory (a CPU context and a
 * kDLCPU / kDLCUDAHost / kDLROCMHost tensor): the new tensor (and every view of it) keeps the
 * producer's memory alive and calls `managed->deleter` once the last of them is destroyed.
 * A tensor flagged DLPACK_FLAG_BITMASK_READ_ONLY is never shared, since every libtensor tensor
 * is writable: it is copied (as with LT_DLPACK_COPY). Other devices, non-host memory on a
 * CPU context and host memory on an OpenCL context are copied with LT_DLPACK_COPY (host memory
 * only) and otherwise refused with LT_ERR_UNSUPPORTED. Dtypes map by (code, bits) to the
 * library's dtype of that name ("f32", "bf16", "i64", ...); lanes != 1, complex, opaque and
 * unknown dtypes are LT_ERR_DTYPE. Strides NULL mean C order; byte_offset is honoured (one that
 * wraps data + byte_offset around the address space is LT_ERR_INVALID_ARGUMENT); data
 * not aligned to its element size is LT_ERR_INVALID_ARGUMENT. A major version other than 1 is
 * LT_ERR_UNSUPPORTED. On success the library owns `managed`; on failure the caller still does
 * (its deleter has not been called). */
LT_API lt_status lt_tensor_from_dlpack(lt_context *ctx, DLManagedTensorVersioned *managed,
                                       uint32_t flags, lt_tensor **out);
/* lt_tensor_from_dlpack for the legacy DLManagedTensor (no read-only flag to honour). */
LT_API lt_status lt_tensor_from_dlpack_legacy(lt_context *ctx, DLManagedTensor *managed,
                                              uint32_t flags, lt_tensor **out);
/* Exports a tensor as a DLPack 1.1 managed tensor sharing its storage (a CPU tensor; element
 * strides, any sign, and byte_offset 0 with data at element [0,...,0]). The export holds its own
 * reference: `t` may be destroyed first, and the consumer calls (*out)->deleter once when done.
 * Tensors that do not live in host memory (OpenCL) are exported as a host copy with
 * LT_DLPACK_COPY and otherwise refused with LT_ERR_UNSUPPORTED; a dtype with no DLPack
 * equivalent is LT_ERR_DTYPE. On failure *out is NULL. */
LT_API lt_status lt_tensor_to_dlpack(const lt_tensor *t, uint32_t flags,
                                     DLManagedTensorVersioned **out);
/* lt_tensor_to_dlpack as a legacy DLManagedTensor (for consumers older than DLPack 1.0;
 * LT_DLPACK_READ_ONLY cannot be expressed there and is LT_ERR_INVALID_ARGUMENT). */
LT_API lt_status lt_tensor_to_dlpack_legacy(const lt_tensor *t, uint32_t flags,
                                            DLManagedTensor **out);

#ifdef __cplusplus
}
#endif
#endif

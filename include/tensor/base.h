/* SPDX-License-Identifier: MIT */
/* libtensor: version, export macro, status codes, dtypes and handle types. */
#ifndef LT_TENSOR_BASE_H
#define LT_TENSOR_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one source of truth for the version; CMake reads these three lines. */
#define LT_VERSION_MAJOR 0
/* Minor version: grows with additions. */
#define LT_VERSION_MINOR 1
/* Patch version: fixes only. */
#define LT_VERSION_PATCH 0

#if defined(LT_BUILDING_LIBRARY)
#define LT_API __attribute__((visibility("default")))
#else
#define LT_API
#endif

/* Highest tensor rank the library accepts. */
#define LT_MAX_RANK 64

/* Status codes: (name, pinned value, default message). Values never change once released. */
#define LT_STATUS_TABLE(X)                                                                         \
  X(LT_OK, 0, "success")                                                                           \
  X(LT_ERR_INVALID_ARGUMENT, -1, "invalid argument")                                               \
  X(LT_ERR_NULL_POINTER, -2, "null pointer")                                                       \
  X(LT_ERR_OUT_OF_MEMORY, -3, "out of memory")                                                     \
  X(LT_ERR_SHAPE_MISMATCH, -4, "shape mismatch")                                                   \
  X(LT_ERR_OUT_OF_RANGE, -5, "index or axis out of range")                                         \
  X(LT_ERR_OVERFLOW, -6, "size arithmetic overflows")                                              \
  X(LT_ERR_DTYPE, -7, "unsupported or mismatched dtype")                                           \
  X(LT_ERR_NOT_VIEWABLE, -8, "layout cannot be expressed as a view")                               \
  X(LT_ERR_PARSE, -9, "malformed expression")                                                      \
  X(LT_ERR_IO, -10, "input/output error")                                                          \
  X(LT_ERR_FORMAT, -11, "malformed file")                                                          \
  X(LT_ERR_UNSUPPORTED, -12, "unsupported operation")                                              \
  X(LT_ERR_DEVICE, -13, "device error")                                                            \
  X(LT_ERR_NO_DEVICE, -14, "no such device")                                                       \
  X(LT_ERR_ALIASING, -15, "output overlaps an input")                                              \
  X(LT_ERR_CONTEXT_MISMATCH, -16, "tensors belong to different contexts")                          \
  X(LT_ERR_LAYOUT_MISMATCH, -17, "tensor layout differs from the plan's")                          \
  X(LT_ERR_BUILD, -18, "device program build failed")                                              \
  X(LT_ERR_INTERNAL, -19, "internal error")                                                        \
  X(LT_ERR_INVALID_HANDLE, -20, "invalid or destroyed handle")

/* Every call that can fail returns one of these; details are in lt_last_error(). */
typedef enum lt_status {
#define LT_STATUS_ENUM_ENTRY(name, value, text) name = value,
  LT_STATUS_TABLE(LT_STATUS_ENUM_ENTRY)
#undef LT_STATUS_ENUM_ENTRY
} lt_status;

/* Element types. Floats F16/BF16 are storage formats computed in F32; integers and BOOL are
 * stored and computed exactly (wrapping in two's complement / modulo 2^n as NumPy does).
 * Values are pinned: new dtypes are appended, existing ones never renumbered.
 *
 * Promotion (lt_dtype_promote; NumPy 2's table, bf16 placed as the smallest float holding the
 * value exactly):
 *   bool with X                  -> X
 *   signed with signed           -> the wider;  unsigned with unsigned -> the wider
 *   signed iN with unsigned uM   -> iN if N > M, else the signed type twice as wide as uM
 *                                   (u8 -> i16, u16 -> i32, u32 -> i64), u64 with any signed -> f64
 *   integer with f16 / bf16      -> that float for i8/u8, f32 for i16/u16, f64 for 32/64 bits
 *   integer with f32             -> f32 for 8/16 bits, f64 for 32/64 bits (i64 + f32 -> f64)
 *   integer with f64             -> f64
 *   float with float             -> the wider; f16 with bf16 -> f32
 * Arithmetic on BOOL: ADD is logical or, MUL logical and, MIN/MAX and/or; SUB and NEG are
 * refused as in NumPy. DIV of integers and bools gives f64; the float functions give the
 * smallest float that holds their input (i8/u8/bool f16, i16/u16 f32, wider f64; ops.h). */
typedef enum lt_dtype {
  LT_DTYPE_INVALID = 0,
  LT_F16 = 1,
  LT_BF16 = 2,
  LT_F32 = 3,
  LT_F64 = 4,
  LT_I64 = 5,
  LT_I8 = 6,
  LT_I16 = 7,
  LT_I32 = 8,
  LT_U8 = 9,
  LT_U16 = 10,
  LT_U32 = 11,
  LT_U64 = 12,
  LT_BOOL = 13
} lt_dtype;

/* A device and its resources (thread pool or queue, caches, allocator). */
typedef struct lt_context lt_context;
/* A strided view over reference-counted storage. */
typedef struct lt_tensor lt_tensor;
/* An operation compiled for fixed layouts, dtypes and device. */
typedef struct lt_plan lt_plan;
/* Options for plan creation (path algorithm, compute dtype, ...). */
typedef struct lt_plan_options lt_plan_options;

/* Handle lifetime. Every lt_X_destroy accepts NULL and releases the caller's handle; objects
 * that others still use (a context with live tensors, a storage shared by views) live on until
 * the last user lets go. A handle used after its destroy, destroyed twice, or passed where
 * another kind is expected (a plan where a tensor goes) is refused with LT_ERR_INVALID_HANDLE
 * and a message naming the call and the argument; a void call (a destroy, an accessor) then
 * does nothing, returns its "none" value (NULL, 0, -1) and leaves the message in
 * lt_last_error(). This is guaranteed for the last 256 handles destroyed on contexts with the
 * default allocator, and holds for older ones as long as their memory has not been reused.
 * Still undefined: a pointer that never came from libtensor or points at unreadable memory; a
 * handle destroyed long ago whose memory now holds another object; a handle destroyed on one
 * thread while another thread still uses it; and, on a context with a user allocator, a
 * destroyed handle whose block that allocator has already handed out again. */

/* Returns "MAJOR.MINOR.PATCH" of the library actually loaded. */
LT_API const char *lt_version(void);
/* Packs the loaded version as MAJOR*10000 + MINOR*100 + PATCH. */
LT_API int lt_version_number(void);
/* Name of a status code ("LT_ERR_PARSE"); "LT_UNKNOWN_STATUS" for unknown values. */
LT_API const char *lt_status_string(lt_status status);
/* Message of the last failure on this thread; "" if none. Valid until the next failing call. */
LT_API const char *lt_last_error(void);
/* Clears this thread's last error message. */
LT_API void lt_clear_error(void);
/* Sets this thread's last error message (truncated to the library's buffer; NULL = "") and
 * returns `status`, so that code layered on libtensor (libtensor_mpi's lt_dist_* calls) reports
 * its failures through lt_last_error() too. Never fails. */
LT_API lt_status lt_set_last_error(lt_status status, const char *message);

/* Bytes per element of a dtype (0 for an invalid dtype). */
LT_API size_t lt_dtype_size(lt_dtype dtype);
/* Short name of a dtype: "f16", "bf16", "f32", "f64", "i8".."i64", "u8".."u64", "bool"; NULL if
 * invalid. */
LT_API const char *lt_dtype_name(lt_dtype dtype);
/* Parses "f32", "float32", "f64", ... into a dtype; LT_ERR_DTYPE if unknown. */
LT_API lt_status lt_dtype_from_name(const char *name, lt_dtype *out);

/* --- integer and bool dtypes (issue 18 A) --- */
/* The dtype NumPy 2 gives a binary operation on a and b (the table above the lt_dtype enum);
 * LT_ERR_DTYPE if either is invalid. */
LT_API lt_status lt_dtype_promote(lt_dtype a, lt_dtype b, lt_dtype *out);
/* True for the integer dtypes LT_I8..LT_U64 (not BOOL). */
LT_API bool lt_dtype_is_integer(lt_dtype dtype);
/* True for the signed integer dtypes LT_I8, LT_I16, LT_I32, LT_I64. */
LT_API bool lt_dtype_is_signed(lt_dtype dtype);
/* True for LT_F16, LT_BF16, LT_F32, LT_F64. */
LT_API bool lt_dtype_is_float(lt_dtype dtype);

/* Converts between float and IEEE half / bfloat16 bits (round to nearest even, NaN/Inf kept). */
LT_API uint16_t lt_f32_to_f16(float value);
/* IEEE half bits to float (exact; a signalling NaN comes back quiet, as IEEE 754 converts). */
LT_API float lt_f16_to_f32(uint16_t bits);
/* Float to bfloat16 bits, rounded to nearest even. */
LT_API uint16_t lt_f32_to_bf16(float value);
/* Bfloat16 bits to float (exact). */
LT_API float lt_bf16_to_f32(uint16_t bits);

#ifdef __cplusplus
}
#endif
#endif

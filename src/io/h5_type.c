/* SPDX-License-Identifier: MIT */
/* Tensor dtypes <-> HDF5 types, derived from each dtype's name and size so that the dtypes of
 * the table (f16 bf16 f32 f64, and iN uN bool where the build has them) need no list here. */
#include "core/error.h"
#include "io/h5.h"

#include <stdio.h>
#include <string.h>

/* A 16-bit float in native byte order with the given exponent width: 5 is IEEE half (h5py's
 * float16), 8 is bfloat16. */
static hid_t float16_type(size_t exponent_bits) {
  hid_t t = H5Tcopy(H5T_NATIVE_FLOAT);
  size_t mantissa = 15 - exponent_bits;
  if (t < 0 || H5Tset_fields(t, 15, mantissa, exponent_bits, 0, mantissa) < 0 ||
      H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, ((size_t)1 << (exponent_bits - 1)) - 1) < 0) {
    if (t >= 0) H5Tclose(t);
    return -1;
  }
  return t;
}

/* h5py's bool: an enum over int8 with FALSE = 0 and TRUE = 1. */
static hid_t bool_type(void) {
  hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
  signed char no = 0, yes = 1;
  if (t < 0 || H5Tenum_insert(t, "FALSE", &no) < 0 || H5Tenum_insert(t, "TRUE", &yes) < 0) {
    if (t >= 0) H5Tclose(t);
    return -1;
  }
  return t;
}

static hid_t native_int(size_t size, bool is_signed) {
  switch (size) {
  case 1: return H5Tcopy(is_signed ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8);
  case 2: return H5Tcopy(is_signed ? H5T_NATIVE_INT16 : H5T_NATIVE_UINT16);
  case 4: return H5Tcopy(is_signed ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32);
  case 8: return H5Tcopy(is_signed ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64);
  default: return -1;
  }
}

hid_t lt__h5_mem_type(lt_dtype dtype) {
  const char *name = lt_dtype_name(dtype);
  size_t size = lt_dtype_size(dtype);
  if (name == NULL) return -1;
  if (strcmp(name, "bool") == 0) return bool_type();
  if (strcmp(name, "bf16") == 0) return float16_type(8);
  if (name[0] == 'f' && size == 2) return float16_type(5);
  if (name[0] == 'f' && size == 4) return H5Tcopy(H5T_NATIVE_FLOAT);
  if (name[0] == 'f' && size == 8) return H5Tcopy(H5T_NATIVE_DOUBLE);
  if (name[0] == 'i' || name[0] == 'u') return native_int(size, name[0] == 'i');
  return -1;
}

/* The dtype named `name`, or LT_DTYPE_INVALID without touching the caller's error message. */
static lt_dtype dtype_named(const char *name) {
  lt_dtype d = LT_DTYPE_INVALID;
  for (int i = 1; i < 64; i++)
    if (lt_dtype_name((lt_dtype)i) && strcmp(lt_dtype_name((lt_dtype)i), name) == 0)
      d = (lt_dtype)i;
  return d;
}

static bool is_bool_enum(hid_t type) {
  if (H5Tget_nmembers(type) != 2 || H5Tget_size(type) != 1) return false;
  signed char v0 = -1, v1 = -1;
  if (H5Tenum_valueof(type, "FALSE", &v0) < 0 || H5Tenum_valueof(type, "TRUE", &v1) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  return v0 == 0 && v1 == 1;
}

bool lt__h5_is_numeric(hid_t type) {
  H5T_class_t c = H5Tget_class(type);
  return c == H5T_INTEGER || c == H5T_FLOAT || (c == H5T_ENUM && is_bool_enum(type));
}

static const char *class_name(H5T_class_t c) {
  switch (c) {
  case H5T_TIME: return "time";
  case H5T_STRING: return "string";
  case H5T_BITFIELD: return "bitfield";
  case H5T_OPAQUE: return "opaque";
  case H5T_COMPOUND: return "compound";
  case H5T_REFERENCE: return "reference";
  case H5T_ENUM: return "enum";
  case H5T_VLEN: return "variable-length";
  case H5T_ARRAY: return "array";
  default: return "unknown";
  }
}

lt_dtype lt__h5_dtype_of(hid_t type, char *desc, size_t cap) {
  H5T_class_t c = H5Tget_class(type);
  size_t size = H5Tget_size(type);
  char name[16] = "";
  if (c == H5T_FLOAT) {
    size_t spos, epos, esize, mpos, msize;
    bool bf16 =
        size == 2 && H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0 && esize == 8;
    snprintf(name, sizeof name, "%s%zu", bf16 ? "bf" : "f", 8 * size);
  } else if (c == H5T_INTEGER) {
    snprintf(name, sizeof name, "%c%zu", H5Tget_sign(type) == H5T_SGN_NONE ? 'u' : 'i', 8 * size);
  } else if (c == H5T_ENUM && is_bool_enum(type)) {
    snprintf(name, sizeof name, "bool");
  }
  if (name[0] == '\0') {
    snprintf(desc, cap, "%s (not a tensor)", class_name(c));
    return LT_DTYPE_INVALID;
  }
  H5T_order_t order = c == H5T_ENUM ? H5T_ORDER_NONE : H5Tget_order(type);
  const char *endian = order == H5T_ORDER_BE   ? " big-endian"
                       : order == H5T_ORDER_LE ? " little-endian"
                                               : "";
  lt_dtype d = dtype_named(name);
  snprintf(desc, cap, "%s%s%s", name, endian,
           d == LT_DTYPE_INVALID ? " (no such dtype in this build: read with a dtype)" : "");
  H5Eclear2(H5E_DEFAULT);
  return d;
}

lt_dtype lt__h5_transfer_dtype(lt_dtype have, lt_dtype want) {
  if ((have == LT_BOOL) == (want == LT_BOOL)) return want;
  return have != LT_DTYPE_INVALID ? have : LT_F64;
}

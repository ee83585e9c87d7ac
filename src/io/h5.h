/* SPDX-License-Identifier: MIT */
/* The HDF5 layer's shared pieces (built only with LT_HAVE_HDF5): the file handle, the lock,
 * HDF5's error stack turned into a status, dtype <-> HDF5 type mapping, hyperslab arithmetic. */
#ifndef LT_IO_H5_H
#define LT_IO_H5_H

#include "core/handle.h"
#include "io/atomic_file.h"
#include "tensor.h"
#include "tensor/hdf5.h"

#include <hdf5.h>

struct lt_h5_file {
  uint32_t magic; /* LT__HANDLE_H5_FILE while open: the handle tag, first as in every handle */
  hid_t fid;
  lt_h5_mode mode;
  char *path;             /* the caller's path, for messages */
  lt__atomic_file atomic; /* LT_H5_CREATE: the temporary renamed over the target on close */
};

/* Every public call holds this lock: a handle is not shared between threads mid-call, and an
 * HDF5 built without thread safety stays usable. lt__h5_enter also turns off HDF5's printing of
 * its error stack (a per-thread setting) and validates the handle, naming `who`. */
lt_status lt__h5_enter(const char *who, lt_h5_file *f);
void lt__h5_leave(void);

/* Records status with "who: what '<file>:<object>': <HDF5's messages>" and clears the HDF5
 * error stack. `object` may be NULL. */
lt_status lt__h5_fail(lt_status status, const char *who, const char *what, const lt_h5_file *f,
                      const char *object);

/* Opens the dataset at `path`; LT_ERR_INVALID_ARGUMENT naming it when there is none (or it is
 * not a dataset). */
lt_status lt__h5_open_dataset(const char *who, lt_h5_file *f, const char *path, hid_t *out);
/* True if a chain of links reaches `path` (H5Lexists alone fails on a missing group). */
bool lt__h5_exists(hid_t fid, const char *path);
/* LT_ERR_INVALID_ARGUMENT unless the file was opened for writing. */
lt_status lt__h5_check_writable(const char *who, const lt_h5_file *f);

/* Text output that reports the size it needs (snprintf's contract, for the listings). */
typedef struct lt__h5_text {
  char *buf;
  size_t cap, len;
} lt__h5_text;
/* Appends a then b (written only while everything so far fits). */
void lt__h5_text_add(lt__h5_text *t, const char *a, const char *b);
/* NUL-terminates when everything fits; *needed (may be NULL) gets the size with the NUL. A
 * buffer too small gets an empty string and the call LT_ERR_INVALID_ARGUMENT naming the size
 * (it held the entries that fitted and no NUL: a caller without `needed` read past it). */
lt_status lt__h5_text_end(lt__h5_text *t, size_t *needed, const char *who);

/* Memory type of a tensor dtype (the caller closes it), chosen from the dtype's name and size
 * so that every dtype of the table maps without a list here: "f16"/"bf16" custom floats,
 * "f32"/"f64" native floats, "iN"/"uN" native integers, "bool" h5py's enum. -1 if none. */
hid_t lt__h5_mem_type(lt_dtype dtype);
/* The tensor dtype a file type reads as (LT_DTYPE_INVALID when none), and a description of the
 * type ("f32 big-endian", "u16 (no such dtype in this build)", "compound") in desc. */
lt_dtype lt__h5_dtype_of(hid_t type, char *desc, size_t cap);
/* The dtype to move data in when the file holds `have` and the tensor is `want`: HDF5 converts
 * numbers itself, but not to or from bool (h5py's enum: core HDF5 has no number-enum path, and
 * h5py's registered one saturates to the int8 base, so 2 read as bool gave the byte 2). Those
 * move in the file's own dtype (f64 for one without an lt dtype) and libtensor converts them,
 * nonzero as true. Else `want`. */
lt_dtype lt__h5_transfer_dtype(lt_dtype have, lt_dtype want);
/* True for the type classes a tensor may be converted from/to (integer, float, bool enum). */
bool lt__h5_is_numeric(hid_t type);

/* A hyperslab: per axis a positive start/stride/count, and whether the slice ran backwards (the
 * slab then holds the elements in increasing order and the tensor is its flipped view). */
typedef struct lt__h5_slab {
  int rank;
  hsize_t start[LT_MAX_RANK], stride[LT_MAX_RANK], count[LT_MAX_RANK];
  int64_t shape[LT_MAX_RANK];
  int64_t dims[LT_MAX_RANK]; /* the dataset's extents */
  bool flip[LT_MAX_RANK];
  int64_t numel;
} lt__h5_slab;

/* Parses start/stop/step (NULLs: whole axes) against the dataspace `space` under
 * lt_view_slice's rules; messages name `who` and the axis. */
lt_status lt__h5_slab_parse(const char *who, hid_t space, int rank, const int64_t *start,
                            const int64_t *stop, const int64_t *step, lt__h5_slab *s);
/* A file dataspace (copy of `space`) with the slab selected; -1 on failure. */
hid_t lt__h5_slab_select(hid_t space, const lt__h5_slab *s);
/* A memory dataspace addressing (rank, shape, element strides) from one base address when the
 * strides nest (see h5_read.c); -1 without an HDF5 error when they do not. */
hid_t lt__h5_mem_space(int rank, const int64_t *shape, const int64_t *strides);
/* A view of t flipped along the slab's backward axes: forward slab order. */
lt_status lt__h5_flipped(const lt__h5_slab *s, const lt_tensor *t, lt_tensor **out);
/* A simple (or scalar for rank 0) dataspace of extents `shape`. */
hid_t lt__h5_space(int rank, const int64_t *shape);

#endif

/* SPDX-License-Identifier: MIT */
/* libtensor: HDF5 files — datasets in and out, hyperslabs as strided tensors, attributes.
 *
 * HDF5 support is optional at build time (CMake LT_WITH_HDF5=AUTO|ON|OFF, Debian's
 * libhdf5-dev). These functions are exported by every build, so the ABI does not depend on the
 * option: in a build without HDF5 each one returns LT_ERR_UNSUPPORTED with the message "HDF5:
 * this libtensor was built without HDF5 (LT_WITH_HDF5=OFF)", and lt_h5_available() is false.
 *
 * Dtypes: f32/f64 as IEEE floats, f16 as a 16-bit IEEE half (what h5py writes for float16), the
 * integer and bool dtypes as HDF5 integers of their size and sign (bool as an unsigned 8-bit
 * integer), bf16 as a custom 16-bit float (sign bit 15, 8-bit exponent at bit 7, bias 127,
 * 7-bit mantissa) which h5py reads as float16 values. Files may be big- or little-endian; HDF5
 * converts. Compound, string, variable-length, reference, enum, array and opaque datasets are
 * refused with LT_ERR_DTYPE naming the dataset and its type class.
 *
 * Paths are HDF5 object paths ("/a/b" or "a/b", relative to the root). Errors are returned as a
 * status with a message naming the file, the object and HDF5's own error text; HDF5 never
 * prints its error stack. Calls are serialised on one lock (HDF5 itself is one big lock).
 *
 * Writes never lose data that was there:
 * - A file opened with LT_H5_CREATE is written as a temporary beside the target and renamed
 *   over it by lt_h5_close (as lt_npy_save does); if anything fails, or the handle is never
 *   closed successfully, the old file is untouched.
 * - lt_h5_write creates the dataset under a hidden temporary name in its group, writes and
 *   flushes all of it, and only then links it under its name (replacing an existing dataset
 *   only with LT_H5_REPLACE, after the new one is complete): a failure leaves no half-written
 *   dataset under the name. HDF5 1.10 has no journal, so a crash of the process in the middle of
 *   a write into a file opened LT_H5_READ_WRITE can still corrupt that file; write to a new file
 *   (LT_H5_CREATE) when that matters.
 * - lt_h5_write_slab changes elements of an existing dataset in place (only the slab). */
#ifndef LT_TENSOR_HDF5_H
#define LT_TENSOR_HDF5_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lt_h5_file lt_h5_file;

/* How lt_h5_open opens a file. */
typedef enum lt_h5_mode {
  LT_H5_READ = 0,       /* existing file, read only */
  LT_H5_READ_WRITE = 1, /* existing file, read and write in place */
  LT_H5_CREATE = 2      /* new, empty file replacing any old one when lt_h5_close succeeds */
} lt_h5_mode;

/* Flags of lt_h5_write. */
typedef enum lt_h5_write_flags {
  LT_H5_WRITE_DEFAULT = 0,
  LT_H5_SHUFFLE = 1, /* byte-shuffle filter before compression (chunked datasets) */
  LT_H5_REPLACE = 2  /* replace an existing dataset of that name (else LT_ERR_INVALID_ARGUMENT) */
} lt_h5_write_flags;

/* Kinds of objects reported by lt_h5_stat. */
typedef enum lt_h5_kind {
  LT_H5_OTHER = 0, /* a named datatype or an unknown object */
  LT_H5_GROUP = 1,
  LT_H5_DATASET = 2
} lt_h5_kind;

/* True if this build of libtensor can read and write HDF5 files. */
LT_API bool lt_h5_available(void);

/* Opens (or, with LT_H5_CREATE, creates) an HDF5 file. LT_ERR_IO for a missing or unreadable
 * file, LT_ERR_FORMAT for a file that is not HDF5, LT_ERR_INVALID_ARGUMENT for an unknown mode,
 * LT_ERR_UNSUPPORTED without HDF5. On failure *out is NULL. */
LT_API lt_status lt_h5_open(const char *path, lt_h5_mode mode, lt_h5_file **out);
/* Flushes and closes the file (NULL: LT_OK). A file opened with LT_H5_CREATE is renamed over its
 * target here; a failure (LT_ERR_IO) leaves the old target untouched. The handle is gone either
 * way. */
LT_API lt_status lt_h5_close(lt_h5_file *f);
/* Closes the file without committing it (NULL: LT_OK): a file opened with LT_H5_CREATE is
 * deleted and its target left as it was (for an error part-way through writing it); a file
 * opened LT_H5_READ_WRITE keeps the writes already made (HDF5 writes in place) but is not
 * flushed. The handle is gone either way; LT_ERR_IO if HDF5 fails to close it. */
LT_API lt_status lt_h5_discard(lt_h5_file *f);

/* Writes the paths of every group and dataset under the root, one per line, in name order
 * (each link: an object under two names, or under a soft link, is listed under each; a link
 * that leads nowhere in this file is left out; groups reached through soft links are not
 * entered),
 * groups ending in '/' ("/a/\n/a/x\n"), NUL-terminated, into buf when cap is large enough;
 * *needed (may be NULL) gets the bytes that takes, NUL included. buf may be NULL to ask; a buf
 * too small gets an empty string and LT_ERR_INVALID_ARGUMENT (naming the size needed). */
LT_API lt_status lt_h5_list(lt_h5_file *f, char *buf, size_t cap, size_t *needed);
/* Describes the object at `path`. *kind gets its lt_h5_kind. For a dataset: *dtype the tensor
 * dtype its elements read as by default (LT_DTYPE_INVALID when there is none), *rank and shape
 * (room for LT_MAX_RANK), chunk (room for LT_MAX_RANK; zeros for a contiguous dataset), and
 * `desc` (cap bytes, may be NULL) a line such as "f32 big-endian, chunks (64, 64), filters
 * shuffle+deflate(4)" or "compound (not a tensor)". Any of dtype/rank/shape/chunk may be NULL.
 * LT_ERR_INVALID_ARGUMENT (naming the path) when nothing is there. */
LT_API lt_status lt_h5_stat(lt_h5_file *f, const char *path, int *kind, lt_dtype *dtype, int *rank,
                            int64_t *shape, int64_t *chunk, char *desc, size_t cap);

/* Reads a whole dataset into a new C-contiguous tensor on ctx (any context: OpenCL through a
 * host buffer). `dtype` LT_DTYPE_INVALID reads in the dataset's own dtype; another dtype
 * converts (HDF5's conversion: integers saturate, floats round; to or from bool libtensor's,
 * nonzero as true, NaN as true, as NumPy's astype). LT_ERR_DTYPE for a dataset
 * with no tensor dtype (the message names the dataset and its type). */
LT_API lt_status lt_h5_read(lt_h5_file *f, const char *path, lt_context *ctx, lt_dtype dtype,
                            lt_tensor **out);
/* Reads the hyperslab start:stop:step of each of the dataset's `rank` axes (rank must be the
 * dataset's; start/stop/step may each be NULL for "whole axis", "whole axis", 1). The rules are
 * lt_view_slice's: absolute positions or LT_SLICE_DEFAULT, stop may be -1 for a negative step,
 * out-of-range positions are LT_ERR_OUT_OF_RANGE, step 0 LT_ERR_INVALID_ARGUMENT. A negative
 * step reads the positive slab and returns it as a flipped view. */
LT_API lt_status lt_h5_read_slab(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                                 const int64_t *stop, const int64_t *step, lt_context *ctx,
                                 lt_dtype dtype, lt_tensor **out);
/* Reads the hyperslab (as lt_h5_read_slab; all three NULL = the whole dataset) into an existing
 * tensor `dst` of the slab's shape, converting to dst's dtype. On the CPU a view with positive
 * strides that nest (each a multiple of the next axis' extent times its stride) is filled
 * directly through an HDF5 memory hyperslab, without an intermediate copy; other layouts and
 * devices go through a contiguous host buffer. A slab with steps is read as its dense bounding
 * box in blocks of at most 16 MiB, thinned in memory (HDF5 gathers single elements many times
 * slower), while that box holds at most 64 times the slab's elements. LT_ERR_SHAPE_MISMATCH names
 * both shapes; LT_ERR_ALIASING for a dst whose elements overlap (zero strides). */
LT_API lt_status lt_h5_read_into(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                                 const int64_t *stop, const int64_t *step, lt_tensor *dst);

/* Writes tensor t (any layout, dtype and context) as a new dataset at `path`, creating missing
 * groups. `chunks` (t's rank entries, each >= 1; NULL = contiguous, or an automatic chunk shape
 * when a filter is asked for) chunks the dataset; gzip_level 1-9 adds the deflate filter (0 = no
 * compression); flags is an OR of lt_h5_write_flags. Written atomically (see the top of this
 * file). LT_ERR_INVALID_ARGUMENT for an existing object without LT_H5_REPLACE, a bad chunk
 * shape or level, a file opened LT_H5_READ. Size-0 datasets are written contiguous. */
LT_API lt_status lt_h5_write(lt_h5_file *f, const char *path, const lt_tensor *t,
                             const int64_t *chunks, int gzip_level, uint32_t flags);
/* Writes t into the hyperslab start:stop:step (as lt_h5_read_slab; negative steps allowed) of
 * an existing dataset, converting to the dataset's type (as lt_h5_read converts). t's shape
 * must equal the slab's
 * (LT_ERR_SHAPE_MISMATCH). */
LT_API lt_status lt_h5_write_slab(lt_h5_file *f, const char *path, int rank, const int64_t *start,
                                  const int64_t *stop, const int64_t *step, const lt_tensor *t);

/* Attributes of the object at `path` ("/" for the root). Setting replaces an existing attribute
 * of that name. */
LT_API lt_status lt_h5_attr_set_double(lt_h5_file *f, const char *path, const char *name,
                                       double value);
LT_API lt_status lt_h5_attr_set_int64(lt_h5_file *f, const char *path, const char *name,
                                      int64_t value);
/* Stores a UTF-8 string attribute (variable length, as h5py writes a str). */
LT_API lt_status lt_h5_attr_set_string(lt_h5_file *f, const char *path, const char *name,
                                       const char *value);
/* Reads a numeric scalar (or one-element) attribute as double. LT_ERR_DTYPE for a string or
 * another non-numeric one; LT_ERR_INVALID_ARGUMENT when there is no such attribute. */
LT_API lt_status lt_h5_attr_get_double(lt_h5_file *f, const char *path, const char *name,
                                       double *value);
/* Reads an integer scalar attribute exactly (LT_ERR_DTYPE for floats and strings,
 * LT_ERR_OUT_OF_RANGE for an unsigned value past INT64_MAX). */
LT_API lt_status lt_h5_attr_get_int64(lt_h5_file *f, const char *path, const char *name,
                                      int64_t *value);
/* Copies a string attribute (fixed or variable length) into buf when cap is large enough;
 * *needed (may be NULL) gets its length plus one (buf NULL asks; a buf too small gets an empty
 * string and LT_ERR_INVALID_ARGUMENT). LT_ERR_DTYPE for a non-string attribute. */
LT_API lt_status lt_h5_attr_get_string(lt_h5_file *f, const char *path, const char *name, char *buf,
                                       size_t cap, size_t *needed);
/* Names of the attributes of the object at `path`, one per line, as lt_h5_list writes. A line
 * starts with "s " for a string, "i " for an integer, "f " for a float, "? " for other kinds. */
LT_API lt_status lt_h5_attr_list(lt_h5_file *f, const char *path, char *buf, size_t cap,
                                 size_t *needed);

#ifdef __cplusplus
}
#endif
#endif

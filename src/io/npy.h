/* SPDX-License-Identifier: MIT */
/* The .npy header: parsing untrusted bytes into a checked description, and formatting one. */
#ifndef LT_IO_NPY_H
#define LT_IO_NPY_H

#include "tensor.h"

/* Largest header (dict) the parser accepts. NumPy itself writes a few hundred bytes even for
 * rank 64; anything far bigger is a corrupt or hostile file, not a tensor. */
#define LT__NPY_MAX_HEADER 65536
/* Room for a header written by lt__npy_format_header (rank 64, 20-digit extents). */
#define LT__NPY_FORMAT_CAP 4096

typedef struct lt__npy_header {
  lt_dtype dtype;
  bool swap;    /* the file's byte order differs from the host's */
  bool fortran; /* elements are stored in Fortran (column-major) order */
  int rank;
  int64_t shape[LT_MAX_RANK];
  int64_t numel;
  size_t data_offset; /* bytes from the start of the file to the first element */
  size_t data_bytes;  /* numel * element size, exactly what follows the header */
} lt__npy_header;

/* Room for the preamble (magic, version, length) and the largest accepted header. */
#define LT__NPY_MAX_PREFIX (12 + LT__NPY_MAX_HEADER)

/* Parses and validates the preamble and header dict at the start of `bytes` (`size` bytes are
 * available: the whole stream, or at least its first LT__NPY_MAX_PREFIX bytes). Every failure
 * is LT_ERR_FORMAT with a message naming what is wrong and where. */
lt_status lt__npy_parse_header(const unsigned char *bytes, size_t size, lt__npy_header *out);

/* LT_ERR_FORMAT unless exactly h->data_bytes bytes (`have`) follow the header. */
lt_status lt__npy_check_data_size(const lt__npy_header *h, uint64_t have);
/* LT_ERR_FORMAT for a stream with more than h->data_bytes bytes after the header (how many more
 * is not known: reading stopped at the first). */
lt_status lt__npy_trailing_data(const lt__npy_header *h);

/* Writes a version 1.0 little-endian C-order header for dtype/shape into buf (capacity
 * LT__NPY_FORMAT_CAP), padded so the data starts on a 64-byte boundary; *len is its size.
 * LT_ERR_DTYPE for dtypes without a .npy code (bf16). */
lt_status lt__npy_format_header(lt_dtype dtype, int rank, const int64_t *shape, char *buf,
                                size_t *len);

/* True if the host stores integers little-endian. */
bool lt__host_is_little_endian(void);

#endif

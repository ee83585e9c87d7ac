/* SPDX-License-Identifier: MIT */
/* Writing a file so that a failure never loses what was there: every writer of the library
 * (.npy, HDF5, the CLI's -o) goes through this.
 *
 * A regular (or not yet existing) target is written as a temporary file in the same folder,
 * flushed, and renamed over the target only when everything was written: on any failure the old
 * file is untouched and the temporary removed. A target that exists and is not a regular file
 * (a character device, a FIFO, a socket) is opened and written directly, and never unlinked.
 * A symbolic link is followed: the file it points to is replaced, the link stays. */
#ifndef LT_IO_ATOMIC_FILE_H
#define LT_IO_ATOMIC_FILE_H

#include "tensor.h"

#include <stddef.h>

typedef struct lt__atomic_file {
  int fd;           /* where to write */
  bool direct;      /* writing the target itself (not a regular file) */
  char *target;     /* owned: the path renamed onto (symlinks resolved) */
  char *temp;       /* owned: the temporary's path; NULL when direct */
  const char *path; /* the caller's path, for messages */
} lt__atomic_file;

/* Opens `path` for writing as described above. LT_ERR_IO (naming `who` and the path, with the
 * system's reason) when the temporary or the target cannot be created. */
lt_status lt__atomic_open(const char *who, const char *path, lt__atomic_file *f);

/* Writes all `n` bytes (retrying short writes and EINTR); LT_ERR_IO on failure. */
lt_status lt__atomic_write(lt__atomic_file *f, const char *who, const void *data, size_t n);

/* Closes and, for a temporary, renames it over the target; with LT_SAVE_FSYNC the data (and the
 * folder entry) reach the disk first. On failure the temporary is removed and the target is as
 * it was. Frees f's paths either way. */
lt_status lt__atomic_commit(lt__atomic_file *f, const char *who, unsigned flags);

/* Gives up: closes, removes the temporary (never a direct target), frees f's paths. */
void lt__atomic_abort(lt__atomic_file *f);

#endif

/* SPDX-License-Identifier: MIT */
/* Writes that never lose the previous file (see atomic_file.h). */
#include "io/atomic_file.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static lt_status io_error(const char *who, const char *what, const char *path, int err) {
  return lt__error(LT_ERR_IO, "%s: cannot %s '%s': %s", who, what, path, strerror(err));
}

/* The target a rename must replace: a symbolic link's final file, so that the link survives. */
static char *resolve_target(const char *path) {
  struct stat l;
  if (lstat(path, &l) == 0 && S_ISLNK(l.st_mode)) {
    char *real = realpath(path, NULL);
    if (real) return real;
  }
  return strdup(path);
}

/* "<folder>/.<name>.<pid>-<n>.tmp": hidden, beside the target (rename works within one file
 * system only), and unique per process and attempt. */
static char *temp_name(const char *target, unsigned n) {
  char *a = strdup(target), *b = strdup(target);
  char *out = NULL;
  if (a && b) {
    const char *dir = dirname(a), *base = basename(b);
    size_t len = strlen(dir) + strlen(base) + 48;
    out = malloc(len);
    if (out) snprintf(out, len, "%s/.%s.%ld-%u.tmp", dir, base, (long)getpid(), n);
  }
  free(a);
  free(b);
  return out;
}

lt_status lt__atomic_open(const char *who, const char *path, lt__atomic_file *f) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->path = path;
  struct stat st;
  bool exists = stat(path, &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    /* A device or FIFO is written in place: there is no file to replace, and unlinking a
     * device node would take it away from the whole system. */
    LT_RETURN_IF(S_ISDIR(st.st_mode), LT_ERR_IO, "%s: cannot write '%s': it is a directory", who,
                 path);
    f->direct = true;
    f->fd = open(path, O_WRONLY | O_CLOEXEC);
    if (f->fd < 0) return io_error(who, "open", path, errno);
    return LT_OK;
  }
  f->target = resolve_target(path);
  LT_RETURN_IF(f->target == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
  static atomic_uint counter;
  int err = 0;
  for (int attempt = 0; attempt < 100 && f->fd < 0; attempt++) {
    free(f->temp);
    f->temp = temp_name(f->target, atomic_fetch_add(&counter, 1));
    if (f->temp == NULL) {
      lt__atomic_abort(f);
      return lt__error(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    /* 0666 under the umask, as a plain fopen would create the file. */
    f->fd = open(f->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    err = errno;
    if (f->fd < 0 && err != EEXIST) break;
  }
  if (f->fd < 0) {
    lt_status s = lt__error(LT_ERR_IO,
                            "%s: cannot create '%s' (writing through a temporary "
                            "file beside it): %s",
                            who, path, strerror(err));
    lt__atomic_abort(f);
    return s;
  }
  if (exists) {
    /* The replacement keeps the old file's permissions and (where allowed) its owner. */
    if (fchown(f->fd, st.st_uid, st.st_gid) != 0) { /* not ours to change: keep ours */
    }
    if (fchmod(f->fd, st.st_mode & 07777) != 0) { /* keep the umask's mode */
    }
  }
  return LT_OK;
}

lt_status lt__atomic_write(lt__atomic_file *f, const char *who, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t k = write(f->fd, p, n > (1u << 30) ? (1u << 30) : n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return io_error(who, "write", f->path, k < 0 ? errno : EIO);
    p += k;
    n -= (size_t)k;
  }
  return LT_OK;
}

static void sync_folder(const char *target) {
  char *copy = strdup(target);
  if (copy == NULL) return;
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  free(copy);
}

lt_status lt__atomic_commit(lt__atomic_file *f, const char *who, unsigned flags) {
  lt_status st = LT_OK;
  if ((flags & LT_SAVE_FSYNC) && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
    st = io_error(who, "sync", f->path, errno);
  int fd = f->fd;
  f->fd = -1;
  if (close(fd) != 0 && st == LT_OK) st = io_error(who, "write", f->path, errno);
  if (st == LT_OK && !f->direct && rename(f->temp, f->target) != 0)
    st = io_error(who, "replace", f->path, errno);
  if (st == LT_OK && !f->direct) {
    if (flags & LT_SAVE_FSYNC) sync_folder(f->target);
    free(f->temp);
    f->temp = NULL; /* renamed: nothing to remove */
  }
  lt__atomic_abort(f);
  return st;
}

void lt__atomic_abort(lt__atomic_file *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (f->temp && !f->direct) unlink(f->temp);
  free(f->temp);
  free(f->target);
  f->temp = f->target = NULL;
}

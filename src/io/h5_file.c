/* SPDX-License-Identifier: MIT */
/* HDF5 files: open/close (atomic creation), the lock, errors from HDF5's stack, listing. */
#include "core/error.h"
#include "io/h5.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

bool lt_h5_available(void) { return true; }

lt_status lt__h5_enter(const char *who, lt_h5_file *f) {
  /* a closed file's block sits in the handle quarantine (lt_h5_close), so its tag is readable */
  pthread_mutex_lock(&h5_lock);
  lt_status st = lt__handle_check(f, LT__HANDLE_H5_FILE, who, "file");
  if (st != LT_OK) {
    pthread_mutex_unlock(&h5_lock);
    return st;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return LT_OK;
}

void lt__h5_leave(void) { pthread_mutex_unlock(&h5_lock); }

typedef struct stack_text {
  char buf[512];
  size_t len;
  int n;
} stack_text;

/* Keeps the descriptions of the innermost few entries (the specific causes), most specific
 * last, skipping repeats. */
static herr_t collect(unsigned n, const H5E_error2_t *e, void *data) {
  stack_text *s = data;
  if (e->desc == NULL || e->desc[0] == '\0' || strstr(s->buf, e->desc)) return 0;
  if (s->n == 3) return 0;
  int k = snprintf(s->buf + s->len, sizeof s->buf - s->len, "%s%s", s->n ? "; " : "", e->desc);
  if (k > 0) s->len = s->len + (size_t)k < sizeof s->buf ? s->len + (size_t)k : sizeof s->buf - 1;
  s->n++;
  return 0;
}

lt_status lt__h5_fail(lt_status status, const char *who, const char *what, const lt_h5_file *f,
                      const char *object) {
  stack_text s = {.len = 0, .n = 0};
  s.buf[0] = '\0';
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &s);
  H5Eclear2(H5E_DEFAULT);
  return lt__error(status, "%s: %s '%s%s%s'%s%s", who, what, f ? f->path : "", object ? ":" : "",
                   object ? object : "", s.n ? ": HDF5: " : "", s.buf);
}

lt_status lt__h5_check_writable(const char *who, const lt_h5_file *f) {
  LT_RETURN_IF(f->mode == LT_H5_READ, LT_ERR_INVALID_ARGUMENT,
               "%s: '%s' was opened read-only (LT_H5_READ)", who, f->path);
  return LT_OK;
}

bool lt__h5_exists(hid_t fid, const char *path) {
  if (strcmp(path, "/") == 0 || path[0] == '\0') return true;
  char *copy = strdup(path);
  if (copy == NULL) return false;
  bool ok = true;
  for (char *p = copy + 1; ok; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    ok = H5Lexists(fid, copy, H5P_DEFAULT) > 0;
    *p = c;
    if (c == '\0') break;
  }
  free(copy);
  H5Eclear2(H5E_DEFAULT);
  return ok;
}

lt_status lt__h5_open_dataset(const char *who, lt_h5_file *f, const char *path, hid_t *out) {
  LT_RETURN_IF(path == NULL, LT_ERR_NULL_POINTER, "%s: path is NULL", who);
  LT_RETURN_IF(!lt__h5_exists(f->fid, path), LT_ERR_INVALID_ARGUMENT, "%s: no object '%s' in '%s'",
               who, path, f->path);
  H5O_info_t info;
  if (H5Oget_info_by_name(f->fid, path, &info, H5P_DEFAULT) < 0)
    return lt__h5_fail(LT_ERR_FORMAT, who, "cannot read", f, path);
  LT_RETURN_IF(info.type != H5O_TYPE_DATASET, LT_ERR_INVALID_ARGUMENT,
               "%s: '%s' in '%s' is not a dataset", who, path, f->path);
  *out = H5Dopen2(f->fid, path, H5P_DEFAULT);
  if (*out < 0) return lt__h5_fail(LT_ERR_FORMAT, who, "cannot open dataset", f, path);
  return LT_OK;
}

/* Why a path cannot be opened, from the system (missing, permissions), before HDF5 tries. */
static lt_status check_readable(const char *path, bool write) {
  int fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  LT_RETURN_IF(fd < 0, LT_ERR_IO, "lt_h5_open: cannot open '%s': %s", path, strerror(errno));
  close(fd);
  return LT_OK;
}

static lt_status open_file(lt_h5_file *f, const char *path, lt_h5_mode mode) {
  if (mode == LT_H5_CREATE) {
    LT_TRY(lt__atomic_open("lt_h5_open", path, &f->atomic));
    /* A device or FIFO cannot hold an HDF5 file, which is written with seeks. */
    if (f->atomic.direct) {
      lt__atomic_abort(&f->atomic);
      return lt__error(LT_ERR_IO, "lt_h5_open: cannot create '%s': not a regular file", path);
    }
    f->fid = H5Fcreate(f->atomic.temp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f->fid < 0) {
      lt_status st = lt__h5_fail(LT_ERR_IO, "lt_h5_open", "cannot create", f, NULL);
      lt__atomic_abort(&f->atomic);
      return st;
    }
    return LT_OK;
  }
  LT_TRY(check_readable(path, mode == LT_H5_READ_WRITE));
  htri_t is = H5Fis_hdf5(path);
  H5Eclear2(H5E_DEFAULT);
  LT_RETURN_IF(is <= 0, LT_ERR_FORMAT, "lt_h5_open: '%s' is not an HDF5 file (no signature)", path);
  f->fid = H5Fopen(path, mode == LT_H5_READ ? H5F_ACC_RDONLY : H5F_ACC_RDWR, H5P_DEFAULT);
  if (f->fid < 0) return lt__h5_fail(LT_ERR_FORMAT, "lt_h5_open", "cannot open", f, NULL);
  return LT_OK;
}

lt_status lt_h5_open(const char *path, lt_h5_mode mode, lt_h5_file **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_CHECK_NULL(path, "path");
  LT_RETURN_IF(mode != LT_H5_READ && mode != LT_H5_READ_WRITE && mode != LT_H5_CREATE,
               LT_ERR_INVALID_ARGUMENT, "lt_h5_open: unknown mode %d", (int)mode);
  lt_h5_file *f = calloc(1, sizeof *f);
  LT_RETURN_IF(f == NULL, LT_ERR_OUT_OF_MEMORY, "lt_h5_open: out of memory");
  f->path = strdup(path);
  f->fid = -1;
  f->atomic.fd = -1;
  f->mode = mode;
  if (f->path == NULL) {
    free(f);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "lt_h5_open: out of memory");
  }
  pthread_mutex_lock(&h5_lock);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  lt_status st = open_file(f, path, mode);
  pthread_mutex_unlock(&h5_lock);
  if (st != LT_OK) {
    free(f->path);
    free(f);
    return st;
  }
  f->magic = LT__HANDLE_H5_FILE;
  *out = f;
  return LT_OK;
}

/* Closes f; `keep` commits a created file over its target, else the new file is dropped. */
static lt_status close_file(lt_h5_file *f, bool keep, const char *who) {
  if (f == NULL) return LT_OK;
  LT_TRY(lt__h5_enter(who, f));
  lt__handle_kill(f, LT__HANDLE_H5_FILE);
  lt_status st = LT_OK;
  if (keep && f->mode != LT_H5_READ && H5Fflush(f->fid, H5F_SCOPE_LOCAL) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot flush", f, NULL);
  if (H5Fclose(f->fid) < 0 && st == LT_OK)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot close", f, NULL);
  lt__h5_leave();
  if (f->mode == LT_H5_CREATE) {
    if (st == LT_OK && keep)
      st = lt__atomic_commit(&f->atomic, who, LT_SAVE_DEFAULT);
    else
      lt__atomic_abort(&f->atomic);
  }
  free(f->path);
  f->path = NULL;
  /* quarantined, not freed: a second close or a later call reads "already destroyed" */
  lt__handle_retire(f);
  return st;
}

lt_status lt_h5_close(lt_h5_file *f) { return close_file(f, true, "lt_h5_close"); }

lt_status lt_h5_discard(lt_h5_file *f) { return close_file(f, false, "lt_h5_discard"); }

void lt__h5_text_add(lt__h5_text *t, const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (t->buf && t->len + la + lb + 1 <= t->cap) {
    memcpy(t->buf + t->len, a, la);
    memcpy(t->buf + t->len + la, b, lb);
  }
  t->len += la + lb;
}

/* Every link, not every object: an object reached by two hard links, or by a soft link, is
 * listed under each name (H5Ovisit gave each object once, under its first name, and no soft
 * link). A link that leads nowhere here (dangling, external) is left out. */
static herr_t visit(hid_t group, const char *name, const H5L_info_t *link, void *data) {
  (void)link;
  H5O_info_t info;
  if (H5Oget_info_by_name(group, name, &info, H5P_DEFAULT) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  lt__h5_text_add(data, "/", name);
  lt__h5_text_add(data, info.type == H5O_TYPE_GROUP ? "/\n" : "\n", "");
  return 0;
}

lt_status lt__h5_text_end(lt__h5_text *t, size_t *needed, const char *who) {
  if (needed) *needed = t->len + 1;
  if (t->buf == NULL) return LT_OK; /* a call that asks the size */
  if (t->len + 1 <= t->cap) {
    t->buf[t->len] = '\0';
    return LT_OK;
  }
  if (t->cap > 0) t->buf[0] = '\0';
  return lt__error(LT_ERR_INVALID_ARGUMENT,
                   "%s: buf holds %zu bytes but the text needs %zu (pass buf NULL to ask)", who,
                   t->cap, t->len + 1);
}

lt_status lt_h5_list(lt_h5_file *f, char *buf, size_t cap, size_t *needed) {
  LT_TRY(lt__h5_enter("lt_h5_list", f));
  lt__h5_text t = {buf, cap, 0};
  lt_status st = LT_OK;
  if (H5Lvisit(f->fid, H5_INDEX_NAME, H5_ITER_INC, visit, &t) < 0)
    st = lt__h5_fail(LT_ERR_FORMAT, "lt_h5_list", "cannot list", f, NULL);
  else
    st = lt__h5_text_end(&t, needed, "lt_h5_list");
  lt__h5_leave();
  return st;
}

/* "chunks (64, 64), filters shuffle+deflate(4)" of a dataset creation property list. */
static void describe_layout(hid_t dcpl, int rank, int64_t *chunk, char *desc, size_t cap) {
  size_t len = strlen(desc);
  hsize_t dims[LT_MAX_RANK];
  bool chunked = H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, dims) == rank;
  for (int i = 0; i < rank && chunk; i++)
    chunk[i] = chunked ? (int64_t)dims[i] : 0;
  len += (size_t)snprintf(desc + len, cap - len, chunked ? ", chunks (" : ", contiguous");
  for (int i = 0; chunked && i < rank && len < cap; i++)
    len += (size_t)snprintf(desc + len, cap - len, "%s%llu", i ? ", " : "",
                            (unsigned long long)dims[i]);
  if (chunked && len < cap) len += (size_t)snprintf(desc + len, cap - len, ")");
  int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n && len < cap; i++) {
    unsigned flags, values[8], config;
    size_t nv = 8;
    char name[64] = "";
    H5Z_filter_t id =
        H5Pget_filter2(dcpl, (unsigned)i, &flags, &nv, values, sizeof name, name, &config);
    const char *label = id == H5Z_FILTER_DEFLATE      ? "deflate"
                        : id == H5Z_FILTER_SHUFFLE    ? "shuffle"
                        : id == H5Z_FILTER_FLETCHER32 ? "fletcher32"
                        : name[0]                     ? name
                                                      : "filter";
    len += (size_t)snprintf(desc + len, cap - len, "%s%s", i ? "+" : ", filters ", label);
    if (id == H5Z_FILTER_DEFLATE && nv > 0 && len < cap)
      len += (size_t)snprintf(desc + len, cap - len, "(%u)", values[0]);
  }
}

static lt_status stat_dataset(lt_h5_file *f, const char *path, lt_dtype *dtype, int *rank,
                              int64_t *shape, int64_t *chunk, char *desc, size_t cap) {
  hid_t d;
  LT_TRY(lt__h5_open_dataset("lt_h5_stat", f, path, &d));
  char text[512] = "";
  hid_t type = H5Dget_type(d), space = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
  lt_status st = LT_OK;
  int r = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
  if (type < 0 || dcpl < 0 || r < 0 || r > LT_MAX_RANK) {
    st = r > LT_MAX_RANK ? lt__error(LT_ERR_UNSUPPORTED, "lt_h5_stat: '%s' has rank %d", path, r)
                         : lt__h5_fail(LT_ERR_FORMAT, "lt_h5_stat", "cannot describe", f, path);
  } else {
    hsize_t dims[LT_MAX_RANK];
    H5Sget_simple_extent_dims(space, dims, NULL);
    lt_dtype dt = lt__h5_dtype_of(type, text, sizeof text);
    if (dtype) *dtype = dt;
    if (rank) *rank = r;
    for (int i = 0; i < r && shape; i++)
      shape[i] = (int64_t)dims[i];
    describe_layout(dcpl, r, chunk, text, sizeof text);
    if (desc && cap) snprintf(desc, cap, "%s", text);
  }
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Dclose(d);
  return st;
}

lt_status lt_h5_stat(lt_h5_file *f, const char *path, int *kind, lt_dtype *dtype, int *rank,
                     int64_t *shape, int64_t *chunk, char *desc, size_t cap) {
  LT_TRY(lt__h5_enter("lt_h5_stat", f));
  lt_status st = LT_OK;
  H5O_info_t info;
  if (path == NULL) {
    st = lt__error(LT_ERR_NULL_POINTER, "lt_h5_stat: path is NULL");
  } else if (!lt__h5_exists(f->fid, path)) {
    st = lt__error(LT_ERR_INVALID_ARGUMENT, "lt_h5_stat: no object '%s' in '%s'", path, f->path);
  } else if (H5Oget_info_by_name(f->fid, path, &info, H5P_DEFAULT) < 0) {
    st = lt__h5_fail(LT_ERR_FORMAT, "lt_h5_stat", "cannot read", f, path);
  } else {
    if (kind)
      *kind = info.type == H5O_TYPE_GROUP     ? LT_H5_GROUP
              : info.type == H5O_TYPE_DATASET ? LT_H5_DATASET
                                              : LT_H5_OTHER;
    if (info.type == H5O_TYPE_DATASET)
      st = stat_dataset(f, path, dtype, rank, shape, chunk, desc, cap);
    else if (desc && cap)
      snprintf(desc, cap, "%s", info.type == H5O_TYPE_GROUP ? "group" : "other object");
  }
  lt__h5_leave();
  return st;
}

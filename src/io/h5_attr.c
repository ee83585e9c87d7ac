/* SPDX-License-Identifier: MIT */
/* Scalar and string attributes of groups and datasets. */
#include "core/error.h"
#include "io/h5.h"

#include <stdlib.h>
#include <string.h>

/* Opens the object at path (any kind); the caller closes it with H5Oclose. */
static lt_status open_object(const char *who, lt_h5_file *f, const char *path, const char *name,
                             hid_t *out) {
  LT_RETURN_IF(path == NULL || name == NULL, LT_ERR_NULL_POINTER, "%s: %s is NULL", who,
               path ? "name" : "path");
  LT_RETURN_IF(!lt__h5_exists(f->fid, path), LT_ERR_INVALID_ARGUMENT, "%s: no object '%s' in '%s'",
               who, path, f->path);
  *out = H5Oopen(f->fid, path, H5P_DEFAULT);
  if (*out < 0) return lt__h5_fail(LT_ERR_FORMAT, who, "cannot open", f, path);
  return LT_OK;
}

/* Writes one attribute of `type` from `value`, replacing one of the same name. */
static lt_status set_attr(const char *who, lt_h5_file *f, const char *path, const char *name,
                          hid_t type, const void *value) {
  LT_TRY(lt__h5_enter(who, f));
  hid_t obj = -1, space = -1, attr = -1;
  lt_status st = lt__h5_check_writable(who, f);
  if (st == LT_OK) st = open_object(who, f, path, name, &obj);
  if (st == LT_OK && H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
    st = lt__h5_fail(LT_ERR_IO, who, "cannot replace an attribute of", f, path);
  if (st == LT_OK && ((space = H5Screate(H5S_SCALAR)) < 0 ||
                      (attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
                      H5Awrite(attr, type, value) < 0))
    st = lt__h5_fail(LT_ERR_IO, who, "cannot write an attribute of", f, path);
  if (attr >= 0) H5Aclose(attr);
  if (space >= 0) H5Sclose(space);
  if (obj >= 0) H5Oclose(obj);
  lt__h5_leave();
  return st;
}

lt_status lt_h5_attr_set_double(lt_h5_file *f, const char *path, const char *name, double value) {
  return set_attr("lt_h5_attr_set_double", f, path, name, H5T_NATIVE_DOUBLE, &value);
}

lt_status lt_h5_attr_set_int64(lt_h5_file *f, const char *path, const char *name, int64_t value) {
  return set_attr("lt_h5_attr_set_int64", f, path, name, H5T_NATIVE_INT64, &value);
}

/* Variable-length UTF-8, as h5py writes a str (and reads it back as str, not bytes). */
lt_status lt_h5_attr_set_string(lt_h5_file *f, const char *path, const char *name,
                                const char *value) {
  LT_RETURN_IF(value == NULL, LT_ERR_NULL_POINTER, "lt_h5_attr_set_string: value is NULL");
  hid_t type = H5Tcopy(H5T_C_S1);
  LT_RETURN_IF(type < 0, LT_ERR_OUT_OF_MEMORY, "lt_h5_attr_set_string: out of memory");
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  lt_status st = set_attr("lt_h5_attr_set_string", f, path, name, type, &value);
  H5Tclose(type);
  return st;
}

/* The attribute and its type, opened; LT_ERR_INVALID_ARGUMENT when there is none. */
typedef struct attr_open {
  hid_t obj, attr, type, space;
} attr_open;

static void attr_close(attr_open *a) {
  if (a->space >= 0) H5Sclose(a->space);
  if (a->type >= 0) H5Tclose(a->type);
  if (a->attr >= 0) H5Aclose(a->attr);
  if (a->obj >= 0) H5Oclose(a->obj);
}

static lt_status attr_open_named(const char *who, lt_h5_file *f, const char *path, const char *name,
                                 attr_open *a) {
  *a = (attr_open){-1, -1, -1, -1};
  LT_TRY(open_object(who, f, path, name, &a->obj));
  LT_RETURN_IF(H5Aexists(a->obj, name) <= 0, LT_ERR_INVALID_ARGUMENT,
               "%s: '%s' in '%s' has no attribute '%s'", who, path, f->path, name);
  if ((a->attr = H5Aopen(a->obj, name, H5P_DEFAULT)) < 0 || (a->type = H5Aget_type(a->attr)) < 0 ||
      (a->space = H5Aget_space(a->attr)) < 0)
    return lt__h5_fail(LT_ERR_FORMAT, who, "cannot read an attribute of", f, path);
  return LT_OK;
}

/* Reads a one-element numeric attribute as `memtype`; `classes` says which type classes are
 * accepted (integers only for the exact int64 read). */
static lt_status get_number(const char *who, lt_h5_file *f, const char *path, const char *name,
                            hid_t memtype, bool integers_only, void *out) {
  LT_RETURN_IF(out == NULL, LT_ERR_NULL_POINTER, "%s: value is NULL", who);
  LT_TRY(lt__h5_enter(who, f));
  attr_open a;
  lt_status st = attr_open_named(who, f, path, name, &a);
  if (st == LT_OK) {
    H5T_class_t c = H5Tget_class(a.type);
    bool ok = c == H5T_INTEGER || (!integers_only && c == H5T_FLOAT);
    if (!ok || H5Sget_simple_extent_npoints(a.space) != 1)
      st = lt__error(LT_ERR_DTYPE, "%s: attribute '%s' of '%s' is not a%s scalar", who, name, path,
                     integers_only ? "n integer" : " numeric");
    else if (integers_only && H5Tget_sign(a.type) == H5T_SGN_NONE && H5Tget_size(a.type) >= 8) {
      /* read as u64: HDF5 saturates a u64 past INT64_MAX into int64 without a word */
      uint64_t u;
      if (H5Aread(a.attr, H5T_NATIVE_UINT64, &u) < 0)
        st = lt__h5_fail(LT_ERR_FORMAT, who, "cannot read an attribute of", f, path);
      else if (u > (uint64_t)INT64_MAX)
        st = lt__error(LT_ERR_OUT_OF_RANGE,
                       "%s: attribute '%s' of '%s' is %llu, which an int64 cannot hold", who, name,
                       path, (unsigned long long)u);
      else
        *(int64_t *)out = (int64_t)u;
    } else if (H5Aread(a.attr, memtype, out) < 0)
      st = lt__h5_fail(LT_ERR_FORMAT, who, "cannot read an attribute of", f, path);
  }
  attr_close(&a);
  lt__h5_leave();
  return st;
}

lt_status lt_h5_attr_get_double(lt_h5_file *f, const char *path, const char *name, double *value) {
  return get_number("lt_h5_attr_get_double", f, path, name, H5T_NATIVE_DOUBLE, false, value);
}

lt_status lt_h5_attr_get_int64(lt_h5_file *f, const char *path, const char *name, int64_t *value) {
  return get_number("lt_h5_attr_get_int64", f, path, name, H5T_NATIVE_INT64, true, value);
}

/* The string of a scalar string attribute, fixed or variable length, in a malloc'ed copy. */
static lt_status read_string(const char *who, lt_h5_file *f, const char *path, attr_open *a,
                             char **out) {
  *out = NULL;
  LT_RETURN_IF(H5Tget_class(a->type) != H5T_STRING || H5Sget_simple_extent_npoints(a->space) != 1,
               LT_ERR_DTYPE, "%s: the attribute is not a scalar string", who);
  if (H5Tis_variable_str(a->type) > 0) {
    char *vs = NULL;
    hid_t mem = H5Tget_native_type(a->type, H5T_DIR_DEFAULT);
    herr_t e = mem < 0 ? -1 : H5Aread(a->attr, mem, &vs);
    if (mem >= 0) H5Tclose(mem);
    if (e < 0) return lt__h5_fail(LT_ERR_FORMAT, who, "cannot read an attribute of", f, path);
    *out = strdup(vs ? vs : "");
    if (vs) H5free_memory(vs);
  } else {
    size_t n = H5Tget_size(a->type);
    *out = calloc(n + 1, 1);
    if (*out && H5Aread(a->attr, a->type, *out) < 0) {
      free(*out);
      *out = NULL;
      return lt__h5_fail(LT_ERR_FORMAT, who, "cannot read an attribute of", f, path);
    }
  }
  LT_RETURN_IF(*out == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
  return LT_OK;
}

lt_status lt_h5_attr_get_string(lt_h5_file *f, const char *path, const char *name, char *buf,
                                size_t cap, size_t *needed) {
  const char *who = "lt_h5_attr_get_string";
  LT_TRY(lt__h5_enter(who, f));
  attr_open a;
  char *s = NULL;
  lt_status st = attr_open_named(who, f, path, name, &a);
  if (st == LT_OK) st = read_string(who, f, path, &a, &s);
  if (st == LT_OK) {
    lt__h5_text t = {buf, cap, 0};
    lt__h5_text_add(&t, s, "");
    st = lt__h5_text_end(&t, needed, who);
  }
  free(s);
  attr_close(&a);
  lt__h5_leave();
  return st;
}

static herr_t list_one(hid_t obj, const char *name, const H5A_info_t *info, void *data) {
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t type = attr < 0 ? -1 : H5Aget_type(attr);
  H5T_class_t c = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
  lt__h5_text_add(data,
                  c == H5T_STRING    ? "s "
                  : c == H5T_INTEGER ? "i "
                  : c == H5T_FLOAT   ? "f "
                                     : "? ",
                  name);
  lt__h5_text_add(data, "\n", "");
  if (type >= 0) H5Tclose(type);
  if (attr >= 0) H5Aclose(attr);
  return 0;
}

lt_status lt_h5_attr_list(lt_h5_file *f, const char *path, char *buf, size_t cap, size_t *needed) {
  const char *who = "lt_h5_attr_list";
  LT_TRY(lt__h5_enter(who, f));
  hid_t obj = -1;
  lt_status st = open_object(who, f, path, "", &obj);
  lt__h5_text t = {buf, cap, 0};
  hsize_t idx = 0;
  if (st == LT_OK && H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, list_one, &t) < 0)
    st = lt__h5_fail(LT_ERR_FORMAT, who, "cannot list the attributes of", f, path);
  if (st == LT_OK) st = lt__h5_text_end(&t, needed, who);
  if (obj >= 0) H5Oclose(obj);
  lt__h5_leave();
  return st;
}

/* SPDX-License-Identifier: MIT */
/* .npy header parsing and formatting. Nothing read from the file is trusted: every length,
 * extent and size is range- and overflow-checked before it is used. */
#include "io/npy.h"

#include "core/checked.h"
#include "core/error.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

bool lt__host_is_little_endian(void) {
  uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* ---- the header dict: a Python literal like {'descr': '<f4', 'fortran_order': False,
 * 'shape': (2, 3), } ---- */

typedef struct cursor {
  const char *start, *p, *end;
} cursor;

/* A printable excerpt of the header at the cursor, for error messages. */
static const char *excerpt(const cursor *c, char buf[24]) {
  size_t n = 0;
  for (const char *q = c->p; q < c->end && n < 16; q++)
    buf[n++] = isprint((unsigned char)*q) ? *q : '?';
  buf[n] = '\0';
  return n ? buf : "<end of header>";
}

static lt_status dict_error(const cursor *c, const char *what) {
  char buf[24];
  return lt__error(LT_ERR_FORMAT, "npy: malformed header dict at byte %td: %s (found \"%s\")",
                   c->p - c->start, what, excerpt(c, buf));
}

static void skip_space(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static bool accept(cursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

static bool accept_word(cursor *c, const char *word) {
  skip_space(c);
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return false;
  if (c->p + n < c->end && (isalnum((unsigned char)c->p[n]) || c->p[n] == '_')) return false;
  c->p += n;
  return true;
}

/* A quoted string without escapes (keys and descr never need them). */
static lt_status parse_string(cursor *c, char *buf, size_t cap, const char *what) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return dict_error(c, what);
  char quote = *c->p++;
  if (memchr(c->p, quote, (size_t)(c->end - c->p)) == NULL)
    return dict_error(c, "unterminated string");
  size_t n = 0;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\') return dict_error(c, "escape sequences are not supported in strings");
    if (n + 1 >= cap) return dict_error(c, "string is too long");
    buf[n++] = *c->p++;
  }
  if (c->p >= c->end) return dict_error(c, "unterminated string");
  c->p++;
  buf[n] = '\0';
  return LT_OK;
}

static lt_status parse_bool(cursor *c, bool *out) {
  if (accept_word(c, "True"))
    *out = true;
  else if (accept_word(c, "False"))
    *out = false;
  else
    return dict_error(c, "fortran_order must be True or False");
  return LT_OK;
}

/* A non-negative decimal extent (Python 2 writers append 'L'). */
static lt_status parse_extent(cursor *c, int axis, int64_t *out) {
  skip_space(c);
  if (c->p < c->end && *c->p == '-')
    return lt__error(LT_ERR_FORMAT, "npy: shape: extent of axis %d is negative", axis);
  if (c->p >= c->end || !isdigit((unsigned char)*c->p))
    return dict_error(c, "expected an integer extent in shape");
  /* Python 3 refuses "012" (a syntax error), and so does NumPy's header reader. */
  if (*c->p == '0' && c->p + 1 < c->end && isdigit((unsigned char)c->p[1]))
    return dict_error(c, "an extent in shape has a leading zero, which is not a Python integer");
  int64_t v = 0;
  while (c->p < c->end && isdigit((unsigned char)*c->p)) {
    if (lt__mul_overflow(v, 10, &v) || lt__add_overflow(v, *c->p - '0', &v))
      return lt__error(LT_ERR_FORMAT, "npy: shape: extent of axis %d overflows 64 bits", axis);
    c->p++;
  }
  if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
  *out = v;
  return LT_OK;
}

/* A tuple: "()", "(3,)", "(2, 3)" or "(2, 3,)". "(3)" is an int in Python, not a tuple. */
static lt_status parse_shape(cursor *c, lt__npy_header *h) {
  if (!accept(c, '(')) return dict_error(c, "shape must be a tuple");
  h->rank = 0;
  if (accept(c, ')')) return LT_OK;
  for (;;) {
    if (h->rank == LT_MAX_RANK)
      return lt__error(LT_ERR_FORMAT, "npy: shape has more than %d axes", LT_MAX_RANK);
    LT_TRY(parse_extent(c, h->rank, &h->shape[h->rank]));
    h->rank++;
    bool comma = accept(c, ',');
    if (accept(c, ')')) {
      if (h->rank == 1 && !comma)
        return dict_error(c, "shape (n) is an integer, not a tuple; a 1-d shape is (n,)");
      return LT_OK;
    }
    if (!comma) return dict_error(c, "expected ',' or ')' in shape");
  }
}

/* Maps a descr ("<f4", ">i8", "|f2", "f8") to a dtype and byte order. */
static lt_status parse_descr(const char *descr, lt__npy_header *h) {
  const char *p = descr;
  char order = '=';
  if (*p == '<' || *p == '>' || *p == '|' || *p == '=') order = *p++;
  static const struct {
    const char *code;
    lt_dtype dtype;
  } codes[] = {{"f2", LT_F16}, {"f4", LT_F32}, {"f8", LT_F64}, {"i1", LT_I8},  {"i2", LT_I16},
               {"i4", LT_I32}, {"i8", LT_I64}, {"u1", LT_U8},  {"u2", LT_U16}, {"u4", LT_U32},
               {"u8", LT_U64}, {"b1", LT_BOOL}};
  h->dtype = LT_DTYPE_INVALID;
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if (strcmp(p, codes[i].code) == 0) h->dtype = codes[i].dtype;
  if (h->dtype == LT_DTYPE_INVALID)
    return lt__error(LT_ERR_FORMAT,
                     "npy: unsupported descr '%s' (supported: f2, f4, f8, i1, i2, i4, i8, u1, "
                     "u2, u4, u8, b1 in either byte order)",
                     descr);
  /* '|' (not applicable) and '=' (native) both mean the writer's host order; take ours. */
  bool little = order == '<' || ((order == '|' || order == '=') && lt__host_is_little_endian());
  h->swap = little != lt__host_is_little_endian();
  return LT_OK;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static lt_status parse_entry(cursor *c, lt__npy_header *h, unsigned *seen) {
  char key[32], descr[32];
  LT_TRY(parse_string(c, key, sizeof key, "expected a quoted key"));
  unsigned bit = strcmp(key, "descr") == 0           ? KEY_DESCR
                 : strcmp(key, "fortran_order") == 0 ? KEY_FORTRAN
                 : strcmp(key, "shape") == 0         ? KEY_SHAPE
                                                     : 0;
  if (bit == 0)
    return lt__error(LT_ERR_FORMAT,
                     "npy: header dict has unknown key '%s' (expected descr, fortran_order, shape)",
                     key);
  if (*seen & bit) return lt__error(LT_ERR_FORMAT, "npy: header dict repeats key '%s'", key);
  *seen |= bit;
  if (!accept(c, ':')) return dict_error(c, "expected ':' after a key");
  if (bit == KEY_DESCR) {
    LT_TRY(parse_string(c, descr, sizeof descr, "descr must be a quoted type string"));
    return parse_descr(descr, h);
  }
  if (bit == KEY_FORTRAN) return parse_bool(c, &h->fortran);
  return parse_shape(c, h);
}

static lt_status parse_dict(const char *text, size_t len, lt__npy_header *h) {
  cursor c = {text, text, text + len};
  if (memchr(text, '\0', len)) return lt__error(LT_ERR_FORMAT, "npy: header contains a NUL byte");
  if (!accept(&c, '{')) return dict_error(&c, "the header must be a dict starting with '{'");
  unsigned seen = 0;
  while (!accept(&c, '}')) {
    LT_TRY(parse_entry(&c, h, &seen));
    if (accept(&c, ',')) continue;
    if (accept(&c, '}')) break;
    return dict_error(&c, "expected ',' or '}' after a value");
  }
  skip_space(&c);
  if (c.p != c.end) return dict_error(&c, "unexpected text after the dict");
  const char *missing = !(seen & KEY_DESCR)     ? "descr"
                        : !(seen & KEY_FORTRAN) ? "fortran_order"
                        : !(seen & KEY_SHAPE)   ? "shape"
                                                : NULL;
  if (missing) return lt__error(LT_ERR_FORMAT, "npy: header dict lacks the key '%s'", missing);
  return LT_OK;
}

/* "(2, 3)" for messages and headers; the buffer holds any rank-64 shape. */
static void format_shape(int rank, const int64_t *shape, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < rank && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (n < cap) snprintf(buf + n, cap - n, rank == 1 ? ",)" : ")");
}

/* Element count and byte size, refusing products past 2^63 (also across zero extents). */
static lt_status check_sizes(lt__npy_header *h) {
  int64_t n = 1, any_zero = 0;
  for (int i = 0; i < h->rank; i++) {
    if (h->shape[i] == 0) any_zero = 1;
    if (lt__mul_overflow(n, h->shape[i] ? h->shape[i] : 1, &n))
      return lt__error(LT_ERR_FORMAT,
                       "npy: shape overflows: the product of extents exceeds "
                       "2^63 at axis %d",
                       i);
  }
  int64_t bytes;
  bool too_big =
      lt__mul_overflow(n, (int64_t)lt_dtype_size(h->dtype), &bytes) || (uint64_t)bytes > SIZE_MAX;
  /* The same words as core's shape check (lt__check_shape) for an empty tensor: it holds no
   * data, but its contiguous strides would not fit. */
  if (too_big && any_zero)
    return lt__error(LT_ERR_FORMAT,
                     "npy: shape overflows: the tensor is empty, but the strides of a contiguous "
                     "%s layout would exceed 2^63 bytes (product of the nonzero extents: %lld)",
                     lt_dtype_name(h->dtype), (long long)n);
  if (too_big)
    return lt__error(LT_ERR_FORMAT,
                     "npy: shape overflows: %lld elements of %s exceed the "
                     "address space",
                     (long long)n, lt_dtype_name(h->dtype));
  h->numel = any_zero ? 0 : n;
  h->data_bytes = any_zero ? 0 : (size_t)bytes;
  return LT_OK;
}

/* Magic, version and header length: where the dict is and where the data starts. */
static lt_status parse_preamble(const unsigned char *b, size_t size, size_t *dict_at,
                                size_t *dict_len) {
  if (size < 8)
    return lt__error(LT_ERR_FORMAT,
                     "npy: truncated: %zu bytes, fewer than the 8-byte magic and "
                     "version",
                     size);
  if (memcmp(b, npy_magic, sizeof npy_magic) != 0)
    return lt__error(LT_ERR_FORMAT,
                     "npy: wrong magic: expected \\x93NUMPY, found "
                     "\\x%02x%c%c%c%c%c",
                     b[0], isprint(b[1]) ? b[1] : '?', isprint(b[2]) ? b[2] : '?',
                     isprint(b[3]) ? b[3] : '?', isprint(b[4]) ? b[4] : '?',
                     isprint(b[5]) ? b[5] : '?');
  unsigned major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0)
    return lt__error(LT_ERR_FORMAT,
                     "npy: unsupported format version %u.%u (supported: 1.0, "
                     "2.0, 3.0)",
                     major, minor);
  size_t len_bytes = major == 1 ? 2 : 4;
  if (size < 6 + 2 + len_bytes)
    return lt__error(LT_ERR_FORMAT,
                     "npy: truncated: %zu bytes, fewer than the %zu-byte preamble "
                     "of a version %u file",
                     size, 8 + len_bytes, major);
  uint64_t len = (uint64_t)b[8] | (uint64_t)b[9] << 8;
  if (len_bytes == 4) len |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
  if (len > LT__NPY_MAX_HEADER)
    return lt__error(LT_ERR_FORMAT, "npy: header of %llu bytes exceeds the limit of %d bytes",
                     (unsigned long long)len, LT__NPY_MAX_HEADER);
  *dict_at = 8 + len_bytes;
  *dict_len = (size_t)len;
  if (size - *dict_at < *dict_len)
    return lt__error(LT_ERR_FORMAT, "npy: truncated header: %zu bytes declared, %zu present",
                     *dict_len, size - *dict_at);
  return LT_OK;
}

lt_status lt__npy_parse_header(const unsigned char *bytes, size_t size, lt__npy_header *out) {
  memset(out, 0, sizeof *out);
  size_t dict_at = 0, dict_len = 0;
  LT_TRY(parse_preamble(bytes, size, &dict_at, &dict_len));
  LT_TRY(parse_dict((const char *)bytes + dict_at, dict_len, out));
  LT_TRY(check_sizes(out));
  out->data_offset = dict_at + dict_len;
  return LT_OK;
}

lt_status lt__npy_check_data_size(const lt__npy_header *h, uint64_t have) {
  if (have == h->data_bytes) return LT_OK;
  char shape[LT__NPY_FORMAT_CAP];
  format_shape(h->rank, h->shape, shape, sizeof shape);
  if (have < h->data_bytes)
    return lt__error(LT_ERR_FORMAT,
                     "npy: truncated data: shape %s of %s needs %zu bytes, the file holds %llu "
                     "after the header",
                     shape, lt_dtype_name(h->dtype), h->data_bytes, (unsigned long long)have);
  return lt__error(LT_ERR_FORMAT,
                   "npy: trailing data after %zu bytes: shape %s of %s needs %zu bytes, the file "
                   "holds %llu after the header",
                   h->data_bytes, shape, lt_dtype_name(h->dtype), h->data_bytes,
                   (unsigned long long)have);
}

lt_status lt__npy_trailing_data(const lt__npy_header *h) {
  char shape[LT__NPY_FORMAT_CAP];
  format_shape(h->rank, h->shape, shape, sizeof shape);
  return lt__error(LT_ERR_FORMAT,
                   "npy: trailing data after %zu bytes: shape %s of %s needs %zu bytes, and more "
                   "follow them",
                   h->data_bytes, shape, lt_dtype_name(h->dtype), h->data_bytes);
}

lt_status lt__npy_format_header(lt_dtype dtype, int rank, const int64_t *shape, char *buf,
                                size_t *len) {
  static const char *const codes[] = {
      [LT_F16] = "f2", [LT_F32] = "f4", [LT_F64] = "f8", [LT_I64] = "i8", [LT_I8] = "i1",
      [LT_I16] = "i2", [LT_I32] = "i4", [LT_U8] = "u1",  [LT_U16] = "u2", [LT_U32] = "u4",
      [LT_U64] = "u8", [LT_BOOL] = "b1"};
  const char *code = (int)dtype >= 0 && (size_t)dtype < sizeof codes / sizeof codes[0]
                         ? codes[dtype]
                         : NULL;
  if (code == NULL)
    return lt__error(LT_ERR_DTYPE, "npy: %s has no .npy type code (convert it to f32 first)",
                     lt_dtype_name(dtype) ? lt_dtype_name(dtype) : "invalid dtype");
  char shape_text[LT__NPY_FORMAT_CAP - 128];
  format_shape(rank, shape, shape_text, sizeof shape_text);
  memcpy(buf, npy_magic, sizeof npy_magic);
  buf[6] = 1;
  buf[7] = 0;
  int n = snprintf(buf + 10, LT__NPY_FORMAT_CAP - 10,
                   "{'descr': '%c%s', 'fortran_order': False, 'shape': %s, }",
                   lt_dtype_size(dtype) == 1 ? '|' : '<', code, shape_text);
  /* Pad with spaces and a final newline so that the data is 64-byte aligned, as NumPy does. */
  size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64;
  memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
  buf[total - 1] = '\n';
  size_t dict_len = total - 10;
  buf[8] = (char)(dict_len & 0xff);
  buf[9] = (char)(dict_len >> 8);
  *len = total;
  return LT_OK;
}

/* SPDX-License-Identifier: MIT */
/* NumPy-like printing: float formatting (fixed with decimal points aligned, or scientific),
 * shortest digits up to 8 per value, summarisation of large tensors, nested brackets and line
 * wrapping at 75 columns -- close to print(numpy_array) with default print options. */
#include "tool_print.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { PRINT_THRESHOLD = 1000, EDGE_ITEMS = 3, LINE_WIDTH = 75, MAX_PRECISION = 8 };

typedef enum value_kind { FLOATING, SIGNED, UNSIGNED, BOOLEAN } value_kind;

typedef struct printer {
  FILE *f;
  const double *data;  /* FLOATING: a C-ordered float64 copy of the tensor */
  const int64_t *ints; /* else: its exact values as i64 (SIGNED, BOOLEAN) or u64 bits */
  value_kind kind;
  int rank;
  const int64_t *shape;
  bool summarise;
  bool integer; /* an integer or bool dtype: no decimal point, no scientific notation */
  bool single;  /* stored in 32 bits or fewer: shortest digits that read back as a float */
  bool scientific;
  int precision;           /* scientific: common mantissa digits */
  int pad_left, pad_right; /* widths before and from the decimal point */
  double max_abs, min_abs; /* over shown finite values; min_abs over non-zero ones */
  int pending;             /* padding of the last cell, written only if more follows */
  bool any_finite;
} printer;

typedef void (*element_fn)(printer *p, int64_t i);

/* Calls `fn` for every element that is shown (all, or the edges of each long axis). */
static void for_shown(printer *p, int axis, int64_t base, element_fn fn) {
  if (axis == p->rank) {
    fn(p, base);
    return;
  }
  int64_t n = p->shape[axis], stride = 1;
  for (int i = axis + 1; i < p->rank; i++)
    stride *= p->shape[i];
  for (int64_t i = 0; i < n; i++) {
    if (p->summarise && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) i = n - EDGE_ITEMS;
    for_shown(p, axis + 1, base + i * stride, fn);
  }
}

/* Fewest digits (at most 8) after the point that read back as `v` in the tensor's precision;
 * NumPy's "maxprec" with unique digits. */
static int digits_needed(const printer *p, double v, bool scientific) {
  char buf[400];
  for (int d = 0; d < MAX_PRECISION; d++) {
    snprintf(buf, sizeof buf, scientific ? "%.*e" : "%.*f", d, v);
    double back = strtod(buf, NULL);
    if (p->single ? (float)back == (float)v : back == v) return d;
  }
  return MAX_PRECISION;
}

/* Drops trailing zeros of a fixed-point number, keeping the point ("0.50" -> "0.5"). */
static void trim_zeros(char *s) {
  size_t n = strlen(s);
  while (n > 0 && s[n - 1] == '0')
    s[--n] = '\0';
}

/* Element i's own text, before padding. Integers print exactly (a float64 copy would round
 * those past 2^53), bools as NumPy's True / False. */
static void format_raw(const printer *p, int64_t i, char *buf, size_t size) {
  if (p->integer) {
    int64_t x = p->ints[i];
    if (p->kind == BOOLEAN)
      snprintf(buf, size, "%s", x ? "True" : "False");
    else if (p->kind == UNSIGNED)
      snprintf(buf, size, "%llu", (unsigned long long)(uint64_t)x);
    else
      snprintf(buf, size, "%lld", (long long)x);
    return;
  }
  double v = p->data[i];
  if (isnan(v))
    snprintf(buf, size, "nan");
  else if (isinf(v))
    snprintf(buf, size, v > 0 ? "inf" : "-inf");
  else if (p->scientific && p->precision == 0) {
    char mantissa_exp[64];
    snprintf(mantissa_exp, sizeof mantissa_exp, "%.0e", v); /* "1e+10" -> "1.e+10" */
    char *e = strchr(mantissa_exp, 'e');
    snprintf(buf, size, "%.*s.%s", (int)(e - mantissa_exp), mantissa_exp, e);
  } else if (p->scientific) {
    snprintf(buf, size, "%.*e", p->precision, v);
  } else {
    int d = digits_needed(p, v, false);
    snprintf(buf, size, d == 0 ? "%.*f." : "%.*f", d, v);
    if (d == MAX_PRECISION) trim_zeros(buf);
  }
}

static bool aligned_on_point(const printer *p, int64_t i) {
  return !p->integer && !p->scientific && isfinite(p->data[i]);
}

/* Element i padded to the common width, decimal points aligned. */
static void format_cell(const printer *p, int64_t i, char *buf, size_t size) {
  char raw[400];
  format_raw(p, i, raw, sizeof raw);
  if (!aligned_on_point(p, i)) {
    snprintf(buf, size, "%*s", p->pad_left + p->pad_right, raw);
    return;
  }
  char *point = strchr(raw, '.');
  int left = (int)(point - raw);
  snprintf(buf, size, "%*s%.*s%-*s", p->pad_left - left, "", left, raw, p->pad_right, point);
}

static void collect_range(printer *p, int64_t i) {
  double v = p->data[i];
  if (!isfinite(v)) return;
  double a = fabs(v);
  if (!p->any_finite || a > p->max_abs) p->max_abs = a;
  if (a != 0 && (p->min_abs == 0 || a < p->min_abs)) p->min_abs = a;
  p->any_finite = true;
}

static void collect_precision(printer *p, int64_t i) {
  double v = p->data[i];
  if (!isfinite(v)) return;
  int d = digits_needed(p, v, true);
  if (d > p->precision) p->precision = d;
}

static void collect_widths(printer *p, int64_t i) {
  if (!p->integer && !isfinite(p->data[i])) return;
  char raw[400];
  format_raw(p, i, raw, sizeof raw);
  int len = (int)strlen(raw), left = len, right = 0;
  if (aligned_on_point(p, i)) {
    left = (int)(strchr(raw, '.') - raw);
    right = len - left;
  }
  if (left > p->pad_left) p->pad_left = left;
  if (right > p->pad_right) p->pad_right = right;
}

/* Non-finite values (right-aligned in the whole cell) may be wider than the aligned ones. */
static void widen_for_specials(printer *p, int64_t i) {
  if (p->integer || isfinite(p->data[i])) return;
  double v = p->data[i];
  int len = (int)strlen(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
  if (len > p->pad_left + p->pad_right) p->pad_left = len - p->pad_right;
}

static void choose_format(printer *p) {
  if (!p->integer) for_shown(p, 0, 0, collect_range);
  p->scientific = !p->integer && p->any_finite &&
                  (p->max_abs >= 1e8 || (p->min_abs > 0 && p->min_abs < 1e-4) ||
                   (p->min_abs > 0 && p->max_abs / p->min_abs > 1e3));
  if (p->scientific) for_shown(p, 0, 0, collect_precision);
  for_shown(p, 0, 0, collect_widths);
  for_shown(p, 0, 0, widen_for_specials);
}

/* Writes `len` bytes of `s` after the padding held back from the previous cell (already
 * counted in the column); returns the columns `s` takes. */
static int emit(printer *p, const char *s, size_t len) {
  fprintf(p->f, "%*s%.*s", p->pending, "", (int)len, s);
  p->pending = 0;
  return (int)len;
}

/* Moves to a new line indented past `depth` brackets, dropping held-back padding as NumPy
 * strips trailing spaces at a wrap. */
static int new_line(printer *p, int lines, int depth) {
  p->pending = 0;
  for (int k = 0; k < lines; k++)
    fputc('\n', p->f);
  fprintf(p->f, "%*s", depth, "");
  return depth;
}

/* Writes one word of the innermost axis (a cell or "..."), after a separator or a wrap:
 * NumPy's rule takes a column off the width per enclosing bracket and one for the separator. */
static int put_word(printer *p, const char *word, bool first, int axis, int col) {
  size_t len = strlen(word), kept = len;
  if (!first) {
    if (col + 1 + (int)len > LINE_WIDTH - 1 - axis)
      col = new_line(p, 1, axis + 1);
    else
      col += emit(p, " ", 1);
  }
  while (kept > 0 && word[kept - 1] == ' ')
    kept--;
  col += emit(p, word, kept);
  p->pending = (int)(len - kept);
  return col + p->pending;
}

static int print_axis(printer *p, int axis, int64_t base, int col);

static int print_innermost(printer *p, int axis, int64_t base, int col) {
  int64_t n = p->shape[axis];
  bool first = true;
  for (int64_t i = 0; i < n; i++, first = false) {
    if (p->summarise && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) {
      col = put_word(p, "...", first, axis, col);
      i = n - EDGE_ITEMS;
    }
    char cell[512];
    format_cell(p, base + i, cell, sizeof cell);
    col = put_word(p, cell, first, axis, col);
  }
  return col;
}

static int print_outer(printer *p, int axis, int64_t base, int col) {
  int64_t n = p->shape[axis], stride = 1;
  for (int i = axis + 1; i < p->rank; i++)
    stride *= p->shape[i];
  int blank_lines = p->rank - axis - 1;
  for (int64_t i = 0; i < n; i++) {
    if (i > 0) col = new_line(p, blank_lines, axis + 1);
    if (p->summarise && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) {
      col += emit(p, "...", 3);
      col = new_line(p, blank_lines, axis + 1);
      i = n - EDGE_ITEMS;
    }
    col = print_axis(p, axis + 1, base + i * stride, col);
  }
  return col;
}

/* Prints the sub-array of `axis` starting at element `base`, in brackets; `col` is the current
 * column. Returns the column after it. */
static int print_axis(printer *p, int axis, int64_t base, int col) {
  col += emit(p, "[", 1);
  col = axis == p->rank - 1 ? print_innermost(p, axis, base, col) : print_outer(p, axis, base, col);
  return col + emit(p, "]", 1);
}

/* A 0-d array prints as its scalar does in Python: shortest round-trip digits, "12.0", "1e-05". */
static void print_scalar(const printer *p) {
  char buf[64];
  double v = p->integer ? 0 : p->data[0];
  if (p->integer || !isfinite(v)) {
    format_raw(p, 0, buf, sizeof buf);
  } else {
    int exponent = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    bool scientific = exponent < -4 || exponent >= 16;
    for (int d = 0; d <= 17; d++) {
      snprintf(buf, sizeof buf, scientific ? "%.*e" : "%.*f", d, v);
      double back = strtod(buf, NULL);
      if (p->single ? (float)back == (float)v : back == v) break;
    }
    if (!scientific && !strchr(buf, '.')) strcat(buf, ".0");
  }
  fputs(buf, p->f);
}

/* A C-ordered host copy of any tensor in `as` (F64, I64 or U64: 8 bytes an element). */
static lt_status host_copy(const lt_tensor *t, lt_dtype as, void **out) {
  *out = NULL;
  lt_status st = LT_OK;
  lt_tensor *host = NULL, *f64 = NULL;
  const lt_tensor *src = t;
  if (strcmp(lt_context_device(lt_tensor_context(t)), "cpu") != 0) {
    lt_context *cpu = NULL;
    if ((st = lt_context_create("cpu", &cpu)) != LT_OK) return st;
    st = lt_tensor_to_context(t, cpu, &host);
    lt_context_destroy(cpu); /* the tensor keeps it alive */
    if (st != LT_OK) return st;
    src = host;
  }
  size_t bytes = (size_t)lt_tensor_numel(t) * sizeof(double);
  void *data = malloc(bytes ? bytes : 1);
  if (data == NULL) st = LT_ERR_OUT_OF_MEMORY;
  if (st == LT_OK) st = lt_tensor_contiguous(src, as, &f64);
  if (st == LT_OK) st = lt_tensor_to_host(f64, data, bytes);
  lt_tensor_destroy(f64);
  lt_tensor_destroy(host);
  if (st != LT_OK)
    free(data);
  else
    *out = data;
  return st;
}

static value_kind kind_of(lt_dtype d) {
  switch (d) {
  case LT_BOOL: return BOOLEAN;
  case LT_U8:
  case LT_U16:
  case LT_U32:
  case LT_U64: return UNSIGNED;
  case LT_I8:
  case LT_I16:
  case LT_I32:
  case LT_I64: return SIGNED;
  default: return FLOATING;
  }
}

lt_status tool_print_tensor(FILE *f, const lt_tensor *t) {
  void *data;
  value_kind kind = kind_of(lt_tensor_dtype(t));
  lt_status st = host_copy(t,
                           kind == FLOATING   ? LT_F64
                           : kind == UNSIGNED ? LT_U64
                                              : LT_I64,
                           &data);
  if (st != LT_OK) return st;
  printer p = {.f = f,
               .data = kind == FLOATING ? data : NULL,
               .ints = kind == FLOATING ? NULL : data,
               .kind = kind,
               .rank = lt_tensor_rank(t),
               .shape = lt_tensor_shape(t),
               .summarise = lt_tensor_numel(t) > PRINT_THRESHOLD,
               .integer = kind != FLOATING,
               .single = lt_dtype_size(lt_tensor_dtype(t)) <= 4};
  if (lt_tensor_numel(t) == 0) {
    fputs("[]", f); /* NumPy prints every empty array so */
  } else if (p.rank == 0) {
    print_scalar(&p);
  } else {
    choose_format(&p);
    print_axis(&p, 0, 0, 0);
  }
  fputc('\n', f);
  free(data);
  return LT_OK;
}

/* SPDX-License-Identifier: MIT */
/* NumPy einsum strings (and integer labels) into labels per axis, with NumPy's rejections. */
#include "core/error.h"
#include "einsum/einsum.h"

#include <stdio.h>
#include <string.h>

lt_status lt__einsum_expr_alloc(lt__einsum_expr *e, int n) {
  lt__einsum_expr_free(e);
  int cap = n > 0 ? n : 1;
  e->rank = lt__host_calloc(e->ctx, (size_t)cap, sizeof *e->rank);
  e->labels = lt__host_calloc(e->ctx, (size_t)cap, sizeof *e->labels);
  e->cap = cap;
  if (e->rank == NULL || e->labels == NULL) {
    lt__einsum_expr_free(e);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for %d operands", n);
  }
  return LT_OK;
}

void lt__einsum_expr_free(lt__einsum_expr *e) {
  if (e->rank) lt__host_free(e->ctx, e->rank, sizeof *e->rank * (size_t)e->cap);
  if (e->labels) lt__host_free(e->ctx, e->labels, sizeof *e->labels * (size_t)e->cap);
  e->rank = NULL;
  e->labels = NULL;
  e->cap = 0;
}

/* Clears e except its allocator and arrays. */
static void expr_reset(lt__einsum_expr *e) {
  e->letters = false;
  e->n_inputs = 0;
  e->rank_out = 0;
}

static int letter_label(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -1;
}

static char label_letter(int32_t l) { return (char)(l < 26 ? 'A' + l : 'a' + (l - 26)); }

void lt__einsum_label_name(const lt__einsum_expr *e, int32_t l, char *buf, size_t size) {
  if (!e->letters)
    snprintf(buf, size, "%d", (int)l);
  else if (l >= LT__ELLIPSIS_LABEL_BASE)
    snprintf(buf, size, "'...' dimension %d", (int)(l - LT__ELLIPSIS_LABEL_BASE));
  else
    snprintf(buf, size, "'%c'", label_letter(l));
}

/* One operand term (or the output): letters in order and where '...' stood. */
typedef struct term {
  int n;
  int32_t label[LT_MAX_RANK + 1];
  int ellipsis_at; /* index into label where '...' stands, -1 if none */
} term;

/* Reads a term starting at text[*pos]; stops at ',', "->" or the end. */
static lt_status read_term(const char *text, size_t *pos, const char *what, int index, term *t) {
  t->n = 0;
  t->ellipsis_at = -1;
  for (;;) {
    size_t p = *pos;
    char ch = text[p];
    if (ch == '\0' || ch == ',' || (ch == '-' && text[p + 1] == '>')) return LT_OK;
    if (ch == ' ') {
      (*pos)++;
      continue;
    }
    if (ch == '.') {
      LT_RETURN_IF(strncmp(text + p, "...", 3) != 0 || t->ellipsis_at >= 0, LT_ERR_PARSE,
                   "einsum: '.' at position %zu in %s %d is not part of a single '...'", p, what,
                   index);
      t->ellipsis_at = t->n;
      *pos += 3;
      continue;
    }
    LT_RETURN_IF(ch == '-', LT_ERR_PARSE,
                 "einsum: '-' at position %zu is not followed by '>' (write '->')", p);
    int l = letter_label(ch);
    /* Bytes outside printable ASCII (UTF-8, control characters) are named by their value. */
    LT_RETURN_IF(l < 0 && (unsigned char)ch >= 0x20 && (unsigned char)ch < 0x7f, LT_ERR_PARSE,
                 "einsum: invalid character '%c' at position %zu (labels must be letters)", ch, p);
    LT_RETURN_IF(l < 0, LT_ERR_PARSE,
                 "einsum: invalid byte 0x%02x at position %zu (labels must be ASCII letters)",
                 (unsigned)(unsigned char)ch, p);
    LT_RETURN_IF(t->n >= LT_MAX_RANK, LT_ERR_PARSE, "einsum: %s %d has more than %d labels", what,
                 index, LT_MAX_RANK);
    t->label[t->n++] = l;
    (*pos)++;
  }
}

/* Expands an input term against the operand's rank; ellipsis dims right-aligned in a shared
 * broadcast shape of `ell_rank` dims. */
static void expand_input(const term *t, int rank, int ell_rank, int32_t *labels) {
  int e = rank - t->n, r = 0;
  for (int i = 0; i <= t->n; i++) {
    if (i == t->ellipsis_at)
      for (int j = 0; j < e; j++)
        labels[r++] = LT__ELLIPSIS_LABEL_BASE + (ell_rank - e) + j;
    if (i < t->n) labels[r++] = t->label[i];
  }
}

/* Implicit output: ellipsis dims, then the letters seen exactly once, in label order. */
static lt_status implicit_output(const term *terms, int n, int ell_rank, lt__einsum_expr *e) {
  int count[52] = {0}, once = 0;
  for (int k = 0; k < n; k++)
    for (int i = 0; i < terms[k].n; i++)
      count[terms[k].label[i]]++;
  for (int l = 0; l < 52; l++)
    once += count[l] == 1;
  LT_RETURN_IF(once + ell_rank > LT_MAX_RANK, LT_ERR_PARSE,
               "einsum: the output would have more than %d dimensions (%d broadcast ('...') and "
               "%d labels that appear once)",
               LT_MAX_RANK, ell_rank, once);
  e->rank_out = 0;
  for (int j = 0; j < ell_rank; j++)
    e->labels_out[e->rank_out++] = LT__ELLIPSIS_LABEL_BASE + j;
  for (int l = 0; l < 52; l++)
    if (count[l] == 1) e->labels_out[e->rank_out++] = l;
  return LT_OK;
}

static lt_status check_input_rank(const term *t, int k, int rank) {
  LT_RETURN_IF(t->ellipsis_at < 0 && t->n < rank, LT_ERR_PARSE,
               "einsum: operand %d has rank %d but its term names %d labels and has no '...'", k,
               rank, t->n);
  LT_RETURN_IF(t->n > rank, LT_ERR_PARSE,
               "einsum: operand %d has rank %d but its term names %d labels", k, rank, t->n);
  return LT_OK;
}

static lt_status explicit_output(const term *out, const term *terms, int n, int ell_rank,
                                 lt__einsum_expr *e) {
  LT_RETURN_IF(ell_rank > 0 && out->ellipsis_at < 0, LT_ERR_PARSE,
               "einsum: the inputs have %d broadcast ('...') dimensions but the output has no "
               "'...' to receive them",
               ell_rank);
  LT_RETURN_IF(out->n + ell_rank > LT_MAX_RANK, LT_ERR_PARSE,
               "einsum: the output would have more than %d dimensions", LT_MAX_RANK);
  for (int i = 0; i < out->n; i++) {
    bool seen = false;
    for (int k = 0; k < n && !seen; k++)
      for (int a = 0; a < terms[k].n; a++)
        seen |= terms[k].label[a] == out->label[i];
    LT_RETURN_IF(!seen, LT_ERR_PARSE, "einsum: output label '%c' does not appear in any input",
                 label_letter(out->label[i]));
    for (int j = 0; j < i; j++) /* as NumPy: an output label names one output dimension */
      LT_RETURN_IF(out->label[j] == out->label[i], LT_ERR_PARSE,
                   "einsum: output label '%c' appears more than once", label_letter(out->label[i]));
  }
  /* An ellipsis-free output also takes no broadcast dims (ell_rank is then 0). */
  expand_input(out, out->n + (out->ellipsis_at >= 0 ? ell_rank : 0), ell_rank, e->labels_out);
  e->rank_out = out->n + (out->ellipsis_at >= 0 ? ell_rank : 0);
  return LT_OK;
}

static lt_status parse_terms(const char *text, int n_inputs, const int *ranks, term *terms, int cap,
                             lt__einsum_expr *e);

lt_status lt__einsum_parse(const char *text, int n_inputs, const int *ranks, lt__einsum_expr *e) {
  expr_reset(e);
  /* Terms are counted first so that any number of operands gets room. */
  int cap = 1;
  for (const char *c = text; *c && !(c[0] == '-' && c[1] == '>'); c++)
    cap += *c == ',';
  if (cap < n_inputs) cap = n_inputs;
  term *terms = lt__host_alloc(e->ctx, sizeof(term) * (size_t)cap);
  LT_RETURN_IF(terms == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory parsing %d terms", cap);
  lt_status st = parse_terms(text, n_inputs, ranks, terms, cap, e);
  lt__host_free(e->ctx, terms, sizeof(term) * (size_t)cap);
  return st;
}

static lt_status parse_terms(const char *text, int n_inputs, const int *ranks, term *terms, int cap,
                             lt__einsum_expr *e) {
  e->letters = true;
  size_t pos = 0;
  int n = 0;
  for (;;) {
    LT_RETURN_IF(n >= cap, LT_ERR_PARSE, "einsum: more than %d operand terms", cap);
    LT_TRY(read_term(text, &pos, "operand", n, &terms[n]));
    n++;
    if (text[pos] != ',') break;
    pos++;
  }
  LT_RETURN_IF(n != n_inputs, LT_ERR_PARSE,
               "einsum: the expression has %d operand term%s but %d input%s given", n,
               n == 1 ? "" : "s", n_inputs, n_inputs == 1 ? " was" : "s were");
  LT_TRY(lt__einsum_expr_alloc(e, n));
  e->n_inputs = n;
  int ell_rank = 0;
  for (int k = 0; k < n; k++) {
    LT_TRY(check_input_rank(&terms[k], k, ranks[k]));
    if (ranks[k] - terms[k].n > ell_rank) ell_rank = ranks[k] - terms[k].n;
  }
  for (int k = 0; k < n; k++) {
    e->rank[k] = ranks[k];
    expand_input(&terms[k], ranks[k], ell_rank, e->labels[k]);
  }
  if (text[pos] == '\0') return implicit_output(terms, n, ell_rank, e);
  pos += 2; /* "->" */
  term out;
  LT_TRY(read_term(text, &pos, "the output", 0, &out));
  LT_RETURN_IF(text[pos] != '\0', LT_ERR_PARSE,
               "einsum: unexpected '%c' at position %zu in the output term", text[pos], pos);
  return explicit_output(&out, terms, n, ell_rank, e);
}

lt_status lt__einsum_from_modes(int n_inputs, const int *ranks, const int32_t *const *modes,
                                int rank_out, const int32_t *modes_out, lt__einsum_expr *e) {
  expr_reset(e);
  LT_RETURN_IF(rank_out < 0 || rank_out > LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
               "einsum: output rank %d is outside [0, %d]", rank_out, LT_MAX_RANK);
  LT_RETURN_IF(rank_out > 0 && modes_out == NULL, LT_ERR_NULL_POINTER, "einsum: modes_out is NULL");
  LT_TRY(lt__einsum_expr_alloc(e, n_inputs));
  e->n_inputs = n_inputs;
  for (int k = 0; k < n_inputs; k++) {
    LT_RETURN_IF(ranks[k] > 0 && modes[k] == NULL, LT_ERR_NULL_POINTER,
                 "einsum: modes of operand %d is NULL", k);
    e->rank[k] = ranks[k];
    if (ranks[k] > 0) memcpy(e->labels[k], modes[k], sizeof(int32_t) * (size_t)ranks[k]);
  }
  for (int i = 0; i < rank_out; i++) {
    bool seen = false;
    for (int k = 0; k < n_inputs && !seen; k++)
      for (int a = 0; a < ranks[k]; a++)
        seen |= modes[k][a] == modes_out[i];
    LT_RETURN_IF(!seen, LT_ERR_INVALID_ARGUMENT,
                 "einsum: output label %d does not appear in any input", (int)modes_out[i]);
    for (int j = 0; j < i; j++)
      LT_RETURN_IF(modes_out[j] == modes_out[i], LT_ERR_INVALID_ARGUMENT,
                   "einsum: output label %d appears more than once (output dims %d and %d)",
                   (int)modes_out[i], j, i);
  }
  e->rank_out = rank_out;
  if (rank_out > 0) memcpy(e->labels_out, modes_out, sizeof(int32_t) * (size_t)rank_out);
  return LT_OK;
}

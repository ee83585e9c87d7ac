/* SPDX-License-Identifier: MIT */
/* Internal shape of the gradient tape: variables (tracked tensors, by handle serial), nodes
 * (recorded ops with what their backward needs) and the rule table. */
#ifndef LT_AUTOGRAD_AUTOGRAD_H
#define LT_AUTOGRAD_AUTOGRAD_H

#include "core/error.h"
#include "core/object.h"
#include "tensor/autograd.h"

/* Inputs one node may have (einsum's operand limit), and tensors it may save. */
#define LT__AD_MAX_INPUTS 64
#define LT__AD_MAX_SAVED LT__AD_MAX_INPUTS

/* dtype and shape of a tensor, as backward needs them after the tensor itself is gone. */
typedef struct lt__ad_meta {
  lt_dtype dtype;
  int rank;
  int64_t shape[LT_MAX_RANK];
} lt__ad_meta;

typedef struct lt__ad_node lt__ad_node;

/* Computes the gradients of a node's inputs from the gradient g of its output: grads[i] for
 * every i with node->needs[i] (new handles; may be broadcast views or another dtype — the tape
 * sums them to each input's shape and converts). */
typedef lt_status (*lt__ad_backward_fn)(const lt__ad_node *node, const lt_tensor *g,
                                        lt_tensor **grads);

/* One entry of the rule table: ops are recorded with a rule, and a new differentiable op is one
 * new entry (a name for messages and its backward). backward NULL: not differentiable. */
typedef struct lt__ad_rule {
  const char *name;
  lt__ad_backward_fn backward;
} lt__ad_rule;

struct lt__ad_node {
  const lt__ad_rule *rule;
  int n_in;
  bool *needs;     /* [n_in]: input i requires a gradient */
  int *in_var;     /* [n_in]: variable index, or -1 */
  lt__ad_meta *in; /* [n_in] */
  lt__ad_meta out;
  int out_var;
  int n_saved;
  lt_tensor *saved[LT__AD_MAX_SAVED];
  uint64_t saved_version[LT__AD_MAX_SAVED];
  const char *saved_what[LT__AD_MAX_SAVED];
  int64_t iparam[8]; /* op codes, axes, flags: as the rule defines */
  double dparam[4];  /* scalars */
  void *extra;       /* rule-specific block (malloc'd), freed with the node */
  void (*extra_free)(void *extra);
  bool visited; /* reached by the running backward */
  bool freed;   /* saved tensors released by a backward without retain_graph */
};

typedef struct lt__ad_var {
  uint64_t serial; /* the tensor handle's serial; 0 for a forgotten leaf */
  lt__ad_meta meta;
  bool leaf;
  int node;        /* producing node, -1 for leaves */
  lt_tensor *grad; /* leaves: accumulated; others: only during backward */
  bool forgotten;  /* lt_tape_forget: its handle is gone, its record may be pruned */
} lt__ad_var;

struct lt_tape {
  uint32_t tag;    /* LT__HANDLE_TAPE */
  lt_context *ctx; /* retained */
  bool recording;
  lt__ad_var *vars;
  int n_vars, cap_vars;
  lt__ad_node *nodes;
  int n_nodes, cap_nodes;
  int *map; /* open addressing: serial -> var index + 1 (0 empty) */
  int map_cap;
  int n_forgotten; /* forgotten since the last prune */
};

/* ---- tape internals used by the op wrappers ---- */

/* The leaf variable of the handle with this serial, or NULL. */
lt__ad_var *lt__ad_leaf_by_serial(lt_tape *tape, uint64_t serial);
/* Variable index of a tensor, or -1 if the tape does not track it. */
int lt__ad_lookup(const lt_tape *tape, const lt_tensor *t);
/* True if recording, any of the inputs is tracked and the result (out, when given) is of a
 * float dtype. */
bool lt__ad_should_record(const lt_tape *tape, int n, const lt_tensor *const *ins,
                          const lt_tensor *out);
/* LT_OK for NULL (no tape: the lt_ad_* call only computes) or a live tape; a destroyed tape or
 * another kind of handle is LT_ERR_INVALID_HANDLE naming `fn`, checked before anything runs so
 * that lt__ad_should_record never reads a stale tape's fields. */
lt_status lt__ad_check_tape(const lt_tape *tape, const char *fn);
/* Records a node for `out` computed from `ins` by `rule`; *node is valid until the next record
 * (fill params and saved tensors through it). On failure nothing is recorded. */
lt_status lt__ad_record(lt_tape *tape, const lt__ad_rule *rule, int n, const lt_tensor *const *ins,
                        const lt_tensor *out, lt__ad_node **node);
/* Saves t (a new handle on the same memory, with its current version) in slot k of node. */
lt_status lt__ad_save(lt__ad_node *node, int k, const lt_tensor *t, const char *what);
/* The record stops being tracked when the recording of its node fails half-way. */
void lt__ad_unrecord_last(lt_tape *tape);
void lt__ad_meta_of(const lt_tensor *t, lt__ad_meta *m);
/* Rebuilds the serial -> variable map for the current variables. */
lt_status lt__ad_map_rebuild(lt_tape *tape, int want);
/* Releases a node's saved tensors (if not yet) and its arrays. */
void lt__ad_node_free(lt__ad_node *n);
/* Drops the records nothing can reach any more (graph.c): nodes freed by a backward and nodes
 * whose result handle was forgotten, unless a kept node reads their result; their results stop
 * being tracked. */
lt_status lt__ad_prune(lt_tape *tape);

/* ---- helpers the rules compute with (ad_math.c) ---- */

/* out = (s[0]*ua(a) op_ab s[1]*ub(b)) op_abc s[2]*uc(c), NumPy broadcasting, as a new tensor of
 * the promoted dtype. b and c may be NULL (then out = s[0]*ua(a), or the binary form). */
lt_status lt__ad_ew(lt_binary_op op_ab, lt_binary_op op_abc, const lt_tensor *a, lt_unary_op ua,
                    const lt_tensor *b, lt_unary_op ub, const lt_tensor *c, lt_unary_op uc,
                    const double *s, lt_tensor **out);
/* s * a (a new tensor). */
lt_status lt__ad_scale(const lt_tensor *a, double s, lt_tensor **out);
/* Sums g (broadcast-compatible with m's shape) down to m's shape and converts to m's dtype. */
lt_status lt__ad_sum_to(const lt_tensor *g, const lt__ad_meta *m, lt_tensor **out);
/* A new zero tensor with m's dtype and shape on ctx. */
lt_status lt__ad_zeros(lt_context *ctx, const lt__ad_meta *m, lt_tensor **out);
/* A new handle with t's layout on t's storage. */
lt_status lt__ad_alias(const lt_tensor *t, lt_tensor **out);

/* ---- the rule table ---- */

extern const lt__ad_rule lt__ad_rule_unary, lt__ad_rule_ew, lt__ad_rule_reduce, lt__ad_rule_stop,
    lt__ad_rule_einsum, lt__ad_rule_convert, lt__ad_rule_reshape, lt__ad_rule_permute,
    lt__ad_rule_broadcast, lt__ad_rule_view_replay, lt__ad_rule_as_strided;

#endif

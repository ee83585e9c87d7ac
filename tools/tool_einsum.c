/* SPDX-License-Identifier: MIT */
/* `tensor einsum`: evaluates an einsum expression on .npy files, like numpy.einsum. */
#include "tool.h"
#include "tool_print.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INPUTS = 64 };

typedef struct einsum_args {
  const char *device, *output, *expr;
  lt_dtype dtype; /* LT_DTYPE_INVALID: the inputs' natural dtype */
  lt_path_algo path;
  bool describe;
  int n_inputs;
  const char *inputs[MAX_INPUTS];
} einsum_args;

typedef struct einsum_run {
  lt_context *ctx;
  lt_plan_options *opts;
  lt_tensor *inputs[MAX_INPUTS];
  lt_plan *plan;
  lt_tensor *result;
  double plan_seconds, run_seconds;
  char stage[300]; /* what was being done when a call failed, for the error line */
} einsum_run;

static void usage(FILE *f) {
  fprintf(
      f, "usage: tensor einsum [--device DEV] [--dtype f32|f64] [--path auto|greedy|optimal|none]\n"
         "                     [-o OUT.npy] [--describe] EXPR IN1.npy [IN2.npy ...]\n\n"
         "Inputs and -o may also be HDF5 datasets, FILE.h5:/path/to/dataset (-o adds the\n"
         "dataset to an existing file, replacing one of that name, or creates the file).\n\n"
         "Evaluates EXPR (numpy.einsum syntax: \"ij,jk->ik\", \"...ii->...i\", implicit output)\n"
         "on the arrays in the .npy files. Without -o the result is printed like NumPy does.\n\n"
         "  --device DEV   cpu (default: $LT_DEVICE or cpu), opencl, opencl:P:D\n"
         "  --dtype T      compute and output dtype (default: from the inputs)\n"
         "  --path ALGO    contraction path search (default auto)\n"
         "  -o OUT.npy     write the result to a .npy file instead of printing it\n"
         "  --describe     print the chosen path, its flops and intermediate sizes, and times\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tool_usage_error("einsum", msg);
}

static bool parse_path(const char *s, lt_path_algo *out) {
  static const char *names[] = {"auto", "greedy", "optimal", "none"};
  static const lt_path_algo algos[] = {LT_PATH_AUTO, LT_PATH_GREEDY, LT_PATH_OPTIMAL, LT_PATH_NONE};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i]) == 0) return *out = algos[i], true;
  return false;
}

/* The expression, then the input files; false when there are too many. */
static bool add_operand(einsum_args *a, const char *arg) {
  if (a->expr == NULL)
    a->expr = arg;
  else if (a->n_inputs == MAX_INPUTS)
    return false;
  else
    a->inputs[a->n_inputs++] = arg;
  return true;
}

/* Parses argv; returns -1 to continue, else the exit status (usage errors, --help). */
static int parse_args(int argc, char **argv, einsum_args *a) {
  *a = (einsum_args){.path = LT_PATH_AUTO};
  if (tool_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  bool operands_only = false; /* after "--": an expression like "-..." is not an option */
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    bool has_value = i + 1 < argc;
    if (operands_only) {
      if (!add_operand(a, arg)) return usage_error("more than %d input files", MAX_INPUTS);
    } else if (strcmp(arg, "--") == 0) {
      operands_only = true;
    } else if (strcmp(arg, "--describe") == 0) {
      a->describe = true;
    } else if (strcmp(arg, "--device") == 0 || strcmp(arg, "--dtype") == 0 ||
               strcmp(arg, "--path") == 0 || strcmp(arg, "-o") == 0) {
      if (!has_value) return usage_error("option %s needs a value", arg);
      const char *v = argv[++i];
      if (strcmp(arg, "--device") == 0)
        a->device = v;
      else if (strcmp(arg, "-o") == 0)
        a->output = v;
      else if (strcmp(arg, "--path") == 0 && !parse_path(v, &a->path)) {
        return usage_error("unknown --path '%s' (auto, greedy, optimal or none)", v);
      } else if (strcmp(arg, "--dtype") == 0 && (lt_dtype_from_name(v, &a->dtype) != LT_OK ||
                                                 (a->dtype != LT_F32 && a->dtype != LT_F64))) {
        return usage_error("unknown --dtype '%s' (f32 or f64)", v);
      }
    } else if (arg[0] == '-' && arg[1] == '-') {
      return usage_error("unknown option '%s'", arg);
    } else if (!add_operand(a, arg)) {
      return usage_error("more than %d input files", MAX_INPUTS);
    }
  }
  if (a->expr == NULL) {
    usage(stderr);
    return 2;
  }
  if (a->n_inputs == 0) return usage_error("'%s' needs at least one input file (IN.npy)", a->expr);
  return -1;
}

static lt_status load_inputs(const einsum_args *a, einsum_run *r) {
  for (int i = 0; i < a->n_inputs; i++) {
    snprintf(r->stage, sizeof r->stage, "loading %s", a->inputs[i]);
    lt_status st = tool_load(r->ctx, a->inputs[i], &r->inputs[i]);
    if (st != LT_OK) return st;
    if (a->dtype != LT_DTYPE_INVALID && lt_tensor_dtype(r->inputs[i]) != a->dtype) {
      lt_tensor *converted;
      if ((st = lt_tensor_contiguous(r->inputs[i], a->dtype, &converted)) != LT_OK) return st;
      lt_tensor_destroy(r->inputs[i]);
      r->inputs[i] = converted;
    }
  }
  return LT_OK;
}

static lt_status make_options(const einsum_args *a, einsum_run *r) {
  lt_status st = lt_plan_options_create(&r->opts);
  if (st == LT_OK) st = lt_plan_options_set_path(r->opts, a->path);
  if (st == LT_OK && a->dtype != LT_DTYPE_INVALID) {
    st = lt_plan_options_set_compute_dtype(r->opts, a->dtype);
    if (st == LT_OK) st = lt_plan_options_set_output_dtype(r->opts, a->dtype);
  }
  return st;
}

/* Plans, allocates the output and runs, timing the planning and the execution. */
static lt_status evaluate(const einsum_args *a, einsum_run *r) {
  lt_status st;
  snprintf(r->stage, sizeof r->stage, "opening device %s", a->device ? a->device : "(default)");
  if ((st = lt_context_create(a->device, &r->ctx)) != LT_OK) return st;
  if ((st = load_inputs(a, r)) != LT_OK) return st;
  snprintf(r->stage, sizeof r->stage, "planning '%s'", a->expr);
  if ((st = make_options(a, r)) != LT_OK) return st;
  double t0 = tool_seconds();
  st = lt_plan_einsum(a->expr, a->n_inputs, (const lt_tensor *const *)r->inputs, NULL, r->opts,
                      &r->plan);
  if (st != LT_OK) return st;
  if ((st = lt_plan_create_output(r->plan, &r->result)) != LT_OK) return st;
  double t1 = tool_seconds();
  snprintf(r->stage, sizeof r->stage, "running '%s'", a->expr);
  st = lt_plan_execute(r->plan, (const lt_tensor *const *)r->inputs, a->n_inputs, NULL, 0,
                       r->result);
  if (st == LT_OK) st = lt_context_synchronize(r->ctx);
  double t2 = tool_seconds();
  r->plan_seconds = t1 - t0;
  r->run_seconds = t2 - t1;
  return st;
}

static void run_free(einsum_run *r, int n_inputs) {
  lt_tensor_destroy(r->result);
  lt_plan_destroy(r->plan);
  for (int i = 0; i < n_inputs; i++)
    lt_tensor_destroy(r->inputs[i]);
  lt_plan_options_destroy(r->opts);
  lt_context_destroy(r->ctx);
}

/* Prints the result (or saves it with -o), after the plan description with --describe. */
static lt_status report(const einsum_args *a, einsum_run *r) {
  if (a->describe) {
    const char *text = lt_plan_describe(r->plan);
    size_t len = strlen(text);
    printf("%s%splan: %.3f ms, run: %.3f ms on %s\n", text,
           len && text[len - 1] == '\n' ? "" : "\n", 1e3 * r->plan_seconds, 1e3 * r->run_seconds,
           lt_context_device(r->ctx));
  }
  snprintf(r->stage, sizeof r->stage, "%s %s", a->output ? "writing" : "printing",
           a->output ? a->output : "the result");
  return a->output ? tool_save(r->result, a->output) : tool_print_tensor(stdout, r->result);
}

int tool_einsum(int argc, char **argv) {
  einsum_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  einsum_run r = {0};
  lt_status st = evaluate(&a, &r);
  if (st == LT_OK) st = report(&a, &r);
  rc = st == LT_OK ? 0 : tool_fail("einsum", r.stage, st);
  run_free(&r, a.n_inputs);
  return rc;
}

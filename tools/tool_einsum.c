/* `tensor einsum`: evaluates an einsum expression on .npy files, like numpy.einsum. */
#define _POSIX_C_SOURCE 200809L
#include "tool.h"
#include "tool_optional.h"
#include "tool_print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
} einsum_run;

static void usage(FILE *f) {
  fprintf(
      f, "usage: tensor einsum [--device DEV] [--dtype f32|f64] [--path auto|greedy|optimal|none]\n"
         "                     [-o OUT.npy] [--describe] EXPR IN1.npy [IN2.npy ...]\n\n"
         "Evaluates EXPR (numpy.einsum syntax: \"ij,jk->ik\", \"...ii->...i\", implicit output)\n"
         "on the arrays in the .npy files. Without -o the result is printed like NumPy does.\n\n"
         "  --device DEV   cpu (default: $LT_DEVICE or cpu), opencl, opencl:P:D\n"
         "  --dtype T      compute and output dtype (default: from the inputs)\n"
         "  --path ALGO    contraction path search (default auto)\n"
         "  -o OUT.npy     write the result to a .npy file instead of printing it\n"
         "  --describe     print the chosen path, its flops and intermediate sizes, and times\n");
}

static int fail(const char *what) {
  fprintf(stderr, "tensor einsum: %s\n", what);
  return 1;
}

static int fail_lib(lt_status st) {
  const char *msg = lt_last_error();
  fprintf(stderr, "tensor einsum: %s\n", msg && msg[0] ? msg : lt_status_string(st));
  return 1;
}

static bool parse_path(const char *s, lt_path_algo *out) {
  static const char *names[] = {"auto", "greedy", "optimal", "none"};
  static const lt_path_algo algos[] = {LT_PATH_AUTO, LT_PATH_GREEDY, LT_PATH_OPTIMAL, LT_PATH_NONE};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i]) == 0) return *out = algos[i], true;
  return false;
}

/* Parses argv; returns -1 to continue, else the exit status (usage errors, --help). */
static int parse_args(int argc, char **argv, einsum_args *a) {
  *a = (einsum_args){.path = LT_PATH_AUTO};
  char msg[256];
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(arg, "--describe") == 0) {
      a->describe = true;
    } else if (strcmp(arg, "--device") == 0 || strcmp(arg, "--dtype") == 0 ||
               strcmp(arg, "--path") == 0 || strcmp(arg, "-o") == 0) {
      if (!has_value) {
        snprintf(msg, sizeof msg, "option %s needs a value (see --help)", arg);
        return fail(msg);
      }
      const char *v = argv[++i];
      if (strcmp(arg, "--device") == 0)
        a->device = v;
      else if (strcmp(arg, "-o") == 0)
        a->output = v;
      else if (strcmp(arg, "--path") == 0 && !parse_path(v, &a->path)) {
        snprintf(msg, sizeof msg, "unknown --path '%s' (auto, greedy, optimal or none)", v);
        return fail(msg);
      } else if (strcmp(arg, "--dtype") == 0 && (lt_dtype_from_name(v, &a->dtype) != LT_OK ||
                                                 (a->dtype != LT_F32 && a->dtype != LT_F64))) {
        snprintf(msg, sizeof msg, "unknown --dtype '%s' (f32 or f64)", v);
        return fail(msg);
      }
    } else if (arg[0] == '-' && arg[1] == '-') {
      snprintf(msg, sizeof msg, "unknown option '%s' (see --help)", arg);
      return fail(msg);
    } else if (a->expr == NULL) {
      a->expr = arg;
    } else if (a->n_inputs == MAX_INPUTS) {
      return fail("too many input files");
    } else {
      a->inputs[a->n_inputs++] = arg;
    }
  }
  if (a->expr == NULL) {
    usage(stderr);
    return 2;
  }
  return -1;
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static lt_status load_inputs(const einsum_args *a, einsum_run *r) {
  for (int i = 0; i < a->n_inputs; i++) {
    lt_status st = lt_npy_load(r->ctx, a->inputs[i], &r->inputs[i]);
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
  if ((st = lt_context_create(a->device, &r->ctx)) != LT_OK) return st;
  if ((st = load_inputs(a, r)) != LT_OK) return st;
  if ((st = make_options(a, r)) != LT_OK) return st;
  double t0 = seconds_now();
  st = lt_plan_einsum(a->expr, a->n_inputs, (const lt_tensor *const *)r->inputs, NULL, r->opts,
                      &r->plan);
  if (st != LT_OK) return st;
  if ((st = lt_plan_create_output(r->plan, &r->result)) != LT_OK) return st;
  double t1 = seconds_now();
  st = lt_plan_execute(r->plan, (const lt_tensor *const *)r->inputs, a->n_inputs, NULL, 0,
                       r->result);
  if (st == LT_OK) st = lt_context_synchronize(r->ctx);
  double t2 = seconds_now();
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

int tool_einsum(int argc, char **argv) {
  einsum_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  if (!TOOL_HAVE(lt_npy_load) || !TOOL_HAVE(lt_plan_einsum) || !TOOL_HAVE(lt_npy_save))
    return fail("this libtensor was built without .npy or einsum support");
  einsum_run r = {0};
  lt_status st = evaluate(&a, &r);
  if (st != LT_OK) {
    rc = fail_lib(st);
  } else {
    if (a.describe) {
      const char *text = lt_plan_describe(r.plan);
      size_t len = strlen(text);
      printf("%s%splan: %.3f ms, run: %.3f ms on %s\n", text,
             len && text[len - 1] == '\n' ? "" : "\n", 1e3 * r.plan_seconds, 1e3 * r.run_seconds,
             lt_context_device(r.ctx));
    }
    st = a.output ? lt_npy_save(r.result, a.output) : tool_print_tensor(stdout, r.result);
    rc = st == LT_OK ? 0 : fail_lib(st);
  }
  run_free(&r, a.n_inputs);
  return rc;
}

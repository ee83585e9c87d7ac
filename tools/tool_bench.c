/* SPDX-License-Identifier: MIT */
/* `tensor bench`: runs every benchmark executable (bench_*) built beside the tool, shows a
 * progress line, prints each benchmark's table of ratios and optionally writes them as JSON. */
#define _POSIX_C_SOURCE 200809L
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_BENCHES = 64 };

typedef struct bench_result {
  char name[NAME_MAX + 1];
  int exit_status;
  double seconds;
  char *output; /* the benchmark's stdout */
  size_t output_len;
} bench_result;

static void usage(FILE *f) {
  fprintf(f, "usage: tensor bench [--quick] [--json FILE]\n\n"
             "Runs the benchmark executables (bench_*) -- found in $LT_BENCH_DIR, else\n"
             "../bench next to this tool (a build tree), else ../libexec/tensor/bench (an\n"
             "installed prefix), else next to it -- and prints\n"
             "their tables: each figure as a ratio to a limit measured in the same run.\n\n"
             "  --quick      short runs (LT_BENCH_QUICK=1, LT_BENCH_N=4194304 and LT_BENCH_REPS=3\n"
             "               unless set)\n"
             "  --json FILE  also write every benchmark's status, time and output as JSON\n");
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder holding the benchmarks; false if none is found. */
static bool find_bench_dir(char *dir, size_t size) {
  const char *env = getenv("LT_BENCH_DIR");
  if (env && env[0]) return snprintf(dir, size, "%s", env) < (int)size && is_dir(dir);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  if (snprintf(dir, size, "%s/../bench", exe) < (int)size && is_dir(dir)) return true;
  if (snprintf(dir, size, "%s/../libexec/tensor/bench", exe) < (int)size && is_dir(dir))
    return true;
  return snprintf(dir, size, "%s", exe) < (int)size && is_dir(dir);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(((const bench_result *)a)->name, ((const bench_result *)b)->name);
}

/* Lists executable files named bench_* in `dir`, sorted. */
static int list_benches(const char *dir, bench_result *out) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && n < MAX_BENCHES;) {
    char path[PATH_MAX];
    struct stat st;
    if (strncmp(e->d_name, "bench_", 6) != 0 || strchr(e->d_name, '.')) continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0) continue;
    memset(&out[n], 0, sizeof out[n]);
    snprintf(out[n].name, sizeof out[n].name, "%s", e->d_name);
    n++;
  }
  closedir(d);
  qsort(out, (size_t)n, sizeof *out, compare_names);
  return n;
}

/* Appends `line` to the result's captured output. */
static bool append(bench_result *r, const char *line, size_t len) {
  char *grown = realloc(r->output, r->output_len + len + 1);
  if (!grown) return false;
  memcpy(grown + r->output_len, line, len + 1);
  r->output = grown;
  r->output_len += len;
  return true;
}

/* Runs one benchmark, echoing a progress line (its latest output line) on a terminal. */
static void run_bench(const char *dir, bench_result *r, int index, int count) {
  char cmd[2 * PATH_MAX];
  /* Quoted for the shell; a folder with a quote in its name is refused below. */
  bool fits = snprintf(cmd, sizeof cmd, "'%s/%s' 2>&1", dir, r->name) < (int)sizeof cmd;
  bool tty = isatty(STDERR_FILENO);
  fprintf(stderr, "[%d/%d] %s ...%s", index + 1, count, r->name, tty ? "" : "\n");
  double start = tool_seconds();
  FILE *p = !fits || strchr(dir, '\'') ? NULL : popen(cmd, "r");
  r->exit_status = -1;
  if (p) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, p)) > 0) {
      append(r, line, (size_t)len);
      if (tty && len > 1)
        fprintf(stderr, "\r\033[K[%d/%d] %s: %.*s", index + 1, count, r->name,
                (int)(len - 1 > 50 ? 50 : len - 1), line);
    }
    free(line);
    int status = pclose(p);
    r->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  r->seconds = tool_seconds() - start;
  if (tty) fprintf(stderr, "\r\033[K");
  fprintf(stderr, "[%d/%d] %s: %s in %.1f s\n", index + 1, count, r->name,
          r->exit_status == 0 ? "done" : "FAILED", r->seconds);
}

static void json_string(FILE *f, const char *s, size_t len) {
  fputc('"', f);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static bool write_json(const char *path, const bench_result *r, int n, bool quick) {
  char *text = NULL;
  size_t text_len = 0;
  FILE *f = open_memstream(&text, &text_len);
  if (!f) return false;
  fprintf(f, "{\"libtensor\": \"%s\", \"quick\": %s, \"benchmarks\": [", lt_version(),
          quick ? "true" : "false");
  for (int i = 0; i < n; i++) {
    fprintf(f, "%s\n  {\"name\": \"%s\", \"exit_status\": %d, \"seconds\": %.3f, \"output\": ",
            i ? "," : "", r[i].name, r[i].exit_status, r[i].seconds);
    json_string(f, r[i].output ? r[i].output : "", r[i].output_len);
    fputc('}', f);
  }
  fprintf(f, "\n]}\n");
  bool ok = fclose(f) == 0 && tool_write_file(path, text, text_len);
  free(text);
  return ok;
}

int tool_bench(int argc, char **argv) {
  bool quick = false;
  const char *json = NULL;
  if (tool_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else {
      char msg[300];
      snprintf(msg, sizeof msg, "unknown argument '%s'", argv[i]);
      return tool_usage_error("bench", msg);
    }
  }
  char dir[PATH_MAX];
  static bench_result results[MAX_BENCHES];
  int n = find_bench_dir(dir, sizeof dir) ? list_benches(dir, results) : 0;
  if (n == 0) {
    fprintf(stderr, "tensor bench: no bench_* executables found (configure with "
                    "-DLT_BUILD_BENCH=ON and build or install them, or set LT_BENCH_DIR to "
                    "their folder)\n");
    return 1;
  }
  if (quick) {
    /* The benchmarks' own size knobs, unless the caller set them. */
    setenv("LT_BENCH_QUICK", "1", 1);
    setenv("LT_BENCH_N", "4194304", 0);
    setenv("LT_BENCH_REPS", "3", 0);
  }
  int failed = 0;
  for (int i = 0; i < n; i++) {
    run_bench(dir, &results[i], i, n);
    failed += results[i].exit_status != 0;
    printf("== %s (%.1f s%s)\n%s\n", results[i].name, results[i].seconds,
           results[i].exit_status ? ", FAILED" : "", results[i].output ? results[i].output : "");
  }
  if (json && !write_json(json, results, n, quick)) {
    fprintf(stderr, "tensor bench: cannot write %s: %s\n", json, strerror(errno));
    failed++;
  }
  for (int i = 0; i < n; i++)
    free(results[i].output);
  return failed ? 1 : 0;
}

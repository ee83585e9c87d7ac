/* SPDX-License-Identifier: MIT */
/* What the CPU backend measured about this machine (cpu_wisdom.h), kept in a small text file so
 * that every process on the machine plans alike. Measuring once per process made plans differ
 * from run to run (the figures are timings of a few milliseconds on a machine whose load
 * varies), and with them the rounding of results; a file read back makes the first process's
 * figures everyone's, and spares later processes the measurement.
 *
 * The file is $LT_WISDOM_DIR/<name>, else $XDG_CACHE_HOME/libtensor/<name>, else
 * $HOME/.cache/libtensor/<name>; LT_WISDOM=off turns it off. The name is a hash of what the
 * figures depend on: the library's version and build (its file's path, size and time), the
 * CPU's brand string, the instruction-set level, the thread count, and OpenBLAS's core. Lines are
 * "caps" and seven numbers, or "engine" / "dot", a slot index and an engine; each is appended with
 * one write (atomic among processes), the first answer for a key wins, and a line that does not
 * parse or is out of range is ignored: the file is a hint, never trusted for more than a plan
 * choice. */
#include "backend/cpu/cpu_wisdom.h"
#include "backend/cpu/cpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#ifdef LT_HAVE_OPENBLAS
#include <cblas.h>
#endif

#define MAX_ENGINES 4096
#define LINE_MAX_CHARS 256

typedef struct wisdom_engine {
  int table;
  long index;
  int engine;
} wisdom_engine;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool loaded, enabled, have_caps;
static char path[4096];
static double caps_figures[7];
static wisdom_engine engines[MAX_ENGINES];
static int n_engines;

static void cpu_brand(char *out, size_t size) {
  snprintf(out, size, "unknown");
#if defined(__x86_64__) || defined(__i386__)
  unsigned r[12];
  if (__get_cpuid(0x80000000u, &r[0], &r[1], &r[2], &r[3]) && r[0] >= 0x80000004u) {
    for (unsigned i = 0; i < 3; i++)
      __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    memcpy(out, r, size < sizeof r ? size - 1 : sizeof r);
    out[size - 1 < sizeof r ? size - 1 : sizeof r] = '\0';
  }
#endif
}

/* This library's file, size and modification time: a rebuilt or reinstalled library (engines
 * that may have changed) measures afresh instead of inheriting an older build's choices. */
static void library_stamp(char *out, size_t size) {
  static const char anchor = 0;
  Dl_info info;
  struct stat st;
  char *real = dladdr(&anchor, &info) && info.dli_fname ? realpath(info.dli_fname, NULL) : NULL;
  if (real && stat(real, &st) == 0)
    snprintf(out, size, "%s %lld %lld", real, (long long)st.st_size, (long long)st.st_mtime);
  else
    snprintf(out, size, "unknown build");
  free(real);
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* mkdir -p for the one or two levels a cache directory may lack. */
static bool make_dirs(char *dir) {
  for (char *p = dir + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      bool ok = mkdir(dir, 0755) == 0 || errno == EEXIST;
      *p = '/';
      if (!ok) return false;
    }
  return mkdir(dir, 0755) == 0 || errno == EEXIST;
}

static bool choose_path(lt_context *ctx) {
  const char *off = getenv("LT_WISDOM");
  if (off && (strcmp(off, "off") == 0 || strcmp(off, "0") == 0)) return false;
  char dir[3072];
  const char *d = getenv("LT_WISDOM_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (d && *d)
    snprintf(dir, sizeof dir, "%s", d);
  else if (xdg && *xdg == '/')
    snprintf(dir, sizeof dir, "%s/libtensor", xdg);
  else if (home && *home == '/')
    snprintf(dir, sizeof dir, "%s/.cache/libtensor", home);
  else
    return false;
  if (!make_dirs(dir)) return false;
  char brand[64], stamp[1200], key[1600];
  cpu_brand(brand, sizeof brand);
  library_stamp(stamp, sizeof stamp);
  const char *core = "none";
#ifdef LT_HAVE_OPENBLAS
  core = openblas_get_corename();
#endif
  snprintf(key, sizeof key, "libtensor %d.%d.%d (%s) | %s | %s | %d threads | OpenBLAS %s",
           LT_VERSION_MAJOR, LT_VERSION_MINOR, LT_VERSION_PATCH, stamp, brand,
           lt__cpu_isa_of(ctx)->name, lt__cpu_threads(ctx), core ? core : "?");
  int n = snprintf(path, sizeof path, "%s/cpu-%016llx.txt", dir, (unsigned long long)fnv1a(key));
  if (n <= 0 || (size_t)n >= sizeof path) return false;
  /* The key in a comment, for whoever opens the file; written once, by the creator. */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    char line[1700];
    int len = snprintf(line, sizeof line, "# measured by %s\n", key);
    if (len > 0 && write(fd, line, (size_t)len) < 0) { /* best effort */
    }
    close(fd);
  }
  return true;
}

static int recorded(int table, long index);

/* A number that fills the rest of the field (up to a space or the line's end), else false. */
static bool parse_double(const char **p, double *out) {
  char *end;
  errno = 0;
  *out = strtod(*p, &end);
  if (end == *p || errno || (*end != ' ' && *end != '\n' && *end != '\0')) return false;
  *p = end;
  return true;
}

static bool parse_long(const char **p, long *out) {
  char *end;
  errno = 0;
  *out = strtol(*p, &end, 10);
  if (end == *p || errno || (*end != ' ' && *end != '\n' && *end != '\0')) return false;
  *p = end;
  return true;
}

static bool at_end(const char *p) { return *p == '\0' || (*p == '\n' && p[1] == '\0'); }

static void parse_line(const char *line) {
  if (strncmp(line, "caps ", 5) == 0) {
    const char *p = line + 4;
    double f[7];
    for (int i = 0; i < 7; i++)
      if (!parse_double(&p, &f[i]) || !isfinite(f[i]) || f[i] <= 0 || f[i] > 1e18) return;
    if (at_end(p) && !have_caps) memcpy(caps_figures, f, sizeof f), have_caps = true;
    return;
  }
  int table = strncmp(line, "engine ", 7) == 0 ? LT__WISDOM_ENGINE
              : strncmp(line, "dot ", 4) == 0  ? LT__WISDOM_DOT
                                               : -1;
  const char *p = strchr(line, ' ');
  long index, engine;
  if (table < 0 || !parse_long(&p, &index) || !parse_long(&p, &engine) || !at_end(p)) return;
  if (index < 0 || engine < 1 || engine > LT__CPU_GEMM_KDOT || n_engines == MAX_ENGINES ||
      recorded(table, index) != 0)
    return;
  engines[n_engines++] = (wisdom_engine){table, index, (int)engine};
}

/* Under lock: reads the file once per process. */
static void load(lt_context *ctx) {
  if (loaded) return;
  loaded = true;
  enabled = choose_path(ctx);
  if (!enabled) return;
  FILE *f = fopen(path, "re");
  if (f == NULL) return;
  char line[LINE_MAX_CHARS];
  while (fgets(line, sizeof line, f))
    parse_line(line);
  fclose(f);
}

static void append(const char *line, int len) {
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)len) < 0) { /* best effort: the figures stay in this process */
  }
  close(fd);
}

bool lt__cpu_wisdom_caps(lt_context *ctx, lt__backend_caps *caps) {
  pthread_mutex_lock(&lock);
  load(ctx);
  bool got = have_caps;
  if (got) {
    caps->gemm_flops = caps_figures[0];
    caps->strided_gemm_share = caps_figures[1];
    caps->small_k_gemm_share = caps_figures[2];
    caps->strided_small_k_gemm_share = caps_figures[3];
    caps->copy_seconds = caps_figures[4];
    caps->call_seconds = caps_figures[5];
    caps->big_copy_seconds = caps_figures[6];
  }
  pthread_mutex_unlock(&lock);
  return got;
}

void lt__cpu_wisdom_save_caps(lt_context *ctx, const lt__backend_caps *caps) {
  pthread_mutex_lock(&lock);
  load(ctx);
  if (enabled && !have_caps) {
    char line[LINE_MAX_CHARS];
    int len = snprintf(line, sizeof line, "caps %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n",
                       caps->gemm_flops, caps->strided_gemm_share, caps->small_k_gemm_share,
                       caps->strided_small_k_gemm_share, caps->copy_seconds, caps->call_seconds,
                       caps->big_copy_seconds);
    if (len > 0 && len < (int)sizeof line) append(line, len);
  }
  pthread_mutex_unlock(&lock);
}

/* Under lock: the engine recorded for (table, index), 0 when none. */
static int recorded(int table, long index) {
  for (int i = 0; i < n_engines; i++)
    if (engines[i].table == table && engines[i].index == index) return engines[i].engine;
  return 0;
}

int lt__cpu_wisdom_find_engine(lt_context *ctx, int table, long index) {
  pthread_mutex_lock(&lock);
  load(ctx);
  int engine = recorded(table, index);
  pthread_mutex_unlock(&lock);
  return engine;
}

void lt__cpu_wisdom_save_engine(lt_context *ctx, int table, long index, int engine) {
  pthread_mutex_lock(&lock);
  load(ctx);
  if (enabled && recorded(table, index) == 0 && n_engines < MAX_ENGINES) {
    engines[n_engines++] = (wisdom_engine){table, index, engine};
    char line[LINE_MAX_CHARS];
    int len = snprintf(line, sizeof line, "%s %ld %d\n",
                       table == LT__WISDOM_ENGINE ? "engine" : "dot", index, engine);
    if (len > 0 && len < (int)sizeof line) append(line, len);
  }
  pthread_mutex_unlock(&lock);
}

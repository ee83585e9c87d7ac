/* SPDX-License-Identifier: MIT */
/* Runs a fuzz target without libFuzzer: every file named on the command line (directories are
 * walked one level deep) is passed to LLVMFuzzerTestOneInput once. The normal build uses it to
 * replay the seed corpora and every input that ever crashed, with any compiler. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  uint8_t *buf = NULL;
  size_t size = 0, cap = 0, n;
  do {
    if (size == cap) {
      cap = cap ? 2 * cap : 4096;
      buf = realloc(buf, cap);
      if (buf == NULL) abort();
    }
    n = fread(buf + size, 1, cap - size, f);
    size += n;
  } while (n > 0);
  fclose(f);
  LLVMFuzzerTestOneInput(buf, size);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int failures = 0, count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) continue; /* an absent corpus is an empty one */
    if (!S_ISDIR(st.st_mode)) {
      failures += replay_file(argv[i]);
      count++;
      continue;
    }
    DIR *dir = opendir(argv[i]);
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      failures += replay_file(path);
      count++;
    }
    if (dir) closedir(dir);
  }
  printf("replayed %d inputs\n", count);
  return failures ? 1 : 0;
}

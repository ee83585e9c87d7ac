/* SPDX-License-Identifier: MIT */
/* Saves that never lose data and reads that always end: a failed save over a good file leaves
 * it intact (disk full, file-size limit), a device node is written in place and never unlinked,
 * a symbolic link and the old file's mode survive a save, and endless or lying streams end in a
 * precise error instead of a hang or an out-of-memory. */
#define _GNU_SOURCE /* mknod, makedev, pipe2 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

typedef struct scratch {
  char dir[64];
  char file[96];
} scratch;

static void scratch_make(scratch *s) {
  const char *tmp = getenv("TMPDIR");
  snprintf(s->dir, sizeof s->dir, "%s/lt_io_XXXXXX",
           tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  assert_non_null(mkdtemp(s->dir));
  snprintf(s->file, sizeof s->file, "%s/a.npy", s->dir);
}

/* Counts the folder's entries other than . and .. (a failed save must leave no temporary). */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static void scratch_free(scratch *s) {
  DIR *d = opendir(s->dir);
  if (d) {
    char path[400];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(s->dir);
}

/* The file's values equal t's. */
static void expect_file_holds(lt_context *ctx, const char *path, const lt_tensor *t) {
  lt_tensor *back = NULL;
  LT_CHECK(lt_npy_load(ctx, path, &back));
  assert_int_equal(lt_tensor_numel(back), lt_tensor_numel(t));
  double *want = lt_test_read_all(t), *got = lt_test_read_all(back);
  assert_memory_equal(want, got, sizeof(double) * (size_t)lt_tensor_numel(t));
  free(want);
  free(got);
  lt_tensor_destroy(back);
}

/* A save that fails part way (over the file-size limit) keeps the old file whole. */
static void test_failed_save_keeps_old_file(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  scratch s;
  scratch_make(&s);
  int64_t small_shape[1] = {100}, big_shape[2] = {512, 512};
  lt_tensor *small = lt_test_random_tensor(ctx, LT_F32, 1, small_shape, LT_LAYOUT_CONTIGUOUS);
  lt_tensor *big = lt_test_random_tensor(ctx, LT_F64, 2, big_shape, LT_LAYOUT_TRANSPOSED);
  LT_CHECK(lt_npy_save(small, s.file));
  chmod(s.file, 0640);

  /* 64 KiB limit; the signal the system sends past it is ignored, so write() fails (EFBIG). */
  struct rlimit old, lim;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = 65536;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  lt_status st = lt_npy_save(big, s.file);
  char message[512];
  snprintf(message, sizeof message, "%s", lt_last_error());
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, old_handler);
  if (st != LT_ERR_IO) fail_msg("save past RLIMIT_FSIZE: %s (%s)", lt_status_string(st), message);
  if (strstr(message, s.file) == NULL || strstr(message, "File too large") == NULL)
    fail_msg("message '%s' names neither the file nor the reason", message);
  expect_file_holds(ctx, s.file, small);
  assert_int_equal(entries(s.dir), 1); /* the temporary is gone */

  /* A successful save replaces the file and keeps its mode. */
  LT_CHECK(lt_npy_save_with_flags(big, s.file, LT_SAVE_FSYNC));
  expect_file_holds(ctx, s.file, big);
  struct stat info;
  assert_int_equal(stat(s.file, &info), 0);
  assert_int_equal(info.st_mode & 0777, 0640);
  assert_int_equal(entries(s.dir), 1);
  LT_CHECK_FAILS(lt_npy_save_with_flags(big, s.file, 0x10), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "unknown flags 0x10"));

  /* Through a symbolic link: the target is replaced, the link stays a link. */
  char link[128];
  snprintf(link, sizeof link, "%s/link.npy", s.dir);
  assert_int_equal(symlink("a.npy", link), 0);
  LT_CHECK(lt_npy_save(small, link));
  assert_int_equal(lstat(link, &info), 0);
  assert_true(S_ISLNK(info.st_mode));
  expect_file_holds(ctx, s.file, small);
  assert_int_equal(entries(s.dir), 2);

  /* A folder that cannot take the temporary: the save fails, the old file stays. Root may
   * write anywhere, so this part only checks the error path where permissions bite. */
  chmod(s.dir, 0500);
  if (access(s.dir, W_OK) != 0) {
    LT_CHECK_FAILS(lt_npy_save(big, s.file), LT_ERR_IO);
    assert_non_null(strstr(lt_last_error(), "temporary file beside it"));
    expect_file_holds(ctx, s.file, small);
  }
  chmod(s.dir, 0700);
  lt_tensor_destroy(small);
  lt_tensor_destroy(big);
  scratch_free(&s);
  lt_context_destroy(ctx);
}

/* A character device that answers every write with ENOSPC (/dev/full's numbers, made in a
 * private folder): the save fails with the device's reason and the node stays. */
static void test_device_node_is_never_unlinked(void **state) {
  (void)state;
  scratch s;
  scratch_make(&s);
  char node[128];
  snprintf(node, sizeof node, "%s/full", s.dir);
  if (mknod(node, S_IFCHR | 0666, makedev(1, 7)) != 0) {
    scratch_free(&s);
    skip(); /* needs CAP_MKNOD (CI runs as root) */
  }
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shape[1] = {1000};
  lt_tensor *t = lt_test_random_tensor(ctx, LT_F32, 1, shape, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK_FAILS(lt_npy_save(t, node), LT_ERR_IO);
  assert_non_null(strstr(lt_last_error(), "No space left on device"));
  struct stat info;
  assert_int_equal(stat(node, &info), 0);
  assert_true(S_ISCHR(info.st_mode));
  assert_int_equal(entries(s.dir), 1);
  /* A device that takes the bytes (/dev/null) succeeds and stays too. */
  if (access("/dev/null", W_OK) == 0) {
    LT_CHECK(lt_npy_save(t, "/dev/null"));
    assert_int_equal(stat("/dev/null", &info), 0);
    assert_true(S_ISCHR(info.st_mode));
  }
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  scratch_free(&s);
}

/* ---- streams ---- */

typedef struct feeder {
  int fd;
  const unsigned char *head;
  size_t head_len;
  size_t zeros; /* zero bytes after head; SIZE_MAX = until the reader goes away */
} feeder;

static void *feed(void *arg) {
  feeder *f = arg;
  if (write(f->fd, f->head, f->head_len) != (ssize_t)f->head_len) {
    close(f->fd);
    return NULL;
  }
  static const unsigned char zeros[4096];
  for (size_t sent = 0; sent < f->zeros;) {
    size_t n = f->zeros - sent < sizeof zeros ? f->zeros - sent : sizeof zeros;
    ssize_t k = write(f->fd, zeros, n);
    if (k <= 0) break; /* EPIPE once the reader closed its end */
    sent += (size_t)k;
  }
  close(f->fd);
  return NULL;
}

/* Loads what `f` writes into a pipe, through /dev/fd/N (a path, as a user would pass
 * /dev/stdin); the alarm turns a hang into a failure. */
static lt_status load_from_pipe(lt_context *ctx, feeder *f, lt_tensor **out, char *path) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  f->fd = fds[1];
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, feed, f), 0);
  sprintf(path, "/dev/fd/%d", fds[0]);
  alarm(60);
  lt_status st = lt_npy_load(ctx, path, out);
  alarm(0);
  close(fds[0]);
  pthread_join(th, NULL);
  return st;
}

static void test_streams(void **state) {
  (void)state;
  signal(SIGPIPE, SIG_IGN);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  float data[6] = {1, 2, 3, 4, 5, 6};
  lt_test_npy_bytes good = lt_test_make_npy(
      1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data, sizeof data, true);
  lt_tensor *t = NULL;
  char path[32];

  /* The exact bytes: loads. */
  feeder f = {.head = good.data, .head_len = good.size, .zeros = 0};
  LT_CHECK(load_from_pipe(ctx, &f, &t, path));
  assert_int_equal(lt_tensor_numel(t), 6);
  lt_tensor_destroy(t);
  t = NULL;

  /* A valid file followed by an endless stream (`cat a.npy /dev/zero | tensor info
   * /dev/stdin`): refused at the first byte past the data. */
  f.zeros = SIZE_MAX;
  LT_CHECK_FAILS(load_from_pipe(ctx, &f, &t, path), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "trailing data after 24 bytes"));
  assert_null(t);
  /* Trailing bytes arriving after a pause in the stream (past the header's first read). */
  f.zeros = 100000;
  LT_CHECK_FAILS(load_from_pipe(ctx, &f, &t, path), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "trailing data"));
  free(good.data);

  /* A pipe that claims 8 TiB and holds 8 bytes: truncated data, with the path named once. */
  lt_test_npy_bytes claim = lt_test_make_npy(
      1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }", data, 8, true);
  feeder c = {.head = claim.data, .head_len = claim.size, .zeros = 0};
  LT_CHECK_FAILS(load_from_pipe(ctx, &c, &t, path), LT_ERR_FORMAT);
  const char *msg = lt_last_error();
  assert_non_null(strstr(msg, "truncated data"));
  assert_non_null(strstr(msg, "holds 8 after the header"));
  const char *first = strstr(msg, path);
  assert_non_null(first);
  assert_null(strstr(first + strlen(path), path));
  /* 40 MB claimed, 20 MB sent: the buffer grows past its first chunk and still fails cleanly. */
  lt_test_npy_bytes mid = lt_test_make_npy(
      1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10000000,), }", NULL, 0, true);
  feeder m = {.head = mid.data, .head_len = mid.size, .zeros = 20000000};
  LT_CHECK_FAILS(load_from_pipe(ctx, &m, &t, path), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "holds 20000000 after the header"));
  m.zeros = 40000001; /* one byte too many, far past the header's first read */
  LT_CHECK_FAILS(load_from_pipe(ctx, &m, &t, path), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "trailing data after 40000000 bytes"));
  m.zeros = 40000000; /* exactly the data: loads, all zeros */
  LT_CHECK(load_from_pipe(ctx, &m, &t, path));
  assert_int_equal(lt_tensor_numel(t), 10000000);
  int64_t last[1] = {9999999};
  double v = 1;
  LT_CHECK(lt_tensor_get(t, last, &v));
  assert_true(v == 0.0);
  lt_tensor_destroy(t);
  free(claim.data);
  free(mid.data);
  lt_context_destroy(ctx);
}

/* Header spellings NumPy refuses, and an empty shape too large for its strides. */
static void test_header_edges(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = NULL;
  lt_test_npy_bytes b = lt_test_make_npy(
      1, "{'descr': '<f4', 'fortran_order': False, 'shape': (012,), }", "abcdefghijkl", 12, true);
  LT_CHECK_FAILS(lt_npy_load_buffer(ctx, b.data, b.size, &t), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "leading zero"));
  free(b.data);
  b = lt_test_make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 10), }", NULL, 0,
                       true);
  LT_CHECK(lt_npy_load_buffer(ctx, b.data, b.size, &t)); /* a lone 0 is fine */
  lt_tensor_destroy(t);
  t = NULL;
  free(b.data);
  b = lt_test_make_npy(
      1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904), }", NULL, 0,
      true);
  LT_CHECK_FAILS(lt_npy_load_buffer(ctx, b.data, b.size, &t), LT_ERR_FORMAT);
  assert_non_null(strstr(lt_last_error(), "the tensor is empty, but the strides"));
  free(b.data);
  assert_null(t);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_failed_save_keeps_old_file),
      cmocka_unit_test(test_device_node_is_never_unlinked),
      cmocka_unit_test(test_streams),
      cmocka_unit_test(test_header_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

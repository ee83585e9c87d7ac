/* SPDX-License-Identifier: MIT */
/* Concurrency: one context used from 8 threads at once (tensors, views, copies), thread-local
 * error messages, one plan executed from 8 threads on distinct outputs, one-shot einsum from 8
 * threads sharing the context's plan cache; results bitwise identical to a single-threaded
 * run, and bitwise reproducible run to run for a fixed worker-thread count. Run under
 * ThreadSanitizer with tools/test.sh --tsan. Threads record failures; the main thread asserts
 * (CMocka's assertions are not thread-safe). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 8

typedef struct worker {
  int id;
  lt_context *ctx;
  const char *device;
  pthread_barrier_t *barrier;
  char failure[256]; /* first failure, "" if none */
  /* plan / einsum work */
  const lt_plan *plan;
  const lt_tensor *const *inputs;
  int n_inputs;
  lt_tensor *out;
  const void *job; /* einsum inputs and references */
} worker;

#define WORKER_CHECK(w, cond, ...)                                                                 \
  do {                                                                                             \
    if (!(cond) && (w)->failure[0] == '\0')                                                        \
      snprintf((w)->failure, sizeof(w)->failure, __VA_ARGS__);                                     \
  } while (0)

static void join_and_check(pthread_t *threads, worker *workers) {
  for (int i = 0; i < N_THREADS; i++)
    pthread_join(threads[i], NULL);
  for (int i = 0; i < N_THREADS; i++)
    if (workers[i].failure[0]) fail_msg("thread %d: %s", i, workers[i].failure);
}

/* Per-thread random numbers (the harness's generator is global state). */
static double thread_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0 + 0.25;
}

/* Each thread builds tensors, views and copies on the shared context and checks them against
 * its own host data. */
static void *core_worker(void *arg) {
  worker *w = arg;
  uint64_t seed = 1000 + (uint64_t)w->id;
  for (int iter = 0; iter < 40 && w->failure[0] == '\0'; iter++) {
    int64_t shape[3] = {2 + w->id % 3, 3 + iter % 4, 4};
    double data[5 * 7 * 4];
    int64_t n = shape[0] * shape[1] * shape[2];
    for (int64_t i = 0; i < n; i++)
      data[i] = thread_rand(&seed);
    lt_tensor *t = NULL, *p = NULL, *s = NULL, *c = NULL, *dst = NULL;
    lt_status st = lt_tensor_from_host(w->ctx, LT_F64, 3, shape, NULL, data, &t);
    if (st == LT_OK) st = lt_view_permute(t, (const int[]){2, 0, 1}, &p);
    if (st == LT_OK) st = lt_view_slice(p, 2, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, -1, &s);
    if (st == LT_OK) st = lt_tensor_contiguous(s, LT_F32, &c);
    if (st == LT_OK) st = lt_tensor_zeros(w->ctx, LT_F64, 3, lt_tensor_shape(s), &dst);
    if (st == LT_OK) st = lt_tensor_copy_into(dst, c);
    WORKER_CHECK(w, st == LT_OK, "iteration %d: %s (%s)", iter, lt_status_string(st),
                 lt_last_error());
    if (st == LT_OK) {
      double got[5 * 7 * 4];
      st = lt_tensor_to_host(dst, got, sizeof got);
      WORKER_CHECK(w, st == LT_OK, "to_host: %s", lt_last_error());
      /* dst[k][i][j] = data[i][shape1-1-j][k], rounded through f32. */
      for (int64_t k = 0; k < shape[2]; k++)
        for (int64_t i = 0; i < shape[0]; i++)
          for (int64_t j = 0; j < shape[1]; j++) {
            double want = (float)data[(i * shape[1] + (shape[1] - 1 - j)) * shape[2] + k];
            double g = got[(k * shape[0] + i) * shape[1] + j];
            WORKER_CHECK(w, g == want, "element (%lld,%lld,%lld): %g, want %g", (long long)k,
                         (long long)i, (long long)j, g, want);
          }
    }
    lt_tensor_destroy(dst);
    lt_tensor_destroy(c);
    lt_tensor_destroy(t); /* destroyed before its views on purpose: storage refcounts */
    lt_tensor_destroy(s);
    lt_tensor_destroy(p);
  }
  return NULL;
}

static void test_concurrent_tensors_views_copies(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    pthread_t threads[N_THREADS];
    worker workers[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
      workers[i] = (worker){.id = i, .ctx = ctx, .device = devs[d]};
      pthread_create(&threads[i], NULL, core_worker, &workers[i]);
    }
    join_and_check(threads, workers);
    lt_context_destroy(ctx);
  }
}

/* Each thread provokes its own error, waits until all have, then reads its message back. */
static void *error_worker(void *arg) {
  worker *w = arg;
  lt_tensor *t = NULL, *v = NULL;
  const int64_t shape[1] = {3};
  lt_status st = lt_tensor_zeros(w->ctx, LT_F32, 1, shape, &t);
  WORKER_CHECK(w, st == LT_OK, "zeros: %s", lt_last_error());
  st = lt_view_select(t, 0, 100 + w->id, &v);
  WORKER_CHECK(w, st == LT_ERR_OUT_OF_RANGE, "select returned %s", lt_status_string(st));
  pthread_barrier_wait(w->barrier);
  char want[32];
  snprintf(want, sizeof want, "index %d ", 100 + w->id);
  WORKER_CHECK(w, strstr(lt_last_error(), want) != NULL, "message '%s' lacks '%s'", lt_last_error(),
               want);
  pthread_barrier_wait(w->barrier);
  lt_clear_error();
  lt_tensor_destroy(t);
  return NULL;
}

static void test_thread_local_errors(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, N_THREADS);
  pthread_t threads[N_THREADS];
  worker workers[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    workers[i] = (worker){.id = i, .ctx = ctx, .barrier = &barrier};
    pthread_create(&threads[i], NULL, error_worker, &workers[i]);
  }
  join_and_check(threads, workers);
  pthread_barrier_destroy(&barrier);
  lt_context_destroy(ctx);
}

/* ---- plans and einsum (active once the library has them) ---- */

/* Bitwise comparison of two tensors of the same shape. */
static bool bitwise_equal(const lt_tensor *a, const lt_tensor *b) {
  size_t n = lt_tensor_nbytes(a);
  if (n != lt_tensor_nbytes(b)) return false;
  unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
  bool same = lt_tensor_to_host(a, x, n) == LT_OK && lt_tensor_to_host(b, y, n) == LT_OK &&
              memcmp(x, y, n) == 0;
  free(x);
  free(y);
  return same;
}

static void *plan_worker(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(w->barrier); /* start together */
  for (int rep = 0; rep < 5; rep++) {
    lt_status st = lt_plan_execute(w->plan, w->inputs, w->n_inputs, NULL, 0, w->out);
    WORKER_CHECK(w, st == LT_OK, "execute: %s (%s)", lt_status_string(st), lt_last_error());
  }
  return NULL;
}

/* Executes `plan` from 8 threads at once, each into its own output, and compares every output
 * bitwise with a single-threaded execution. */
static void run_plan_concurrently(lt_context *ctx, const lt_plan *plan,
                                  const lt_tensor *const *inputs, int n_inputs) {
  lt_tensor *ref = NULL;
  LT_CHECK(lt_plan_create_output(plan, &ref));
  LT_CHECK(lt_plan_execute(plan, inputs, n_inputs, NULL, 0, ref));
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, N_THREADS);
  pthread_t threads[N_THREADS];
  worker workers[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    workers[i] = (worker){.id = i,
                          .ctx = ctx,
                          .barrier = &barrier,
                          .plan = plan,
                          .inputs = inputs,
                          .n_inputs = n_inputs};
    LT_CHECK(lt_plan_create_output(plan, &workers[i].out));
    pthread_create(&threads[i], NULL, plan_worker, &workers[i]);
  }
  join_and_check(threads, workers);
  for (int i = 0; i < N_THREADS; i++) {
    if (!bitwise_equal(workers[i].out, ref))
      fail_msg("thread %d's output differs from the single-threaded one", i);
    lt_tensor_destroy(workers[i].out);
  }
  pthread_barrier_destroy(&barrier);
  lt_tensor_destroy(ref);
}

static void test_one_plan_many_threads(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t sa[2] = {37, 29}, sb[2] = {29, 41};
    lt_tensor *in[2] = {lt_test_random_tensor(ctx, LT_F32, 2, sa, LT_LAYOUT_TRANSPOSED),
                        lt_test_random_tensor(ctx, LT_F32, 2, sb, LT_LAYOUT_STEPPED)};
    { /* an einsum plan */
      lt_plan *plan = NULL;
      LT_CHECK(lt_plan_einsum("ij,jk->ik", 2, (const lt_tensor *const *)in, NULL, NULL, &plan));
      run_plan_concurrently(ctx, plan, (const lt_tensor *const *)in, 2);
      lt_plan_destroy(plan);
    }
    { /* a broadcasting binary plan */
      const int32_t ma[2] = {'i', 'j'}, mb[1] = {'j'}, md[2] = {'i', 'j'};
      lt_tensor *row = NULL, *d_layout = NULL;
      LT_CHECK(lt_view_select(in[0], 0, 3, &row));
      LT_CHECK(lt_tensor_empty(ctx, LT_F32, 2, sa, &d_layout));
      lt_plan *plan = NULL;
      LT_CHECK(lt_plan_binary(in[0], ma, row, mb, LT_BINARY_MUL, d_layout, md, NULL, &plan));
      const lt_tensor *ins[2] = {in[0], row};
      run_plan_concurrently(ctx, plan, ins, 2);
      lt_plan_destroy(plan);
      lt_tensor_destroy(d_layout);
      lt_tensor_destroy(row);
    }
    lt_tensor_destroy(in[0]);
    lt_tensor_destroy(in[1]);
    lt_context_destroy(ctx);
  }
}

/* Expressions the einsum threads cycle through: repeats hit the shared plan cache. */
static const char *const einsum_exprs[] = {"ij,jk->ik", "ij->ji", "ij,ij->", "ij,jk->ki"};
#define N_EXPRS 4

typedef struct einsum_job {
  const lt_tensor *a, *b;
  lt_tensor *ref[N_EXPRS];
} einsum_job;

static void *einsum_worker(void *arg) {
  worker *w = arg;
  const einsum_job *job = w->job;
  const lt_tensor *ops[2] = {job->a, job->b};
  pthread_barrier_wait(w->barrier);
  for (int rep = 0; rep < 6; rep++) {
    int e = (w->id + rep) % N_EXPRS;
    const lt_tensor *args[2] = {ops[0], e == 2 ? ops[0] : ops[1]};
    lt_tensor *out = NULL;
    lt_status st = lt_einsum(einsum_exprs[e], e == 1 ? 1 : 2, args, NULL, &out);
    WORKER_CHECK(w, st == LT_OK, "%s: %s (%s)", einsum_exprs[e], lt_status_string(st),
                 lt_last_error());
    if (st == LT_OK)
      WORKER_CHECK(w, bitwise_equal(out, job->ref[e]), "%s differs from the single-threaded result",
                   einsum_exprs[e]);
    lt_tensor_destroy(out);
    if (rep == 3 && w->id == 0) lt_context_clear_cache(w->ctx); /* clearing races with use */
  }
  return NULL;
}

static void test_one_shot_einsum_many_threads(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t sa[2] = {33, 33};
    einsum_job job = {lt_test_random_tensor(ctx, LT_F32, 2, sa, LT_LAYOUT_NEGATIVE),
                      lt_test_random_tensor(ctx, LT_F32, 2, sa, LT_LAYOUT_TRANSPOSED),
                      {NULL}};
    for (int e = 0; e < N_EXPRS; e++) {
      const lt_tensor *args[2] = {job.a, e == 2 ? job.a : job.b};
      LT_CHECK(lt_einsum(einsum_exprs[e], e == 1 ? 1 : 2, args, NULL, &job.ref[e]));
    }
    LT_CHECK(lt_context_clear_cache(ctx));
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, N_THREADS);
    pthread_t threads[N_THREADS];
    worker workers[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
      workers[i] = (worker){.id = i, .ctx = ctx, .barrier = &barrier, .job = &job};
      pthread_create(&threads[i], NULL, einsum_worker, &workers[i]);
    }
    join_and_check(threads, workers);
    pthread_barrier_destroy(&barrier);
    for (int e = 0; e < N_EXPRS; e++)
      lt_tensor_destroy(job.ref[e]);
    lt_tensor_destroy((lt_tensor *)job.a);
    lt_tensor_destroy((lt_tensor *)job.b);
    lt_context_destroy(ctx);
  }
}

/* The large computations whose results must be bitwise reproducible. */
typedef enum big_kind { BIG_REDUCE_SUM, BIG_EINSUM_SUM, BIG_MATMUL, BIG_KINDS } big_kind;
static const char *const big_kind_names[BIG_KINDS] = {"lt_reduce(SUM)", "ij->", "ij,jk->ik"};

/* Runs `kind` (a sum over all elements through lt_reduce or einsum, or a matrix product) on
 * fresh random data with the given worker count and returns the result on the host. Large
 * enough to be split across threads inside the library. */
static lt_tensor *big_run(int threads, const char *device, big_kind kind) {
  lt_context *ctx;
  LT_CHECK(lt_context_create(device, &ctx));
  LT_CHECK(lt_context_set_num_threads(ctx, threads));
  lt_test_rng_reset(77);
  const int64_t sa[2] = {257, 1531}, sb[2] = {1531, 67};
  lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, sa, LT_LAYOUT_TRANSPOSED);
  lt_tensor *b = lt_test_random_tensor(ctx, LT_F32, 2, sb, LT_LAYOUT_STEPPED);
  lt_tensor *out = NULL;
  const lt_tensor *args[2] = {a, b};
  if (kind == BIG_MATMUL)
    LT_CHECK(lt_einsum("ij,jk->ik", 2, args, NULL, &out));
  else if (kind == BIG_EINSUM_SUM)
    LT_CHECK(lt_einsum("ij->", 1, args, NULL, &out));
  else
    LT_CHECK(lt_reduce(LT_REDUCE_SUM, a, -1, NULL, false, &out));
  lt_tensor *host = NULL;
  lt_context *cpu;
  LT_CHECK(lt_context_create("cpu", &cpu));
  LT_CHECK(lt_tensor_to_context(out, cpu, &host));
  lt_tensor_destroy(out);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_context_destroy(ctx);
  lt_context_destroy(cpu);
  return host;
}

/* A large reduction or product (threaded inside the library) computed twice on fresh contexts
 * with the same worker count must agree bit for bit. */
static void test_reproducible_for_fixed_thread_count(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    const int counts[4] = {1, 2, 3, 8};
    for (int k = 0; k < 4; k++)
      for (big_kind kind = 0; kind < BIG_KINDS; kind++) {
        lt_tensor *first = big_run(counts[k], devs[d], kind);
        lt_tensor *second = big_run(counts[k], devs[d], kind);
        if (!bitwise_equal(first, second))
          fail_msg("%s, %d threads, %s: two runs differ", devs[d], counts[k], big_kind_names[kind]);
        lt_tensor_destroy(first);
        lt_tensor_destroy(second);
      }
  }
}

/* Plans executed after the pool's workers fell asleep (pauses past the spin window; the
 * execute call wakes them before its first job, cpu_pool.c's warm-up) and while another
 * thread keeps the pool busy: the same bits as one thread. Under TSan this covers the wake-up
 * racing with jobs and with workers going to sleep. */
static void *busy_worker(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 6; i++) {
    lt_status st = lt_plan_execute(w->plan, w->inputs, w->n_inputs, NULL, 0, w->out);
    WORKER_CHECK(w, st == LT_OK, "execute %d: %s", i, lt_last_error());
  }
  return NULL;
}

static void test_plans_after_idle_pauses(void **state) {
  (void)state;
  lt_tensor *want = big_run(1, "cpu", BIG_MATMUL);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  LT_CHECK(lt_context_set_num_threads(ctx, 4));
  lt_test_rng_reset(77);
  const int64_t sa[2] = {257, 1531}, sb[2] = {1531, 67};
  lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, sa, LT_LAYOUT_TRANSPOSED);
  lt_tensor *b = lt_test_random_tensor(ctx, LT_F32, 2, sb, LT_LAYOUT_STEPPED);
  const lt_tensor *args[2] = {a, b};
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum("ij,jk->ik", 2, args, NULL, NULL, &plan));
  lt_tensor *out, *other;
  LT_CHECK(lt_plan_create_output(plan, &out));
  LT_CHECK(lt_plan_create_output(plan, &other));
  for (int pause = 0; pause < 3; pause++) {
    struct timespec ts = {0, 2000000L * (pause + 1)}; /* 2-6 ms: workers asleep */
    nanosleep(&ts, NULL);
    worker w = {.id = 0, .plan = plan, .inputs = args, .n_inputs = 2, .out = other};
    pthread_t busy;
    if (pause == 2) pthread_create(&busy, NULL, busy_worker, &w);
    LT_CHECK(lt_plan_execute(plan, args, 2, NULL, 0, out));
    if (pause == 2) {
      pthread_join(busy, NULL);
      if (w.failure[0]) fail_msg("%s", w.failure);
      if (!bitwise_equal(other, want)) fail_msg("the concurrent caller's result differs");
    }
    if (!bitwise_equal(out, want))
      fail_msg("after a pause of %d ms: result differs", 2 * pause + 2);
  }
  lt_tensor_destroy(out);
  lt_tensor_destroy(other);
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_context_destroy(ctx);
  lt_tensor_destroy(want);
}

int main(void) {
  lt_test_rng_reset(lt_test_seed());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_tensors_views_copies),
      cmocka_unit_test(test_thread_local_errors),
      cmocka_unit_test(test_one_plan_many_threads),
      cmocka_unit_test(test_one_shot_einsum_many_threads),
      cmocka_unit_test(test_reproducible_for_fixed_thread_count),
      cmocka_unit_test(test_plans_after_idle_pauses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

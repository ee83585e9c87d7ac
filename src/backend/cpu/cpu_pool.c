/* SPDX-License-Identifier: MIT */
/* Persistent worker threads, one job at a time. A job's tasks are handed out in chunks from an
 * atomic counter, so a worker the OS has not scheduled yet (the machine may be shared) delays
 * nothing: the others, the caller included, take its chunks. The caller closes the job when
 * every chunk is taken and waits only for workers still running one; a worker waking later
 * sees the job closed and sleeps again. A second caller arriving while a job runs (plans
 * executed from several threads) runs its job serially, so the pool never deadlocks or nests.
 *
 * Waiting spins (yielding the core) for a short window before it sleeps, on both sides: one
 * operation runs many jobs a few microseconds apart (a GEMM has one per k block), and a thread
 * woken from sleep arrives late, later still after the machine was idle (the OS's and the
 * hypervisor's idle states are chosen by recent history); if workers slept between the jobs,
 * a call after a pause could run at up to half speed, the caller taking every chunk before its
 * helper woke, job after job. The window starts when the job ends, not when a worker runs out
 * of chunks: a worker that finished first (a job of two halves, one per thread) used to fall
 * asleep while the caller still ran its half, and on a hypervisor the next call then waited
 * 1-4 ms for it (measured on a 2-vCPU KVM guest: 512^3 GEMMs after a 0.2 s pause ran at single-
 * thread speed call after call). Within the window the next job finds the workers awake; after
 * it nothing spins, so an idle process costs nothing and leaves the cores to whatever runs next
 * (unlike OpenBLAS's 0.1 s spin). */
#include "backend/cpu/cpu_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* How long a waiting thread spins before it sleeps, unless LT_POOL_SPIN_US says otherwise: a
 * few times the gap between the jobs of one operation, far below a human-visible pause. */
#define DEFAULT_SPIN_NS 200000

struct lt__cpu_pool {
  pthread_mutex_t busy; /* held by the caller that owns the current job */
  pthread_mutex_t lock;
  pthread_cond_t wake, done;
  int n_workers;
  pthread_t *workers;
  int64_t spin_ns;
  /* The current job; fields change only under `lock` (the atomics are also read while
   * spinning, outside it). */
  atomic_ullong generation;
  atomic_bool quit;
  lt__cpu_range_fn fn;
  void *arg;
  int64_t n_tasks, chunk;
  atomic_bool open;   /* chunks still being handed out or run by the caller (written under lock) */
  int max_helpers;    /* workers allowed to join this job */
  atomic_int running; /* workers inside this job */
  atomic_llong next;
  /* Warm-ups (lt__cpu_pool_warm): a sleeping worker woken by one spins again for the window. */
  uint64_t warm_generation; /* under `lock` */
  atomic_int sleeping;      /* workers waiting on `wake` */
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until done(pool) or spin_ns pass; yields the core on each check, so a spinning thread
 * delays no thread that has work (it only stays ready to run). */
static void spin_until(lt__cpu_pool *pool, bool (*done)(lt__cpu_pool *, uint64_t), uint64_t arg) {
  if (pool->spin_ns <= 0) return;
  int64_t start = now_ns();
  while (!done(pool, arg) && now_ns() - start < pool->spin_ns)
    sched_yield();
}

static bool new_job(lt__cpu_pool *pool, uint64_t seen) {
  return atomic_load_explicit(&pool->quit, memory_order_relaxed) ||
         atomic_load_explicit(&pool->generation, memory_order_acquire) != seen;
}

/* The job a worker just helped with is over (the caller ran its last chunk) or another came. */
static bool job_over(lt__cpu_pool *pool, uint64_t seen) {
  return new_job(pool, seen) || !atomic_load_explicit(&pool->open, memory_order_acquire);
}

static bool helpers_done(lt__cpu_pool *pool, uint64_t unused) {
  (void)unused;
  return atomic_load_explicit(&pool->running, memory_order_acquire) == 0;
}

typedef struct worker_arg {
  lt__cpu_pool *pool;
} worker_arg;

/* Guided chunks: each take is a share of what remains (REMAINING_SHARE per thread), down to
 * the job's minimum. Early chunks are long (little per-chunk setup); the last are short, so a
 * thread that took one just before the end (a worker woken late, on a core the hypervisor or a
 * busy machine slows) holds the others at the job's end for a short chunk, not 1/16 of the job. */
#define REMAINING_SHARE 4

static void take_chunks(lt__cpu_pool *pool, lt__cpu_range_fn fn, void *arg, int64_t n,
                        int64_t min_chunk, int parts) {
  int64_t lo = (int64_t)atomic_load_explicit(&pool->next, memory_order_relaxed);
  for (;;) {
    if (lo >= n) return;
    int64_t size = (n - lo) / ((int64_t)parts * REMAINING_SHARE);
    if (size < min_chunk) size = min_chunk;
    long long expected = (long long)lo;
    if (!atomic_compare_exchange_weak(&pool->next, &expected, (long long)(lo + size))) {
      lo = (int64_t)expected;
      continue;
    }
    fn(arg, lo, lo + size < n ? lo + size : n);
    lo = (int64_t)atomic_load_explicit(&pool->next, memory_order_relaxed);
  }
}

static void *worker_main(void *p) {
  worker_arg *wa = p;
  lt__cpu_pool *pool = wa->pool;
  free(wa);
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    if (!new_job(pool, seen)) {
      pthread_mutex_unlock(&pool->lock);
      spin_until(pool, new_job, seen);
      pthread_mutex_lock(&pool->lock);
    }
    uint64_t warm_seen = pool->warm_generation;
    while (!pool->quit && pool->generation == seen && pool->warm_generation == warm_seen) {
      atomic_fetch_add_explicit(&pool->sleeping, 1, memory_order_relaxed);
      pthread_cond_wait(&pool->wake, &pool->lock);
      atomic_fetch_sub_explicit(&pool->sleeping, 1, memory_order_relaxed);
    }
    if (pool->quit) break;
    if (pool->generation == seen) continue; /* a warm-up: spin for the next job */
    seen = pool->generation;
    if (!pool->open || pool->running >= pool->max_helpers) continue;
    pool->running++;
    lt__cpu_range_fn fn = pool->fn;
    void *arg = pool->arg;
    int64_t n = pool->n_tasks, chunk = pool->chunk;
    int parts = pool->max_helpers + 1;
    pthread_mutex_unlock(&pool->lock);
    take_chunks(pool, fn, arg, n, chunk, parts);
    pthread_mutex_lock(&pool->lock);
    if (--pool->running == 0) pthread_cond_signal(&pool->done);
    pthread_mutex_unlock(&pool->lock);
    /* Bounded by the caller's last chunk; the spin window proper starts after it. */
    while (!job_over(pool, seen))
      sched_yield();
    pthread_mutex_lock(&pool->lock);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

/* Plain calloc/malloc rather than the context's allocator: the pool is thread infrastructure
 * (built once per context on first use, kept for its lifetime), and a pool that cannot be
 * made costs no correctness, only parallelism (the work runs serially). */
lt__cpu_pool *lt__cpu_pool_create(int threads) {
  if (threads <= 1) return NULL;
  lt__cpu_pool *pool = calloc(1, sizeof *pool);
  if (pool == NULL) return NULL;
  const char *spin = getenv("LT_POOL_SPIN_US");
  pool->spin_ns = spin && *spin ? 1000 * strtoll(spin, NULL, 10) : DEFAULT_SPIN_NS;
  pool->workers = calloc((size_t)threads - 1, sizeof(pthread_t));
  if (pool->workers == NULL) {
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->busy, NULL);
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  atomic_init(&pool->next, 0);
  atomic_init(&pool->generation, 0);
  atomic_init(&pool->quit, false);
  atomic_init(&pool->running, 0);
  atomic_init(&pool->sleeping, 0);
  atomic_init(&pool->open, false);
  for (int i = 0; i < threads - 1; i++) {
    worker_arg *wa = malloc(sizeof *wa);
    if (wa == NULL) break;
    wa->pool = pool;
    if (pthread_create(&pool->workers[i], NULL, worker_main, wa) != 0) {
      free(wa);
      break;
    }
    pool->n_workers++;
  }
  return pool;
}

void lt__cpu_pool_destroy(lt__cpu_pool *pool) {
  if (pool == NULL) return;
  pthread_mutex_lock(&pool->lock);
  pool->quit = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < pool->n_workers; i++)
    pthread_join(pool->workers[i], NULL);
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->lock);
  pthread_mutex_destroy(&pool->busy);
  free(pool->workers);
  free(pool);
}

void lt__cpu_pool_warm(lt__cpu_pool *pool) {
  if (pool == NULL || atomic_load_explicit(&pool->sleeping, memory_order_relaxed) == 0) return;
  pthread_mutex_lock(&pool->lock);
  pool->warm_generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
}

void lt__cpu_pool_run(lt__cpu_pool *pool, int threads, int64_t n_tasks, lt__cpu_range_fn fn,
                      void *arg) {
  if (n_tasks <= 0) return;
  int parts = threads;
  if (pool == NULL || pool->n_workers + 1 < parts) parts = pool ? pool->n_workers + 1 : 1;
  if (parts > n_tasks) parts = (int)n_tasks;
  if (parts <= 1 || pthread_mutex_trylock(&pool->busy) != 0) {
    fn(arg, 0, n_tasks);
    return;
  }
  /* The shortest chunk: enough chunks per thread to balance uneven progress, few enough to keep
   * per-chunk setup (odometer seeks) negligible. */
  int64_t chunk = n_tasks / ((int64_t)parts * 32);
  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->arg = arg;
  pool->n_tasks = n_tasks;
  pool->chunk = chunk > 0 ? chunk : 1;
  pool->max_helpers = parts - 1;
  atomic_store(&pool->next, 0);
  pool->open = true;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  take_chunks(pool, fn, arg, n_tasks, chunk > 0 ? chunk : 1, parts);
  pthread_mutex_lock(&pool->lock);
  pool->open = false;
  if (pool->running > 0) {
    pthread_mutex_unlock(&pool->lock);
    spin_until(pool, helpers_done, 0);
    pthread_mutex_lock(&pool->lock);
  }
  while (pool->running > 0)
    pthread_cond_wait(&pool->done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
  pthread_mutex_unlock(&pool->busy);
}

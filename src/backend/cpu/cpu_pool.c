/* Persistent worker threads: one job at a time, split into static contiguous ranges. A second
 * caller arriving while a job runs (plans executed from several threads) runs its own job
 * serially instead of waiting, so the pool can never deadlock or nest. */
#include "backend/cpu/cpu_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct lt__cpu_pool {
  pthread_mutex_t busy; /* held by the caller that owns the current job */
  pthread_mutex_t lock;
  pthread_cond_t wake, done;
  int n_workers;
  pthread_t *workers;
  /* The current job, published under `lock`. */
  uint64_t generation;
  bool quit;
  lt__cpu_range_fn fn;
  void *arg;
  int64_t n_tasks;
  int n_parts;    /* ranges of the job; range 0 is the caller's */
  int n_finished; /* workers done with this generation */
};

typedef struct worker_arg {
  lt__cpu_pool *pool;
  int index; /* 1..n_workers */
} worker_arg;

static void run_part(lt__cpu_range_fn fn, void *arg, int64_t n_tasks, int parts, int part) {
  int64_t lo = n_tasks * part / parts, hi = n_tasks * (part + 1) / parts;
  if (lo < hi) fn(arg, lo, hi);
}

static void *worker_main(void *p) {
  worker_arg *wa = p;
  lt__cpu_pool *pool = wa->pool;
  int index = wa->index;
  free(wa);
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->quit && pool->generation == seen)
      pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->quit) break;
    seen = pool->generation;
    lt__cpu_range_fn fn = pool->fn;
    void *arg = pool->arg;
    int64_t n_tasks = pool->n_tasks;
    int parts = pool->n_parts;
    pthread_mutex_unlock(&pool->lock);
    if (index < parts) run_part(fn, arg, n_tasks, parts, index);
    pthread_mutex_lock(&pool->lock);
    if (++pool->n_finished == pool->n_workers) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

lt__cpu_pool *lt__cpu_pool_create(int threads) {
  if (threads <= 1) return NULL;
  lt__cpu_pool *pool = calloc(1, sizeof *pool);
  if (pool == NULL) return NULL;
  pool->workers = calloc((size_t)threads - 1, sizeof(pthread_t));
  if (pool->workers == NULL) {
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->busy, NULL);
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  for (int i = 0; i < threads - 1; i++) {
    worker_arg *wa = malloc(sizeof *wa);
    if (wa == NULL) break;
    wa->pool = pool;
    wa->index = i + 1;
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
  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->arg = arg;
  pool->n_tasks = n_tasks;
  pool->n_parts = parts;
  pool->n_finished = 0;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  run_part(fn, arg, n_tasks, parts, 0);
  pthread_mutex_lock(&pool->lock);
  while (pool->n_finished < pool->n_workers)
    pthread_cond_wait(&pool->done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
  pthread_mutex_unlock(&pool->busy);
}

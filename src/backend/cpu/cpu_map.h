/* SPDX-License-Identifier: MIT */
/* The map engine's job, shared by its row walk (cpu_map.c) and its tile walk (cpu_map_tiles.c).
 * Internal to the CPU backend. */
#ifndef LT_BACKEND_CPU_MAP_H
#define LT_BACKEND_CPU_MAP_H

#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_transpose.h"
#include "backend/cpu/cpu_typed.h"

#define STREAM_BYTES (32 << 20) /* outputs at least this large bypass the caches */

/* How an input's values run along a row folded from a short dim and the next one (period p): as
 * they lie (a plain stride), or repeating every p positions (periodic: (N, 3) + (3,)), or each
 * held for p positions (stretched: (N, 3) + (N, 1)). */
typedef enum lt__cpu_fold {
  LT__CPU_FOLD_NONE,
  LT__CPU_FOLD_PERIODIC,
  LT__CPU_FOLD_STRETCHED
} lt__cpu_fold;

typedef struct lt__cpu_map_job {
  const lt__map_step *step;
  const lt__cpu_kernels *k;
  lt__cpu_nest nest; /* operands 0..n_in-1 inputs, n_in the output */
  int out;           /* operand index of the output */
  bool bitcopy;
  size_t esize;       /* output element size */
  lt__cpu_simd simd;  /* tile transpose kernels */
  bool stream;        /* output far larger than the caches: bit copies use non-temporal stores */
  bool stream_rows;   /* the same for computed rows: each chunk is streamed from an L1 buffer */
  bool shifted;       /* streamed tiles whose output rows are off the line grid (shifted_task) */
  bool joined;        /* ... rows short and end to end in the output (joined_task) */
  unsigned tile_read; /* streamed tiles: LT__CPU_TR_AHEAD where the input rows do not alias */
  int64_t n_blocks;   /* per outer index: row blocks (rows) or p tiles (tiles) */
  int64_t row_block;  /* rows: inner elements per task */
  bool blocks_outer;  /* rows: tasks take every row's block b before any block b + 1 */
  int64_t period; /* rows: > 0 when the row is a short dim folded into the next (fold_short_rows) */
  lt__cpu_fold fold[3];   /* ... how each input repeats along it, */
  int64_t fold_stride[3]; /* ... with its stride within a period (periodic) or across (stretched) */
  int n_outer;            /* dims iterated by the odometer */
  int p_dims, q_dims;     /* tiles: dims in the p and q groups */
  int64_t p_extent, q_extent; /* tiles: positions in each group */
  int64_t tile_ps, tile_qs;   /* tiles: input stride of p, output stride of q */
} lt__cpu_map_job;

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* Chooses the tile groups of a one-input map and arranges the nest for them (fills the tile
 * fields of j); false when rows stream the input well enough. */
bool lt__cpu_map_plan_tiles(lt__cpu_map_job *j);
/* Tasks [lo, hi) of a tiled job (lt__cpu_parallel's range function; arg is the job). */
void lt__cpu_map_run_tiles(void *arg, int64_t lo, int64_t hi);

#endif

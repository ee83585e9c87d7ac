/* SPDX-License-Identifier: MIT */
/* Random fills on the CPU. The output's row-major index space is cut into chunks of whole
 * Philox groups, split across threads; each chunk's values are computed into a buffer by
 * kernels/philox.h (the definition the OpenCL kernel shares) and stored through the engine's
 * converting stores. Which thread computes a chunk never changes its values. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_typed.h"
#include "backend/cpu/cpu_vocab.h"
#include "core/dtype.h"

#include "philox.h"

#include <math.h>
#include <string.h>

#define RNG_CHUNK 1024 /* elements per task: a multiple of every group size */

typedef struct rng_job {
  const lt__rng_step *s;
  const lt__cpu_kernels *k; /* stores from float (narrow uniforms) or double */
  const lt__cpu_vocab_kernels *vk;
  lt__cpu_nest nest; /* the output over the fill's shape, row-major */
  int64_t n;
  int group;
} rng_job;

/* Values of elements [lo, lo + n) (lo a multiple of the group size) into buf. */
static void fill_values(const rng_job *j, int64_t lo, int64_t n, void *buf) {
  const lt__rng_step *s = j->s;
  int g = j->group;
  float *f = buf;
  double *d = buf;
  int64_t *q = buf;
  if (s->dist == LT__RNG_NORMAL) {
    j->vk->normals(s, lo, n, d);
    return;
  }
  if (s->dist == LT__RNG_UNIFORM && g == 4 && n % 4 == 0) {
    j->vk->uniforms_f32(s, lo, n, f);
    return;
  }
  for (int64_t i = 0; i < n; i += g) {
    uint64_t block = s->offset + (uint64_t)((lo + i) / g);
    int lanes = n - i < g ? (int)(n - i) : g;
    lt_philox4 b = lt_rng_block(s->seed, s->stream, block, 0);
    for (int l = 0; l < lanes; l++) {
      switch (s->dist) {
      case LT__RNG_UNIFORM:
        if (g == 4) {
          float a = (float)s->a, w = (float)s->b - a;
          f[i + l] = a + w * lt_rng_unit24(b.v[l]);
        } else {
          d[i + l] = s->a + (s->b - s->a) * lt_rng_unit53(b.v[2 * l], b.v[2 * l + 1]);
        }
        break;
      case LT__RNG_NORMAL: d[i + l] = s->a + s->b * lt_rng_normal_lane(b, l); break;
      case LT__RNG_INTEGERS: {
        uint64_t r = lt_rng_bounded(s->seed, s->stream, block, l, s->range);
        q[i + l] = (int64_t)((uint64_t)s->low + r);
        break;
      }
      case LT__RNG_BERNOULLI: f[i + l] = (float)lt_rng_bernoulli_lane(b, l, s->threshold); break;
      }
    }
  }
}

static void store_values(const rng_job *j, int64_t lo, int64_t n, void *buf) {
  const lt__operand *o = &j->s->out;
  const lt__cpu_nest *r = &j->nest;
  char *b = buf;
  size_t size = j->s->dist == LT__RNG_INTEGERS ? 8 : j->k->size;
  if (r->rank == 0) {
    if (j->s->dist == LT__RNG_INTEGERS && lt__dtype_is_int(o->dtype))
      lt__store_bits(o->mem, o->dtype, o->offset, *(uint64_t *)buf);
    else if (j->s->dist == LT__RNG_INTEGERS)
      lt__store_f64(o->mem, o->dtype, o->offset, (double)*(int64_t *)buf);
    else
      j->k->store(o->mem, o->dtype, o->offset, 0, b, 1);
    return;
  }
  int last = r->rank - 1;
  int64_t len = r->shape[last], inner = lo % len, stride = r->strides[0][last];
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, r, last, lo / len);
  while (n > 0) {
    int64_t run = len - inner < n ? len - inner : n;
    int64_t off = it.off[0] + inner * stride;
    if (j->s->dist != LT__RNG_INTEGERS) {
      j->k->store(o->mem, o->dtype, off, stride, b, run);
    } else {
      const int64_t *v = (const int64_t *)(const void *)b;
      for (int64_t i = 0; i < run; i++) {
        if (lt__dtype_is_int(o->dtype)) /* exact (through double, u64 lost bits above 2^53) */
          lt__store_bits(o->mem, o->dtype, off + i * stride, (uint64_t)v[i]);
        else
          lt__store_f64(o->mem, o->dtype, off + i * stride, (double)v[i]);
      }
    }
    b += run * (int64_t)size;
    n -= run;
    inner = 0;
    lt__cpu_odometer_next(&it);
  }
}

static void run_rng(void *arg, int64_t lo, int64_t hi) {
  const rng_job *j = arg;
  _Alignas(64) double buf[RNG_CHUNK];
  for (int64_t t = lo; t < hi; t++) {
    int64_t first = t * RNG_CHUNK, n = j->n - first < RNG_CHUNK ? j->n - first : RNG_CHUNK;
    fill_values(j, first, n, buf);
    store_values(j, first, n, buf);
  }
}

lt_status lt__cpu_rng(lt_context *ctx, const lt__rng_step *s) {
  rng_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  bool wide = s->out.dtype == LT_F64;
  j.group = lt_rng_group((int)s->dist, wide);
  bool narrow = (s->dist == LT__RNG_UNIFORM && !wide) || s->dist == LT__RNG_BERNOULLI;
  j.k = lt__cpu_isa_of(ctx)->kernels(narrow ? LT_F32 : LT_F64);
  j.vk = lt__cpu_vocab_kernels_for(ctx);
  lt__cpu_nest_init(&j.nest, s->rank, s->shape, 1);
  if (s->rank) memcpy(j.nest.strides[0], s->out.strides, sizeof(int64_t) * (size_t)s->rank);
  j.nest.offset[0] = s->out.offset;
  j.n = lt__cpu_nest_numel(&j.nest);
  if (j.n == 0) return LT_OK;
  /* Squeezing and fusing keep the row-major order that numbers the elements. */
  lt__cpu_nest_squeeze(&j.nest);
  lt__cpu_nest_fuse(&j.nest);
  int64_t tasks = (j.n + RNG_CHUNK - 1) / RNG_CHUNK;
  lt__cpu_parallel(ctx, tasks, j.n * 16, run_rng, &j);
  return LT_OK;
}

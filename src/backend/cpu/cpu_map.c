/* The strided elementwise engine. A map step becomes a loop nest (size-1 dims dropped, dims
 * sorted so that the output is walked in memory order, contiguous dims fused) and runs one of
 * three ways, each split across the context's threads:
 *   - rows: the innermost dim in chunks through the compute-type kernels of cpu_typed.h
 *     (unit-stride operands of the compute dtype are used in place, others converted);
 *   - tiles: when the input's contiguous dim is not the output's, the plane of those two dims
 *     is walked in square tiles so both sides stream whole cache lines (a permutation);
 *   - bit copies: a permutation without arithmetic moves bits (SSE tile transposes). */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_transpose.h"
#include "backend/cpu/cpu_typed.h"

#include <string.h>

#define TILE 32            /* tile edge in elements: 32x32 fits L1 for every dtype */
#define ROW_BLOCK 32768    /* inner elements per task, so a single long row still splits */
#define TILE_MIN_STRIDE 16 /* input stride along the output's inner dim worth tiling for */

typedef struct map_job {
  const lt__map_step *step;
  const lt__cpu_kernels *k;
  lt__cpu_nest nest; /* operands 0..n_in-1 inputs, n_in the output */
  int out;           /* operand index of the output */
  bool bitcopy;
  size_t esize;     /* element size for bit copies */
  int64_t n_blocks; /* per outer index: row blocks (rows) or p tiles (tiles) */
  int n_outer;      /* dims iterated by the odometer */
} map_job;

static const void *element(const void *mem, size_t esize, int64_t off) {
  return (const char *)mem + off * (int64_t)esize;
}

/* Operand k's next `n` values in the compute type: in place when possible, else into buf. */
static const void *operand_values(const map_job *j, int k, int64_t off, int64_t stride, int64_t n,
                                  void *buf) {
  const lt__operand *op = &j->step->in[k];
  if (op->dtype == j->k->dtype && stride == 1) return element(op->mem, j->k->size, off);
  j->k->load(buf, op->mem, op->dtype, off, stride, n);
  return buf;
}

/* s*u(values) of operand k, or the values themselves when that is the identity. */
static const void *prepared(const map_job *j, int k, int64_t off, int64_t stride, int64_t n,
                            void *buf) {
  const lt__map_step *s = j->step;
  const void *v = operand_values(j, k, off, stride, n, buf);
  if (s->unary[k] == LT_UNARY_IDENTITY && s->scalars[k] == 1.0) return v;
  j->k->transform(buf, v, n, s->unary[k], s->scalars[k]);
  return buf;
}

/* One row segment: operand k starts at off[k] and steps by the inner strides. */
static void map_row(const map_job *j, const int64_t *off, int64_t len) {
  const lt__map_step *s = j->step;
  const lt__cpu_kernels *k = j->k;
  const lt__cpu_nest *nest = &j->nest;
  int inner = nest->rank - 1, n_in = s->n_in;
  int64_t st[4];
  for (int q = 0; q <= n_in; q++)
    st[q] = inner >= 0 ? nest->strides[q][inner] : 0;
  if (j->bitcopy) {
    lt__cpu_copy_strided((char *)s->out.mem + off[n_in] * (int64_t)j->esize, st[n_in],
                         element(s->in[0].mem, j->esize, off[0]), st[0], len, j->esize);
    return;
  }
  _Alignas(64) double buf[4][LT__CPU_CHUNK];
  bool direct = s->out.dtype == k->dtype && st[n_in] == 1;
  for (int64_t c0 = 0; c0 < len; c0 += LT__CPU_CHUNK) {
    int64_t n = len - c0 < LT__CPU_CHUNK ? len - c0 : LT__CPU_CHUNK;
    int64_t oo = off[n_in] + c0 * st[n_in];
    void *dst = direct ? (void *)((char *)s->out.mem + oo * (int64_t)k->size) : (void *)buf[3];
    int64_t o[3] = {0, 0, 0};
    for (int q = 0; q < n_in; q++)
      o[q] = off[q] + c0 * st[q];
    if (n_in == 0) {
      k->fill(dst, n, s->scalars[0]);
    } else if (n_in == 1) {
      const void *v = operand_values(j, 0, o[0], st[0], n, buf[0]);
      k->transform(dst, v, n, s->unary[0], s->scalars[0]);
    } else {
      const void *a = prepared(j, 0, o[0], st[0], n, buf[0]);
      const void *b = prepared(j, 1, o[1], st[1], n, buf[1]);
      if (n_in == 2) {
        k->combine(dst, a, b, n, s->op_ab);
      } else {
        /* ab goes to a buffer first: C may be the output itself (in place). */
        k->combine(buf[0], a, b, n, s->op_ab);
        const void *c = prepared(j, 2, o[2], st[2], n, buf[2]);
        k->combine(dst, buf[0], c, n, s->op_abc);
      }
    }
    if (!direct) k->store(s->out.mem, s->out.dtype, oo, st[n_in], buf[3], n);
  }
}

static void run_rows(void *arg, int64_t lo, int64_t hi) {
  const map_job *j = arg;
  int64_t len = j->nest.rank ? j->nest.shape[j->nest.rank - 1] : 1;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &j->nest, j->n_outer, lo / j->n_blocks);
  int64_t b = lo % j->n_blocks;
  for (int64_t t = lo; t < hi; t++) {
    int64_t start = b * ROW_BLOCK, n = len - start < ROW_BLOCK ? len - start : ROW_BLOCK;
    int64_t off[4];
    for (int q = 0; q <= j->out; q++)
      off[q] = it.off[q] + start * (j->nest.rank ? j->nest.strides[q][j->nest.rank - 1] : 0);
    map_row(j, off, n);
    if (++b == j->n_blocks) {
      b = 0;
      lt__cpu_odometer_next(&it);
    }
  }
}

/* One tile of the (p, q) plane: p is the input's contiguous dim, q the output's. */
static void map_tile(const map_job *j, int64_t in_off, int64_t out_off, int64_t np, int64_t nq) {
  const lt__map_step *s = j->step;
  const lt__cpu_nest *nest = &j->nest;
  int p = nest->rank - 2, q = nest->rank - 1;
  int64_t isp = nest->strides[0][p], isq = nest->strides[0][q];
  int64_t osp = nest->strides[1][p], osq = nest->strides[1][q];
  if (j->bitcopy && isp == 1 && osq == 1) {
    lt__cpu_transpose_tile((char *)s->out.mem + out_off * (int64_t)j->esize, osp,
                           element(s->in[0].mem, j->esize, in_off), isq, np, nq, j->esize);
    return;
  }
  const lt__cpu_kernels *k = j->k;
  _Alignas(64) double a[TILE * TILE], b[TILE * TILE];
  for (int64_t iq = 0; iq < nq; iq++)
    k->load((char *)a + iq * np * (int64_t)k->size, s->in[0].mem, s->in[0].dtype, in_off + iq * isq,
            isp, np);
  k->transform(a, a, np * nq, s->unary[0], s->scalars[0]);
  lt__cpu_transpose_tile(b, nq, a, np, np, nq, k->size);
  for (int64_t ip = 0; ip < np; ip++)
    k->store(s->out.mem, s->out.dtype, out_off + ip * osp, osq,
             (char *)b + ip * nq * (int64_t)k->size, nq);
}

static void run_tiles(void *arg, int64_t lo, int64_t hi) {
  const map_job *j = arg;
  const lt__cpu_nest *nest = &j->nest;
  int p = nest->rank - 2, q = nest->rank - 1;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, nest, j->n_outer, lo / j->n_blocks);
  int64_t b = lo % j->n_blocks;
  for (int64_t t = lo; t < hi; t++) {
    int64_t p0 = b * TILE, np = nest->shape[p] - p0 < TILE ? nest->shape[p] - p0 : TILE;
    for (int64_t q0 = 0; q0 < nest->shape[q]; q0 += TILE) {
      int64_t nq = nest->shape[q] - q0 < TILE ? nest->shape[q] - q0 : TILE;
      map_tile(j, it.off[0] + p0 * nest->strides[0][p] + q0 * nest->strides[0][q],
               it.off[1] + p0 * nest->strides[1][p] + q0 * nest->strides[1][q], np, nq);
    }
    if (++b == j->n_blocks) {
      b = 0;
      lt__cpu_odometer_next(&it);
    }
  }
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* For a one-input map: the dim to tile against the inner one (the input's smallest stride),
 * or -1 when the rows already stream the input well enough. */
static int tile_partner(const lt__cpu_nest *nest) {
  int q = nest->rank - 1;
  if (nest->rank < 2 || abs64(nest->strides[0][q]) < TILE_MIN_STRIDE) return -1;
  int best = -1;
  for (int d = 0; d < q; d++)
    if (best < 0 || abs64(nest->strides[0][d]) < abs64(nest->strides[0][best])) best = d;
  return abs64(nest->strides[0][best]) < abs64(nest->strides[0][q]) ? best : -1;
}

/* A permutation without arithmetic whose compute dtype cannot lose bits: copy bits. */
static bool is_bitcopy(const lt__map_step *s) {
  if (s->n_in != 1 || s->unary[0] != LT_UNARY_IDENTITY || s->scalars[0] != 1.0) return false;
  if (s->in[0].dtype != s->out.dtype) return false;
  bool wide = s->out.dtype == LT_F64 || s->out.dtype == LT_I64;
  return !wide || s->compute == LT_F64;
}

lt_status lt__cpu_map(lt_context *ctx, const lt__map_step *s) {
  map_job j;
  memset(&j, 0, sizeof j);
  j.step = s;
  j.k = lt__cpu_kernels_for(s->compute);
  j.out = s->n_in;
  j.bitcopy = is_bitcopy(s);
  j.esize = lt_dtype_size(s->out.dtype);
  lt__cpu_nest *nest = &j.nest;
  lt__cpu_nest_init(nest, s->rank, s->shape, s->n_in + 1);
  for (int q = 0; q <= s->n_in; q++) {
    const lt__operand *op = q < s->n_in ? &s->in[q] : &s->out;
    nest->offset[q] = op->offset;
    if (s->rank > 0) memcpy(nest->strides[q], op->strides, sizeof(int64_t) * (size_t)s->rank);
  }
  int64_t numel = lt__cpu_nest_numel(nest);
  if (numel == 0) return LT_OK;
  lt__cpu_nest_squeeze(nest);
  lt__cpu_nest_flip_negative(nest, j.out);
  lt__cpu_nest_sort(nest, j.out);
  lt__cpu_nest_fuse(nest);
  int partner = s->n_in == 1 ? tile_partner(nest) : -1;
  if (partner >= 0) {
    lt__cpu_nest_move(nest, partner, nest->rank - 2);
    j.n_outer = nest->rank - 2;
    j.n_blocks = (nest->shape[nest->rank - 2] + TILE - 1) / TILE;
    lt__cpu_parallel(ctx, lt__cpu_nest_count(nest, j.n_outer) * j.n_blocks, numel, run_tiles, &j);
    return LT_OK;
  }
  int64_t len = nest->rank ? nest->shape[nest->rank - 1] : 1;
  j.n_outer = nest->rank ? nest->rank - 1 : 0;
  j.n_blocks = (len + ROW_BLOCK - 1) / ROW_BLOCK;
  lt__cpu_parallel(ctx, lt__cpu_nest_count(nest, j.n_outer) * j.n_blocks, numel, run_rows, &j);
  return LT_OK;
}

/* SPDX-License-Identifier: MIT */
/* libtensor_mpi (issue 24), run as `mpirun -np 4 test_dist`: block-distributed tensors over
 * several process grids (4x1, 2x2, 1x4, with odd extents, uneven and empty blocks), scatter,
 * gather, redistribution, permutation, reductions, SUMMA contraction, distributed and sliced
 * einsum, each against a naive float64 reference of the whole tensor (every rank draws the same
 * random operands from the same seed), on every device. Checks are collective: every rank
 * learns whether any rank failed, so the ranks stay in step. `test_dist die`: rank 1 exits
 * in the middle of a contraction (the job must end with an error, not hang). */
#include "einsum_ref.h"
#include "harness.h"
#include "tensor/dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np;

/* Fails the test on every rank if `bad` holds on any rank. */
static void all_ok(bool bad, const char *what) {
  int b = bad, any = 0;
  MPI_Allreduce(&b, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) fail_msg("%s failed on some rank (this one: %s)", what, bad ? "failed" : "ok");
}

static bool close_to(const double *got, const double *want, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double tol = 1e-12 * (1 + fabs(want[i])) * 64;
    if (!(fabs(got[i] - want[i]) <= tol)) {
      fprintf(stderr, "rank %d: %s: element %lld is %.17g, expected %.17g\n", me, what,
              (long long)i, got[i], want[i]);
      return false;
    }
  }
  return true;
}

/* Gathers t at root 1 (not 0, to vary it) and compares with want there. */
static void check_gathered(const lt_dist_tensor *t, const double *want, int64_t n,
                           const char *what) {
  int root = np > 1 ? 1 : 0;
  lt_tensor *g = NULL;
  LT_CHECK(lt_dist_tensor_gather(t, root, &g));
  bool bad = false;
  if (me == root) {
    bad = g == NULL || lt_tensor_numel(g) != n;
    if (!bad) {
      double *got = lt_test_read_all(g);
      bad = !close_to(got, want, n, what);
      free(got);
    }
  } else {
    bad = g != NULL;
  }
  lt_tensor_destroy(g);
  all_ok(bad, what);
}

/* ---- layouts: scatter, gather, local blocks, redistribution, permutation, reductions ---- */

static void layouts_on(lt_context *ctx) {
  int64_t shape[3] = {7, 5, 3};
  int grids[5][3] = {{4, 1, 1}, {2, 2, 1}, {1, 4, 1}, {1, 1, 4}, {2, 1, 2}};
  int64_t odd_block[3] = {6, 3, 3}; /* with grid 2x2x1: blocks of 6+1 and 3+2 */
  lt_tensor *global = lt_test_random_tensor(ctx, LT_F64, 3, shape, LT_LAYOUT_TRANSPOSED);
  double *host = lt_test_read_all(global);
  for (int gi = 0; gi < 6; gi++) {
    const int *grid = grids[gi % 5];
    const int64_t *block = gi == 5 ? odd_block : NULL;
    if (gi == 5) grid = grids[1];
    lt_dist_tensor *t = NULL;
    LT_CHECK(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 3, shape, grid, block, &t));
    LT_CHECK(lt_dist_tensor_scatter(t, np - 1, me == np - 1 ? global : NULL));
    /* this rank's block is the global box its range names */
    int64_t lo[3], hi[3];
    LT_CHECK(lt_dist_tensor_local_range(t, lo, hi));
    lt_tensor *local = lt_dist_tensor_local(t);
    double *mine = lt_test_read_all(local);
    bool bad = false;
    int64_t k = 0;
    for (int64_t i = lo[0]; i < hi[0]; i++)
      for (int64_t j = lo[1]; j < hi[1]; j++)
        for (int64_t l = lo[2]; l < hi[2]; l++, k++)
          if (mine[k] != host[(i * 5 + j) * 3 + l]) bad = true;
    bad |= k != lt_tensor_numel(local);
    free(mine);
    all_ok(bad, "scatter puts each block in place");
    check_gathered(t, host, 105, "gather");
    /* to the next grid, and back through a permutation */
    lt_dist_tensor *r = NULL, *p = NULL;
    LT_CHECK(lt_dist_redistribute(t, grids[(gi + 1) % 5], NULL, &r));
    check_gathered(r, host, 105, "redistribute");
    int axes[3] = {2, 0, 1};
    LT_CHECK(lt_dist_permute(r, axes, &p));
    double want_p[105];
    for (int64_t i = 0; i < 7; i++)
      for (int64_t j = 0; j < 5; j++)
        for (int64_t l = 0; l < 3; l++)
          want_p[(l * 7 + i) * 5 + j] = host[(i * 5 + j) * 3 + l];
    check_gathered(p, want_p, 105, "permute");
    /* a permuted grid is a distribution like any other: redistribute it row-major */
    lt_dist_tensor *q = NULL;
    int g2[3] = {1, 2, 2};
    LT_CHECK(lt_dist_redistribute(p, g2, NULL, &q));
    check_gathered(q, want_p, 105, "redistribute a permuted tensor");
    /* reductions: sum over mode 1, max over everything */
    lt_tensor *sum = NULL, *mx = NULL;
    int ax1 = 1;
    LT_CHECK(lt_dist_reduce(t, LT_REDUCE_SUM, 1, &ax1, &sum));
    LT_CHECK(lt_dist_reduce(p, LT_REDUCE_MAX, -1, NULL, &mx));
    double want_s[21] = {0}, want_m = -INFINITY;
    for (int64_t i = 0; i < 7; i++)
      for (int64_t j = 0; j < 5; j++)
        for (int64_t l = 0; l < 3; l++) {
          want_s[i * 3 + l] += host[(i * 5 + j) * 3 + l];
          want_m = fmax(want_m, host[(i * 5 + j) * 3 + l]);
        }
    double *gs = lt_test_read_all(sum), *gm = lt_test_read_all(mx);
    all_ok(lt_tensor_rank(sum) != 2 || !close_to(gs, want_s, 21, "sum") || gm[0] != want_m,
           "reductions");
    free(gs);
    free(gm);
    lt_tensor_destroy(sum);
    lt_tensor_destroy(mx);
    lt_dist_tensor_destroy(q);
    lt_dist_tensor_destroy(p);
    lt_dist_tensor_destroy(r);
    lt_dist_tensor_destroy(t);
  }
  free(host);
  lt_tensor_destroy(global);
}

static void test_layouts(void **state) {
  (void)state;
  lt_test_on_each_device(layouts_on);
}

/* ---- SUMMA contractions ---- */

typedef struct contraction {
  int ra, rb, rc;
  int la[3], lb[3], lc[3];
  int n_labels;
  int64_t ext[6];
  int grid_a[3], grid_b[3];
} contraction;

/* The dtype every distributed operand gets (contract_on also runs the cases exactly in i64). */
static lt_dtype dist_dtype = LT_F64;

static lt_dist_tensor *distribute(lt_context *ctx, int rank, const int *labels, const int64_t *ext,
                                  const int *grid, lt_tensor **global, double **host,
                                  int64_t *shape) {
  for (int a = 0; a < rank; a++)
    shape[a] = ext[labels[a]];
  *global = dist_dtype == LT_F64
                ? lt_test_random_tensor(ctx, LT_F64, rank, shape, LT_LAYOUT_CONTIGUOUS)
                : lt_test_random_tensor_range(ctx, dist_dtype, rank, shape, LT_LAYOUT_CONTIGUOUS,
                                              -40, 40);
  *host = lt_test_read_all(*global);
  lt_dist_tensor *t = NULL;
  LT_CHECK(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, dist_dtype, rank, shape, grid, NULL, &t));
  LT_CHECK(lt_dist_tensor_scatter(t, 0, me == 0 ? *global : NULL));
  return t;
}

static void contract_case(lt_context *ctx, const contraction *c) {
  lt_tensor *ga, *gb;
  double *ha, *hb;
  int64_t sa[3], sb[3];
  lt_dist_tensor *a = distribute(ctx, c->ra, c->la, c->ext, c->grid_a, &ga, &ha, sa);
  lt_dist_tensor *b = distribute(ctx, c->rb, c->lb, c->ext, c->grid_b, &gb, &hb, sb);
  lt_ref_operand ref[2] = {{c->ra, c->la, sa, ha}, {c->rb, c->lb, sb, hb}};
  double *want = lt_ref_einsum(2, ref, c->n_labels, c->ext, c->rc, c->lc);
  int32_t ma[3], mb[3], mc[3];
  for (int i = 0; i < 3; i++)
    ma[i] = c->la[i] + 100, mb[i] = c->lb[i] + 100, mc[i] = c->lc[i] + 100;
  lt_dist_tensor *out = NULL;
  LT_CHECK(lt_dist_contract(a, ma, b, mb, c->rc, mc, &out));
  int64_t n = 1;
  for (int i = 0; i < c->rc; i++)
    n *= c->ext[c->lc[i]];
  check_gathered(out, want, n, "lt_dist_contract");
  lt_dist_tensor_destroy(out);
  free(want);
  free(ha);
  free(hb);
  lt_tensor_destroy(ga);
  lt_tensor_destroy(gb);
  lt_dist_tensor_destroy(a);
  lt_dist_tensor_destroy(b);
}

static void contract_on(lt_context *ctx) {
  contraction cases[] = {
      /* ik,kj->ij: odd extents, row / column grids */
      {2, 2, 2, {0, 1}, {1, 2}, {0, 2}, 3, {9, 11, 7}, {4, 1}, {1, 4}},
      {2, 2, 2, {0, 1}, {1, 2}, {0, 2}, 3, {9, 11, 7}, {2, 2}, {2, 2}},
      /* ikb,kjb->ijb: a batch label; B over a 1x4 grid with an extent below 4 */
      {3, 3, 3, {0, 1, 3}, {1, 2, 3}, {0, 2, 3}, 4, {7, 5, 3, 3}, {2, 2, 1}, {1, 1, 4}},
      /* aks,k->a: a label of A alone summed locally, no N label */
      {3, 1, 1, {0, 1, 2}, {1}, {0}, 3, {6, 13, 2}, {2, 2, 1}, {4}},
      /* i,j->ij: no K label (outer product) */
      {1, 1, 2, {0}, {1}, {1, 0}, 2, {5, 6}, {4}, {4}},
      /* ij,ij->: neither M nor N (rank 0 computes) */
      {2, 2, 0, {0, 1}, {0, 1}, {0}, 2, {3, 7}, {1, 4}, {4, 1}},
      /* kj,ik->ji with uneven K blocks on both grids */
      {2, 2, 2, {1, 2}, {0, 1}, {2, 0}, 3, {5, 10, 3}, {4, 1}, {2, 2}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    contract_case(ctx, &cases[i]);
  /* integers are exact: the same cases in i64 (the reference's doubles hold them exactly), on
   * the CPU only: PoCL compiling the integer kernels in four processes took minutes, and the
   * distributed layer is the same code for every device */
  if (strcmp(lt_context_device(ctx), "cpu") != 0) return;
  dist_dtype = LT_I64;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    contract_case(ctx, &cases[i]);
  dist_dtype = LT_F64;
}

static void test_contract(void **state) {
  (void)state;
  lt_test_on_each_device(contract_on);
}

/* ---- distributed einsum and sliced einsum ---- */

static void einsum_on(lt_context *ctx) {
  /* ab,bc,cd->ad and abc,cd,db->a over distributed operands */
  int64_t ext[4] = {7, 6, 5, 9};
  int l0[2] = {0, 1}, l1[2] = {1, 2}, l2[2] = {2, 3}, l3[3] = {0, 1, 2}, l4[2] = {3, 1};
  int g41[2] = {4, 1}, g22[2] = {2, 2}, g14[2] = {1, 4}, g221[3] = {2, 2, 1};
  lt_tensor *gt[5];
  double *h[5];
  int64_t s[5][3];
  lt_dist_tensor *t[5] = {
      distribute(ctx, 2, l0, ext, g41, &gt[0], &h[0], s[0]),
      distribute(ctx, 2, l1, ext, g22, &gt[1], &h[1], s[1]),
      distribute(ctx, 2, l2, ext, g14, &gt[2], &h[2], s[2]),
      distribute(ctx, 3, l3, ext, g221, &gt[3], &h[3], s[3]),
      distribute(ctx, 2, l4, ext, g22, &gt[4], &h[4], s[4]),
  };
  lt_ref_operand chain[3] = {{2, l0, s[0], h[0]}, {2, l1, s[1], h[1]}, {2, l2, s[2], h[2]}};
  int out_ad[2] = {0, 3}, out_a[1] = {0};
  double *want = lt_ref_einsum(3, chain, 4, ext, 2, out_ad);
  lt_dist_tensor *r = NULL;
  const lt_dist_tensor *ops[3] = {t[0], t[1], t[2]};
  LT_CHECK(lt_dist_einsum("ab,bc,cd->ad", 3, ops, NULL, &r));
  check_gathered(r, want, 63, "lt_dist_einsum chain");
  lt_dist_tensor_destroy(r);
  free(want);
  int lc[2] = {2, 3};
  lt_ref_operand tri[3] = {{3, l3, s[3], h[3]}, {2, lc, s[2], h[2]}, {2, l4, s[4], h[4]}};
  want = lt_ref_einsum(3, tri, 4, ext, 1, out_a);
  const lt_dist_tensor *ops2[3] = {t[3], t[2], t[4]};
  LT_CHECK(lt_dist_einsum("abc,cd,db->a", 3, ops2, NULL, &r));
  check_gathered(r, want, 7, "lt_dist_einsum abc,cd,db->a");
  lt_dist_tensor_destroy(r);
  free(want);
  for (int i = 0; i < 5; i++) {
    lt_dist_tensor_destroy(t[i]);
    lt_tensor_destroy(gt[i]);
    free(h[i]);
  }
}

static void sliced_on(lt_context *ctx) {
  /* the ring summed to a scalar and the chain keeping its ends, sliced under a memory limit */
  struct {
    const char *expr;
    int n, rank_out;
    int labels[4][2];
    int out[2];
    int64_t ext[4];
  } nets[2] = {{"ab,bc,cd,da->", 4, 0, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, {0}, {7, 6, 5, 8}},
               {"ab,bc,cd->ad", 3, 2, {{0, 1}, {1, 2}, {2, 3}}, {0, 3}, {9, 7, 8, 6}}};
  for (int c = 0; c < 2; c++) {
    lt_tensor *ins[4];
    double *h[4];
    int64_t s[4][2];
    lt_ref_operand ref[4];
    for (int k = 0; k < nets[c].n; k++) {
      for (int a = 0; a < 2; a++)
        s[k][a] = nets[c].ext[nets[c].labels[k][a]];
      ins[k] = lt_test_random_tensor(ctx, LT_F64, 2, s[k], (lt_test_layout)(k % 4));
      h[k] = lt_test_read_all(ins[k]);
      ref[k] = (lt_ref_operand){2, nets[c].labels[k], s[k], h[k]};
    }
    double *want = lt_ref_einsum(nets[c].n, ref, 4, nets[c].ext, nets[c].rank_out, nets[c].out);
    int64_t n = nets[c].rank_out ? nets[c].ext[0] * nets[c].ext[3] : 1;
    for (int limited = 0; limited < 2; limited++) {
      lt_plan_options *o = NULL;
      LT_CHECK(lt_plan_options_create(&o));
      if (limited) LT_CHECK(lt_plan_options_set_memory_limit(o, 200));
      lt_tensor *got = NULL;
      LT_CHECK(lt_dist_einsum_sliced(MPI_COMM_WORLD, nets[c].expr, nets[c].n,
                                     (const lt_tensor *const *)ins, o, &got));
      double *g = lt_test_read_all(got);
      all_ok(lt_tensor_numel(got) != n || !close_to(g, want, n, nets[c].expr),
             "lt_dist_einsum_sliced");
      free(g);
      lt_tensor_destroy(got);
      lt_plan_options_destroy(o);
    }
    free(want);
    for (int k = 0; k < nets[c].n; k++) {
      lt_tensor_destroy(ins[k]);
      free(h[k]);
    }
  }
}

static void test_einsum(void **state) {
  (void)state;
  lt_test_on_each_device(einsum_on);
  lt_test_on_each_device(sliced_on);
}

/* ---- bad input on one rank or all: every rank gets an error, none waits ---- */

static void errors_on(lt_context *ctx) {
  int64_t shape[2] = {5, 6};
  int g22[2] = {2, 2}, g33[2] = {3, 3};
  int64_t bad_block[2] = {2, 3}; /* 2 blocks of 2 do not cover 5 */
  lt_dist_tensor *t = NULL;
  /* only rank 2 passes a bad block */
  lt_clear_error();
  lt_status st = lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 2, shape, g22,
                                       me == 2 % np ? bad_block : NULL, &t);
  all_ok(st != LT_ERR_INVALID_ARGUMENT || t != NULL || lt_last_error()[0] == '\0',
         "a bad block on one rank fails everywhere");
  if (me != 2 % np)
    all_ok(strstr(lt_last_error(), "rank 2 failed") == NULL, "names the rank");
  else
    all_ok(false, "names the rank");
  st = lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 2, shape, g33, NULL, &t);
  all_ok(st != LT_ERR_INVALID_ARGUMENT, "a grid of 9 on 4 ranks");
  LT_CHECK(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 2, shape, g22, NULL, &t));
  /* scatter from a root whose tensor has the wrong shape */
  lt_tensor *wrong = NULL;
  int64_t ws[2] = {6, 5};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, ws, &wrong));
  st = lt_dist_tensor_scatter(t, 0, wrong);
  all_ok(st != LT_ERR_SHAPE_MISMATCH, "scatter of a wrong shape");
  st = lt_dist_tensor_scatter(t, np, wrong);
  all_ok(st != LT_ERR_INVALID_ARGUMENT, "scatter from a root outside the communicator");
  lt_tensor_destroy(wrong);
  /* contraction with mismatched extents, einsum with a bad expression */
  int32_t ma[2] = {0, 1}, mb[2] = {0, 1}, mc[1] = {0};
  lt_dist_tensor *p = NULL, *out = NULL;
  int axes[2] = {1, 0};
  LT_CHECK(lt_dist_permute(t, axes, &p));
  st = lt_dist_contract(t, ma, p, mb, 1, mc, &out);
  all_ok(st != LT_ERR_SHAPE_MISMATCH || out != NULL, "contraction of mismatched extents");
  int32_t rep[2] = {0, 0};
  st = lt_dist_contract(t, rep, t, ma, 1, mc, &out);
  all_ok(st != LT_ERR_UNSUPPORTED, "a repeated label");
  const lt_dist_tensor *ops[2] = {t, t};
  all_ok(lt_dist_einsum("ab,ab", 2, ops, NULL, &out) != LT_ERR_PARSE, "no explicit output");
  all_ok(lt_dist_einsum("a...,ab->a", 2, ops, NULL, &out) != LT_ERR_PARSE, "ellipsis");
  all_ok(lt_dist_einsum("abc,ab->a", 2, ops, NULL, &out) != LT_ERR_SHAPE_MISMATCH, "rank");
  int bad_axes[2] = {0, 0};
  all_ok(lt_dist_permute(t, bad_axes, &out) != LT_ERR_INVALID_ARGUMENT, "no permutation");
  all_ok(lt_dist_einsum("ab->ba", 1, ops, NULL, &out) != LT_ERR_UNSUPPORTED, "one operand");
  all_ok(lt_dist_einsum("ab,bc->ac", 2, ops, NULL, &out) != LT_ERR_SHAPE_MISMATCH,
         "label b has extents 6 and 5");
  all_ok(lt_dist_einsum("ab,ab->c", 2, ops, NULL, &out) != LT_ERR_INVALID_ARGUMENT,
         "an output label in no operand");
  all_ok(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 2, NULL, g22, NULL, &out) !=
             LT_ERR_NULL_POINTER,
         "NULL shape");
  int64_t zero_block[2] = {0, 3};
  all_ok(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 2, shape, g22, zero_block, &out) !=
             LT_ERR_INVALID_ARGUMENT,
         "block 0");
  lt_tensor *full = NULL, *res = NULL;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, shape, &full));
  const lt_tensor *fo[2] = {full, full};
  all_ok(lt_dist_einsum_sliced(MPI_COMM_WORLD, "ab,b?->a", 2, fo, NULL, &res) != LT_ERR_PARSE ||
             res != NULL,
         "sliced: a bad expression");
  lt_tensor_destroy(full);
  lt_tensor *red = NULL;
  all_ok(lt_dist_reduce(t, LT_REDUCE_ARGMAX, -1, NULL, &red) != LT_ERR_UNSUPPORTED, "argmax");
  lt_dist_tensor_destroy(p);
  lt_dist_tensor_destroy(t);
}

static void test_errors(void **state) {
  (void)state;
  lt_test_on_each_device(errors_on);
}

/* Found by probing: a rank-0 result's other ranks gave 0 to PROD and MIN (their local tensor
 * of one element is not theirs), MPI_MIN/MAX dropped a NaN held by a rank other than 0, and a
 * block past the extent overflowed int64 arithmetic. */
static void reduce_edges_on(lt_context *ctx) {
  int64_t n4[1] = {4};
  int grid[1] = {np};
  lt_dist_tensor *v = NULL, *s = NULL;
  LT_CHECK(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 1, n4, grid, NULL, &v));
  lt_tensor *local = lt_dist_tensor_local(v);
  for (int64_t i = 0; i < lt_tensor_shape(local)[0]; i++)
    LT_CHECK(lt_tensor_set(local, &i, -1.5));
  int32_t mi[1] = {'i'};
  LT_CHECK(lt_dist_contract(v, mi, v, mi, 0, NULL, &s)); /* 4 * 2.25 = 9, held by one rank */
  static const lt_reduce_op ops[4] = {LT_REDUCE_SUM, LT_REDUCE_PROD, LT_REDUCE_MIN, LT_REDUCE_MAX};
  for (int o = 0; o < 4; o++) {
    lt_tensor *r = NULL;
    LT_CHECK(lt_dist_reduce(s, ops[o], -1, NULL, &r));
    double got;
    LT_CHECK(lt_tensor_get(r, NULL, &got));
    all_ok(got != 9.0, "reduce of a rank-0 tensor");
    lt_tensor_destroy(r);
  }
  /* one NaN on the last rank's block */
  if (me == np - 1) {
    int64_t last[1] = {lt_tensor_shape(local)[0] - 1};
    LT_CHECK(lt_tensor_set(local, last, NAN));
  }
  for (int o = 2; o < 4; o++) {
    lt_tensor *r = NULL;
    LT_CHECK(lt_dist_reduce(v, ops[o], -1, NULL, &r));
    double got;
    LT_CHECK(lt_tensor_get(r, NULL, &got));
    all_ok(!isnan(got), "MIN/MAX with a NaN on another rank");
    lt_tensor_destroy(r);
  }
  lt_dist_tensor_destroy(s);
  lt_dist_tensor_destroy(v);
  int64_t n5[1] = {5}, huge[1] = {INT64_MAX}, start[1], stop[1];
  lt_dist_tensor *b = NULL;
  LT_CHECK(lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 1, n5, grid, huge, &b));
  LT_CHECK(lt_dist_tensor_local_range(b, start, stop));
  all_ok(me == 0 ? start[0] != 0 || stop[0] != 5 : stop[0] != start[0], "a block past the extent");
  lt_dist_tensor_destroy(b);
}

static void test_reduce_edges(void **state) {
  (void)state;
  lt_test_on_each_device(reduce_edges_on);
}

/* A rank that dies mid-computation: the others are inside collectives; OpenMPI's mpirun must
 * notice the exit and end the whole job with a non-zero status (ctest: WILL_FAIL + TIMEOUT). */
static int die(void) {
  lt_context *ctx = NULL;
  if (lt_context_create("cpu", &ctx) != LT_OK) return 2;
  int64_t shape[2] = {64, 64};
  int grid[2] = {np, 1};
  lt_dist_tensor *a = NULL, *c = NULL;
  if (lt_dist_tensor_create(MPI_COMM_WORLD, ctx, LT_F64, 2, shape, grid, NULL, &a) != LT_OK)
    return 2;
  if (me == 1 % np) _exit(3);
  int32_t ma[2] = {0, 1}, mb[2] = {1, 2}, mc[2] = {0, 2};
  lt_status st = lt_dist_contract(a, ma, a, mb, 2, mc, &c);
  fprintf(stderr, "rank %d: lt_dist_contract returned %s after rank 1 died\n", me,
          lt_status_string(st));
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc > 1 && strcmp(argv[1], "die") == 0) {
    int rc = die();
    MPI_Finalize();
    return rc;
  }
  if (np != 4) {
    if (me == 0) fprintf(stderr, "test_dist: run with mpirun -np 4 (got %d ranks)\n", np);
    MPI_Finalize();
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layouts),      cmocka_unit_test(test_contract),
      cmocka_unit_test(test_einsum),       cmocka_unit_test(test_errors),
      cmocka_unit_test(test_reduce_edges),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  MPI_Finalize();
  return failed;
}

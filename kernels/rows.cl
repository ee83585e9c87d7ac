/* SPDX-License-Identifier: MIT */
/* Row steps (lt__row_step in src/backend/backend.h): one work-item per row. The op is a kernel
 * argument numbered as lt__row_op: 0 softmax, 1 log_softmax, 2 logsumexp, 3 var, 4 std,
 * 5 cumsum, 6 cumprod. kdesc: kept shape[rank], in and out kept strides; rdesc: row
 * shape[row_rank], in and out row strides (row-major element order, which scans follow).
 * Sums accumulate in double where the device has it, else in float with compensation. */
#pragma OPENCL FP_CONTRACT OFF

#ifdef LT_FP64
typedef double acc_t;
#else
typedef float acc_t;
#endif

inline long lt_row_at(long j, int row_rank, constant const long *rdesc, int table) {
  long offs[2] = {0, 0};
  lt_unravel(j, row_rank, rdesc, 2, offs);
  return offs[table];
}

kernel void lt_rows(long nrows, long n, int rank, constant const long *kdesc, int row_rank,
                    constant const long *rdesc, int op, global const LT_ST(LT_IN0) *in,
                    long in_off, global LT_ST(LT_OUT) *out, long out_off, acc_t ddof) {
  for (long r = get_global_id(0); r < nrows; r += get_global_size(0)) {
    long offs[2] = {in_off, out_off};
    lt_unravel(r, rank, kdesc, 2, offs);
    long ib = offs[0], ob = offs[1];
#ifndef LT_INT /* integer compute is built for the scans alone (exact, wrapping) */
    if (op <= 2) {
      real_t m = -INFINITY;
      for (long j = 0; j < n; j++)
        m = lt_max(m, LT_LOAD(LT_IN0, in, ib + lt_row_at(j, row_rank, rdesc, 0)));
      /* A +inf in the row makes softmax and log_softmax NaN throughout, as PyTorch's
       * exp(x - max) gives; logsumexp stays +inf, and an all -inf row shifts by 0. */
      real_t shift = isinf(m) && (m < 0 || op == 2) ? (real_t)0 : m;
      acc_t sum = 0, comp = 0;
      for (long j = 0; j < n; j++) {
        acc_t y = (acc_t)exp(LT_LOAD(LT_IN0, in, ib + lt_row_at(j, row_rank, rdesc, 0)) - shift) - comp;
        acc_t t = sum + y;
        comp = isfinite(t) ? (t - sum) - y : 0; /* Kahan, but inf stays inf */
        sum = t;
      }
      if (op == 2) {
        LT_STORE(LT_OUT, out, ob, (real_t)(shift + (real_t)log(sum)));
        continue;
      }
      real_t lse = (real_t)log(sum), inv = (real_t)(1 / sum);
      for (long j = 0; j < n; j++) {
        real_t x = LT_LOAD(LT_IN0, in, ib + lt_row_at(j, row_rank, rdesc, 0));
        real_t y = op == 0 ? exp(x - shift) * inv : (x - shift) - lse;
        LT_STORE(LT_OUT, out, ob + lt_row_at(j, row_rank, rdesc, 1), y);
      }
    } else if (op <= 4) {
      acc_t sum = 0, comp = 0;
      for (long j = 0; j < n; j++) {
        acc_t y = (acc_t)LT_LOAD(LT_IN0, in, ib + lt_row_at(j, row_rank, rdesc, 0)) - comp;
        acc_t t = sum + y;
        comp = isfinite(t) ? (t - sum) - y : 0;
        sum = t;
      }
      acc_t mean = sum / (acc_t)n, m2 = 0;
      comp = 0;
      for (long j = 0; j < n; j++) {
        acc_t d = (acc_t)LT_LOAD(LT_IN0, in, ib + lt_row_at(j, row_rank, rdesc, 0)) - mean;
        acc_t y = d * d - comp;
        acc_t t = m2 + y;
        comp = isfinite(t) ? (t - m2) - y : 0;
        m2 = t;
      }
      acc_t dof = (acc_t)n - ddof;
      acc_t var = (n == 0 ? (acc_t)NAN : m2) / (dof > 0 ? dof : (acc_t)0);
      LT_STORE(LT_OUT, out, ob, (real_t)(op == 4 ? sqrt(var) : var));
    } else
#endif
    {
      real_t c = op == 6 ? (real_t)1 : (real_t)0;
      for (long j = 0; j < n; j++) {
        real_t x = LT_LOAD(LT_IN0, in, ib + lt_row_at(j, row_rank, rdesc, 0));
        c = op == 6 ? LT_MUL(c, x) : LT_ADD(c, x);
        LT_STORE(LT_OUT, out, ob + lt_row_at(j, row_rank, rdesc, 1), c);
      }
    }
  }
}

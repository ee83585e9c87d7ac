/* SPDX-License-Identifier: MIT */
/* Direct contraction steps (lt__contract_step in src/backend/backend.h) for small problems:
 * one work-item per output element sums a * b over the contracted dims, then applies alpha,
 * beta and C. Operand dtypes LT_IN0 (a), LT_IN1 (b), LT_OUT, LT_C; arithmetic in real_t
 * (integer compute wraps through LT_ADD / LT_MUL, exactly as the CPU's direct kernel).
 * desc: out shape[rank], out / c / a / b strides over it (rank each), contracted shape
 * [red_rank], a / b strides over it (red_rank each). */
#define LT_T(dt) LT_CAT(LT_T_, dt)

kernel void lt_contract(int rank, int red_rank, constant const long *desc, long nout, long nred,
                        global const LT_T(LT_IN0) *a, long off_a, global const LT_T(LT_IN1) *b,
                        long off_b, global LT_T(LT_OUT) *out, long off_out,
                        global const LT_T(LT_C) *c, long off_c, real_t alpha, real_t beta) {
  constant const long *red = desc + 5 * rank;
  for (long o = get_global_id(0); o < nout; o += get_global_size(0)) {
    long offs[4] = {off_out, off_c, off_a, off_b};
    lt_unravel(o, rank, desc, 4, offs);
    real_t acc = 0;
    for (long r = 0; r < nred; r++) {
      long ro[2] = {offs[2], offs[3]};
      lt_unravel(r, red_rank, red, 2, ro);
      acc = LT_ADD(acc, LT_MUL(LT_LOAD(LT_IN0, a, ro[0]), LT_LOAD(LT_IN1, b, ro[1])));
    }
    real_t v = LT_MUL(alpha, acc);
    if (beta != 0) v = LT_ADD(v, LT_MUL(beta, LT_LOAD(LT_C, c, offs[1]))); /* beta 0: no read */
    LT_STORE(LT_OUT, out, offs[0], v);
  }
}

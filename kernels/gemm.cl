/* SPDX-License-Identifier: MIT */
/* Batched GEMM (lt__gemm_step in src/backend/backend.h): C = alpha * A * B + beta * C with
 * arbitrary row/column strides. Each work-group of LT_WX x LT_WY items computes an
 * LT_TM x LT_TN tile of C, every item a register block of (LT_TM / LT_WY) x (LT_TN / LT_WX)
 * elements, stepping through k by LT_TK-deep slices of A and B staged in local memory.
 * LT_A_K_FAST: A's column stride is 1 (consecutive k are adjacent), so tile loads walk k
 * first; LT_B_N_FAST: likewise for B's columns. Both keep global reads coalesced. real_t is
 * the dtype (LT_COMPUTE_F64 for f64). desc: batch shape, then A, B, C batch strides. */
#ifndef LT_TM
#define LT_TM 64
#endif
#ifndef LT_TN
#define LT_TN 64
#endif
#ifndef LT_TK
#define LT_TK 16
#endif
#ifndef LT_WX
#define LT_WX 16
#endif
#ifndef LT_WY
#define LT_WY 16
#endif
#define LT_RM (LT_TM / LT_WY)
#define LT_RN (LT_TN / LT_WX)
#define LT_NT (LT_WX * LT_WY)

kernel __attribute__((reqd_work_group_size(LT_WX, LT_WY, 1))) void
lt_gemm(long m, long n, long k, global const real_t *A, long offa, long rsa, long csa,
        global const real_t *B, long offb, long rsb, long csb, global real_t *C, long offc,
        long rsc, long csc, real_t alpha, real_t beta, long nbatch, int brank,
        constant const long *desc) {
  local real_t As[LT_TK][LT_TM + 1];
  local real_t Bs[LT_TK][LT_TN + 1];
  int tx = (int)get_local_id(0), ty = (int)get_local_id(1), lid = ty * LT_WX + tx;
  long row0 = (long)get_group_id(1) * LT_TM, col0 = (long)get_group_id(0) * LT_TN;
  for (long bt = get_group_id(2); bt < nbatch; bt += get_num_groups(2)) {
    long o[3] = {offa, offb, offc};
    lt_unravel(bt, brank, desc, 3, o);
    real_t acc[LT_RM][LT_RN];
    for (int i = 0; i < LT_RM; i++)
      for (int j = 0; j < LT_RN; j++) acc[i][j] = 0;
    for (long k0 = 0; k0 < k; k0 += LT_TK) {
      for (int l = lid; l < LT_TM * LT_TK; l += LT_NT) {
#ifdef LT_A_K_FAST
        int kk = l % LT_TK, r = l / LT_TK;
#else
        int r = l % LT_TM, kk = l / LT_TM;
#endif
        long gr = row0 + r, gk = k0 + kk;
        As[kk][r] = (gr < m && gk < k) ? A[o[0] + gr * rsa + gk * csa] : (real_t)0;
      }
      for (int l = lid; l < LT_TK * LT_TN; l += LT_NT) {
#ifdef LT_B_N_FAST
        int c = l % LT_TN, kk = l / LT_TN;
#else
        int kk = l % LT_TK, c = l / LT_TK;
#endif
        long gc = col0 + c, gk = k0 + kk;
        Bs[kk][c] = (gc < n && gk < k) ? B[o[1] + gk * rsb + gc * csb] : (real_t)0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int kk = 0; kk < LT_TK; kk++) {
        real_t a[LT_RM], b[LT_RN];
        for (int i = 0; i < LT_RM; i++) a[i] = As[kk][ty + i * LT_WY];
        for (int j = 0; j < LT_RN; j++) b[j] = Bs[kk][tx + j * LT_WX];
        for (int i = 0; i < LT_RM; i++)
          for (int j = 0; j < LT_RN; j++) acc[i][j] += a[i] * b[j];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < LT_RM; i++) {
      long r = row0 + ty + i * LT_WY;
      for (int j = 0; j < LT_RN; j++) {
        long c = col0 + tx + j * LT_WX;
        if (r < m && c < n) {
          long at = o[2] + r * rsc + c * csc;
          real_t v = alpha * acc[i][j];
          if (beta != 0) v += beta * C[at]; /* beta == 0 never reads C (it may hold NaN) */
          C[at] = v;
        }
      }
    }
  }
}

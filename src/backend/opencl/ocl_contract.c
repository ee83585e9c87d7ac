/* SPDX-License-Identifier: MIT */
/* Direct contraction steps on the device (kernels/contract.cl): one work-item per output
 * element, for the small contractions the front end does not send through GEMM. */
#include "backend/opencl/ocl.h"
#include "core/error.h"

static lt_status check_dtypes(const lt__ocl_state *st, const lt__contract_step *s,
                              const lt__operand *c) {
  LT_TRY(lt__ocl_require_dtype(st, s->compute, "contract"));
  LT_TRY(lt__ocl_require_dtype(st, s->a.dtype, "load"));
  LT_TRY(lt__ocl_require_dtype(st, s->b.dtype, "load"));
  LT_TRY(lt__ocl_require_dtype(st, s->out.dtype, "store"));
  return lt__ocl_require_dtype(st, c->dtype, "load");
}

static lt_status set_args(cl_kernel k, const lt__contract_step *s, const lt__operand *c,
                          cl_mem desc, int64_t nout, int64_t nred) {
  const lt__operand *ops[4] = {&s->a, &s->b, &s->out, c};
  LT_TRY(lt__ocl_arg_int(k, 0, s->out_rank));
  LT_TRY(lt__ocl_arg_int(k, 1, s->rank - s->out_rank));
  LT_TRY(lt__ocl_arg_mem(k, 2, desc));
  LT_TRY(lt__ocl_arg_long(k, 3, nout));
  LT_TRY(lt__ocl_arg_long(k, 4, nred));
  for (cl_uint i = 0; i < 4; i++) {
    LT_TRY(lt__ocl_arg_mem(k, 5 + 2 * i, ops[i]->mem));
    LT_TRY(lt__ocl_arg_long(k, 6 + 2 * i, ops[i]->offset));
  }
  LT_TRY(lt__ocl_arg_real(k, 13, s->compute, s->alpha));
  return lt__ocl_arg_real(k, 14, s->compute, s->beta);
}

lt_status lt__ocl_contract(lt_context *ctx, const lt__contract_step *s) {
  lt__ocl_state *st = lt__ocl(ctx);
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  int r = s->out_rank;
  int64_t nout = 1, nred = 1, desc[7 * LT_MAX_RANK];
  size_t n = 0;
  for (int d = 0; d < r; d++)
    desc[n++] = s->shape[d], nout *= s->shape[d];
  const lt__operand *tables[4] = {&s->out, c, &s->a, &s->b};
  for (int t = 0; t < 4; t++)
    for (int d = 0; d < r; d++)
      desc[n++] = tables[t]->strides[d];
  for (int d = r; d < s->rank; d++)
    desc[n++] = s->shape[d], nred *= s->shape[d];
  for (int d = r; d < s->rank; d++)
    desc[n++] = s->a.strides[d];
  for (int d = r; d < s->rank; d++)
    desc[n++] = s->b.strides[d];
  if (nout == 0) return LT_OK;
  LT_TRY(check_dtypes(st, s, c));
  char opts[256] = "";
  LT_TRY(lt__ocl_append(opts, sizeof opts, "-DLT_IN0=%s -DLT_IN1=%s -DLT_OUT=%s -DLT_C=%s%s",
                        lt__ocl_dtype_token(s->a.dtype), lt__ocl_dtype_token(s->b.dtype),
                        lt__ocl_dtype_token(s->out.dtype), lt__ocl_dtype_token(c->dtype),
                        lt__ocl_compute_define(s->compute)));
  pthread_mutex_lock(&st->lock);
  cl_kernel k;
  cl_mem dbuf = NULL;
  lt_status res = lt__ocl_kernel(st, "contract.cl", "lt_contract", opts, &k);
  if (res == LT_OK) res = lt__ocl_const_buffer(st, desc, n, &dbuf);
  if (res == LT_OK) res = set_args(k, s, c, dbuf, nout, nred);
  size_t local = 64, global = (size_t)((nout + 63) / 64) * local;
  if (res == LT_OK) res = lt__ocl_launch(st, k, 1, &global, &local);
  if (dbuf) lt__ocl_release(st, dbuf, 0);
  pthread_mutex_unlock(&st->lock);
  return res;
}

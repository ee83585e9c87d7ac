/* SPDX-License-Identifier: MIT */
/* Batched GEMM steps on the device through the tiled, register-blocked kernel of
 * kernels/gemm.cl; the batch index is the third NDRange dimension (looped when larger). */
#include "backend/opencl/ocl.h"
#include "core/error.h"

static lt_status set_matrix_args(cl_kernel k, cl_uint i, const lt__matrix *x) {
  LT_TRY(lt__ocl_arg_mem(k, i, x->mem));
  LT_TRY(lt__ocl_arg_long(k, i + 1, x->offset));
  LT_TRY(lt__ocl_arg_long(k, i + 2, x->rs));
  return lt__ocl_arg_long(k, i + 3, x->cs);
}

static lt_status launch(lt__ocl_state *st, cl_kernel k, const lt__gemm_step *s, cl_mem desc,
                        int64_t nbatch) {
  LT_TRY(lt__ocl_arg_long(k, 0, s->m));
  LT_TRY(lt__ocl_arg_long(k, 1, s->n));
  LT_TRY(lt__ocl_arg_long(k, 2, s->k));
  LT_TRY(set_matrix_args(k, 3, &s->a));
  LT_TRY(set_matrix_args(k, 7, &s->b));
  LT_TRY(set_matrix_args(k, 11, &s->c));
  LT_TRY(lt__ocl_arg_real(k, 15, s->dtype, s->alpha));
  LT_TRY(lt__ocl_arg_real(k, 16, s->dtype, s->beta));
  LT_TRY(lt__ocl_arg_long(k, 17, nbatch));
  LT_TRY(lt__ocl_arg_int(k, 18, s->batch_rank));
  LT_TRY(lt__ocl_arg_mem(k, 19, desc));
  size_t local[3] = {16, 16, 1};
  size_t global[3] = {(size_t)((s->n + 63) / 64) * 16, (size_t)((s->m + 63) / 64) * 16,
                      (size_t)(nbatch < 65535 ? nbatch : 65535)};
  return lt__ocl_launch(st, k, 3, global, local);
}

lt_status lt__ocl_gemm(lt_context *ctx, const lt__gemm_step *s) {
  lt__ocl_state *st = lt__ocl(ctx);
  int64_t nbatch = 1;
  for (int d = 0; d < s->batch_rank; d++)
    nbatch *= s->batch_shape[d];
  if (s->m == 0 || s->n == 0 || nbatch == 0) return LT_OK;
  LT_RETURN_IF(s->dtype != LT_F32 && s->dtype != LT_F64, LT_ERR_DTYPE,
               "OpenCL GEMM: dtype %s is not f32 or f64", lt_dtype_name(s->dtype));
  LT_TRY(lt__ocl_require_dtype(st, s->dtype, "multiply matrices"));
  LT_RETURN_IF(st->dev->max_work_group < 256, LT_ERR_UNSUPPORTED,
               "OpenCL GEMM: device %s allows work-groups of %lld items, the kernel needs 256",
               st->dev->id, (long long)st->dev->max_work_group);
  char opts[128] = "";
  LT_TRY(lt__ocl_append(opts, sizeof opts, "%s%s%s", s->dtype == LT_F64 ? "-DLT_COMPUTE_F64" : "",
                        s->a.cs == 1 ? " -DLT_A_K_FAST" : "",
                        s->b.cs == 1 ? " -DLT_B_N_FAST" : ""));
  int64_t desc[4 * LT_MAX_RANK];
  int br = s->batch_rank;
  for (int d = 0; d < br; d++) {
    desc[d] = s->batch_shape[d];
    desc[br + d] = s->a.batch_strides[d];
    desc[2 * br + d] = s->b.batch_strides[d];
    desc[3 * br + d] = s->c.batch_strides[d];
  }
  pthread_mutex_lock(&st->lock);
  cl_kernel k;
  cl_mem dbuf = NULL;
  lt_status r = lt__ocl_kernel(st, "gemm.cl", "lt_gemm", opts, &k);
  if (r == LT_OK) r = lt__ocl_const_buffer(st, desc, 4 * (size_t)br, &dbuf);
  if (r == LT_OK) r = launch(st, k, s, dbuf, nbatch);
  if (dbuf) lt__ocl_release(st, dbuf, 0);
  pthread_mutex_unlock(&st->lock);
  return r;
}

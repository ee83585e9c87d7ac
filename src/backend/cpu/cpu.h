/* CPU backend kernels (host pointers as memory handles). */
#ifndef LT_BACKEND_CPU_H
#define LT_BACKEND_CPU_H

#include "backend/backend.h"

lt_status lt__cpu_map(lt_context *ctx, const lt__map_step *step);
lt_status lt__cpu_reduce(lt_context *ctx, const lt__reduce_step *step);
lt_status lt__cpu_gemm(lt_context *ctx, const lt__gemm_step *step);
lt_status lt__cpu_contract(lt_context *ctx, const lt__contract_step *step);

#endif

/* Instantiates cpu_typed.inc for float and double (names listed in cpu_typed.h). */
#include "backend/cpu/cpu_typed.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define T float
#define SUFFIX(name) name##_f32
#define T_DTYPE LT_F32
#define T_EXP expf
#define T_LOG logf
#define T_SQRT sqrtf
#define T_SIN sinf
#define T_COS cosf
#define T_TANH tanhf
#define T_ABS fabsf
#define T_POW powf
#include "backend/cpu/cpu_typed.inc"
#undef T
#undef SUFFIX
#undef T_DTYPE
#undef T_EXP
#undef T_LOG
#undef T_SQRT
#undef T_SIN
#undef T_COS
#undef T_TANH
#undef T_ABS
#undef T_POW

#define T double
#define SUFFIX(name) name##_f64
#define T_DTYPE LT_F64
#define T_EXP exp
#define T_LOG log
#define T_SQRT sqrt
#define T_SIN sin
#define T_COS cos
#define T_TANH tanh
#define T_ABS fabs
#define T_POW pow
#include "backend/cpu/cpu_typed.inc"

const lt__cpu_kernels *lt__cpu_kernels_for(lt_dtype compute) {
  return compute == LT_F64 ? &kernels_f64 : &kernels_f32;
}

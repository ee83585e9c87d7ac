/* Functions that other work in progress implements (.npy I/O, operations, einsum), referenced
 * weakly so that tests and fuzz targets build before they land and switch themselves on once
 * libtensor exports them. LT_HAVE(fn) is true when the loaded library has `fn`.
 * Include after tensor.h; the translation unit must also call some libtensor function directly
 * (every test does) so that the linker keeps libtensor with --as-needed. */
#ifndef LT_TEST_OPTIONAL_API_H
#define LT_TEST_OPTIONAL_API_H

#include "tensor.h"

#include <stddef.h>

#pragma weak lt_npy_load_buffer
#pragma weak lt_npy_load
#pragma weak lt_npy_save
#pragma weak lt_plan_permutation
#pragma weak lt_plan_binary
#pragma weak lt_plan_trinary
#pragma weak lt_plan_reduction
#pragma weak lt_plan_contraction
#pragma weak lt_binary
#pragma weak lt_add
#pragma weak lt_sub
#pragma weak lt_mul
#pragma weak lt_div
#pragma weak lt_unary
#pragma weak lt_reduce
#pragma weak lt_argmax
#pragma weak lt_argmin
#pragma weak lt_permute
#pragma weak lt_plan_einsum
#pragma weak lt_plan_einsum_modes
#pragma weak lt_einsum
#pragma weak lt_einsum_into
#pragma weak lt_einsum_modes

#define LT_HAVE(fn) ((fn) != NULL)

#endif

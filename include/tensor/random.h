/* SPDX-License-Identifier: MIT */
/* libtensor: counter-based random numbers (Philox4x32-10) keyed by (seed, stream). */
#ifndef LT_TENSOR_RANDOM_H
#define LT_TENSOR_RANDOM_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A generator: a key (seed), a stream number and a counter position. Element i of a fill
 * depends only on (seed, stream, the counter at the call, i), never on the device or the
 * thread count: the CPU and OpenCL backends give the same bits (normals included: their log
 * and sincos are the library's own, kernels/philox.h). Each fill advances the counter past the blocks it used, so
 * successive calls differ; fills may run concurrently from several threads (each takes its own
 * counter range, in an unspecified order). Values are not NumPy's bits. */
typedef struct lt_rng lt_rng;

/* A generator for (seed, stream) at counter 0. Fails with LT_ERR_NULL_POINTER or
 * LT_ERR_OUT_OF_MEMORY. */
LT_API lt_status lt_rng_create(uint64_t seed, uint64_t stream, lt_rng **out);
/* Destroys a generator. NULL ok. */
LT_API void lt_rng_destroy(lt_rng *rng);
/* The counter position (in Philox blocks), and setting it (to replay or skip ahead; below
 * 2^56). Fail with LT_ERR_NULL_POINTER / LT_ERR_INVALID_HANDLE / LT_ERR_INVALID_ARGUMENT. */
LT_API lt_status lt_rng_get_offset(const lt_rng *rng, uint64_t *offset);
/* Sets the counter position (below 2^56); fails as lt_rng_get_offset does. */
LT_API lt_status lt_rng_set_offset(lt_rng *rng, uint64_t offset);

/* Fills `out` (any strides, any context; elements numbered in C order) and advances the
 * counter. Common failures: LT_ERR_NULL_POINTER, LT_ERR_INVALID_HANDLE, LT_ERR_ALIASING (out's
 * elements overlap each other), LT_ERR_DTYPE, LT_ERR_INVALID_ARGUMENT (bad parameters, named
 * in the message), LT_ERR_OVERFLOW (the counter would pass 2^56), LT_ERR_DEVICE.
 * Uniform in [low, high) (float dtypes; f16/bf16 may round up to high): 24 random bits for
 * f16/bf16/f32, 53 for f64. low <= high, both finite. */
LT_API lt_status lt_rng_uniform(lt_rng *rng, lt_tensor *out, double low, double high);
/* Normal with the given mean and std (>= 0, finite), float dtypes; Box-Muller in double from
 * 52-bit uniforms, so the tails reach 8.49 standard deviations. */
LT_API lt_status lt_rng_normal(lt_rng *rng, lt_tensor *out, double mean, double std);
/* Integers uniform in [low, high) (low < high), without modulo bias (Lemire's method with
 * rejection). Integer outputs hold them exactly (a range the dtype cannot hold, such as
 * [0, 1000) in i8 or [0, 5) in bool, is LT_ERR_OUT_OF_RANGE, as in NumPy); float outputs hold
 * them rounded. */
LT_API lt_status lt_rng_integers(lt_rng *rng, lt_tensor *out, int64_t low, int64_t high);
/* 1 with probability p (0 <= p <= 1, resolution 2^-32), else 0, in out's dtype. */
LT_API lt_status lt_rng_bernoulli(lt_rng *rng, lt_tensor *out, double p);
/* A uniformly random permutation of 0..n-1 into the rank-1 i64 tensor `out` of extent n
 * (Fisher-Yates on the host with unbiased bounded draws, then copied to out's device). */
LT_API lt_status lt_rng_permutation(lt_rng *rng, lt_tensor *out);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: MIT */
/* Naive float64 reference for contractions and einsum: loops over every value of every
 * label. Header-only so each test that needs it includes it. */
#ifndef LT_TEST_EINSUM_REF_H
#define LT_TEST_EINSUM_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct lt_ref_operand {
  int rank;
  const int *labels; /* one label id per axis (ids in [0, n_labels)) */
  const int64_t *shape;
  const double *data; /* C order */
} lt_ref_operand;

/* out[C order over out_shape] = sum over all labels of prod(inputs); labels repeated in the
 * output address its diagonal (zero elsewhere). Extent 1 axes broadcast against the label's
 * extent. Returns a malloc'ed array (caller frees). */
static double *lt_ref_einsum(int n_in, const lt_ref_operand *in, int n_labels,
                             const int64_t *extent, int out_rank, const int *out_labels) {
  int64_t out_n = 1, out_shape[64], total = 1;
  for (int i = 0; i < out_rank; i++)
    out_n *= (out_shape[i] = extent[out_labels[i]]);
  for (int l = 0; l < n_labels; l++)
    total *= extent[l];
  double *out = calloc((size_t)(out_n ? out_n : 1), sizeof(double));
  int64_t val[256] = {0};
  for (int64_t it = 0; it < total; it++) {
    int64_t rem = it;
    for (int l = n_labels - 1; l >= 0; l--) {
      val[l] = rem % extent[l];
      rem /= extent[l];
    }
    double prod = 1.0;
    for (int k = 0; k < n_in; k++) {
      int64_t off = 0;
      for (int a = 0; a < in[k].rank; a++) {
        int64_t idx = in[k].shape[a] == 1 ? 0 : val[in[k].labels[a]];
        off = off * in[k].shape[a] + idx;
      }
      prod *= in[k].data[off];
    }
    int64_t off = 0;
    for (int a = 0; a < out_rank; a++)
      off = off * out_shape[a] + val[out_labels[a]];
    out[off] += prod;
  }

  return out;
}

#endif

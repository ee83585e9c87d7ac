/* SPDX-License-Identifier: MIT */
/* libtensor: dense strided tensors, views, operations, einsum and plans on CPU and OpenCL.
 * This umbrella header is the whole public API; see README.md for a tour. */
#ifndef LT_TENSOR_H
#define LT_TENSOR_H

#include "tensor/autograd.h"
#include "tensor/base.h"
#include "tensor/context.h"
#include "tensor/einsum.h"
#include "tensor/hdf5.h"
#include "tensor/index.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/stats.h"
#include "tensor/tensor.h"
/* DLPack interop (issue 20). */
#include "tensor/dlpack.h"

#endif

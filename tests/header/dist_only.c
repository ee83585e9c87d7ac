/* SPDX-License-Identifier: MIT */
/* include/tensor/dist.h compiles alone (with <mpi.h> on the include path), as C11 and C++. */
#include "tensor/dist.h"

int main(void) { return lt_dist_tensor_local(NULL) == NULL ? 0 : 1; }

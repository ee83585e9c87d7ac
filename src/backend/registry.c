/* SPDX-License-Identifier: MIT */
/* The one table of backends. A new backend is one folder that exports an lt__backend_desc and
 * one line here; core (context.c, device.c) loops over this table and names no backend. */
#include "backend/backend.h"

#include <stddef.h>

extern const lt__backend_desc lt__cpu_backend_desc;
#ifdef LT_HAVE_OPENCL
extern const lt__backend_desc lt__opencl_backend_desc;
#else
static const lt__backend_desc opencl_missing = {
    .prefix = "opencl",
    .takes_suffix = true,
    .forms = "\"opencl\" or \"opencl:P:D\"",
    .missing = "this libtensor was built without OpenCL (LT_WITH_OPENCL=OFF)",
};
#endif

static const lt__backend_desc *const registry[] = {
    &lt__cpu_backend_desc,
#ifdef LT_HAVE_OPENCL
    &lt__opencl_backend_desc,
#else
    &opencl_missing,
#endif
};

int lt__backend_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const lt__backend_desc *lt__backend_at(int i) {
  return i >= 0 && i < lt__backend_count() ? registry[i] : NULL;
}

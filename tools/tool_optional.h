/* Library functions that other work in progress implements (.npy I/O, operations, einsum),
 * referenced weakly so that the tool links before they land; a verb checks TOOL_HAVE(fn) and
 * reports a clear error when the loaded libtensor lacks one. Drop an entry once it has landed
 * everywhere the tool is built. */
#ifndef LT_TOOL_OPTIONAL_H
#define LT_TOOL_OPTIONAL_H

#include "tensor.h"

#pragma weak lt_npy_load
#pragma weak lt_npy_save
#pragma weak lt_plan_einsum
#pragma weak lt_plan_execute
#pragma weak lt_plan_create_output
#pragma weak lt_plan_describe

#define TOOL_HAVE(fn) ((fn) != NULL)

#endif

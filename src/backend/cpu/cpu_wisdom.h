/* SPDX-License-Identifier: MIT */
/* The CPU backend's measurements kept across processes (cpu_wisdom.c): the cost figures of
 * cpu_caps.c and the engine choices of cpu_gemm_choose.c, read from and appended to a file per
 * machine, library version, instruction-set level and thread count. Every call is best effort:
 * without the file (LT_WISDOM=off, no writable cache directory) the figures are measured per
 * process as before. Thread safe. */
#ifndef LT_BACKEND_CPU_WISDOM_H
#define LT_BACKEND_CPU_WISDOM_H

#include "backend/backend.h"

#include <stdbool.h>

/* The engine tables of cpu_gemm_choose.c, by name in the file. */
enum { LT__WISDOM_ENGINE = 0, LT__WISDOM_DOT = 1 };

/* Fills the measured figures of caps from the file; false (caps untouched) when it has none. */
bool lt__cpu_wisdom_caps(lt_context *ctx, lt__backend_caps *caps);
/* Records caps's measured figures, unless the file already has some. */
void lt__cpu_wisdom_save_caps(lt_context *ctx, const lt__backend_caps *caps);
/* The engine the file records for slot `index` of `table`, 0 when none. */
int lt__cpu_wisdom_find_engine(lt_context *ctx, int table, long index);
/* Records the engine measured for a slot, unless the file already has one for it. */
void lt__cpu_wisdom_save_engine(lt_context *ctx, int table, long index, int engine);

#endif

#!/bin/sh
# SPDX-License-Identifier: MIT
# On a machine with an OpenCL GPU: builds libtensor (Release, OpenCL on, no tests) and runs the
# device benchmark in one go. Prints the devices, then the device's own copy bandwidth
# (clEnqueueCopyBuffer) and f32 multiply-add peak measured in the same run, and libtensor's
# permutation / reduction GB/s as ratios to that copy bandwidth and GEMM GFLOP/s as a ratio to
# the peak.
#   sh bench/opencl_gpu.sh [device] [--quick]   device: "opencl" (first GPU, else the first
#                                               device, default) or "opencl:P:D"
# Needs cmake, a C compiler, OpenBLAS and the OpenCL ICD loader + headers (ocl-icd-opencl-dev,
# opencl-headers) and the vendor's ICD. Build directory: build-gpu/ (override: BUILD_DIR).
set -e
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLT_WITH_OPENCL=ON -DLT_BUILD_TESTS=OFF \
  -DLT_BUILD_TOOLS=OFF -DLT_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j"$jobs" --target bench_opencl >/dev/null
if command -v clinfo >/dev/null 2>&1; then
  clinfo -l 2>/dev/null || true
fi
# Kernels come from the source tree, so an edited kernel is measured without a rebuild.
LT_KERNEL_DIR=$(pwd)/kernels "$build/bench/bench_opencl" "$@"

#!/bin/sh
# SPDX-License-Identifier: MIT
# Quick start, step 1: install the Debian packages, build libtensor, run `tensor demo`.
set -e
cd "$(dirname "$0")/.."
sh tools/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
./build/tools/tensor demo

#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates tests/abi_symbols.txt from a built library: run after a deliberate ABI change.
# usage: tools/update_abi.sh build/src/libtensor.so
set -e
lib=${1:-build/src/libtensor.so}
nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | grep -v '^LIBTENSOR_' | LC_ALL=C sort > "$(dirname "$0")/../tests/abi_symbols.txt"
echo "wrote tests/abi_symbols.txt ($(wc -l < "$(dirname "$0")/../tests/abi_symbols.txt") symbols)"

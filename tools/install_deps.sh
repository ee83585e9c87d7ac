#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages libtensor needs to build, test and benchmark (idempotent:
# does nothing when they are present). Run as root.
set -e
pkgs="build-essential cmake pkg-config libcmocka-dev libopenblas-dev ocl-icd-opencl-dev
opencl-headers pocl-opencl-icd clinfo python3 python3-numpy python3-pytest python3-hypothesis
python3-matplotlib valgrind clang libclang-rt-14-dev"
# The API reference (docs/) and the pip-install test (issue 20).
pkgs="$pkgs doxygen python3-venv python3-setuptools python3-wheel python3-pip"
# HDF5 I/O (optional at build time) and the h5py peer of its tests (issue 23).
pkgs="$pkgs libhdf5-dev python3-h5py"
# libtensor_mpi (optional at build time: LT_WITH_MPI) and mpirun for its tests (issue 24).
pkgs="$pkgs libopenmpi-dev openmpi-bin"
# The Python binding's optional C extension, libtensor._fast (issue 20 A).
pkgs="$pkgs python3-dev"
# libtensor.dask (issue 24 A): its tests run a dask.distributed LocalCluster (optional: they
# skip without it).
pkgs="$pkgs python3-dask python3-distributed"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing
fi

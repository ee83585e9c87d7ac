# SPDX-License-Identifier: MIT
"""Without dask/distributed (Debian: python3-dask python3-distributed) nothing here is
collected: pytest then exits 5, which ctest reports as skipped (dask_tests)."""
import sys

try:
    import dask  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:
    collect_ignore_glob = ["test_*.py"]
    sys.stderr.write(f"libtensor.dask tests skipped: dask/distributed not installed ({exc})\n")

# SPDX-License-Identifier: MIT
"""A loop that never reads a result back keeps its memory bounded on every device: PoCL kept
each released OpenCL buffer until the queue finished, and nothing finished it (a 2 MB x * x per
call grew the process by 2 MB a call, to gigabytes)."""
import numpy as np

import libtensor as lt


def _vm_size_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) // 1024
    return 0


def test_released_buffers_are_returned(device):
    x = lt.tensor(np.ones((512, 512)), device=device)  # 2 MB of float64
    for _ in range(20):
        x * x
    before = _vm_size_mb()
    for _ in range(400):  # 800 MB of results, none read back
        x * x
    grown = _vm_size_mb() - before
    assert grown < 300, f"the process grew by {grown} MB over 400 calls"

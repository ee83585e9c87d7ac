# SPDX-License-Identifier: MIT
"""Saves from Python keep the library's promise: a failed save leaves the old file, devices are
written in place and never removed, fsync=True works, and the C status reaches Python."""
import os
import resource
import signal
import stat

import numpy as np
import pytest

import libtensor as lt


def test_failed_save_keeps_old_file(tmp_path):
    path = tmp_path / "a.npy"
    small = np.arange(10, dtype=np.float32)
    lt.save(path, small)
    big = np.random.default_rng(0).standard_normal((256, 256))
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (32768, old_limit[1]))
        with pytest.raises(lt.LibtensorError) as err:
            lt.save(path, big)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert "File too large" in str(err.value)
    np.testing.assert_array_equal(np.load(path), small)
    assert sorted(os.listdir(tmp_path)) == ["a.npy"]
    lt.save(path, big, fsync=True)
    np.testing.assert_array_equal(np.load(path), big)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_device_is_never_removed():
    with pytest.raises(lt.LibtensorError) as err:
        lt.save("/dev/full", np.ones(1000, np.float32))
    assert "No space left on device" in str(err.value)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_trailing_data_refused(tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, np.arange(6, dtype=np.float32))
    with open(path, "ab") as f:
        f.write(b"junk")
    with pytest.raises(lt.LibtensorError, match="trailing data after 24 bytes"):
        lt.load(path)

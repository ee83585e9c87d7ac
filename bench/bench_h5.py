#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Reading HDF5 datasets: libtensor (lt.h5) against h5py + NumPy in one process, and against the
file's raw read bandwidth (a plain read of the whole file into a preallocated buffer).

    LIBTENSOR_PATH=build/src/libtensor.so /usr/bin/python3 bench/bench_h5.py [--mb 1024]

Writes (with h5py) one f32 dataset of --mb MiB (default 1024, or $LT_BENCH_H5_MB) contiguous and
one chunked (1 MiB chunks, no compression) into a temporary folder ($LT_BENCH_H5_DIR, default
the system's temporary folder: check `df -h` first, it needs twice the size), then times whole
reads and a strided hyperslab [::2, ::4] of each, as medians of $LT_BENCH_REPS (default 3)
samples taken alternately. The page cache is warm (each file was just written and is read once
before timing): the figures are memory-to-memory bandwidth through HDF5, not disk speed. The
files are removed at the end.
"""
import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import median_pair_seconds, median_seconds  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
import libtensor as lt  # noqa: E402

try:
    import h5py
except ImportError:
    h5py = None
    print("h5py is not installed: writing the files with libtensor, no peer figures")

REPS = int(os.environ.get("LT_BENCH_REPS", 3))


def raw_read_seconds(path):
    size = os.path.getsize(path)
    buf = bytearray(size)

    def read():
        with open(path, "rb", buffering=0) as f:
            view, got = memoryview(buf), 0
            while got < size:
                n = f.readinto(view[got:])
                if not n:
                    break
                got += n
    return median_seconds(read, REPS), size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=int(os.environ.get("LT_BENCH_H5_MB", 1024)))
    args = parser.parse_args()
    if not lt.h5.available():
        print("libtensor was built without HDF5: nothing to measure")
        return
    cols = 1024
    rows = max(1, args.mb * (1 << 20) // (4 * cols))
    print(f"f32 dataset ({rows}, {cols}) = {rows * cols * 4 / 2**20:.0f} MiB; page cache warm; "
          f"{REPS} samples; cpu: {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(dir=os.environ.get("LT_BENCH_H5_DIR")) as tmp:
        data = np.random.default_rng(0).standard_normal((rows, cols), dtype=np.float32)
        files = {}
        for layout, chunks in (("contiguous", None), ("chunked", (max(1, min(rows, 256)), cols))):
            path = os.path.join(tmp, layout + ".h5")
            with lt.h5.File(path, "w") as f:
                f.create_dataset("a", data=data, chunks=chunks)
            files[layout] = path
        del data
        print(f"{'case':<24}{'lt GB/s':>9}{'h5py GB/s':>11}{'lt/h5py':>9}{'raw GB/s':>10}"
              f"{'lt/raw':>8}")
        for layout, path in files.items():
            raw, size = raw_read_seconds(path)
            with lt.h5.File(path) as f:
                ds = f["a"]
                h = h5py.File(path, "r") if h5py else None
                for label, key in (("whole", ()), ("[::2, ::4]", (slice(None, None, 2),
                                                                  slice(None, None, 4)))):
                    nbytes = rows * cols * 4 if key == () else \
                        ((rows + 1) // 2) * (cols // 4) * 4
                    lt_read = (lambda: ds.read()) if key == () else (lambda: ds.read(key))
                    if h is not None:
                        h5_read = (lambda: h["a"][...]) if key == () else (lambda: h["a"][key])
                        time.sleep(0.2)
                        t_lt, t_h5 = median_pair_seconds(lt_read, h5_read, REPS)
                    else:
                        t_lt, t_h5 = median_seconds(lt_read, REPS), float("nan")
                    raw_gbs = size / raw / 1e9
                    print(f"{layout + ' ' + label:<24}{nbytes / t_lt / 1e9:>9.2f}"
                          f"{nbytes / t_h5 / 1e9:>11.2f}{t_h5 / t_lt:>9.2f}{raw_gbs:>10.2f}"
                          f"{(nbytes / t_lt) / (size / raw):>8.2f}")
                if h is not None:
                    h.close()


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""Checks the `tensor` tool's HDF5 verbs (ls, info FILE.h5[:/path], einsum with FILE.h5:/dataset
operands and -o FILE.h5:/dataset) against h5py and NumPy. Exits 77 (skipped) without h5py or
without HDF5 in the library.

usage: check_tool_h5.py PATH/TO/tensor
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import h5py
except ImportError:
    print("h5py is not installed: skipped")
    sys.exit(77)

TOOL = sys.argv[1]
failures = []


def run(*args):
    proc = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "in.h5")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 5)).astype(">f8")
    with h5py.File(src, "w") as h:
        h["x/a"] = a
        h.create_dataset("b", data=b, chunks=(2, 5), compression="gzip")
        h["rec"] = np.zeros(2, dtype=[("p", "i4")])
    rc, out, err = run("ls", src)
    if rc != 0 and "without HDF5" in err:
        print("libtensor built without HDF5: skipped")
        sys.exit(77)
    check(rc == 0, f"ls: {rc} {err}")
    lines = out.splitlines()
    check([l.split()[0] for l in lines] == ["/b", "/rec", "/x/", "/x/a"], f"ls order {out!r}")
    check("(4, 5) f64 big-endian, chunks (2, 5), filters deflate(4)" in out, f"ls b {out!r}")
    check("compound" in out, f"ls rec {out!r}")
    rc, out2, _ = run("info", src)
    check(rc == 0 and out2 == out, "info FILE.h5 lists like ls")
    rc, out, err = run("info", src + ":/x/a")
    check(rc == 0 and "shape:   (3, 4)" in out and f"max:     {a.max():.9g}" in out,
          f"info dataset {out!r} {err}")
    dst = os.path.join(tmp, "out.h5")
    rc, _, err = run("einsum", "ij,jk->ik", src + ":/x/a", src + ":/b", "-o", dst + ":/r/ab")
    check(rc == 0, f"einsum -o h5: {err}")
    rc, _, err = run("einsum", "ij->ji", dst + ":/r/ab", "-o", dst + ":/r/ab")  # replace
    check(rc == 0, f"einsum replace: {err}")
    npy = os.path.join(tmp, "a.npy")
    np.save(npy, a)
    rc, _, err = run("einsum", "ij->j", npy, "-o", dst + ":/s")
    check(rc == 0, f"einsum npy -> h5: {err}")
    with h5py.File(dst) as h:
        check(np.allclose(h["r/ab"][...], (a @ b.astype(np.float64)).T), "einsum result")
        check(np.allclose(h["s"][...], a.sum(0)), "npy operand result")
    for args, needle in [(("info", src + ":/rec"), "compound"),
                         (("info", src + ":/nope"), "no object '/nope'"),
                         (("einsum", "ij", src + ":/missing"), "no object"),
                         (("ls", os.path.join(tmp, "none.h5")), "cannot open"),
                         (("ls", npy), "not an HDF5 file")]:
        rc, out, err = run(*args)
        lines = err.strip().splitlines()
        check(rc != 0 and len(lines) == 1 and needle in err, f"{args}: {rc} {err!r}")

if failures:
    sys.exit(1)
print("ok")

# SPDX-License-Identifier: MIT
"""Checks the `tensor` tool's einsum and bench verbs against NumPy.

usage: check_tool.py PATH/TO/tensor
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOL = sys.argv[1]
failures = []


def run(*args, env=None):
    proc = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def check_one_line_error(args, needle):
    rc, out, err = run(*args)
    lines = err.strip().splitlines()
    check(rc != 0, f"{args}: exit status {rc}, expected failure")
    check(len(lines) == 1 and lines[0].startswith("tensor "), f"{args}: stderr {err!r}")
    check(needle.lower() in err.lower(), f"{args}: {needle!r} not in {err!r}")


def check_bench(tmp):
    rc, out, _ = run("bench", "--help")
    check(rc == 0 and "--quick" in out, "bench --help")
    fake = os.path.join(tmp, "bench_fake")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho \"case ratio quick=$LT_BENCH_QUICK\"\necho 'add 0.91'\n")
    os.chmod(fake, 0o755)
    report = os.path.join(tmp, "bench.json")
    rc, out, err = run("bench", "--quick", "--json", report, env={"LT_BENCH_DIR": tmp})
    check(rc == 0, f"bench exit status {rc}: {err}")
    check("add 0.91" in out and "quick=1" in out, f"bench output {out!r}")
    check("[1/1] bench_fake" in err, f"bench progress {err!r}")
    with open(report) as f:
        data = json.load(f)
    check(data["quick"] and data["benchmarks"][0]["name"] == "bench_fake" and
          "add 0.91" in data["benchmarks"][0]["output"], f"bench json {data}")
    rc, _, err = run("bench", env={"LT_BENCH_DIR": os.path.join(tmp, "nothing")})
    check(rc != 0 and "no bench_" in err, "bench without benchmarks fails clearly")


def print_cases(rng):
    """Arrays whose print(array) the tool must reproduce exactly: fixed and scientific
    notation, shortest digits, alignment, nan/inf, wrapping at 75 columns, summarisation,
    blank lines between blocks, 0-d and empty arrays; float32 and float64."""
    return [
        np.arange(6.).reshape(2, 3), np.array([1.5, 2.25, -3.0]), np.array(2.5), np.array(12.0),
        np.array(1e-5), np.array(1.5e20), np.float32(0.1) * np.ones((), np.float32),
        rng.standard_normal((3, 4)), rng.standard_normal((2, 2, 3)) * 1e-5,
        np.arange(2000.).reshape(40, 50), rng.standard_normal(30),
        np.array([1e10, 1.0]), np.array([np.nan, 1.5, np.inf]), np.array([1.5, np.nan, -np.inf]),
        rng.standard_normal((5, 4, 3, 2)), np.zeros((2, 0)),
        np.arange(1200.).reshape(2, 600) * 1e-3,
        np.array([0.1, 0.2, 1e3]), np.array([1e-5, 1.25]), np.array([100.5, 1e-3], np.float32),
        np.array([-0.0, 1.0]), rng.standard_normal((3, 5)).astype(np.float32),
        np.arange(60) * 7.0, np.arange(60).reshape(3, 20) * 100.0,
        np.arange(5000.).reshape(2, 2500) * 1e3, np.arange(-30, 30) * 1.25,
        # integers print exactly (past 2^53 too) and bools as True/False, in NumPy's widths
        np.array([2147483647, -5, 123456789], np.int32), np.array([200, 3], np.uint8),
        np.array([2**53 + 1, 3]), np.array([2**64 - 1, 3], np.uint64),
        np.array([[True, False], [False, True]]), np.array(True), np.array(-7, np.int8),
        np.arange(2000, dtype=np.int16).reshape(40, 50), np.array([-(2**63), 2**63 - 1]),
    ]


def check_printing(tmp, rng):
    for i, arr in enumerate(print_cases(rng)):
        path = os.path.join(tmp, f"print{i}.npy")
        np.save(path, arr)
        rc, out, err = run("einsum", "...->...", path)
        check(rc == 0 and out == str(arr) + "\n",
              f"print case {i} {arr.dtype}{arr.shape}: rc={rc} {err}\n got {out!r}\n"
              f"want {str(arr)!r}")


def check_einsum(tmp):
    rng = np.random.default_rng(7)

    def save(name, arr):
        path = os.path.join(tmp, name)
        np.save(path, arr)
        return path

    # Integer-valued floats: every sum is exact, so printing must match NumPy character for
    # character; "x" is a float32 array with a Fortran layout.
    a = save("a.npy", rng.integers(-9, 10, (3, 4)).astype(np.float64))
    b = save("b.npy", np.asfortranarray(rng.integers(-9, 10, (4, 5)).astype(np.float32)))
    c = save("c.npy", rng.uniform(-1, 1, (5, 2)))
    sq = save("sq.npy", rng.integers(-9, 10, (4, 4)).astype(np.float64))
    big = save("big.npy", rng.integers(0, 5, (40, 60)).astype(np.float64))
    arrays = {f: np.load(f) for f in (a, b, c, sq, big)}
    rc, out, err = run("einsum", "--help")
    check(rc == 0 and "EXPR" in out, "einsum --help")

    for expr, files in [("ij,jk->ik", [a, b]), ("ij->ji", [a]), ("ii", [sq]), ("ii->i", [sq]),
                        ("ij,ij->", [big, big]), ("ij->", [a]), ("i...->...", [big])]:
        rc, out, err = run("einsum", expr, *files)
        want = np.einsum(expr, *[arrays[f] for f in files])
        check(rc == 0 and out == str(want) + "\n",
              f"print {expr}: rc={rc} err={err!r}\n got {out!r}\nwant {str(want)!r}")
    check("..." in run("einsum", "ij->ij", big)[1], "large results are abbreviated")
    check_printing(tmp, rng)

    for path_algo in ("auto", "greedy", "optimal", "none"):
        for dtype in ("f32", "f64"):
            out_path = os.path.join(tmp, f"out_{path_algo}_{dtype}.npy")
            rc, out, err = run("einsum", "--path", path_algo, "--dtype", dtype, "-o", out_path,
                               "ij,jk,kl->il", a, b, c)
            check(rc == 0 and out == "", f"-o {path_algo} {dtype}: {rc} {err}")
            if rc == 0:
                got = np.load(out_path)
                want = np.einsum("ij,jk,kl->il", arrays[a], arrays[b], arrays[c])
                check(got.dtype == {"f32": np.float32, "f64": np.float64}[dtype], "-o dtype")
                tol = 1e-4 if dtype == "f32" else 1e-12
                check(np.allclose(got, want, rtol=tol, atol=tol * 10), f"-o values {path_algo}")
    rc, out, err = run("einsum", "--describe", "ij,jk,kl->il", a, b, c)
    check(rc == 0 and "flop" in out.lower() and "ms" in out, f"--describe: {out!r} {err!r}")

    check_one_line_error(["einsum", "ij,jk->ik", a, os.path.join(tmp, "missing.npy")],
                         "missing.npy")
    check_one_line_error(["einsum", "ij,jk->ik", a, a], "einsum")
    check_one_line_error(["einsum", "ij,jk->i)", a, b], "einsum")
    check_one_line_error(["einsum", "--device", "nosuch", "ij", a], "nosuch")
    check_one_line_error(["einsum", "--path", "fastest", "ij", a], "fastest")
    check_one_line_error(["einsum", "--dtype", "f16", "ij", a], "f16")
    check_one_line_error(["einsum", "ij->ji"], "needs at least one input file")
    check(run("einsum", "ij->ji")[0] == 2, "no input file: a usage error (exit 2)")
    rc, out, err = run("einsum", "--", "ij->ji", a)
    check(rc == 0 and "[[" in out, f"'--' ends the options: {rc} {err!r}")


def check_h5_output(tmp):
    """-o FILE.h5:/x adds to an existing HDF5 file (also one with a user block, whose signature
    is at byte 512) and never replaces a file that is no HDF5 file."""
    src = os.path.join(tmp, "h5src.npy")
    np.save(src, np.arange(6.).reshape(2, 3))
    text = os.path.join(tmp, "notes.h5")
    with open(text, "w") as f:
        f.write("keep me\n")
    check_one_line_error(["einsum", "ij->i", src, "-o", text + ":/x"], "not an HDF5 file")
    with open(text) as f:
        check(f.read() == "keep me\n", "a file that is no HDF5 file was replaced")
    try:
        import h5py
    except ImportError:
        return
    ub = os.path.join(tmp, "ub.h5")
    with h5py.File(ub, "w", userblock_size=512) as f:
        f["keep"] = np.arange(5.)
    rc, _, err = run("einsum", "ij->i", src, "-o", ub + ":/new")
    check(rc == 0, f"-o into a file with a user block: {rc} {err}")
    with h5py.File(ub, "r") as f:
        check(sorted(f) == ["keep", "new"] and list(f["new"][()]) == [3.0, 12.0],
              f"user-block file after -o: {sorted(f)}")
    rc, out, err = run("info", ub + ":/keep")
    check(rc == 0 and "(5,)" in out, f"info on a user-block file: {rc} {out!r} {err!r}")


with tempfile.TemporaryDirectory() as tmp:
    check_bench(tmp)
    check_einsum(tmp)
    check_h5_output(tmp)
if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)

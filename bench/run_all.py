#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""libtensor beside NumPy, both as a ratio to this machine's limits, measured in one run.

    /usr/bin/python3 bench/run_all.py [--quick] [--out bench/results]

Measures the machine's limits (GEMM GFLOP/s through numpy.dot -- NumPy's own BLAS -- for float32
and float64; memcpy, read-only sum and triad GB/s), then each case with libtensor (through the
Python binding) and with NumPy: permutations, reductions, broadcast add, TCCG contractions and
einsum chains. Each figure is the median of several runs. Writes latest.csv and latest.png
(ratio to limit per case, libtensor beside NumPy). OPENBLAS_CORETYPE is left as the
environment sets it. A case whose libtensor function is not available yet is reported as n/a.
"""
import argparse
import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
if "LIBTENSOR_PATH" not in os.environ and os.path.exists(os.path.join(ROOT, "build", "src")):
    os.environ["LIBTENSOR_PATH"] = os.path.join(ROOT, "build", "src", "libtensor.so")
import libtensor as lt  # noqa: E402
import bench_timing  # noqa: E402


def median_seconds(fn, reps, min_time=0.05):
    return bench_timing.median_seconds(fn, reps, min_time)


class Limits:
    """The machine's own figures, measured with NumPy (its BLAS for GEMM)."""

    def __init__(self, quick, reps):
        n = 512 if quick else 1536
        self.gemm = {}
        for dtype in (np.float32, np.float64):
            a = np.random.default_rng(0).uniform(size=(n, n)).astype(dtype)
            t = median_seconds(lambda: np.dot(a, a), reps)
            self.gemm[np.dtype(dtype).name] = 2 * n ** 3 / t / 1e9
        count = (4 if quick else 32) * 2 ** 20  # float64 elements (32 / 256 MiB)
        src = np.random.default_rng(1).uniform(size=count)
        dst = np.empty_like(src)
        self.memcpy = 2 * src.nbytes / median_seconds(lambda: np.copyto(dst, src), reps) / 1e9
        # A read-only pass: the fastest of BLAS dot (the array with itself, streamed once),
        # NumPy's sum and NumPy's max; all are vectorised, none is always the fastest.
        self.read = src.nbytes / min(median_seconds(lambda: np.dot(src, src), reps),
                                     median_seconds(lambda: np.add.reduce(src), reps),
                                     median_seconds(lambda: np.maximum.reduce(src), reps)) / 1e9
        self.triad = self._triad(src, dst, reps)

    @staticmethod
    def _triad(b, a, reps):
        """a = a + s*b in one pass (BLAS daxpy: 24 bytes per element), else NumPy's two."""
        try:
            from scipy.linalg.blas import daxpy

            def run():
                daxpy(b, a, a=1.5)
            passes = 3
        except ImportError:
            def run():
                np.multiply(b, 1.5, out=a)
                np.add(a, b, out=a)
            passes = 5
        return passes * b.nbytes / median_seconds(run, reps) / 1e9

    def rows(self):
        return [("limit", "gemm_f32", "GFLOP/s", self.gemm["float32"]),
                ("limit", "gemm_f64", "GFLOP/s", self.gemm["float64"]),
                ("limit", "memcpy", "GB/s", self.memcpy),
                ("limit", "read_sum", "GB/s", self.read),
                ("limit", "triad", "GB/s", self.triad)]


def bandwidth_case(name, arrays, bytes_moved, limit, ours, numpy):
    return dict(name=name, arrays=arrays, work=bytes_moved, unit="GB/s", limit=limit,
                ours=ours, numpy=numpy)


def compute_case(name, arrays, flops, limit, ours, numpy):
    return dict(name=name, arrays=arrays, work=flops, unit="GFLOP/s", limit=limit, ours=ours,
                numpy=numpy)


def tccg(expr, extents, rng):
    """A TCCG-style contraction C = A.B given as einsum with per-label extents."""
    ins, out = expr.split("->")
    arrays = [rng.uniform(-1, 1, [extents[c] for c in term]).astype(np.float32)
              for term in ins.split(",")]
    flops = 2 * np.prod([extents[c] for c in set(ins.replace(",", ""))], dtype=np.float64)
    return arrays, flops


def cases(quick, limits):
    rng = np.random.default_rng(42)
    s = 0.5 if quick else 1.0
    n3 = int(192 * s)
    cube = rng.uniform(size=(n3, n3, n3)).astype(np.float32)
    m = int(3072 * s)
    mat = rng.uniform(size=(m, m)).astype(np.float32)
    row = rng.uniform(size=(m,)).astype(np.float32)
    out = []
    for perm in ((2, 1, 0), (0, 2, 1), (1, 0, 2)):
        out.append(bandwidth_case(
            f"permute {''.join(map(str, perm))} {n3}^3", [cube], 2 * cube.nbytes, limits.memcpy,
            lambda a, p=perm: lt.permute(a, p),
            lambda a, p=perm: np.ascontiguousarray(a.transpose(p))))
    for axis in (0, 1, None):
        out.append(bandwidth_case(
            f"sum axis={axis} {m}x{m}", [mat], mat.nbytes, limits.read,
            lambda a, ax=axis: lt.sum(a, axis=ax), lambda a, ax=axis: np.sum(a, axis=ax)))
    out.append(bandwidth_case(
        f"max axis=1 {m}x{m}", [mat], mat.nbytes, limits.read,
        lambda a: lt.max(a, axis=1), lambda a: np.max(a, axis=1)))
    out.append(bandwidth_case(
        f"broadcast add {m}x{m} + {m}", [mat, row], 2 * mat.nbytes, limits.triad,
        lt.add, np.add))
    out.append(bandwidth_case(
        f"add transposed {m}x{m}", [mat, mat.T], 3 * mat.nbytes, limits.triad,
        lt.add, np.add))
    gemm = limits.gemm["float32"]
    big, small = (int(48 * s), int(24 * s))
    tccg_cases = [
        ("abc,bda->dc", dict(a=big * 4, b=big * 4, c=big * 2, d=big * 4)),
        ("abcd,dbea->ec", dict(a=small * 2, b=small * 2, c=small * 2, d=small * 2, e=small * 2)),
        ("abcd,aebf->dfce", dict(a=small * 2, b=small, c=small, d=small, e=small, f=small)),
        ("abcdef,dega->gfbc", dict(a=small // 2, b=small // 2, c=small // 2, d=small // 2,
                                   e=small // 2, f=small // 2, g=small)),
    ]
    for expr, extents in tccg_cases:
        arrays, flops = tccg(expr, extents, rng)
        out.append(compute_case(f"TCCG {expr}", arrays, flops, gemm,
                                lambda *x, e=expr: lt.einsum(e, *x),
                                lambda *x, e=expr: np.einsum(e, *x, optimize=True)))
    k = int(512 * s)
    chain = [rng.uniform(size=(k, k)).astype(np.float32) for _ in range(4)]
    out.append(compute_case("chain ij,jk,kl,lm->im", chain, 3 * 2 * float(k) ** 3, gemm,
                            lambda *x: lt.einsum("ij,jk,kl,lm->im", *x),
                            lambda *x: np.einsum("ij,jk,kl,lm->im", *x, optimize=True)))
    b = int(64 * s)
    batch = [rng.uniform(size=(b, k // 4, k // 4)).astype(np.float32) for _ in range(2)]
    out.append(compute_case("batched bij,bjk->bik", batch, 2 * b * float(k // 4) ** 3, gemm,
                            lambda *x: lt.einsum("bij,bjk->bik", *x),
                            lambda *x: np.einsum("bij,bjk->bik", *x, optimize=True)))
    vecs = [rng.uniform(size=(k,)).astype(np.float32), chain[0],
            rng.uniform(size=(k,)).astype(np.float32)]
    # Reads the matrix once: a bandwidth case.
    out.append(bandwidth_case("bilinear i,ij,j->", vecs, chain[0].nbytes, limits.read,
                              lambda *x: lt.einsum("i,ij,j->", *x),
                              lambda *x: np.einsum("i,ij,j->", *x, optimize=True)))
    return out


def measure(case, reps):
    """(libtensor figure, NumPy figure) in the case's unit, their samples taken alternately so
    that load from elsewhere hits both; NaN where libtensor cannot run it."""
    ours = lambda: case["ours"](*case["arrays"])  # noqa: E731
    theirs = lambda: case["numpy"](*case["arrays"])  # noqa: E731
    try:
        t_ours, t_numpy = bench_timing.median_pair_seconds(ours, theirs, reps, 0.05)
    except (NotImplementedError, lt.LibtensorError) as exc:
        print(f"  {case['name']}: libtensor n/a ({exc})", file=sys.stderr)
        return float("nan"), case["work"] / median_seconds(theirs, reps) / 1e9
    return case["work"] / t_ours / 1e9, case["work"] / t_numpy / 1e9


def write_chart(path, results, limits):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["name"] for r in results]
    ours = [r["ours"] / r["limit"] for r in results]
    theirs = [r["numpy"] / r["limit"] for r in results]
    y = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(names) + 1.6))
    ax.barh(y - 0.2, ours, 0.4, label="libtensor", color="#1f77b4")
    ax.barh(y + 0.2, theirs, 0.4, label="NumPy", color="#bbbbbb")
    for yi, v in zip(y, ours):
        if not np.isfinite(v):
            ax.text(0.01, yi - 0.2, "n/a", va="center", fontsize=7)
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("ratio to the machine's limit (memcpy/read/triad GB/s, or OpenBLAS float32 GEMM "
                  "GFLOP/s)", fontsize=8)
    ax.set_title(f"libtensor {lt.__version__} vs NumPy {np.__version__}  (GEMM f32 "
                 f"{limits.gemm['float32']:.0f} GFLOP/s, memcpy {limits.memcpy:.1f} GB/s)",
                 fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repetitions")
    parser.add_argument("--out", default=os.path.join(HERE, "results"),
                        help="folder for latest.csv and latest.png")
    args = parser.parse_args()
    reps = 3 if args.quick else 7
    os.makedirs(args.out, exist_ok=True)
    print(f"libtensor {lt.__version__} ({lt.library_path}), NumPy {np.__version__}, "
          f"{os.cpu_count()} cores, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}",
          file=sys.stderr)
    limits = Limits(args.quick, reps)
    for _, name, unit, value in limits.rows():
        print(f"limit {name:<10} {value:9.2f} {unit}", file=sys.stderr)
    results = []
    todo = cases(args.quick, limits)
    for i, case in enumerate(todo):
        print(f"[{i + 1}/{len(todo)}] {case['name']}", file=sys.stderr)
        case["ours"], case["numpy"] = measure(case, reps)
        results.append(case)
    csv_path = os.path.join(args.out, "latest.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "unit", "libtensor", "numpy", "limit", "libtensor_ratio",
                     "numpy_ratio"])
        for kind, name, unit, value in limits.rows():
            w.writerow([f"{kind}: {name}", unit, "", "", f"{value:.3f}", "", ""])
        for r in results:
            w.writerow([r["name"], r["unit"], f"{r['ours']:.3f}", f"{r['numpy']:.3f}",
                        f"{r['limit']:.3f}", f"{r['ours'] / r['limit']:.3f}",
                        f"{r['numpy'] / r['limit']:.3f}"])
    write_chart(os.path.join(args.out, "latest.png"), results, limits)
    print(f"{'case':<34} {'unit':>8} {'libtensor':>10} {'NumPy':>10} {'lt/limit':>9} "
          f"{'np/limit':>9}")
    for r in results:
        print(f"{r['name']:<34} {r['unit']:>8} {r['ours']:10.2f} {r['numpy']:10.2f} "
              f"{r['ours'] / r['limit']:9.2f} {r['numpy'] / r['limit']:9.2f}")
    print(f"wrote {csv_path} and latest.png", file=sys.stderr)


if __name__ == "__main__":
    main()

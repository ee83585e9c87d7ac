#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Contraction-path quality: libtensor's LT_PATH_AUTO against opt_einsum (greedy, auto-hq) and
cotengra (HyperOptimizer, 32 trials) on networks this script builds (random regular graphs,
2-D and 3-D lattices, matrix chains, MPS/MPO sandwiches, random-circuit-like networks).

    LIBTENSOR_PATH=build/src/libtensor.so /work/venv-bench/bin/python bench/bench_einsum_paths.py

Every path's cost is recomputed here by one rule (the sum over steps of the product of every
extent the step touches, as cotengra's contraction_cost), so peers and libtensor are judged
alike; "best" is the cheapest of all the searches in this run (the limit to compare with).
Planning times are wall seconds of one call. libtensor runs twice: with its default budget
(column libtensor) and with a tenth of the time cotengra just took (column lt@ctg/10, the
aim's "planning time <= 1/10 of cotengra's for the same quality"). Peers missing from the interpreter are skipped
with a note. libtensor is called through ctypes (lt_einsum_find_path), in this process.
"""
import ctypes
import math
import os
import random
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

HERE = os.path.dirname(os.path.abspath(__file__))


def load_libtensor():
    cands = [os.environ.get("LIBTENSOR_PATH", ""),
             os.path.join(HERE, "..", "build", "src", "libtensor.so")]
    for c in cands:
        if c and os.path.isfile(c):
            lib = ctypes.CDLL(c)
            lib.lt_einsum_find_path.restype = ctypes.c_int
            lib.lt_last_error.restype = ctypes.c_char_p
            lib.lt_plan_options_create.restype = ctypes.c_int
            lib.lt_plan_options_set_path_budget.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                                            ctypes.c_double]
            lib.lt_plan_options_destroy.argtypes = [ctypes.c_void_p]
            return lib
    sys.exit("libtensor.so not found: set LIBTENSOR_PATH")


LIB = load_libtensor()
try:
    import opt_einsum as oe
except ImportError:
    oe = None
    print("note: opt_einsum not installed; its columns are skipped")
try:
    import cotengra as ctg
except ImportError:
    ctg = None
    print("note: cotengra not installed; its column is skipped")
if ctg is not None:
    try:
        import kahypar  # noqa: F401  (cotengra's best partitioner when present)
        print("note: kahypar present: cotengra's HyperOptimizer samples its partitions")
    except ImportError:
        print("note: kahypar absent: cotengra's HyperOptimizer uses greedy and its 'labels' "
              "partitioner (as installed from PyPI without kahypar)")


# ---- networks: (name, inputs as lists of int labels, output labels, extent per label) ----

def random_regular(n, d, rng):
    """Configuration model, retried until simple."""
    for _ in range(1000):
        stubs = [v for v in range(n) for _ in range(d)]
        rng.shuffle(stubs)
        edges = set()
        ok = True
        for i in range(0, len(stubs), 2):
            a, b = stubs[i], stubs[i + 1]
            if a == b or (min(a, b), max(a, b)) in edges:
                ok = False
                break
            edges.add((min(a, b), max(a, b)))
        if ok:
            return sorted(edges)
    raise RuntimeError("no simple regular graph")


def graph_network(n, edges, rng, lo=2, hi=4):
    inputs = [[] for _ in range(n)]
    size = {}
    for lab, (a, b) in enumerate(edges):
        inputs[a].append(lab)
        inputs[b].append(lab)
        size[lab] = rng.randint(lo, hi)
    return inputs, [], size


def lattice(dims, bond):
    idx = {}
    coords = [()]
    for d in dims:
        coords = [c + (i,) for c in coords for i in range(d)]
    for k, c in enumerate(coords):
        idx[c] = k
    edges = []
    for c in coords:
        for ax in range(len(dims)):
            nb = list(c)
            nb[ax] += 1
            if nb[ax] < dims[ax]:
                edges.append((idx[c], idx[tuple(nb)]))
    inputs = [[] for _ in coords]
    size = {}
    for lab, (a, b) in enumerate(edges):
        inputs[a].append(lab)
        inputs[b].append(lab)
        size[lab] = bond
    return inputs, [], size


def matrix_chain(n, rng, lo=10, hi=100):
    dims = [rng.randint(lo, hi) for _ in range(n + 1)]
    inputs = [[i, i + 1] for i in range(n)]
    return inputs, [0, n], {i: dims[i] for i in range(n + 1)}


def mps_sandwich(L, D, phys=2, W=4):
    """<psi|O|psi>: bra and ket MPS of bond D, an MPO of bond W between them."""
    lab = iter(range(10 ** 6))
    ket_b = [next(lab) for _ in range(L - 1)]
    bra_b = [next(lab) for _ in range(L - 1)]
    mpo_b = [next(lab) for _ in range(L - 1)]
    pk = [next(lab) for _ in range(L)]
    pb = [next(lab) for _ in range(L)]
    size = {}
    inputs = []
    for bonds, dim in ((ket_b, D), (bra_b, D), (mpo_b, W)):
        for b in bonds:
            size[b] = dim
    for p in pk + pb:
        size[p] = phys
    for i in range(L):
        def chain(b):
            return ([b[i - 1]] if i > 0 else []) + ([b[i]] if i < L - 1 else [])
        inputs.append(chain(ket_b) + [pk[i]])
        inputs.append(chain(mpo_b) + [pk[i], pb[i]])
        inputs.append(chain(bra_b) + [pb[i]])
    return inputs, [], size


def circuit(qubits, depth, rng):
    """Amplitude of a random circuit: |0> vectors, 1-qubit gates, 2-qubit gates on random
    neighbouring pairs, <x| vectors."""
    lab = iter(range(10 ** 6))
    wire = [next(lab) for _ in range(qubits)]
    inputs = [[w] for w in wire]
    for _ in range(depth):
        for q in range(qubits):
            new = next(lab)
            inputs.append([wire[q], new])
            wire[q] = new
        start = rng.randint(0, 1)
        for q in range(start, qubits - 1, 2):
            if rng.random() < 0.8:
                a, b = next(lab), next(lab)
                inputs.append([wire[q], wire[q + 1], a, b])
                wire[q], wire[q + 1] = a, b
    inputs += [[w] for w in wire]
    size = {l: 2 for t in inputs for l in t}
    return inputs, [], size


def networks():
    rng = random.Random(1234)
    out = []
    for n, d in ((10, 3), (30, 3), (50, 3), (100, 3), (200, 3), (30, 4), (40, 4), (60, 4)):
        out.append((f"random {d}-regular, {n} tensors", *graph_network(n, random_regular(n, d, rng), rng)))
    out.append(("2-D lattice 6x6, bond 3", *lattice((6, 6), 3)))
    out.append(("2-D lattice 10x10, bond 2", *lattice((10, 10), 2)))
    out.append(("3-D lattice 3x3x3, bond 2", *lattice((3, 3, 3), 2)))
    out.append(("3-D lattice 4x4x4, bond 2", *lattice((4, 4, 4), 2)))
    out.append(("chain of 20 matrices", *matrix_chain(20, rng)))
    out.append(("chain of 100 matrices", *matrix_chain(100, rng)))
    out.append(("MPS/MPO sandwich L=20 D=16", *mps_sandwich(20, 16)))
    out.append(("MPS/MPO sandwich L=50 D=32", *mps_sandwich(50, 32)))
    out.append(("circuit 12 qubits depth 10", *circuit(12, 10, rng)))
    out.append(("circuit 20 qubits depth 12", *circuit(20, 12, rng)))
    # small networks first, so that a run cut short still compares many
    out.sort(key=lambda net: len(net[1]))
    only = os.environ.get("LT_BENCH_MAX_TENSORS")
    return [net for net in out if not only or len(net[1]) <= int(only)]


# ---- one cost rule for every path ----

def path_cost(inputs, output, size, path):
    """Sum over steps of the product of every extent the step touches (path: NumPy pairs)."""
    count = {}
    for t in inputs:
        for l in set(t):
            count[l] = count.get(l, 0) + 1
    for l in output:
        count[l] = count.get(l, 0) + 1
    cur = [(frozenset(t), {l: 1 for l in set(t)}) for t in inputs]
    total = 0.0
    for pair in path:
        i, j = sorted(pair)
        (la, ca), (lb, cb) = cur[i], cur[j]
        del cur[j]
        del cur[i]
        touched = la | lb
        total += math.prod(size[l] for l in touched)
        cc = {}
        for l in touched:
            c = ca.get(l, 0) + cb.get(l, 0)
            if c < count[l]:
                cc[l] = c
        cur.append((frozenset(cc), cc))
    return total


# ---- the searches ----

def lt_path(inputs, output, size, seconds=None):
    """libtensor's AUTO path: the default budget, or `seconds` of planning (trials 1000: the
    clock decides)."""
    n = len(inputs)
    opts = ctypes.c_void_p()
    if seconds is not None:
        LIB.lt_plan_options_create(ctypes.byref(opts))
        LIB.lt_plan_options_set_path_budget(opts, 1000, seconds)
    ranks = (ctypes.c_int * n)(*[len(t) for t in inputs])
    shape_arrs = [(ctypes.c_int64 * max(1, len(t)))(*[size[l] for l in t]) for t in inputs]
    mode_arrs = [(ctypes.c_int32 * max(1, len(t)))(*t) for t in inputs]
    shapes = (ctypes.POINTER(ctypes.c_int64) * n)(
        *[ctypes.cast(a, ctypes.POINTER(ctypes.c_int64)) for a in shape_arrs])
    modes = (ctypes.POINTER(ctypes.c_int32) * n)(
        *[ctypes.cast(a, ctypes.POINTER(ctypes.c_int32)) for a in mode_arrs])
    out = (ctypes.c_int32 * max(1, len(output)))(*output)
    pairs = (ctypes.c_int64 * (2 * max(1, n - 1)))()
    cost = ctypes.c_double()
    t0 = time.perf_counter()
    st = LIB.lt_einsum_find_path(n, ranks, shapes, modes, len(output), out, opts, pairs,
                                 ctypes.byref(cost), None)
    dt = time.perf_counter() - t0
    if opts:
        LIB.lt_plan_options_destroy(opts)
    if st != 0:
        raise RuntimeError(LIB.lt_last_error().decode())
    path = [(pairs[2 * s], pairs[2 * s + 1]) for s in range(n - 1)]
    return path, dt, cost.value


def oe_path(inputs, output, size, how):
    syms = {}
    def sym(l):
        if l not in syms:
            syms[l] = oe.get_symbol(len(syms))
        return syms[l]
    eq = ",".join("".join(sym(l) for l in t) for t in inputs) + "->" + "".join(sym(l) for l in output)
    shapes = [tuple(size[l] for l in t) for t in inputs]
    t0 = time.perf_counter()
    path, _ = oe.contract_path(eq, *shapes, shapes=True, optimize=how)
    return path, time.perf_counter() - t0


def ctg_path(inputs, output, size):
    opt = ctg.HyperOptimizer(max_repeats=32, progbar=False, parallel=False)
    t0 = time.perf_counter()
    tree = opt.search([tuple(t) for t in inputs], tuple(output), dict(size))
    path = tree.get_path()
    return path, time.perf_counter() - t0


def main():
    rows = []
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'network':34} {'n':>4} | log10 cost: {'libtensor':>9} {'oe-greedy':>9} {'oe-hq':>7} "
          f"{'cotengra':>8} {'lt@ctg/10':>9} {'best':>6} | plan s: {'lt':>7} {'oe-greedy':>9} "
          f"{'oe-hq':>7} {'ctg':>7} {'lt@ctg/10':>9}")
    for name, inputs, output, size in networks():
        res = {}
        path, dt, reported = lt_path(inputs, output, size)
        c = path_cost(inputs, output, size, path)
        assert abs(c - reported) <= 1e-9 * c, (name, c, reported)
        res["lt"] = (c, dt)
        time.sleep(0.2)
        if oe is not None:
            for how in ("greedy", "auto-hq"):
                p, dt = oe_path(inputs, output, size, how)
                res[how] = (path_cost(inputs, output, size, p), dt)
                time.sleep(0.2)
        if ctg is not None:
            p, dt = ctg_path(inputs, output, size)
            res["ctg"] = (path_cost(inputs, output, size, p), dt)
            time.sleep(0.2)
            # The aim's other reading: quality at a tenth of cotengra's planning time, measured
            # now (both slowed alike by the machine's load).
            p, dt10, _ = lt_path(inputs, output, size, seconds=dt / 10)
            res["lt10"] = (path_cost(inputs, output, size, p), dt10)
            time.sleep(0.2)
        best = min(v[0] for k, v in res.items() if k != "lt10")
        lg = lambda k: f"{math.log10(res[k][0]):.2f}" if k in res else "-"
        tm = lambda k: f"{res[k][1]:.4f}" if k in res else "-"
        print(f"{name:34} {len(inputs):>4} | {'':11} {lg('lt'):>9} {lg('greedy'):>9} {lg('auto-hq'):>7} "
              f"{lg('ctg'):>8} {lg('lt10'):>9} {math.log10(best):6.2f} | {'':7} {tm('lt'):>7} "
              f"{tm('greedy'):>9} {tm('auto-hq'):>7} {tm('ctg'):>7} {tm('lt10'):>9}", flush=True)
        rows.append(res)
        summary(rows)
    print(f"load average at the end {os.getloadavg()[0]:.1f} (timings inflate with it, alike for all)")


def summary(rows):
    def geo(f):
        v = [f(r) for r in rows]
        v = [x for x in v if x is not None]
        return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")

    print(f"  after {len(rows)} networks (load average {os.getloadavg()[0]:.1f}):")
    print(f"geomean cost libtensor / best of run: "
          f"{geo(lambda r: r['lt'][0] / min(x[0] for k, x in r.items() if k != 'lt10')):.3f}")
    if oe is not None:
        print(f"geomean cost libtensor / opt_einsum greedy: {geo(lambda r: r['lt'][0] / r['greedy'][0]):.3f}"
              f"  (worst {max(r['lt'][0] / r['greedy'][0] for r in rows):.3f})")
        print(f"geomean cost libtensor / opt_einsum auto-hq: {geo(lambda r: r['lt'][0] / r['auto-hq'][0]):.3f}")
    if ctg is not None:
        print(f"geomean cost libtensor / cotengra(32): {geo(lambda r: r['lt'][0] / r['ctg'][0]):.3f}"
              f"  (worst {max(r['lt'][0] / r['ctg'][0] for r in rows):.3f})")
        print(f"geomean planning time libtensor / cotengra(32): {geo(lambda r: r['lt'][1] / r['ctg'][1]):.4f}",
              flush=True)
        print(f"geomean cost libtensor at 1/10 of cotengra's time / cotengra(32): "
              f"{geo(lambda r: r['lt10'][0] / r['ctg'][0]):.3f}  (worst "
              f"{max(r['lt10'][0] / r['ctg'][0] for r in rows):.3f}; planning time ratio "
              f"{geo(lambda r: r['lt10'][1] / r['ctg'][1]):.4f})", flush=True)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""The CPU backend's measurements kept across processes (src/backend/cpu/cpu_wisdom.c): plans
the same in every process that shares the file, the file's figures and engine choices used
(not re-measured), a damaged file ignored line by line, LT_WISDOM=off writing nothing. Each
case runs child processes, since a process reads the file once."""
import glob
import os
import subprocess
import sys

import pytest

# Contractions whose plans depend on the measured figures (TCCG shapes, scaled down): batched
# or not, packed or not, which GEMM engine. The child also checks each result against NumPy.
CHILD = r"""
import sys
import numpy as np
import libtensor as lt
cases = [("dbea,ec->abcd", (20, 20, 9, 20, 20)), ("efbad,cf->abcde", (9, 8, 7, 8, 9, 8)),
         ("ec,abed->abcd", (17, 17, 17, 17, 17)), ("aecf,bfde->abcd", (8, 9, 10, 11, 12, 13)),
         ("ij,jk->ik", (200, 150, 100)), ("bij,bjk->bik", (30, 40, 20, 50))]
rng = np.random.default_rng(0)
for expr, sizes in cases:
    ins, out = expr.split("->")
    labels = sorted(set(ins.replace(",", "")))
    ext = dict(zip(labels, sizes))
    ops = [rng.standard_normal([ext[c] for c in t]).astype(np.float32) for t in ins.split(",")]
    plan = lt.plan_einsum(expr, *[lt.from_numpy(o) for o in ops])
    got = plan(*[lt.from_numpy(o) for o in ops]).numpy()
    want = np.einsum(expr, *[o.astype(np.float64) for o in ops])
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4), expr
    print(expr, [l.strip() for l in plan.describe().splitlines() if "step" in l])
"""


def run_child(env_extra):
    env = dict(os.environ)
    env.pop("LT_WISDOM", None)
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def wisdom_files(d):
    return sorted(glob.glob(os.path.join(str(d), "cpu-*.txt")))


def test_plans_agree_across_processes(tmp_path):
    env = {"LT_WISDOM_DIR": str(tmp_path)}
    first = run_child(env)
    files = wisdom_files(tmp_path)
    assert len(files) == 1
    text = open(files[0]).read()
    assert text.startswith("# measured by libtensor")
    assert sum(line.startswith("caps ") for line in text.splitlines()) == 1
    assert any(line.startswith("engine ") for line in text.splitlines())
    for _ in range(2):
        assert run_child(env) == first
    assert open(files[0]).read() == text  # nothing measured again, nothing appended


def edit_file(path, engine=None, copy_scale=None):
    """Rewrites the file: every recorded engine choice set to `engine`, the copy time scaled."""
    edited = []
    for line in open(path).read().splitlines():
        f = line.split()
        if f and f[0] == "engine" and engine is not None:
            f[2] = engine
        elif f and f[0] == "caps" and copy_scale is not None:
            f[5] = repr(float(f[5]) * copy_scale)  # seconds per copied element
        edited.append(" ".join(f))
    open(path, "w").write("\n".join(edited) + "\n")


def test_file_engines_are_used(tmp_path):
    """Every recorded choice made OpenBLAS (the second choice of every class): a later
    process plans with it, not with a new measurement, and again the same every time."""
    env = {"LT_WISDOM_DIR": str(tmp_path)}
    before = run_child(env)
    (path,) = wisdom_files(tmp_path)
    if not any(l.startswith("engine ") and not l.endswith(" 2") for l in open(path)
               .read().splitlines()):
        pytest.skip("OpenBLAS was measured fastest on every class here: nothing to change")
    edit_file(path, engine="2")
    after = run_child(env)
    assert after != before
    assert after == run_child(env)


def test_file_costs_are_used(tmp_path):
    """A copy priced a million times dearer in the file: a later process plans around copies."""
    env = {"LT_WISDOM_DIR": str(tmp_path)}
    before = run_child(env)
    (path,) = wisdom_files(tmp_path)
    edit_file(path, copy_scale=1e6)
    after = run_child(env)
    assert after != before
    assert after == run_child(env)


@pytest.mark.parametrize("junk", [
    "caps nan 1 1 1 1 1", "caps -5 1 1 1 1 1", "caps 1e300 1 1 1 1 1", "caps 1 2 3",
    "engine -1 2", "engine 5 99", "engine 5", "engine 5 2 trailing", "dot x y", "\x00\xff" * 40,
    "caps " + "9" * 300, "engine 999999999999999999999 2"])
def test_damaged_file_is_ignored(tmp_path, junk):
    env = {"LT_WISDOM_DIR": str(tmp_path)}
    clean_dir = tmp_path / "clean"
    clean = run_child({"LT_WISDOM_DIR": str(clean_dir)})
    run_child(env)
    (path,) = wisdom_files(tmp_path)
    text = open(path, "rb").read()
    # junk first, so that it would win over the real lines if it were taken
    head, _, rest = text.partition(b"\n")
    open(path, "wb").write(head + b"\n" + junk.encode("latin-1") + b"\n" + rest)
    out = run_child(env)
    assert out.count("\n") == clean.count("\n")  # every case ran and matched NumPy


def test_off_writes_nothing(tmp_path):
    run_child({"LT_WISDOM_DIR": str(tmp_path), "LT_WISDOM": "off"})
    assert wisdom_files(tmp_path) == []


def test_unwritable_directory_is_harmless(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    run_child({"LT_WISDOM_DIR": str(blocker / "sub")})

# SPDX-License-Identifier: MIT
"""`pip install .` into a fresh virtual environment: the wheel bundles libtensor.so and the
installed binding loads that bundled library first (not the build tree's, not LIBTENSOR_PATH).

Offline by design: the venv sees Debian's python3-setuptools/wheel/numpy (system site
packages) and pip runs with --no-build-isolation --no-index, bundling the build tree's library
(LT_PREBUILT_LIB) so the test takes seconds; LT_TEST_PIP_BUILD=1 lets pip run CMake itself
instead (minutes). Skipped, with the reason, where venv, pip or setuptools are missing."""
import os
import shutil
import subprocess
import sys

import pytest

import libtensor as lt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def test_pip_install_into_fresh_venv(tmp_path):
    venv = tmp_path / "venv"
    # Without pip of its own: Debian's pip, setuptools and wheel (system site packages) serve,
    # and so does NumPy, so nothing is fetched.
    made = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                 str(venv)])
    if made.returncode != 0:
        pytest.skip(f"cannot create a venv (python3-venv missing?): {made.stderr.strip()[-200:]}")
    py = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("LIBTENSOR_PATH", "PYTHONPATH")}
    # Debian's setuptools patches distutils unless told to keep the standard library's.
    env["SETUPTOOLS_USE_DISTUTILS"] = "stdlib"
    if _run([py, "-c", "import setuptools, wheel, pip"], env=env).returncode != 0:
        pytest.skip("pip, setuptools or wheel missing (python3-pip, python3-setuptools, "
                    "python3-wheel)")
    # A copy of what the package build reads: the source tree stays untouched.
    src = tmp_path / "src"
    full = os.environ.get("LT_TEST_PIP_BUILD") == "1"
    ignore = shutil.ignore_patterns("build*", ".git", "__pycache__", "*.egg-info", "out")
    if full:
        shutil.copytree(ROOT, src, ignore=ignore)
    else:
        for d in ("bindings/python", "include"):
            shutil.copytree(os.path.join(ROOT, d), src / d, ignore=ignore)
        for f in ("pyproject.toml", "setup.py", "LICENSE"):
            shutil.copy(os.path.join(ROOT, f), src / f)
    if not full:
        env["LT_PREBUILT_LIB"] = os.path.abspath(lt.library_path)
    got = _run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                "-q", str(src)], env=env, cwd=tmp_path)
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    check = ("import libtensor as lt, numpy as np, sys\n"
             "a = np.arange(6.0).reshape(2, 3)\n"
             "assert (lt.add(a, a) == 2 * a).all()\n"
             "assert (np.from_dlpack(lt.from_dlpack(a)) == a).all()\n"
             "print(lt.library_path, lt.__file__, lt.__version__, lt._ext.active())\n")
    ran = _run([py, "-c", check], env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    lib, pkg, version, fast = ran.stdout.split()
    # Issue 20 A: the C extension is bundled when this build has one (the ctypes path else).
    assert fast == str(lt._ext.active()), ran.stdout
    site = str(venv)
    assert lib.startswith(site) and pkg.startswith(site), ran.stdout  # the bundled copy
    assert os.path.dirname(lib) == os.path.dirname(pkg)
    assert version == lt.__version__

# SPDX-License-Identifier: MIT
"""Builds libtensor.so with CMake and puts it inside the wheel's libtensor package.

Environment knobs:
  LT_PREBUILT_LIB=/path/libtensor.so  bundle this library instead of building one (CI reuses
                                      the build tree's library; the packaging is what it tests)
  LT_CMAKE_ARGS="-DLT_WITH_OPENBLAS=OFF ..."  extra CMake arguments
"""
import importlib.machinery
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def _version():
    text = open(os.path.join(ROOT, "include", "tensor", "base.h")).read()
    parts = [re.search(rf"#define LT_VERSION_{k} (\d+)", text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class BuildWithLibrary(build_py):
    """build_py, plus libtensor.so (built by CMake, or LT_PREBUILT_LIB) in the package."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "libtensor", "libtensor.so")
        prebuilt = os.environ.get("LT_PREBUILT_LIB")
        if prebuilt:
            shutil.copyfile(os.path.realpath(prebuilt), target)
            # The C extension built beside it (build/python/libtensor), when there is one.
            self._bundle_extension(os.path.join(os.path.dirname(os.path.realpath(prebuilt)),
                                                "..", "python", "libtensor"))
            return
        build = os.path.join(os.path.abspath(self.get_finalized_command("build").build_temp),
                             "cmake")
        os.makedirs(build, exist_ok=True)
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                               "-DLT_BUILD_TESTS=OFF", "-DLT_BUILD_TOOLS=OFF",
                               "-DLT_BUILD_BENCH=OFF"]
                              + shlex.split(os.environ.get("LT_CMAKE_ARGS", "")))
        subprocess.check_call(["cmake", "--build", build, "--target", "tensor", "-j",
                               str(os.cpu_count() or 2)])
        shutil.copyfile(os.path.realpath(os.path.join(build, "src", "libtensor.so")), target)
        # The optional C extension (issue 20 A), built for this Python when its headers are
        # there; without it the package runs on ctypes alone.
        if subprocess.call(["cmake", "-S", ROOT, "-B", build,
                            f"-DPython3_EXECUTABLE={sys.executable}"]) == 0 and \
                subprocess.call(["cmake", "--build", build, "--target", "lt_python_fast"]) == 0:
            self._bundle_extension(os.path.join(build, "python", "libtensor"))

    def _bundle_extension(self, folder):
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if name.startswith("_fast.") and any(name.endswith(s) for s in suffixes):
                shutil.copyfile(os.path.join(folder, name),
                                os.path.join(self.build_lib, "libtensor", name))


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: platform-specific, not pure Python."""

    def has_ext_modules(self):
        return True


# setuptools' own scratch space stays out of the CMake build folder (build/).
setup(version=_version(), cmdclass={"build_py": BuildWithLibrary},
      distclass=BinaryDistribution, options={"build": {"build_base": "build-python"}})

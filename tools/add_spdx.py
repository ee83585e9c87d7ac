#!/usr/bin/python3
"""Adds an SPDX-License-Identifier line to every source file of the tree that lacks one
(idempotent: run it again after merging branches; --check lists the files without changing any
and exits 1 if there are some).

    /usr/bin/python3 tools/add_spdx.py [--check]

C, headers and OpenCL kernels get `/* SPDX-License-Identifier: MIT */` as their first line (the
Doxygen filter of docs/Doxyfile.in turns that line into the file's documentation marker);
Python, shell and CMake files get `# SPDX-License-Identifier: MIT` after any #! line. Only files
git tracks are touched; generated and third-party data (tests/data, bench/results) are not.
"""
import subprocess
import sys

TAG = "SPDX-License-Identifier: MIT"
C_LIKE = (".c", ".h", ".cl")
HASH = (".py", ".sh", ".cmake", ".in")
SKIP_PREFIXES = ("tests/data/", "bench/results/", "tests/fuzz/corpus")


def style(path):
    name = path.rsplit("/", 1)[-1]
    if path.endswith(C_LIKE):
        return "c"
    if name == "CMakeLists.txt" or path.endswith(HASH) and not path.endswith(".pc.in"):
        return "hash"
    return None


def tagged(path, kind):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if TAG in text[:400]:
        return None
    if kind == "c":
        return f"/* {TAG} */\n" + text
    lines = text.split("\n")
    at = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(at, f"# {TAG}")
    return "\n".join(lines)


def main():
    check = "--check" in sys.argv[1:]
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split()
    todo = []
    for path in files:
        kind = style(path)
        if kind is None or path.startswith(SKIP_PREFIXES):
            continue
        new = tagged(path, kind)
        if new is None:
            continue
        todo.append(path)
        if not check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    for path in todo:
        print(("missing: " if check else "tagged: ") + path)
    return 1 if check and todo else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""The binding against the C headers: every enum value, #define and ctypes signature it declares
is checked against include/tensor.h and include/tensor/*.h (parsed here, no compiler), every
exported function (tests/abi_symbols.txt) is declared or deliberately left out, and the
package's modules import one another as a DAG."""
import ast
import ctypes
import pathlib
import re

import pytest

import libtensor as lt
from libtensor import _lib, enums, errors

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADERS = [ROOT / "include" / "tensor.h"] + sorted((ROOT / "include" / "tensor").glob("*.h"))
# dist.h is libtensor_mpi's (issue 24): not libtensor.so's ABI; tests/abi_symbols_mpi.txt pins it.
HEADERS = [h for h in HEADERS if h.name != "dist.h"]
PACKAGE = ROOT / "bindings" / "python" / "libtensor"


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _read_headers(paths=HEADERS):
    return "\n".join(_strip_comments(p.read_text()) for p in paths)


class Header:
    """What the binding mirrors, parsed from the header text."""

    def __init__(self, text):
        table = re.search(r"#define\s+LT_STATUS_TABLE\(X\)(.*?)\n\s*\n", text, re.S)
        assert table, "LT_STATUS_TABLE not found"
        self.status = [(n, int(v), m) for n, v, m in
                       re.findall(r'X\(\s*(\w+)\s*,\s*(-?\d+)\s*,\s*"([^"]*)"\s*\)',
                                  table.group(1))]
        self.enums = {}
        for body, name in re.findall(r"typedef\s+enum\s+\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
            if name == "lt_status":  # its body is the X-macro expansion, read above
                self.enums[name] = {n: v for n, v, _ in self.status}
                continue
            entries = {}
            for item in filter(None, (i.strip() for i in body.split(","))):
                key, value = (s.strip() for s in item.split("="))
                entries[key] = int(value, 0)
            self.enums[name] = entries
        self.defines = dict(re.findall(r"#define\s+(LT_\w+)[ \t]+([^\n]+)", text))
        self.opaque = set(re.findall(r"typedef\s+struct\s+\w+\s+(\w+)\s*;", text)) | {"void"}
        self.fn_types = {name: (ret, _split_params(params)) for ret, name, params in
                         re.findall(r"typedef\s+([\w\s\*]+?)\s*\(\s*\*\s*(\w+)\s*\)\s*\(([^)]*)\)"
                                    r"\s*;", text)}
        self.functions = {name: (ret, _split_params(params)) for ret, name, params in
                          re.findall(r"LT_API\s+([\w\s\*]+?)\s*\b(lt_\w+)\s*\(([^)]*)\)\s*;",
                                     text)}

    # ---- C types as comparable descriptions
    _INTS = {"int": ctypes.c_int, "int64_t": ctypes.c_int64, "int32_t": ctypes.c_int32,
             "size_t": ctypes.c_size_t, "uint16_t": ctypes.c_uint16, "uint32_t": ctypes.c_uint32,
             "uint64_t": ctypes.c_uint64}

    def describe(self, ctype):
        """("int", bytes, signed) / ("bool",) / ("double",) / ("float",) / ("void",) /
        ("char",) / ("ptr", pointee) with pointee "opaque" for void and struct handles /
        ("fn", ret, args) for a function-pointer typedef."""
        tokens = [t for t in re.findall(r"\w+|\*", ctype) if t != "const"]
        depth = tokens.count("*")
        words = [t for t in tokens if t != "*"]
        assert len(words) == 1, f"cannot read C type {ctype!r}"
        base = words[0]
        if depth:
            inner = "opaque" if depth == 1 and base in self.opaque else \
                self.describe(" ".join([base] + ["*"] * (depth - 1)))
            return ("ptr", inner)
        if base in self._INTS:
            t = self._INTS[base]
            return ("int", ctypes.sizeof(t), t(-1).value < 0)
        if base in self.enums:  # C enums of these values are ints
            return ("int", ctypes.sizeof(ctypes.c_int), True)
        if base in self.fn_types:
            ret, args = self.fn_types[base]
            return ("fn", self.describe(ret), tuple(self.describe(a) for a in args))
        if base in ("bool", "double", "float", "void", "char"):
            return (base,)
        raise AssertionError(f"unknown C type {ctype!r}")


def _split_params(params):
    """Parameter types without their names; [] for (void)."""
    params = params.strip()
    if params in ("", "void"):
        return []
    out = []
    for p in params.split(","):
        tokens = re.findall(r"\w+|\*", p)
        if len([t for t in tokens if t not in ("*", "const")]) > 1:
            tokens = tokens[:-1]  # drop the parameter name
        out.append(" ".join(tokens))
    return out


def describe_ctypes(t):
    """The description (see Header.describe) of a ctypes type used in _lib._SIGNATURES."""
    if t is None:
        return ("void",)
    if t is ctypes.c_char_p:
        return ("ptr", ("char",))
    if t is ctypes.c_void_p:
        return ("ptr", "opaque")
    if t is ctypes.c_bool:
        return ("bool",)
    if t is ctypes.c_double:
        return ("double",)
    if t is ctypes.c_float:
        return ("float",)
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return ("ptr", describe_ctypes(t._type_))
    if isinstance(t, type) and issubclass(t, ctypes._CFuncPtr):
        return ("fn", describe_ctypes(t._restype_), tuple(describe_ctypes(a)
                                                          for a in t._argtypes_))
    if isinstance(t, type) and issubclass(t, ctypes._SimpleCData) and t._type_ in "bBhHiIlLqQ":
        return ("int", ctypes.sizeof(t), t(-1).value < 0)
    raise AssertionError(f"unknown ctypes type {t!r}")


def _kind(desc):
    return {"ptr": "pointer", "int": "integer", "bool": "integer", "fn": "pointer"}.get(
        desc[0], desc[0])


def signature_problems(header, signatures):
    """Every difference between `signatures` (_lib._SIGNATURES) and the header."""
    problems = []
    for name, (res, args) in sorted(signatures.items()):
        if name not in header.functions:
            problems.append(f"{name}: declared in the binding, absent from the headers")
            continue
        c_ret, c_args = header.functions[name]
        want = [header.describe(a) for a in c_args]
        got = [describe_ctypes(a) for a in args]
        if len(want) != len(got):
            problems.append(f"{name}: {len(got)} argtypes, the header has {len(want)} "
                            f"parameters ({', '.join(c_args)})")
        for i, (w, g) in enumerate(zip(want, got)):
            if w != g:
                problems.append(f"{name}: argument {i + 1} is {_kind(g)} {g} in the binding, "
                                f"{_kind(w)} {w} ({c_args[i]}) in the header")
        w, g = header.describe(c_ret), describe_ctypes(res)
        if w != g:
            problems.append(f"{name}: returns {_kind(g)} {g} in the binding, {_kind(w)} {w} "
                            f"({c_ret}) in the header")
    return problems


# Statuses the binding may know before the C header does (while a change lands in two steps).
# Tolerated only while absent from the header: once the header has one, its value there must
# be the binding's. Empty whenever binding and header agree, as now.
AHEAD_OF_HEADER = {"lt_status": {}}


def enum_problems(header, tables):
    """Every difference between the binding's enum tables (enums.ENUMS) and the header."""
    problems = []
    for name in sorted(set(header.enums) - set(tables)):
        problems.append(f"enum {name} of the header is not mirrored in enums.ENUMS")
    for name, table in sorted(tables.items()):
        c = header.enums.get(name)
        if c is None:
            problems.append(f"enum {name} is not in the headers")
            continue
        for key in sorted(set(c) | set(table)):
            if key not in c and AHEAD_OF_HEADER.get(name, {}).get(key) == table[key]:
                continue
            if c.get(key) != table.get(key):
                problems.append(f"{name}.{key}: {table.get(key)} in the binding, {c.get(key)} "
                                "in the header")
    return problems


@pytest.fixture(scope="module")
def header():
    return Header(_read_headers())


def test_header_parsed(header):
    # The parser sees the header as it is: a parser that reads nothing checks nothing.
    assert len(header.status) >= 21 and header.status[0] == ("LT_OK", 0, "success")
    assert set(header.enums) >= {"lt_status", "lt_dtype", "lt_device_prop", "lt_unary_op",
                                 "lt_binary_op", "lt_reduce_op", "lt_path_algo"}
    assert len(header.functions) >= 90
    assert header.functions["lt_tensor_full"][1] == [
        "lt_context *", "lt_dtype", "int", "const int64_t *", "double", "lt_tensor * *"]
    assert header.describe("lt_release_fn")[0] == "fn"


def test_status_table_matches_header(header):
    ahead = AHEAD_OF_HEADER["lt_status"]
    known = {n for n, _, _ in header.status}
    assert [e for e in enums.STATUS_TABLE
            if e[0] in known or ahead.get(e[0]) != e[1]] == header.status


def test_enum_values_match_header(header):
    assert enum_problems(header, enums.ENUMS) == []


def test_defines_match_header(header):
    special = {"INT64_MIN": -2 ** 63}
    for name, value in enums.DEFINES.items():
        text = header.defines[name].strip()
        c = special[text] if text in special else int(text.strip("()"), 0)
        assert value == c, f"{name}: {value} in the binding, {text} in the header"


def test_every_status_has_its_error_class(header):
    for name, value, _ in enums.STATUS_TABLE:  # header.status, and any AHEAD_OF_HEADER
        if value == 0:
            continue
        cls = lt.error_class(value)
        assert cls is not lt.LibtensorError, f"{name} has no exception class"
        assert cls.status == value and cls.status_name == name
        assert getattr(lt, cls.__name__) is cls
        # The loaded library names the status alike (once the header has it).
        if name not in AHEAD_OF_HEADER["lt_status"] or \
                any(n == name for n, _, _ in header.status):
            assert _lib.fn("lt_status_string")(value).decode() == name


def test_signatures_match_header(header):
    assert signature_problems(header, _lib._SIGNATURES) == []
    # The release callback type is the header's lt_release_fn.
    assert describe_ctypes(_lib.release_fn) == header.describe("lt_release_fn")


def test_every_exported_function_declared_or_listed(header):
    exported = set((ROOT / "tests" / "abi_symbols.txt").read_text().split())
    declared, unbound = set(_lib._SIGNATURES), set(_lib.UNBOUND)
    assert not declared & unbound, "in both _SIGNATURES and UNBOUND"
    assert sorted(exported - declared - unbound) == [], "exported, neither declared nor listed"
    assert sorted((declared | unbound) - exported) == [], "declared or listed, not exported"
    assert sorted(set(header.functions) - exported) == [], "in the headers, not exported"
    for name in declared:  # and the loaded library has them all
        assert lt.has(name), name


def test_checks_catch_mutations(header):
    """The checks above fail on a changed enum value or argtype (the mutations are applied
    to copies, the binding is untouched)."""
    tables = {k: dict(v) for k, v in enums.ENUMS.items()}
    tables["lt_dtype"]["LT_F64"] = 5
    assert any("LT_F64" in p for p in enum_problems(header, tables))
    tables = {k: dict(v) for k, v in enums.ENUMS.items()}
    del tables["lt_reduce_op"]["LT_REDUCE_ARGMIN"]
    assert any("LT_REDUCE_ARGMIN" in p for p in enum_problems(header, tables))
    for name, index, wrong in [("lt_tensor_full", 4, ctypes.c_float),       # double -> float
                               ("lt_view_slice", 2, ctypes.c_int),          # int64_t -> int
                               ("lt_tensor_get", 1, ctypes.c_void_p),       # int64_t* -> void*
                               ("lt_reduce", 4, ctypes.c_int),              # bool -> int
                               ("lt_context_create", 0, ctypes.c_int)]:     # pointer -> integer
        sigs = dict(_lib._SIGNATURES)
        res, args = sigs[name]
        args = list(args)
        args[index] = wrong
        sigs[name] = (res, args)
        assert any(p.startswith(f"{name}: argument {index + 1}")
                   for p in signature_problems(header, sigs)), name
    sigs = dict(_lib._SIGNATURES)
    sigs["lt_tensor_numel"] = (ctypes.c_int, sigs["lt_tensor_numel"][1])
    assert any("lt_tensor_numel: returns" in p for p in signature_problems(header, sigs))
    sigs = dict(_lib._SIGNATURES)
    sigs["lt_view_flip"] = (sigs["lt_view_flip"][0], sigs["lt_view_flip"][1][:-1])
    assert any("lt_view_flip: 2 argtypes" in p for p in signature_problems(header, sigs))


# ---- the package's own layering
ORDER = {"_lib": 0, "enums": 1, "errors": 2, "context": 3, "tensor": 4, "convert": 5, "ops": 6,
         "einsum": 6, "__init__": 8,
         "dlpack": 5, "array_api": 7}  # issue 20
ORDER.update({"indexing": 6})  # issue 18 B: a sibling of ops
ORDER.update({"h5": 6})  # issue 23: lt.h5, a sibling of ops
ORDER.update({"stats": 7, "random": 6})  # issue 18 C
ORDER.update({"autograd": 7, "optim": 8, "__init__": 9})  # issue 19: on top of ops and einsum
ORDER.update({"_ext": 4.5})  # issue 20 A: the C extension's loader, between tensor and convert
ORDER.update({"dask": 8})  # issue 24 A: libtensor.dask, imported on its own (needs dask)
# issue 20 B: the array API namespace in three layers over stats (7), below __init__ (9)
ORDER.update({"array_api_base": 7.2, "array_api_ops": 7.4, "array_api": 7.6})
ORDER.update({"methods": 8})  # NumPy's array methods on Tensor, over ops, indexing, array_api
ORDER.update({"functions": 8.5})  # NumPy's module-level views and compositions, over methods
ORDER.update({"docstrings": 8.7})  # the docstrings of NumPy-behaviour functions, written once


def test_modules_import_as_a_dag():
    """Each module imports only modules below it (ops and einsum are siblings), and only at
    module level: no import inside a function or class (no lazy imports to hide a cycle)."""
    assert {p.stem for p in PACKAGE.glob("*.py")} == set(ORDER)
    for path in PACKAGE.glob("*.py"):
        me = path.stem
        tree = ast.parse(path.read_text())
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            assert id(node) in top, f"{me}.py:{node.lineno}: import below module level"
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [a.name for a in node.names]
                for target in targets:
                    assert ORDER[target] < ORDER[me], \
                        f"{me}.py:{node.lineno} imports {target}, which is not below it"

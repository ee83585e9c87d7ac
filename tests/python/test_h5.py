# SPDX-License-Identifier: MIT
"""lt.h5 against h5py (Debian's python3-h5py): files written by h5py read by libtensor and files
written by libtensor read by h5py, for every dtype both know, both byte orders, contiguous /
chunked / compressed, hyperslabs with steps of both signs, 0-d and size-0 datasets, strided
destinations, slab writes, attributes and errors. Skipped when h5py is missing; without HDF5
in the library, every call must raise UnsupportedError."""
import os
import subprocess
import sys

import numpy as np
import pytest

import libtensor as lt
from conftest import DEVICES

h5py = pytest.importorskip("h5py")


@pytest.fixture(autouse=True)
def _needs_hdf5(request):
    if request.node.name != "test_without_hdf5" and not lt.h5.available():
        pytest.skip("libtensor built without HDF5")


def test_without_hdf5(tmp_path):
    if lt.h5.available():
        pytest.skip("libtensor has HDF5")
    with pytest.raises(lt.UnsupportedError, match="LT_WITH_HDF5=OFF"):
        lt.h5.File(tmp_path / "x.h5", "w")

CANDIDATES = ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "bool"]


def _supported(code):
    try:
        lt.lt_dtype(np.dtype(code))
        return True
    except lt.LibtensorError:
        return False


DTYPES = [c for c in CANDIDATES if _supported(c)]


def _values(rng, dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape).astype(dt)
    return rng.uniform(-4, 4, size=shape).astype(dt)


def _random_key(rng, shape):
    key = []
    for n in shape:
        step = int(rng.integers(1, 4)) * (1 if rng.integers(0, 3) else -1)
        a, b = sorted(int(v) for v in rng.integers(-1, n + 1, size=2))
        key.append(slice(a if step > 0 else b, b if step > 0 else a, step))
    return tuple(key)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["<", ">"])
def test_read_h5py_files(tmp_path, rng, dtype, order, device):
    path = tmp_path / "in.h5"
    want = _values(rng, dtype, (9, 7, 5))
    file_dtype = want.dtype.newbyteorder(order) if want.dtype.itemsize > 1 else want.dtype
    with h5py.File(path, "w") as f:
        f.create_dataset("contiguous", data=want.astype(file_dtype))
        f.create_dataset("chunked", data=want.astype(file_dtype), chunks=(4, 3, 2))
        f.create_dataset("gzip", data=want.astype(file_dtype), chunks=(2, 7, 5),
                         compression="gzip", shuffle=True)
    with lt.h5.File(path) as f:
        for name in ("contiguous", "chunked", "gzip"):
            d = f[name]
            assert d.shape == want.shape and d.lt_dtype == lt.lt_dtype(want.dtype)
            assert ("big-endian" in d.description) == (order == ">" and want.itemsize > 1)
            whole = d.read(device=device)
            assert whole.device.startswith(device.split(":")[0])
            np.testing.assert_array_equal(np.asarray(whole.to("cpu")), want)
            for _ in range(6):
                key = _random_key(rng, want.shape)
                got = np.asarray(d.read(key, device=device).to("cpu"))
                np.testing.assert_array_equal(got, want[key], err_msg=f"{name}{key}")
            np.testing.assert_array_equal(np.asarray(d[3, ::-2, 1]), want[3, ::-2, 1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_h5py_reads_what_we_write(tmp_path, rng, dtype):
    path = tmp_path / "out.h5"
    base = _values(rng, dtype, (8, 10, 6))
    layouts = {"contiguous": base, "transposed": base.transpose(2, 0, 1),
               "stepped": base[::2, 1::3], "negative": base[::-1, ::-2, ::-1]}
    with lt.h5.File(path, "w") as f:
        for name, arr in layouts.items():
            f.create_dataset(name, data=lt.tensor(arr))
            f.create_dataset(name + "_gzip", data=arr, compression="gzip", compression_opts=3,
                             shuffle=True)
            f.create_dataset(name + "_chunked", data=arr, chunks=True)
    with h5py.File(path, "r") as h:
        for name, arr in layouts.items():
            np.testing.assert_array_equal(h[name][...], arr)
            assert h[name].chunks is None
            np.testing.assert_array_equal(h[name + "_gzip"][...], arr)
            assert h[name + "_gzip"].compression == "gzip" and h[name + "_gzip"].shuffle
            np.testing.assert_array_equal(h[name + "_chunked"][...], arr)
            assert h[name + "_chunked"].chunks is not None


def test_bf16_written_as_custom_float(tmp_path):
    path = tmp_path / "bf16.h5"
    values = np.array([1.0, -2.5, 0.0078125, 65280.0, -3.0e-3], dtype=np.float32)
    t = lt.tensor(values).astype("bfloat16")
    with lt.h5.File(path, "w") as f:
        f["b"] = t
    with lt.h5.File(path) as f:
        assert f["b"].dtype == "bf16" and "bf16" in f["b"].description
        back = f["b"][:]
        assert back.lt_dtype == lt.lt_dtype("bf16")
        np.testing.assert_array_equal(np.asarray(back.astype("float32")),
                                      np.asarray(t.astype("float32")))
    with h5py.File(path) as h:  # h5py sees a 16-bit float; HDF5 converts the values
        np.testing.assert_allclose(h["b"][...].astype(np.float32),
                                   np.asarray(t.astype("float32")), rtol=1e-3)


def test_scalar_and_empty(tmp_path):
    path = tmp_path / "edge.h5"
    with h5py.File(path, "w") as h:
        h["s"] = np.float64(2.25)
        h["z"] = np.zeros((0, 4), np.float32)
        h["z2"] = np.zeros((3, 0, 2), np.float64)
    with lt.h5.File(path, "a") as f:
        assert f["s"].shape == () and np.asarray(f["s"][()]) == 2.25
        assert np.asarray(f["z"][:]).shape == (0, 4)
        assert np.asarray(f["z2"][1:, :, ::-1]).shape == (2, 0, 2)
        f["s2"] = np.float32(-1.5)
        f.create_dataset("z3", data=np.zeros((0, 5), np.float64), compression="gzip")
    with h5py.File(path) as h:
        assert h["s2"][()] == np.float32(-1.5) and h["z3"].shape == (0, 5)


def test_slab_larger_file_and_read_into(tmp_path, rng):
    path = tmp_path / "big.h5"
    want = rng.standard_normal((300, 700)).astype(np.float32)  # larger than any slab read
    with h5py.File(path, "w") as h:
        h.create_dataset("a", data=want, chunks=(64, 100))
    with lt.h5.File(path) as f:
        np.testing.assert_array_equal(np.asarray(f["a"][10:20, ::2]), want[10:20, ::2])
        np.testing.assert_array_equal(np.asarray(f["a"][250:, 690:][::-3]), want[250:, 690:][::-3])
        host = np.full((20, 40), np.nan)
        target = lt.tensor(host)[::2, 3::4]  # strided view of NumPy memory, converted to f64
        f["a"].read_into(target, (slice(5, 15), slice(0, 90, 9)))
        np.testing.assert_array_equal(host[::2, 3::4], want[5:15, 0:90:9].astype(np.float64))
        assert np.isnan(host[1::2]).all() and np.isnan(host[:, :3]).all()


def test_write_slab(tmp_path, rng):
    path = tmp_path / "w.h5"
    want = rng.standard_normal((12, 9))
    with h5py.File(path, "w") as h:
        h["a"] = want
    with lt.h5.File(path, "r+") as f:
        for _ in range(8):
            key = _random_key(rng, want.shape)
            v = rng.standard_normal(want[key].shape)
            f["a"][key] = v
            want[key] = v
        f["a"][4, 1:3] = [7.0, 8.0]
        want[4, 1:3] = [7.0, 8.0]
    with h5py.File(path) as h:
        np.testing.assert_array_equal(h["a"][...], want)


def test_attributes(tmp_path):
    path = tmp_path / "attrs.h5"
    with h5py.File(path, "w") as h:
        h["g/d"] = np.zeros(2)
        h.attrs["title"] = "h\u00e9llo"
        h["g"].attrs["n"] = np.int32(-7)
        h["g/d"].attrs["scale"] = 0.25
    with lt.h5.File(path, "r+") as f:
        assert f.attrs["title"] == "h\u00e9llo"
        assert f["g"].attrs["n"] == -7 and f["/g/d"].attrs["scale"] == 0.25
        assert sorted(f.attrs) == ["title"]
        f["g/d"].attrs["units"] = "m/s"
        f.attrs["count"] = 2**40
        f.attrs["title"] = 1.5
    with h5py.File(path) as h:
        assert h["g/d"].attrs["units"] == "m/s" and h.attrs["count"] == 2**40
        assert h.attrs["title"] == 1.5


def test_listing_and_errors(tmp_path):
    path = tmp_path / "e.h5"
    with h5py.File(path, "w") as h:
        h["a/b/c"] = np.arange(3)
        h["rec"] = np.zeros(2, dtype=[("x", "i4"), ("y", "f8")])
        h["vlen"] = np.array(["ab", "c"], dtype=h5py.string_dtype())
    with lt.h5.File(path) as f:
        assert f.tree() == ["/a/", "/a/b/", "/a/b/c", "/rec", "/vlen"]
        assert f.keys() == ["a", "rec", "vlen"] and f["a"].keys() == ["b"]
        assert "a/b/c" in f and "nope" not in f
        with pytest.raises(lt.DtypeError, match="rec.*compound"):
            f["rec"][:]
        with pytest.raises(lt.DtypeError, match="vlen.*string"):
            f["vlen"][:]
        with pytest.raises(KeyError):
            f["missing"]
        with pytest.raises(IndexError):
            f["a/b/c"][3]
        with pytest.raises(lt.ShapeMismatchError):
            f["a/b/c"].read_into(lt.zeros((4,)))
        with pytest.raises(lt.InvalidArgumentError, match="read-only"):
            f["x"] = np.zeros(2)
    with pytest.raises(lt.FileError):
        lt.h5.File(tmp_path / "missing.h5")
    data = path.read_bytes()
    for cut in (0, 8, 100, len(data) // 2, len(data) - 1):
        (tmp_path / "cut.h5").write_bytes(data[:cut])
        try:
            with lt.h5.File(tmp_path / "cut.h5") as f:
                f["a/b/c"][:]
        except lt.LibtensorError as e:
            assert str(e)
        except KeyError:
            pass
    # HDF5 prints nothing itself (checked in a process without h5py, which would silence it).
    script = ("import libtensor as lt, sys\n"
              "for p in sys.argv[1:]:\n"
              "    try:\n"
              "        lt.h5.File(p)['a/b/c'][:]\n"
              "    except (lt.LibtensorError, KeyError):\n"
              "        pass\n")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cut.h5"),
                           str(tmp_path / "missing.h5")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_create_is_atomic(tmp_path):
    path = tmp_path / "keep.h5"
    path.write_bytes(b"old")
    f = lt.h5.File(path, "w")
    f["x"] = np.ones(3)
    assert path.read_bytes() == b"old"  # still the old file until close
    f.close()
    with h5py.File(path) as h:
        np.testing.assert_array_equal(h["x"][...], np.ones(3))
    assert sorted(os.listdir(tmp_path)) == ["keep.h5"]  # no temporary left


@pytest.mark.skipif("opencl" not in DEVICES, reason="no OpenCL device")
def test_read_into_device_tensor(tmp_path, rng):
    path = tmp_path / "dev.h5"
    want = rng.standard_normal((6, 8)).astype(np.float32)
    with h5py.File(path, "w") as h:
        h["a"] = want
    with lt.h5.File(path) as f:
        t = lt.zeros((8, 6), device="opencl").T  # transposed view on the device
        f["a"].read_into(t)
        np.testing.assert_array_equal(np.asarray(t.to("cpu")), want)


def test_links_are_reachable(tmp_path):
    """Hard-link aliases, soft links and paths through soft-linked groups (the listing gave each
    object once and no soft link, so lt.h5.File(...)[name] raised KeyError)."""
    h5py = pytest.importorskip("h5py")
    p = str(tmp_path / "links.h5")
    with h5py.File(p, "w") as f:
        f["data/x"] = np.arange(4.0)
        f["alias"] = f["data/x"]
        f["soft"] = h5py.SoftLink("/data/x")
        f["gsoft"] = h5py.SoftLink("/data")
        f["dangling"] = h5py.SoftLink("/nowhere")
    with lt.h5.File(p) as f:
        for name in ("data/x", "alias", "soft", "gsoft/x"):
            assert name in f
            np.testing.assert_array_equal(np.asarray(f[name][:]), np.arange(4.0))
        assert "dangling" not in f and "nowhere" not in f


def test_an_exception_in_a_write_block_keeps_the_old_file(tmp_path):
    """with lt.h5.File(p, "w") that raises: the new file is dropped, the old one stays."""
    p = str(tmp_path / "keep.h5")
    with lt.h5.File(p, "w") as f:
        f.create_dataset("old", data=np.arange(3.0))
    with pytest.raises(RuntimeError):
        with lt.h5.File(p, "w") as f:
            f.create_dataset("partial", data=np.zeros(2))
            raise RuntimeError("stop")
    with lt.h5.File(p) as f:
        assert "old" in f and "partial" not in f
    assert sorted(os.listdir(tmp_path)) == ["keep.h5"]

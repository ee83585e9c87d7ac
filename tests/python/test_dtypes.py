# SPDX-License-Identifier: MIT
"""Integer and bool dtypes (issue 18 A) against NumPy: no silent widening, exact values,
result dtypes of array operations (NumPy's promotion of arrays), operators, where/clip,
comparisons and the extra math, on every device."""
import numpy as np
import pytest

import libtensor as lt
from conftest import LAYOUTS, assert_close, random_array, skip_unless_supported

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def edge_array(rng, shape, dtype, layout="contiguous"):
    """Random integers with the dtype's extremes mixed in, in the given memory layout."""
    info = np.iinfo(dtype)
    base = random_array(rng, shape, np.int64, layout)  # the layout; values replaced below
    edges = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=object)
    vals = rng.integers(info.min, info.max, size=base.shape, dtype=dtype, endpoint=True)
    flat = vals.reshape(-1)
    pick = rng.random(flat.shape) < 0.3
    flat[pick] = edges[rng.integers(0, len(edges), size=int(pick.sum()))].astype(dtype)
    out = np.empty_like(base, dtype=dtype) if base.ndim else np.array(vals)
    out[...] = vals
    return out


@pytest.mark.parametrize("dtype", INTS + [np.bool_])
def test_no_widening_round_trip(device, rng, dtype):
    a = edge_array(rng, (3, 4), dtype) if dtype != np.bool_ else rng.random((3, 4)) < 0.5
    t = lt.tensor(a, device=device)
    assert t.dtype == np.dtype(dtype)
    assert np.array_equal(t.numpy(), a) and t.numpy().dtype == a.dtype
    assert type(t[1, 2].item()) is type(a[1, 2].item()) and t[1, 2].item() == a[1, 2].item()


def test_uint64_and_int64_exact(device):
    u = np.array([2 ** 63 + 5, 2 ** 64 - 1, 3], np.uint64)
    t = lt.tensor(u, device=device)
    assert t[0].item() == 2 ** 63 + 5 and t[1].item() == 2 ** 64 - 1
    big = np.array([2 ** 60 + 1, 2 ** 62 + 1], np.int64)
    tb = lt.tensor(big, device=device)
    assert (tb + 1).numpy().tolist() == [2 ** 60 + 2, 2 ** 62 + 2]
    assert lt.argmax(np.array([2 ** 60, 2 ** 60 + 1])) == 1
    assert tb[1].item() == 2 ** 62 + 1


BIN = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
       ("minimum", np.minimum), ("maximum", np.maximum), ("equal", np.equal),
       ("not_equal", np.not_equal), ("less", np.less), ("less_equal", np.less_equal),
       ("greater", np.greater), ("greater_equal", np.greater_equal),
       ("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
       ("bitwise_xor", np.bitwise_xor), ("logical_and", np.logical_and),
       ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)]


@pytest.mark.parametrize("dtype", INTS)
def test_int_binary(device, rng, dtype):
    for name, ref in BIN:
        layouts = rng.choice(LAYOUTS, 2)
        a = edge_array(rng, (3, 4), dtype, layouts[0])
        b = edge_array(rng, (4,), dtype, layouts[1])
        with np.errstate(all="ignore"):
            want = ref(a, b)
        got = getattr(lt, name)(lt.tensor(a, device=device), lt.tensor(b, device=device)).numpy()
        assert got.dtype == want.dtype and np.array_equal(got, want), name


@pytest.mark.parametrize("dtype", INTS)
def test_floor_divide_remainder(device, rng, dtype):
    a = edge_array(rng, (5, 6), dtype)
    b = edge_array(rng, (6,), dtype)
    b[0] = 0
    if np.issubdtype(dtype, np.signedinteger):
        a[0, 1], b[1] = np.iinfo(dtype).min, -1
    ta, tb = lt.tensor(a, device=device), lt.tensor(b, device=device)
    with np.errstate(all="ignore"):
        for got, want in (((ta // tb).numpy(), a // b), ((ta % tb).numpy(), a % b),
                          (lt.fmod(ta, tb).numpy(), np.fmod(a, b))):
            assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint64])
def test_shifts_and_invert(device, rng, dtype):
    a = edge_array(rng, (4, 5), dtype)
    bits = np.dtype(dtype).itemsize * 8
    s = rng.integers(0, bits, size=(5,)).astype(dtype)
    ta, ts = lt.tensor(a, device=device), lt.tensor(s, device=device)
    assert np.array_equal((ta << ts).numpy(), a << s)
    assert np.array_equal((ta >> ts).numpy(), a >> s)
    assert np.array_equal((~ta).numpy(), ~a)


@pytest.mark.parametrize("pair", [(np.int8, np.uint8), (np.int16, np.uint32), (np.int64, np.float32),
                                  (np.uint8, np.float16), (np.int32, np.float32),
                                  (np.bool_, np.int8), (np.uint64, np.int64), (np.int8, np.int64)])
def test_promotion_matches_numpy(device, pair):
    skip_unless_supported(device, np.float64)
    a = np.array([1, 0, 1], dtype=pair[0])
    b = np.array([3, 1, 0], dtype=pair[1])
    got = lt.add(lt.tensor(a, device=device), lt.tensor(b, device=device)).numpy()
    want = a + b
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_bool_semantics(device, rng):
    m = rng.random((4, 5)) < 0.5
    n = rng.random((5,)) < 0.5
    tm, tn = lt.tensor(m, device=device), lt.tensor(n, device=device)
    for got, want in (((~tm).numpy(), ~m), ((tm & tn).numpy(), m & n), ((tm | tn).numpy(), m | n),
                      ((tm ^ tn).numpy(), m ^ n), ((tm + tn).numpy(), m + n),
                      ((tm * tn).numpy(), m * n), (lt.sum(tm).numpy(), np.sum(m))):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(lt.DtypeError, match="bool"):
        tm - tn
    with pytest.raises(lt.DtypeError, match="bool"):
        -tm
    assert lt.einsum("i,i->", n, n) == np.einsum("i,i->", n, n)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.uint64, np.int8])
def test_reduction_dtypes(device, rng, dtype):
    a = edge_array(rng, (6, 7), dtype, "transposed") if dtype != np.bool_ else \
        rng.random((6, 7)) < 0.5
    t = lt.tensor(a, device=device)
    for name in ("sum", "prod", "min", "max"):
        for axis in (None, 0, 1):
            with np.errstate(all="ignore"):
                want = getattr(np, name)(a, axis=axis)
            got = np.asarray(getattr(lt, name)(t, axis=axis).numpy())
            assert got.dtype == want.dtype and np.array_equal(got, want), (name, axis)
    assert np.array_equal(lt.argmax(t, axis=1).numpy(), np.argmax(a, axis=1))
    assert np.array_equal(lt.argmin(t, axis=0).numpy(), np.argmin(a, axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_comparisons_where_clip(device, rng, dtype):
    skip_unless_supported(device, dtype)
    a = random_array(rng, (4, 6), dtype, "negative")
    b = random_array(rng, (6,), dtype)
    a[1, 2] = np.nan
    ta, tb = lt.tensor(a, device=device), lt.tensor(b, device=device)
    for got, want in (((ta < tb).numpy(), a < b), ((ta <= tb).numpy(), a <= b),
                      ((ta > tb).numpy(), a > b), ((ta >= tb).numpy(), a >= b),
                      ((ta == tb).numpy(), a == b), ((ta != tb).numpy(), a != b),
                      (lt.isnan(ta).numpy(), np.isnan(a)), (lt.isfinite(ta).numpy(), np.isfinite(a)),
                      (lt.isinf(ta).numpy(), np.isinf(a))):
        assert got.dtype == np.bool_ and np.array_equal(got, want)
    got = lt.where(ta > tb, ta, tb).numpy()
    assert got.dtype == np.dtype(dtype) and np.array_equal(got, np.where(a > b, a, b))
    got = lt.clip(ta, -0.9, 0.9).numpy()
    assert np.array_equal(got, np.clip(a, -0.9, 0.9), equal_nan=True)
    got = lt.where(np.array([1, 0, 2, 0, 0, 3]), a, 0.0)  # non-bool condition: != 0
    assert np.array_equal(np.asarray(got), np.where(np.array([1, 0, 2, 0, 0, 3]), a, 0.0),
                          equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.uint8, np.int16])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped", "negative",
                                    "broadcast"])
def test_clip_where_out(device, rng, dtype, layout):
    """clip/where with out= write into out (lt_clip_into / lt_where_into, one pass): exact
    against NumPy for every dtype, input layout and output layout, NumPy or Tensor out, in
    place, an out partly overlapping the input (NumPy buffers it; so does the binding), and an
    out of another dtype."""
    skip_unless_supported(device, dtype)
    a = random_array(rng, (5, 7), dtype, layout)
    lo, hi = (np.array(-4, dtype), np.array(5, dtype)) if np.dtype(dtype).kind != "u" else \
        (np.array(2, dtype), np.array(7, dtype))
    if np.dtype(dtype).kind == "f":
        lo, hi = lo / 8, hi / 8
    want = np.clip(a, lo, hi)
    m = random_array(rng, (5, 1), np.float64, layout) > 0
    want_w = np.where(m, a, hi)
    for out_layout in ("contiguous", "transposed", "stepped", "negative"):
        if device == "cpu":
            out = random_array(rng, (5, 7), dtype, out_layout)
            assert lt.clip(a, lo, hi, out=out) is out and np.array_equal(out, want)
            assert lt.where(m, a, hi, out=out) is out and np.array_equal(out, want_w)
        t_out = lt.tensor(random_array(rng, (5, 7), dtype, out_layout), device=device)
        ta, tm = lt.tensor(a, device=device), lt.tensor(m, device=device)
        assert lt.clip(ta, lo, hi, out=t_out) is t_out and np.array_equal(t_out.numpy(), want)
        assert lt.where(tm, ta, hi, out=t_out) is t_out
        assert np.array_equal(t_out.numpy(), want_w)
    if device != "cpu":
        return
    own = a.copy()
    lt.clip(own, lo, hi, out=own)
    assert np.array_equal(own, want)
    flat, ref = a.copy().reshape(-1), a.copy().reshape(-1)
    np.clip(ref[1:], lo, hi, out=ref[:-1])
    lt.clip(flat[1:], lo, hi, out=flat[:-1])
    assert np.array_equal(flat, ref)
    wide = np.empty((5, 7), np.float64)
    lt.clip(a, lo, hi, out=wide)
    assert np.array_equal(wide, want.astype(np.float64))
    big = np.empty((2, 5, 7), dtype)
    lt.clip(a, lo, hi, out=big)
    assert np.array_equal(big, np.broadcast_to(want, big.shape))
    with pytest.raises(lt.ShapeMismatchError):
        lt.clip(a, lo, hi, out=np.empty((7, 5), dtype))


MATH = [("log1p", np.log1p), ("expm1", np.expm1), ("floor", np.floor), ("ceil", np.ceil),
        ("rint", np.rint), ("trunc", np.trunc), ("sign", np.sign)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_math(device, rng, dtype):
    skip_unless_supported(device, dtype)
    for name, ref in MATH:
        a = (rng.integers(-8, 9, size=(5, 7)) * 0.25).astype(dtype)  # ties for rint
        if name == "log1p":
            a = np.abs(a)
        got = getattr(lt, name)(lt.tensor(a, device=device)).numpy()
        assert got.dtype == a.dtype
        assert_close(got, ref(a.astype(np.float64)), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_binary_math(device, rng, dtype):
    skip_unless_supported(device, dtype)
    a = random_array(rng, (4, 5), dtype, "stepped") * 3
    b = random_array(rng, (5,), dtype)
    ta, tb = lt.tensor(a, device=device), lt.tensor(b, device=device)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert_close((ta // tb).numpy(), np.floor_divide(a64, b64), dtype)
    assert_close((ta % tb).numpy(), np.remainder(a64, b64), dtype)
    assert_close(lt.fmod(ta, tb).numpy(), np.fmod(a64, b64), dtype)
    assert_close(lt.arctan2(ta, tb).numpy(), np.arctan2(a64, b64), dtype)
    assert_close(lt.hypot(ta, tb).numpy(), np.hypot(a64, b64), dtype)


def test_int_float_functions_give_float(device):
    skip_unless_supported(device, np.float64)
    for dtype, want in ((np.int8, np.float16), (np.int16, np.float32), (np.int32, np.float64),
                        (np.uint8, np.float16), (np.bool_, np.float16)):
        a = np.array([1, 0, 1], dtype=dtype)
        assert lt.sqrt(lt.tensor(a, device=device)).dtype == want == np.sqrt(a).dtype
        b = np.array([3, 7, 1], dtype=dtype)
        q = lt.divide(lt.tensor(a, device=device), lt.tensor(b, device=device))
        assert q.dtype == np.divide(a, b).dtype == np.float64
        np.testing.assert_array_equal(q.numpy(), np.divide(a, b))


def test_checked_float_to_int(device):
    t = lt.tensor(np.array([1.5, np.nan], np.float32), device=device)
    with pytest.raises(lt.OutOfRangeError, match="NaN"):
        t.contiguous("int32")
    t = lt.tensor(np.array([300.0], np.float32), device=device)
    with pytest.raises(lt.OutOfRangeError, match="u8"):
        t.contiguous("uint8")
    assert t.contiguous("int16").numpy().tolist() == [300]


@pytest.mark.parametrize("dtype", INTS)
def test_full_python_int_out_of_bounds(dtype):
    """NumPy 2's np.full: a Python integer the dtype cannot hold is an OverflowError (never a
    wrapped fill); the bounds themselves are exact."""
    info = np.iinfo(dtype)
    for v in (int(info.min) - 1, int(info.max) + 1):
        with pytest.raises(OverflowError, match="out of bounds"):
            lt.full((2,), v, dtype)
    for v in (int(info.min), int(info.max)):
        assert lt.full((2,), v, dtype).numpy().tolist() == [v, v]


@pytest.mark.parametrize("dtype", INTS + [np.bool_])
def test_npy_every_dtype(tmp_path, rng, dtype):
    a = edge_array(rng, (3, 2), dtype) if dtype != np.bool_ else rng.random((3, 2)) < 0.5
    path = tmp_path / "a.npy"
    lt.save(path, lt.tensor(a))
    assert np.array_equal(np.load(path), a) and np.load(path).dtype == a.dtype
    np.save(path, a.astype(a.dtype.newbyteorder(">")))
    got = lt.load(path).numpy()
    assert got.dtype == a.dtype and np.array_equal(got, a)


def test_integer_power_refusals_match_numpy(device):
    a = np.array([2, 3, 1, -1], np.int32)
    for b in (np.array([-1, 2, 0, 1], np.int32), np.array([[1, 2, 0, -3]], np.int64)):
        with pytest.raises(ValueError):
            np.power(a, b)
        with pytest.raises(ValueError, match="negative integer powers"):
            lt.power(lt.tensor(a, device=device), lt.tensor(b, device=device))
    b = np.array([0, 2, 7, 3], np.int32)
    np.testing.assert_array_equal(
        lt.power(lt.tensor(a, device=device), lt.tensor(b, device=device)).numpy(), a ** b)
    # The same layouts again, now with a negative exponent: a cached plan must not skip the check.
    for _ in range(3):
        np.testing.assert_array_equal(lt.power(a, b), a ** b)
    with pytest.raises(ValueError, match="negative integer powers"):
        lt.power(a, -b)
    # A float exponent is fine, and so is an unsigned one.
    np.testing.assert_array_equal(
        lt.power(lt.tensor(a, device=device), lt.tensor(-b.astype(np.float64),
                                                        device=device)).numpy(),
        np.power(a, -b.astype(np.float64)))


def test_bool_square_and_sign_match_numpy(device):
    m = np.array([True, False, True])
    got = lt.square(lt.tensor(m, device=device)).numpy()
    assert got.dtype == np.square(m).dtype
    np.testing.assert_array_equal(got, np.square(m))
    with pytest.raises(TypeError):
        np.sign(m)
    with pytest.raises(TypeError):
        lt.sign(lt.tensor(m, device=device))


def test_bfloat16_keeps_its_dtype_beside_python_scalars(device):
    """A Python scalar is weak beside a bfloat16 Tensor, as beside float16 (NumPy 2's rule, and
    PyTorch's): the result stays bfloat16, the scalar rounded to bfloat16 once. It used to
    become a float64 0-d array, which widened every result to float64."""
    vals = np.array([-3.0, -0.5, 0.0, 1.25, 2.0, 7.5], np.float32)  # exact in bfloat16
    a = lt.tensor(vals, device=device).astype("bfloat16")
    cases = [(a * 2.5, vals * 2.5), (1.5 - a, 1.5 - vals), (a + 1, vals + 1), (a / 2, vals / 2),
             (lt.maximum(a, 0.0), np.maximum(vals, 0.0)), (lt.clip(a, -1, 2), np.clip(vals, -1, 2)),
             (a ** 2, vals ** 2), (a + True, vals + 1)]
    for got, want in cases:
        assert got.dtype == "bfloat16"
        np.testing.assert_array_equal(got.numpy(), want)
    # 1/3 rounds to bfloat16 before it multiplies: the result is bfloat16(1/3) * 3 rounded.
    third = (lt.tensor(np.ones(1, np.float32), device=device).astype("bfloat16") * (1 / 3))
    assert third.dtype == "bfloat16" and third.numpy()[0] == np.float32(0.333984375)
    assert (a < 1).dtype == np.bool_ and np.array_equal((a < 1).numpy(), vals < 1)
    f = lt.tensor(vals, device=device)
    assert (a + f).dtype == np.float32  # an array operand still promotes


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint32])
def test_python_int_out_of_range_as_numpy2(device, dtype):
    """NumPy 2 (NEP 50): a Python int past an integer array's range is an OverflowError in
    arithmetic (it used to widen the result to int64 silently), compares exactly, and as a clip
    bound saturates (the result keeps the array's dtype)."""
    info = np.iinfo(dtype)
    vals = np.array([info.min, 0, 1, info.max], dtype)
    t = lt.tensor(vals, device=device)
    big, small = int(info.max) + 1, int(info.min) - 1
    for f in (lambda: t + big, lambda: big * t, lambda: t - small, lambda: lt.maximum(t, big),
              lambda: t // small, lambda: lt.add(vals, big)):
        with pytest.raises(OverflowError, match="out of bounds"):
            f()
    np.testing.assert_array_equal((t < big).numpy(), np.ones(4, bool))
    np.testing.assert_array_equal((t == small).numpy(), np.zeros(4, bool))
    got = lt.clip(t, small, big)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), np.clip(vals, info.min, info.max))
    got = lt.clip(t, small, 1)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), np.minimum(vals, 1))
    assert (t + 1).dtype == np.dtype(dtype)  # in range: weak, the array's dtype


def test_float_functions_of_mixed_integers_take_each_operands_float():
    """NumPy casts each integer operand of a float function to its own float (arctan2 of int8
    and uint8 is float16; through their int16 promotion it was float32)."""
    ints = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64]
    for name in ("arctan2", "hypot", "copysign", "logaddexp"):
        for a in ints:
            for b in ints + [np.float16, np.float32]:
                want = getattr(np, name)(np.ones(2, a), np.ones(2, b)).dtype
                assert getattr(lt, name)(np.ones(2, a), np.ones(2, b)).dtype == want, (name, a, b)


def test_joins_promote_as_numpy():
    pieces = [np.array([True, False]), np.array([3, -4], np.int16), np.array([200], np.uint8)]
    for a, b in [(0, 1), (1, 2), (0, 2)]:
        want = np.concatenate([pieces[a], pieces[b]])
        got = lt.concatenate([pieces[a], pieces[b]])
        assert got.dtype == want.dtype and (got == want).all()
    got = lt.stack([np.ones(2, np.float32), np.arange(2, dtype=np.int64)])
    assert got.dtype == np.float64


def test_rounding_functions_of_integers_as_numpy_2():
    """rint of integers and bools is NumPy 2's float for them; round keeps integers (bool ->
    float16); floor/ceil/trunc keep integers and bools."""
    want = {("rint", np.int8): np.float16, ("rint", np.uint16): np.float32,
            ("rint", np.int64): np.float64, ("rint", np.bool_): np.float16,
            ("round", np.int8): np.int8, ("round", np.bool_): np.float16,
            ("floor", np.int8): np.int8, ("trunc", np.bool_): np.bool_}
    for (name, dt), res in want.items():
        for x in (np.array([1, 0], dt), lt.tensor(np.array([1, 0], dt))):
            got = getattr(lt, name)(x)
            assert got.dtype == res, (name, dt, got.dtype)
            assert np.asarray(got.numpy() if isinstance(got, lt.Tensor) else got).tolist() == [1, 0]

"""golden.fast against the integer model it stands in for, and golden.matmul (any size, the
JAX presets) against golden.mxu / golden.multipass.

Every bf16 x bf16 product through the float32 path (every x against 256 w values; with
``--scale S``, 256 S of them: ``--scale 256`` is all 2^32 pairs), tiles of every input
format at the edges of the safe region and beyond (specials, subnormals, cancellation to
the flush threshold, sums near overflow), and the accumulator adds and the bf16 split on
dense random and edge values.
"""

import numpy as np
import pytest

import golden
from golden import fast, mxu
from golden.formats import BF16, FP16, FP32, FP8_E4M3, FP8_E4M3FN, FP8_E5M2
from golden.multipass import multipass_matmul, split
from golden.ops import add
from golden.vectors import random_encodings


def _reference(in_fmt, acc_fmt=FP32):
    return lambda a, b: mxu.matmul_flags(a, b, in_fmt, acc_fmt)


def _assert_same(got, want):
    assert np.array_equal(got[0], want[0]), np.flatnonzero(got[0] != want[0])[:5]
    assert np.array_equal(got[1], want[1]), np.flatnonzero(got[1] != want[1])[:5]


def test_every_bf16_product_on_float32_is_the_integer_models(scale, rng):
    """K = 1 tiles: each (x, w) pair's product and flags, float32 where safe, the reference
    elsewhere, against the reference for every x and a sample of w (all with --scale 256)."""
    x = np.arange(1 << 16, dtype=np.uint16)[:, None]
    count = min(256 * scale, 1 << 16)
    columns = np.arange(1 << 16, dtype=np.uint16) if count == 1 << 16 else \
        rng.choice(1 << 16, count, replace=False).astype(np.uint16)
    safe_pairs = 0
    for start in range(0, count, 256):
        w = columns[None, start:start + 256]
        want = mxu.matmul_flags(x, w)
        _, _, safe = fast.safe_pairs(x, w, BF16)
        assert not want[1][safe].any()          # the safe products raise no flag
        _assert_same(fast.reduce_tile(x, w, BF16, FP32, _reference(BF16)), want)
        safe_pairs += int(safe.sum())
    assert safe_pairs > 0.8 * 65536 * count * 0.25     # most of the normal-range pairs are safe


def _scaled(rng, fmt, shape, low, high):
    """``fmt`` encodings of random significands at exponents in ``low..high``, some zeros."""
    sig = rng.integers(0, 1 << fmt.man_bits, shape)
    exp = rng.integers(low, high + 1, shape) + fmt.bias
    sign = rng.integers(0, 2, shape)
    bits = (sign << (fmt.width - 1)) | (np.clip(exp, 1, fmt.exp_max_field - 1) << fmt.man_bits) | sig
    bits[rng.random(shape) < 0.1] = 0
    return bits.astype(fmt.dtype)


@pytest.mark.parametrize("fmt", [BF16, FP16, FP8_E4M3, FP8_E5M2, FP8_E4M3FN], ids=lambda f: f.name)
def test_tiles_on_float32_are_the_integer_models(fmt, rng):
    """Tiles inside the safe region, at its edges and beyond, with specials and subnormals."""
    e_max = fmt.exp_max_field - 1 - fmt.bias
    e_min = 1 - fmt.bias
    low_limit = -126 + 2 * (fmt.precision - 1)
    cases = []
    for _ in range(12):
        m, k, n = rng.integers(1, 24, 3)
        lo = int(rng.integers(e_min, e_max + 1))
        hi = int(rng.integers(lo, e_max + 1))
        cases.append((_scaled(rng, fmt, (m, k), lo, hi), _scaled(rng, fmt, (k, n), lo, hi)))
    # Random encodings: NaN, inf, subnormals, zeros mixed in.
    cases += [(random_encodings(fmt, 60, rng).reshape(6, 10), random_encodings(fmt, 70, rng).reshape(10, 7))]
    # Cancellation: +p then -p then small products, at the low edge.
    if fmt.bias >= 63:
        half = low_limit // 2
        x = _scaled(rng, fmt, (8, 6), half, half + 2)
        w = _scaled(rng, fmt, (6, 5), half, half + 2)
        w[1] = w[0] ^ (1 << (fmt.width - 1))
        cases.append((x, w))
    for x, w in cases:
        _assert_same(fast.reduce_tile(x, w, fmt, FP32, _reference(fmt)), mxu.matmul_flags(x, w, fmt, FP32))


def test_the_safe_region_ends_where_the_notes_say(rng):
    """bf16 pairs exactly at the exponent limits are safe and exact, one step beyond they go
    to the reference; both agree with it."""
    k = 256                                       # high limit 124 - 8 = 116
    for ex, ew, safe in [(-56, -56, True), (-57, -56, False), (58, 58, True), (59, 58, False)]:
        x = ((ex + 127) << 7 | rng.integers(0, 128, (3, k))).astype(np.uint16)
        w = ((ew + 127) << 7 | rng.integers(0, 128, (k, 4))).astype(np.uint16)
        assert fast.safe_pairs(x, w, BF16)[2].all() == safe
        _assert_same(fast.reduce_tile(x, w, BF16, FP32, _reference(BF16)), mxu.matmul_flags(x, w))


def test_accumulator_adds_and_the_split_on_float32(rng):
    a = random_encodings(FP32, 1 << 16, rng)
    b = random_encodings(FP32, 1 << 16, rng)
    near = (rng.standard_normal(1 << 16) * 2.0 ** -125).astype(np.float32).view(np.uint32)
    big = (rng.standard_normal(1 << 16) * 2.0 ** 126).astype(np.float32).view(np.uint32)
    for p, q in [(a, b), (near, near[::-1]), (big, big[::-1]), (a, a ^ 0x80000000)]:
        _assert_same(fast.add(p, q, FP32), add(p, q, FP32))
    wide = (rng.standard_normal(1 << 16) * 2.0 ** rng.integers(-140, 128, 1 << 16)).astype(np.float32)
    for values in (a, wide.view(np.uint32)):
        for parts in (1, 2, 3):
            assert np.array_equal(fast.split(values, parts, split), split(values, parts))


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32).view(np.uint32)


@pytest.mark.parametrize("k, rows", [(48, 48), (48, 16), (50, 16), (7, 8), (130, 128)])
def test_matmul_is_the_mxu_tiled(k, rows, rng):
    """One pass: the MXU model's tiles (K a multiple of rows) or the zero-padded K; flags
    equal with and without the float32 path."""
    x, w = random_encodings(BF16, 9 * k, rng).reshape(9, k), random_encodings(BF16, k * 5, rng).reshape(k, 5)
    pad = -k % rows
    want = mxu.mxu(np.pad(x, ((0, 0), (0, pad))), np.pad(w, ((0, pad), (0, 0))), rows=rows)
    got = golden.matmul(x, w, array=(rows, 4))
    assert np.array_equal(got.y, want)
    _assert_same(got, golden.matmul(x, w, array=(rows, 4), fast_path=False))
    # fp32 inputs are rounded on entry (RNE), as the MXU's convert_inputs.
    xf, wf = _f32(rng, (9, k)), _f32(rng, (k, 5))
    want = mxu.mxu(np.pad(xf, ((0, 0), (0, pad))), np.pad(wf, ((0, pad), (0, 0))), rows=rows, convert_inputs=True)
    assert np.array_equal(golden.matmul(xf, wf, precision="DEFAULT", array=(rows, 4)).y, want)


@pytest.mark.parametrize("precision, passes", [("BF16_BF16_F32_X3", 3), ("HIGH", 3), ("BF16_BF16_F32_X6", 6),
                                               ("highest", 6)])
def test_matmul_passes_are_golden_multipass(precision, passes, rng):
    x = (rng.standard_normal((12, 32)) * 2.0 ** rng.integers(-120, 120, (12, 32))).astype(np.float32)
    w = _f32(rng, (32, 6))
    for rows in (32, 8):
        got = golden.matmul(x.view(np.uint32), w, precision=precision, array=(rows, 6))
        assert np.array_equal(got.y, multipass_matmul(x.view(np.uint32), w, passes, rows))
        _assert_same(got, golden.matmul(x.view(np.uint32), w, precision=precision, array=(rows, 6),
                                        fast_path=False))


def test_matmul_other_formats_rounding_and_nan(rng):
    x, w = random_encodings(FP8_E4M3, 40, rng).reshape(4, 10), random_encodings(FP8_E4M3, 30, rng).reshape(10, 3)
    got = golden.matmul(x, w, precision=("fp8_e4m3", "fp32"), array=(5, 3))
    assert np.array_equal(got.y, mxu.mxu(x, w, rows=5, in_fmt=FP8_E4M3))
    got = golden.matmul(x, w, precision=("fp8_e4m3", "bf16"))
    assert np.array_equal(got.y, mxu.mxu(x, w, in_fmt=FP8_E4M3, acc_fmt=BF16))
    xb, wb = random_encodings(BF16, 60, rng).reshape(6, 10), random_encodings(BF16, 40, rng).reshape(10, 4)
    got = golden.matmul(xb, wb, out_rounding="sr", seed=7)
    assert np.array_equal(got.y, mxu.mxu(xb, wb, out_rounding="sr", seed=7))
    xb[0, 0] = 0x7FC0                               # a NaN: its row is NaN, flagged as the reference does
    _assert_same(golden.matmul(xb, wb), golden.matmul(xb, wb, fast_path=False))
    assert np.all((golden.matmul(xb, wb).y[0] & 0x7FFFFFFF) > 0x7F800000)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(precision="BF16_BF16_F32_X9"), ValueError, "precision 'BF16_BF16_F32_X9': use one of"),
    (dict(precision=("bf16", "fp99")), ValueError, "precision[1] (acc_fmt): unknown format 'fp99'"),
    (dict(array=(0, 4)), ValueError, "array rows must be in 1..256, not 0"),
    (dict(array=8), TypeError, "array must be (rows, cols), not 8"),
    (dict(precision="HIGH", x=np.zeros((2, 3), np.uint16)), TypeError, "x: 3 passes split fp32 values"),
    (dict(x=np.zeros((2, 3), np.uint8)), TypeError, "x has dtype uint8: give bf16 encodings (uint16)"),
    (dict(x=np.zeros((2, 3), np.float32)), TypeError, "x must hold integer bit patterns, not float32"),
    (dict(w=np.zeros((4, 2), np.uint16)), ValueError, "x (M x K) has K = 3 columns but w (K x N) has 4 rows"),
    (dict(precision="HIGH", out_rounding="rne", x=np.zeros((2, 3), np.uint32), w=np.zeros((3, 2), np.uint32)),
     ValueError, "out_rounding rounds to the input format"),
])
def test_matmul_refuses_bad_arguments_in_one_line(kwargs, error, message):
    args = {"x": np.zeros((2, 3), np.uint16), "w": np.zeros((3, 2), np.uint16), **kwargs}
    with pytest.raises(error) as caught:
        golden.matmul(args.pop("x"), args.pop("w"), **args)
    assert message in str(caught.value) and "\n" not in str(caught.value)

"""golden/ against independent references: ml_dtypes and NumPy casts, NumPy float32 add,
exact float64 products. Millions of corner-weighted random vectors per check."""

import numpy as np
import pytest
from references import assert_same, daz, tpu_round

from golden import BF16, FP8_E4M3, FP8_E5M2, FP16, FP32, TF32, add, convert, multiply, unpack
from golden.vectors import corner_values, near_pairs, random_encodings

N = 1_000_000


def _exhaustive_or_random(fmt, n, rng):
    if fmt.width <= 16:
        return np.arange(1 << fmt.width, dtype=np.uint64).astype(fmt.dtype)
    return np.concatenate([corner_values(fmt), random_encodings(fmt, n, rng)])


@pytest.mark.parametrize("out_fmt", [BF16, FP16, TF32, FP8_E4M3, FP8_E5M2], ids=str)
def test_narrowing_conversion_rne(out_fmt, rng, scale):
    a = _exhaustive_or_random(FP32, N * scale, rng)
    bits, flags = convert(a, FP32, out_fmt)
    u = unpack(a, FP32)
    expected, expected_flags = tpu_round(daz(a, FP32), out_fmt, invalid=u.is_signalling)
    assert_same(bits, flags, out_fmt, expected, expected_flags, context=(a,))


def test_fp32_to_bf16_equals_plain_ml_dtypes_cast_for_normal_results(rng, scale):
    """Outside the flush and NaN cases, TPU-mode conversion is exactly ml_dtypes' cast."""
    import ml_dtypes
    a = random_encodings(FP32, N * scale, rng)
    bits, _ = convert(a, FP32, BF16)
    plain = a.view(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    u, ru = unpack(a, FP32), unpack(plain, BF16)
    comparable = ~u.is_subnormal & ~u.is_nan & ~ru.is_subnormal & ~ru.is_zero
    assert comparable.mean() > 0.5
    assert np.array_equal(bits[comparable], plain[comparable])


@pytest.mark.parametrize("in_fmt", [BF16, FP16, TF32, FP8_E4M3, FP8_E5M2], ids=str)
def test_widening_conversion_is_exact(in_fmt, rng, scale):
    a = _exhaustive_or_random(in_fmt, N * scale, rng)
    bits, flags = convert(a, in_fmt, FP32)
    u = unpack(a, in_fmt)
    expected, expected_flags = tpu_round(daz(a, in_fmt), FP32, invalid=u.is_signalling)
    assert not (expected_flags & 0b111).any(), "a widening conversion is exact"
    assert_same(bits, flags, FP32, expected, expected_flags, context=(a,))


def test_bf16_to_fp32_pads_sixteen_zero_bits():
    a = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    bits, flags = convert(a, BF16, FP32)
    u = unpack(a, BF16)
    ordinary = ~u.is_subnormal & ~u.is_nan
    assert np.array_equal(bits[ordinary], a[ordinary].astype(np.uint32) << 16)
    assert not flags[ordinary].any()


def _fp32_add_reference(a, b):
    x, y = daz(a, FP32), daz(b, FP32)
    with np.errstate(all="ignore"):
        total32 = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float64)
        # Knuth's TwoSum: the exact sum is s + err (no overflow in float64 for fp32 inputs).
        s = x + y
        bv = s - x
        err = (x - (s - bv)) + (y - bv)
    finite_inputs = np.isfinite(x) & np.isfinite(y)
    ua, ub = unpack(a, FP32), unpack(b, FP32)
    invalid = ua.is_signalling | ub.is_signalling | (np.isinf(x) & np.isinf(y) & (x != y))
    # An fp32 sum that is tiny is exact (Sterbenz), so NumPy's subnormal result is the
    # unbounded-exponent rounding; a finite sum that NumPy rounds to inf overflowed.
    expected, flags = tpu_round(np.where(finite_inputs, total32, x + y), FP32, invalid=invalid)
    inexact = finite_inputs & ((total32 != s) | (err != 0))
    flags = np.where(inexact & ~np.isnan(expected), flags | 1, flags).astype(np.uint8)
    overflowed = finite_inputs & np.isinf(total32)
    expected = np.where(overflowed, total32, expected)
    flags = np.where(overflowed, 0b101, flags).astype(np.uint8)
    return expected, flags


def test_fp32_add_rne_against_numpy_float32(rng, scale):
    n = N * scale
    a = random_encodings(FP32, n, rng)
    b = random_encodings(FP32, n, rng)
    near_a, near_b = near_pairs(FP32, n, rng)
    corners = corner_values(FP32)
    ca, cb = np.meshgrid(corners, corners)
    a = np.concatenate([a, near_a, ca.ravel()])
    b = np.concatenate([b, near_b, cb.ravel()])
    bits, flags = add(a, b, FP32)
    expected, expected_flags = _fp32_add_reference(a, b)
    assert_same(bits, flags, FP32, expected, expected_flags, context=(a, b))


def _product_reference(a, b, in_fmt, out_fmt):
    x, y = daz(a, in_fmt), daz(b, in_fmt)
    with np.errstate(invalid="ignore"):
        exact = x * y  # exact: at most 2 * 24 significant bits, exponents far inside float64
    ua, ub = unpack(a, in_fmt), unpack(b, in_fmt)
    invalid = ua.is_signalling | ub.is_signalling | (np.isinf(x) & (y == 0)) | ((x == 0) & np.isinf(y))
    return tpu_round(exact, out_fmt, invalid=invalid)


def _operand_pairs(fmt, n, rng):
    corners = corner_values(fmt)
    ca, cb = np.meshgrid(corners, corners)
    a = np.concatenate([random_encodings(fmt, n, rng), ca.ravel()])
    b = np.concatenate([random_encodings(fmt, n, rng), cb.ravel()])
    return a, b


@pytest.mark.parametrize("in_fmt, out_fmt", [
    (BF16, FP32), (BF16, BF16), (FP16, FP16), (FP16, FP32), (FP32, FP32), (TF32, FP32),
    (FP8_E4M3, FP32), (FP8_E4M3, FP8_E4M3), (FP8_E5M2, BF16),
], ids=lambda f: str(f))
def test_multiply_rne_against_exact_product(in_fmt, out_fmt, rng, scale):
    a, b = _operand_pairs(in_fmt, N * scale, rng)
    bits, flags = multiply(a, b, in_fmt, out_fmt)
    expected, expected_flags = _product_reference(a, b, in_fmt, out_fmt)
    assert_same(bits, flags, out_fmt, expected, expected_flags, context=(a, b))


def test_bf16_product_is_exact_in_fp32_within_range(rng, scale):
    """bf16 x bf16 -> fp32 never rounds the significand: inexact only with over/underflow."""
    a, b = _operand_pairs(BF16, N * scale, rng)
    _, flags = multiply(a, b, BF16, FP32)
    inexact = (flags & 1) != 0
    assert np.array_equal(inexact, (flags & 0b110) != 0)

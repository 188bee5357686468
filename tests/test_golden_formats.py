"""FloatFormat, parsing, encoding helpers and parameter errors."""

import ml_dtypes
import numpy as np
import pytest

from golden import (BF16, FP8_E4M3, FP8_E5M2, FP16, FP32, TF32, FloatFormat, Rounding, convert,
                    from_float64, multiply, parse_format, to_float64, unpack)


@pytest.mark.parametrize("fmt, exp_bits, man_bits, bias, width, nan, inf, max_finite", [
    (FP32, 8, 23, 127, 32, 0x7FC00000, 0x7F800000, 0x7F7FFFFF),
    (BF16, 8, 7, 127, 16, 0x7FC0, 0x7F80, 0x7F7F),
    (FP16, 5, 10, 15, 16, 0x7E00, 0x7C00, 0x7BFF),
    (TF32, 8, 10, 127, 19, 0x3FE00, 0x3FC00, 0x3FBFF),
    (FP8_E5M2, 5, 2, 15, 8, 0x7E, 0x7C, 0x7B),
    (FP8_E4M3, 4, 3, 7, 8, 0x7C, 0x78, 0x77),
], ids=str)
def test_named_formats(fmt, exp_bits, man_bits, bias, width, nan, inf, max_finite):
    assert (fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.width) == (exp_bits, man_bits, bias, width)
    assert (fmt.canonical_nan, fmt.inf, fmt.max_finite) == (nan, inf, max_finite)
    assert fmt.precision == man_bits + 1
    assert parse_format(fmt.name) is fmt
    assert parse_format(f"e{exp_bits}m{man_bits}") is fmt


def test_spelled_formats_and_equality():
    assert parse_format("E8M7") is BF16
    custom = parse_format("e6m9")
    assert (custom.exp_bits, custom.man_bits, custom.name) == (6, 9, "e6m9")
    assert FloatFormat(8, 7) == BF16 and hash(FloatFormat(8, 7)) == hash(BF16)


@pytest.mark.parametrize("spec, message", [
    ("fp64", "unknown format 'fp64'"), ("e9m7", "exp_bits must be in 2..8, not 9"),
    ("e1m3", "exp_bits must be in 2..8, not 1"), ("e5m0", "man_bits must be in 1..23, not 0"),
    ("e8m24", "man_bits must be in 1..23, not 24"),
])
def test_bad_formats_name_the_parameter(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_format(spec)


def test_format_type_errors():
    with pytest.raises(TypeError, match="exp_bits must be an integer"):
        FloatFormat(8.0, 7)
    with pytest.raises(TypeError, match="format must be"):
        parse_format(16)


def test_operation_parameter_errors():
    one = np.array([0x3F80], np.uint16)
    with pytest.raises(ValueError, match="unknown rounding 'nearest'"):
        convert(one, BF16, FP32, "nearest")
    with pytest.raises(ValueError, match="needs rand"):
        convert(np.array([0x3F800001], np.uint32), FP32, BF16, "sr")
    with pytest.raises(ValueError, match="rand must hold 16-bit values"):
        convert(np.array([0x3F800001], np.uint32), FP32, BF16, "sr", np.array([1 << 16]))
    with pytest.raises(ValueError, match="sr_bits must be in 1..32, not 33"):
        convert(np.array([0x3F800001], np.uint32), FP32, BF16, "sr", np.array([0]), sr_bits=33)
    with pytest.raises(ValueError, match="sr_bits=4 needs stochastic rounding"):
        multiply(one, one, BF16, BF16, Rounding.NEAREST_EVEN, sr_bits=4)
    with pytest.raises(ValueError, match="only taken by stochastic"):
        multiply(one, one, BF16, BF16, "rne", rand=np.array([0]))
    with pytest.raises(ValueError, match="do not fit bf16"):
        convert(np.array([1 << 16]), BF16, FP32)
    with pytest.raises(TypeError, match="integer bit patterns"):
        convert(np.array([1.0]), BF16, FP32)


def test_decode_matches_ml_dtypes_for_every_bf16_encoding():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    ours = to_float64(bits, BF16)
    theirs = bits.view(ml_dtypes.bfloat16).astype(np.float64)
    same = (ours == theirs) & (np.signbit(ours) == np.signbit(theirs))
    assert (same | (np.isnan(ours) & np.isnan(theirs))).all()


def test_from_float64_round_trips_and_rejects_inexact_values():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    u = unpack(bits, BF16)
    ordinary = bits[~u.is_subnormal & ~u.is_nan]
    assert np.array_equal(from_float64(to_float64(ordinary, BF16), BF16), ordinary)
    assert int(from_float64([np.nan], BF16)[0]) == BF16.canonical_nan
    with pytest.raises(ValueError, match="not a normal bf16 value"):
        from_float64([1.0 + 2.0 ** -9], BF16)


def test_bit_length_is_exact_at_every_power_of_two():
    from golden.ops import bit_length
    k = np.arange(64, dtype=np.uint64)
    powers = np.uint64(1) << k
    values = np.concatenate([np.zeros(1, np.uint64), powers, powers - np.uint64(1), powers + np.uint64(1)])
    expected = [int(v).bit_length() for v in values]
    assert bit_length(values).tolist() == expected

"""Directed corner cases with results worked out by hand from the contract.

Flags: 1 inexact, 2 underflow, 4 overflow, 16 invalid (so 3 = flush, 5 = overflow).
"""

import numpy as np
import pytest

from golden import BF16, FP16, FP32, add, convert, multiply

MULTIPLY = [
    # in, out, mode, a, b, result, flags, why
    (BF16, FP32, "rne", 0x3F80, 0x3F80, 0x3F800000, 0, "1 x 1"),
    (BF16, FP32, "rne", 0x3FC0, 0x3FC0, 0x40100000, 0, "1.5 x 1.5 = 2.25 exact"),
    (BF16, FP32, "rne", 0x7F7F, 0x4000, 0x7F800000, 5, "max x 2 overflows to inf"),
    (BF16, FP32, "rtz", 0x7F7F, 0x4000, 0x7F7FFFFF, 5, "rtz overflow: largest finite"),
    (BF16, FP32, "rne", 0x0080, 0x3F00, 0x00000000, 3, "min normal x 0.5 flushes"),
    (BF16, FP32, "rne", 0x8080, 0x3F00, 0x80000000, 3, "flush keeps the sign"),
    (BF16, FP32, "rne", 0x7F80, 0x0000, 0x7FC00000, 16, "inf x 0 invalid"),
    (BF16, FP32, "rne", 0x7F80, 0x0001, 0x7FC00000, 16, "inf x subnormal: DAZ makes it inf x 0"),
    (BF16, FP32, "rne", 0xFFC0, 0x3F80, 0x7FC00000, 0, "quiet NaN: canonical, no flag"),
    (BF16, FP32, "rne", 0x7F81, 0x3F80, 0x7FC00000, 16, "signalling NaN raises invalid"),
    (BF16, FP32, "rne", 0x8000, 0x3F80, 0x80000000, 0, "-0 x 1 = -0"),
    (BF16, FP32, "rne", 0x0001, 0x3F80, 0x00000000, 0, "subnormal input reads as +0, no flag"),
    (BF16, FP32, "rne", 0x8001, 0x3F80, 0x80000000, 0, "negative subnormal reads as -0"),
    (BF16, FP32, "rne", 0xFF80, 0x4000, 0xFF800000, 0, "-inf x 2"),
    (BF16, FP32, "rne", 0x7F80, 0xFF80, 0xFF800000, 0, "inf x -inf"),
    (BF16, BF16, "rne", 0x3F81, 0x3F81, 0x3F82, 1, "1.0078125^2 rounds down"),
    (BF16, BF16, "rne", 0x3FC0, 0x3F81, 0x3FC2, 1, "tie, odd kept: up to even"),
    (BF16, BF16, "rtz", 0x3FC0, 0x3F81, 0x3FC1, 1, "same tie truncated"),
    (BF16, BF16, "rne", 0x3FC0, 0x3F83, 0x3FC4, 1, "tie, even kept: stays"),
    (BF16, BF16, "rne", 0x3FB5, 0x3FB5, 0x4000, 1, "1.4140625^2 carries out to 2.0"),
    (BF16, BF16, "rne", 0x7F7F, 0x3F81, 0x7F80, 5, "overflow to inf"),
    (BF16, BF16, "rtz", 0x7F7F, 0x3F81, 0x7F7F, 5, "rtz overflow to max"),
    (BF16, FP32, "rne", 0x3F7F, 0x0080, 0x00000000, 3, "2^-126 - 2^-134 is tiny"),
    (FP32, BF16, "rne", 0x3F7FFFFF, 0x00800000, 0x0080, 1,
     "2^-126 - 2^-150 rounds up to min normal: not tiny (tininess after rounding)"),
    (FP32, BF16, "rtz", 0x3F7FFFFF, 0x00800000, 0x0000, 3, "truncated, the same value is tiny"),
    (FP32, FP32, "rne", 0x3F7FFFFF, 0x00800000, 0x00000000, 3, "exact in fp32 precision: tiny"),
]

ADD = [
    # fmt, mode, a, b, result, flags, why
    (FP32, "rne", 0x3F800000, 0xBF800000, 0x00000000, 0, "x + (-x) = +0"),
    (FP32, "rtz", 0x3F800000, 0xBF800000, 0x00000000, 0, "x + (-x) = +0 under rtz too"),
    (FP32, "rne", 0x80000000, 0x80000000, 0x80000000, 0, "(-0) + (-0) = -0"),
    (FP32, "rne", 0x80000000, 0x00000000, 0x00000000, 0, "(-0) + (+0) = +0"),
    (FP32, "rne", 0x80000001, 0x80000000, 0x80000000, 0, "DAZ: -subnormal + -0 = -0"),
    (FP32, "rne", 0x00000001, 0x80000001, 0x00000000, 0, "DAZ: +0 + -0 = +0"),
    (FP32, "rne", 0x7F800000, 0xFF800000, 0x7FC00000, 16, "inf - inf invalid"),
    (FP32, "rne", 0x7F800000, 0x3F800000, 0x7F800000, 0, "inf + 1"),
    (FP32, "rne", 0xFF800000, 0xFF800000, 0xFF800000, 0, "-inf + -inf"),
    (FP32, "rne", 0x7F800001, 0x3F800000, 0x7FC00000, 16, "signalling NaN"),
    (FP32, "rne", 0x7FC12345, 0x7F800000, 0x7FC00000, 0, "quiet NaN + inf: canonical NaN"),
    (FP32, "rne", 0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000, 5, "max + max overflows"),
    (FP32, "rtz", 0x7F7FFFFF, 0x7F7FFFFF, 0x7F7FFFFF, 5, "rtz: largest finite"),
    (FP32, "rne", 0x3F800000, 0x33800000, 0x3F800000, 1, "1 + 2^-24: tie to even (down)"),
    (FP32, "rne", 0x3F800001, 0x33800000, 0x3F800002, 1, "tie to even (up)"),
    (FP32, "rne", 0x3F800000, 0x21800000, 0x3F800000, 1, "1 + 2^-60"),
    (FP32, "rne", 0x3F800000, 0xA1800000, 0x3F800000, 1, "1 - 2^-60 rounds to 1"),
    (FP32, "rtz", 0x3F800000, 0xA1800000, 0x3F7FFFFF, 1, "1 - 2^-60 truncates below 1"),
    (FP32, "rtz", 0xBF800000, 0x21800000, 0xBF7FFFFF, 1, "-1 + 2^-60 truncates towards 0"),
    (FP32, "rne", 0x00800000, 0x80800001, 0x80000000, 3, "exact -2^-149 flushes to -0"),
    (FP32, "rne", 0x01000000, 0x80800001, 0x00000000, 3, "2^-126 - 2^-149 flushes to +0"),
    (FP32, "rne", 0x3F800001, 0xBF800000, 0x34000000, 0, "exact cancellation: 2^-23"),
    (BF16, "rne", 0x3F80, 0x3B80, 0x3F80, 1, "bf16 1 + 2^-8: tie to even"),
]

CONVERT = [
    # in, out, mode, a, result, flags, why
    (FP32, BF16, "rne", 0x3F808000, 0x3F80, 1, "tie, even kept: down"),
    (FP32, BF16, "rne", 0x3F818000, 0x3F82, 1, "tie, odd kept: up"),
    (FP32, BF16, "rne", 0x3F808001, 0x3F81, 1, "just above the tie"),
    (FP32, BF16, "rtz", 0x3F81FFFF, 0x3F81, 1, "truncation"),
    (FP32, BF16, "rne", 0x7F7FFFFF, 0x7F80, 5, "fp32 max rounds up to 2^128: overflow"),
    (FP32, BF16, "rtz", 0x7F7FFFFF, 0x7F7F, 1, "rtz: truncates to bf16 max, never reaches 2^128"),
    (FP32, BF16, "rne", 0x00800000, 0x0080, 0, "min normal is exact"),
    (FP32, BF16, "rne", 0x007FFFFF, 0x0000, 0, "subnormal input reads as zero"),
    (FP32, BF16, "rne", 0x00FFFFFF, 0x0100, 1, "carries into the next binade"),
    (FP32, BF16, "rne", 0x7FC00001, 0x7FC0, 0, "quiet NaN payload dropped"),
    (FP32, BF16, "rne", 0xFFC00000, 0x7FC0, 0, "negative quiet NaN: canonical sign 0"),
    (FP32, BF16, "rne", 0x7F800001, 0x7FC0, 16, "signalling NaN (payload only in low bits)"),
    (FP32, BF16, "rne", 0x7FA00000, 0x7FC0, 16, "signalling NaN"),
    (FP32, BF16, "rne", 0xFF800000, 0xFF80, 0, "-inf"),
    (FP32, FP16, "rne", 0x477FF000, 0x7C00, 5, "65520: tie rounds up past 65504: overflow"),
    (FP32, FP16, "rne", 0x477FEF00, 0x7BFF, 1, "65519: max"),
    (FP32, FP16, "rne", 0x38800000, 0x0400, 0, "2^-14: min normal"),
    (FP32, FP16, "rne", 0x38000000, 0x0000, 3, "2^-15 flushes"),
    (FP32, FP16, "rne", 0x387FF000, 0x0400, 1, "2^-14 - 2^-26: tie rounds up to min normal"),
    (FP32, FP16, "rne", 0x387FE000, 0x0000, 3, "2^-14 - 2^-25: tiny"),
    (BF16, FP32, "rne", 0x3F81, 0x3F810000, 0, "widening pads zeros"),
]


def _ids(table):
    return [row[-1] for row in table]


@pytest.mark.parametrize("in_fmt, out_fmt, mode, a, b, result, flags, why", MULTIPLY, ids=_ids(MULTIPLY))
def test_multiply(in_fmt, out_fmt, mode, a, b, result, flags, why):
    bits, got_flags = multiply(np.array([a]), np.array([b]), in_fmt, out_fmt, mode,
                               rand=None)
    assert (hex(int(bits[0])), int(got_flags[0])) == (hex(result), flags)
    swapped = multiply(np.array([b]), np.array([a]), in_fmt, out_fmt, mode)
    assert (int(swapped[0][0]), int(swapped[1][0])) == (result, flags), "commutative"


@pytest.mark.parametrize("fmt, mode, a, b, result, flags, why", ADD, ids=_ids(ADD))
def test_add(fmt, mode, a, b, result, flags, why):
    for x, y in ((a, b), (b, a)):
        bits, got_flags = add(np.array([x]), np.array([y]), fmt, mode)
        assert (hex(int(bits[0])), int(got_flags[0])) == (hex(result), flags)


@pytest.mark.parametrize("in_fmt, out_fmt, mode, a, result, flags, why", CONVERT, ids=_ids(CONVERT))
def test_convert(in_fmt, out_fmt, mode, a, result, flags, why):
    bits, got_flags = convert(np.array([a]), in_fmt, out_fmt, mode)
    assert (hex(int(bits[0])), int(got_flags[0])) == (hex(result), flags)
